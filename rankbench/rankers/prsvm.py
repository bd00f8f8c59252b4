"""PRSVM: primal RankSVM on absolute-difference vectors (Prosser et al., BMVC 2010, Sec. 2.1)."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator

from ..registry import rankers
from .base import PairScorer

#: The paper's grid for C (Sec. 3: "{0.0001, 0.005, 0.001, 0.05, 0.1, 0.5, 1, 10, 100, 1000}"),
#: sorted ascending so the cross-validation path can warm-start each C from the previous one.
PAPER_C_GRID = (0.0001, 0.001, 0.005, 0.05, 0.1, 0.5, 1.0, 10.0, 100.0, 1000.0)


@rankers.register("prsvm")
class PRSVM(PairScorer, BaseEstimator):
    """Primal RankSVM (Chapelle & Keerthi) on |x_i - x_j|, squared hinge, truncated Newton-CG.

    Learns ``w`` of eq. 4 of Prosser et al.::

        min_w 1/2 ||w||^2 + C sum_s max(0, 1 - w^T (|x_i - x_p| - |x_i - x_n|))^2

    over every triple of a query image ``x_i``, a true match ``x_p`` and a wrong match ``x_n``
    (``fit`` docstring says which images form queries). The score of a pair is eq. 1's
    ``w^T |q - g|``; the constraint makes true matches score *higher*, so ``similarity`` returns
    this score unchanged (larger = better; ``w`` is mostly negative, as a larger difference
    should lower the score).

    Parameters
    ----------
    C : float or None
        Loss weight of eq. 4. None = choose from ``C_grid`` by cross-validation over training
        people (the paper's protocol).
    C_grid : sequence of float
        Candidates for C (default: the paper's grid, Sec. 3).
    cv : int
        Folds over training *people* for choosing C (2 by default: each fold then costs a
        quarter of a full fit, as the pair grid shrinks quadratically).
    cv_rank : int
        Validation score = mean matching rate over ranks 1..cv_rank on the held-out people.
    cv_patience : int
        Stop scanning the (ascending) grid after this many C values without improvement; the
        validation curve over C is unimodal in practice and large C costs the most.
    materialize : bool
        False (default): stream difference vectors in blocks (memory O(block * m * d)).
        True: build the explicit (n_triples, d) matrix of eq. 5, as the paper's Matlab code
        did (2.2 GB in float32 at VIPeR p = 316), to reproduce its memory behaviour.
    max_newton, max_cg, tol : solver caps and the relative gradient tolerance (on VIPeR,
        tol 1e-2 and 10 CG steps per Newton step give the CMC of 1e-3 and 20 at half the passes).
    block : rows of the pair grid streamed at once.
    n_jobs : threads sharing each streamed pass.
    random_state : seeds the assignment of people to CV folds.
    """

    def __init__(self, C=None, C_grid=PAPER_C_GRID, cv=2, cv_rank=20, cv_patience=1,
                 materialize=False, max_newton=15, max_cg=10, tol=1e-2, block=2, n_jobs=1,
                 random_state=None):
        self.C = C
        self.C_grid = C_grid
        self.cv = cv
        self.cv_rank = cv_rank
        self.cv_patience = cv_patience
        self.materialize = materialize
        self.max_newton = max_newton
        self.max_cg = max_cg
        self.tol = tol
        self.block = block
        self.n_jobs = n_jobs
        self.random_state = random_state

    # ------------------------------------------------------------------ fitting
    def fit(self, X, y, cams=None):
        """Learn w from training images.

        Parameters
        ----------
        X : (m, d) features. y : (m,) identities.
        cams : (m,) camera of each image, or None. With cameras, every image is a query whose
            true matches are the same person's images in the other camera(s) and whose wrong
            matches are every other person's images there; without, candidates are all other
            images.
        """
        X = np.asarray(X, dtype=float)
        y = np.asarray(y)
        self.cv_scores_ = {}
        w0 = None
        if self.C is None:
            self.C_, w0 = self._choose_C(X, y, cams)
        else:
            self.C_ = float(self.C)
        self.coef_, self.info_ = fit_prsvm(X, y, cams, self.C_, self._solver_kw(), w0=w0)
        return self

    def _solver_kw(self):
        return dict(materialize=self.materialize, block=self.block, n_jobs=self.n_jobs,
                    max_newton=self.max_newton, max_cg=self.max_cg, tol=self.tol)

    def _choose_C(self, X, y, cams):
        from ._pairs import build_pairs, weighted_l1
        from ._rank_newton import solve

        rng = np.random.default_rng(self.random_state)
        people = rng.permutation(np.unique(y))
        folds = np.array_split(people, max(2, int(self.cv)))
        grid = sorted(float(c) for c in self.C_grid)
        totals = np.zeros(len(grid))
        counts = np.zeros(len(grid))
        sols = [[] for _ in grid]
        for held in folds:
            val = np.isin(y, held)
            tr = ~val
            cam_tr = None if cams is None else np.asarray(cams)[tr]
            oracle = _oracle(build_pairs(X[tr], y[tr], cam_tr, block=self.block, n_jobs=self.n_jobs),
                             self.materialize)
            w = z = None
            best, since = -np.inf, 0
            for k, C in enumerate(grid):
                w, z, _ = solve(oracle, C, w0=w, z0=z, max_newton=self.max_newton,
                                max_cg=self.max_cg, tol=self.tol)
                score = validation_cmc(weighted_l1, w, X[val], y[val],
                                       None if cams is None else np.asarray(cams)[val], self.cv_rank)
                totals[k] += score
                counts[k] += 1
                sols[k].append(w)
                best, since = (score, 0) if score > best else (best, since + 1)
                if since >= self.cv_patience:
                    break
        # a C skipped on some fold after its early stop counts with the folds that ran it
        mean = np.where(counts > 0, totals / np.maximum(counts, 1), -np.inf)
        self.cv_scores_ = {c: float(s) for c, s, n in zip(grid, mean, counts) if n}
        k = int(np.argmax(mean))
        # the folds' solutions at the chosen C warm-start the final fit on all training people
        return grid[k], np.mean(sols[k], axis=0)

    # ------------------------------------------------------------------ scoring
    def similarity(self, Q, G):
        """Eq. 1's score ``w^T |q - g|`` for every (probe, gallery) pair, shape (nq, ng)."""
        from ._pairs import weighted_l1

        return weighted_l1(Q, G, self.coef_)


def _oracle(pairs, materialize):
    from ._rank_newton import DenseOracle, StreamOracle

    return DenseOracle(pairs.materialize()) if materialize else StreamOracle(pairs)


def fit_prsvm(X, y, cams, C, kw, w0=None):
    """Solve eq. 4 on one training set; returns (w, solver info)."""
    from ._pairs import build_pairs
    from ._rank_newton import solve

    kw = dict(kw)
    pairs = build_pairs(X, y, cams, block=kw.pop("block", 2), n_jobs=kw.pop("n_jobs", 1))
    oracle = _oracle(pairs, kw.pop("materialize", False))
    w, _, info = solve(oracle, C, w0=w0, **kw)
    info["n_triples"] = pairs.n_triples()
    return w, info


def validation_cmc(score_fn, w, X, y, cams, max_rank) -> float:
    """Mean matching rate over ranks 1..max_rank of every image as a probe against the others.

    With cameras the gallery is the other camera(s); without, every other image. Ties count
    against the method, as in :mod:`rankbench.metrics`.
    """
    y = np.asarray(y)
    cand = ~np.eye(len(y), dtype=bool)
    if cams is not None:
        cams = np.asarray(cams)
        cand &= cams[:, None] != cams[None, :]
    u = None if cams is None else np.unique(cams)
    if u is not None and len(u) == 2:
        # two cameras: only the cross-camera block is needed (the score is symmetric)
        a, b = cams == u[0], cams == u[1]
        S = np.full((len(y), len(y)), -np.inf)
        Sab = score_fn(X[a], X[b], w)
        S[np.ix_(a, b)] = Sab
        S[np.ix_(b, a)] = Sab.T
    else:
        S = score_fn(X, X, w)
    same = (y[:, None] == y[None, :]) & cand
    ok = same.any(1) & (cand & ~same).any(1)
    if not ok.any():
        return 0.0
    S, same, cand = S[ok], same[ok], cand[ok]
    best = np.where(same, S, -np.inf).max(1)
    rank = ((S >= best[:, None]) & cand & ~same).sum(1) + 1
    return float(np.mean([(rank <= r).mean() for r in range(1, max_rank + 1)]))

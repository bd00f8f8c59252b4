"""PRSVM: primal RankSVM on absolute-difference vectors (Prosser et al., BMVC 2010, Sec. 2.1)."""

from __future__ import annotations

from typing import Annotated

import numpy as np
from pydantic import Field
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ...errors import InputError
from ...params import PositiveFloat, PositiveFloatGrid, PositiveInt, Seed
from ...registry import rankers
from ...utils.optim import stop_diagnostics
from ...utils.progress import tick
from ...utils.threads import one_blas_thread
from .._pair_grid import build_pair_grid, weighted_l1
from .._search import as_grid, choose, validation_cmc
from .._validation import checked_input
from ..base import PairScorer
from ._oracles import DenseOracle, TripleStreamOracle
from ._primal import solve

#: a wide logarithmic grid for C (configs give a paper's own grid where it states one)
DEFAULT_C_GRID = (1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0, 1000.0)


@rankers.register("prsvm")
class PRSVM(PairScorer, BaseEstimator):
    """Primal RankSVM (Chapelle & Keerthi) on |x_i - x_j|, squared hinge, truncated Newton-CG.

    Learns ``w`` of eq. 4 of Prosser et al.::

        min_w 1/2 ||w||^2 + C sum_s max(0, 1 - w^T (|x_i - x_p| - |x_i - x_n|))^2

    over every triple of a query image ``x_i``, a true match ``x_p`` and a wrong match ``x_n``
    (``fit`` says which images form queries). The score of a pair is eq. 1's ``w^T |q - g|``; the
    constraint makes true matches score *higher*, so ``similarity`` returns this score unchanged.

    Parameters
    ----------
    C : float or list of float
        Loss weight of eq. 4, or candidates chosen by cross-validation over training people (the
        paper's protocol; :mod:`rankbench.rankers._search`), scanned in ascending order so that
        each warm-starts the next.
    cv : int
        Folds over training *people* for choosing C (each fold then costs about a quarter of a
        full fit, as the pair grid shrinks quadratically).
    cv_rank : int
        Validation score = mean matching rate over ranks 1..cv_rank on the held-out people.
    cv_patience : int
        Stop scanning the grid after this many C values without improvement (the validation
        curve over C is unimodal in practice and large C costs the most).
    materialize : bool
        False: stream difference vectors in blocks (memory O(block * m * d)). True: build the
        explicit (n_triples, d) matrix of eq. 5, as the paper's Matlab code did.
    max_newton, max_cg, tol : solver caps and relative gradient tolerance: Newton stops once the
        gradient's norm is ``tol`` times its norm at w = 0, where every triple is active. The
        default 1e-2 is close to eq. 4's optimum on two-camera data of one image per person and
        camera (VIPeR: the objective within 0.6 %), but not where each person gives many triples
        (several images, no cameras: the objective 2x the optimum at C = 10, measured); give
        ``tol`` 1e-6 or less for an exact solve there.
    block : rows of the pair grid streamed at once.
    n_jobs : threads: the cross-validation folds run side by side, as many at a time as there are
        threads, and the folds left over (5 folds on 2 threads: the fifth) and the final fit share
        each streamed pass between the threads.
    random_state : seeds the assignment of people to CV folds.

    Attributes
    ----------
    coef_ : (d,) the learned w.  C_ : the C used.  cv_scores_ : {C: validation score}.
    n_triples_, n_passes_ : triples in the final fit, streamed passes over them.
    result_ : the final fit's :func:`~rankbench.utils.optim.solver_result`.
    diagnostics_ : ``{"C": C_, "n_iter": Newton steps, "status": ...}``.
    """

    def __init__(self, C: PositiveFloatGrid = DEFAULT_C_GRID,
                 cv: Annotated[int, Field(ge=2)] = 2, cv_rank: PositiveInt = 20, cv_patience: PositiveInt = 1,
                 materialize: bool = False, max_newton: PositiveInt = 15, max_cg: PositiveInt = 10,
                 tol: PositiveFloat = 1e-2, block: PositiveInt = 2, n_jobs: PositiveInt = 1,
                 random_state: Seed = None):
        self.C = C
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

    @one_blas_thread  # measured: see rankbench/utils/threads.py
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
        X = checked_input(self, X, "fit", y=y, cams=cams, min_rows=2)
        y = np.asarray(y)
        self.cv_scores_ = {}
        w0 = None
        grid_c = sorted(float(c) for c in as_grid(self.C))
        if len(grid_c) > 1:
            self.C_, w0 = self._choose_C(X, y, cams, grid_c)
        else:
            self.C_ = grid_c[0]
        grid = self._grid(X, y, cams)
        sol = solve(self._oracle(grid), self.C_, w0=w0, **self._solver_kw())
        self.coef_ = sol.x
        self.n_triples_ = grid.n_triples()
        self.n_passes_ = sol.passes
        self.result_ = sol
        self.diagnostics_ = {"C": self.C_, **stop_diagnostics(sol)}
        return self

    def _solver_kw(self):
        return dict(max_newton=self.max_newton, max_cg=self.max_cg, tol=self.tol)

    def _grid(self, X, y, cams):
        return build_pair_grid(X, y, cams, block=self.block, n_jobs=self.n_jobs)

    def _oracle(self, grid):
        return DenseOracle(grid.materialize()) if self.materialize else TripleStreamOracle(grid)

    def _choose_C(self, X, y, cams, grid_c):
        rng = np.random.default_rng(self.random_state)
        folds = np.array_split(rng.permutation(np.unique(y)), max(2, int(self.cv)))
        cams = None if cams is None else np.asarray(cams)
        # folds run side by side on the n_jobs threads, as many at a time as there are threads
        # (the compiled passes release the GIL); the folds left over when fewer remain than
        # threads (5 folds on 2) run one at a time, each pass shared by every thread, so no thread
        # idles while the last fold runs alone. Each fold's numbers do not depend on this.
        n_jobs = max(1, int(self.n_jobs))
        side_by_side = len(folds) - len(folds) % n_jobs if n_jobs > 1 else 0
        run = lambda held, jobs: self._fold_scores(X, y, cams, np.isin(y, held), grid_c, jobs)
        results = []
        if side_by_side:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(n_jobs) as ex:
                futures = [ex.submit(run, held, 1) for held in folds[:side_by_side]]
                for fold, fut in enumerate(futures):
                    results.append(fut.result())
                    tick("cv fold", fold + 1, len(folds))
        for fold, held in enumerate(folds[side_by_side:], start=side_by_side):
            tick("cv fold", fold + 1, len(folds))
            results.append(run(held, n_jobs))
        # a C skipped on some fold after its early stop counts with the folds that ran it
        scores = np.full((len(folds), len(grid_c)), np.nan)
        sols = [[] for _ in grid_c]
        for f, (fold_scores, ws) in enumerate(results):  # in fold order, whatever finished first
            scores[f, :len(fold_scores)] = fold_scores
            for k, w in enumerate(ws):
                sols[k].append(w)
        k, mean = choose(scores)
        if np.isnan(mean).all():  # the first C would win by default, chosen by nothing
            raise InputError(f"{type(self).__name__}: cv = {self.cv}: no validation fold holds a probe with both a "
                             f"true and a wrong match ({len(np.unique(y))} training people in {len(folds)} folds); "
                             "expected fewer folds, or a single C")
        self.cv_scores_ = {c: float(s) for c, s in zip(grid_c, mean) if not np.isnan(s)}
        # the folds' solutions at the chosen C warm-start the final fit on all training people
        return grid_c[k], np.mean(sols[k], axis=0)

    def _fold_scores(self, X, y, cams, val, grid_c, n_jobs):
        """One fold: the validation scores and solutions of the C grid in ascending order, each
        solve warm-started from the previous C's, until ``cv_patience`` C values bring no gain."""
        tr = ~val
        n_people = len(np.unique(y[tr]))
        if n_people < 2:  # the pair grid's own message would blame the training data
            raise InputError(f"{type(self).__name__}: cv = {self.cv}: a fold trains on {n_people} person of "
                             f"{len(np.unique(y))}; expected fewer folds, or a single C")
        grid = build_pair_grid(X[tr], y[tr], None if cams is None else cams[tr], block=self.block, n_jobs=n_jobs)
        oracle = self._oracle(grid)
        vc = None if cams is None else cams[val]
        scores, ws = [], []
        w = z = None
        best, since = -np.inf, 0
        for k, C in enumerate(grid_c):
            tick("C", k + 1, None)  # no total: the grid may stop early (cv_patience)
            sol = solve(oracle, C, w0=w, z0=z, **self._solver_kw())
            w, z = sol.x, sol.z
            score = validation_cmc(_val_similarity(w, X[val], vc), y[val], vc, self.cv_rank)
            scores.append(score)
            ws.append(w)
            best, since = (score, 0) if score > best else (best, since + 1)
            if since >= self.cv_patience:
                break
        return scores, ws

    def similarity(self, Q, G):
        """Eq. 1's score ``w^T |q - g|`` for every (probe, gallery) pair, shape (nq, ng)."""
        check_is_fitted(self, "coef_")
        f32 = np.float32  # the precision weighted_l1 computes in
        return weighted_l1(checked_input(self, Q, "similarity", "Q", dtype=f32),
                           checked_input(self, G, "similarity", "G", dtype=f32), self.coef_)


def _val_similarity(w, X, cams) -> np.ndarray:
    """Every validation image against every other by ``w^T |x - x'|``; with two cameras only the
    cross-camera block is computed (the score is symmetric)."""
    u = None if cams is None else np.unique(cams)
    if u is None or len(u) != 2:
        return weighted_l1(X, X, w)
    a, b = cams == u[0], cams == u[1]
    S = np.full((len(X), len(X)), -np.inf)
    Sab = weighted_l1(X[a], X[b], w)
    S[np.ix_(a, b)] = Sab
    S[np.ix_(b, a)] = Sab.T
    return S

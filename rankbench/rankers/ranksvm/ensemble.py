"""Ensemble RankSVM: boosting weak primal RankSVMs learned on groups of people (Prosser et al. 2010, Sec. 2.2)."""

from __future__ import annotations

from typing import Annotated

import numpy as np
from pydantic import Field
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ...errors import InputError
from ...params import PositiveFloat, PositiveInt, Seed
from ...registry import rankers
from ...utils.progress import tick
from ...utils.threads import one_blas_thread
from .._pair_grid import build_pair_grid, weighted_l1
from .._validation import checked_input
from ..base import PairScorer
from ._oracles import DenseOracle, TripleStreamOracle
from ._primal import solve
from .prsvm import DEFAULT_C_GRID


@rankers.register("ensemble_ranksvm")
class EnsembleRankSVM(PairScorer, BaseEstimator):
    """Ensemble RankSVM (Prosser et al.): weak PRSVMs per (group of people, C), boosted by eqs. 9-11.

    1. The L training people are split into ``n_groups`` disjoint groups G_i (eq. 8); the data
       Z_i of each group is augmented with O_i, an equal number of people drawn at random from
       the rest (whole people, so every added image keeps its true match).
    2. On each Z_i u O_i and for every C of ``weak_C`` a weak primal RankSVM w_k is learned
       (eq. 4): N = len(weak_C) x n_groups weak rankers, no cross-validation.
    3. Each w_k is normalised by 2 max_s |w_k^T (x-_s - x+_s)| over the whole pair set P, so that
       u_sk = w_k^T (x+_s - x-_s) lies in [-1/2, 1/2] (within [-1, 1] as Freund et al. require).
    4. Boosting over P for T rounds, D_1 = 1 / |P|:
       k_t = argmin_k sum_s D_s [w_k^T (x-_s - x+_s) >= 0]                (eq. 9)
       r = sum_s D_s u_{s,k_t},  a_t = 1/2 log((1 + r) / (1 - r))         (eq. 11)
       D_s <- D_s exp(a_t w_kt^T (x-_s - x+_s)) / F                        (eq. 10)
       and the output is w = sum_t a_t w_kt (eq. 7). Boosting stops early if r <= 0.

    A pair scores ``w^T |q - g|`` (larger = better match), as in :class:`~.prsvm.PRSVM`.

    Parameters
    ----------
    n_groups : int, the paper's n (5).
    weak_C : the C values of the weak rankers, one weak ranker each per group (not a search: every
        value is used; the configs give the paper's grid).
    n_rounds : T, boosting rounds (the paper does not give it).
    materialize : weak rankers build their explicit pair matrices (the paper's memory
        behaviour, about 1/6 of a materialised PRSVM's at VIPeR p = 316) instead of streaming.
    max_newton, max_cg, tol : caps of each weak ranker's truncated Newton solver (``tol`` as
        :class:`~rankbench.rankers.ranksvm.prsvm.PRSVM`'s: loose where a person gives many triples).
    block, n_jobs : streaming block rows and threads.
    random_state : seeds the groups and the O_i draws.
    """

    def __init__(self, n_groups: Annotated[int, Field(ge=2)] = 5,
                 weak_C: Annotated[tuple[PositiveFloat, ...], Field(min_length=1)] = DEFAULT_C_GRID,
                 n_rounds: PositiveInt = 100, materialize: bool = False, max_newton: PositiveInt = 6,
                 max_cg: PositiveInt = 10, tol: PositiveFloat = 1e-2, block: PositiveInt = 2,
                 n_jobs: PositiveInt = 1, random_state: Seed = None):
        self.n_groups = n_groups
        self.weak_C = weak_C
        self.n_rounds = n_rounds
        self.materialize = materialize
        self.max_newton = max_newton
        self.max_cg = max_cg
        self.tol = tol
        self.block = block
        self.n_jobs = n_jobs
        self.random_state = random_state

    @one_blas_thread  # measured: see rankbench/utils/threads.py
    def fit(self, X, y, cams=None):
        """Learn the weak rankers and their boosting weights (queries as in ``PRSVM.fit``)."""
        X = checked_input(self, X, "fit", y=y, cams=cams, min_rows=2)
        y = np.asarray(y)
        W = self._weak_rankers(X, y, cams)
        U = self._pair_margins(X, y, cams, W)          # u_sk = w_k^T (x+_s - x-_s)
        scale = 2 * np.abs(U).max(axis=0)
        scale[scale == 0] = 1.0
        U /= scale
        W = W / scale
        alphas, chosen = boost(U, self.n_rounds)
        self.weak_ = W
        self.alphas_, self.chosen_ = alphas, chosen
        self.coef_ = W[:, chosen] @ alphas if len(chosen) else np.zeros(X.shape[1])
        self.diagnostics_ = {"rounds": int(len(chosen)), "distinct_weak": int(len(np.unique(chosen)))}
        return self

    def _weak_rankers(self, X, y, cams):
        rng = np.random.default_rng(self.random_state)
        people = rng.permutation(np.unique(y))
        if len(people) < self.n_groups:  # an empty group trains on nobody
            raise InputError(f"{type(self).__name__}: n_groups = {self.n_groups} needs as many training people, got "
                             f"{len(people)}")
        groups = np.array_split(people, self.n_groups)
        cams = None if cams is None else np.asarray(cams)
        weak = []
        for i, g in enumerate(groups):
            tick("group", i + 1, len(groups))
            rest = np.setdiff1d(people, g)
            extra = rng.choice(rest, size=min(len(g), len(rest)), replace=False)
            rows = np.isin(y, np.concatenate([g, extra]))
            grid = build_pair_grid(X[rows], y[rows], None if cams is None else cams[rows],
                                   block=self.block, n_jobs=self.n_jobs)
            oracle = DenseOracle(grid.materialize()) if self.materialize else TripleStreamOracle(grid)
            w = z = None
            for C in sorted(float(c) for c in self.weak_C):  # ascending C: warm starts
                sol = solve(oracle, C, w0=w, z0=z, max_newton=self.max_newton, max_cg=self.max_cg,
                            tol=self.tol)
                w, z = sol.x, sol.z
                weak.append(w.copy())
            del oracle, grid
        return np.stack(weak, axis=1)  # (d, N)

    def _pair_margins(self, X, y, cams, W):
        """(|P|, N) values w_k^T (x+_s - x-_s) over every triple of the training set, streamed."""
        oracle = TripleStreamOracle(build_pair_grid(X, y, cams, block=self.block, n_jobs=self.n_jobs))
        S, _ = oracle.P.stream(V=W)
        # column k: A w_k with A's rows x-_s - x+_s, so u = -(A w_k); filled a column at a time
        # (a float64 stack of all columns was the largest array of the whole fit)
        U = np.empty((oracle.n_rows, W.shape[1]), dtype=np.float32)
        for k in range(W.shape[1]):
            U[:, k] = -oracle._flat(S[..., k], oracle._posvals(W[:, k]))
        return U

    def similarity(self, Q, G):
        """``w^T |q - g|`` with the boosted w (eq. 7), shape (nq, ng)."""
        check_is_fitted(self, "coef_")
        f32 = np.float32  # the precision weighted_l1 computes in
        return weighted_l1(checked_input(self, Q, "similarity", "Q", dtype=f32),
                           checked_input(self, G, "similarity", "G", dtype=f32), self.coef_)


def boost(U: np.ndarray, n_rounds: int) -> tuple[np.ndarray, np.ndarray]:
    """RankBoost-style selection of weak rankers by eqs. 9-11.

    Parameters
    ----------
    U : (n_pairs, N) array, u_sk = w_k^T (x+_s - x-_s) in [-1, 1].
    n_rounds : T.

    Returns
    -------
    alphas (a_t), chosen (k_t) for the rounds run.
    """
    n = U.shape[0]
    D = np.full(n, 1.0 / n)
    wrong = (U <= 0).astype(np.float32)  # [w_k^T (x-_s - x+_s) >= 0]
    alphas, chosen = [], []
    for t in range(int(n_rounds)):
        tick("round", t + 1, int(n_rounds))
        k = int(np.argmin(D.astype(np.float32) @ wrong))      # eq. 9
        r = float(D @ U[:, k])                                 # eq. 11
        if r <= 0:
            break
        r = min(r, 1 - 1e-12)
        a = 0.5 * np.log((1 + r) / (1 - r))
        D = D * np.exp(-a * U[:, k])                           # eq. 10: exp(a w^T(x- - x+))
        D /= D.sum()                                           # F
        alphas.append(a)
        chosen.append(k)
    return np.asarray(alphas), np.asarray(chosen, dtype=int)

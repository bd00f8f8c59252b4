"""Kernel RankSVM through the SVM mapping Q = A K A^T (Q never stored)."""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from pydantic import Field
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ...params import PositiveFloat, PositiveFloatGrid, PositiveInt, Seed
from ...registry import rankers
from ...utils.optim import stop_diagnostics
from ...utils.threads import one_blas_thread
from .._kernels import base_kernel, kernel_scale
from .._search import as_grid, cv_pair_accuracy, grid_points
from .._validation import check_pairs, checked_input
from ..base import PairwiseRanker
from ._oracles import kernel_factor, pair_matrix
from ._primal import solve_gram

Grid = PositiveFloatGrid


@rankers.register("kernel_ranksvm")
class KernelRankSVM(PairwiseRanker, BaseEstimator):
    """Kernel RankSVM (Sharaf et al. BMVC 2015 eqs. 3-6; Kuo, Lee & Lin 2014), linear or chi-square.

    Solves the kernelised eq. 1 (L2 loss; similar pairs cost ``s^2``) over item coefficients
    ``beta`` with ``f = K beta``; pair margins are ``A f`` with the sparse pair matrix A (eq. 6),
    which is the SVM on pair differences with ``Q = A K A^T`` (eq. 5) without ever forming Q: each
    Newton step solves an n x n system (n = training items), not a p x p one (:func:`._primal.solve_gram`).

    Parameters
    ----------
    kernel : {"linear", "chi2"}
        ``chi2`` is the exponential chi-square kernel exp(-gamma * chi2(x, y) / mean chi2).
    C, gamma : float or list of float
        Lists are searched jointly by ``cv``-fold CV on the training pairs.
    normalize : bool
        Divide the linear kernel by its mean diagonal on the training rows (gamma is always
        relative to the mean training chi-square distance).
    cv, cv_unit, tol, max_iter, random_state : see :class:`rankbench.rankers.ranksvm.RankSVM`.

    Attributes
    ----------
    dual_coef_ : (n_train,) ``A' alpha``; scores are ``k(X, X_train) @ dual_coef_``.
    C_, gamma_, cv_scores_.
    """

    def __init__(self, kernel: Literal["linear", "chi2"] = "linear", C: Grid = 1.0, gamma: Grid = 1.0,
                 normalize: bool = True, cv: Annotated[int, Field(ge=2)] = 5,
                 cv_unit: Literal["items", "pairs"] = "items", tol: PositiveFloat = 1e-8,
                 max_iter: PositiveInt = 100, random_state: Seed = None):
        self.kernel = kernel
        self.C = C
        self.gamma = gamma
        self.normalize = normalize
        self.cv = cv
        self.cv_unit = cv_unit
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state

    def _gram(self, X, Y, gamma):
        return base_kernel(self.kernel, X, Y, gamma, self.scale_)

    @one_blas_thread  # measured: see rankbench/utils/threads.py
    def fit(self, X, pairs, sign):
        X = checked_input(self, X, "fit", min_rows=2)
        pairs, sign = check_pairs(pairs, sign, len(X), f"{type(self).__name__}.fit")
        self.X_fit_ = X
        self.scale_ = kernel_scale(self.kernel, X) if (self.normalize or self.kernel == "chi2") else 1.0
        grid = grid_points(C=[float(c) for c in as_grid(self.C)], gamma=[float(g) for g in as_grid(self.gamma)])
        grams = {}

        def gram(g):  # (K, its factor) of each gamma, computed once for every fold and C
            if g not in grams:
                K = self._gram(X, X, g)
                grams[g] = K, kernel_factor(K)
            return grams[g]

        self.cv_scores_ = None
        if len(grid) > 1:
            rng = np.random.default_rng(self.random_state)

            def fit_score(params, mask):
                K, Phi = gram(params["gamma"])
                A = pair_matrix(pairs[mask], sign[mask], len(X))
                b, _ = solve_gram(K, A, params["C"], similar=sign[mask] == 0, tol=self.tol,
                                  max_newton=self.max_iter, Phi=Phi)
                return K @ b

            best, self.cv_scores_ = cv_pair_accuracy(fit_score, pairs, sign, grid, int(self.cv), rng,
                                                     self.cv_unit)
        else:
            best = grid[0]
        self.C_, self.gamma_ = best["C"], best["gamma"]
        A = pair_matrix(pairs, sign, len(X))
        K, Phi = gram(self.gamma_)
        self.dual_coef_, sol = solve_gram(K, A, self.C_, similar=sign == 0, tol=self.tol,
                                          max_newton=self.max_iter, Phi=Phi)
        self.n_iter_ = sol.nit
        self.objective_ = sol.fun
        self.result_ = sol
        self.diagnostics_ = {"C": self.C_, **({"gamma": self.gamma_} if self.kernel == "chi2" else {}),
                             **stop_diagnostics(sol)}
        return self

    def decision_function(self, X):
        check_is_fitted(self, "dual_coef_")
        X = checked_input(self, X, "decision_function")
        if self.kernel == "linear":
            # x' (X_fit' b) / scale: the primal weights, so scoring costs O(n d) per item set
            return (X @ (self.X_fit_.T @ self.dual_coef_)) / self.scale_
        return self._gram(X, self.X_fit_, self.gamma_) @ self.dual_coef_

"""RankMKL: multiple kernel learning for ranking (Sharaf, Hussein & Ismail, BMVC 2015)."""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from pydantic import Field
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ...params import PositiveFloat, PositiveFloatGrid, PositiveInt, Seed
from ...registry import rankers
from ...utils.optim import CONVERGED, LINE_SEARCH, MAX_ITER, backtrack, solver_result, stop_diagnostics
from ...utils.progress import tick
from ...utils.threads import one_blas_thread
from .._kernels import base_kernel, kernel_scale
from .._search import as_grid, cv_pair_accuracy, grid_points
from .._validation import check_pairs, checked_input
from ..base import PairwiseRanker
from ._oracles import kernel_factor, pair_matrix
from ._primal import solve_gram

Grid = PositiveFloatGrid


def gmkl(Ks: np.ndarray, A, similar, C: float, lam: float, max_iter: int, tol: float, inner_tol: float):
    """GMKL projected gradient descent on the kernel weights d (Varma & Babu, ICML 2009).

    Minimises ``T(d) = min_f [0.5 ||f||^2_{K_d} + C sum loss] + (lam / 2) ||d||^2`` over d >= 0
    with ``K_d = sum_k d_k K_k`` (eq. 8 of Sharaf et al. with r(d) the L2 regulariser). By
    Danskin's theorem ``dT/dd_k = lam d_k - 0.5 alpha' Q_k alpha = lam d_k - 0.5 b' K_k b`` with
    ``b = A' alpha`` (eq. 9), so every gradient costs t quadratic forms in n, never Q_k. The inner
    RankSVM is solved to ``inner_tol`` and warm-started; steps are Armijo-backtracked.

    Returns a :func:`~rankbench.utils.optim.solver_result`: ``x`` = d, ``fun`` = T(d), ``nit``,
    ``status`` (converged: the decrease or the move of d fell below its tolerance; or max_iter),
    ``dual_coef`` (b) and ``history`` (T after each step, from the start).
    """
    def inner(d, b0):
        b, sol = solve_gram(np.tensordot(d, Ks, axes=1), A, C, similar=similar, b0=b0, tol=inner_tol)
        return sol.fun + 0.5 * lam * (d @ d), b

    def project(d, grad, t):
        d_new = np.maximum(d - t * grad, 0.0)
        if not d_new.any():  # keep at least one kernel
            d_new[np.argmin(grad)] = 1e-6
        return d_new

    d = np.full(len(Ks), 1.0 / len(Ks))
    T, b = inner(d, None)
    step = 1.0
    history = [T]
    status, message, it = MAX_ITER, f"max_iter = {max_iter} steps taken", -1
    for it in range(max_iter):
        tick("mkl step", it + 1, max_iter)
        grad = lam * d - 0.5 * np.einsum("i,kij,j->k", b, Ks, b)

        def trial(t, d=d, grad=grad, b=b):
            d_new = project(d, grad, t)
            T_new, b_new = inner(d_new, b)
            return T_new, (d_new, b_new)

        step, T_new, (d_new, b_new), _, accepted = backtrack(
            trial, lambda T_new, state, t: T_new <= T - 1e-4 * grad @ (d - state[0]), step=step)
        if not accepted:   # no step decreases T enough (an inexact inner solve): keep the last d
            status, message = LINE_SEARCH, "no projected step decreased T (the line search gave up)"
            break
        moved = np.abs(d_new - d).max()
        improved = T - T_new
        d, T, b = d_new, T_new, b_new
        history.append(T)
        step *= 2.0  # let the step grow back after successful iterations
        if improved <= tol * max(abs(T), 1e-12):
            status, message = CONVERGED, "the relative decrease fell below tol"
            break
        if moved <= 1e-8:
            status, message = CONVERGED, "the kernel weights stopped moving"
            break
    return solver_result(d, T, it + 1, status, message, dual_coef=b, history=history)


@rankers.register("rankmkl")
class RankMKL(PairwiseRanker, BaseEstimator):
    """RankMKL: RankSVM over a learned combination of base kernels (Sharaf et al. BMVC 2015, eq. 8).

    ``k_d = sum_i d_i k_i`` over one base kernel per feature view (eq. 7 with a linear f_d),
    ``d >= 0`` with an L2 regulariser, solved as GMKL (Varma & Babu 2009) by projected gradient
    steps on d around an inner kernel RankSVM (squared hinge, Q = A K_d A' never stored).

    Parameters
    ----------
    kernels : dict or None
        View name -> ``linear`` or ``chi2`` (exponential chi-square). Views not listed are
        ``linear``. The paper: linear for LBP, HoG, Gabor; chi-square for GIST and colour.
    C, gamma : float or list of float
        RankSVM loss weight and chi-square gamma (relative to the mean training chi-square
        distance); lists are searched jointly by ``cv``-fold CV on the training pairs.
    lam : float
        Weight of the L2 regulariser ``(lam / 2) ||d||^2`` on the kernel weights, > 0: with d >= 0
        the only other constraint, T(t d) decreases without end in t at lam = 0.
    kernel_norm : {"centred", "diag"}
        ``centred`` divides each base kernel by its centred trace / n on the training rows (the
        spread pair differences see; constants cancel in Q = A K A'), so uniform weights give each
        feature set equal say; ``diag`` keeps the unit mean diagonal.
    cv_weights : {"uniform", "learned"}
        What CV runs per grid point: a kernel RankSVM with uniform weights (fast) or the whole MKL.
    cv_unit : {"items", "pairs"}
        What the CV folds split (see :class:`rankbench.rankers.ranksvm.RankSVM`).
    max_iter, tol : outer (GMKL) iterations and relative objective tolerance.
    inner_tol : relative objective tolerance of the inner RankSVM.
    random_state : seeds the CV folds.

    Attributes
    ----------
    kernel_weights_ : dict view -> learned weight d_i (base kernels normalised as ``kernel_norm``
        says, so the weights are comparable across views).
    C_, gamma_, cv_scores_, objective_history_.
    """

    accepts_views = True

    def __init__(self, kernels: dict[str, Literal["linear", "chi2"]] | None = None, C: Grid = 1.0,
                 gamma: Grid = 1.0, lam: PositiveFloat = 1.0,
                 kernel_norm: Literal["centred", "diag"] = "centred", cv: Annotated[int, Field(ge=2)] = 5,
                 cv_unit: Literal["items", "pairs"] = "items",
                 cv_weights: Literal["uniform", "learned"] = "uniform", max_iter: PositiveInt = 50,
                 tol: PositiveFloat = 1e-5, inner_tol: PositiveFloat = 1e-8, random_state: Seed = None):
        self.kernels = kernels
        self.kernel_norm = kernel_norm
        self.C = C
        self.gamma = gamma
        self.lam = lam
        self.cv = cv
        self.cv_unit = cv_unit
        self.cv_weights = cv_weights
        self.max_iter = max_iter
        self.tol = tol
        self.inner_tol = inner_tol
        self.random_state = random_state

    def _kinds(self, views):
        kinds = dict(self.kernels or {})
        unknown = [k for k in kinds if k not in views]
        if unknown:
            raise ValueError(f"rankmkl: kernels names view {unknown[0]!r}, but the views are "
                              f"{', '.join(views)} (set `combine: views` and matching feature names)")
        return {v: kinds.get(v, "linear") for v in views}

    def _grams(self, X, Y, gamma):
        return np.stack([base_kernel(kind, X[v], Y[v], gamma, self.scales_[v])
                         for v, kind in self.kinds_.items()])

    def _train_grams(self, X, gamma):
        """Training base kernels and the per-kernel divisor that normalises them."""
        Ks = self._grams(X, X, gamma)
        if self.kernel_norm == "diag":
            return Ks, np.ones(len(Ks))
        # centred trace: the spread that pair differences see (constants cancel in A K A')
        n = Ks.shape[1]
        ct = np.maximum(np.einsum("kii->k", Ks) / n - Ks.sum(axis=(1, 2)) / n ** 2, 1e-12)
        return Ks / ct[:, None, None], ct

    @one_blas_thread  # measured: see rankbench/utils/threads.py
    def fit(self, X, pairs, sign):
        X = checked_input(self, X, "fit", min_rows=2)
        if not isinstance(X, dict):
            X = {"x": X}
        n = len(next(iter(X.values())))
        pairs, sign = check_pairs(pairs, sign, n, f"{type(self).__name__}.fit")
        self.kinds_ = self._kinds(list(X))
        self.views_ = list(X)
        self.scales_ = {v: kernel_scale(kind, X[v]) for v, kind in self.kinds_.items()}
        self.X_fit_ = X
        grid = grid_points(C=[float(c) for c in as_grid(self.C)], gamma=[float(g) for g in as_grid(self.gamma)])
        cache = {}

        def grams(g):
            if g not in cache:
                cache[g] = self._train_grams(X, g)
            return cache[g][0]

        uniform_cache = {}

        def uniform(g):  # the uniform combination of gamma's kernels and its factor, once per gamma
            if g not in uniform_cache:
                K = grams(g).mean(axis=0)
                uniform_cache[g] = K, kernel_factor(K)
            return uniform_cache[g]

        self.cv_scores_ = None
        if len(grid) > 1:
            rng = np.random.default_rng(self.random_state)

            def fit_score(params, mask):
                Ks = grams(params["gamma"])
                A = pair_matrix(pairs[mask], sign[mask], n)
                similar = sign[mask] == 0
                if self.cv_weights == "uniform":
                    K, Phi = uniform(params["gamma"])
                    b, _ = solve_gram(K, A, params["C"], similar=similar, tol=self.inner_tol, Phi=Phi)
                    return K @ b
                res = gmkl(Ks, A, similar, params["C"], self.lam, self.max_iter, self.tol, self.inner_tol)
                return np.tensordot(res.x, Ks, axes=1) @ res.dual_coef

            best, self.cv_scores_ = cv_pair_accuracy(fit_score, pairs, sign, grid, int(self.cv), rng,
                                                     self.cv_unit)
        else:
            best = grid[0]
        self.C_, self.gamma_ = best["C"], best["gamma"]
        A = pair_matrix(pairs, sign, n)
        grams(self.gamma_)
        self.kernel_divisors_ = cache[self.gamma_][1]
        self.result_ = gmkl(grams(self.gamma_), A, sign == 0, self.C_, self.lam, self.max_iter, self.tol,
                            self.inner_tol)
        self.d_, self.dual_coef_, self.objective_history_ = self.result_.x, self.result_.dual_coef, self.result_.history
        self.kernel_weights_ = {v: float(w) for v, w in zip(self.views_, self.d_)}
        self.diagnostics_ = {"C": self.C_, "kernel_weights": dict(self.kernel_weights_),
                             **stop_diagnostics(self.result_)}
        if any(k == "chi2" for k in self.kinds_.values()):
            self.diagnostics_["gamma"] = self.gamma_
        self.linear_coef_ = {v: self.X_fit_[v].T @ self.dual_coef_ for v, kind in self.kinds_.items()
                             if kind == "linear"}
        return self

    def decision_function(self, X):
        check_is_fitted(self, "d_")
        X = checked_input(self, X, "decision_function")
        if not isinstance(X, dict):
            X = {"x": X}
        f = 0.0
        for k, (v, kind) in enumerate(self.kinds_.items()):
            w = self.d_[k] / self.kernel_divisors_[k]
            if w == 0:
                continue
            Xv = X[v]
            if kind == "linear":
                # k(x, X_fit) b = x' (X_fit' b) / scale: one primal weight vector per linear view,
                # so scoring costs O(n d), not O(n n_train d)
                f = f + w * (Xv @ self.linear_coef_[v]) / self.scales_[v]
            else:
                f = f + w * (base_kernel(kind, Xv, self.X_fit_[v], self.gamma_, self.scales_[v]) @ self.dual_coef_)
        return np.broadcast_to(np.asarray(f, float), (len(next(iter(X.values()))),)).copy()

"""Shared machinery of the pairwise rankers: the sparse pair matrix, the squared-hinge pair loss,
Newton solvers for RankSVM in the primal, kernels and cross-validation over training pairs.

Notation follows Sharaf, Hussein & Ismail, "Visual Comparison of Images Using Multiple Kernel
Learning for Ranking", BMVC 2015 (eqs. 1-9): ``A`` is the p x n pair matrix of eq. 6 (row k has
+1 at the stronger item and -1 at the weaker one), so pair margins are ``s = A f`` for item scores
``f``, and the SVM mapping of eq. 5 is ``Q = A K A^T`` (never formed here).

Loss (Parikh & Grauman, ICCV 2011, eq. 4, squared-hinge primal as in Chapelle 2007):
ordered pairs cost ``max(0, 1 - s)^2``, "similar" pairs (equal strength) cost ``s^2``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import ConfigError


# --------------------------------------------------------------------------- pairs
def check_pairs(pairs, sign, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    sign = np.asarray(sign, dtype=np.int64).ravel()
    if len(sign) != len(pairs):
        raise ValueError(f"pairs ({len(pairs)}) and sign ({len(sign)}) differ in length")
    if len(pairs) and (pairs.min() < 0 or pairs.max() >= n_items):
        raise ValueError(f"pair indices must lie in [0, {n_items})")
    if not np.isin(sign, (-1, 0, 1)).all():
        raise ValueError("sign must be +1, -1 (ordered) or 0 (similar)")
    if not (sign != 0).any():
        raise ValueError("at least one ordered pair (sign != 0) is needed")
    return pairs, sign


def pair_matrix(pairs: np.ndarray, sign: np.ndarray, n_items: int) -> sp.csr_matrix:
    """Sparse pair matrix A (eq. 6): row k = e_i - e_j, flipped where sign = -1."""
    p = len(pairs)
    o = np.where(sign < 0, -1.0, 1.0)
    rows = np.repeat(np.arange(p), 2)
    cols = pairs.ravel()
    vals = np.column_stack([o, -o]).ravel()
    return sp.csr_matrix((vals, (rows, cols)), shape=(p, n_items))


def pair_loss(s: np.ndarray, ordered: np.ndarray, C: float):
    """Loss, derivative and curvature weights of the squared-hinge pair loss at margins ``s``.

    Returns ``loss`` (C * sum), ``g`` (dloss/ds) and ``h`` (d2loss/ds2, 0 outside the active set).
    """
    r = np.where(ordered, np.maximum(0.0, 1.0 - s), -s)  # residual: 0 when the pair is satisfied
    loss = C * float(r @ r)
    g = -2.0 * C * r
    h = np.where(ordered & (r <= 0), 0.0, 2.0 * C)
    return loss, g, h


# --------------------------------------------------------------------------- solvers
def _cg(hessp, b: np.ndarray, tol: float, max_iter: int) -> np.ndarray:
    """Conjugate gradient for H x = b (H symmetric positive definite via ``hessp``)."""
    x = np.zeros_like(b)
    r = b.copy()
    d = r.copy()
    rr = r @ r
    stop = (tol ** 2) * rr
    for _ in range(max_iter):
        Hd = hessp(d)
        a = rr / (d @ Hd)
        x += a * d
        r -= a * Hd
        rr_new = r @ r
        if rr_new <= stop:
            break
        d = r + (rr_new / rr) * d
        rr = rr_new
    return x


def newton_cg(fun, theta0: np.ndarray, tol: float = 1e-6, max_iter: int = 50, cg_tol: float = 0.1,
              cg_max_iter: int = 200) -> tuple[np.ndarray, dict]:
    """Truncated Newton with CG and Armijo backtracking (Chapelle 2007; Lin, Weng & Keerthi 2008).

    ``fun(theta) -> (obj, grad, hessp)``. Stops when ||grad|| <= tol * ||grad(theta0)||.
    """
    theta = theta0.astype(float).copy()
    obj, grad, hessp = fun(theta)
    g0 = max(np.linalg.norm(grad), 1e-300)
    it = 0
    for it in range(1, max_iter + 1):
        if np.linalg.norm(grad) <= tol * g0:
            break
        step = _cg(hessp, -grad, cg_tol, cg_max_iter)
        slope = grad @ step
        t = 1.0
        while True:
            cand = theta + t * step
            obj_c, grad_c, hessp_c = fun(cand)
            if obj_c <= obj + 1e-4 * t * slope or t < 1e-10:
                break
            t *= 0.5
        theta, obj, grad, hessp = cand, obj_c, grad_c, hessp_c
    return theta, {"n_iter": it, "obj": obj, "grad_norm": float(np.linalg.norm(grad))}


def linear_objective(X: np.ndarray, A: sp.csr_matrix, ordered: np.ndarray, C: float):
    """Primal RankSVM (eq. 1 with squared loss) over w: 0.5 w'w + C sum loss(A X w).

    Gradient w + X'A'g and Hessian-vector v + X'A'diag(h)A X v: only n-vectors and p-vectors are
    formed, never the p x d matrix of pair differences.
    """
    AT = A.T.tocsr()

    def fun(w):
        s = A @ (X @ w)
        loss, g, h = pair_loss(s, ordered, C)
        obj = 0.5 * (w @ w) + loss
        grad = w + X.T @ (AT @ g)

        def hessp(v):
            return v + X.T @ (AT @ (h * (A @ (X @ v))))

        return obj, grad, hessp

    return fun


def kernel_objective_value(beta, K, A, ordered, C):
    f = K @ beta
    loss, g, h = pair_loss(A @ f, ordered, C)
    return 0.5 * (beta @ f) + loss, g, h


def solve_kernel_primal(K: np.ndarray, A: sp.csr_matrix, ordered: np.ndarray, C: float,
                        beta0: np.ndarray | None = None, tol: float = 1e-8, max_iter: int = 100):
    """Kernel RankSVM in the primal over expansion coefficients beta (f = K beta), as Kuo, Lee &
    Lin (2014) and Chapelle (2007): min 0.5 beta'K beta + C sum loss(A K beta).

    Each Newton step fixes the active set I and solves the stationarity condition with K
    factored out, (I_n + A_I' diag(h) A_I K) beta = A_I' diag(h) y_I (an n x n system), so
    Q = A K A' (p x p) is never formed. Steps are backtracked on the objective.

    Returns beta, the dual-form coefficients ``A' alpha`` (alpha = -g, eq. 4) and diagnostics.
    """
    from threadpoolctl import threadpool_limits

    # n x n solves with n of a few hundred are slower multi-threaded on a shared machine
    with threadpool_limits(limits=1 if K.shape[0] < 2000 else None, user_api="blas"):
        return _solve_kernel_primal(K, A, ordered, C, beta0, tol, max_iter)


def _solve_kernel_primal(K, A, ordered, C, beta0, tol, max_iter):
    n = K.shape[0]
    AT = A.T.tocsr()
    beta = np.zeros(n) if beta0 is None else beta0.copy()
    obj, g, h = kernel_objective_value(beta, K, A, ordered, C)
    it = 0
    for it in range(1, max_iter + 1):
        y = np.where(ordered, 1.0, 0.0)
        D = sp.diags(h)
        L = (AT @ D @ A)  # n x n, sparse
        M = np.eye(n) + np.asarray(L @ K)
        rhs = AT @ (h * y)
        try:
            target = np.linalg.solve(M, rhs)
        except np.linalg.LinAlgError:
            target = np.linalg.lstsq(M, rhs, rcond=None)[0]
        step = target - beta
        t = 1.0
        while True:
            cand = beta + t * step
            obj_c, g_c, h_c = kernel_objective_value(cand, K, A, ordered, C)
            if obj_c <= obj or t < 1e-8:
                break
            t *= 0.5
        done = obj - obj_c <= tol * max(abs(obj), 1.0) and np.array_equal(h_c > 0, h > 0)
        beta, obj, g, h = cand, obj_c, g_c, h_c
        if done:
            break
    beta_dual = -(AT @ g)  # = A' alpha; equals beta at the optimum when K is nonsingular
    return beta, beta_dual, {"n_iter": it, "obj": obj}


# --------------------------------------------------------------------------- kernels
def chi2_distance(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Chi-square distances sum (x - y)^2 / (x + y) between rows (non-negative features)."""
    from sklearn.metrics.pairwise import additive_chi2_kernel

    if (X < 0).any() or (Y < 0).any():
        raise ConfigError("kernel chi2: features must be non-negative (histograms); use kernel: linear "
                          "or a non-negative feature set")
    return -additive_chi2_kernel(np.asarray(X, float), np.asarray(Y, float))


def base_kernel(kind: str, X: np.ndarray, Y: np.ndarray, gamma: float, scale: float) -> np.ndarray:
    """``linear``: x'y / scale; ``chi2``: exp(-gamma * chi2(x, y) / scale) (Zhang et al. 2007).

    ``scale`` is fixed on the training rows (mean diagonal of the linear kernel, mean chi-square
    distance), so gamma is unit-free and kernels are comparable in size for MKL.
    """
    if kind == "linear":
        return (np.asarray(X, float) @ np.asarray(Y, float).T) / scale
    if kind == "chi2":
        return np.exp(-gamma * chi2_distance(X, Y) / scale)
    raise ConfigError(f"unknown kernel {kind!r}; valid kernels: linear, chi2")


def kernel_scale(kind: str, X: np.ndarray) -> float:
    if kind not in ("linear", "chi2"):
        raise ConfigError(f"unknown kernel {kind!r}; valid kernels: linear, chi2")
    if kind == "linear":
        return float(max(np.einsum("ij,ij->i", X, X).mean(), 1e-12))
    D = chi2_distance(X, X)
    n = len(X)
    return float(max(D.sum() / max(n * (n - 1), 1), 1e-12))


# --------------------------------------------------------------------------- cross-validation
def as_grid(value) -> list:
    return list(value) if isinstance(value, (list, tuple, np.ndarray)) else [value]


def cv_pair_accuracy(fit_score, pairs, sign, grid: list[dict], n_folds: int, rng) -> tuple[dict, list]:
    """Choose the grid point with the best mean held-out pair accuracy (ties: first in grid).

    The training *items* are split into ``n_folds`` folds; fold k trains on the pairs whose two
    items are both outside fold k and is scored on the ordered pairs inside fold k. Splitting the
    pairs themselves would leak: a held-out pair shares its images with training pairs, which
    rewards memorising images (too large C). ``fit_score(params, pair_mask) -> item scores``.
    """
    n_items = int(pairs.max()) + 1
    item_fold = rng.permutation(n_items) % n_folds
    pf = item_fold[pairs]
    scores = []
    for params in grid:
        accs = []
        for k in range(n_folds):
            train = (pf[:, 0] != k) & (pf[:, 1] != k)
            test = (pf[:, 0] == k) & (pf[:, 1] == k) & (sign != 0)
            if not test.any() or not (train & (sign != 0)).any():
                continue
            f = fit_score(params, train)
            d = (f[pairs[test, 0]] - f[pairs[test, 1]]) * sign[test]
            accs.append(np.mean(d > 0))
        scores.append(float(np.mean(accs)) if accs else float("nan"))
    best = int(np.nanargmax(scores)) if not np.isnan(scores).all() else 0
    return grid[best], scores

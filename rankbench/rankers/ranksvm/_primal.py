"""The one primal solver of the ranking SVMs: squared hinge, Newton with an exact line search.

Problem (Chapelle 2007; Prosser et al. 2010 eq. 4; Sharaf et al. 2015 eq. 1 with the L2 loss;
Parikh & Grauman 2011 eq. 4 for "similar" pairs)::

    f(w) = 1/2 ||w||^2 + C * sum_s r_s(w)^2,   z = M w,
    r_s = max(0, 1 + z_s)   for an ordered pair  (z_s = -margin: w^T(x-_s - x+_s), or -(A X w)_s)
    r_s = z_s               for a "similar" pair (equal strength: the margin should be 0)

``M`` is never needed as a matrix: an *oracle* gives ``z(v) = M v``, ``rmat(t) = M^T t``,
``hvp(v, act) = (M^T diag(act) M v, M v)`` and ``n_rows``; small problems may also give the
explicit Gauss-Newton matrix ``gram(act) = M^T diag(act) M`` (``d x d``).

Each Newton step solves ``(I + 2C M_act^T M_act) s = -grad`` exactly (Cholesky, when the oracle
has ``gram`` and ``d <= direct_max``) or approximately by conjugate gradient with a forcing term
that shrinks with the gradient (truncated Newton, Lin, Weng & Keerthi 2008). The step length is
the exact minimiser of the convex piecewise-quadratic ``f(w + t s)`` (1-D Newton steps that end
once the active set stops changing). Stops when ``||grad|| <= tol * ||grad at w = 0||``.
The result is the house's :func:`rankbench.utils.optim.solver_result`.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import OptimizeResult

from ...utils.optim import CONVERGED, MAX_ITER, solver_result
from ...utils.threads import blas_threads


def solve(oracle, C: float, w0=None, z0=None, similar=None, max_newton: int = 20, max_cg: int = 30,
          tol: float = 1e-3, direct_max: int = 2000, blas: int | None = 1) -> OptimizeResult:
    """Minimise the module's objective.

    Parameters
    ----------
    oracle : an object with ``d``, ``n_rows``, ``z``, ``rmat``, ``hvp`` (and optionally ``gram``).
    C : loss weight.
    w0, z0 : warm start (``z0 = M w0``, computed when missing).
    similar : bool mask of "similar" rows (two-sided loss), or None (every row ordered).
    max_newton, max_cg : iteration caps (CG stops early: the *truncated* Newton).
    tol : relative gradient-norm tolerance.
    direct_max : largest ``d`` for which an oracle's explicit ``gram`` is factorised instead of CG.
    blas : BLAS threads during the solve (1: many small products; None: leave as is).

    Returns
    -------
    :func:`~rankbench.utils.optim.solver_result`: ``x`` = w, ``fun``, ``nit`` (Newton steps),
    ``status`` (converged: the gradient tolerance was met; or max_iter) and ``z`` (M w),
    ``residual`` (r_s, 0 for satisfied ordered pairs), ``cg`` (CG iterations), ``passes``
    (the oracle's streamed passes).
    """
    with blas_threads(blas):
        return _solve(oracle, float(C), w0, z0, similar, max_newton, max_cg, tol, direct_max)


def _residual(z, offset, hinge):
    r = offset + z
    return np.where(hinge, np.maximum(r, 0.0), r)


def _solve(oracle, C, w0, z0, similar, max_newton, max_cg, tol, direct_max):
    d, n = oracle.d, oracle.n_rows
    hinge = np.ones(n, bool) if similar is None else ~np.asarray(similar, bool)
    offset = hinge.astype(float)  # 1 for ordered pairs, 0 for similar ones
    w = np.zeros(d) if w0 is None else np.asarray(w0, dtype=float).copy()
    if z0 is not None:
        z = np.asarray(z0, dtype=float).copy()
    elif w.any():
        z = np.asarray(oracle.z(w), dtype=float)
    else:
        z = np.zeros(n)  # w = 0: no pass needed
    direct = hasattr(oracle, "gram") and d <= direct_max
    g_ref = None
    newton = cg = 0
    status = MAX_ITER
    for _ in range(max_newton):
        r = _residual(z, offset, hinge)
        g = w + 2 * C * oracle.rmat(r)
        gn = float(np.linalg.norm(g))
        if g_ref is None:
            g_ref = max(2 * C * _scale(oracle, C, offset, r, g, w), 1e-300)
        if gn <= tol * g_ref:
            status = CONVERGED
            break
        act = np.where(hinge, r > 0, True).astype(float)
        if direct:
            H = 2 * C * oracle.gram(act)
            H.flat[:: d + 1] += 1.0
            s = _cho_solve(H, -g)
            zs = np.asarray(oracle.z(s), dtype=float)
        else:
            s, zs, k = _cg(oracle, C, act, g, gn, g_ref, max_cg)
            cg += k
        t = line_search(w, s, z, zs, C, offset, hinge)
        w += t * s
        z += t * zs
        newton += 1
    r = _residual(z, offset, hinge)
    message = ("the gradient norm fell to tol times its norm at w = 0" if status == CONVERGED
               else f"max_newton = {max_newton} Newton steps taken")
    return solver_result(w, 0.5 * w @ w + C * r @ r, newton, status, message, z=z, residual=r, cg=cg,
                         passes=getattr(oracle, "n_passes", 0))


def _scale(oracle, C, offset, r, g, w) -> float:
    """||M^T offset||, the gradient's size at w = 0 (free on a cold start; cached on the oracle)."""
    key = "_grad0_norm"
    cached = getattr(oracle, key, None)
    if cached is None:
        cached = (np.linalg.norm(g) / (2 * C) if not w.any() and np.array_equal(r, offset)
                  else np.linalg.norm(oracle.rmat(offset)))
        try:
            setattr(oracle, key, cached)
        except AttributeError:
            pass
    return float(cached)


def _cho_solve(H, b):
    from scipy.linalg import LinAlgError, cho_factor, cho_solve

    try:
        return cho_solve(cho_factor(H, lower=True, check_finite=False), b, check_finite=False)
    except LinAlgError:  # positive definite in exact arithmetic (I + PSD); guard rounding anyway
        return np.linalg.lstsq(H, b, rcond=None)[0]


def _cg(oracle, C, act, g, gn, g_ref, max_cg):
    """CG on (I + 2C M_act^T M_act) s = -g; forcing term eta = min(0.5, sqrt(gn / g_ref))."""
    eta = min(0.5, np.sqrt(gn / g_ref))
    s = np.zeros_like(g)
    zs = np.zeros(oracle.n_rows)
    r = -g
    p = r.copy()
    rr = r @ r
    k = 0
    for k in range(1, max_cg + 1):
        hp, zp = oracle.hvp(p, act)
        Hp = p + 2 * C * hp
        alpha = rr / (p @ Hp)
        s += alpha * p
        zs += alpha * zp
        r -= alpha * Hp
        rr_new = r @ r
        if np.sqrt(rr_new) <= eta * gn:
            break
        p = r + (rr_new / rr) * p
        rr = rr_new
    return s, zs, k


def line_search(w, s, z, zs, C, offset, hinge, iters: int = 30) -> float:
    """Minimiser over t of the convex piecewise-quadratic f(w + t s), by 1-D Newton steps (exact
    once the active set stops changing, usually after a few steps)."""
    ws, ss = w @ s, s @ s
    keep = zs != 0  # rows the direction does not move add a constant
    z, zs, offset, hinge = z[keep], zs[keep], offset[keep], hinge[keep]
    t, prev = 1.0, None
    for _ in range(iters):
        m = offset + z + t * zs
        a = np.where(hinge, m > 0, True)
        if prev is not None and np.array_equal(a, prev):
            break
        d1 = ws + t * ss + 2 * C * (m[a] @ zs[a])
        d2 = ss + 2 * C * (zs[a] @ zs[a])
        t -= d1 / d2
        prev = a
    return t


def solve_gram(K: np.ndarray, A, C: float, similar=None, b0=None, tol: float = 1e-8,
               max_newton: int = 100, Phi: np.ndarray | None = None) -> tuple[np.ndarray, OptimizeResult]:
    """Kernel RankSVM (Sharaf et al. eqs. 3-6; Kuo, Lee & Lin 2014) as the same primal over a factor
    ``Phi`` of the kernel (``K = Phi Phi^T``), so ``Q = A K A^T`` is never formed.

    Returns ``b`` (n,) with training scores ``f = K b`` and scores of new items ``k(x, X) b``
    (``b = 2C A^T r``, the dual expansion ``A^T alpha``), and the solver's solution. ``b0`` (a
    previous ``b``) warm-starts the solve at ``w0 = Phi^T b0``. ``Phi``: the factor
    ``kernel_factor(K)`` when the caller already has it (a cross-validation solves many pair
    sets over one kernel); computed here otherwise.
    """
    from ._oracles import PairMatrixOracle, kernel_factor

    Phi = kernel_factor(K) if Phi is None else Phi
    oracle = PairMatrixOracle(A, Phi)
    w0 = None if b0 is None else Phi.T @ b0
    sol = solve(oracle, C, w0=w0, similar=similar, tol=tol, max_newton=max_newton, max_cg=Phi.shape[1])
    return 2 * C * (oracle.AT @ sol.residual), sol

"""cMDS-DML: ordinal distance metric learning with classical MDS (Yu & Li).

Reference: P. Yu and Q.-N. Li, "Ordinal Distance Metric Learning with MDS for Image Ranking"
(arXiv 2018). Equation and algorithm numbers below are the paper's.

The method learns a linear map ``L`` (s x d), so that the metric is ``A = L^T L``:

1. ideal points ``y_i`` in R^s from the labels: the squared-distance matrix (8)
   ``D_ij = (|r_i - r_j| + beta)^2`` (0 for equal labels) embedded by classical MDS (4)-(6),
   either directly on the n x n matrix or by Algorithm 1 on the m x m label matrix (11);
2. ``K`` target neighbours per training point (same label, Euclidean, eq. (2));
3. minimise (10) ``f(L, c) = 1/2 sum ||L x_i - c y_i||^2
   + mu sum_{eta_ij = 1} (||L(x_i - x_j)||^2 - ||x_i - x_j||^2)^2``
   by steepest descent with the Armijo rule (Algorithm 2, S4-S6) from ``L0 = [e_1 ... e_s]^T``,
   ``c0 = 1``, on centred data (Assumption 2).
"""

from __future__ import annotations

import warnings
from typing import Annotated, Literal

import numpy as np
from pydantic import Field
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ...errors import InputError
from ...metrics import knn_regress, mae
from ...params import AtMost, NonNegativeFloat, NonNegativeInt, OpenFraction, PositiveFloat, PositiveInt, Seed
from ...registry import rankers
from ...utils import jit
from ...utils.optim import CONVERGED, LINE_SEARCH, MAX_ITER, backtrack, solver_result, stop_diagnostics
from ...utils.progress import tick
from ...utils.threads import blas_threads
from .._search import as_grid, choose
from .._validation import checked_input
from ..base import MetricLearner
from ._neighbours import ordinal_labels, target_neighbours


# --------------------------------------------------------------------------- the ideal points
def label_distance_matrix(r: np.ndarray, beta: float = 1.0) -> np.ndarray:
    """Squared distances (8): ``(|r_i - r_j| + beta)^2`` for different labels, else 0."""
    r = np.asarray(r, float)
    diff = np.abs(r[:, None] - r[None, :])
    return np.where(diff > 0, (diff + beta) ** 2, 0.0)


def classical_mds(D: np.ndarray, s: int) -> np.ndarray:
    """Classical MDS (4)-(6) of a squared-distance matrix ``D`` to ``s`` dimensions.

    Returns the (n, s) coordinates ``[sqrt(l_1) p_1, ..., sqrt(l_s) p_s]``; eigenvalues that are
    not positive (``D`` of rank below s, or not an EDM) give zero columns, so the output always
    has ``s`` columns.
    """
    D = np.asarray(D, float)
    n = len(D)
    J = np.eye(n) - 1.0 / n
    B = -0.5 * J @ D @ J
    lam, P = np.linalg.eigh((B + B.T) / 2)
    order = np.argsort(lam)[::-1][:s]
    lam = np.clip(lam[order], 0.0, None)
    # numerically zero eigenvalues would give arbitrary directions of size ~1e-8; zero them
    lam[lam < 1e-10 * max(lam.max(initial=0.0), 1.0)] = 0.0
    Y = P[:, order] * np.sqrt(lam)
    if Y.shape[1] < s:
        Y = np.hstack([Y, np.zeros((n, s - Y.shape[1]))])
    return Y


def mds_from_labels(r: np.ndarray, s: int, beta: float = 1.0) -> np.ndarray:
    """Algorithm 1: the ideal points from the m x m label matrix, O(m^3) instead of O(n^3).

    Step 1 builds Delta (11) over the distinct labels, step 2 embeds it by cMDS in
    ``s1 = min(s, m)`` dimensions, step 3 copies each label's point to its items (padded with zeros
    to ``s``) and step 4 centres them (the paper writes the sum; the mean is what makes
    ``sum_i y_i = 0`` as the text states). The distances equal those of cMDS on the n x n ``D``
    whenever ``s >= m - 1`` (both then reproduce D exactly). For smaller s (e.g. FG-NET's five
    labels in s = 3) both are truncations and differ: the n x n route weights each label by its
    number of items, Algorithm 1 weights the labels equally.
    """
    r = np.asarray(r, float)
    levels, idx = np.unique(r, return_inverse=True)
    Z = classical_mds(label_distance_matrix(levels, beta), min(s, len(levels)))
    Y = np.zeros((len(r), s))
    Y[:, : Z.shape[1]] = Z[idx]
    return Y - Y.mean(axis=0)


def align_signs(Y: np.ndarray, Z0: np.ndarray) -> np.ndarray:
    """The ideal points with each coordinate's sign chosen to agree with the start ``Z0 = X L0^T``.

    cMDS fixes ``y_i`` only up to the sign of each coordinate (eigenvectors' signs are the
    eigen-solver's choice), and so does a PCA in front of the learner for the columns ``L0`` picks.
    The descent is not invariant to these signs: it starts at ``L0`` with ``c0 = 1`` and, as (10) has
    no minimiser away from the origin, stops on the way. On Yu & Li's own UMIST data (n = 30, 10
    trials) flipping the sign of the first principal component against the ideal points moves
    the MAE between 0.27 and 0.67. Flipping coordinate k when ``sum_i y_ik z0_ik < 0`` makes the
    result the same for every sign convention (an unstated detail of the paper, fixed here).
    """
    flip = np.einsum("ik,ik->k", Y, Z0) < 0
    return np.where(flip, -Y, Y)


def beta_lower_bound(r: np.ndarray) -> float:
    """Theorem 1: ``D`` of (8) is an EDM whenever ``beta >= -4 mu_0``.

    ``mu_0`` is the smallest eigenvalue of ``-1/2 J Dbar^(1/2) J`` with ``Dbar^(1/2) = (|a_i - a_j|)``
    over the distinct labels (9).
    """
    levels = np.unique(np.asarray(r, float))
    m = len(levels)
    J = np.eye(m) - 1.0 / m
    mu0 = np.linalg.eigvalsh(-0.5 * J @ np.abs(levels[:, None] - levels[None, :]) @ J).min()
    return float(-4.0 * mu0)


# --------------------------------------------------------------------------- objective (10)
def objective(L, c, X, Y, V, v2, mu):
    """f(L, c) of (10); ``V`` rows are ``x_i - x_j`` over target pairs, ``v2`` their squared norms."""
    R = X @ L.T - c * Y
    e = ((V @ L.T) ** 2).sum(axis=1) - v2
    return 0.5 * float((R**2).sum()) + mu * float((e**2).sum())


def gradient(L, c, X, Y, V, v2, mu):
    """The gradient of (10) as in Section 4 ("Implementations"), vectorised over items and pairs:

    ``grad_L = sum (L x_i - c y_i) x_i^T + 4 mu sum (||L v||^2 - ||v||^2) L v v^T``,
    ``grad_c = c sum ||y_i||^2 - sum y_i^T L x_i``.
    """
    R = X @ L.T - c * Y
    LV = V @ L.T
    e = (LV**2).sum(axis=1) - v2
    gL = R.T @ X + 4.0 * mu * (LV * e[:, None]).T @ V
    gc = -float((R * Y).sum())
    return gL, gc


def pair_differences(X, pairs):
    """``V`` (rows ``x_i - x_j`` over the target pairs) and ``v2``, their squared norms."""
    V = X[pairs[:, 0]] - X[pairs[:, 1]]
    return V, (V**2).sum(axis=1)


def descend(L0, X, Y, pairs, mu, gamma, rho, sigma, r, tol, max_iter, c_step="gradient", ftol=0.0,
            checkpoints=()):
    """Algorithm 2, S4-S6: steepest descent with the Armijo rule on (10) from (L0, c0 = 1).

    ``pairs`` (P, 2) are the target pairs (eta_ij = 1) as row indices of X.

    Every gradient is ``G = R^T X + (4 mu W)^T V`` (R = XL^T - cY, W = (VL^T) * e), so each iterate
    is ``L = L0 - A^T X - B^T V`` and the whole descent runs on the Gram matrix of ``[X; V]``:
    an iteration costs O((n + P)^2 s), independent of d, with the same iterates as the d-space
    update (checked in the tests). The objective along the search line needs only the products
    of the direction with X and V, which the Gram matrix gives.

    Stops on ``||grad f|| <= tol``, after ``max_iter`` iterations, when none of the ``r`` trial
    steps gives sufficient decrease (the paper leaves that case open; taking the smallest step
    anyway diverges when ``gamma rho^r`` is still too long for the data's scale), or, with
    ``ftol > 0``, once ``|f_k - f_(k-1)| / f_(k-1) < ftol`` (from the second iteration on).

    ``c_step="gradient"`` moves (L, c) together along -grad f (the paper's S6). ``"authors"`` is
    the published code's update (``KNN.m``): each iteration first computes
    ``c_next = argmin_c f(L_k, c) = sum y_i^T L_k x_i / sum ||y_i||^2``, takes the Armijo step in L
    alone with the previous c, then sets ``c = c_next``.

    ``checkpoints``: iteration counts at which to record (L, c) as well (a stop before a
    checkpoint records the final iterate there).

    Returns a :func:`rankbench.utils.optim.solver_result`: ``x`` = L, ``fun`` = f(L, c), ``nit``,
    ``status`` (converged on ``tol`` or ``ftol``, ``max_iter``, or ``line_search``), ``message``,
    and ``c``, ``n_trial_steps``, ``grad_norm`` (||grad f|| at the last gradient) and
    ``checkpoints`` ({iteration: (L, c)}).

    With numba (:mod:`rankbench.utils.jit`) the loop runs compiled (:func:`_descend_compiled`,
    the same iterates up to float rounding); this module's numpy loop is the reference.
    """
    args = (mu, gamma, rho, sigma, r, tol, max_iter, c_step, ftol, checkpoints)
    V, v2 = pair_differences(X, pairs)
    if jit.enabled():
        L, c, n_iter, n_bt, g2, stop, recorded = _descend_compiled(L0, X, Y, np.asarray(pairs), *args)
    else:
        L, c, n_iter, n_bt, g2, stop, recorded = _descend_numpy(L0, X, Y, V, v2, *args)
    status, message = _STATUS[stop]
    return solver_result(L, objective(L, c, X, Y, V, v2, mu), n_iter, status, message, c=c,
                         n_trial_steps=n_bt, grad_norm=float(np.sqrt(g2)), checkpoints=recorded)


def _descend_numpy(L0, X, Y, V, v2, mu, gamma, rho, sigma, r, tol, max_iter, c_step, ftol, checkpoints):
    """The numpy loop of :func:`descend` (the reference; it runs when numba is absent)."""
    n = len(X)
    Z = np.vstack([X, V])
    Kz = Z @ Z.T
    # state S = [X L^T - c Y; V L^T] (residuals and projected pair differences), updated in place
    # in preallocated buffers (few temporaries: small Python overhead, also under allocation tracing)
    S = Z @ L0.T
    S[:n] -= Y
    Y0 = np.zeros_like(S)
    Y0[:n] = Y
    w = np.ones((len(Z), 1))  # U = S * w: rows 1 for items, 4 mu e for pairs
    U, KU, D, tmp = (np.empty_like(S) for _ in range(4))
    coef = np.zeros_like(S)  # L = L0 - coef^T Z
    # B rows: [0 | e] (pair residuals e_p = ||L v_p||^2 - ||v_p||^2), r1 = rows of S * D,
    # r2 = rows of D * D; one small product of B's pair columns gives all the line's coefficients
    B = np.zeros((3, len(Z)))
    e, r1, r2 = B[0, n:], B[1], B[2]
    B_pairs, B_items = B[:, n:], B[:, :n]
    w_pairs, S_items, S_pairs = w[n:, 0], S[:n], S[n:]
    np.einsum("ij,ij->i", S_pairs, S_pairs, out=e)
    e -= v2
    c = 1.0
    yy = float(np.vdot(Y, Y))
    exact_c = c_step == "authors"
    steps = (gamma * rho ** np.arange(1, r + 1)).tolist()
    n_iter = n_bt = 0
    g2 = np.inf
    stop = "max_iter"
    marks = sorted({int(k) for k in checkpoints})
    recorded = {}
    f_prev = None

    def record(upto):
        while marks and marks[0] <= upto:
            recorded[marks.pop(0)] = (L0 - coef.T @ Z, c)

    record(0)
    for t in range(max_iter):
        tick("iteration", t + 1, max_iter)
        np.multiply(e, 4.0 * mu, out=w_pairs)
        np.multiply(S, w, out=U)
        np.matmul(Kz, U, out=KU)  # rows: X G^T and V G^T for G = grad_L f
        gc = -float(np.vdot(Y, S_items))  # grad_c = c sum ||y||^2 - sum y^T L x
        if exact_c:
            c_next = c - gc / yy if yy > 0 else c  # argmin_c f(L_k, c)
            gc = 0.0  # the step moves L alone
        # ||grad_L||^2 as the sum of the gradient's squares (vdot(U, KU), its Gram form, cancels: the
        # pair rows of Z are differences of item rows, and rounding made it negative at 2e-7)
        G = U.T @ Z
        g2 = float(np.vdot(G, G)) + gc * gc
        if g2 <= tol * tol:
            stop = "tol"
            break
        np.multiply(Y0, gc, out=tmp)
        np.subtract(KU, tmp, out=D)  # S(a) = S - a D along the search line
        # f(a) - f(0) is a polynomial in a: quadratic for the fitting term, quartic for the pairs
        # (e_p(a) = e_p - 2 a r1_p + a^2 r2_p); its coefficients make every Armijo trial a few
        # scalar operations, and the difference is computed without cancellation
        np.einsum("ij,ij->i", S, D, out=r1)
        np.einsum("ij,ij->i", D, D, out=r2)
        (ee, e1, e2), (_, p11, p12), (_, _, p22) = (B_pairs @ B_pairs.T).tolist()
        _, A1, A2 = B_items.sum(axis=1).tolist()
        E1 = -4.0 * e1
        E2 = 4.0 * p11 + 2.0 * e2
        E3 = -4.0 * p12
        E4 = p22
        a, _, _, m, accepted = backtrack(
            lambda a: (a * (-A1 + 0.5 * a * A2) + mu * a * (E1 + a * (E2 + a * (E3 + a * E4))), None),
            lambda df, _, a: df <= -sigma * a * g2, steps=steps)
        if not accepted:
            # no sufficient decrease within r trial steps: stop rather than take a step that
            # may increase f (gamma too large for the data's scale)
            stop = "line search"
            n_bt += r
            break
        # S6
        np.multiply(D, a, out=tmp)
        S -= tmp
        np.einsum("ij,ij->i", S_pairs, S_pairs, out=e)
        e -= v2
        if exact_c:
            S_items += (c - c_next) * Y  # residuals X L^T - c Y with the new c
            c = c_next
        else:
            c -= a * gc
        np.multiply(U, a, out=tmp)
        coef += tmp
        n_iter += 1
        n_bt += m
        record(n_iter)
        if ftol > 0:
            f_now = 0.5 * float(np.vdot(S_items, S_items)) + mu * float(np.vdot(e, e))
            if f_prev is not None and abs(f_now - f_prev) < ftol * f_prev:
                stop = "ftol"
                break
            f_prev = f_now
    L = L0 - coef.T @ Z
    for k in marks:
        recorded[k] = (L, c)
    return L, c, n_iter, n_bt, g2, stop, recorded


#: stop reasons of the compiled loop, by the code it returns
_STOPS = ("max_iter", "tol", "line search", "ftol")
#: each stop reason's solver status and message
_STATUS = {"max_iter": (MAX_ITER, "the iteration cap was reached"),
           "tol": (CONVERGED, "the gradient norm fell to tol"),
           "ftol": (CONVERGED, "the relative decrease of f fell below ftol"),
           "line search": (LINE_SEARCH, "no trial step gave sufficient decrease (gamma too large for the "
                                        "data's scale?)")}


def _descend_compiled(L0, X, Y, pairs, mu, gamma, rho, sigma, r, tol, max_iter, c_step, ftol, checkpoints):
    """:func:`descend` with its loop compiled (:func:`_descend_steps`), run in chunks that end at
    each checkpoint and report progress between them.

    The same iterates as :func:`_descend_numpy` up to float rounding, with less work: the
    projected pair differences ``V L^T`` are differences of rows of ``T = X L^T``, and the
    gradient ``R^T X + (4 mu W)^T V`` is ``U^T X`` for item coefficients U (each pair's row added to
    its first item and subtracted from its second), so the loop keeps only T (s, n) and the
    coefficients (``L = L0 - coef X``). X enters through a thin factor ``F F^T = X X^T`` (X itself
    when d <= n, else X Q with Q an orthonormal basis of its rows): an iteration costs
    O(n min(d, n) s + P s).
    """
    n, d = X.shape
    F = np.ascontiguousarray(X if d <= n else X @ np.linalg.qr(X.T)[0])
    Ft = np.ascontiguousarray(F.T)
    T = np.ascontiguousarray((X @ L0.T).T)  # (s, n)
    Yt = np.ascontiguousarray(Y.T)
    coef = np.zeros_like(T)
    pi, pj = (np.ascontiguousarray(pairs[:, k], dtype=np.int64) for k in (0, 1))
    v2 = pair_differences(X, pairs)[1]
    steps = gamma * rho ** np.arange(1, r + 1)
    scal = np.array([1.0, np.inf, np.inf, 0.0])  # c, f_prev (inf: none yet), g2, trial steps
    marks = sorted({int(k) for k in checkpoints})
    recorded = {}
    n_iter, code = 0, 0

    def record(upto, L=None):
        while marks and marks[0] <= upto:
            recorded[marks.pop(0)] = (L0 - coef @ X if L is None else L, float(scal[0]))

    record(0)
    while n_iter < max_iter and not code:
        upto = min(max_iter, n_iter + 500, marks[0] if marks else max_iter)  # ticks every 500
        tick("iteration", n_iter + 1, max_iter)
        done, code = _descend_steps(F, Ft, Yt, pi, pj, v2, mu, steps, sigma, tol * tol, c_step == "authors",
                                    ftol, T, coef, scal, upto - n_iter)
        n_iter += done
        tick("iteration", n_iter, max_iter)
        record(n_iter)
    L = L0 - coef @ X
    record(np.inf, L)  # checkpoints the descent did not reach hold its last iterate
    return L, float(scal[0]), n_iter, int(scal[3]), float(scal[2]), _STOPS[code], recorded


@jit.njit
def _descend_steps(F, Ft, Yt, pi, pj, v2, mu, steps, sigma, tol2, exact_c, ftol, T, coef, scal, n_max):
    """Up to ``n_max`` iterations of the descent on ``T = (X L^T)^T`` and ``coef`` (updated in
    place) and ``scal = [c, f_prev, g2, trial steps]`` (see :func:`_descend_compiled`).
    Returns (iterations taken, stop code: an index of ``_STOPS``).

    Compiled code cannot call :func:`rankbench.utils.optim.backtrack` with a Python closure, so
    the Armijo rule of the numpy loop is written out here once more (the same trial steps and
    test; the tests hold the two loops to the same iterates)."""
    def product(A, B, out):  # out = A @ B, a row of B at a time (a loop the compiler vectorises)
        out[:] = 0.0
        for i in range(B.shape[0]):
            for j in range(A.shape[0]):
                a = A[j, i]
                for k in range(B.shape[1]):
                    out[j, k] += a * B[i, k]

    s, n = T.shape
    rk = F.shape[1]
    P = len(pi)
    c, f_prev, g2, n_bt = scal[0], scal[1], scal[2], scal[3]
    yy = 0.0
    for j in range(s):
        for i in range(n):
            yy += Yt[j, i] * Yt[j, i]
    R = np.empty((s, n))   # item residuals X L^T - c Y
    Sp = np.empty((s, P))  # projected pair differences L v_p
    e = np.empty(P)        # pair residuals ||L v_p||^2 - ||v_p||^2
    U = np.empty((s, n))   # the gradient's item coefficients: grad_L f = U X
    H = np.empty((s, rk))  # U F
    XD = np.empty((s, n))  # the search direction's products with X: F H^T
    D = np.empty((s, n))
    Dp = np.empty((s, P))
    done = 0
    code = 0
    while done < n_max:
        for j in range(s):
            for i in range(n):
                R[j, i] = T[j, i] - c * Yt[j, i]
                U[j, i] = R[j, i]
        for p in range(P):
            ep = 0.0
            for j in range(s):
                Sp[j, p] = T[j, pi[p]] - T[j, pj[p]]
                ep += Sp[j, p] * Sp[j, p]
            e[p] = ep - v2[p]
            w = 4.0 * mu * e[p]
            for j in range(s):
                U[j, pi[p]] += w * Sp[j, p]
                U[j, pj[p]] -= w * Sp[j, p]
        product(U, F, H)
        gc = 0.0  # grad_c = c sum ||y||^2 - sum y^T L x
        for j in range(s):
            for i in range(n):
                gc -= Yt[j, i] * R[j, i]
        c_next = c
        if exact_c:
            if yy > 0:
                c_next = c - gc / yy  # argmin_c f(L_k, c)
            gc = 0.0  # the step moves L alone
        g2 = gc * gc
        for j in range(s):
            for k in range(rk):
                g2 += H[j, k] * H[j, k]
        if g2 <= tol2:
            code = 1
            break
        product(H, Ft, XD)
        # f(a) - f(0) along the line, as a polynomial in a (see _descend_numpy)
        A1 = A2 = e1 = e2 = p11 = p12 = p22 = 0.0
        for i in range(n):
            for j in range(s):
                D[j, i] = XD[j, i] - Yt[j, i] * gc
                A1 += R[j, i] * D[j, i]
                A2 += D[j, i] * D[j, i]
        for p in range(P):
            r1 = 0.0
            r2 = 0.0
            for j in range(s):
                Dp[j, p] = XD[j, pi[p]] - XD[j, pj[p]]
                r1 += Sp[j, p] * Dp[j, p]
                r2 += Dp[j, p] * Dp[j, p]
            e1 += e[p] * r1
            e2 += e[p] * r2
            p11 += r1 * r1
            p12 += r1 * r2
            p22 += r2 * r2
        E1 = -4.0 * e1
        E2 = 4.0 * p11 + 2.0 * e2
        E3 = -4.0 * p12
        E4 = p22
        m = 0
        a = 0.0
        found = False
        for m in range(1, len(steps) + 1):
            a = steps[m - 1]
            df = a * (-A1 + 0.5 * a * A2) + mu * a * (E1 + a * (E2 + a * (E3 + a * E4)))
            if df <= -sigma * a * g2:
                found = True
                break
        if not found:  # no sufficient decrease within r trial steps
            n_bt += len(steps)
            code = 2
            break
        for j in range(s):  # S6
            for i in range(n):
                T[j, i] -= a * XD[j, i]
                coef[j, i] += a * U[j, i]
        if exact_c:
            c = c_next
        else:
            c -= a * gc
        done += 1
        n_bt += m
        if ftol > 0:
            f_now = 0.0
            for j in range(s):
                for i in range(n):
                    f_now += (T[j, i] - c * Yt[j, i]) ** 2
            ee = 0.0
            for p in range(P):
                ep = -v2[p]
                for j in range(s):
                    ep += (T[j, pi[p]] - T[j, pj[p]]) ** 2
                ee += ep * ep
            f_now = 0.5 * f_now + mu * ee
            if f_prev < np.inf and abs(f_now - f_prev) < ftol * f_prev:
                code = 3
                break
            f_prev = f_now
    scal[0], scal[1], scal[2], scal[3] = c, f_prev, g2, n_bt
    return done, code


@rankers.register("cmds_dml")
class CMDSDML(BaseEstimator, MetricLearner):
    """cMDS-DML (Yu & Li): a linear map fitted to classical-MDS ideal points of the ordinal labels.

    Parameters (the paper's names)
    ----------
    s : int
        Embedding dimension (rows of L), at most the input dimension (checked at plan time).
    K : int
        Target neighbours per training point (same label).
    mu : float
        Weight of the local-structure term of (10).
    beta : float
        Offset in (8); Theorem 1 guarantees an EDM for ``beta >= beta_lower_bound(labels)``.
    gamma : float or "auto"
        Armijo rule (S5): trial steps ``gamma * rho^m``. The step must suit the data's scale (the
        fitting term's curvature is the largest eigenvalue of X^T X), so there is no good
        constant default: "auto" takes ``gamma = 2 / lambda_max(X^T X)`` of the centred training
        data, whose first trial step ``gamma * rho`` is then ``1 / lambda_max`` for rho = 0.5.
        The paper's values (1e-9 for raw UMIST pixels, 10 for FG-NET) are in the yuli configs.
    rho, sigma : float
        Armijo rule (S5): step shrink factor, sufficient decrease ``sigma``.
    r : int
        At most ``r`` trial steps per iteration (the paper's "maximum number for line search loop").
        ``m`` runs over 1..r (the paper's "smallest positive integer"); if none satisfies the
        Armijo condition the descent stops (``result_.status`` is ``LINE_SEARCH``).
    tol : float
        Stop when the gradient norm ``||grad f(L, c)||`` (Frobenius, L and c together) is at most
        ``tol`` (S4's epsilon; the paper does not give its value).
    max_iter : int or list of int
        Iteration cap (not given in the paper). A list is a grid (:mod:`rankbench.rankers._search`):
        the cap is chosen by ``cv``-fold cross-validation on the training rows (folds stratified
        by label; each cap scored by the MAE of k-NN regression with k = K of the held-out rows in
        the fold's embedding; ties to the smaller cap; see ``_cv_caps`` for how folds see the
        input), then the model is refitted
        on all rows with it. One descent per fold serves every cap (its iterates are recorded).
    cv : int
        Folds of that cross-validation (used only when ``max_iter`` is a list).
    c_step : {"gradient", "authors"}
        How c moves: with L along -grad f (the paper's Algorithm 2) or as the published code does
        it (exact minimisation over c from the previous L; see :func:`descend`). Note that (10)
        has no minimiser away from the origin: ``f(tL, tc) -> mu sum ||x_i - x_j||^4`` as
        ``t -> 0``, far below f at L0 on unscaled data, so what the descent reaches before it
        stops is the result, and the stopping rule matters.
    ftol : float
        Also stop once the relative decrease of f between iterations is below ``ftol`` (the
        published code: 5e-4); 0 disables it.
    mds : {"direct", "labels"}
        S2 by cMDS of the n x n matrix (8), as in the paper's experiments, or by Algorithm 1.
    random_state : int or None
        Seed of the cross-validation folds.
    """

    def __init__(self, s: Annotated[PositiveInt, AtMost("n_features")] = 3, K: PositiveInt = 5,
                 mu: NonNegativeFloat = 1e-10,
                 beta: NonNegativeFloat = 1.0, gamma: PositiveFloat | Literal["auto"] = "auto",
                 rho: OpenFraction = 0.5, sigma: OpenFraction = 0.05, r: PositiveInt = 20,
                 tol: NonNegativeFloat = 1e-6,
                 max_iter: NonNegativeInt | Annotated[tuple[NonNegativeInt, ...], Field(min_length=1)] = 1000,
                 cv: Annotated[int, Field(ge=2)] = 5, c_step: Literal["gradient", "authors"] = "gradient",
                 ftol: NonNegativeFloat = 0.0, mds: Literal["direct", "labels"] = "direct",
                 random_state: Seed = None):
        self.s = s
        self.K = K
        self.mu = mu
        self.beta = beta
        self.gamma = gamma
        self.rho = rho
        self.sigma = sigma
        self.r = r
        self.tol = tol
        self.max_iter = max_iter
        self.cv = cv
        self.c_step = c_step
        self.ftol = ftol
        self.mds = mds
        self.random_state = random_state

    def ideal_points(self, y: np.ndarray) -> np.ndarray:
        """S1-S2: the cMDS estimates ``y_i`` of the embedding points (signs as the eigen-solver
        gives them; :meth:`fit` then aligns them with the start, see :func:`align_signs`)."""
        if self.mds == "direct":
            return classical_mds(label_distance_matrix(y, self.beta), self.s)
        if self.mds == "labels":
            return mds_from_labels(y, self.s, self.beta)
        raise AssertionError(self.mds)  # declared as direct | labels

    def fit(self, X, y):
        X = checked_input(self, X, "fit", y=y)
        y = ordinal_labels(y, "CMDSDML")
        d = X.shape[1]
        if self.s > d:
            raise InputError(f"cmds_dml: s={self.s} exceeds the input dimension d={d}")
        if self.beta < beta_lower_bound(y) - 1e-12:
            warnings.warn(f"beta={self.beta} is below Theorem 1's bound {beta_lower_bound(y):.4g}: "
                          "D may not be a Euclidean distance matrix", RuntimeWarning, stacklevel=2)
        caps = sorted({int(k) for k in as_grid(self.max_iter)})
        # products of a few hundred rows: threads cost more than they save (and thrash on a busy machine)
        with blas_threads(1):
            self.cv_mae_ = None
            if len(caps) > 1:
                best, self.cv_mae_ = choose(self._cv_caps(X, y, caps), minimise=True)  # ties: the smaller cap
                cap = caps[best]
            else:
                cap = caps[0]
            self.max_iter_ = cap
            fit = self._descend(X, y, cap)
        self.mean_, self.gamma_, Y, pairs, res = fit
        self.result_ = res
        self.L_, self.c_ = res.x, res.c
        self.n_iter_, self.n_backtracks_ = res.nit, res.n_trial_steps
        self.objective_ = res.fun
        self.grad_norm_ = res.grad_norm
        self.target_pairs_ = pairs
        self.ideal_points_ = Y
        self.diagnostics_ = {"K": int(self.K), **stop_diagnostics(res), "max_iter": int(cap)}
        return self

    def _descend(self, X, y, max_iter, checkpoints=()):
        """S1-S6 on (X, y): centring, ideal points, target pairs, then the descent."""
        mean = X.mean(axis=0)
        Xc = X - mean  # Assumption 2
        L0 = np.eye(self.s, X.shape[1])  # L0 = (e_1, ..., e_s)^T
        Y = align_signs(self.ideal_points(y), Xc @ L0.T)
        pairs = target_neighbours(Xc, y, self.K)  # S3
        gamma = self._gamma(Xc)
        out = descend(L0, Xc, Y, pairs, self.mu, gamma, self.rho, self.sigma, self.r, self.tol, max_iter,
                      self.c_step, self.ftol, checkpoints)
        return mean, gamma, Y, pairs, out

    def _cv_caps(self, X, y, caps):
        """Held-out MAE (k-NN regression, k = K) of each iteration cap on each stratified fold,
        (folds, caps).

        The descent only changes L inside the span of the training rows; outside it L keeps L0's
        rows. When the training rows span the whole input space (as after a PCA fitted on them, the
        yuli configs' preprocessing) every new row lies in that span, but a fold's held-out rows
        do not lie in the span of the fold's training rows. So in that case each fold is first
        expressed in the principal components of its own training rows (centred, every component
        with variance, each signed so that its largest loading is positive: L0 = (e_1 .. e_s)
        depends on the signs), as the training-row PCA in front of the full fit does; otherwise the folds
        see the input as it is. (Measured on UMIST, 5 trials: without this, CV picks 250-1000
        iterations, whose test MAE is 0.39-0.59 against 0.36 at 4000.)
        """
        from sklearn.model_selection import StratifiedKFold

        labels, counts = np.unique(y, return_counts=True)
        if counts.min() < self.cv:
            raise InputError(f"cmds_dml: cv={self.cv} folds need at least {self.cv} training items per "
                             f"label; label {labels[np.argmin(counts)]:g} has {counts.min()}")
        spans = np.linalg.matrix_rank(X - X.mean(axis=0)) == X.shape[1]
        folds = StratifiedKFold(self.cv, shuffle=True, random_state=self.random_state)
        err = np.zeros((self.cv, len(caps)))
        for fold, (tr, va) in enumerate(folds.split(X, y)):
            tick("cv fold", fold + 1, self.cv)
            Xtr, Xva = X[tr], X[va]
            if spans:
                mu = Xtr.mean(axis=0)
                _, sv, Vt = np.linalg.svd(Xtr - mu, full_matrices=False)
                B = Vt[sv > sv[0] * 1e-10].T
                B = B * np.sign(B[np.abs(B).argmax(axis=0), np.arange(B.shape[1])])  # largest loading > 0
                if B.shape[1] < self.s:
                    raise InputError(f"cmds_dml: a cross-validation fold's training rows span only "
                                     f"{B.shape[1]} dimensions, fewer than s={self.s}")
                Xtr, Xva = (Xtr - mu) @ B, (Xva - mu) @ B
            mean, *_, res = self._descend(Xtr, y[tr], caps[-1], checkpoints=caps)
            recorded = res.checkpoints
            for i, cap in enumerate(caps):
                L = recorded[cap][0]
                pred = knn_regress((Xtr - mean) @ L.T, y[tr], (Xva - mean) @ L.T, self.K)
                err[fold, i] = mae(y[va], pred)
        return err

    def _gamma(self, Xc: np.ndarray) -> float:
        if self.gamma != "auto":
            return float(self.gamma)
        G = Xc @ Xc.T if len(Xc) < Xc.shape[1] else Xc.T @ Xc  # same largest eigenvalue
        return 2.0 / max(float(np.linalg.eigvalsh(G)[-1]), 1e-300)

    def transform(self, X):
        """The embedding ``L (x - mean)`` of each row, shape (n, s)."""
        check_is_fitted(self, "L_")
        return (checked_input(self, X, "transform") - self.mean_) @ self.L_.T

"""Primal RankSVM with squared hinge loss solved by truncated Newton + conjugate gradient.

Objective (Prosser et al. 2010, eq. 4; Chapelle & Keerthi 2010)::

    f(w) = 1/2 ||w||^2 + C * sum_s max(0, 1 - w^T (x+_s - x-_s))^2

where ``x+_s = |x_i - x_p|`` and ``x-_s = |x_i - x_n|`` for triple s. Writing ``a_s = x-_s - x+_s``
and ``z_s = w^T a_s``, each loss term is ``max(0, 1 + z_s)^2``.

The solver only needs three products with the (n_triples, d) matrix A of the ``a_s`` rows, given
by an *oracle*: ``z(v) = A v``, ``rmat(t) = A^T t`` and the fused ``hvp(v, act) = (A^T diag(act)
A v, A v)``. :class:`StreamOracle` computes them by streaming difference vectors from a
:class:`~rankbench.rankers._pairs.PairSet` (one pass each); :class:`DenseOracle` uses the
materialised A (the paper's memory behaviour).
"""

from __future__ import annotations

import numpy as np

from ._pairs import PairSet


class DenseOracle:
    """Products with an explicit (n_triples, d) matrix A."""

    def __init__(self, A: np.ndarray):
        self.A = A
        self.d = A.shape[1]
        self.n_passes = 0
        self._a1 = None

    def z(self, v):
        self.n_passes += 1
        return self.A @ v.astype(self.A.dtype)

    def rmat(self, t):
        self.n_passes += 1
        return (t.astype(self.A.dtype) @ self.A).astype(np.float64)

    def hvp(self, v, act):
        self.n_passes += 2
        zv = (self.A @ v.astype(self.A.dtype)).astype(np.float64)
        return ((act * zv).astype(self.A.dtype) @ self.A).astype(np.float64), zv


class StreamOracle:
    """Products with A computed on the fly from a :class:`PairSet` (never stores A).

    Triples are stored on the grid: the row side as a (n_rows, K, n_cols) array (query row r,
    positive slot k, negative column c) and the column side as (n_cols, K, n_rows); the flat
    order is row side then column side, each in C order of its mask (query, positive, negative:
    the order of :meth:`PairSet.materialize`).
    """

    def __init__(self, pairs: PairSet):
        self.P = pairs
        self.d = pairs.d
        self.n_passes = 0
        self._a1 = None
        rs, cs = pairs.row_side, pairs.col_side
        self.mask_r = None if rs is None else rs.valid[:, :, None] & rs.neg[:, None, :]
        self.mask_c = None if cs is None else cs.valid[:, :, None] & cs.neg[:, None, :]
        self.n_r = 0 if rs is None else int(self.mask_r.sum())

    # --- helpers on the grid
    def _posvals(self, v):
        """Scores of the positive pairs for v, padded with a trailing 0 for slot -1."""
        return np.append(self.P.Dpos @ v.astype(self.P.X.dtype), 0.0)

    def _flat(self, V, pv):
        """Per-triple values V_neg - V_pos from grid scores V (n_rows, n_cols)."""
        out = []
        if self.mask_r is not None:
            Pr = pv[self.P.row_side.pos_id]
            out.append((V[:, None, :] - Pr[:, :, None])[self.mask_r])
        if self.mask_c is not None:
            Pc = pv[self.P.col_side.pos_id]
            out.append((V.T[:, None, :] - Pc[:, :, None])[self.mask_c])
        return np.concatenate(out)

    def _grids(self, t):
        """Flat triple weights -> (row grid, column grid)."""
        Tr = Tc = None
        if self.mask_r is not None:
            Tr = np.zeros(self.mask_r.shape)
            Tr[self.mask_r] = t[:self.n_r]
        if self.mask_c is not None:
            Tc = np.zeros(self.mask_c.shape)
            Tc[self.mask_c] = t[self.n_r:]
        return Tr, Tc

    def _finish(self, acc, pacc_r, pacc_c):
        """acc + sum over positive pairs of their (negative) coefficient times |x_i - x_p|."""
        n = len(self.P.Dpos) + 1
        pa = np.zeros(n)
        for side, pacc in ((self.P.row_side, pacc_r), (self.P.col_side, pacc_c)):
            if pacc is not None:  # slot -1 (padding) lands in the extra last entry
                pa += np.bincount(side.pos_id.ravel() % n, weights=pacc.ravel(), minlength=n)
        return acc + pa[:-1].astype(self.P.X.dtype) @ self.P.Dpos

    # --- oracle API
    def z(self, v):
        self.n_passes += 1
        S, _ = self.P.stream(V=np.asarray(v)[:, None])
        return self._flat(S[..., 0], self._posvals(v))

    def rmat(self, t):
        self.n_passes += 1
        Tr, Tc = self._grids(t)
        G = np.zeros(self.P.shape)
        pr = pc = None
        if Tr is not None:
            G += Tr.sum(1)
            pr = -Tr.sum(2)
        if Tc is not None:
            G += Tc.sum(1).T
            pc = -Tc.sum(2)
        _, acc = self.P.stream(coef=lambda sl, Sb: G[sl])
        return self._finish(acc, pr, pc)

    def hvp(self, v, act):
        """(A^T diag(act) A v, A v) in one pass: the block's scores give its coefficients."""
        self.n_passes += 1
        Ar, Ac = self._grids(act)
        pv = self._posvals(v)
        rs, cs = self.P.row_side, self.P.col_side
        Pc = None if cs is None else pv[cs.pos_id]

        def coef(sl, Sb):  # pure function of the block: safe to run in threads
            Vb = Sb[..., 0]
            G = np.zeros(Vb.shape)
            if Ar is not None:
                G += (Ar[sl] * (Vb[:, None, :] - pv[rs.pos_id[sl]][:, :, None])).sum(1)
            if Ac is not None:
                G += (Ac[:, :, sl] * (Vb.T[:, None, :] - Pc[:, :, None])).sum(1).T
            return G

        S, acc = self.P.stream(V=np.asarray(v)[:, None], coef=coef)
        V = S[..., 0]
        # the positive pairs' coefficients need whole rows / columns: take them from the grid
        pr = pc = None
        if Ar is not None:
            pr = -(Ar * (V[:, None, :] - pv[rs.pos_id][:, :, None])).sum(2)
        if Ac is not None:
            pc = -(Ac * (V.T[:, None, :] - Pc[:, :, None])).sum(2)
        return self._finish(acc, pr, pc), self._flat(V, pv)


def solve(oracle, C: float, w0=None, z0=None, max_newton: int = 20, max_cg: int = 30,
          tol: float = 1e-3) -> tuple[np.ndarray, np.ndarray, dict]:
    """Minimise eq. 4 by truncated Newton (CG inner solves, exact line search).

    Parameters
    ----------
    oracle : DenseOracle or StreamOracle
    C : the loss weight of eq. 4.
    w0, z0 : warm start (``z0 = A w0``, computed when missing).
    max_newton, max_cg : iteration caps (the *truncated* Newton: CG stops early).
    tol : stop when ||grad|| <= tol * ||grad at w = 0||.

    Returns
    -------
    w, z (= A w), info dict (iterations, passes, objective)
    """
    from ._pairs import single_blas_thread

    with single_blas_thread():
        return _solve(oracle, C, w0, z0, max_newton, max_cg, tol)


def _solve(oracle, C, w0, z0, max_newton, max_cg, tol):
    d = oracle.d
    w = np.zeros(d) if w0 is None else np.asarray(w0, dtype=float).copy()
    if z0 is not None:
        z = np.asarray(z0, dtype=float).copy()
    elif w0 is None or not np.any(w):
        z = None
    else:
        z = np.asarray(oracle.z(w), dtype=float)
    g_ref = None
    info = {"newton": 0, "cg": 0}
    for _ in range(max_newton):
        if z is None:  # w = 0: every margin is 1, no pass needed for z
            z = np.zeros(_n_triples(oracle))
        L = np.maximum(1.0 + z, 0.0)
        g = w + 2 * C * oracle.rmat(L)
        gn = np.linalg.norm(g)
        if g_ref is None:
            g_ref = 2 * C * _a1_norm(oracle, z, g if not w.any() else None, C)
        if gn <= tol * g_ref:
            break
        act = (L > 0).astype(float)
        # CG on (I + 2C A_act^T A_act) s = -g; forcing term eta shrinks as the gradient does
        eta = min(0.5, np.sqrt(gn / g_ref))
        s = np.zeros(d)
        zs = np.zeros_like(z)
        r = -g
        p = r.copy()
        rr = r @ r
        for _ in range(max_cg):
            hp, zp = oracle.hvp(p, act)
            Hp = p + 2 * C * hp
            alpha = rr / (p @ Hp)
            s += alpha * p
            zs += alpha * zp
            r -= alpha * Hp
            rr_new = r @ r
            info["cg"] += 1
            if np.sqrt(rr_new) <= eta * gn:
                break
            p = r + (rr_new / rr) * p
            rr = rr_new
        t = _line_search(w, s, z, zs, C)
        w += t * s
        z += t * zs
        info["newton"] += 1
    L = np.maximum(1.0 + z, 0.0)
    info["objective"] = float(0.5 * w @ w + C * L @ L)
    info["passes"] = oracle.n_passes
    return w, z, info


def _a1_norm(oracle, z, g0, C) -> float:
    """||A^T 1||, the gradient scale at w = 0 (cached on the oracle; free on a cold start)."""
    if getattr(oracle, "_a1", None) is None:
        oracle._a1 = (np.linalg.norm(g0) / (2 * C) if g0 is not None
                      else np.linalg.norm(oracle.rmat(np.ones_like(z))))
        oracle._a1 = max(oracle._a1, 1e-300)
    return oracle._a1


def _n_triples(oracle) -> int:
    if isinstance(oracle, DenseOracle):
        return oracle.A.shape[0]
    return int(sum(m.sum() for m in (oracle.mask_r, oracle.mask_c) if m is not None))


def _line_search(w, s, z, zs, C, iters: int = 20) -> float:
    """Minimiser of the convex piecewise-quadratic f(w + t s) by 1-D Newton steps (exact once
    the active set stops changing, usually in a few steps)."""
    ws, ss = w @ s, s @ s
    keep = (zs != 0)          # triples the direction does not move add a constant
    z, zs = z[keep], zs[keep]
    t = 1.0
    prev = None
    for _ in range(iters):
        a = z + t * zs > -1.0
        if prev is not None and np.array_equal(a, prev):
            break             # same active set: the last step was exact
        m = 1.0 + z[a] + t * zs[a]
        d1 = ws + t * ss + 2 * C * (m @ zs[a])
        d2 = ss + 2 * C * (zs[a] @ zs[a])
        t -= d1 / d2
        prev = a
    return t

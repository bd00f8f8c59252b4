"""Oracles of the ranking-SVM primal: products with the loss matrix M without forming it.

Every oracle gives ``d`` (weights), ``n_rows`` (loss terms), ``z(v) = M v``, ``rmat(t) = M^T t`` and
``hvp(v, act) = (M^T diag(act) M v, M v)``; :class:`PairMatrixOracle` also gives the small explicit
``gram(act) = M^T diag(act) M``, which lets the solver take exact Newton steps.

* :class:`TripleStreamOracle`: PRSVM's triples (query, true match, wrong match) over absolute
  differences, streamed from a :class:`~rankbench.rankers._pair_grid.PairGrid` (Prosser et al.
  eq. 5's matrix is never stored);
* :class:`DenseOracle`: an explicit matrix (``materialize: true``, the paper's memory behaviour);
* :class:`PairMatrixOracle`: ordered / similar item pairs through the sparse pair matrix A (Sharaf
  et al. eq. 6): ``M = -A X``, so only n- and p-vectors are formed, never the p x d differences;
* :func:`kernel_factor`: a kernel matrix as features (``K = Phi Phi^T``), so kernel RankSVM is
  the same primal over ``Phi`` (Chapelle 2007, Sec. 3).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._pair_grid import PairGrid


class DenseOracle:
    """Products with an explicit (n_rows, d) matrix A (the paper's memory behaviour)."""

    def __init__(self, A: np.ndarray):
        self.A = A
        self.d = A.shape[1]
        self.n_rows = A.shape[0]
        self.n_passes = 0

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


class TripleStreamOracle:
    """Products with the triples' A computed on the fly from a :class:`PairGrid` (never stores A).

    Row s of A is ``|x_i - x_n| - |x_i - x_p|`` for triple s (query i, positive p, negative n).

    Triples are stored on the grid: the row side as a (n_rows, K, n_cols) array (query row r,
    positive slot k, negative column c) and the column side as (n_cols, K, n_rows); the flat
    order is row side then column side, each in C order of its mask (query, positive, negative:
    the order of :meth:`PairGrid.materialize`).
    """

    def __init__(self, pairs: PairGrid):
        self.P = pairs
        self.d = pairs.d
        self.n_passes = 0
        rs, cs = pairs.row_side, pairs.col_side
        self.mask_r = None if rs is None else rs.valid[:, :, None] & rs.neg[:, None, :]
        self.mask_c = None if cs is None else cs.valid[:, :, None] & cs.neg[:, None, :]
        self.n_r = 0 if rs is None else int(self.mask_r.sum())
        self.n_rows = self.n_r + (0 if cs is None else int(self.mask_c.sum()))

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


class PairMatrixOracle:
    """``M = -A X`` for the sparse pair matrix A (row k: +1 at the stronger item, -1 at the weaker;
    eq. 6 of Sharaf et al.) and item features X (n, d): z = -(margins)."""

    def __init__(self, A: sp.spmatrix, X: np.ndarray):
        self.A = sp.csr_matrix(A)
        self.AT = self.A.T.tocsr()
        self.X = np.asarray(X, dtype=float)
        self.d = self.X.shape[1]
        self.n_rows = self.A.shape[0]
        self.n_passes = 0
        # ((i, j), (a_i, a_j)) of every row when each has exactly two entries (columns and values)
        self._pairs = None
        if self.n_rows and np.all(np.diff(self.A.indptr) == 2):
            cols = self.A.indices.reshape(-1, 2).astype(np.int64)
            vals = self.A.data.reshape(-1, 2)
            self._pairs = ((cols[:, 0], cols[:, 1]), (vals[:, 0], vals[:, 1]))

    def z(self, v):
        self.n_passes += 1
        return -(self.A @ (self.X @ v))

    def rmat(self, t):
        self.n_passes += 1
        return -(self.X.T @ (self.AT @ t))

    def hvp(self, v, act):
        self.n_passes += 1
        mv = self.A @ (self.X @ v)
        return self.X.T @ (self.AT @ (act * mv)), -mv

    def gram(self, act):
        """X^T (A^T diag(act) A) X: the n x n matrix L = A^T diag(act) A, then one d x d dense product.

        When every row of A has two entries (a pair: e_i - e_j, as :func:`pair_matrix` builds it),
        L is accumulated directly, act_k a_i a_j at (i, j) for each row k, by one ``np.bincount``
        (about 3x faster than the sparse product on 20,000 PubFig pairs); otherwise by the sparse
        product. The entries of L are the same sums either way (a pair's act is 0 or 1 for ordered
        pairs and the products a_i a_j are +-1).
        """
        n = self.A.shape[1]
        if self._pairs is None:
            L = (self.AT @ sp.diags(act) @ self.A).toarray()
        else:
            (i, j), (a, b) = self._pairs
            idx = np.concatenate([i * n + i, j * n + j, i * n + j, j * n + i])
            off = act * a * b
            val = np.concatenate([act * a * a, act * b * b, off, off])
            L = np.bincount(idx, weights=val, minlength=n * n).reshape(n, n)
        return self.X.T @ (L @ self.X)


def pair_matrix(pairs: np.ndarray, sign: np.ndarray, n_items: int) -> sp.csr_matrix:
    """Sparse pair matrix A (eq. 6): row k = e_i - e_j, flipped where sign = -1."""
    p = len(pairs)
    o = np.where(sign < 0, -1.0, 1.0)
    rows = np.repeat(np.arange(p), 2)
    vals = np.column_stack([o, -o]).ravel()
    return sp.csr_matrix((vals, (rows, pairs.ravel())), shape=(p, n_items))


def kernel_factor(K: np.ndarray, rel: float = 1e-10) -> np.ndarray:
    """Phi (n, r) with ``Phi Phi^T = K`` over the eigenvalues above ``rel * max``."""
    lam, U = np.linalg.eigh((K + K.T) / 2)
    keep = lam > rel * max(lam.max(initial=0.0), 1e-300)
    return U[:, keep] * np.sqrt(lam[keep])

"""The grid of absolute-difference vectors |x_i - x_j| of a training set, streamed (Prosser et al. 2010, eq. 1).

The support-vector rankers of Prosser et al. score a pair by ``w^T |x_i - x_j|`` and learn from
triples (query i, true match p, wrong match n) with the constraint
``w^T (|x_i - x_p| - |x_i - x_n|) >= 1 - xi`` (eqs. 2-4). Materialising every difference vector
costs O(d * sum_i m+(x_i) m-(x_i)) memory (eq. 5): 2.2 GB in float32 at VIPeR p = 316. Instead,
:class:`PairGrid` keeps only index structure and streams row blocks of the (rows x cols) grid of
absolute differences, so that one *pass* computes ``|x_i - x_j| @ V`` for several weight vectors and
accumulates ``sum_ij G_ij |x_i - x_j|`` for a coefficient matrix ``G`` chosen from those scores.
Peak memory is O(block * n_cols * d).

Queries (see :func:`build_pair_grid`):

* with exactly two cameras, rows are the images of the first camera and columns those of the
  second; every row is a query over the columns and every column a query over the rows, so each
  difference vector is computed once per pass and serves both directions;
* otherwise (no cameras, or more than two) rows = columns = all images, and each row is a query
  whose candidates are the images of other cameras (or all other images when ``cams`` is None).

A query's positives are candidates of the same identity, its negatives candidates of any other
identity. Queries without a positive or a negative are dropped. With ``negatives_per_query=k``
each query keeps k of its negatives (all of them when it has fewer), drawn once, uniformly without
replacement, independently for every query on each side; every positive is kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..utils import jit
from ..utils.threads import blas_threads, in_threads

#: weight vectors up to which a pass runs the compiled loops (which cost about k times one vector's
#: pass) rather than numpy's blocks and one matrix product (measured: one vector 27 ms vs 208 ms on
#: VIPeR p = 316, the matrix product's share small up to a few vectors)
_COMPILED_MAX_K = 2


@dataclass
class Side:
    """The queries on one side of the grid (rows, or columns)."""

    neg: np.ndarray     # (n_side, n_other) bool: candidate is a negative of this query
    pos: np.ndarray     # (n_side, K) int: positions of positives on the other side, -1 = padding
    pos_id: np.ndarray  # (n_side, K) int: row of the positive pair in PairGrid.pos_pairs, -1 = padding

    @property
    def valid(self) -> np.ndarray:
        return self.pos_id >= 0


class PairGrid:
    """Index structure of all (query, positive, negative) triples of a training set.

    Parameters
    ----------
    X : (m, d) array, training features.
    rows, cols : int arrays, indices of X forming the grid of difference vectors.
    row_side, col_side : :class:`Side` or None, the queries of each side.
    block : rows of the grid per streamed block (1-2 keeps a block in cache: fastest).
    n_jobs : threads sharing the blocks of a pass.
    """

    def __init__(self, X, rows, cols, row_side, col_side, block=2, dtype=np.float32, n_jobs=1):
        self.X = np.ascontiguousarray(X, dtype=dtype)
        self.rows, self.cols = np.asarray(rows), np.asarray(cols)
        self.row_side, self.col_side = row_side, col_side
        self.block = int(block)
        self.n_jobs = n_jobs
        # the explicit positive pairs are few (O(m)); keep their difference vectors
        pairs, n = [], 0
        for side, is_row in ((row_side, True), (col_side, False)):
            if side is None:
                continue
            q, k = np.nonzero(side.pos >= 0)
            other = side.pos[q, k]
            r, c = (q, other) if is_row else (other, q)
            side.pos_id[q, k] = n + np.arange(len(q))
            n += len(q)
            pairs.append(np.stack([self.rows[r], self.cols[c]], axis=1))
        self.pos_pairs = np.concatenate(pairs) if pairs else np.zeros((0, 2), int)
        self.Dpos = np.abs(self.X[self.pos_pairs[:, 0]] - self.X[self.pos_pairs[:, 1]])

    @property
    def d(self) -> int:
        return self.X.shape[1]

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.rows), len(self.cols)

    def n_triples(self) -> int:
        n = 0
        for side, _ in self.sides():
            n += int((side.valid.sum(1) * side.neg.sum(1)).sum())
        return n

    def sides(self):
        """(side, is_row) for the sides that have queries."""
        return [(s, r) for s, r in ((self.row_side, True), (self.col_side, False)) if s is not None]

    # ------------------------------------------------------------------ streaming passes
    def blocks(self):
        for s in range(0, len(self.rows), self.block):
            yield slice(s, min(s + self.block, len(self.rows)))

    def stream(self, V=None, coef=None):
        """One pass over the grid.

        Parameters
        ----------
        V : (d, k) array or None
            Weight vectors; the pass returns ``S = |x_r - x_c| @ V`` as (n_rows, n_cols, k).
        coef : callable ``coef(sl, S_blk) -> (b, n_cols) array`` or None
            Coefficients of the block's difference vectors; the pass returns
            ``sum_{r,c} G_rc |x_r - x_c|`` (a d-vector).

        Returns
        -------
        S or None, acc or None
        """
        if jit.enabled() and (V is None or V.shape[1] <= _COMPILED_MAX_K):
            return self._stream_compiled(V, coef)
        nr, nc = self.shape
        Xc = self.X[self.cols]
        S = None if V is None else np.empty((nr, nc, V.shape[1]), dtype=np.float64)
        Vf = None if V is None else np.asarray(V, dtype=self.X.dtype)
        blocks = list(self.blocks())

        def work(part):
            acc = None if coef is None else np.zeros(self.d, dtype=np.float64)
            buf = np.empty((self.block, nc, self.d), dtype=self.X.dtype)
            for sl in part:
                b = sl.stop - sl.start
                D = buf[:b]
                np.subtract(self.X[self.rows[sl]][:, None, :], Xc[None, :, :], out=D)
                np.abs(D, out=D)
                D2 = D.reshape(b * nc, self.d)
                Sb = None
                if V is not None:
                    Sb = (D2 @ Vf).reshape(b, nc, -1)
                    S[sl] = Sb
                if coef is not None:
                    G = np.asarray(coef(sl, Sb), dtype=self.X.dtype).reshape(-1)
                    acc += G @ D2
            return acc

        # many small matrix products: BLAS threading only adds overhead; numpy's elementwise
        # work releases the GIL, so n_jobs threads share the blocks instead
        with blas_threads(1):
            accs = in_threads(lambda a, b: work(blocks[a:b]), len(blocks), self.n_jobs, grain=1)
        acc = None if coef is None else np.sum(accs, axis=0)
        return S, acc

    def _stream_compiled(self, V, coef):
        """:meth:`stream` by compiled loops that never store a difference vector: the scores of
        every grid entry first (each a dot product computed where its difference is), then the
        coefficients of the whole grid, then their weighted sum of differences (again computed
        on the fly). ``n_jobs`` threads share the rows. The same numbers as the numpy blocks up to
        float32 rounding (both sum in float32, in another order)."""
        R, Cm = self.X[self.rows], self.X[self.cols]
        S = None
        if V is not None:
            WT = np.ascontiguousarray(np.asarray(V, dtype=self.X.dtype).T)
            S = np.concatenate(in_threads(lambda a, b: _weighted_l1_compiled(R[a:b], Cm, WT), len(R), self.n_jobs, 1))
        if coef is None:
            return S, None
        G = np.ascontiguousarray(coef(slice(0, len(R)), S), dtype=self.X.dtype)
        parts = in_threads(lambda a, b: _weighted_sum_compiled(R[a:b], Cm, G[a:b]), len(R), self.n_jobs, 1)
        return S, np.sum(parts, axis=0)

    def materialize(self, dtype=np.float32) -> np.ndarray:
        """The explicit (n_triples, d) matrix of ``|x_i - x_n| - |x_i - x_p|`` (eq. 5's memory)."""
        out = np.empty((self.n_triples(), self.d), dtype=dtype)
        Xc = self.X[self.cols]
        t = 0
        for side, is_row in self.sides():
            for q in range(side.neg.shape[0]):
                negs = np.nonzero(side.neg[q])[0]
                if is_row:
                    Dn = np.abs(self.X[self.rows[q]] - Xc[negs])
                else:
                    Dn = np.abs(self.X[self.cols[q]] - self.X[self.rows[negs]])
                for pid in side.pos_id[q][side.pos_id[q] >= 0]:
                    out[t:t + len(negs)] = Dn - self.Dpos[pid]
                    t += len(negs)
        return out


def build_pair_grid(X, y, cams=None, block=2, dtype=np.float32, n_jobs=1, negatives_per_query=None,
                    random_state=None) -> PairGrid:
    """The :class:`PairGrid` of a training set (queries and sampled negatives as described in the
    module docstring; ``random_state`` (scikit-learn's: None, a seed or a RandomState) draws the
    sample)."""
    X = np.asarray(X)
    y = np.asarray(y)
    m = len(y)
    ucams = None if cams is None else np.unique(np.asarray(cams))
    if ucams is not None and len(ucams) == 2:
        cams = np.asarray(cams)
        rows = np.nonzero(cams == ucams[0])[0]
        cols = np.nonzero(cams == ucams[1])[0]
        same = y[rows][:, None] == y[cols][None, :]
        row_side = _side(same, ~same)
        col_side = _side(same.T, ~same.T)
    else:
        rows = cols = np.arange(m)
        same = y[:, None] == y[None, :]
        other = ~np.eye(m, dtype=bool)
        if cams is not None:
            c = np.asarray(cams)
            other &= c[:, None] != c[None, :]
        row_side = _side(same & other, ~same & other)
        col_side = None
    if row_side is None and col_side is None:
        raise InputError("no query has both a true match and a wrong match in the training data (each identity "
                         "needs two images, in two cameras when cameras are given, and one class is not enough)")
    from sklearn.utils import check_random_state

    rng = check_random_state(random_state) if negatives_per_query is not None else None
    for side in (row_side, col_side) if negatives_per_query is not None else ():
        if side is not None:  # the first k of the query's negatives in a random order
            keys = np.where(side.neg, rng.random_sample(side.neg.shape), 2.0)
            first = np.argsort(keys, axis=1, kind="stable")[:, :negatives_per_query]
            kept = np.zeros_like(side.neg)
            np.put_along_axis(kept, first, True, axis=1)
            side.neg &= kept
    return PairGrid(X, rows, cols, row_side, col_side, block=block, dtype=dtype, n_jobs=n_jobs)


def _side(pos_mask: np.ndarray, neg_mask: np.ndarray) -> Side | None:
    """Padded positive lists; queries lacking positives or negatives get no positives (dropped)."""
    keep = pos_mask.any(1) & neg_mask.any(1)
    pos_mask = pos_mask & keep[:, None]
    K = max(int(pos_mask.sum(1).max(initial=0)), 1)
    pos = np.full((len(pos_mask), K), -1, dtype=np.int64)
    for q in np.nonzero(keep)[0]:
        p = np.nonzero(pos_mask[q])[0]
        pos[q, :len(p)] = p
    if not keep.any():
        return None
    return Side(neg=neg_mask & keep[:, None], pos=pos, pos_id=np.full_like(pos, -1))


def weighted_l1(Q, G, w, block=64) -> np.ndarray:
    """``S[a, b] = sum_k w_k |Q[a, k] - G[b, k]|`` (eq. 1's score) without an (nq, ng, d) array.

    ``w`` may be (d,) or (d, k); the result is (nq, ng) or (nq, ng, k).
    """
    Q = np.asarray(Q, dtype=np.float32)
    G = np.asarray(G, dtype=np.float32)
    W = np.asarray(w, dtype=np.float32)
    vec = W.ndim == 1
    W = W[:, None] if vec else W
    if jit.enabled() and W.shape[1] <= _COMPILED_MAX_K:
        out = _weighted_l1_compiled(np.ascontiguousarray(Q), np.ascontiguousarray(G), np.ascontiguousarray(W.T))
        return out[..., 0] if vec else out
    out = np.empty((len(Q), len(G), W.shape[1]))
    # about 16 MB of float32 differences per block: fast and small next to the features
    block = max(1, min(block, int(4e6 // max(1, len(G) * Q.shape[1]))))
    with blas_threads(1):
        for s in range(0, len(Q), block):
            D = np.abs(Q[s:s + block, None, :] - G[None, :, :])
            out[s:s + block] = (D.reshape(-1, Q.shape[1]) @ W).reshape(D.shape[0], len(G), -1)
    return out[..., 0] if vec else out


#: columns per tile of the compiled loops: 64 feature rows (0.7 MB at d = 2784) stay in L2 while every
#: row of the grid passes over them (measured on VIPeR p = 316: 27 ms per pass against 38 ms untiled)
_TILE = 64


@jit.njit(fastmath=True)
def _weighted_l1_compiled(R, C, WT):
    """(len(R), len(C), k): ``sum_u WT[j, u] |R[r, u] - C[c, u]|``, summed in the features' dtype
    (float32: relative error about 3e-7 on VIPeR, BLAS's sums in the numpy blocks 7e-7)."""
    k, d = WT.shape
    nc = C.shape[0]
    zero = np.zeros(1, R.dtype)[0]
    out = np.empty((R.shape[0], nc, k))
    for c0 in range(0, nc, _TILE):
        for r in range(R.shape[0]):
            x = R[r]
            for c in range(c0, min(nc, c0 + _TILE)):
                y = C[c]
                for j in range(k):
                    w = WT[j]
                    s = zero
                    for u in range(d):
                        s += w[u] * abs(x[u] - y[u])
                    out[r, c, j] = s
    return out


@jit.njit
def _weighted_sum_compiled(R, C, G):
    """(d,): ``sum_{r, c} G[r, c] |R[r] - C[c]|``; each row's sum over a tile in the dtype of R, C
    and G (float32, as BLAS's in the numpy blocks), the rest in float64."""
    d = R.shape[1]
    nc = C.shape[0]
    acc = np.zeros(d)
    part = np.empty(d, R.dtype)
    for c0 in range(0, nc, _TILE):
        for r in range(R.shape[0]):
            x = R[r]
            part[:] = 0
            for c in range(c0, min(nc, c0 + _TILE)):
                g, y = G[r, c], C[c]
                for u in range(d):
                    part[u] += g * abs(x[u] - y[u])
            for u in range(d):
                acc[u] += part[u]
    return acc

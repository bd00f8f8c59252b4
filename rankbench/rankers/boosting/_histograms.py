"""Threshold codes and their weighted cumulative histograms: the per-round work of the threshold boosters.

RankBoost and ELF keep, for every unit (a dimension, or a histogram distance) and training
instance, a uint8 *code*: how many of the unit's ascending thresholds lie below the value, so
that "value <= threshold j" is "code <= j". Every boosting round then needs, per unit, the sum of
the instances' weights at or below each code: a weighted cumulative histogram over all
(units x instances) codes, about 3e8 of them per round on VIPeR p = 316.

The compiled loop visits the codes of eight units side by side: the eight histograms are separate
chains of additions (one histogram alone waits on its own last addition), and each weight is read
once for all eight. Each histogram still adds its instances in order, as ``np.bincount`` does, so
both versions give the same sums to the last bit, and so does any split of the units among
threads (``n_jobs``): a unit's histogram is the same whichever thread computes it.

:func:`reweighted_hist` updates the histograms after a round that multiplies each instance's weight
by one of two factors (AdaBoost's re-weighting, as ELF does) by reading only the smaller group of
instances (:func:`weighted_hist` over ``rows``): about a quarter of the pairs on average over ELF's
rounds on VIPeR, 78 instead of 115-160 ms per round (reading the codes of the chosen rows is then
the cost, not the additions).

Measured on VIPeR p = 316's RankBoost codes (2784 units x 99,856 instances, 2-core Xeon): one
round 117 ms with four units side by side, 104 ms with eight, about 58 ms with eight on two
threads; the loop is bound by its scattered stores (one per code), not by reading the codes.
"""

from __future__ import annotations

import numpy as np

from ...utils import jit
from ...utils.threads import in_threads


def threshold_codes(D: np.ndarray, thr: np.ndarray) -> np.ndarray:
    """uint8 codes (n, U) of values ``D`` (n, U): how many of unit u's thresholds ``thr[u]`` (U, k)
    are below ``D[:, u]`` (k <= 255), i.e. the index of the first threshold >= the value (k if none).

    A sum of comparisons, in the dtype of ``D`` and ``thr`` as given (no shifted search that could round).
    """
    if jit.enabled():
        return _codes_compiled(np.ascontiguousarray(D), np.ascontiguousarray(thr.T))
    codes = np.zeros(D.shape, dtype=np.uint8)
    for j in range(thr.shape[1]):
        codes += D > thr[:, j]
    return codes


@jit.njit
def _codes_compiled(D, thr_t):
    """:func:`threshold_codes` without temporaries: each row's counts stay in cache."""
    n, U = D.shape
    codes = np.zeros((n, U), dtype=np.uint8)
    for i in range(n):
        row, out = D[i], codes[i]
        for j in range(thr_t.shape[0]):
            t = thr_t[j]
            for u in range(U):
                out[u] += row[u] > t[u]
    return codes


def grid_codes(R: np.ndarray, C: np.ndarray, thr: np.ndarray, n_jobs: int = 1, block: int = 4) -> np.ndarray:
    """uint8 codes (U, len(R) * len(C)) of every absolute difference ``|R[r] - C[c]|`` (row-major
    over (r, c)) against unit u's ascending thresholds ``thr[u]`` (U, k): :func:`threshold_codes`
    of the grid of difference vectors, transposed so that each unit's codes are contiguous.

    Compiled, the differences are never stored (each is compared where it is computed) and
    ``n_jobs`` threads share the rows; the numpy version goes through ``block`` rows at a time.
    The codes are the same either way (the same float arithmetic, in the dtype of R and C).
    """
    nr, nc, U = len(R), len(C), R.shape[1]
    codes = np.empty((U, nr * nc), dtype=np.uint8)
    if jit.enabled():
        CT, thr = np.ascontiguousarray(C.T), np.ascontiguousarray(thr)
        in_threads(lambda a, b: _grid_codes_compiled(R[a:b], CT, thr, codes, a), nr, n_jobs, grain=1)
        return codes
    for s in range(0, nr, block):
        D = np.abs(R[s:s + block][:, None, :] - C[None, :, :]).reshape(-1, U)
        codes[:, s * nc:(s + len(D) // nc) * nc] = threshold_codes(D, thr).T
    return codes


@jit.njit
def _grid_codes_compiled(R, CT, thr, out, first_row):
    """:func:`grid_codes` for rows ``R`` (the grid's rows first_row, ...), written into ``out``."""
    U, nc = CT.shape
    k = thr.shape[1]
    count = np.empty(nc, np.uint8)
    for r in range(R.shape[0]):
        base = (first_row + r) * nc
        for u in range(U):
            x, col = R[r, u], CT[u]
            count[:] = 0
            for j in range(k):
                t = thr[u, j]
                for c in range(nc):
                    count[c] += abs(x - col[c]) > t
            out[u, base:base + nc] = count


def weighted_cum_hist(codes: np.ndarray, weights: np.ndarray, n_bins: int, n_jobs: int = 1) -> np.ndarray:
    """(U, n_bins) array: the sum of ``weights`` over the instances whose code in unit u is <= j.

    ``codes`` is (U, n) uint8 (each unit's codes contiguous), ``weights`` (n,) float. ``n_jobs``
    threads share the units of the compiled loop (the numpy reference runs on one); the sums do
    not depend on it.
    """
    return np.cumsum(weighted_hist(codes, weights, n_bins, n_jobs), axis=1)


def weighted_hist(codes: np.ndarray, weights: np.ndarray, n_bins: int, n_jobs: int = 1,
                  rows: np.ndarray | None = None) -> np.ndarray:
    """(U, n_bins) array: the sum of ``weights`` over the instances whose code in unit u is j,
    over every instance or only the instances ``rows`` (ascending indices). Each histogram adds
    its instances in order, so the sums are the same, to the last bit, compiled or not and for
    any ``n_jobs``."""
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    if rows is not None:
        rows = np.ascontiguousarray(rows, dtype=np.intp)
    if jit.enabled():
        codes = np.ascontiguousarray(codes)
        if rows is None:
            part = lambda a, b: _hist_compiled(codes[a:b], weights, int(n_bins))
        else:
            part = lambda a, b: _hist_rows_compiled(codes[a:b], weights, rows, int(n_bins))
        return np.concatenate(in_threads(part, codes.shape[0], n_jobs))
    return _hist_numpy(codes, weights, n_bins, rows)


def reweighted_hist(hist: np.ndarray, codes: np.ndarray, weights: np.ndarray, moved: np.ndarray,
                    kept_by: float, moved_by: float, n_jobs: int = 1) -> np.ndarray:
    """``weighted_hist(codes, w')`` for the weights ``w' = weights * kept_by`` but ``weights *
    moved_by`` on the instances ``moved`` (bool), from ``hist = weighted_hist(codes, weights)``:
    a boosting round's re-weighting, over the smaller of the two groups of instances only.

    The sums agree with a fresh histogram up to rounding (not to the bit): a booster that uses it
    re-checks any choice its rounding could decide against a fresh histogram.
    """
    n_moved = int(moved.sum())
    if 2 * n_moved <= moved.size:
        part = weighted_hist(codes, weights, hist.shape[1], n_jobs, rows=np.flatnonzero(moved))
        return kept_by * hist + (moved_by - kept_by) * part
    part = weighted_hist(codes, weights, hist.shape[1], n_jobs, rows=np.flatnonzero(~moved))
    return moved_by * hist + (kept_by - moved_by) * part


def quantiles(D: np.ndarray, levels: np.ndarray, axis: int = 1, n_jobs: int = 1) -> np.ndarray:
    """``np.quantile(D, levels, axis=axis)``, transposed: (units, levels), units along the other axis.

    The same values as ``np.quantile`` (linear interpolation between order statistics, which do not
    depend on how they are found), about four times faster on the boosters' samples (units x
    20,000): each unit's values are sorted first (numpy's vectorised sort beats one partition per
    level), ``n_jobs`` threads sharing the units. ``axis=1``: D's rows, sorted in place; ``axis=0``:
    D's columns, copied a few hundred at a time (D is left as it is).
    """
    if axis == 1:
        def rows(a, b):
            part = D[a:b]
            part.sort(axis=1)
            return np.quantile(part, levels, axis=1, overwrite_input=True).T
        return np.concatenate(in_threads(rows, D.shape[0], n_jobs))

    def columns(a, b):
        out = []
        for s in range(a, b, 256):
            part = np.ascontiguousarray(D[:, s:min(b, s + 256)].T)
            part.sort(axis=1)
            out.append(np.quantile(part, levels, axis=1, overwrite_input=True).T)
        return np.concatenate(out)
    return np.concatenate(in_threads(columns, D.shape[1], n_jobs))


def _hist_numpy(codes, weights, n_bins, rows=None):
    """The reference: one bincount per unit (its uint8 -> intp copy stays in cache, about 5x faster
    than one bincount over a large chunk of units), over the instances ``rows`` when given (each
    unit's gathered in turn: no copy of every unit's codes at once)."""
    if rows is not None:
        weights = weights[rows]
    out = np.empty((codes.shape[0], n_bins))
    for u in range(codes.shape[0]):
        out[u] = np.bincount(codes[u] if rows is None else codes[u, rows], weights=weights, minlength=n_bins)
    return out


@jit.njit
def _hist_compiled(codes, weights, n_bins):
    U, n = codes.shape
    out = np.zeros((U, n_bins))
    u = 0
    while u + 8 <= U:
        c0, c1, c2, c3 = codes[u], codes[u + 1], codes[u + 2], codes[u + 3]
        c4, c5, c6, c7 = codes[u + 4], codes[u + 5], codes[u + 6], codes[u + 7]
        h0, h1, h2, h3 = out[u], out[u + 1], out[u + 2], out[u + 3]
        h4, h5, h6, h7 = out[u + 4], out[u + 5], out[u + 6], out[u + 7]
        for i in range(n):
            w = weights[i]
            h0[c0[i]] += w
            h1[c1[i]] += w
            h2[c2[i]] += w
            h3[c3[i]] += w
            h4[c4[i]] += w
            h5[c5[i]] += w
            h6[c6[i]] += w
            h7[c7[i]] += w
        u += 8
    for v in range(u, U):
        h, c = out[v], codes[v]
        for i in range(n):
            h[c[i]] += weights[i]
    return out


@jit.njit
def _hist_rows_compiled(codes, weights, rows, n_bins):
    """:func:`_hist_compiled` over the instances ``rows`` only (eight units side by side). Kept
    apart from it: given every row, this loop's indirection made a whole histogram 1.5-1.8x slower
    on VIPeR's ELF codes."""
    U = codes.shape[0]
    m = rows.shape[0]
    out = np.zeros((U, n_bins))
    w_rows = np.empty(m)
    for t in range(m):
        w_rows[t] = weights[rows[t]]
    u = 0
    while u + 8 <= U:
        c0, c1, c2, c3 = codes[u], codes[u + 1], codes[u + 2], codes[u + 3]
        c4, c5, c6, c7 = codes[u + 4], codes[u + 5], codes[u + 6], codes[u + 7]
        h0, h1, h2, h3 = out[u], out[u + 1], out[u + 2], out[u + 3]
        h4, h5, h6, h7 = out[u + 4], out[u + 5], out[u + 6], out[u + 7]
        for t in range(m):
            i = rows[t]
            w = w_rows[t]
            h0[c0[i]] += w
            h1[c1[i]] += w
            h2[c2[i]] += w
            h3[c3[i]] += w
            h4[c4[i]] += w
            h5[c5[i]] += w
            h6[c6[i]] += w
            h7[c7[i]] += w
        u += 8
    for v in range(u, U):
        h, c = out[v], codes[v]
        for t in range(m):
            h[c[rows[t]]] += w_rows[t]
    return out

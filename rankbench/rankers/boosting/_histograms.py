"""Threshold codes and their weighted cumulative histograms: the per-round work of the threshold boosters.

RankBoost and ELF keep, for every unit (a dimension, or a histogram distance) and training
instance, a uint8 *code*: how many of the unit's ascending thresholds lie below the value, so
that "value <= threshold j" is "code <= j". Every boosting round then needs, per unit, the sum of
the instances' weights at or below each code: a weighted cumulative histogram over all
(units x instances) codes, about 3e8 of them per round on VIPeR p = 316.

The compiled loop visits the codes of four units side by side: the four histograms are separate
chains of additions (one histogram alone waits on its own last addition), and each weight is read
once for all four. Each histogram still adds its instances in order, as ``np.bincount`` does, so
both versions give the same sums to the last bit.
"""

from __future__ import annotations

import numpy as np

from ...utils import jit


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


def weighted_cum_hist(codes: np.ndarray, weights: np.ndarray, n_bins: int) -> np.ndarray:
    """(U, n_bins) array: the sum of ``weights`` over the instances whose code in unit u is <= j.

    ``codes`` is (U, n) uint8 (each unit's codes contiguous), ``weights`` (n,) float.
    """
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    if jit.enabled():
        hist = _hist_compiled(np.ascontiguousarray(codes), weights, int(n_bins))
    else:
        hist = _hist_numpy(codes, weights, n_bins)
    return np.cumsum(hist, axis=1)


def _hist_numpy(codes, weights, n_bins):
    """The reference: one bincount per unit (its uint8 -> intp copy stays in cache, about 5x faster
    than one bincount over a large chunk of units)."""
    out = np.empty((codes.shape[0], n_bins))
    for u in range(codes.shape[0]):
        out[u] = np.bincount(codes[u], weights=weights, minlength=n_bins)
    return out


@jit.njit
def _hist_compiled(codes, weights, n_bins):
    U, n = codes.shape
    out = np.zeros((U, n_bins))
    u = 0
    while u + 4 <= U:
        c0, c1, c2, c3 = codes[u], codes[u + 1], codes[u + 2], codes[u + 3]
        h0, h1, h2, h3 = out[u], out[u + 1], out[u + 2], out[u + 3]
        for i in range(n):
            w = weights[i]
            h0[c0[i]] += w
            h1[c1[i]] += w
            h2[c2[i]] += w
            h3[c3[i]] += w
        u += 4
    for v in range(u, U):
        h, c = out[v], codes[v]
        for i in range(n):
            h[c[i]] += weights[i]
    return out

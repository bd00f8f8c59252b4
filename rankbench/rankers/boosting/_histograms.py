"""Threshold codes and their weighted cumulative histograms: the per-round work of the threshold boosters.

RankBoost and ELF keep, for every unit (a dimension, or a histogram distance) and training
instance, a *code*: how many of the unit's ascending thresholds lie below the value, so that
"value <= threshold j" is "code <= j". Every boosting round then needs, per unit, the sum of the
instances' weights at or below each code: a weighted cumulative histogram over all (units x
instances) codes, about 3e8 of them per round on VIPeR p = 316.

That loop is bound by its scattered additions, one per code. So the codes are kept two units to
an element (:class:`PairedCodes`): one addition per instance goes to the pair's joint histogram
(n_codes^2 bins), and each unit's histogram is that table's row or column sums. Half the
additions, and for RankBoost's 16 codes (one byte per pair) half the bytes read. The compiled loop
fills four pairs' tables side by side, so the four are separate chains of additions and each
weight is read once for them. Every bin adds its instances in order, as ``np.bincount`` does,
and the row and column sums are added in a fixed order (:func:`_marginals`). So the compiled and
numpy versions give the same sums to the last bit, and so does any split of the pairs among
threads (``n_jobs``).

A unit's sums now depend on the unit it is paired with, in the last bits. Two candidates that tie
in exact arithmetic can then differ by rounding, and the boosters choose the first of any
candidates within :data:`TIE` of the best (:func:`first_least`).

Beyond ``max_held_pairs`` no code is held per pair: the single-dimension units' histograms come
from each image's sorted order (:class:`SortedUnits`), ELF's histogram units' from their
distances recomputed every round (:class:`HistogramUnits`, :func:`grid_hist`, the same sums as the
held codes' to the last bit).

:func:`reweighted_hist` updates the histograms after a round that multiplies each instance's weight
by one of two factors (AdaBoost's re-weighting, as ELF does) by reading only the smaller group of
instances (:func:`weighted_hist` over ``rows``).

Measured on VIPeR p = 316 (2784 units x 99,856 instances, 2-core Xeon, one thread): RankBoost's
round 125 -> 68 ms with paired codes, and ELF's re-weighted round 66 -> 44 ms. The same rankers and
thresholds are chosen on three splits, with alphas equal to 1e-14.
"""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(frozen=True)
class PairedCodes:
    """The threshold codes of ``n_units`` units over n instances, two units to an element.

    ``data[p]`` holds ``code(2p) * n_codes + code(2p + 1)`` (uint8 when ``n_codes <= 16``, else
    uint16; an odd last unit is paired with code 0, whose histogram is never returned). Made by
    :meth:`of`; read by :func:`weighted_hist` and :meth:`unit`.
    """

    data: np.ndarray
    n_units: int
    n_codes: int

    @classmethod
    def of(cls, codes: np.ndarray, n_codes: int, n_jobs: int = 1) -> "PairedCodes":
        """Pair the units of ``codes`` (U, n) uint8, every code below ``n_codes`` (<= 256)."""
        U, n = codes.shape
        if not 1 <= n_codes <= 256:
            raise ValueError(f"n_codes must be in 1..256, got {n_codes}")
        if U and n and int(codes.max()) >= n_codes:
            raise ValueError(f"a code {int(codes.max())} is not below n_codes={n_codes}")
        dtype = np.uint8 if n_codes <= 16 else np.uint16
        data = np.empty(((U + 1) // 2, n), dtype=dtype)
        if jit.enabled():
            codes = np.ascontiguousarray(codes)
            in_threads(lambda a, b: _pair_compiled(codes, int(n_codes), data, a, b), len(data), n_jobs, grain=1)
        else:
            for p in range(len(data)):
                data[p] = codes[2 * p].astype(dtype) * dtype(n_codes)
                if 2 * p + 1 < U:
                    data[p] += codes[2 * p + 1]
        return cls(data, int(U), int(n_codes))

    def unit(self, u: int) -> np.ndarray:
        """The uint8 codes of unit ``u`` over every instance."""
        if not 0 <= u < self.n_units:
            raise IndexError(f"unit {u} of {self.n_units}")
        both = self.data[u // 2]
        return (both % self.n_codes if u % 2 else both // self.n_codes).astype(np.uint8)

    def around(self, u: int) -> "PairedCodes":
        """The codes of the pair that holds unit ``u`` (its units 2 (u // 2) and the next)."""
        p = u // 2
        return PairedCodes(self.data[p:p + 1], min(2, self.n_units - 2 * p), self.n_codes)


def weighted_cum_hist(codes: PairedCodes, weights: np.ndarray, n_jobs: int = 1) -> np.ndarray:
    """(U, n_codes) array: the sum of ``weights`` over the instances whose code in unit u is <= j.

    ``weights`` (n,) float. ``n_jobs`` threads share the pairs of units of the compiled loop (the
    numpy reference runs on one); the sums do not depend on it.
    """
    return np.cumsum(weighted_hist(codes, weights, n_jobs), axis=1)


def weighted_hist(codes: PairedCodes, weights: np.ndarray, n_jobs: int = 1,
                  rows: np.ndarray | None = None) -> np.ndarray:
    """(U, n_codes) array: the sum of ``weights`` over the instances whose code in unit u is j,
    over every instance or only the instances ``rows`` (ascending indices).

    Each pair of units has a joint histogram (n_codes^2 bins, each adding its instances in order,
    as ``np.bincount`` does); a unit's histogram is its row or column sums, added in a fixed order
    (:func:`_marginals`). The sums are the same, to the last bit, compiled or not and for any ``n_jobs``.
    """
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    data, nc = codes.data, codes.n_codes
    if rows is not None:
        rows = np.ascontiguousarray(rows, dtype=np.intp)
    if jit.enabled():
        if rows is None:
            part = lambda a, b: _pair_hist_compiled(data[a:b], weights, nc)
        else:
            part = lambda a, b: _pair_hist_rows_compiled(data[a:b], weights, rows, nc)
        hist = np.concatenate(in_threads(part, len(data), n_jobs, grain=4))
    else:
        hist = _marginals(_joint_numpy(data, weights, nc, rows), nc)
    return hist[:codes.n_units]


def reweighted_hist(hist: np.ndarray, codes: PairedCodes, weights: np.ndarray, moved: np.ndarray,
                    kept_by: float, moved_by: float, n_jobs: int = 1) -> np.ndarray:
    """``weighted_hist(codes, w')`` for the weights ``w' = weights * kept_by`` but ``weights *
    moved_by`` on the instances ``moved`` (bool), from ``hist = weighted_hist(codes, weights)``:
    a boosting round's re-weighting, over the smaller of the two groups of instances only.

    The sums agree with a fresh histogram up to rounding (not to the bit): a booster that uses it
    re-checks any choice its rounding could decide against a fresh histogram.
    """
    n_moved = int(moved.sum())
    if 2 * n_moved <= moved.size:
        part = weighted_hist(codes, weights, n_jobs, rows=np.flatnonzero(moved))
        return kept_by * hist + (moved_by - kept_by) * part
    part = weighted_hist(codes, weights, n_jobs, rows=np.flatnonzero(~moved))
    return moved_by * hist + (kept_by - moved_by) * part


@dataclass(frozen=True)
class SortedUnits:
    """The single-dimension units of the grid ``|R[r] - C[c]|`` against each unit's thresholds,
    held per image instead of per pair: memory O((rows + cols) x units x thresholds), not O(rows x
    cols x units), and O(distinct row values) where rows share values (quantised histograms:
    VIPeR's 632 images of a camera take 116 distinct values per dimension on average).

    For a row value x, the difference ``|x - C[c, u]|`` falls from the smallest column value up to
    x and rises after it (float subtraction rounds monotonically), so the columns within
    threshold j of x are an interval ``order[u, L:R]`` of the columns sorted by unit u's value:
    ``bounds[i, 2 j]`` = L, ``bounds[i, 2 j + 1]`` = R for unit u's ``v``-th distinct row value,
    ``i = start[u] + v``, found with the comparison the codes make (:func:`grid_codes`'s ``|x - c|
    > t`` in the features' float32); row r's value is unit u's ``value[r, u]``-th (equal values
    compare alike). A row's cumulative histogram of unit u is then a prefix sum of its weights in
    that order read at the bounds (:func:`sorted_cum_hist`). Made by :meth:`of`.
    """

    order: np.ndarray   # (U, nc) int32: the columns in ascending order of each unit's value
    value: np.ndarray   # (nr, U) uint16 (uint32 from 65,536 rows): each row's distinct value, per unit
    start: np.ndarray   # (U + 1,) intp: unit u's distinct values are bounds[start[u]:start[u + 1]]
    bounds: np.ndarray  # (distinct values, 2 (k - 1)) uint16 (uint32 from 65,536 columns): L_j, R_j
    R: np.ndarray       # (nr, U) the rows' values
    C: np.ndarray       # (nc, U) the columns' values
    thr: np.ndarray     # (U, k - 1) ascending finite thresholds; code k - 1: above them all

    @classmethod
    def of(cls, R: np.ndarray, C: np.ndarray, thr: np.ndarray, n_jobs: int = 1) -> "SortedUnits":
        """``R`` (nr, U) and ``C`` (nc, U) values, ``thr`` (U, k - 1) ascending thresholds (>= 0)."""
        R, C, thr = np.ascontiguousarray(R), np.ascontiguousarray(C), np.ascontiguousarray(thr, dtype=R.dtype)
        order = np.argsort(C, axis=0, kind="stable").T.astype(np.int32)        # (U, nc)
        S = np.ascontiguousarray(np.take_along_axis(C.T, order, axis=1))       # (U, nc) sorted values
        rows = np.argsort(R, axis=0, kind="stable")                            # the rows' distinct values
        Rs = np.take_along_axis(R, rows, axis=0)
        new = np.ones(R.shape, bool)
        new[1:] = Rs[1:] != Rs[:-1]
        rank = np.cumsum(new, axis=0) - 1
        value = np.empty(R.shape, dtype=np.uint16 if len(R) <= 2 ** 16 else np.uint32)
        np.put_along_axis(value, rows, rank, axis=0)
        start = np.concatenate([[0], np.cumsum(new.sum(0))])
        distinct = np.ascontiguousarray(Rs.T[new.T])                            # unit by unit, ascending
        del rows, Rs, new, rank
        bounds = np.empty((len(distinct), 2 * thr.shape[1]), dtype=np.uint16 if len(C) < 2 ** 16 else np.uint32)
        if jit.enabled():
            in_threads(lambda a, b: _bounds_compiled(distinct, start, S, thr, bounds, a, b), len(S), n_jobs, grain=1)
        else:
            for u in range(len(S)):
                bounds[start[u]:start[u + 1]] = _bounds_numpy(distinct[start[u]:start[u + 1]], C[:, u], thr[u])
        return cls(np.ascontiguousarray(order), value, start, bounds, R, C, thr)

    @property
    def n_codes(self) -> int:
        return self.thr.shape[1] + 1

    def within(self, u: int, j: int) -> np.ndarray:
        """(nr, nc) bool: ``|R[r, u] - C[c, u]| <= thr[u, j]`` (code <= j; every pair for the last code)."""
        if j >= self.thr.shape[1]:
            return np.ones((len(self.R), len(self.C)), bool)
        return np.abs(self.R[:, u, None] - self.C[None, :, u]) <= self.thr[u, j]


def sorted_cum_hist(units: SortedUnits, W: np.ndarray, n_jobs: int = 1) -> np.ndarray:
    """(U, k) array: the sum of the grid's weights ``W`` (nr, nc) over the pairs whose code in
    unit u is <= j (:func:`weighted_cum_hist` of :class:`SortedUnits`).

    Each row's weights are summed in unit u's column order (a running sum, 0 first), the sum at R
    less the sum at L gives bin j, and the rows add into each bin in row order. Compiled,
    :data:`LANES` rows share each step of the running sums (vector additions) and ``n_jobs`` threads
    share the units; the numpy reference makes the same additions in the same order, so the two
    agree to the last bit, for any ``n_jobs``. (The order differs from :func:`weighted_hist`'s, so
    the sums agree with it to rounding, not to the bit.)
    """
    W = np.ascontiguousarray(W, dtype=np.float64)
    U, k = units.order.shape[0], units.n_codes
    if jit.enabled():
        parts = in_threads(lambda a, b: _sorted_cum_compiled(W, units.order[a:b], units.value[:, a:b],
                                                              units.start[a:b], units.bounds, LANES), U, n_jobs, grain=1)
        return np.concatenate(parts)
    out = np.zeros((U, k))
    cols = np.arange(U)[:, None]
    for r in range(len(W)):
        run = np.zeros((U, W.shape[1] + 1))
        np.cumsum(W[r][units.order], axis=1, out=run[:, 1:])
        b = units.bounds[units.start[:-1] + units.value[r]].astype(np.intp)
        out[:, :-1] += run[cols, b[:, 1::2]] - run[cols, b[:, 0::2]]
        out[:, -1] += run[:, -1]
    return out


@dataclass(frozen=True)
class HistogramUnits:
    """The histogram units of the grid (row image r, column image c) against each unit's
    thresholds, held per image instead of per pair: memory O((rows + cols) x d), not O(rows x
    cols x units). A unit's distance between two images is recomputed wherever it is needed,
    with numpy's arithmetic to the last bit: ELF's ``"l1"`` (``|a - b|.sum()``) or
    ``"bhattacharyya"`` (``sqrt(1 - BC)``) over the unit's ``n_bins`` bins, in float32, the bins
    summed in numpy's pairwise order. So the codes, and the histograms of
    :func:`grid_hist`, are those of the distances the held fit computes. Made by :meth:`of`.
    """

    R: np.ndarray    # (nr, H, b) float32: the rows' histograms
    CT: np.ndarray   # (H, b, nc) float32: the columns' histograms, each bin's columns adjacent
    SR: np.ndarray   # (nr, H) float32: each row histogram's sum (Bhattacharyya's normaliser)
    SC: np.ndarray   # (H, nc) float32: each column histogram's sum
    thr: np.ndarray  # (H, k - 1) float32 ascending finite thresholds; code k - 1: above them all
    l1: bool         # "l1", else "bhattacharyya"

    @classmethod
    def of(cls, R: np.ndarray, C: np.ndarray, n_bins: int, thr: np.ndarray, distance: str) -> "HistogramUnits":
        """``R`` (nr, H * n_bins) and ``C`` (nc, H * n_bins) float32 images, ``thr`` (H, k - 1) ascending."""
        R3, C3 = R.reshape(len(R), -1, n_bins), C.reshape(len(C), -1, n_bins)
        return cls(np.ascontiguousarray(R3), np.ascontiguousarray(C3.transpose(1, 2, 0)), R3.sum(-1),
                   np.ascontiguousarray(C3.sum(-1).T), np.ascontiguousarray(thr, dtype=np.float32), distance == "l1")

    @property
    def n_codes(self) -> int:
        return self.thr.shape[1] + 1

    def distances(self, u: int, rows: slice = slice(None)) -> np.ndarray:
        """(rows, nc) float32: unit ``u``'s distance of every (row, column) pair (numpy)."""
        a, b = self.R[rows, u][:, None, :], np.ascontiguousarray(self.CT[u].T)[None]
        if self.l1:
            return np.abs(a - b).sum(-1)
        bc = np.sqrt(a * b).sum(-1) / np.sqrt(np.maximum(self.SR[rows, u][:, None] * self.SC[u][None], 1e-12))
        return np.sqrt(np.maximum(1 - bc, 0))

    def within(self, u: int, j: int) -> np.ndarray:
        """(nr, nc) bool: unit ``u``'s distance <= ``thr[u, j]`` (code <= j; every pair for the last code)."""
        if j >= self.thr.shape[1]:
            return np.ones((len(self.R), self.CT.shape[2]), bool)
        return np.concatenate([self.distances(u, slice(s, s + 64)) <= self.thr[u, j] for s in range(0, len(self.R), 64)])


def grid_hist(units: HistogramUnits, W: np.ndarray, n_jobs: int = 1) -> np.ndarray:
    """(H, k) array: the sum of the grid's weights ``W`` (nr, nc) over the pairs whose code in
    histogram unit u is j: :func:`weighted_hist` of the :class:`PairedCodes` of every pair's codes
    (row-major), to the last bit, with no code held. Each round recomputes the distances.

    Compiled, ``n_jobs`` threads share the pairs of units, each going through the rows for
    :data:`GROUP` pairs of units at a time (their columns stay in cache); a pair of units' joint
    histogram adds the pairs in row-major order, and its rows and columns are summed as
    :func:`_marginals` sums them. The numpy reference codes a block of rows at a time and adds
    them in the same order (``np.add.at``): the same sums for any ``n_jobs``.
    """
    W = np.ascontiguousarray(W, dtype=np.float64)
    H, nc = units.thr.shape[0], units.n_codes
    n_pairs = (H + 1) // 2
    if jit.enabled() and units.R.shape[2] <= 128:
        part = lambda a, b: _grid_hist_compiled(units.R, units.CT, units.SR, units.SC, units.thr, W, nc,
                                                units.l1, a, b, GROUP)
        return _marginals(np.concatenate(in_threads(part, n_pairs, n_jobs, grain=GROUP)), nc)[:H]
    joint = np.zeros((n_pairs, nc * nc))
    for s in range(0, len(W), 64):
        rows = slice(s, s + 64)
        D = np.stack([units.distances(u, rows) for u in range(H)], axis=-1).reshape(-1, H)
        data = PairedCodes.of(threshold_codes(D, units.thr).T, nc).data.astype(np.intp)
        w = W[rows].ravel()
        for p in range(n_pairs):
            np.add.at(joint[p], data[p], w)
    return _marginals(joint, nc)[:H]


#: pairs of histogram units that :func:`grid_hist` codes side by side, row by row
GROUP = 4

#: rows of :func:`sorted_cum_hist`'s running sums at a time (their weights and sums: 0.5 KB a column)
LANES = 32

#: training pairs up to which the boosters hold every pair's codes (:class:`PairedCodes`, the
#: fastest rounds); beyond it they stream (:class:`SortedUnits`). VIPeR p = 316's 99,856 pairs fit.
HELD_PAIRS = 2 ** 17

#: two candidates whose losses (on weights that sum to 1) differ by less than this are tied: the
#: first in (unit, code) order is chosen. Their sums are added in an order that depends on the
#: pairing of units, so a tie in exact arithmetic can differ here by a few units of rounding
#: (~1e-16 per addition); the rule keeps such a choice independent of that order.
TIE = 1e-12


def first_least(loss: np.ndarray, tie: float = TIE) -> tuple[int, int]:
    """(unit, code): the first entry of ``loss`` (U, n_codes) within ``tie`` of its least value."""
    flat = loss.ravel()
    first = int(np.argmax(flat <= flat.min() + tie))
    return tuple(int(i) for i in np.unravel_index(first, loss.shape))


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


def _marginals(joint, nc):
    """(2P, nc) unit histograms of P joint histograms (P, nc * nc): unit 2p's bin a is the sum of
    row a of pair p's joint histogram over b = 0, 1, ..., unit 2p + 1's bin b the sum of column b
    over a = 0, 1, ... (each added in that order, as the compiled loops add them)."""
    T = joint.reshape(len(joint), nc, nc)
    out = np.zeros((len(joint), 2, nc))
    for b in range(nc):
        out[:, 0] += T[:, :, b]
    for a in range(nc):
        out[:, 1] += T[:, a, :]
    return out.reshape(-1, nc)


def _joint_numpy(data, weights, nc, rows=None):
    """The reference: one bincount per pair of units (its copy to intp stays in cache), over the
    instances ``rows`` when given (each pair's gathered in turn: no copy of every pair at once)."""
    if rows is not None:
        weights = weights[rows]
    out = np.empty((len(data), nc * nc))
    for p in range(len(data)):
        out[p] = np.bincount(data[p] if rows is None else data[p, rows], weights=weights, minlength=nc * nc)
    return out


@jit.njit
def _pair_compiled(codes, nc, out, first, last):
    """:meth:`PairedCodes.of` for the pairs first..last-1, written into ``out``."""
    U, n = codes.shape
    for p in range(first, last):
        a, o = codes[2 * p], out[p]
        if 2 * p + 1 < U:
            b = codes[2 * p + 1]
            for i in range(n):
                o[i] = a[i] * nc + b[i]
        else:
            for i in range(n):
                o[i] = a[i] * nc


@jit.njit
def _pair_hist_compiled(data, weights, nc):
    """Unit histograms (2P, nc) of the pairs ``data`` (P, n): four pairs' joint histograms side by
    side (four separate chains of additions, each weight read once for the four; each bin adds
    its instances in order), then their row and column sums in :func:`_marginals`' order while
    the joint histograms are in cache."""
    P, n = data.shape
    out = np.zeros((2 * P, nc))
    joint = np.empty((4, nc * nc))
    p = 0
    while p < P:
        m = min(4, P - p)
        joint[:] = 0.0
        if m == 4:
            c0, c1, c2, c3 = data[p], data[p + 1], data[p + 2], data[p + 3]
            h0, h1, h2, h3 = joint[0], joint[1], joint[2], joint[3]
            for i in range(n):
                w = weights[i]
                h0[c0[i]] += w
                h1[c1[i]] += w
                h2[c2[i]] += w
                h3[c3[i]] += w
        else:
            for k in range(m):
                h, c = joint[k], data[p + k]
                for i in range(n):
                    h[c[i]] += weights[i]
        for k in range(m):
            t, row, col = joint[k], out[2 * (p + k)], out[2 * (p + k) + 1]
            for a in range(nc):
                for b in range(nc):
                    x = t[a * nc + b]
                    row[a] += x
                    col[b] += x
        p += m
    return out


@jit.njit
def _pair_hist_rows_compiled(data, weights, rows, nc):
    """:func:`_pair_hist_compiled` over the instances ``rows`` only. Kept apart from it: given
    every row, this loop's indirection made a whole histogram 1.5-1.8x slower on VIPeR's ELF codes."""
    P = data.shape[0]
    m_rows = rows.shape[0]
    out = np.zeros((2 * P, nc))
    joint = np.empty((4, nc * nc))
    w_rows = np.empty(m_rows)
    for t in range(m_rows):
        w_rows[t] = weights[rows[t]]
    p = 0
    while p < P:
        m = min(4, P - p)
        joint[:] = 0.0
        if m == 4:
            c0, c1, c2, c3 = data[p], data[p + 1], data[p + 2], data[p + 3]
            h0, h1, h2, h3 = joint[0], joint[1], joint[2], joint[3]
            for t in range(m_rows):
                i = rows[t]
                w = w_rows[t]
                h0[c0[i]] += w
                h1[c1[i]] += w
                h2[c2[i]] += w
                h3[c3[i]] += w
        else:
            for k in range(m):
                h, c = joint[k], data[p + k]
                for t in range(m_rows):
                    h[c[rows[t]]] += w_rows[t]
        for k in range(m):
            jt, row, col = joint[k], out[2 * (p + k)], out[2 * (p + k) + 1]
            for a in range(nc):
                for b in range(nc):
                    x = jt[a * nc + b]
                    row[a] += x
                    col[b] += x
        p += m
    return out


def _bounds_numpy(x, c, thr):
    """:attr:`SortedUnits.bounds` of one unit's row values ``x`` (m,) against its column values ``c``
    (nc,): L_j counts the columns left of x beyond threshold j, R_j = nc less those right of x
    beyond it (the comparisons of the codes: beyond j is ``|x - c| > thr[j]``)."""
    diff = x[:, None] - c[None, :]
    D, left = np.abs(diff), diff > 0
    out = np.empty((len(x), 2 * len(thr)), dtype=np.int64)
    for j, t in enumerate(thr):
        beyond = D > t
        out[:, 2 * j] = (beyond & left).sum(1)
        out[:, 2 * j + 1] = len(c) - (beyond & ~left).sum(1)
    return out


@jit.njit
def _bounds_compiled(distinct, start, S, thr, out, first, last):
    """:attr:`SortedUnits.bounds` of units first..last-1 by binary search with the codes' comparisons:
    L_j = the first column (in sorted order) with not ``x - s > t``, R_j the first after it with
    ``s - x > t`` (the subtraction rounds the same way as ``|x - s|``, negated)."""
    nc = S.shape[1]
    k = thr.shape[1]
    for u in range(first, last):
        s = S[u]
        for i in range(start[u], start[u + 1]):
            x = distinct[i]
            for j in range(k):
                t = thr[u, j]
                lo, hi = 0, nc
                while lo < hi:
                    m = (lo + hi) >> 1
                    if x - s[m] > t:
                        lo = m + 1
                    else:
                        hi = m
                out[i, 2 * j] = lo
                hi = nc
                while lo < hi:
                    m = (lo + hi) >> 1
                    if s[m] - x > t:
                        hi = m
                    else:
                        lo = m + 1
                out[i, 2 * j + 1] = lo


@jit.njit
def _sorted_cum_compiled(W, order, value, start, bounds, lanes):
    """:func:`sorted_cum_hist` of the units ``order`` (their rows' ``value`` and ``start`` in
    ``bounds``): ``lanes`` rows at a time, their weights transposed so that one column's weights
    are adjacent, one running sum each, then each bin's rows added in order in a register."""
    nr, nc = W.shape
    U = order.shape[0]
    k1 = bounds.shape[1] // 2
    out = np.zeros((U, k1 + 1))
    Wt = np.zeros((nc, lanes))
    run = np.zeros((nc + 1, lanes))
    at = np.empty(lanes, np.intp)
    for r0 in range(0, nr, lanes):
        m = min(lanes, nr - r0)
        for c in range(nc):
            for i in range(lanes):
                Wt[c, i] = W[r0 + i, c] if i < m else 0.0
        for u in range(U):
            o = order[u]
            for p in range(nc):
                w, q, before = Wt[o[p]], run[p + 1], run[p]
                for i in range(lanes):  # vectorised: ``lanes`` is not a compile-time constant
                    q[i] = before[i] + w[i]
            for i in range(m):
                at[i] = start[u] + np.intp(value[r0 + i, u])
            ou = out[u]
            for j in range(k1):
                s = ou[j]
                for i in range(m):
                    b = bounds[at[i]]
                    s += run[b[2 * j + 1], i] - run[b[2 * j], i]
                ou[j] = s
            for i in range(m):
                ou[k1] += run[nc, i]
    return out


@jit.njit
def _grid_hist_compiled(R, CT, SR, SC, thr, W, nc, l1, first, last, group):
    """:func:`grid_hist` for the pairs of units first..last-1: their joint histograms (P, nc * nc),
    summed into the units' histograms by :func:`_marginals`. Each row's columns go by in tiles whose bins
    stay in cache; a tile's codes are computed for the ``group`` pairs of units, then added to
    their joint histograms side by side (separate chains of additions)."""
    nr, H, b = R.shape
    ncol = CT.shape[2]
    k = thr.shape[1]
    P = last - first
    tile = 512
    joint = np.zeros((P, nc * nc))
    T = np.empty((8, tile), np.float32)
    d = np.empty(tile, np.float32)
    code = np.empty(tile, np.int32)
    at = np.empty((group, tile), np.int32)
    one, zero, tiny = np.float32(1.0), np.float32(0.0), np.float32(1e-12)
    m8 = b - b % 8
    for g in range(first, last, group):
        gp = min(last, g + group) - g
        for r in range(nr):
            w = W[r]
            for c0 in range(0, ncol, tile):
                m = min(tile, ncol - c0)
                for q in range(gp):
                    aq = at[q]
                    for s in range(2):
                        u = 2 * (g + q) + s
                        if u >= H:
                            continue
                        x, Cu = R[r, u], CT[u]
                        if b == 16:  # ELF's histograms: the eight running sums held in registers
                            x0, x1, x2, x3, x4, x5, x6, x7 = x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]
                            x8, x9, x10, x11, x12, x13, x14, x15 = x[8], x[9], x[10], x[11], x[12], x[13], x[14], x[15]
                            C0, C1, C2, C3 = Cu[0, c0:c0 + m], Cu[1, c0:c0 + m], Cu[2, c0:c0 + m], Cu[3, c0:c0 + m]
                            C4, C5, C6, C7 = Cu[4, c0:c0 + m], Cu[5, c0:c0 + m], Cu[6, c0:c0 + m], Cu[7, c0:c0 + m]
                            C8, C9, C10, C11 = Cu[8, c0:c0 + m], Cu[9, c0:c0 + m], Cu[10, c0:c0 + m], Cu[11, c0:c0 + m]
                            C12, C13, C14, C15 = Cu[12, c0:c0 + m], Cu[13, c0:c0 + m], Cu[14, c0:c0 + m], Cu[15, c0:c0 + m]
                            if l1:
                                for c in range(m):
                                    a0 = abs(x0 - C0[c]) + abs(x8 - C8[c])
                                    a1 = abs(x1 - C1[c]) + abs(x9 - C9[c])
                                    a2 = abs(x2 - C2[c]) + abs(x10 - C10[c])
                                    a3 = abs(x3 - C3[c]) + abs(x11 - C11[c])
                                    a4 = abs(x4 - C4[c]) + abs(x12 - C12[c])
                                    a5 = abs(x5 - C5[c]) + abs(x13 - C13[c])
                                    a6 = abs(x6 - C6[c]) + abs(x14 - C14[c])
                                    a7 = abs(x7 - C7[c]) + abs(x15 - C15[c])
                                    d[c] = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))
                            else:
                                for c in range(m):
                                    a0 = np.sqrt(x0 * C0[c]) + np.sqrt(x8 * C8[c])
                                    a1 = np.sqrt(x1 * C1[c]) + np.sqrt(x9 * C9[c])
                                    a2 = np.sqrt(x2 * C2[c]) + np.sqrt(x10 * C10[c])
                                    a3 = np.sqrt(x3 * C3[c]) + np.sqrt(x11 * C11[c])
                                    a4 = np.sqrt(x4 * C4[c]) + np.sqrt(x12 * C12[c])
                                    a5 = np.sqrt(x5 * C5[c]) + np.sqrt(x13 * C13[c])
                                    a6 = np.sqrt(x6 * C6[c]) + np.sqrt(x14 * C14[c])
                                    a7 = np.sqrt(x7 * C7[c]) + np.sqrt(x15 * C15[c])
                                    d[c] = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))
                        elif b < 8:  # the bins summed in numpy's order (pairwise from 8 values; b <= 128)
                            d[:m] = zero
                            for i in range(b):
                                xi, ci = x[i], Cu[i, c0:c0 + m]
                                if l1:
                                    for c in range(m):
                                        d[c] += abs(xi - ci[c])
                                else:
                                    for c in range(m):
                                        d[c] += np.sqrt(xi * ci[c])
                        else:
                            for i in range(m8):  # eight running sums: bins j, j + 8, j + 16, ...
                                xi, ci, ti = x[i], Cu[i, c0:c0 + m], T[i % 8]
                                if i < 8:
                                    if l1:
                                        for c in range(m):
                                            ti[c] = abs(xi - ci[c])
                                    else:
                                        for c in range(m):
                                            ti[c] = np.sqrt(xi * ci[c])
                                elif l1:
                                    for c in range(m):
                                        ti[c] += abs(xi - ci[c])
                                else:
                                    for c in range(m):
                                        ti[c] += np.sqrt(xi * ci[c])
                            for c in range(m):
                                d[c] = ((T[0, c] + T[1, c]) + (T[2, c] + T[3, c])) + ((T[4, c] + T[5, c]) + (T[6, c] + T[7, c]))
                            for i in range(m8, b):
                                xi, ci = x[i], Cu[i, c0:c0 + m]
                                if l1:
                                    for c in range(m):
                                        d[c] += abs(xi - ci[c])
                                else:
                                    for c in range(m):
                                        d[c] += np.sqrt(xi * ci[c])
                        if not l1:
                            sr, sc = SR[r, u], SC[u, c0:c0 + m]
                            for c in range(m):
                                bc = d[c] / np.sqrt(max(sr * sc[c], tiny))
                                d[c] = np.sqrt(max(one - bc, zero))
                        t = thr[u]
                        for c in range(m):
                            code[c] = 0
                        for j in range(k):
                            tj = t[j]
                            for c in range(m):
                                code[c] += d[c] > tj
                        if s == 0:
                            for c in range(m):
                                aq[c] = code[c] * nc
                        else:
                            for c in range(m):
                                aq[c] += code[c]
                wr = w[c0:c0 + m]
                if gp == 4:
                    h0, h1, h2, h3 = joint[g - first], joint[g - first + 1], joint[g - first + 2], joint[g - first + 3]
                    a0, a1, a2, a3 = at[0], at[1], at[2], at[3]
                    for c in range(m):
                        x = wr[c]
                        h0[a0[c]] += x
                        h1[a1[c]] += x
                        h2[a2[c]] += x
                        h3[a3[c]] += x
                else:
                    for q in range(gp):
                        h, aq = joint[g - first + q], at[q]
                        for c in range(m):
                            h[aq[c]] += wr[c]
    return joint

"""ELF: Gray & Tao's AdaBoost over single (channel, strip) histogram distances (ECCV 2008), as Prosser et al.'s baseline."""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from pydantic import Field
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ...errors import InputError
from ...params import PositiveInt, Seed
from ...registry import rankers
from ...utils.progress import tick
from ...utils.threads import in_threads
from .._pair_grid import build_pair_grid
from .._validation import checked_input
from ..base import PairScorer
from ._histograms import (HELD_PAIRS, HistogramUnits, PairedCodes, SortedUnits, first_least, grid_codes, grid_hist,
                          quantiles, reweighted_hist, sorted_cum_hist, threshold_codes, weighted_hist)


#: rounds between fresh histograms (between them, each round's histograms are re-weighted from the
#: last: :func:`~._histograms.reweighted_hist`); 1 computes them afresh every round
_REFRESH = 50
#: a candidate this close to the least error (of a total weight 1) is decided on fresh histograms
_NEAR = 1e-9

#: pairs per block of distances: blocks of a few MB are reused by the allocator, while larger ones
#: are fresh memory each time, whose first touch costs more than the arithmetic (3x at 2048 pairs)
_CHUNK = 512


@rankers.register("elf")
class ELFAdaBoost(PairScorer, BaseEstimator):
    """ELF (Gray & Tao 2008): discrete AdaBoost of thresholded single-histogram distances.

    The feature vector is read as consecutive histograms of ``n_bins`` dims (one per (channel,
    strip) of :class:`~rankbench.features.elf_strips.ELFStrips`, or one (channel, region) of Gray &
    Tao's localized pool, :class:`~rankbench.features.elf_regions.ELFRegions`). A training pair
    is (query, candidate in the other camera), labelled +1 for the same person and -1 otherwise. Weak classifier k
    compares one histogram: ``h(q, g) = +1 if dist(q_k, g_k) <= theta else -1``. Each round
    picks the (histogram, theta) of least weighted error e (theta among quantiles), with ``alpha = 1/2 ln((1 - e) / e)``
    and the usual AdaBoost re-weighting. The similarity of a pair is ``sum_t alpha_t h_t``
    (larger = better match).

    Parameters
    ----------
    n_rounds : boosting rounds.
    n_bins : dims per histogram (16 in the paper's feature).
    distance : ``"l1"`` or ``"bhattacharyya"`` (sqrt(1 - BC)) between two histograms.
    n_thresholds : candidate thresholds per histogram (at most 255): half quantiles of its
        same-person training distances, half of its different-person ones; each round then
        costs one weighted histogram per unit (two units' at once: :class:`~._histograms.PairedCodes`).
    balance : start with half the weight on same-person pairs (there are ~m times fewer).
    block : rows of the pair grid per block when computing distances.
    units : ``"hist"`` (default), ``"bin"`` or ``"both"``: the weak learners' inputs are
        whole-histogram distances, single-dimension differences ``|x_k - y_k|`` (one per feature
        dimension, Prosser et al.'s "single feature channels" read literally), or both pools.
        The fit keeps one threshold code per (unit, pair), never the distances: with ``"both"``
        at VIPeR p = 316, 2958 units x 99,540 pairs = 0.3 GB.
        A round's weighted histograms are the last round's re-weighted: AdaBoost multiplies the
        weights of the pairs the chosen learner got right by one factor and the others by another,
        so only the smaller group is read again (a fresh histogram every 50 rounds, and wherever
        the re-weighting's rounding could decide a near tie): the same rounds, thresholds and
        weights as fresh histograms every round (tested), VIPeR p = 316 42.7 -> 26.1 s per fit on
        one core.
    negatives_per_query : None (default: every pair) or k: every same-person pair and, for each
        query image, k of its different-person pairs, drawn once per fit, uniformly without
        replacement (all of them when it has fewer; 0 or less is refused); with two cameras both
        ends of a pair are queries, and a pair either drew is a training pair. Drawn where the
        pairs are defined (:func:`~rankbench.rankers._pair_grid.build_pair_grid`): held and
        streamed fits see the same pairs. Never Prosser et al.'s baseline: Gray & Tao's paper is
        not among the shared texts (the digest says only "AdaBoost over single feature
        channels"), so how they drew their negatives cannot be quoted here, and Prosser et al.
        say of the baselines only that "all six methods were tested using exactly the same image
        feature set and image representation" (Sec. 3, Methods for Comparison). The pairs shrink
        from n^2 to about 2kn: VIPeR p = 316, 2 trials, k = 10, peak 702 -> 131 MB, fit about
        4x faster, CMC rank 1 / 10 / 20 8.7 / 34.0 / 46.8 -> 10.3 / 33.7 / 45.3; at 800
        generated people (scripts/bench_scale.py) 279 -> 5 CPU s, peak 544 -> 440 MB (about
        275 MB of it the features and the imports).
    n_jobs : threads sharing each round's histograms, the coding of the distances and the threshold
        quantiles of the full-grid fit (the fitted model does not depend on it; 1 when trials
        already run side by side on every core).
    score : ``"vote"`` (default): ``sum_t alpha_t h_t``; ``"margin"``: the real-valued
        ``sum_t alpha_t (theta_t - d_t) / s_t`` with ``s_t`` the training spread (std) of the
        chosen unit's distances; ``"tanh"``: the same margin squashed, ``sum_t alpha_t
        tanh((theta_t - d_t) / s_t)``; ``"distance"``: Gray & Tao's similarity read as a weighted
        sum of the chosen features' distances, ``-sum_t alpha_t d_t`` (weights as AdaBoost chose
        them, no threshold). An "always +1" learner (theta = inf) adds ``alpha_t`` (nothing to
        ``"distance"``). The fit does not depend on ``score``.
    max_held_pairs : the memory bound of the full-grid fit. Up to this many training pairs (default
        131,072: VIPeR p = 316's 99,856 fit), every unit's threshold code of every pair is held
        (1 byte per unit and pair; re-weighted histograms, the fastest fit). Beyond it the
        single-dimension units hold no code per pair: each image keeps its order and each
        distinct probe value of a unit the places of its thresholds in it (2 bytes per
        threshold), every round's histograms come from running sums over those orders, and the
        histogram units' distances are recomputed every round from the images' histograms
        (:class:`~._histograms.HistogramUnits`): no code is held per pair, and the memory above
        the features grows with the images, not the pairs. The same choices and weights to
        rounding (1e-12; the single dimensions' sums add in another order).
    random_state : seed of the sampled negatives.

    Attributes
    ----------
    hists_, thresholds_, alphas_, scales_ : the chosen units, their thresholds, weights and
        training spreads. candidate_thresholds_ : (units, n_thresholds) the thresholds each round
        chose from (full-grid fit; the last column is the "always +1" learner).
    """

    def __init__(self, n_rounds: PositiveInt = 200, n_bins: PositiveInt = 16,
                 distance: Literal["l1", "bhattacharyya"] = "l1",
                 n_thresholds: Annotated[int, Field(ge=2, le=255)] = 64, balance: bool = True,
                 block: PositiveInt = 4, units: Literal["hist", "bin", "both"] = "hist",
                 negatives_per_query: PositiveInt | None = None,
                 score: Literal["vote", "margin", "tanh", "distance"] = "vote", n_jobs: PositiveInt = 1,
                 max_held_pairs: PositiveInt = HELD_PAIRS, random_state: Seed = None):
        self.n_rounds = n_rounds
        self.n_thresholds = n_thresholds
        self.n_bins = n_bins
        self.distance = distance
        self.balance = balance
        self.block = block
        self.units = units
        self.negatives_per_query = negatives_per_query
        self.score = score
        self.n_jobs = n_jobs
        self.max_held_pairs = max_held_pairs
        self.random_state = random_state

    def fit(self, X, y, cams=None):
        """Boost on all (image, other-camera image) pairs of the training set."""
        X = self._histograms(checked_input(self, X, "fit", y=y, cams=cams, min_rows=2), "fit's X")
        if X.shape[1] % self.n_bins:
            raise InputError(f"elf: feature length {X.shape[1]} is not a multiple of n_bins={self.n_bins} "
                             "(n_bins must be the histogram size of the features)")
        k = self.negatives_per_query
        P = build_pair_grid(X, np.asarray(y), cams, block=self.block, negatives_per_query=k,
                            random_state=check_random_state(self.random_state))
        same, cand = _pair_grid(P, np.asarray(y), cams, sampled=k is not None)
        label = np.where(same[cand], 1, -1).astype(np.int8)  # the training pairs: the grid's cells cand, row-major
        n, shape = len(label), P.shape
        flat = None if n == cand.size else np.flatnonzero(cand)
        at = lambda idx: np.divmod(idx if flat is None else flat[idx], shape[1])  # (rows, cols) of pairs idx
        A, B = P.X[P.rows], P.X[P.cols]
        n_hist = X.shape[1] // self.n_bins if self.units in ("hist", "both") else 0
        n_units = n_hist + (X.shape[1] if self.units in ("bin", "both") else 0)
        del X, P, same  # the pairs read A and B, the grid's float32 rows and columns

        nb = self.n_bins
        kinds = ((0, n_hist, nb, self._hist_distances), (n_hist, n_units, 1, lambda a, b: np.abs(a - b)))

        def dist_of(idx, a=0, b=n_units, n_jobs=self.n_jobs):  # units a..b-1 of pairs idx, in blocks
            out = np.empty((len(idx), b - a), dtype=np.float32)

            def part(i0, i1):  # blocks i0..i1-1, written in place; only the units' columns are copied
                for s0 in range(i0 * _CHUNK, min(len(idx), i1 * _CHUNK), _CHUNK):
                    rows, cols = at(idx[s0:s0 + _CHUNK])
                    for first, last, width, dist in kinds:  # histogram units, then single dimensions
                        lo, hi = max(a, first), min(b, last)
                        if lo < hi:
                            cs = slice((lo - first) * width, (hi - first) * width)
                            out[s0:s0 + _CHUNK, lo - a:hi - a] = dist(A[rows, cs], B[cols, cs])
            in_threads(part, -(-len(idx) // _CHUNK), n_jobs, grain=1)
            return out

        w = np.where(label > 0, 0.5 / max((label > 0).sum(), 1), 0.5 / max((label < 0).sum(), 1)) \
            if self.balance else np.full(n, 1.0 / n)
        # candidate thresholds from every same-person pair and a sample of the others, and the
        # spread of a sample of all pairs: their distances 256 units at a time (no sample of every unit held)
        step = max(1, n // 20000)
        pos, neg, every = np.flatnonzero(label > 0), np.flatnonzero(label < 0)[::step], np.arange(0, n, step)
        thr, spread = [], []
        for s in range(0, n_units, 256):
            e = min(n_units, s + 256)
            thr.append(_thresholds(dist_of(pos, s, e), dist_of(neg, s, e), self.n_thresholds, self.n_jobs))
            spread.append(dist_of(every, s, e).std(axis=0))
        thr, spread = np.concatenate(thr).astype(np.float32), np.maximum(np.concatenate(spread), 1e-12)
        H = thr.shape[0]
        if n > self.max_held_pairs:
            return self._fit_streamed(cand, A, B, label, w, thr, spread, n_hist)
        # the unit distances of all pairs are never held: each block is reduced to uint8 codes
        # (code = first threshold >= the distance, so "+1 iff dist <= thr[j]" is "code <= j")
        codes = np.empty((H, n), dtype=np.uint8)
        coded = 0
        if flat is None and self.units != "hist":
            # the pairs are the whole grid (two cameras), row by row, and the single-dimension units'
            # distances are its differences |x_r - x_c|, coded where each is computed
            codes[n_hist:] = grid_codes(A, B, thr[n_hist:], self.n_jobs, self.block)
            coded = H - n_hist

        def code(a, b):  # chunks a..b-1 of _CHUNK pairs: the units not coded above
            for s0 in range(a * _CHUNK, min(n, b * _CHUNK), _CHUNK):
                D = dist_of(np.arange(s0, min(n, s0 + _CHUNK)), 0, H - coded, 1)
                codes[:H - coded, s0:s0 + _CHUNK] = threshold_codes(D, thr[:H - coded]).T
        if coded < H:
            in_threads(code, -(-n // _CHUNK), self.n_jobs, grain=1)
        codes = PairedCodes.of(codes, self.n_thresholds, self.n_jobs)   # codes 0 .. n_thresholds - 1
        thr = np.concatenate([thr, np.full((H, 1), np.inf, np.float32)], axis=1)  # "always +1"
        self.candidate_thresholds_ = thr
        w_pos = lambda w: w[label > 0].sum()
        n_rounds = int(self.n_rounds)
        occupied = _occupied(codes, self.n_jobs)
        hist, stale = None, 0   # hist: weighted histograms of w * label; stale: rounds since computed afresh
        hists, cuts, alphas = [], [], []
        for t in range(n_rounds):
            tick("round", t + 1, n_rounds)
            v, wp = w * label, w_pos(w)
            if hist is None or stale >= _REFRESH:
                hist, stale = weighted_hist(codes, v, self.n_jobs), 0
            err, k, j = _least_error(wp, hist)
            if stale and not _clear_minimum(err, k, j, occupied):
                hist, stale = weighted_hist(codes, v, self.n_jobs), 0   # a near tie: decided afresh
                err, k, j = _least_error(wp, hist)
            # the chosen learner's error as a fresh histogram gives it (bit for bit)
            err_kj = err[k, j] if not stale else wp - np.cumsum(weighted_hist(codes.around(k), v)[k % 2])[j]
            e = float(np.clip(err_kj / w.sum(), 1e-12, 1 - 1e-12))
            if e >= 0.5:
                break
            a = 0.5 * np.log((1 - e) / e)
            h = np.where(codes.unit(k) <= j, 1.0, -1.0)
            w = w * np.exp(-a * label * h)
            z = w.sum()
            w /= z
            hists.append(int(k))
            cuts.append(float(thr[k, j]))
            alphas.append(a)
            if t + 1 < n_rounds:  # next round's histograms: only the smaller group of pairs is re-read
                hist = reweighted_hist(hist, codes, v, label * h < 0, np.exp(-a) / z, np.exp(a) / z, self.n_jobs)
                stale += 1
        return self._store(hists, cuts, alphas, spread)

    def _fit_streamed(self, cand, A, B, label, w, thr, spread, n_hist):
        """The full-grid fit with no code per pair: the single-dimension units' histograms come
        from each image's sorted order (:class:`~._histograms.SortedUnits`), the histogram units'
        from their distances recomputed each round from the images' histograms
        (:class:`~._histograms.HistogramUnits`). Each round's histograms are fresh (re-weighting
        would save nothing: both read every pair)."""
        H = thr.shape[0]
        hist = HistogramUnits.of(A, B, self.n_bins, thr[:n_hist], self.distance) if n_hist else None
        bins = SortedUnits.of(A, B, thr[n_hist:], self.n_jobs) if H > n_hist else None
        thr = np.concatenate([thr, np.full((H, 1), np.inf, np.float32)], axis=1)  # "always +1"
        self.candidate_thresholds_ = thr
        full = len(label) == cand.size  # every cell a pair: the grid is the pairs' weights reshaped
        grid = None if full else np.zeros(cand.shape)
        hists, cuts, alphas = [], [], []
        n_rounds = int(self.n_rounds)
        for t in range(n_rounds):
            tick("round", t + 1, n_rounds)
            v, wp = w * label, w[label > 0].sum()
            if full:
                W = v.reshape(cand.shape)
            else:
                grid[cand] = v
                W = grid
            cum = []
            if hist is not None:
                cum.append(np.cumsum(grid_hist(hist, W, self.n_jobs), axis=1))
            if bins is not None:
                cum.append(sorted_cum_hist(bins, W, self.n_jobs))
            del v, W
            err = wp - np.concatenate(cum)
            k, j = first_least(err)
            e = float(np.clip(err[k, j] / w.sum(), 1e-12, 1 - 1e-12))
            if e >= 0.5:
                break
            a = 0.5 * np.log((1 - e) / e)
            h = hist.within(k, j) if k < n_hist else bins.within(k - n_hist, j)
            h = h.ravel() if full else h[cand]
            for s0 in range(0, len(w), _CHUNK * 64):  # in place, a block at a time: no temporary per pair
                b = slice(s0, s0 + _CHUNK * 64)
                w[b] *= np.exp(-a * label[b] * np.where(h[b], 1.0, -1.0))
            w /= w.sum()
            hists.append(int(k))
            cuts.append(float(thr[k, j]))
            alphas.append(a)
        return self._store(hists, cuts, alphas, spread)

    def _store(self, hists, cuts, alphas, spread):
        """Keep the chosen weak classifiers as fitted attributes."""
        self.hists_ = np.asarray(hists, dtype=int)
        self.thresholds_ = np.asarray(cuts)
        self.alphas_ = np.asarray(alphas)
        self.scales_ = spread[self.hists_].astype(float)
        return self

    def _pair_distances(self, A, B):
        """Unit distances of matching rows of A and B (n, d): (n, U)."""
        return self._unit_dist(A[:, None], B[:, None])[:, 0]

    def _hist_distances(self, A, B):
        """Histogram-unit distances of matching rows of A and B (n, d): (n, d // n_bins), the first
        units of :meth:`_pair_distances` (same arithmetic)."""
        nb = self.n_bins
        return self._hist_dist(A.reshape(len(A), -1, nb), B.reshape(len(B), -1, nb))

    def _unit_dist(self, A, B):
        """Distances of every unit (histograms, then dims) between A (..., d) and B (..., d)."""
        parts = []
        if self.units in ("hist", "both"):
            nb = self.n_bins
            parts.append(self._hist_dist(A.reshape(*A.shape[:-1], -1, nb), B.reshape(*B.shape[:-1], -1, nb)))
        if self.units in ("bin", "both"):
            parts.append(np.abs(A - B))
        return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=-1)

    def _hist_dist(self, A, B):
        """Distances between matching histograms of A (..., H, b) and B (..., H, b)."""
        if self.distance == "l1":
            return np.abs(A - B).sum(-1)
        if self.distance == "bhattacharyya":
            bc = np.sqrt(A * B).sum(-1) / np.sqrt(np.maximum(A.sum(-1) * B.sum(-1), 1e-12))
            return np.sqrt(np.maximum(1 - bc, 0))
        raise AssertionError(self.distance)  # declared as l1 | bhattacharyya

    def _some_units_dist(self, A, B, units):
        """Distances of the units ``units`` only between A (..., d) and B (..., d): (..., len(units)),
        each computed as :meth:`_unit_dist` computes it (the same numbers, without the others)."""
        units = np.asarray(units, dtype=np.intp)
        nb = self.n_bins
        n_hist = A.shape[-1] // nb if self.units in ("hist", "both") else 0
        out = np.empty(np.broadcast_shapes(A.shape[:-1], B.shape[:-1]) + (len(units),))
        hist = units < n_hist
        if hist.any():
            h = units[hist]
            out[..., hist] = self._hist_dist(A.reshape(*A.shape[:-1], -1, nb)[..., h, :],
                                             B.reshape(*B.shape[:-1], -1, nb)[..., h, :])
        if not hist.all():
            c = units[~hist] - n_hist
            out[..., ~hist] = np.abs(A[..., c] - B[..., c])
        return out

    def _grid_distances(self, R, Cm, hists=None):
        """Unit distances (or only the units ``hists``) of every (row of R, row of Cm): (nr, nc, U)."""
        out = None
        for s in range(0, len(R), self.block):
            A = R[s:s + self.block, None]
            D = self._unit_dist(A, Cm[None]) if hists is None else self._some_units_dist(A, Cm[None], hists)
            if out is None:
                out = np.empty((len(R), len(Cm), D.shape[2]), dtype=np.float32)
            out[s:s + self.block] = D
        return out

    def _histograms(self, A, what: str):
        """``A``, refused where the Bhattacharyya distance cannot read it: a negative value (the
        square root of a negative product is NaN, which fit and scoring would code differently)."""
        if self.distance == "bhattacharyya" and (A < 0).any():
            raise InputError(f"elf: distance='bhattacharyya' needs histograms (values >= 0), got {A.min():g} in "
                             f"{what}; use distance='l1' for other features")
        return A

    def similarity(self, Q, G):
        """The boosted score of every (probe, gallery) pair, shape (nq, ng); see ``score``."""
        check_is_fitted(self, "alphas_")
        # float32, as the pair grid the fit measured distances on: a distance computed in float64
        # can fall one float32 step from the fit's, across a threshold drawn from those distances
        Q = self._histograms(checked_input(self, Q, "similarity", "Q", dtype=np.float32), "similarity's Q")
        G = self._histograms(checked_input(self, G, "similarity", "G", dtype=np.float32), "similarity's G")
        used = np.unique(self.hists_)
        out = np.zeros((len(Q), len(G)))
        if len(used) == 0:
            return out
        D = self._grid_distances(Q, G, hists=used)
        pos = np.searchsorted(used, self.hists_)
        for p, t, a, sc in zip(pos, self.thresholds_, self.alphas_, self.scales_):
            if self.score == "distance":
                if np.isfinite(t):
                    out -= a * D[..., p]
            elif self.score == "vote" or not np.isfinite(t):
                out += a * np.where(D[..., p] <= t, 1.0, -1.0)
            elif self.score == "margin":
                out += a * (t - D[..., p]) / sc
            else:
                out += a * np.tanh((t - D[..., p]) / sc)
        return out


def _occupied(codes, n_jobs=1):
    """(U, n_codes) bool: which codes occur in each unit (an empty bin adds exactly 0 to a sum)."""
    return weighted_hist(codes, np.ones(codes.data.shape[1]), n_jobs) > 0


def _least_error(w_pos, hist):
    """(errors, k, j): the weighted error of "+1 iff code <= j" for every unit k and cut j (the
    positives above the cut and the negatives at or below it), and the first least one (ties
    within rounding: :func:`~._histograms.first_least`)."""
    err = w_pos - np.cumsum(hist, axis=1)
    return (err, *first_least(err))


def _clear_minimum(err, k, j, occupied):
    """Whether (k, j), the first least of ``err`` computed from re-weighted histograms, is the
    choice fresh histograms make too: every other candidate is more than ``_NEAR`` above it (far
    beyond the re-weighting's rounding, about 1e-13 after 200 rounds), or differs from it only by
    empty bins after j in unit k (then equal to it in both, and later in the order)."""
    near = np.argwhere(err <= err[k, j] + _NEAR)
    if len(near) == 1:
        return True
    return bool((near[:, 0] == k).all() and near[:, 1].min() == j and not occupied[k, j + 1:near[:, 1].max() + 1].any())


def _pair_grid(P, y, cams=None, sampled=False):
    """``same`` and ``cand`` masks over P's (rows x cols) grid: same identity, and training pair
    (on one grid of all images, three cameras or none: other-camera, or other, images only; with
    ``sampled`` negatives, the different-person pairs some query of either side drew)."""
    same = y[P.rows][:, None] == y[P.cols][None, :]
    if P.col_side is None:
        other = ~np.eye(*P.shape, dtype=bool)
        if cams is not None:  # a person's two images in one camera are no training pair
            c = np.asarray(cams)
            other &= c[P.rows][:, None] != c[P.cols][None, :]
        return same, (P.row_side.neg | same) & other
    if not sampled:
        return same, np.ones(P.shape, bool)
    return same, same | P.col_side.neg.T | (False if P.row_side is None else P.row_side.neg)


def _thresholds(Dpos, Dneg, q, n_jobs=1):
    """Candidate thresholds (U, q - 1), ascending per unit: q // 2 quantiles of the same-person
    distances (they are ~1/m of the pairs and lie low) and the rest from different-person ones
    (Dpos, Dneg: (pairs, U); ``n_jobs`` threads share the units)."""
    n_pos = q // 2
    at = lambda m: np.linspace(0, 1, m + 1)[1:]
    return np.sort(np.concatenate([quantiles(Dpos, at(n_pos), axis=0, n_jobs=n_jobs),
                                   quantiles(Dneg, at(q - n_pos - 1), axis=0, n_jobs=n_jobs)], axis=1), axis=1)

"""ELF: Gray & Tao's AdaBoost over single (channel, strip) histogram distances (ECCV 2008), as Prosser et al.'s baseline."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator

from ..registry import rankers
from .base import PairScorer


@rankers.register("elf")
class ELFAdaBoost(PairScorer, BaseEstimator):
    """ELF (Gray & Tao 2008): discrete AdaBoost of thresholded single-histogram distances.

    The feature vector is read as consecutive histograms of ``n_bins`` dims (one per (channel,
    strip) of :class:`~rankbench.features.elf.ELFStrips`, or one (channel, region) of Gray &
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
        same-person training distances, half of its different-person ones; each round then costs one weighted bincount per histogram.
    balance : start with half the weight on same-person pairs (there are ~m times fewer).
    block : rows of the pair grid per block when computing distances.
    """

    def __init__(self, n_rounds=200, n_bins=16, distance="l1", n_thresholds=64, balance=True, block=4):
        self.n_rounds = n_rounds
        self.n_thresholds = n_thresholds
        self.n_bins = n_bins
        self.distance = distance
        self.balance = balance
        self.block = block

    def fit(self, X, y, cams=None):
        """Boost on all (image, other-camera image) pairs of the training set."""
        from ._pairs import build_pairs

        X = np.asarray(X, dtype=float)
        if X.shape[1] % self.n_bins:
            raise ValueError(f"elf: feature length {X.shape[1]} is not a multiple of n_bins={self.n_bins}")
        P = build_pairs(X, np.asarray(y), cams, block=self.block)
        yy = np.asarray(y)
        same = yy[P.rows][:, None] == yy[P.cols][None, :]
        cand = np.ones(P.shape, bool)
        if P.col_side is None:  # one grid of all images: only other-camera (or other) images
            cand = P.row_side.neg | same
            cand &= ~np.eye(*P.shape, dtype=bool)
        label = np.where(same, 1.0, -1.0)[cand]
        dist = self._grid_distances(P.X[P.rows], P.X[P.cols], cand)   # (n_pairs, n_hist)
        n, H = dist.shape
        w = np.where(label > 0, 0.5 / max((label > 0).sum(), 1), 0.5 / max((label < 0).sum(), 1)) \
            if self.balance else np.full(n, 1.0 / n)
        # candidate thresholds: quantiles of each histogram's distances; code = first threshold
        # >= the distance, so "+1 iff dist <= thr[j]" is "code <= j"
        # half of them from same-person distances: they are ~1/m of the pairs and lie low
        n_pos = self.n_thresholds // 2
        n_neg = self.n_thresholds - n_pos - 1
        q = lambda k: np.linspace(0, 1, k + 1)[1:]
        thr = np.sort(np.concatenate([
            np.quantile(dist[label > 0], q(n_pos), axis=0),
            np.quantile(dist[np.nonzero(label < 0)[0][:: max(1, n // 20000)]], q(n_neg), axis=0)]), axis=0).T
        thr = np.concatenate([thr, np.full((H, 1), np.inf)], axis=1)    # "always +1" closes it
        thr = thr.astype(np.float32)                                    # (H, q) ascending
        codes = np.empty((H, n), dtype=np.uint8)
        for k in range(H):
            codes[k] = np.searchsorted(thr[k], dist[:, k], side="left")
        del dist
        w_pos = lambda w: w[label > 0].sum()
        hists, cuts, alphas = [], [], []
        for _ in range(int(self.n_rounds)):
            sw = w * label
            # error of "+1 iff code <= j" = positives above the cut + negatives at or below it
            err = np.empty((H, self.n_thresholds))
            for k in range(H):  # one bincount per histogram keeps its copy in cache
                err[k] = np.bincount(codes[k], weights=sw, minlength=self.n_thresholds)
            err = w_pos(w) - np.cumsum(err, axis=1)
            k, j = np.unravel_index(np.argmin(err), err.shape)
            e = float(np.clip(err[k, j] / w.sum(), 1e-12, 1 - 1e-12))
            if e >= 0.5:
                break
            a = 0.5 * np.log((1 - e) / e)
            h = np.where(codes[k] <= j, 1.0, -1.0)
            w = w * np.exp(-a * label * h)
            w /= w.sum()
            hists.append(int(k))
            cuts.append(float(thr[k, j]))
            alphas.append(a)
        self.hists_ = np.asarray(hists, dtype=int)
        self.thresholds_ = np.asarray(cuts)
        self.alphas_ = np.asarray(alphas)
        return self

    def _hist_dist(self, A, B):
        """Distances between matching histograms of A (..., H, b) and B (..., H, b)."""
        if self.distance == "l1":
            return np.abs(A - B).sum(-1)
        if self.distance == "bhattacharyya":
            bc = np.sqrt(A * B).sum(-1) / np.sqrt(np.maximum(A.sum(-1) * B.sum(-1), 1e-12))
            return np.sqrt(np.maximum(1 - bc, 0))
        raise ValueError(f"elf: distance must be 'l1' or 'bhattacharyya', not {self.distance!r}")

    def _grid_distances(self, R, Cm, cand=None, hists=None):
        nb = self.n_bins
        Rh = R.reshape(len(R), -1, nb)
        Ch = Cm.reshape(len(Cm), -1, nb)
        if hists is not None:
            Rh, Ch = Rh[:, hists], Ch[:, hists]
        out = np.empty((len(R), len(Cm), Rh.shape[1]), dtype=np.float32)
        for s in range(0, len(R), self.block):
            out[s:s + self.block] = self._hist_dist(Rh[s:s + self.block, None], Ch[None])
        if cand is None:
            return out
        # every cell a candidate (the two-camera grid): a view, not a copy of the whole grid
        return out.reshape(-1, out.shape[2]) if cand.all() else out[cand]

    def similarity(self, Q, G):
        """``sum_t alpha_t h_t(q, g)`` for every (probe, gallery) pair, shape (nq, ng)."""
        used = np.unique(self.hists_)
        D = self._grid_distances(np.asarray(Q, float), np.asarray(G, float), hists=used)
        pos = np.searchsorted(used, self.hists_)
        out = np.zeros(D.shape[:2])
        for p, t, a in zip(pos, self.thresholds_, self.alphas_):
            out += a * np.where(D[..., p] <= t, 1.0, -1.0)
        return out

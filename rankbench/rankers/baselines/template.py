"""Template matching without learning: L1-norm, Bhattacharyya and Euclidean distances.

These are the no-learning baselines of Prosser et al. (BMVC 2010, Section 4) and the identity
metric of the ordinal experiments. ``fit`` only checks the input; ``similarity`` is the negated
distance (or the Bhattacharyya coefficient), so larger is a better match.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ...errors import InputError
from ...params import PositiveInt
from ...registry import rankers
from .._validation import checked_input
from ..base import MetricLearner, PairScorer


class _Template(PairScorer, BaseEstimator):
    """No learning: ``fit`` only checks the input and records its width."""

    def fit(self, X, y=None, cams=None):
        checked_input(self, X, "fit", y=y, cams=cams)
        return self

    def _check(self, Q, G):
        check_is_fitted(self, "n_features_in_")
        return checked_input(self, Q, "similarity", "Q"), checked_input(self, G, "similarity", "G")


@rankers.register("l1")
class L1Norm(_Template):
    """L1-norm template matching: similarity = -sum_k |q_k - g_k|."""

    def similarity(self, Q, G):
        from scipy.spatial.distance import cdist

        return -cdist(*self._check(Q, G), "cityblock")


@rankers.register("bhattacharyya")
class Bhattacharyya(_Template):
    """Bhattacharyya matching of histogram features (one or several histograms per vector).

    For two normalised histograms the Bhattacharyya coefficient is ``BC = sum_b sqrt(q_b g_b)``.
    A feature made of several histograms (``n_bins`` dims each, e.g. the 174 strip histograms of
    Prosser et al.'s 2784-d feature) can be matched in three ways, which rank differently:

    * ``form="coefficient"``: similarity = sum of the histograms' coefficients, i.e.
      ``sum_k sqrt(q_k g_k)`` over the whole vector (``n_bins`` is then irrelevant);
    * ``form="hellinger"``: similarity = -sum of ``sqrt(1 - BC)`` per histogram (the Bhattacharyya
      distance as OpenCV defines it);
    * ``form="log"``: similarity = -sum of ``-ln BC`` per histogram (the statistical
      Bhattacharyya distance; ``BC`` floored at 1e-12).

    Each histogram's ``BC`` is divided by ``sqrt(sum q * sum g)`` so unnormalised histograms are
    compared by their shapes (for the whole-vector ``coefficient`` form nothing is divided).
    Negative entries (not histograms) are clipped to 0.
    """

    def __init__(self, form: Literal["coefficient", "hellinger", "log"] = "coefficient", n_bins: PositiveInt = 16):
        self.form = form
        self.n_bins = n_bins

    def similarity(self, Q, G):
        Q, G = self._check(Q, G)
        Q, G = np.sqrt(np.clip(Q, 0, None)), np.sqrt(np.clip(G, 0, None))
        if self.form == "coefficient":
            return Q @ G.T
        if Q.shape[1] % self.n_bins:
            raise InputError(f"bhattacharyya: feature length {Q.shape[1]} is not a multiple of "
                             f"n_bins={self.n_bins} (the histogram size)")
        H, nb = Q.shape[1] // self.n_bins, self.n_bins
        out = np.zeros((len(Q), len(G)))
        for h in range(H):  # one (nq, ng) coefficient matrix per histogram
            q, g = Q[:, h * nb:(h + 1) * nb], G[:, h * nb:(h + 1) * nb]
            mass = np.sqrt(np.outer((q**2).sum(1), (g**2).sum(1)))
            bc = np.clip((q @ g.T) / np.maximum(mass, 1e-300), 0.0, 1.0)
            out -= np.sqrt(1.0 - bc) if self.form == "hellinger" else -np.log(np.maximum(bc, 1e-12))
        return out


@rankers.register("euclidean")
class Euclidean(MetricLearner, _Template):
    """Euclidean distance with no learning (the identity metric): similarity = -||q - g||^2."""

    def fit(self, X, y=None, cams=None):
        return _Template.fit(self, X, y, cams)

    def transform(self, X):
        check_is_fitted(self, "n_features_in_")
        return checked_input(self, X, "transform")

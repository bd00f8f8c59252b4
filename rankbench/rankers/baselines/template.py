"""Template matching without learning: L1-norm, Bhattacharyya and Euclidean distances.

These are the no-learning baselines of Prosser et al. (BMVC 2010, Section 4) and the identity
metric of the ordinal experiments. ``fit`` only checks the input; ``similarity`` is the negated
distance (or the Bhattacharyya coefficient), so larger is a better match.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_array, check_is_fitted

from ...registry import rankers
from ..base import MetricLearner, PairScorer


class _Template(PairScorer, BaseEstimator):
    """No learning: ``fit`` only checks the input and records its width."""

    def fit(self, X, y=None, cams=None):
        X = check_array(X)
        self.n_features_in_ = X.shape[1]
        return self

    def _check(self, Q, G):
        check_is_fitted(self, "n_features_in_")
        return check_array(Q, dtype=float), check_array(G, dtype=float)


@rankers.register("l1")
class L1Norm(_Template):
    """L1-norm template matching: similarity = -sum_k |q_k - g_k|."""

    def similarity(self, Q, G):
        from scipy.spatial.distance import cdist

        return -cdist(*self._check(Q, G), "cityblock")


@rankers.register("bhattacharyya")
class Bhattacharyya(_Template):
    """Bhattacharyya coefficient of histogram features: similarity = sum_k sqrt(q_k g_k).

    For a feature made of several normalised histograms this is the *sum of their Bhattacharyya
    coefficients*; with more than one histogram it is not a monotone function of the sum of
    their Bhattacharyya distances, so it ranks differently from a distance-based matcher.
    Negative entries (not histograms) are clipped to 0.
    """

    def similarity(self, Q, G):
        Q, G = self._check(Q, G)
        return np.sqrt(np.clip(Q, 0, None)) @ np.sqrt(np.clip(G, 0, None)).T


@rankers.register("euclidean")
class Euclidean(MetricLearner, _Template):
    """Euclidean distance with no learning (the identity metric): similarity = -||q - g||^2."""

    def fit(self, X, y=None, cams=None):
        return _Template.fit(self, X, y, cams)

    def transform(self, X):
        check_is_fitted(self, "n_features_in_")
        return check_array(X, dtype=float)

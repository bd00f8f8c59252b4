"""Template matching without learning: L1-norm, Bhattacharyya and Euclidean distances.

These are the no-learning baselines of Prosser et al. (BMVC 2010, Section 4) and the identity
metric of the ordinal experiments. ``fit`` only checks the input; ``similarity`` is the negated
distance (or the Bhattacharyya coefficient), so larger is a better match.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_array

from ..registry import rankers
from .base import MetricLearner, PairScorer

_BLOCK = 256  # probe rows per block: keeps the (block, n_gallery, d) difference small


class _Template(BaseEstimator, PairScorer):
    def fit(self, X, y=None, cams=None):
        X = check_array(X)
        self.n_features_in_ = X.shape[1]
        return self


@rankers.register("l1")
class L1Norm(_Template):
    """L1-norm template matching: similarity = -sum_k |q_k - g_k|."""

    def similarity(self, Q, G):
        from scipy.spatial.distance import cdist

        return -cdist(np.asarray(Q, float), np.asarray(G, float), "cityblock")


@rankers.register("bhattacharyya")
class Bhattacharyya(_Template):
    """Bhattacharyya coefficient of histogram features: similarity = sum_k sqrt(q_k g_k).

    For a feature made of several normalised histograms this is the sum of their Bhattacharyya
    coefficients, a monotone stand-in for the sum of Bhattacharyya distances. Negative entries
    (not histograms) are clipped to 0.
    """

    def similarity(self, Q, G):
        return np.sqrt(np.clip(np.asarray(Q, float), 0, None)) @ np.sqrt(np.clip(np.asarray(G, float), 0, None)).T


@rankers.register("euclidean")
class Euclidean(_Template, MetricLearner):
    """Euclidean distance with no learning (the identity metric): similarity = -||q - g||^2."""

    def fit(self, X, y=None, cams=None):
        return super().fit(X, y, cams)

    def transform(self, X):
        return np.asarray(X, float)

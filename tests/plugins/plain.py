"""Plain estimators, one per capability of ``rankbench/rankers/base.py``: just the methods of the
capability's contract, no rankbench base class, no scikit-learn base class (a user's own class,
as metric-learn's or a paper's reference code writes them). Loaded by file path in the tests."""

import numpy as np
from scipy.spatial.distance import cdist


class PlainPairScorer:
    """L1 matching."""

    def fit(self, X, y, cams=None):
        return self

    def similarity(self, Q, G):
        return -cdist(np.asarray(Q, float), np.asarray(G, float), "cityblock")


class PlainMetric:
    """A diagonal scaling by the inverse within-class spread (KISSME-like: fit + transform only)."""

    def fit(self, X, y):
        X, y = np.asarray(X, float), np.asarray(y)
        within = np.concatenate([X[y == c] - X[y == c].mean(0) for c in np.unique(y)])
        self.scale_ = 1.0 / (within.std(0) + 1e-3)
        return self

    def transform(self, X):
        return np.asarray(X, float) * self.scale_


class PlainItemScorer:
    """The projection on the difference of the class means."""

    def fit(self, X, y):
        X, y = np.asarray(X, float), np.asarray(y)
        self.w_ = X[y > 0].mean(0) - X[y <= 0].mean(0)
        return self

    def decision_function(self, X):
        return np.asarray(X, float) @ self.w_


class PlainPairwise:
    """The first feature as the score."""

    def fit(self, X, pairs, sign):
        return self

    def decision_function(self, X):
        return np.asarray(X, float)[:, 0]


class PlainClassifier:
    """The nearest class mean."""

    def fit(self, X, y):
        X, y = np.asarray(X, float), np.asarray(y)
        self.classes_ = np.unique(y[y >= 0])
        self.means_ = np.stack([X[y == c].mean(0) for c in self.classes_])
        return self

    def predict(self, X):
        return self.classes_[np.argmin(cdist(np.asarray(X, float), self.means_), axis=1)]


class PlainBank:
    """A model bank (what a stacked protocol builds for itself; no protocol compares one)."""

    def fit(self, X, y):
        return self

    def model_output(self, X, j, rows):
        return np.zeros(len(rows))


class Nothing:
    """Only a fit."""

    def fit(self, X, y):
        return self


PLAIN = (PlainPairScorer, PlainMetric, PlainItemScorer, PlainPairwise, PlainClassifier, PlainBank, Nothing)

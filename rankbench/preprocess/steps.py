"""Preprocessing steps named in a ranker's ``preprocess:`` list.

Each is fitted on the training rows the protocol hands the ranker, then applied to every row the
ranker scores, so nothing from the test split leaks into training.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from ..registry import preprocessors


@preprocessors.register("pca")
class PCA(BaseEstimator, TransformerMixin):
    """Principal component analysis: centred, not scaled, to ``n_components`` dimensions.

    Uses the n x n Gram matrix when there are fewer rows than columns (e.g. 30 faces of 10304
    pixels), which gives the same components at a fraction of the cost. With n rows at most n - 1
    components carry variance; directions with (numerically) zero variance are dropped.
    """

    def __init__(self, n_components: int = 50, whiten: bool = False):
        self.n_components = n_components
        self.whiten = whiten

    def fit(self, X, y=None):
        X = np.asarray(X, float)
        self.mean_ = X.mean(axis=0)
        Xc = X - self.mean_
        n, d = Xc.shape
        k = min(self.n_components, n, d)
        if n < d:
            # eigenvectors of the n x n Gram matrix give the components as Xc^T u / s
            evals, U = np.linalg.eigh(Xc @ Xc.T)
            order = np.argsort(evals)[::-1][:k]
            s = np.sqrt(np.clip(evals[order], 0, None))
            keep = s > s[0] * 1e-10 if len(s) else s > 0
            comps = (Xc.T @ U[:, order[keep]]) / s[keep]
            self.components_ = comps.T
            self.explained_variance_ = s[keep] ** 2 / max(n - 1, 1)
        else:
            _, s, vt = np.linalg.svd(Xc, full_matrices=False)
            self.components_ = vt[:k]
            self.explained_variance_ = s[:k] ** 2 / max(n - 1, 1)
        return self

    def transform(self, X):
        Z = (np.asarray(X, float) - self.mean_) @ self.components_.T
        if self.whiten:
            Z /= np.sqrt(self.explained_variance_ + 1e-12)
        return Z


@preprocessors.register("standardize")
class Standardize(BaseEstimator, TransformerMixin):
    """Zero mean, unit variance per column (constant columns left at zero)."""

    def fit(self, X, y=None):
        X = np.asarray(X, float)
        self.mean_ = X.mean(axis=0)
        sd = X.std(axis=0)
        self.scale_ = np.where(sd > 0, sd, 1.0)
        return self

    def transform(self, X):
        return (np.asarray(X, float) - self.mean_) / self.scale_


@preprocessors.register("minmax")
class MinMax(BaseEstimator, TransformerMixin):
    """Scale each column to [0, 1] using the training rows' range."""

    def fit(self, X, y=None):
        X = np.asarray(X, float)
        self.min_ = X.min(axis=0)
        rng = X.max(axis=0) - self.min_
        self.range_ = np.where(rng > 0, rng, 1.0)
        return self

    def transform(self, X):
        return (np.asarray(X, float) - self.min_) / self.range_


@preprocessors.register("l2norm")
class L2Norm(BaseEstimator, TransformerMixin):
    """Scale each row to unit Euclidean norm."""

    def fit(self, X, y=None):
        return self

    def transform(self, X):
        X = np.asarray(X, float)
        n = np.linalg.norm(X, axis=1, keepdims=True)
        return X / np.where(n > 0, n, 1.0)

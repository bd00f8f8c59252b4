"""Scaling steps for a ranker's ``preprocess:`` list: scikit-learn's own scalers under short names.

Each is fitted on the training rows the protocol hands the ranker and applied to every row the
ranker scores; parameters are scikit-learn's (``rankbench list preprocessors standardize``).
"""

from __future__ import annotations

from sklearn.preprocessing import MinMaxScaler, Normalizer, StandardScaler

from ..registry import preprocessors


@preprocessors.register("standardize")
class Standardize(StandardScaler):
    """Zero mean, unit variance per column (scikit-learn's StandardScaler)."""


@preprocessors.register("minmax")
class MinMax(MinMaxScaler):
    """Scale each column to a range, by default [0, 1], from the training rows (scikit-learn's MinMaxScaler)."""


@preprocessors.register("l2norm")
class L2Norm(Normalizer):
    """Scale each row to unit norm, L2 by default (scikit-learn's Normalizer)."""

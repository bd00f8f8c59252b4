"""Scaling steps for a ranker's ``preprocess:`` list: scikit-learn's own scalers under short names.

Each is fitted on the training rows the protocol hands the ranker and applied to every row the
ranker scores; parameters are scikit-learn's (``rankbench list preprocessors standardize``).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator
from sklearn.preprocessing import MinMaxScaler, Normalizer, StandardScaler

from ..registry import preprocessors


@preprocessors.register("standardize")
class Standardize(StandardScaler):
    """Zero mean, unit variance per column (scikit-learn's StandardScaler)."""


def _increasing(bounds: tuple[float, float]) -> tuple[float, float]:
    if not bounds[0] < bounds[1]:
        raise ValueError("a range [low, high] with low < high")
    return bounds


@preprocessors.register("minmax")
class MinMax(MinMaxScaler):
    """Scale each column to a range, by default [0, 1], from the training rows (scikit-learn's
    MinMaxScaler; ``feature_range`` checked when the config is, and never transformed in place)."""

    copy = True   # a pipeline's matrices are never scaled in place

    def __init__(self, feature_range: Annotated[tuple[float, float], AfterValidator(_increasing)] = (0, 1), *,
                 clip: bool = False):
        self.feature_range = feature_range
        self.clip = clip


@preprocessors.register("l2norm")
class L2Norm(Normalizer):
    """Scale each row to unit norm, L2 by default (scikit-learn's Normalizer)."""

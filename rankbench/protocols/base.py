"""Base class of protocols: what a protocol owns and the result it returns.

A protocol owns a task: it draws seeded splits of a :class:`~rankbench.datasets.base.Dataset`,
gives a fresh ranker only the training rows in the form the task needs, scores the held-out rows
with pure functions from :mod:`rankbench.metrics`, and returns a flat ``{metric: value}`` dict
(plus optional curves). It never knows which ranker it runs.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from pathlib import Path
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from ..datasets.base import Dataset
from ..errors import ConfigError, RankerFault
from ..rankers.base import capabilities
from ..records import TrialSplit
from ..utils.meter import Meter


@dataclass
class TrialResult:
    metrics: dict[str, float]
    curves: dict[str, list[float]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


class Protocol(BaseEstimator, ABC):
    """Abstract protocol. Subclasses set ``capability`` and implement ``split`` and ``evaluate``."""

    #: capabilities a ranker must have one of (see :mod:`rankbench.rankers.base`)
    capability: tuple[str, ...] = ()
    #: metric plotted as a curve (e.g. "cmc"), if any
    curve: str | None = None
    #: the metric that sums a method up (bars, sweeps, comparisons)
    headline: str = ""
    #: families of the metrics it reports (declared in :mod:`rankbench.metrics`)
    metric_families: tuple[str, ...] = ()
    #: the curves of series it stores, ``{curve: (series, ...)}`` (a numbered series as ``map@D``),
    #: which ``dominates`` and ``speedup`` claims name; None: not declared (not checked)
    curve_series: dict[str, tuple[str, ...]] | None = None
    #: what its rankers learn from, when not the feature sets (a ranker's ``preprocess`` steps
    #: transform the features, so they are refused where this is set)
    ranker_input: str = ""
    #: the parameter listing the numbers a numbered family is reported at (``cmc@K`` for each K of
    #: ``ranks``), read by :meth:`reported_numbers`
    metric_numbers: dict[str, str] = {"cmc@K": "ranks", "ap@D": "depths", "map@D": "depths"}
    #: what a figure calls a parameter swept on its axis, where its name does not say it
    #: (``{"n_test": "Test people"}``); others are named after the parameter ("n_constraints" ->
    #: "Constraints")
    parameter_labels: dict[str, str] = {}
    #: True when the protocol itself uses a method's feature views (``combine: views``), e.g. to
    #: train base models, and hands the ranker something derived from them
    consumes_views: bool = False
    #: ``split`` also needs the features (it is then called ``split(dataset, rng, features=...)``
    #: with every feature set of the config, ``{name: matrix}``), e.g. to select constraints
    split_uses_features: bool = False

    @abstractmethod
    def split(self, dataset: Dataset, rng: np.random.Generator) -> dict[str, Any]:
        """One trial's split as a JSON-serialisable dict of index lists (row positions)."""

    @abstractmethod
    def evaluate(
        self,
        make_ranker: Callable[[], Any],
        X: np.ndarray | dict[str, np.ndarray],
        dataset: Dataset,
        split: TrialSplit,
        meter: Meter,
    ) -> TrialResult:
        """Fit fresh rankers on the training rows of ``split`` and score the test rows."""

    def check_dataset(self, dataset: Dataset) -> None:
        """Raise a DataError if the dataset lacks what this protocol needs."""

    def fit_sizes(self, dataset: Dataset, n_features: tuple[int, str] | None) -> dict[str, tuple[int, str] | None]:
        """The sizes of what a ranker's ``fit`` will get, ``{what: (size, why)}``, for parameters
        bounded by the data (:class:`rankbench.params.AtMost`), checked at plan time:
        ``n_features`` (the method's feature dimension, ``n_features``, as the protocol hands the
        ranker rows of its feature matrix) and, where the protocol knows it before a split,
        ``n_samples``. A protocol that fits its rankers on something else says so by overriding."""
        return {"n_features": n_features}

    def ranker_bounds(self) -> dict[str, str]:
        """Ranker parameters this protocol bounds by the sizes of :meth:`fit_sizes`, beyond those
        a ranker declares itself (:class:`rankbench.params.AtMost`): ``{parameter: "n_samples" |
        "n_features"}``, checked at plan time as those are."""
        return {}

    def input_files(self, dataset: Dataset) -> tuple[Path, ...]:
        """Files the protocol reads beside the dataset (a benchmark's split file): their bytes key
        its results, and ``--resume`` refuses a run whose files changed since its splits were drawn."""
        return ()

    def fixed_trials(self, dataset: Dataset) -> int | None:
        """How many trials the protocol's own split data fixes (a benchmark's split file), or None
        when every trial is drawn from its seed. With fixed trials the engine refuses a config that
        asks for more, and calls ``split(dataset, rng, trial=t)``."""
        return None

    def reported_numbers(self, family: str, dataset: Dataset) -> tuple[int, ...] | None:
        """The numbers N at which a run on ``dataset`` reports the numbered metric ``family``
        (``cmc@K``: the K of each ``cmc@K``), from the parameter :attr:`metric_numbers` names for
        it; None when the protocol does not say (no such parameter, or it is unset). Called after
        :meth:`check_dataset` passed."""
        key = self.metric_numbers.get(family)
        value = getattr(self, key, None) if key else None
        return None if value is None else tuple(int(v) for v in value)

    def check_features(self, names: list[str]) -> None:
        """Raise a ConfigError if ``split`` cannot work with the config's feature sets ``names``."""

    def check_ranker(self, ranker: Any, where: str) -> None:
        caps = capabilities(ranker)
        if not caps.intersection(self.capability):
            raise ConfigError(
                f"{where}: ranker {getattr(ranker, 'registry_name', type(ranker).__name__)!r} cannot run "
                f"under protocol {self.registry_name!r} (it needs one of: {', '.join(self.capability)}; "
                f"the ranker offers: {', '.join(sorted(caps)) or 'nothing'})"
            )


def checked_output(values: Any, shape: tuple[int | None, ...], what: str, features: bool = False) -> np.ndarray:
    """What a ranker returned (``what``: e.g. ``"similarity"``), as a float array of ``shape``
    (``None``: any size but 0 on that axis; a column ``(n, 1)`` counts as ``(n,)``), or a
    :class:`~rankbench.errors.RankerFault` saying what is wrong: nothing (None), not numbers, the
    wrong shape, values that are not finite, or labels it would lose (a masked array's mask, a
    pandas object's own index, or its own columns unless they are ``features``, as a transform's
    are). Every protocol passes each ranker output through this before a metric sees it, so a NaN
    never reaches a comparison."""
    if values is None:
        raise RankerFault(f"{what} returned None, expected an array of shape {_shape(shape)}")
    axes = ("index",) if features else ("index", "columns")   # a transform's columns are features, not items
    labelled = [a for a in axes if isinstance(values, (pd.Series, pd.DataFrame))
                and hasattr(values, a) and not getattr(values, a).equals(pd.RangeIndex(len(getattr(values, a))))]
    if labelled:  # np.asarray drops the labels: rows would be taken by position, not by label
        raise RankerFault(f"{what} returned a pandas {type(values).__name__} with its own {labelled[0]}, expected a "
                          "numpy array in the order of the rows it was given (e.g. .to_numpy() after reindexing)")
    if np.ma.isMaskedArray(values) and np.ma.getmaskarray(values).any():  # np.asarray drops the mask
        raise RankerFault(f"{what} returned a masked array with {int(np.ma.getmaskarray(values).sum())} masked "
                          "value(s), expected plain numbers")
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError) as exc:  # ragged lists and the like
        raise RankerFault(f"{what} returned {type(values).__name__} that is no array ({exc})") from None
    if arr.dtype.kind not in "biuf":
        raise RankerFault(f"{what} returned {type(values).__name__} of {arr.dtype} values, expected numbers")
    if len(shape) == 1 and arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != len(shape) or any(got != want if want is not None else got == 0   # no column: all ties
                                     for got, want in zip(arr.shape, shape)):
        raise RankerFault(f"{what} returned shape {arr.shape}, expected {_shape(shape)}")
    arr = arr.astype(float, copy=False)
    bad = int(arr.size - np.count_nonzero(np.isfinite(arr)))
    if bad:
        raise RankerFault(f"{what} returned {bad} non-finite value(s) (NaN or infinite) of {arr.size}")
    return arr


def _shape(shape: tuple[int | None, ...]) -> str:
    return "(" + ", ".join("any > 0" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def whole_number(label: str) -> int | None:
    """The whole number a label writes ('7', '007', '7.0' and ' 7' are 7; '-1' is -1); None for
    other text ('7.5', 'c7', '')."""
    m = re.fullmatch(r"\s*(-?\d+)(?:\.0*)?\s*", label)
    return int(m.group(1)) if m else None


def number_order(labels: np.ndarray) -> np.ndarray:
    """The order (indices) in which a seeded draw takes ``labels`` (sorted, distinct): by number
    when every label is a whole number, written as text or not ('9' before '10', as 9 before 10),
    so that one dataset read by two loaders (one giving 10, the other '10', as a table of exported
    features does) draws the same rows; as given otherwise (zero-padded labels, '009' and '010',
    are in that order already)."""
    numbers = [whole_number(s) for s in np.asarray(labels).astype(str)]
    if not numbers or None in numbers:
        return np.arange(len(numbers))
    return np.argsort(numbers, kind="stable")


def by_number(labels: np.ndarray) -> np.ndarray:
    """``labels`` (sorted, distinct) in :func:`number_order`."""
    return labels[number_order(labels)]


def label_codes(labels: np.ndarray) -> np.ndarray:
    """Each row's class (or group) as a code 0 .. k - 1, the classes in :func:`number_order`: 10
    and '10' get one code, after 9's."""
    names, inv = np.unique(labels, return_inverse=True)
    rank = np.empty(len(names), dtype=int)
    rank[number_order(names)] = np.arange(len(names))
    return rank[inv.ravel()]


def draw_per_class(rng: np.random.Generator, labels: np.ndarray, rows: np.ndarray, k: int) -> np.ndarray:
    """``k`` of ``rows`` drawn at random without replacement from each class of ``labels[rows]``,
    class after class (sorted, by number where every class is one: :func:`by_number`), in the
    order drawn."""
    rows = np.asarray(rows)
    return np.concatenate([rng.choice(rows[labels[rows] == c], int(k), replace=False)
                           for c in by_number(np.unique(labels[rows]))])


def take(X: np.ndarray | dict[str, np.ndarray], idx) -> np.ndarray | dict[str, np.ndarray]:
    """Rows ``idx`` of a feature matrix or of every view of a multi-view dict."""
    if isinstance(X, dict):
        return {k: v[idx] for k, v in X.items()}
    return X[idx]

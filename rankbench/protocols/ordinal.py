"""Ordinal image ranking: learn a metric from a few labelled images per label, predict the rest.

Yu & Li (cMDS-DML), Section 5, after Li et al. (2015): per trial, ``n_per_label`` training images
are drawn at random from every label (seeded, stratified), the rest are test images. The ranker
(a metric learner) is fitted on the training rows; each test image's label is predicted by k-nearest-
neighbour regression (the mean label of its k nearest training images, Euclidean in the learned
space) and scored by the mean absolute error ``mae``. Yu & Li do not state k; it is the protocol
parameter ``k`` (the yuli configs say which value they use and why).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..datasets.base import Dataset
from ..errors import ConfigError, DataError
from ..metrics import knn_regress, mae
from ..params import PositiveInt
from ..rankers.base import diagnostics
from ..registry import protocols
from ..utils.meter import Meter
from .base import Protocol, TrialResult, take


@protocols.register("ordinal")
class Ordinal(Protocol):
    """Ordinal ranking: n training images per label, k-NN regression of the rest; scored by MAE.

    Parameters
    ----------
    n_per_label : int
        Training images drawn per label (Yu & Li's n / m); all other images are test images.
    k : int
        Neighbours of the k-NN regression in the learned space.
    label_column : str
        The items column holding the ordinal label.
    """

    capability = ("metric",)
    headline = "mae"
    metric_families = ("mae",)

    def __init__(self, n_per_label: PositiveInt = 10, k: PositiveInt = 5, label_column: str = "label"):
        self.n_per_label = n_per_label
        self.k = k
        self.label_column = label_column

    def check_dataset(self, dataset: Dataset) -> None:
        if self.label_column not in dataset.items.columns:
            raise DataError(f"protocol ordinal needs a {self.label_column!r} column; dataset "
                            f"{dataset.name!r} has: {', '.join(dataset.items.columns)} "
                            "(for umist, give the loader a 'labels' mapping)")
        labels, counts = np.unique(dataset.column(self.label_column), return_counts=True)
        if len(labels) < 2:
            raise DataError(f"protocol ordinal: dataset {dataset.name!r} has a single label")
        short = counts <= self.n_per_label
        if short.any():
            raise ConfigError(f"protocol.n_per_label: label {labels[short][0]} of dataset {dataset.name!r} "
                              f"has only {counts[short][0]} images; n_per_label must be below that "
                              "to leave test images")

    def split(self, dataset: Dataset, rng: np.random.Generator) -> dict[str, Any]:
        y = dataset.column(self.label_column)
        train = np.concatenate([
            rng.choice(np.flatnonzero(y == lab), int(self.n_per_label), replace=False)
            for lab in np.unique(y)
        ])
        # grouped by label as in Yu & Li's Assumption 1 (the learners do not depend on the order)
        test = np.setdiff1d(np.arange(len(y)), train)
        return {"train": train.tolist(), "test": test.tolist()}

    def evaluate(self, make_ranker: Callable[[], Any], X, dataset: Dataset, split: dict[str, Any],
                 meter: Meter) -> TrialResult:
        y = dataset.column(self.label_column).astype(float)
        train = np.asarray(split["train"], dtype=int)
        test = np.asarray(split["test"], dtype=int)
        ranker = make_ranker()
        with meter.train():
            ranker.fit(take(X, train), y[train])
        with meter.test():
            z_train = ranker.transform(take(X, train))
            z_test = ranker.transform(take(X, test))
            pred = knn_regress(z_train, y[train], z_test, self.k)
        return TrialResult(metrics={"mae": mae(y[test], pred)}, extra={"diagnostics": diagnostics(ranker)})

"""Ordinal image ranking: learn a metric from a few labelled images per label, predict the rest.

Yu & Li (cMDS-DML), Section 5, after Li et al. (2015): per trial, ``n_per_label`` training images
are drawn at random from every label (seeded, stratified), the rest are test images. The ranker
(a metric learner) is fitted on the training rows; each test image's label is predicted from its k
nearest training images (Euclidean in the learned space) and scored by the mean absolute error
``mae``. Yu & Li's text says "k-nearest neighbor regression" (the mean label, ``predict: mean``)
and does not state k; their published code (github.com/mengzhicao0414/ImageRanking, cMDS_DML.m and
LDMLR.m) predicts the majority label of the ``k = K`` nearest training images instead, ties to the
smallest label (``predict: vote``, ``k: K``). Items without a label (NaN) are neither trained nor
tested on; they exist only for unsupervised, transductive feature steps (e.g. the authors' PCA over
every FG-NET image).
"""

from __future__ import annotations

from typing import Any, Callable, Literal

import numpy as np
import pandas as pd

from ..datasets.base import Dataset
from ..errors import ConfigError, DataError, InputError
from ..metrics import knn_regress, knn_vote, mae
from ..params import PositiveInt
from ..rankers.base import diagnostics
from ..registry import protocols
from ..utils.meter import Meter
from .base import Protocol, TrialResult, TrialSplit, checked_output, draw_per_class, take


@protocols.register("ordinal")
class Ordinal(Protocol):
    """Ordinal ranking: n training images per label, k-NN regression of the rest; scored by MAE.

    Parameters
    ----------
    n_per_label : int
        Training images drawn per label (Yu & Li's n / m); all other images are test images.
    k : int or "K"
        Neighbours of the prediction in the learned space; ``"K"``: the ranker's own number of
        target neighbours, as it reports it (``diagnostics_["K"]``; Yu & Li's code uses k = K).
    predict : {"mean", "vote"}
        ``mean``: k-NN regression, the mean label of the k nearest training images (the paper's
        text); ``vote``: the most frequent label among them, ties to the smallest (the authors' code).
    label_column : str
        The items column holding the ordinal label; items where it is NaN are left out.
    """

    capability = ("metric",)
    headline = "mae"
    metric_families = ("mae",)
    parameter_labels = {"n_per_label": "Training images per label", "k": "Neighbours (k)"}

    def __init__(self, n_per_label: PositiveInt = 10, k: PositiveInt | Literal["K"] = 5,
                 predict: Literal["mean", "vote"] = "mean", label_column: str = "label"):
        self.n_per_label = n_per_label
        self.k = k
        self.predict = predict
        self.label_column = label_column

    def _labels(self, dataset: Dataset) -> np.ndarray:
        """The label column as finite numbers, NaN where a cell is empty (unlabelled)."""
        raw = pd.Series(dataset.column(self.label_column), dtype=object)
        empty = raw.isna() | (raw.astype(str).str.strip() == "")
        y = pd.to_numeric(raw.where(~empty), errors="coerce").to_numpy(dtype=float)
        bad = np.flatnonzero(~empty & ~np.isfinite(y))
        if len(bad):
            raise DataError(f"protocol ordinal: dataset {dataset.name!r}, column {self.label_column!r}, row {bad[0] + 1}: "
                            f"expected a finite number (empty: unlabelled), got {raw.iat[bad[0]]!r}")
        return y

    def check_dataset(self, dataset: Dataset) -> None:
        if self.label_column not in dataset.items.columns:
            raise DataError(f"protocol ordinal needs a {self.label_column!r} column; dataset "
                            f"{dataset.name!r} has: {', '.join(dataset.items.columns)} "
                            "(for umist, give the loader a 'labels' mapping)")
        y = self._labels(dataset)
        labels, counts = np.unique(y[~np.isnan(y)], return_counts=True)
        if len(labels) < 2:
            raise DataError(f"protocol ordinal: dataset {dataset.name!r} has a single label")
        short = counts <= self.n_per_label
        if short.any():
            raise ConfigError(f"protocol.n_per_label: label {labels[short][0]:g} of dataset {dataset.name!r} "
                              f"has only {counts[short][0]} image(s); n_per_label must be below that "
                              "to leave test images")
        n_train = self.n_per_label * len(labels)
        if self.k != "K" and self.k > n_train:  # more neighbours than training images: the mean of all labels
            raise ConfigError(f"protocol.k: expected at most the {n_train} training images (n_per_label "
                              f"{self.n_per_label} x {len(labels)} labels), got {self.k}")

    def fit_sizes(self, dataset: Dataset, n_features):
        y = self._labels(dataset)
        n_labels = len(np.unique(y[~np.isnan(y)]))
        rows = (self.n_per_label * n_labels, f"protocol.n_per_label = {self.n_per_label} x {n_labels} labels")
        return {"n_features": n_features, "n_samples": rows}

    def ranker_bounds(self) -> dict[str, str]:
        # k: 'K' takes the ranker's K as the prediction's neighbours, which the training rows bound
        return {"K": "n_samples"} if self.k == "K" else {}

    def check_ranker(self, ranker: Any, where: str) -> None:
        super().check_ranker(ranker, where)
        if self.k == "K":
            target = getattr(ranker, "fit_target", ranker)
            if "K" not in (target.get_params() if hasattr(target, "get_params") else {}):
                raise ConfigError(f"{where}: protocol.k: 'K' takes the ranker's number of target "
                                  f"neighbours, and ranker {getattr(target, 'registry_name', type(target).__name__)!r} "
                                  "has no parameter K; give k a number")

    def split(self, dataset: Dataset, rng: np.random.Generator) -> dict[str, Any]:
        y = self._labels(dataset)
        labelled = ~np.isnan(y)
        train = draw_per_class(rng, y, np.flatnonzero(labelled), self.n_per_label)
        # grouped by label as in Yu & Li's Assumption 1 (the learners do not depend on the order)
        test = np.setdiff1d(np.flatnonzero(labelled), train)
        return {"train": train.tolist(), "test": test.tolist()}

    def evaluate(self, make_ranker: Callable[[], Any], X, dataset: Dataset, split: TrialSplit,
                 meter: Meter) -> TrialResult:
        y = self._labels(dataset)
        train = np.asarray(split.train, dtype=int)
        test = np.asarray(split.test, dtype=int)
        ranker = make_ranker()
        with meter.train():
            ranker.fit(take(X, train), y[train])
        k = self.k
        if k == "K":
            k = diagnostics(ranker).get("K")
            if not isinstance(k, (int, np.integer)) or k < 1:
                raise InputError("protocol ordinal: k: 'K' needs a ranker that reports its K in "
                                 "diagnostics_ (cmds_dml and ldmlr do); give k a number")
            if k > len(train):  # every test item would get the mean (or vote) of all training labels
                raise InputError(f"protocol ordinal: k: 'K' is the ranker's K = {k}, more than the {len(train)} "
                                 "training images; give a K or n_per_label that leaves K at most that")
        with meter.test():
            z_train = checked_output(ranker.transform(take(X, train)), (len(train), None), "transform",
                                     features=True)
            z_test = checked_output(ranker.transform(take(X, test)), (len(test), z_train.shape[1]), "transform",
                                    features=True)
            predict = knn_regress if self.predict == "mean" else knn_vote
            pred = predict(z_train, y[train], z_test, int(k))
        return TrialResult(metrics={"mae": mae(y[test], pred)}, extra={"diagnostics": diagnostics(ranker)})

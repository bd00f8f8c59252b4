"""Relative-attribute comparison protocol (Parikh & Grauman, ICCV 2011; Sharaf et al., BMVC 2015)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..datasets.base import Dataset
from ..errors import ConfigError, DataError
from ..metrics import grouped_pair_accuracy
from ..params import Names, PositiveInt
from ..rankers.base import diagnostics
from ..registry import protocols
from ..utils.meter import Meter
from ..utils.progress import tick
from .base import Protocol, TrialResult, TrialSplit, checked_output, draw_per_class, take


def training_pairs(strength: np.ndarray, n_max: int | None, similar: bool, rng: np.random.Generator):
    """Training pairs from category-level strengths of the training items.

    Every unordered pair of training items is a candidate: *ordered* when the strengths differ
    (oriented so ``pairs[:, 0]`` is the stronger item, sign +1) and *similar* when they are equal
    (sign 0; same category or another category of equal strength). At most ``n_max`` candidates
    are kept, drawn uniformly without replacement, so ordered and similar pairs keep their
    natural proportions.
    """
    n = len(strength)
    i, j = np.triu_indices(n, k=1)
    diff = strength[i] - strength[j]
    keep = (diff != 0) | similar
    i, j, diff = i[keep], j[keep], diff[keep]
    if n_max is not None and len(i) > n_max:
        pick = np.sort(rng.choice(len(i), size=int(n_max), replace=False))
        i, j, diff = i[pick], j[pick], diff[pick]
    swap = diff < 0
    pairs = np.column_stack([np.where(swap, j, i), np.where(swap, i, j)])
    return pairs, (diff != 0).astype(np.int64)


@protocols.register("comparison")
class Comparison(Protocol):
    """Relative attributes: learn a ranking per attribute from ordered pairs; score pair accuracy.

    Training images are the dataset's ``train`` column (PubFig's ``used_for_training``) or, when
    ``n_train_per_category`` is set (OSR has no official split), that many images per category
    drawn with the trial seed. Per attribute, training pairs are all pairs of training images
    (ordered when their categories differ in strength, "similar" when equal; see
    :func:`training_pairs`), capped at ``n_train_pairs`` (about 20,000 in Sharaf et al.). The test
    pairs are *all* pairs of test images whose strengths differ (PubFig about 120,000, OSR about
    1.8 million); they are counted with :func:`rankbench.metrics.grouped_pair_accuracy` without
    being listed. Pairs of equal strength are not scored; a tie in score counts one half (the
    metrics' tie rule). The test images must hold two strengths of every attribute (checked for
    a ``train`` column; drawn splits keep every category).

    Metrics: ``pair_acc/<attribute>`` and ``pair_acc`` (mean over attributes), as fractions.
    ``extra`` records the pair counts and, for rankers that have them, learned kernel weights.

    Parameters
    ----------
    attributes : list of str or None
        Attributes to evaluate (default: all of the dataset's).
    n_train_per_category : int or None
        Draw this many training images per category (seeded) instead of the ``train`` column.
    n_train_pairs : int or None
        Cap on training pairs per attribute.
    similar_pairs : bool
        Include pairs of equal strength in training (Parikh & Grauman's similarity constraints).
    """

    capability = ("pairwise",)
    headline = "pair_acc"
    metric_families = ("pair_acc",)
    parameter_labels = {"n_train_pairs": "Training pairs per attribute",
                        "n_train_per_category": "Training images per category"}

    def __init__(self, attributes: str | Names | None = None,
                 n_train_per_category: PositiveInt | None = None, n_train_pairs: PositiveInt | None = 20000,
                 similar_pairs: bool = True):
        self.attributes = attributes
        self.n_train_per_category = n_train_per_category
        self.n_train_pairs = n_train_pairs
        self.similar_pairs = similar_pairs

    def _attributes(self, dataset: Dataset) -> list[str]:
        names = list(dataset.info["attributes"])
        if self.attributes is None:
            return names
        wanted = [self.attributes] if isinstance(self.attributes, str) else list(self.attributes)
        unknown = [a for a in wanted if a not in names]
        if unknown:
            raise ConfigError(f"protocol.attributes: unknown attribute {unknown[0]!r} for dataset "
                              f"{dataset.name!r}; valid: {', '.join(names)}")
        return wanted

    def check_dataset(self, dataset: Dataset) -> None:
        if "strength" not in dataset.info or "attributes" not in dataset.info:
            raise DataError(f"dataset {dataset.name!r} has no relative-attribute strengths "
                            "(info['strength']); the comparison protocol needs them")
        cats = set(dataset.column("category"))
        missing = cats - set(dataset.info["strength"].index)
        if missing:
            raise DataError(f"dataset {dataset.name!r}: category {sorted(missing)[0]!r} has no strength row")
        if self.n_train_per_category is None and "train" not in dataset.items.columns:
            raise ConfigError(f"protocol.n_train_per_category: dataset {dataset.name!r} has no official "
                              "training split (no 'train' column); set n_train_per_category (e.g. 30)")
        # a side with one strength has no ordered pair: nothing to learn, or pair_acc NaN in every
        # trial. A drawn split keeps every category on both sides, so the images as a whole decide.
        sides = {"images": np.ones(len(dataset), bool)}
        if self.n_train_per_category is None:
            train = dataset.own_split()
            sides = {"training images (train true)": train, "test images (train false)": ~train}
        for attr, strength in self.strengths(dataset).items():
            for side, rows in sides.items():
                if len(np.unique(strength[rows])) < 2:
                    raise DataError(f"dataset {dataset.name!r}: the {side} all have one strength of attribute "
                                    f"{attr!r} ({strength[rows][0]:g}); expected two at least (no ordered pair)")

    def split(self, dataset: Dataset, rng: np.random.Generator) -> dict[str, Any]:
        self.check_dataset(dataset)
        cats = dataset.column("category")
        if self.n_train_per_category is None:
            is_train = dataset.own_split()
        else:
            k = int(self.n_train_per_category)
            names, counts = np.unique(cats, return_counts=True)
            short = counts <= k
            if short.any():
                raise DataError(f"dataset {dataset.name!r}: category {names[short][0]!r} has {counts[short][0]} "
                                f"images, cannot draw n_train_per_category={k} and keep test images")
            is_train = np.zeros(len(dataset), dtype=bool)
            is_train[draw_per_class(rng, cats, np.arange(len(dataset)), k)] = True
        return {
            "train": np.flatnonzero(is_train).tolist(),
            "test": np.flatnonzero(~is_train).tolist(),
            "pair_seed": int(rng.integers(2**31 - 1)),
        }

    def strengths(self, dataset: Dataset) -> dict[str, np.ndarray]:
        """Each evaluated attribute's strength of every item (its category's), by attribute."""
        cats = dataset.column("category")
        table = dataset.info["strength"]
        return {a: table[a].reindex(cats).to_numpy(dtype=float) for a in self._attributes(dataset)}

    def pairs(self, dataset: Dataset, split: TrialSplit):
        """A trial's training pairs, attribute by attribute: yields (attribute, every item's strength,
        pairs, sign), ``pairs`` as positions in the split's ``train`` rows (what ``evaluate`` fits on)."""
        train = np.asarray(split.train, dtype=int)
        rng = np.random.default_rng(split.pair_seed)
        for attr, strength in self.strengths(dataset).items():
            pairs, sign = training_pairs(strength[train], self.n_train_pairs, self.similar_pairs, rng)
            yield attr, strength, pairs, sign

    def evaluate(self, make_ranker, X, dataset: Dataset, split: TrialSplit, meter: Meter) -> TrialResult:
        train = np.asarray(split.train, dtype=int)
        test = np.asarray(split.test, dtype=int)
        metrics: dict[str, float] = {}
        extra: dict[str, Any] = {"n_train_pairs": {}, "n_similar_pairs": {}, "n_test_pairs": {}, "diagnostics": {}}
        accs = []
        n_attributes = len(self._attributes(dataset))
        for i, (attr, strength, pairs, sign) in enumerate(self.pairs(dataset, split)):
            tick("attribute", i + 1, n_attributes)
            extra["n_train_pairs"][attr] = int(len(pairs))   # counted before a ranker could write to them
            extra["n_similar_pairs"][attr] = int((sign == 0).sum())
            ranker = make_ranker()
            with meter.train():  # each attribute's rows copied afresh: a ranker that writes to its input changes no other
                ranker.fit(take(X, train), pairs, sign)
            with meter.test():
                scores = checked_output(ranker.decision_function(take(X, test)), (len(test),), "decision_function")
                acc, n_pairs = grouped_pair_accuracy(scores, strength[test])
            metrics[f"pair_acc/{attr}"] = acc
            accs.append(acc)
            extra["n_test_pairs"][attr] = int(n_pairs)
            if diagnostics(ranker):
                extra["diagnostics"][attr] = diagnostics(ranker)
        metrics["pair_acc"] = float(np.mean(accs))
        return TrialResult(metrics=metrics, extra=extra)

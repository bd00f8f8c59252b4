"""Classification with optional pairwise constraints, scored by error rate (Yan et al., PKLR).

Yan, Zhang, Yang & Hauptmann, "A Discriminative Learning Framework with Pairwise Constraints for
Video Object Classification": a few labelled examples plus pairs of unlabelled examples known to
show the same object (``same`` = 1) or different objects (0). The paper is transductive - its
constraints join examples it then classifies (Section 2.3, Figure 3; Section 4.2) - and so is this
protocol under ``split_by: random``.

Per trial (seeded):

* the *pool* is every item (``split_by: random``) or the items of the dataset's ``train`` column
  (``split_by: dataset``);
* *labelled* rows are ``n_train_per_class`` random pool items of each class, or a random
  ``train_fraction`` of the pool (under ``split_by: dataset`` with neither, the whole pool);
* *test* rows are every item not labelled (``random``) or the non-``train`` items (``dataset``);
* ``n_constraints`` distinct pairs ``(i, j, same)`` are drawn among the pool rows that are not
  labelled, uniformly over all pairs (``constraint_type: any``), over same-class pairs
  (``same``, the paper's spiral example uses 4 such pairs) or over different-class pairs
  (``different``); ``same`` comes from the ground-truth labels (the paper's simulated oracle).

Rankers see labels as codes 0..n_classes-1. A ranker whose ``fit`` takes ``constraints`` gets
``fit(X, y, constraints=C)`` where ``X`` holds the labelled rows followed by the unlabelled rows
that occur in constraints, ``y`` is -1 for the latter (scikit-learn's semi-supervised convention)
and ``C`` is an (c, 3) int array ``(i, j, same)`` of row positions in that ``X``. Other
classifiers get ``fit(X_labelled, y_labelled)``. Metric: ``error_rate`` on the test rows.

How a split hands constraints over (:func:`fit_predict`, shared with ``video_classification``):
``split.constraints`` holds ``(a, b, same)`` over an *extended* row space: ``a < n`` (the number
of items) is a dataset row, ``a = n + k`` is the mean feature of the rows ``split.means[k]``
(a tracking sequence's centroid, Yan et al. Section 4.2); such a mean is computed from each
method's own feature matrix and handed to the ranker as one more unlabelled row.
"""

from __future__ import annotations

from typing import Any, Callable, Literal

import numpy as np
import pandas as pd

from ..datasets.base import Dataset
from ..errors import ConfigError, DataError, RankerFault
from ..metrics import error_rate
from ..params import NonNegativeInt, OpenFraction, PositiveInt
from ..rankers.base import diagnostics, fit_accepts
from ..registry import protocols
from ..utils.meter import Meter
from .base import Protocol, TrialResult, TrialSplit, checked_output, draw_per_class, label_codes, take


def draw_pairs(labels: np.ndarray, rows: np.ndarray, n: int, kind: str,
               rng: np.random.Generator) -> np.ndarray:
    """``n`` distinct unordered pairs of ``rows`` with ``same`` from ``labels``, as (n, 3) ints.

    Rejection sampling in batches: uniform over all pairs of distinct rows that satisfy ``kind``
    (acceptance is at least about 1/n_classes for ``same``, so few batches are needed).
    """
    rows = np.asarray(rows)
    lab = labels[rows]
    _, counts = np.unique(lab, return_counts=True)
    n_same = int((counts * (counts - 1) // 2).sum())
    n_all = len(rows) * (len(rows) - 1) // 2
    available = {"any": n_all, "same": n_same, "different": n_all - n_same}[kind]
    if n > available:
        raise ConfigError(f"protocol.n_constraints: {n} {kind!r} pairs asked for, but only {available} "
                          f"exist among the {len(rows)} unlabelled pool rows")
    chosen: dict[tuple[int, int], None] = {}  # insertion-ordered set, for reproducibility
    while len(chosen) < n:
        a, b = rng.integers(0, len(rows), size=(2, max(4 * (n - len(chosen)), 16)))
        ok = a != b
        if kind != "any":
            ok &= (lab[a] == lab[b]) == (kind == "same")
        for i, j in zip(np.minimum(a, b)[ok], np.maximum(a, b)[ok]):
            chosen.setdefault((int(i), int(j)), None)
            if len(chosen) == n:
                break
    pairs = np.array(list(chosen), dtype=int).reshape(-1, 2)
    same = (lab[pairs[:, 0]] == lab[pairs[:, 1]]).astype(int)
    return np.column_stack([rows[pairs[:, 0]], rows[pairs[:, 1]], same])


@protocols.register("classification")
class Classification(Protocol):
    """Classification from few labels plus optional pairwise constraints (Yan et al.), error rate.

    Parameters
    ----------
    n_train_per_class : int, optional
        Labelled items drawn per class from the pool (the paper's spirals: 40).
    train_fraction : float, optional
        Or: the fraction of the pool that is labelled.
    split_by : "random" or "dataset"
        The pool is every item, or the dataset's ``train`` rows (then the other rows test).
    n_constraints : int
        Pairwise constraints drawn among unlabelled pool rows.
    constraint_type : "any", "same" or "different"
        Which pairs are drawn (see module docstring).
    label : str
        The items column holding the class label.
    """

    capability = ("classifier",)
    headline = "error_rate"
    metric_families = ("error_rate",)
    parameter_labels = {"n_train_per_class": "Labelled items per class", "train_fraction": "Labelled fraction"}

    def __init__(self, n_train_per_class: PositiveInt | None = None, train_fraction: OpenFraction | None = None,
                 split_by: Literal["random", "dataset"] = "random", n_constraints: NonNegativeInt = 0,
                 constraint_type: Literal["any", "same", "different"] = "any", label: str = "label"):
        self.n_train_per_class = n_train_per_class
        self.train_fraction = train_fraction
        self.split_by = split_by
        self.n_constraints = n_constraints
        self.constraint_type = constraint_type
        self.label = label

    # ------------------------------------------------------------------ checks
    def check_dataset(self, dataset: Dataset) -> None:
        if self.n_train_per_class is not None and self.train_fraction is not None:
            raise ConfigError("protocol: give n_train_per_class or train_fraction, not both")
        if self.split_by == "random" and self.n_train_per_class is None and self.train_fraction is None:
            raise ConfigError("protocol: split_by random needs n_train_per_class or train_fraction")
        if (self.split_by == "dataset" and self.n_constraints and self.n_train_per_class is None
                and self.train_fraction is None):
            raise ConfigError("protocol.n_constraints: with split_by dataset and neither n_train_per_class nor "
                              "train_fraction every pool row is labelled, leaving none for constraints")
        y = dataset.column(self.label)
        missing = np.flatnonzero(pd.isna(y))
        if len(missing):  # NaN is no class (np.unique would make each one a class of its own)
            raise DataError(f"protocol classification: dataset {dataset.name!r}, column {self.label!r}, row "
                            f"{missing[0] + 1}: expected a class, got none ({len(missing)} such row(s))")
        pool = self._pool(dataset)
        if self.n_train_per_class is not None:
            classes, counts = np.unique(y[pool], return_counts=True)
            if counts.min() < self.n_train_per_class:
                c = classes.tolist()[np.argmin(counts)]  # a Python value: text labels are str already
                raise ConfigError(f"protocol.n_train_per_class: {self.n_train_per_class} asked for, but class "
                                  f"{c!r} has only {counts.min()} items in the pool of dataset {dataset.name!r}")
        if len(np.unique(y[pool])) < 2:
            raise DataError(f"protocol classification: dataset {dataset.name!r} has fewer than two classes"
                            + (" among its training rows (column 'train')" if self.split_by == "dataset" else ""))

    def _pool(self, dataset: Dataset) -> np.ndarray:
        if self.split_by == "dataset":
            return np.flatnonzero(dataset.own_split())
        return np.arange(len(dataset))

    # ------------------------------------------------------------------ split
    def split(self, dataset: Dataset, rng: np.random.Generator) -> dict[str, Any]:
        y = dataset.column(self.label)
        pool = self._pool(dataset)
        if self.n_train_per_class is not None:
            labelled = draw_per_class(rng, y, pool, self.n_train_per_class)
        elif self.train_fraction is not None:
            labelled = rng.permutation(pool)[: int(round(self.train_fraction * len(pool)))]
        else:
            labelled = pool
        labelled = np.sort(labelled)
        unlabelled_pool = np.setdiff1d(pool, labelled)
        if self.split_by == "dataset":
            test = np.flatnonzero(~dataset.own_split())
        else:
            test = unlabelled_pool
        constraints = (draw_pairs(y, unlabelled_pool, int(self.n_constraints), self.constraint_type, rng)
                       if self.n_constraints else np.zeros((0, 3), int))
        return {"train": labelled.tolist(), "test": test.tolist(), "constraints": constraints.tolist()}

    # ------------------------------------------------------------------ evaluate
    def evaluate(self, make_ranker: Callable[[], Any], X, dataset: Dataset, split: TrialSplit,
                 meter: Meter) -> TrialResult:
        codes = label_codes(dataset.column(self.label))
        test = np.asarray(split.test, dtype=int)
        pred, ranker, used = fit_predict(make_ranker, X, codes, split, meter)
        return TrialResult(metrics={"error_rate": error_rate(codes[test], pred)},
                           extra={"n_train": len(split.train), "n_test": len(test),
                                  "n_constraints": len(getattr(split, "constraints", [])),
                                  "constraints_used": used, "diagnostics": diagnostics(ranker)})


def extended_rows(X, idx: np.ndarray, means: list[list[int]], n: int):
    """Rows ``idx`` of the extended row space: ``i < n`` is row i of ``X``, ``n + k`` the mean of
    the rows ``means[k]``; ``X`` may be one matrix or a dict of views (each averaged alike)."""
    from scipy.sparse import csr_matrix

    idx = np.asarray(idx, dtype=int)
    real = idx < n
    virtual = idx[~real] - n
    sizes = np.array([len(means[k]) for k in virtual], dtype=int)
    cols = np.concatenate([np.asarray(means[k], dtype=int) for k in virtual]) if len(virtual) else np.zeros(0, int)
    avg = csr_matrix((np.repeat(1.0 / np.maximum(sizes, 1), sizes), (np.repeat(np.arange(len(virtual)), sizes), cols)),
                     shape=(len(virtual), n))

    def one(A: np.ndarray) -> np.ndarray:
        A2 = A.reshape(len(A), -1)
        out = np.empty((len(idx), A2.shape[1]), dtype=np.result_type(A2.dtype, np.float64))
        out[real] = A2[idx[real]]
        out[~real] = avg @ A2
        return out.reshape((len(idx),) + A.shape[1:])

    return {k: one(v) for k, v in X.items()} if isinstance(X, dict) else one(X)


def fit_predict(make_ranker: Callable[[], Any], X, codes: np.ndarray, split: TrialSplit,
                meter: Meter, groups: np.ndarray | None = None) -> tuple[np.ndarray, Any, bool]:
    """Fit a fresh ranker on a split's labelled rows (and its constraints, if its ``fit`` takes
    them) and predict the test rows: (predicted codes, the fitted ranker, constraints used?).

    The constraint-taking ``fit`` gets the labelled rows, then every other row a constraint names
    (a dataset row or a sequence mean, see the module docstring) with ``y = -1``, and the
    constraints as positions in that matrix. ``groups`` (one id per dataset row, e.g. its tracking
    sequence) reach a ``fit`` that takes ``groups``, for the rows it gets (-1 for a sequence mean),
    so that a classifier choosing its own hyper-parameters holds out whole groups.
    """
    train = np.asarray(split.train, dtype=int)
    test = np.asarray(split.test, dtype=int)
    C = np.asarray(getattr(split, "constraints", []), dtype=int).reshape(-1, 3)
    means = getattr(split, "means", [])
    n = len(codes)
    ranker = make_ranker()
    use_c = len(C) > 0 and fit_accepts(ranker, "constraints")
    if use_c:
        extra = np.setdiff1d(np.unique(C[:, :2]), train)
        rows = np.concatenate([train, extra])
        pos = np.full(n + len(means), -1)
        pos[rows] = np.arange(len(rows))
        Xf = extended_rows(X, rows, means, n)
        y_fit = np.concatenate([codes[train], np.full(len(extra), -1)])
        kwargs = {"constraints": np.column_stack([pos[C[:, 0]], pos[C[:, 1]], C[:, 2]])}
    else:
        Xf, y_fit, kwargs = take(X, train), codes[train], {}
    if groups is not None and fit_accepts(ranker, "groups"):
        g = np.r_[np.asarray(groups), np.full(len(means), -1)]
        kwargs["groups"] = g[rows] if use_c else g[train]
    with meter.train():
        ranker.fit(Xf, y_fit, **kwargs)
    with meter.test():
        pred = checked_output(ranker.predict(take(X, test)), (len(test),), "predict")
    top = int(codes.max())
    bad = (pred != np.round(pred)) | (pred < 0) | (pred > top)
    if bad.any():  # a probability, a +-1 label or another coding would be scored as a wrong class
        raise RankerFault(f"predict returned {pred[bad][0]:g} ({int(bad.sum())} such value(s)), expected the class "
                          f"codes fit's y uses, 0..{top}")
    return pred, ranker, bool(use_c)

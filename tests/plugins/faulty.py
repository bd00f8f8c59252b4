"""Rankers that misbehave on purpose, one per capability (loaded by file path in the tests), and a
tiny generated tracking set for the video protocol.

Each ranker does its job honestly (a simple, deterministic method) unless its ``fault`` is armed:
``nan`` / ``inf`` put one non-finite value into what it returns, ``shape`` drops a row, ``none``
returns None, ``text`` returns strings, ``fit`` / ``score`` raise in that step, ``exit`` calls
``sys.exit`` in fit. The fault is armed while the file ``armed`` exists (always when ``armed`` is
None), so a test can let a run fail and then let ``--resume`` succeed.
"""

import os
import signal
import sys
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
from scipy.spatial.distance import cdist
from sklearn.base import BaseEstimator

from rankbench.datasets.base import Dataset, Loader, fingerprint_arrays
from rankbench.rankers.base import Classifier, ItemScorer, MetricLearner, PairScorer, PairwiseRanker

FAULTS = ("nan", "inf", "shape", "none", "text", "fit", "score", "exit")
Fault = Literal["nan", "inf", "shape", "none", "text", "fit", "score", "exit", "off"]


class _Faulty(BaseEstimator):
    def __init__(self, fault: Fault = "off", armed: str | None = None):
        self.fault = fault
        self.armed = armed

    def _on(self, fault: str) -> bool:
        return self.fault == fault and (self.armed is None or Path(self.armed).exists())

    def _fit(self) -> None:
        if self._on("fit"):
            raise ValueError("broken on purpose in fit")
        if self._on("exit"):
            sys.exit(3)

    def _out(self, values: np.ndarray):
        """What the ranker returns: ``values``, or them spoilt by the armed fault."""
        values = np.array(values, dtype=float)
        if self._on("score"):
            raise RuntimeError("broken on purpose in score")
        if self._on("nan") or self._on("inf"):
            values.flat[0] = np.nan if self.fault == "nan" else np.inf
        if self._on("shape"):
            return values[:-1]
        if self._on("none"):
            return None
        if self._on("text"):
            return values.astype(str)
        return values


class FaultyPairScorer(PairScorer, _Faulty):
    """L1 matching (re-identification)."""

    def fit(self, X, y, cams=None):
        self._fit()
        return self

    def similarity(self, Q, G):
        return self._out(-cdist(Q, G, "cityblock"))


class FaultyMetric(MetricLearner, _Faulty):
    """The identity embedding (ordinal)."""

    def fit(self, X, y):
        self._fit()
        return self

    def transform(self, X):
        return self._out(np.asarray(X, float))


class FaultyPairwise(PairwiseRanker, _Faulty):
    """The first feature as the score (relative attributes)."""

    def fit(self, X, pairs, sign):
        self._fit()
        return self

    def decision_function(self, X):
        return self._out(np.asarray(X, float)[:, 0])


class FaultyItemScorer(ItemScorer, _Faulty):
    """The projection on the difference of the class means (retrieval, stacked retrieval)."""

    def fit(self, X, y):
        self._fit()
        X, y = np.asarray(X, float), np.asarray(y)
        self.w_ = X[y > 0].mean(0) - X[y <= 0].mean(0)
        return self

    def decision_function(self, X):
        return self._out(np.asarray(X, float) @ self.w_)


class FaultyClassifier(Classifier, _Faulty):
    """The nearest class mean (classification, video classification)."""

    def fit(self, X, y):
        self._fit()
        X, y = np.asarray(X, float), np.asarray(y)
        self.classes_ = np.unique(y[y >= 0])
        self.means_ = np.stack([X[y == c].mean(0) for c in self.classes_])
        return self

    def predict(self, X):
        return self._out(self.classes_[np.argmin(cdist(np.asarray(X, float), self.means_), axis=1)])


class TinyTracks(Loader):
    """3 people, 4 tracking sequences each of 3 crops, 2-D features (``feat``)."""

    def __init__(self, random_state: int = 0):
        self.random_state = random_state

    def load(self, data_root=None) -> Dataset:
        rng = np.random.default_rng(self.random_state)
        rows = [(who, start + 30 * k + 9 * j, (who, k)) for who, start in ((10, 0), (20, 50), (30, 100))
                for k in range(4) for j in range(3)]
        ident, frame, key = zip(*rows)
        keys = sorted(set(key))
        seq = np.array([keys.index(k) for k in key])
        items = pd.DataFrame({"id": [f"{i}_{f}" for i, f in zip(ident, frame)], "identity": ident,
                              "frame": frame, "sequence": seq, "group": ident})
        centre = {10: [0.0, 0.0], 20: [1.5, 0.0], 30: [0.0, 1.5]}
        X = np.array([centre[i] for i in ident]) + 0.3 * rng.normal(size=(len(ident), 2))
        return Dataset(name="tiny_tracks", items=items, arrays={"feat": X}, fingerprint=fingerprint_arrays(X))


class Abstract(PairScorer, BaseEstimator):
    """A pair scorer without ``similarity``: cannot be instantiated."""

    def fit(self, X, y, cams=None):
        return self


class InitRaises(PairScorer, BaseEstimator):
    """A pair scorer whose ``__init__`` raises."""

    def __init__(self, scale: float = 1.0):
        raise RuntimeError("broken on purpose in __init__")

    def fit(self, X, y, cams=None):
        return self

    def similarity(self, Q, G):
        return -cdist(Q, G)


class KillsItsWorker(PairScorer, BaseEstimator):
    """A pair scorer whose fit kills its own process, as the out-of-memory killer would, but only in
    a worker: never in process ``parent`` (the test's own)."""

    def __init__(self, parent: int = 0):
        self.parent = parent

    def fit(self, X, y, cams=None):
        if os.getpid() != self.parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return self

    def similarity(self, Q, G):
        return -cdist(Q, G)

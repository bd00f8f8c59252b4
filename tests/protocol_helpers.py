"""Helpers that several protocol tests share: a classifier that records its input, one split-and-evaluate.

Import it as ``protocol_helpers`` (tests/ is on sys.path; see toydata.py).
"""

import numpy as np

from rankbench.rankers.base import Classifier
from rankbench.records import TrialSplit
from rankbench.utils.meter import Meter


class Recorder(Classifier):
    """Remembers what fit received; predicts class code 0."""

    def fit(self, X, y, constraints=None):
        self.X, self.y, self.constraints = X, y, constraints
        return self

    def predict(self, X):
        return np.zeros(len(X), int)


def evaluate_with(ranker, protocol, X, ds, seed=0):
    """Check ds, draw one split with the given seed and evaluate ranker on it; returns (split, results)."""
    protocol.check_dataset(ds)
    sp = protocol.split(ds, np.random.default_rng(seed))
    return sp, protocol.evaluate(lambda: ranker, X, ds, TrialSplit.drawn(sp), Meter(measure_memory=False))

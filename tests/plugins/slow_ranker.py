"""A user's ranker outside any package (loaded by file path in the tests): L1 matching that takes
its time in fit, so that a run can be interrupted reliably."""

import time
import warnings
from pathlib import Path

import numpy as np
from scipy.spatial.distance import cdist
from sklearn.base import BaseEstimator

from rankbench.rankers.base import PairScorer
from rankbench.utils.progress import tick


class SlowL1(PairScorer, BaseEstimator):
    """L1 matching that sleeps ``delay`` seconds in fit and, given a ``gate`` file, then waits until
    that file exists (at most 10 minutes; ``<gate>.reached`` says a fit has got there): a test holds
    a run open for as long as it needs, on a machine of any speed, by creating the gate only after
    it has interrupted or hurt the run.
    With ``ticks`` the sleep is cut into that many steps, each reported as fit progress; ``warn``
    is a warning the fit raises."""

    def __init__(self, delay: float = 0.3, gate: str | None = None, ticks: int = 0, warn: str | None = None):
        self.delay = delay
        self.gate = gate
        self.ticks = ticks
        self.warn = warn

    def fit(self, X, y, cams=None):
        if self.warn:
            warnings.warn(self.warn)
        for i in range(self.ticks):
            time.sleep(self.delay / self.ticks)
            tick("step", i + 1, self.ticks)
        if not self.ticks:
            time.sleep(self.delay)
        if self.gate is not None:
            Path(f"{self.gate}.reached").touch()  # a job is waiting at the gate
            deadline = time.monotonic() + 600
            while not Path(self.gate).exists():
                if time.monotonic() > deadline:
                    raise TimeoutError(f"gate {self.gate} never opened")
                time.sleep(0.02)
        self.n_features_in_ = np.asarray(X).shape[1]
        return self

    def similarity(self, Q, G):
        return -cdist(Q, G, "cityblock")

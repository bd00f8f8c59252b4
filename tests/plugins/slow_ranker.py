"""A user's ranker outside any package (loaded by file path in the tests): L1 matching that takes
its time in fit, so that a run can be interrupted reliably."""

import time

import numpy as np
from scipy.spatial.distance import cdist
from sklearn.base import BaseEstimator

from rankbench.rankers.base import PairScorer


class SlowL1(PairScorer, BaseEstimator):
    """L1 matching that sleeps ``delay`` seconds in fit."""

    def __init__(self, delay: float = 0.3):
        self.delay = delay

    def fit(self, X, y, cams=None):
        time.sleep(self.delay)
        self.n_features_in_ = np.asarray(X).shape[1]
        return self

    def similarity(self, Q, G):
        return -cdist(Q, G, "cityblock")

"""A ranker with unsupervised preprocessing steps in front of it.

The steps are fitted on exactly the rows passed to ``fit`` (the protocol's training rows) and
applied to every matrix the ranker later scores. Whatever capability the inner ranker has, the
wrapper forwards.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class Preprocessed:
    """``steps`` (fitted transformers) followed by ``inner_ranker``."""

    def __init__(self, steps: list[Any], inner_ranker: Any):
        self.steps = steps
        self.inner_ranker = inner_ranker

    def _apply(self, X):
        for step in self.steps:
            X = step.transform(X)
        return X

    def fit(self, X, *args, **kwargs):
        for step in self.steps:
            X = step.fit(X).transform(X)
        self.inner_ranker.fit(X, *args, **kwargs)
        return self

    def similarity(self, Q, G):
        return self.inner_ranker.similarity(self._apply(Q), self._apply(G))

    def transform(self, X):
        return self.inner_ranker.transform(self._apply(X))

    def decision_function(self, X) -> np.ndarray:
        return self.inner_ranker.decision_function(self._apply(X))

    def predict(self, X):
        return self.inner_ranker.predict(self._apply(X))

    def __getattr__(self, name):
        # fitted attributes (coef_, kernel_weights_ ...) are read through to the ranker
        if name.startswith("__") or name in ("steps", "inner_ranker"):
            raise AttributeError(name)
        return getattr(self.inner_ranker, name)

"""A ranker with unsupervised preprocessing steps in front of it: scikit-learn's Pipeline, plus the
one scoring method scikit-learn does not know (``similarity``) and the fit arguments rankers take.

The steps are fitted on the training rows passed to ``fit`` and applied to every matrix the ranker
later scores, so nothing from the test split leaks into them. A fit with ``constraints`` (semi-
supervised: the unlabelled rows the constraints name come with ``y = -1``, as in scikit-learn's
``semi_supervised``) has its steps fitted on the labelled rows only, then applied to all.
Protocols see the ranker's own capabilities through :attr:`ranker_capabilities`.
"""

from __future__ import annotations

import numpy as np
from sklearn.pipeline import Pipeline

from ..rankers.base import capabilities


class RankerPipeline(Pipeline):
    """``steps[:-1]`` (transformers) followed by a ranker; see the module docstring."""

    def fit(self, X, *args, **kwargs):
        """Fit every step on the training rows of ``X`` (all of them; the labelled ones of a fit with
        ``constraints``), then the ranker with the protocol's arguments."""
        Xt = X
        labelled = np.asarray(args[0]) != -1 if "constraints" in kwargs and args else None
        for _, step in self.steps[:-1]:
            Xt = step.fit_transform(Xt) if labelled is None else step.fit(Xt[labelled]).transform(Xt)
        self._final_estimator.fit(Xt, *args, **kwargs)
        return self

    def _pre(self, X):
        for _, step in self.steps[:-1]:
            X = step.transform(X)
        return X

    def similarity(self, Q, G):
        return self._final_estimator.similarity(self._pre(Q), self._pre(G))

    @property
    def ranker_capabilities(self) -> frozenset[str]:
        return capabilities(self._final_estimator)

    @property
    def fit_target(self):
        """The estimator whose ``fit`` receives the protocol's extra arguments."""
        return self._final_estimator

    @property
    def diagnostics_(self) -> dict:
        return getattr(self._final_estimator, "diagnostics_", {})

"""A ranker with unsupervised preprocessing steps in front of it: scikit-learn's Pipeline, plus the
one scoring method scikit-learn does not know (``similarity``) and the fit arguments rankers take.

The steps are fitted on exactly the rows passed to ``fit`` (the protocol's training rows) and
applied to every matrix the ranker later scores, so nothing from the test split leaks into them.
Protocols see the ranker's own capabilities through :attr:`ranker_capabilities`.
"""

from __future__ import annotations

from sklearn.pipeline import Pipeline

from ..rankers.base import capabilities


class RankerPipeline(Pipeline):
    """``steps[:-1]`` (transformers) followed by a ranker; see the module docstring."""

    def fit(self, X, *args, **kwargs):
        """Fit every step on ``X`` (the training rows), then the ranker with the protocol's arguments."""
        Xt = X
        for _, step in self.steps[:-1]:
            Xt = step.fit_transform(Xt)
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

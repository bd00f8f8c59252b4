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

from ..errors import RankerFault
from ..rankers.base import capabilities


class RankerPipeline(Pipeline):
    """``steps[:-1]`` (transformers) followed by a ranker; see the module docstring."""

    def fit(self, X, *args, **kwargs):
        """Fit every step on the training rows of ``X`` (all of them; the labelled ones of a fit with
        ``constraints``), then the ranker with the protocol's arguments."""
        Xt = X
        labelled = np.asarray(args[0]) != -1 if "constraints" in kwargs and args else None
        for name, step in self.steps[:-1]:
            Xt = _finite(name, step.fit_transform(Xt) if labelled is None else step.fit(Xt[labelled]).transform(Xt))
        self._final_estimator.fit(Xt, *args, **kwargs)
        return self

    def _pre(self, X):
        for name, step in self.steps[:-1]:
            X = _finite(name, step.transform(X))
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


def _finite(name: str, Z):
    """A step's output, refused naming the step when it holds a non-finite value (an overflow, a
    division by a zero range): the ranker would blame the features it was given."""
    if isinstance(Z, np.ndarray) and Z.dtype.kind == "f" and not np.isfinite(Z).all():
        raise RankerFault(f"preprocess step {name!r} returned {int((~np.isfinite(Z)).sum())} non-finite value(s) "
                          "from finite features; check its parameters")
    return Z

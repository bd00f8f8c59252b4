"""The contracts between protocols and rankers.

Rankers are scikit-learn estimators (``__init__`` stores parameters, ``fit`` returns self,
``random_state`` where randomness enters). A ranker never knows which paper or dataset it serves;
it declares which *capabilities* it has, and each protocol asks for the one it needs:

========================  ==========================================================  =============
capability (mixin)        methods                                                     protocols
========================  ==========================================================  =============
:class:`PairScorer`       ``fit(X, y, cams=None)``; ``similarity(Q, G) -> (nq, ng)``  reid
:class:`MetricLearner`    ``fit(X, y)``; ``transform(X) -> (n, s)``                   ordinal, reid
:class:`ItemScorer`       ``fit(X, y)``; ``decision_function(X) -> (n,)``             retrieval
:class:`PairwiseRanker`   ``fit(X, pairs, sign)``; ``decision_function(X) -> (n,)``   comparison
:class:`Classifier`       ``fit(X, y, constraints=None)``; ``predict(X)``             classification
========================  ==========================================================  =============

* In ``PairScorer.fit``, ``y`` are identities and ``cams`` the camera/view of each row; a larger
  similarity means a more likely match.
* A ``MetricLearner`` is usable by the reid protocol too: similarity = -||T(q) - T(g)||.
* In ``PairwiseRanker.fit``, ``pairs`` is an (p, 2) int array of row indices of ``X`` and ``sign``
  is +1 where item ``pairs[:, 0]`` has more of the attribute than ``pairs[:, 1]`` and 0 where
  they have equal strength.
* ``constraints`` for classifiers is an (c, 3) int array ``(i, j, same)`` over rows of ``X``.
  Labels come as codes 0..K-1; unlabelled rows that occur in constraints follow the labelled rows
  in ``X`` with ``y = -1`` (scikit-learn's mark for unlabelled). The protocol passes
  ``constraints`` only to rankers whose ``fit`` accepts it (:func:`fit_accepts`).
* ``X`` is a 2-D float array, or, for rankers that set ``accepts_views = True``, a dict
  ``{view name: 2-D array}`` (multiple-kernel learners).
"""

from __future__ import annotations

import numpy as np


class PairScorer:
    """Capability: score (probe, gallery) pairs; used by the re-identification protocol."""

    capabilities = ("pair_scorer",)


class MetricLearner:
    """Capability: a learned linear map / embedding; used by ordinal and re-id protocols."""

    capabilities = ("metric",)

    def similarity(self, Q: np.ndarray, G: np.ndarray) -> np.ndarray:
        from scipy.spatial.distance import cdist

        return -cdist(self.transform(Q), self.transform(G), "sqeuclidean")


class ItemScorer:
    """Capability: score single items for relevance; used by the retrieval protocol."""

    capabilities = ("item_scorer",)


class PairwiseRanker:
    """Capability: learn a scoring function from ordered pairs; used by the comparison protocol."""

    capabilities = ("pairwise",)


class Classifier:
    """Capability: predict class labels; used by the classification protocol."""

    capabilities = ("classifier",)


def capabilities(est) -> set[str]:
    inner = getattr(est, "inner_ranker", None)
    if inner is not None:
        return capabilities(inner)
    caps: set[str] = set()
    for klass in type(est).__mro__:
        caps.update(klass.__dict__.get("capabilities", ()))
    return caps


def accepts_views(est) -> bool:
    inner = getattr(est, "inner_ranker", None)
    return accepts_views(inner) if inner is not None else bool(getattr(est, "accepts_views", False))


def fit_accepts(est, name: str) -> bool:
    """Whether the (innermost) ranker's ``fit`` takes a keyword ``name`` (e.g. ``constraints``)."""
    import inspect

    inner = getattr(est, "inner_ranker", None)
    if inner is not None:
        return fit_accepts(inner, name)
    params = inspect.signature(est.fit).parameters
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())

"""A compared method (:class:`MethodSpec`): a ranker entry of a config, or an estimator object a
Python user holds (``app.evaluate``); both are a :class:`~rankbench.components.ComponentSpec`.

Every job builds a fresh, unfitted ranker (for an object, :func:`sklearn.base.clone`; a deep copy
for an object that is not a scikit-learn estimator), seeded from the trial when its
``random_state`` is None, so its numbers depend only on the run seed and the trial.

An object that declares a capability (a mixin of :mod:`rankbench.rankers.base`) runs as it is. One
that declares none, such as a plain scikit-learn classifier, is taken for the capability the
protocol asks for when it has that capability's methods and its ``fit`` takes the protocol's
arguments (:func:`duck_capability`); it then runs inside :class:`Declared`, a thin wrapper that
states the capability and passes everything else to the object.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

from sklearn.base import BaseEstimator

from ..components import ComponentSpec
from ..rankers.base import capability_mixins
from .pipeline import RankerPipeline


@dataclass
class MethodSpec:
    """Everything needed to build one compared method's fresh estimator, in any process.

    ``ranker`` is kept by name (a registry name or an import path), not as a class, so a worker
    process resolves it itself (users' classes from a file outside any package work in workers),
    or as an object. ``steps`` are the preprocessing steps in front of it (:class:`RankerPipeline`).
    ``capability`` is set (by the plan) only for an object that declares none of its own.
    """

    name: str
    ranker: ComponentSpec
    feature_sets: list[str]
    combine: str
    steps: list[ComponentSpec] = field(default_factory=list)
    capability: str | None = None
    #: why the ranker cannot be built (its class is abstract, its ``__init__`` raised), found when
    #: planning: every job of the method then fails with it, the other methods run
    fault: str | None = None

    def make(self, seed: int | None = None):
        est = self.ranker.build(seed)
        if self.capability:
            est = Declared(est, self.capability)
        if not self.steps:
            return est
        steps = [(f"{step.name}_{i}", step.build()) for i, step in enumerate(self.steps)]
        return RankerPipeline(steps + [("ranker", est)])


def _takes_arguments_of(fit, mixin_fit) -> bool:
    """Whether ``fit`` takes what the mixin's ``fit`` takes, as protocols pass it: the data first,
    then the other required arguments under the contract's names (``y``; ``pairs, sign``), and
    its optional ones by keyword (``cams``). Names matter: ``fit(X, y, sample_weight)`` is not
    ``fit(X, pairs, sign)``."""
    try:
        params = list(inspect.signature(fit).parameters.values())
    except (TypeError, ValueError):
        return False
    wanted = list(inspect.signature(mixin_fit).parameters.values())[1:]   # without self
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    named = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    any_keyword = any(p.kind is p.VAR_KEYWORD for p in params)
    required = [p.name for p in wanted if p.default is p.empty]
    if len(positional) < len(required) or [p.name for p in positional[1:len(required)]] != required[1:]:
        return False
    if any(p.default is p.empty for p in positional[len(required):]) or \
            any(p.kind is p.KEYWORD_ONLY and p.default is p.empty for p in params):
        return False   # it would need an argument no protocol gives
    return all(any_keyword or p.name in named for p in wanted if p.default is not p.empty)


def duck_capability(est: Any, wanted: tuple[str, ...]) -> str | None:
    """The first capability of ``wanted`` (a protocol's, in its order) whose methods ``est`` has,
    with a ``fit`` that takes that capability's arguments; None when it has none of them."""
    mixins = capability_mixins()
    for name in wanted:
        mixin = mixins.get(name)
        if mixin is None:
            continue
        methods = sorted(mixin.__abstractmethods__)
        if all(callable(getattr(est, m, None)) for m in methods) and _takes_arguments_of(est.fit, mixin.fit):
            return name
    return None


class Declared(BaseEstimator):
    """An estimator that declares no capability, run as one: states ``capability`` to protocols
    and passes every call (``fit``, scoring, ``diagnostics_``, ``staged_decision_function``...)
    to ``estimator``."""

    def __init__(self, estimator: Any = None, capability: str = ""):
        self.estimator = estimator
        self.capability = capability

    @property
    def ranker_capabilities(self) -> frozenset[str]:
        return frozenset({self.capability})

    @property
    def fit_target(self):
        """The object whose ``fit`` receives the protocol's arguments (see ``fit_accepts``)."""
        return self.estimator

    def fit(self, *args, **kwargs):
        self.estimator.fit(*args, **kwargs)
        return self

    def __getattr__(self, name: str):
        if name.startswith("_") or name in ("estimator", "capability"):  # unpickling, copying, sklearn
            raise AttributeError(name)
        return getattr(self.estimator, name)

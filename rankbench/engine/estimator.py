"""A compared method (:class:`MethodSpec`): a ranker entry of a config, or an estimator object a
Python user holds (``app.evaluate``); both are a :class:`~rankbench.components.ComponentSpec`.

Every job builds a fresh, unfitted ranker, seeded from the trial when its ``random_state`` is
None, so its numbers depend only on the run seed and the trial. An object that declares no
capability (a mixin of :mod:`rankbench.rankers.base`) is taken, when the run is planned, for the
first capability of the protocol whose methods it has (:func:`duck_capability`) and runs inside
:class:`Declared`; one that has the methods of none is refused, naming what each needs (:func:`needs`).
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
        # a step's random_state left None gets the trial's seed too (a random projection, a randomised SVD)
        steps = [(f"{step.name}_{i}", step.build(seed)) for i, step in enumerate(self.steps)]
        return RankerPipeline(steps + [("ranker", est)])


def _takes_arguments_of(fit, mixin_fit) -> bool:
    """Whether ``fit`` takes what the mixin's ``fit`` requires, as protocols pass it: the data
    first, then the other required arguments under the contract's names (``y``; ``pairs, sign``).
    Names matter: ``fit(X, y, sample_weight)`` is not ``fit(X, pairs, sign)``. An optional argument
    of the contract (``cams``) is passed only where ``fit`` takes it (:meth:`Declared.fit`)."""
    try:
        params = list(inspect.signature(fit).parameters.values())
    except (TypeError, ValueError):
        return False
    wanted = list(inspect.signature(mixin_fit).parameters.values())[1:]   # without self
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p.name for p in wanted if p.default is p.empty]
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return True
    if len(positional) < len(required) or [p.name for p in positional[1:len(required)]] != required[1:]:
        return False
    # an argument no protocol gives makes it unusable
    return not (any(p.default is p.empty for p in positional[len(required):])
                or any(p.kind is p.KEYWORD_ONLY and p.default is p.empty for p in params))


def _contract(name: str) -> tuple[type | None, list[str]]:
    """A capability's mixin and the methods an object needs to be taken for it (``fit`` first)."""
    mixin = capability_mixins().get(name)
    if mixin is None:
        return None, []
    methods = sorted(mixin.__abstractmethods__ | {"fit"}, key=lambda m: (m != "fit", m))
    return mixin, methods


def _signature(mixin: type, method: str) -> str:
    """``similarity(Q, G)``: a contract method as the rankers' table writes it."""
    fn = getattr(mixin, method, None)
    if fn is None:
        return f"{method}(...)"
    params = list(inspect.signature(fn).parameters.values())[1:]
    return f"{method}({', '.join(str(p) for p in params)})"


def _gaps(est: Any, name: str) -> list[str]:
    """What ``est`` lacks to be taken for capability ``name``: missing methods, or a ``fit`` that
    takes other arguments; empty when it has everything."""
    mixin, methods = _contract(name)
    if mixin is None:
        return [f"{name} is not a capability"]
    missing = [m for m in methods if not callable(getattr(est, m, None))]
    if not missing and not _takes_arguments_of(est.fit, mixin.fit):
        return [f"its fit takes other arguments than {_signature(mixin, 'fit')}"]
    return [f"missing {', '.join(missing)}"] if missing else []


def duck_capability(est: Any, wanted: tuple[str, ...]) -> str | None:
    """The first capability of ``wanted`` (a protocol's, in its order) whose methods ``est`` has,
    with a ``fit`` that takes that capability's arguments; None when it has none of them."""
    return next((name for name in wanted if _contract(name)[0] is not None and not _gaps(est, name)), None)


def needs(est: Any, wanted: tuple[str, ...]) -> str:
    """What each capability of ``wanted`` needs and what ``est`` lacks of it, in one line:
    ``pair_scorer: fit(X, y, cams=None), similarity(Q, G) (missing similarity); ...``."""
    out = []
    for name in wanted:
        mixin, methods = _contract(name)
        if mixin is not None:
            gaps = _gaps(est, name)
            out.append(f"{name}: {', '.join(_signature(mixin, m) for m in methods)}"
                       + (f" ({'; '.join(gaps)})" if gaps else ""))
    return "; ".join(out)


def _defaults(capability: str) -> dict[str, Any]:
    """The methods a capability's mixin gives its rankers (``MetricLearner.similarity``:
    -squared Euclidean distance of the learned transform; ``LossDecoder.decoding_losses``)."""
    mixin, _ = _contract(capability)
    if mixin is None:
        return {}
    return {n: f for n, f in vars(mixin).items() if inspect.isfunction(f) and not n.startswith("_")
            and not getattr(f, "__isabstractmethod__", False)}


class Declared(BaseEstimator):
    """An estimator that declares no capability, run as one: states ``capability`` to protocols
    and passes every call (``fit``, scoring, ``diagnostics_``, ``staged_decision_function``...)
    to ``estimator``; a method the object lacks and the capability's mixin defines (a
    ``MetricLearner``'s ``similarity`` = -squared Euclidean distance of ``transform``) is the mixin's."""

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
        """The object's ``fit``, without the contract's optional arguments it does not take
        (``cams`` for a pair scorer whose ``fit`` is ``fit(X, y)``)."""
        params = inspect.signature(self.estimator.fit).parameters
        if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
            kwargs = {k: v for k, v in kwargs.items() if k in params}
        self.estimator.fit(*args, **kwargs)
        return self

    def __getattr__(self, name: str):
        if name.startswith("_") or name in ("estimator", "capability"):  # unpickling, copying, sklearn
            raise AttributeError(name)
        try:
            return getattr(self.estimator, name)
        except AttributeError:
            default = _defaults(self.capability).get(name)
            if default is None:
                raise
            return default.__get__(self)   # the capability's own method, on the object's others

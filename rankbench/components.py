"""One way to name, check and build a component: :class:`ComponentSpec`.

A component (a compared ranker, a preprocessing step, the model bank or the selector a protocol
trains for itself) is a registry name or an import path with parameters, or an object a Python
user holds (``app.evaluate``). :meth:`ComponentSpec.checked` looks the name up and checks the
parameters against the component's declared constraints (:func:`rankbench.params.check_params`),
the one check a config and the protocols share (one line naming the key path on a mistake);
:meth:`ComponentSpec.of` checks an object's parameters the same way. :meth:`ComponentSpec.build`
makes a fresh instance wherever it is called (a worker process resolves the name itself), and
gives it ``seed`` as its ``random_state`` where it takes one and none was set; seeds come from
:mod:`rankbench.utils.seeds` (a trial's ranker stream, or a stream a protocol records in its split).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from .params import check_params, init_params, validate_estimator
from .registry import ALL


@dataclass(frozen=True)
class ComponentSpec:
    """A component to build: ``name`` in the registry ``kind`` (a key of
    :data:`rankbench.registry.ALL`: ``"rankers"``, ``"preprocessors"``...) with checked ``params``,
    or a prototype ``estimator`` object whose fresh copies are built (``name`` is then its class).
    """

    kind: str
    name: str
    params: dict[str, Any] = field(default_factory=dict)
    estimator: Any = None

    @classmethod
    def checked(cls, kind: str, name: Any, params: dict[str, Any], where: str,
                name_where: str | None = None) -> "ComponentSpec":
        """``name`` looked up (a mistake named at ``name_where``, default ``where``) and ``params``
        checked as its constructor takes them (named at ``where``)."""
        klass = ALL[kind].get(name, where if name_where is None else name_where)
        return cls(kind, name, check_params(klass, params, where))

    @classmethod
    def of(cls, estimator: Any, kind: str = "rankers", where: str | None = None) -> "ComponentSpec":
        """An object as a component, its parameters checked here, where it enters (named at
        ``where``; :func:`rankbench.params.validate_estimator`): every build is a fresh, unfitted copy."""
        klass = type(estimator)
        validate_estimator(estimator, where)
        return cls(kind, f"{klass.__module__}:{klass.__qualname__}", {}, estimator)

    @property
    def cls(self) -> type:
        return type(self.estimator) if self.estimator is not None else ALL[self.kind].get(self.name)

    @property
    def seeded(self) -> bool:
        """Whether the component takes a ``random_state`` and leaves it to the caller (None)."""
        if self.estimator is not None:
            params = self.estimator.get_params(deep=False) if hasattr(self.estimator, "get_params") else {}
            return "random_state" in params and params["random_state"] is None
        return "random_state" in init_params(self.cls) and self.params.get("random_state") is None

    def build(self, seed: int | None = None) -> Any:
        """A fresh instance with its own copy of the parameters; ``seed`` becomes its
        ``random_state`` when :attr:`seeded`."""
        seed_it = seed is not None and self.seeded
        if self.estimator is not None:
            from sklearn.base import clone

            est = clone(self.estimator, safe=False)  # a deep copy of an object that is no estimator
            return est.set_params(random_state=seed) if seed_it else est
        params = {**self.params, "random_state": seed} if seed_it else self.params
        return self.cls(**copy.deepcopy(params))  # as clone: a build that writes to a mapping changes no other

    def with_seed(self, seed: int | None) -> "ComponentSpec":
        """The same component with ``seed`` as its ``random_state`` when :attr:`seeded` (so that the
        parameters alone say what is built, e.g. to key a cache)."""
        if seed is None or self.estimator is not None or not self.seeded:
            return self
        return ComponentSpec(self.kind, self.name, {**self.params, "random_state": seed})

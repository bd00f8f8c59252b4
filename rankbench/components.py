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

from .errors import ConfigError
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
        _copies_faithfully(estimator, where or klass.__name__)
        return cls(kind, f"{klass.__module__}:{klass.__qualname__}", {}, estimator)

    @property
    def cls(self) -> type:
        return type(self.estimator) if self.estimator is not None else ALL[self.kind].get(self.name)

    @property
    def seeded(self) -> bool:
        """Whether the component takes a ``random_state`` and leaves it to the caller (None)."""
        if self.estimator is not None:
            return bool(self._unseeded())
        return "random_state" in init_params(self.cls) and self.params.get("random_state") is None

    def _unseeded(self) -> list[str]:
        """The object's ``random_state`` parameters left None, its own and its parts' (a Pipeline's
        steps, a meta-estimator's estimator: ``forest__random_state``)."""
        params = self.estimator.get_params(deep=True) if hasattr(self.estimator, "get_params") else {}
        return sorted(k for k, v in params.items() if k.rpartition("__")[2] == "random_state" and v is None)

    def build(self, seed: int | None = None) -> Any:
        """A fresh instance with its own copy of the parameters; ``seed`` becomes its
        ``random_state`` when :attr:`seeded` (an object's: each one it leaves None, its parts' too)."""
        seed_it = seed is not None and self.seeded
        if self.estimator is not None:
            from sklearn.base import clone

            est = clone(self.estimator, safe=False)  # a deep copy of an object that is no estimator
            return est.set_params(**dict.fromkeys(self._unseeded(), seed)) if seed_it else est
        params = {**self.params, "random_state": seed} if seed_it else self.params
        return self.cls(**copy.deepcopy(params))  # as clone: a build that writes to a mapping changes no other

    def with_seed(self, seed: int | None) -> "ComponentSpec":
        """The same component with ``seed`` as its ``random_state`` when :attr:`seeded` (so that the
        parameters alone say what is built, e.g. to key a cache)."""
        if seed is None or self.estimator is not None or not self.seeded:
            return self
        return ComponentSpec(self.kind, self.name, {**self.params, "random_state": seed})


def _copies_faithfully(estimator: Any, where: str) -> None:
    """Every trial fits a copy (scikit-learn's ``clone``: the class called with ``get_params()``); a
    copy whose ``__init__`` attribute differs from the object's (a ``get_params`` that leaves a
    parameter out) would be scored as another estimator. A copy that cannot be made at all is
    left to :meth:`ComponentSpec.build`, which names the fault when the plan builds it."""
    from sklearn.base import clone

    if not hasattr(estimator, "get_params"):
        return
    try:
        twin = clone(estimator, safe=False)
    except Exception:  # noqa: BLE001 - said where it is built
        return
    for k in init_params(type(estimator)):
        if hasattr(estimator, k) and not _same(getattr(estimator, k), getattr(twin, k, _ABSENT)):
            raise ConfigError(f"{where}: a copy of it (made for every trial by scikit-learn's clone, from get_params) "
                              f"has {k} = {getattr(twin, k, '(none)')!r}, the object {getattr(estimator, k)!r}; "
                              "expected get_params to return every __init__ parameter")


_ABSENT = object()


def _same(a: Any, b: Any) -> bool:
    """Whether a copied parameter equals the original: estimators by their parameters, arrays by
    their values, anything else by ``==`` (its ``repr`` when ``==`` fails)."""
    import numpy as np

    if hasattr(a, "get_params") and type(a) is type(b):
        pa, pb = a.get_params(deep=False), b.get_params(deep=False)
        return pa.keys() == pb.keys() and all(_same(v, pb[k]) for k, v in pa.items())
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(b, type(a)) and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    try:
        return bool(a == b) or repr(a) == repr(b)
    except Exception:  # noqa: BLE001 - an == that raises or gives no truth value
        return repr(a) == repr(b)

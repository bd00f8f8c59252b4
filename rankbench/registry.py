"""Name -> class tables for datasets, feature extractors, rankers, protocols and preprocessors.

A YAML name is a registry key. Modules register their classes with a decorator::

    from rankbench.registry import rankers

    @rankers.register("prsvm")
    class PRSVM(BaseEstimator): ...

Every module of the packages ``rankbench.datasets``, ``rankbench.features``, ``rankbench.rankers``
and ``rankbench.protocols`` is imported on first look-up, so adding a ranker is one module with one
decorator line. Modules must import heavy optional libraries inside functions, not at top level.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import Any, Callable

from .errors import ConfigError

_PACKAGES = ("datasets", "features", "rankers", "protocols", "preprocess")
_discovered = False


def _discover() -> None:
    global _discovered
    if _discovered:
        return
    _discovered = True
    for pkg_name in _PACKAGES:
        pkg = importlib.import_module(f"rankbench.{pkg_name}")
        for mod in pkgutil.iter_modules(pkg.__path__):
            if not mod.name.startswith("_"):
                importlib.import_module(f"rankbench.{pkg_name}.{mod.name}")


class Registry:
    """A table of named classes of one kind."""

    def __init__(self, kind: str):
        self.kind = kind
        self._table: dict[str, type] = {}

    def register(self, name: str) -> Callable[[type], type]:
        def deco(cls: type) -> type:
            if name in self._table and self._table[name] is not cls:
                raise RuntimeError(f"{self.kind} {name!r} registered twice")
            self._table[name] = cls
            cls.registry_name = name
            return cls

        return deco

    def names(self) -> list[str]:
        _discover()
        return sorted(self._table)

    def get(self, name: str, where: str = "") -> type:
        _discover()
        if name not in self._table:
            prefix = f"{where}: " if where else ""
            raise ConfigError(
                f"{prefix}unknown {self.kind} {name!r}; valid {self.kind}s: {', '.join(self.names())}"
            )
        return self._table[name]

    def describe(self) -> list[tuple[str, str]]:
        """(name, first docstring line) for ``rankbench list``."""
        out = []
        for name in self.names():
            doc = inspect.getdoc(self._table[name]) or ""
            out.append((name, doc.strip().splitlines()[0] if doc else ""))
        return out

    def build(self, name: str, params: dict[str, Any], where: str = "") -> Any:
        """Instantiate ``name`` with ``params``, naming the allowed parameters on a mistake."""
        cls = self.get(name, where)
        check_params(cls, params, where or f"{self.kind} {name}")
        return cls(**params)


def init_params(cls: type) -> dict[str, inspect.Parameter]:
    sig = inspect.signature(cls.__init__)
    return {k: p for k, p in sig.parameters.items() if k != "self" and p.kind is not p.VAR_KEYWORD}


def check_params(cls: type, params: dict[str, Any], where: str) -> None:
    allowed = init_params(cls)
    accepts_any = any(
        p.kind is p.VAR_KEYWORD for p in inspect.signature(cls.__init__).parameters.values()
    )
    unknown = [k for k in params if k not in allowed]
    if unknown and not accepts_any:
        raise ConfigError(
            f"{where}: unknown parameter {unknown[0]!r}; allowed: {', '.join(allowed) or '(none)'}"
        )
    missing = [
        k for k, p in allowed.items()
        if p.default is p.empty and p.kind is not p.VAR_POSITIONAL and k not in params
    ]
    if missing:
        raise ConfigError(f"{where}: missing required parameter {missing[0]!r}")


datasets = Registry("dataset")
features = Registry("feature extractor")
rankers = Registry("ranker")
protocols = Registry("protocol")
preprocessors = Registry("preprocessor")

ALL = {
    "datasets": datasets,
    "features": features,
    "rankers": rankers,
    "protocols": protocols,
    "preprocessors": preprocessors,
}

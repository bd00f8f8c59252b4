"""Name -> class tables for datasets, feature extractors, rankers, protocols and preprocessors.

A YAML name is a registry key. Three ways in:

* built in: a module of ``rankbench.datasets``, ``.features``, ``.rankers``, ``.protocols`` or
  ``.preprocess`` (at any depth, e.g. ``rankbench/rankers/ranksvm/prsvm.py``) registers its class
  with a decorator; every such module is imported on the first look-up (modules and packages whose
  name starts with ``_`` are private helpers and are skipped)::

      from rankbench.registry import rankers

      @rankers.register("prsvm")
      class PRSVM(PairScorer, BaseEstimator): ...

* by import path, with no registration at all: ``ranker: mypackage.module:MyRanker`` (or
  ``path/to/file.py:MyRanker`` for a file outside any package);
* by an installed package that declares an entry point in the ``rankbench`` group, whose value is
  a module that registers its classes with the decorators above (``[project.entry-points.rankbench]
  mypkg = "mypkg.rankbench_plugin"``).

``rankbench list`` shows every component with where it came from; ``rankbench list rankers NAME``
its parameters, their constraints and defaults, and its docstring. Modules must import heavy
optional libraries inside functions, not at top level.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import pkgutil
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

from .errors import ConfigError, did_you_mean
from .params import annotations, check_params, describe, init_params
from .utils.process import kept

_PACKAGES = ("datasets", "features", "rankers", "protocols", "preprocess")
ENTRY_POINT_GROUP = "rankbench"
_discovered = False
_plugin_errors: list[str] = []


def _discover() -> None:
    global _discovered
    if _discovered:
        return
    _discovered = True
    for pkg_name in _PACKAGES:
        pkg = importlib.import_module(f"rankbench.{pkg_name}")
        for mod in pkgutil.walk_packages(pkg.__path__, prefix=f"{pkg.__name__}."):
            if not any(part.startswith("_") for part in mod.name.split(".")):
                importlib.import_module(mod.name)
    _load_entry_points()


def _load_entry_points() -> None:
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        origin = f"{ep.dist.name if ep.dist else ep.name} (entry point)"
        _Origin.current = origin
        try:
            ep.load()
        except Exception as exc:  # a broken plug-in must not break rankbench: it is listed as such
            _plugin_errors.append(f"entry point {ep.name} = {ep.value}: {type(exc).__name__}: {exc}")
        finally:
            _Origin.current = None


class _Origin:
    current: str | None = None


@dataclass
class Entry:
    name: str
    cls: type
    origin: str


class Registry:
    """A table of named classes of one kind."""

    def __init__(self, kind: str):
        self.kind = kind
        self._table: dict[str, Entry] = {}

    def register(self, name: str) -> Callable[[type], type]:
        def deco(cls: type) -> type:
            old = self._table.get(name)
            if old is not None and old.cls is not cls:
                raise RuntimeError(f"{self.kind} {name!r} registered twice ({old.cls.__module__} and "
                                   f"{cls.__module__})")
            origin = _Origin.current or ("rankbench" if cls.__module__.startswith("rankbench.")
                                         else cls.__module__)
            self._table[name] = Entry(name, cls, origin)
            cls.registry_name = name
            return cls

        return deco

    def names(self) -> list[str]:
        _discover()
        return sorted(self._table)

    def entries(self) -> list[Entry]:
        _discover()
        return [self._table[n] for n in sorted(self._table)]

    def get(self, name: str, where: str = "") -> type:
        """The class named ``name``: a registered name or an import path ``module:Class``."""
        _discover()
        prefix = f"{where}: " if where else ""
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{prefix}expected a {self.kind} name, got {name!r}")
        if name in self._table:
            return self._table[name].cls
        if ":" in name:
            return load_by_path(name, prefix, self.kind)
        raise ConfigError(f"{prefix}unknown {self.kind} {name!r}; {did_you_mean(name, self.names())}valid "
                          f"{self.kind}s: {', '.join(self.names())} (or an import path module:Class)")

    def describe(self) -> list[tuple[str, str, str]]:
        """(name, first docstring line, origin) for ``rankbench list``."""
        return [(e.name, first_line(e.cls), e.origin) for e in self.entries()]

    def build(self, name: str, params: dict[str, Any], where: str = "") -> Any:
        """Instantiate ``name`` with ``params`` checked against its declared constraints (a config's
        components are checked once instead, as ``ComponentSpec`` s: :mod:`rankbench.components`)."""
        cls = self.get(name, where)
        return cls(**check_params(cls, params, where or f"{self.kind} {name}"))


def first_line(cls: type) -> str:
    doc = inspect.getdoc(cls) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def load_by_path(spec: str, prefix: str = "", kind: str = "component") -> type:
    """``package.module:Class`` or ``path/to/file.py:Class`` -> the class (one-line errors)."""
    target, _, attr = spec.rpartition(":")
    if not target or not attr:
        raise ConfigError(f"{prefix}expected an import path module:Class, got {spec!r}")
    try:
        if target.endswith(".py"):
            path = Path(target).expanduser()
            if not path.is_file():
                raise ConfigError(f"{prefix}{kind} file {path} not found")
            with kept(f"importing {path}"):
                module = _load_file(path.resolve())
        else:
            with kept(f"importing {target}"):
                module = importlib.import_module(target)
    except ConfigError:
        raise
    except ImportError as exc:
        raise ConfigError(f"{prefix}cannot import {target!r} for {kind} {spec!r} ({exc})") from None
    except Exception as exc:  # the user's module failed while importing: say where
        raise ConfigError(f"{prefix}importing {target!r} failed: {type(exc).__name__}: {exc}") from None
    except SystemExit as exc:  # the module called sys.exit: not a reason for rankbench to stop silently
        raise ConfigError(f"{prefix}importing {target!r} failed: the module called "
                          f"{getattr(exc, 'how', 'sys.exit')}({exc.code!r})") from None
    cls = getattr(module, attr, None)
    if not inspect.isclass(cls):
        raise ConfigError(f"{prefix}{target!r} has no class {attr!r}")
    if "registry_name" not in cls.__dict__:
        cls.registry_name = spec
    return cls


def _load_file(path: Path) -> ModuleType:
    """The module of ``path``, a file outside any package, loaded once per process.

    Its name is a digest of the path, the same in every process (so the cache keys and records
    that name a class of it do not change between runs), and it is registered with cloudpickle to
    be pickled by value: its classes and functions travel inside the pickled objects, so a worker
    process (joblib's, which pickles with cloudpickle; a Dask worker, to which the executor sends
    a job pickled by cloudpickle) never has to import the file."""
    import cloudpickle

    name = "rankbench_user_" + hashlib.sha256(str(path).encode()).hexdigest()[:16]
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:  # as a failed import: no half-made module left behind
            sys.modules.pop(name, None)
            raise
        cloudpickle.register_pickle_by_value(module)
    return module


def parameter_table(cls: type) -> list[tuple[str, str, str]]:
    """(parameter, constraint, default) rows for ``rankbench list KIND NAME``."""
    hints = annotations(cls)
    rows = []
    for name, p in init_params(cls).items():
        sk = getattr(cls, "_parameter_constraints", {}) or {}
        if name in hints:
            want = describe(hints[name])
        elif name in sk:  # scikit-learn's own declaration
            want = " or ".join(str(c) for c in sk[name])
        else:
            want = "(not declared)"
        # a tuple default (scikit-learn's convention) is a list in YAML
        default = "(required)" if p.default is p.empty else repr(list(p.default) if isinstance(p.default, tuple)
                                                                 else p.default)
        rows.append((name, want, default))
    return rows


def plugin_errors() -> list[str]:
    _discover()
    return list(_plugin_errors)


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

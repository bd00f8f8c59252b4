"""THE on-disk cache of computed objects (features, base models), keyed by what they were computed from.

``cached(kind, key, compute)`` returns the object stored under ``<cache>/<kind>/<key>.joblib``
or computes it, stores it atomically and returns it. Concurrent processes asking for the same key
wait on a lock file, so the object is computed once (two workers of a run share the features of
a dataset and the base models of a trial instead of both computing them). A corrupt entry is
recomputed, never trusted; an unwritable cache only costs time. The folder is
``$RANKBENCH_CACHE`` or ``~/.cache/rankbench``; :func:`usage` and :func:`clear` (``rankbench
cache``) show and free it.

One keying rule: a key is the :func:`digest` of the inputs' content (a dataset's file
fingerprint, arrays' bytes, the rows used), the component's parameters, and its
:func:`code_fingerprint` (the code that computes the entry), so that no version number has to be
remembered: editing the computation makes new keys, editing a comment or a docstring does not.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import importlib.util
import inspect
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np


def cache_dir() -> Path:
    """``$RANKBENCH_CACHE`` or ``~/.cache/rankbench``."""
    return Path(os.environ.get("RANKBENCH_CACHE") or Path.home() / ".cache" / "rankbench")


def digest(*parts: Any) -> str:
    """A hex digest of arrays (dtype, shape and bytes), dicts / lists / scalars (as sorted JSON)."""
    h = hashlib.blake2b(digest_size=16)
    for p in parts:
        _feed(h, p)
    return h.hexdigest()


def file_digest(path: str | os.PathLike) -> str | None:
    """A hex digest of a file's bytes (BLAKE2b), or None when it cannot be read."""
    try:
        return hashlib.blake2b(Path(path).read_bytes(), digest_size=16).hexdigest()
    except OSError:
        return None


def _feed(h, p: Any) -> None:
    if isinstance(p, np.ndarray):
        a = np.ascontiguousarray(p)
        h.update(f"array:{a.dtype.str}:{a.shape}".encode())
        h.update(a.view(np.uint8).reshape(-1) if a.size else b"")
    elif isinstance(p, dict) and _holds_array(p):
        for k in sorted(p):
            h.update(f"key:{k}".encode())
            _feed(h, p[k])
    elif isinstance(p, (list, tuple)) and _holds_array(p):
        h.update(f"list:{len(p)}".encode())
        for v in p:
            _feed(h, v)
    else:
        h.update(json.dumps(p, sort_keys=True, default=str).encode())


def _holds_array(p: Any) -> bool:
    """Whether a dict / list / tuple holds an array at any depth (JSON would print it shortened)."""
    values = p.values() if isinstance(p, dict) else p if isinstance(p, (list, tuple)) else ()
    return any(isinstance(v, np.ndarray) or _holds_array(v) for v in values)


def code_fingerprint(cls: type) -> str | None:
    """A digest of the code that defines ``cls``: its module and the modules of the same family it
    imports, transitively, each as its syntax tree without docstrings (comments and layout are not
    in the tree), so a cache entry computed by other code is never reused.

    The family is the first two dotted parts of the module's name (``rankbench.features``,
    ``rankbench.rankers``; a plug-in module's own package): an extractor's key covers
    ``features/base.py`` and ``features/_histogram.py``, a bank's ``rankers/_kernels.py``. Code
    outside the family (datasets' image reading, numpy, scikit-learn) is not covered: after
    changing it, ``rankbench cache --clear``. None when the source cannot be read (a class made
    in an interactive session): such a component is not cached.
    """
    return module_fingerprint(cls.__module__)


def module_fingerprint(module: str) -> str | None:
    """The :func:`code_fingerprint` of a module by name (``"rankbench.report.plots"``): it and
    the modules of its family it imports, transitively."""
    return _module_fingerprint(module)


@functools.lru_cache(maxsize=None)
def source_fingerprint(package: str, exclude: tuple[str, ...] = ()) -> str | None:
    """A digest of every source file of ``package`` but the sub-modules and sub-packages named in
    ``exclude`` (dotted names): the bytes of the files, so that any edit, a comment's included,
    makes new keys. For entries that depend on more code than one family (a whole trial: loader,
    protocol, ranker, metrics); None when the package has no source folder."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations)))
    h = hashlib.blake2b(digest_size=16)
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).with_suffix("")
        name = ".".join([package, *rel.parts])
        if any(name == e or name.startswith(e + ".") for e in exclude):
            continue
        h.update(f"file:{rel.as_posix()}:".encode() + path.read_bytes())
    return h.hexdigest()


@functools.lru_cache(maxsize=None)
def _module_fingerprint(module: str) -> str | None:
    family = ".".join(module.split(".")[:2])
    h = hashlib.blake2b(digest_size=16)
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        tree = _syntax_tree(name)
        if tree is None:
            if name == module:
                return None
            continue
        h.update(f"module:{name}:".encode() + ast.dump(tree).encode())
        todo += [m for m in _imports(tree, name) if m == family or m.startswith(family + ".")]
    return h.hexdigest()


def _syntax_tree(module: str) -> ast.Module | None:
    """The module's syntax tree without docstrings, or None without a readable source."""
    mod = sys.modules.get(module)
    try:
        path = inspect.getsourcefile(mod) if mod is not None else importlib.util.find_spec(module).origin
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (TypeError, AttributeError, ValueError, ImportError, OSError, SyntaxError):
        return None
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return tree


def _imports(tree: ast.Module, module: str) -> list[str]:
    """The modules ``module`` imports (relative imports resolved; ``from p import m`` gives both
    ``p`` and ``p.m``, as m may be a module)."""
    package = module if _is_package(module) else module.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            out += [base] + [f"{base}.{a.name}" for a in node.names]
    return out


def _is_package(module: str) -> bool:
    mod = sys.modules.get(module)
    return mod is not None and hasattr(mod, "__path__")


@contextlib.contextmanager
def _locked(path: Path):
    try:
        import fcntl
    except ImportError:  # pragma: no cover - non-POSIX: no lock, at worst computed twice
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def reuse_allowed() -> bool:
    """Whether finished work (a job's result, a run's report) may be taken from the cache:
    ``$RANKBENCH_REUSE`` is not ``0``. Features and base models are cached whatever it says."""
    return os.environ.get("RANKBENCH_REUSE", "1") != "0"


def cached(kind: str, key: str, compute: Callable[[], Any], enabled: bool = True,
           keep: Callable[[Any], bool] | None = None,
           valid: Callable[[Any], bool] | None = None) -> tuple[Any, bool]:
    """(object, True if it came from the cache) for ``key`` in the cache folder ``kind``; a computed
    object for which ``keep`` says False (a failed result) is returned without being stored; a
    stored one for which ``valid`` says False (what it describes has changed since) is computed
    again and replaced."""
    import joblib

    if not enabled:
        return compute(), False
    folder = cache_dir() / kind
    path = folder / f"{key}.joblib"
    try:
        lock = _locked(folder / f"{key}.lock")
        lock.__enter__()
    except OSError:  # unwritable cache: compute without it
        return compute(), False
    try:
        if path.is_file():
            try:
                obj = joblib.load(path)
            except Exception:  # a corrupt or foreign entry: recompute it
                path.unlink(missing_ok=True)
            else:
                if valid is None or valid(obj):
                    return obj, True
        obj = compute()
        if keep is not None and not keep(obj):
            return obj, False
        tmp = None
        try:
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
            os.close(fd)
            joblib.dump(obj, tmp)
            os.replace(tmp, path)
        except OSError:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
        return obj, False
    finally:
        lock.__exit__(None, None, None)  # the empty lock file stays: removing it would race


# ----------------------------------------------------------------------------- housekeeping
@dataclass(frozen=True)
class CacheUsage:
    """One kind of cache entry (a sub-folder of the cache): how many entries, how many bytes."""

    kind: str
    entries: int
    bytes: int
    path: Path


def usage() -> list[CacheUsage]:
    """What the cache holds, per kind (``features``, ``base_models``, ...), largest first."""
    root = cache_dir()
    out = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        files = [f for f in folder.rglob("*") if f.is_file() and not f.name.endswith(".lock")]
        out.append(CacheUsage(folder.name, sum(not f.name.startswith(".") and f.suffix != ".json"
                                                   for f in files),
                              sum(f.stat().st_size for f in files), folder))
    return sorted(out, key=lambda u: -u.bytes)


@dataclass(frozen=True)
class Cleared:
    """What :func:`clear` freed, and what it could not (a read-only cache, files of another user)."""

    freed: int
    kept: int
    #: one ``<path>: <why>`` per file or folder that could not be deleted
    errors: list[str]


def clear(kinds: list[str] | None = None) -> Cleared:
    """Delete the cache's entries of ``kinds`` (default all), counting only what was deleted.
    Entries are only ever recomputed, so clearing costs time, never results; a run in progress
    recomputes what it misses."""
    freed = kept = 0
    errors: list[str] = []
    known = {u.kind: u for u in usage()}
    for kind in kinds if kinds is not None else list(known):
        if kind not in known:
            continue
        for folder, subfolders, files in os.walk(known[kind].path, topdown=False):
            for name in files:
                path = Path(folder) / name
                size = path.lstat().st_size
                try:
                    path.unlink()
                    freed += size
                except OSError as exc:
                    kept += size
                    errors.append(f"{path}: {exc.strerror or exc}")
            try:
                os.rmdir(folder)
            except OSError as exc:
                if not errors:  # a folder left non-empty is already said by its files
                    errors.append(f"{folder}: {exc.strerror or exc}")
    return Cleared(freed, kept, errors)

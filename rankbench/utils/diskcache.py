"""A small on-disk cache of computed objects, keyed by a digest of what they were computed from.

``cached(kind, key, compute)`` returns the object stored under ``<cache>/<kind>/<key>.joblib``
or computes it, stores it atomically and returns it. Concurrent processes asking for the same key
wait on a lock file, so the object is computed once (two workers of a run share the base models
of a trial instead of both training them). A corrupt entry is recomputed, never trusted; an
unwritable cache only costs time. The folder is ``$RANKBENCH_CACHE`` or ``~/.cache/rankbench``;
:func:`usage` and :func:`clear` (``rankbench cache``) show and free it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
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


def _feed(h, p: Any) -> None:
    if isinstance(p, np.ndarray):
        a = np.ascontiguousarray(p)
        h.update(f"array:{a.dtype.str}:{a.shape}".encode())
        h.update(a.view(np.uint8).reshape(-1) if a.size else b"")
    elif isinstance(p, dict) and any(isinstance(v, np.ndarray) for v in p.values()):
        for k in sorted(p):
            h.update(f"key:{k}".encode())
            _feed(h, p[k])
    else:
        h.update(json.dumps(p, sort_keys=True, default=str).encode())


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


def cached(kind: str, key: str, compute: Callable[[], Any], enabled: bool = True) -> tuple[Any, bool]:
    """(object, True if it came from the cache) for ``key`` in the cache folder ``kind``."""
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
                return joblib.load(path), True
            except Exception:  # a corrupt or foreign entry: recompute it
                path.unlink(missing_ok=True)
        obj = compute()
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

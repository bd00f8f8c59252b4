"""THE on-disk cache of computed objects (features, base models), keyed by what they were computed from.

:func:`cached` computes an entry once (concurrent processes wait on a lock file) and verifies it
on every read: a damaged entry is recomputed, never trusted; an unwritable cache only costs time.
A key is the :func:`digest` of the inputs' content, the component's parameters and its
:func:`code_fingerprint`, so no version number has to be remembered. The folder is
``$RANKBENCH_CACHE`` or ``~/.cache/rankbench``; :func:`usage` and :func:`clear` show and free it.
"""

from __future__ import annotations

import ast
import contextlib
import errno
import functools
import hashlib
import importlib.util
import inspect
import io
import json
import logging
import os
import stat
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .fileio import FileLock, NotRegularFile, atomic_write_bytes
from .progress import WAITING, tick

log = logging.getLogger("rankbench.cache")


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

    In rankbench the family is rankbench: an extractor's key covers ``features/base.py``,
    ``features/_histogram.py``, the image reading of ``datasets/base.py`` and the PCA of
    ``preprocess/pca.py`` it calls, a bank's ``rankers/_kernels.py``. A plug-in's family is all of
    its own code: its whole top-level package, or for a module outside any package the modules and
    packages in its file's folder (installed packages and rankbench aside), and the files beside its
    code that it may read (a weights file, by name, size and modification time: :func:`_files_beside`).
    Code outside the family (numpy, scikit-learn) and files elsewhere are not covered: after
    changing them, ``rankbench cache --clear``. None when
    the source cannot be read (a class made in an interactive session): such a component is not
    cached.
    """
    return module_fingerprint(cls.__module__)


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
def module_fingerprint(module: str) -> str | None:
    """The :func:`code_fingerprint` of a module by name (``"rankbench.report.plots"``): it and
    the modules of its family it imports, transitively."""
    inside = _family(module)
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
        todo += [m for m in _imports(tree, name) if inside(m)]
    if module.split(".")[0] != "rankbench":
        for folder in sorted({f for f in map(_folder, seen) if f is not None}):
            h.update(f"files:{_files_beside(folder)}".encode())
    return h.hexdigest()


def _files_beside(folder: Path) -> list[tuple[str, int, int]]:
    """(name, size, modification time) of each file a plug-in's code may read in its folder (a
    weights file, a lookup table): not its code (in its syntax tree), hidden files or configs
    (rankbench reads a config and keys what it says)."""
    out = []
    for path in sorted(folder.iterdir()):
        if path.name.startswith(".") or path.suffix.lower() in (".py", ".pyc", ".yaml", ".yml"):
            continue
        try:
            st = path.stat()
        except OSError:   # a broken link: nothing to read
            continue
        if path.is_file():
            out.append((path.name, st.st_size, st.st_mtime_ns))
    return out


def _family(module: str):
    """Whether a module is of ``module``'s family (see :func:`code_fingerprint`), as a predicate."""
    top = module.split(".")[0]
    if top == "rankbench" or "." in module or _is_package(module):
        return lambda m: m == top or m.startswith(top + ".")
    folder = _folder(module)   # a plug-in file outside any package: the code in its folder

    def beside(m: str) -> bool:
        where = _folder(m) if m.split(".")[0] != "rankbench" else None
        return (folder is not None and where is not None and where.is_relative_to(folder)
                and not {"site-packages", "dist-packages"} & set(where.parts))
    return beside


def _folder(module: str) -> Path | None:
    mod = sys.modules.get(module)
    path = getattr(mod, "__file__", None)
    return Path(path).resolve().parent if path else None


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


#: an entry's first line: its format, then the CRC-32 of its key and the bytes that follow it, and
#: their length (a check against damage and against an entry under another key's name, not
#: forgery: CRC-32 is far cheaper than a cryptographic digest)
_HEADER = b"rankbench-cache crc32 "


def _stamp(crc: int, size: int) -> bytes:
    return b"%08x %016x\n" % (crc, size)


def _seal(payload: bytes, key: str) -> bytes:
    """An entry's bytes: the header line with the CRC-32 of ``key`` and the payload and the
    payload's length, then the payload."""
    return _HEADER + _stamp(zlib.crc32(payload, zlib.crc32(key.encode())), len(payload)) + payload


def _verified(fh, key: str) -> bool:
    """Whether the entry open in ``fh`` holds the bytes its header names, sealed under ``key`` (read
    in blocks, never held whole); ``fh`` is left at the payload's start."""
    size = len(_HEADER) + len(_stamp(0, 0))
    head = fh.readline(size)
    if not head.startswith(_HEADER) or len(head) != size:
        return False
    crc, n_read, block = zlib.crc32(key.encode()), 0, bytearray(1 << 20)
    view = memoryview(block)
    while n := fh.readinto(block):
        crc, n_read = zlib.crc32(view[:n], crc), n_read + n
    fh.seek(len(head))
    return head[len(_HEADER):] == _stamp(crc, n_read)


def _load(path: Path) -> tuple[Any, bool]:
    """(object, True) from a verified entry; (None, False) when there is none or it does not verify
    (said once in the log, and removed: it is computed again)."""
    import joblib

    try:  # no link followed, no pipe waited on: anything but a regular file is a damaged entry
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None, False
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            log.warning("cache: %s: unreadable (%s); computing it again", path, exc.strerror or exc)
            return None, False
    else:
        with os.fdopen(fd, "rb") as fh:
            if stat.S_ISREG(os.fstat(fd).st_mode) and _verified(fh, path.stem):
                with contextlib.suppress(Exception):  # verified bytes that do not load: another joblib's
                    return joblib.load(fh), True
    log.warning("cache: %s: an entry whose bytes do not match their digest (damaged, another key's entry, or "
                "written by an earlier rankbench); computing it again", path)
    with contextlib.suppress(OSError):
        path.unlink()   # removes a planted link itself, never what it names
    return None, False


#: the unusable cache folders already said (a run asks the cache for every job)
_SAID: set[tuple[str, str]] = set()


def cached(kind: str, key: str, compute: Callable[[], Any], enabled: bool = True,
           keep: Callable[[Any], bool] | None = None) -> tuple[Any, bool]:
    """(object, True if it came from the cache) for ``key`` in the cache folder ``kind``; a computed
    object for which ``keep`` says False (a failed result) is returned without being stored.

    An entry is the joblib dump of the object after a line holding the CRC-32 and length of those
    bytes; it is verified on every read, and one that does not verify (a flipped or zeroed block,
    other values written over it) is computed again, never used."""
    import joblib

    if not enabled:
        return compute(), False
    root = cache_dir()
    path = root / kind / f"{key}.joblib"
    try:
        try:
            lock = FileLock(root / kind / f"{key}.lock", root, blocking=False)
        except BlockingIOError:   # another process computes this entry: said, then waited for
            tick(WAITING, 0)
            log.info("cache: %s: another process is computing this entry; waiting to take it", path)
            lock = FileLock(root / kind / f"{key}.lock", root)
    except OSError as exc:  # unwritable cache: compute without it
        if isinstance(exc, NotRegularFile) and (exc.filename, exc.strerror) not in _SAID:
            _SAID.add((exc.filename, exc.strerror))   # once per process, not once per entry
            log.warning("cache: %s: %s; computing without the cache", exc.filename, exc.strerror)
        return compute(), False
    with lock:
        obj, hit = _load(path)
        if hit:
            return obj, True
        for stale in path.parent.glob(f".{path.name}.*.tmp"):   # a write killed midway (only the
            stale.unlink(missing_ok=True)                      # lock's holder writes this entry)
        obj = compute()
        if keep is not None and not keep(obj):
            return obj, False
        buf = io.BytesIO()
        joblib.dump(obj, buf)
        try:
            atomic_write_bytes(path, _seal(buf.getbuffer(), path.stem), root=root)
        except OSError as exc:
            if isinstance(exc, NotRegularFile):
                log.warning("cache: %s: %s; the entry is not kept", exc.filename, exc.strerror)
        return obj, False


# ----------------------------------------------------------------------------- housekeeping
@dataclass(frozen=True)
class CacheUsage:
    """One kind of cache entry (a sub-folder of the cache): how many entries, how many bytes."""

    kind: str
    entries: int
    bytes: int
    path: Path


#: the kinds of entry rankbench writes (the ``kind`` of each :func:`cached` call): the only sub-folders
#: of the cache :func:`usage` shows and :func:`clear` deletes, as the cache may be a folder other tools use too
KINDS = ("features", "trials", "base_models", "selectors")


def usage() -> list[CacheUsage]:
    """What the cache holds, per kind (:data:`KINDS`), largest first (a file removed meanwhile, by a
    run or another ``cache --clear``, is simply not counted); any other folder in it is not the
    cache's. A cache that is a file, not a folder, is a ``NotADirectoryError``."""
    root = cache_dir()
    if root.exists() and not root.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "the cache is a file, not a folder", str(root))
    out = []
    folders = [root / k for k in KINDS if (root / k).is_dir() and not (root / k).is_symlink()]
    for folder in folders:
        sizes = {}
        with contextlib.suppress(FileNotFoundError):   # the folder itself removed meanwhile
            for f in folder.rglob("*"):
                with contextlib.suppress(FileNotFoundError):
                    st = f.lstat()
                    if stat.S_ISREG(st.st_mode) and not f.name.endswith(".lock"):
                        sizes[f] = st.st_size
        out.append(CacheUsage(folder.name, sum(not f.name.startswith(".") and f.suffix != ".json" for f in sizes),
                              sum(sizes.values()), folder))
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
    recomputes what it misses. Two clears at once take turns (a lock file in the cache); a file
    another process removed meanwhile is not an error."""
    freed = kept = 0
    errors: list[str] = []
    root = cache_dir()
    if not root.is_dir():
        return Cleared(0, 0, [])
    with FileLock(root / ".clear.lock", root):
        known = {u.kind: u for u in usage()}
        for kind in kinds if kinds is not None else list(known):
            if kind not in known:
                continue
            for folder, subfolders, files in os.walk(known[kind].path, topdown=False):
                for name in files:
                    path, size = Path(folder) / name, 0
                    try:
                        size = path.lstat().st_size
                        path.unlink()
                        freed += size
                    except FileNotFoundError:  # removed meanwhile (a run's lock or temporary file)
                        pass
                    except OSError as exc:
                        kept += size
                        errors.append(f"{path}: {exc.strerror or exc}")
                try:
                    os.rmdir(folder)
                except FileNotFoundError:
                    pass
                except OSError as exc:
                    if not errors:  # a folder left non-empty is already said by its files
                        errors.append(f"{folder}: {exc.strerror or exc}"
                                      + (" (a running rankbench wrote into it meanwhile)"
                                         if exc.errno == errno.ENOTEMPTY else ""))
    return Cleared(freed, kept, errors)

"""Files written safely: atomically, with normal permissions, and never through a symbolic link.

Every write goes to a temporary file created exclusively (``O_EXCL``) in the target's folder, is
flushed to disk and renamed into place (``os.replace``), so a crash never leaves a half-written
file. Before the rename the file is given the permissions any other tool's output would have
(``0666`` minus the process umask). Only a regular file (or nothing) is ever replaced: a device,
a pipe, a folder or a symbolic link at the target is refused with :class:`NotRegularFile`
(``--out /dev/null`` must not turn the device into a file; a link planted in a run folder must
not make rankbench overwrite what it names, even as root).

``root`` is the folder the caller was given (a run folder, the cache, an export's ``--out``):
it is taken as named (it may be a link), and below it nothing is followed: each folder between
``root`` and the file is opened with ``O_NOFOLLOW`` (and made where missing), the file is written
relative to it, so a sub-folder replaced by a link is refused too. Lock files
(:class:`FileLock`) are opened the same way. Failures are ``OSError`` naming the path; the
command line turns them into one line.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import stat
from pathlib import Path
from typing import Any

import numpy as np


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_umask()
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class NotRegularFile(OSError):
    """The target of a write exists and is not a regular file (a device, a pipe, a folder, a link)."""


def _refusal(mode: int, path: Path) -> NotRegularFile:
    what = ("is a symbolic link, not a regular file (rankbench writes through no link)" if stat.S_ISLNK(mode)
            else "exists and is not a regular file (rankbench replaces only files)")
    return NotRegularFile(errno.EEXIST, what, str(path))


def refuse_link(path: Path) -> None:
    """:class:`NotRegularFile` naming ``path`` when it is a symbolic link (a folder rankbench is
    about to clear or fill, below a root it was given)."""
    if os.path.islink(path):
        raise _refusal(stat.S_IFLNK, Path(path))


def _open_folder(root: Path, parts: tuple[str, ...]) -> int:
    """A descriptor of the folder ``root / parts``, made where missing; ``root`` is followed as
    named, no part below it is (a link there is refused, naming it)."""
    try:
        root.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # a file where the folder should be
        raise NotRegularFile(errno.ENOTDIR, "exists and is not a folder", str(root)) from None
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    here = root
    try:
        for name in parts:
            here = here / name
            try:
                os.mkdir(name, dir_fd=fd)
            except FileExistsError:
                pass
            try:
                sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    mode = os.lstat(name, dir_fd=fd).st_mode
                    raise (_refusal(mode, here) if stat.S_ISLNK(mode) else
                           NotRegularFile(errno.ENOTDIR, "exists and is not a folder", str(here))) from None
                raise
            os.close(fd)
            fd = sub
    except BaseException:
        os.close(fd)
        raise
    return fd


def _where(path: Path, root: str | os.PathLike | None) -> tuple[Path, tuple[str, ...], str]:
    """(root, folders between root and the file, the file's name)."""
    path = Path(path)
    root = path.parent if root is None else Path(root)
    parts = path.relative_to(root).parts
    if not parts or ".." in parts:
        raise ValueError(f"{path}: not a file below {root}")
    return root, parts[:-1], parts[-1]


def _check_target(dfd: int, name: str, path: Path) -> None:
    try:
        mode = os.lstat(name, dir_fd=dfd).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise _refusal(mode, path)


def atomic_write_bytes(path: Path, data: bytes, durable: bool = True, root: str | os.PathLike | None = None) -> None:
    """Write ``data`` to ``path`` (module docstring); ``root``: the folder below which nothing is
    followed (default the file's own folder). ``durable=False`` skips the flush to disk (a file
    that only matters while this machine runs, such as a progress heartbeat): still atomic for
    readers."""
    path = Path(path)
    root, folders, name = _where(path, root)
    dfd = _open_folder(root, folders)
    tmp = None
    try:
        _check_target(dfd, name, path)
        while tmp is None:
            tmp = f".{name}.{secrets.token_hex(4)}.tmp"
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600, dir_fd=dfd)
            except FileExistsError:
                tmp = None
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
            os.fchmod(fh.fileno(), _FILE_MODE)
        _check_target(dfd, name, path)   # os.replace never follows a link; this names one planted meanwhile
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        tmp = None
    except OSError as exc:  # a write (a full disk) names no file, a temporary file is not the user's
        if exc.filename is None or exc.filename == tmp:
            exc.filename = str(path)
        raise
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp, dir_fd=dfd)
            except OSError:
                pass
        os.close(dfd)


def atomic_write_text(path: Path, text: str, durable: bool = True, root: str | os.PathLike | None = None) -> None:
    atomic_write_bytes(path, text.encode(), durable, root)


class FileLock:
    """An exclusive ``flock`` on the lock file ``path``, held until :meth:`release` (or the
    process's end, however it ends: the kernel drops it). The file is opened as every file here is
    (no link followed below ``root``) and is removed again on release, so no lock file is left
    behind; a process that opened the file just before it was removed notices it (the path no
    longer names the file it locked) and tries again. ``blocking=False``: ``BlockingIOError`` when
    another process holds it. POSIX only; elsewhere the lock does nothing."""

    def __init__(self, path: str | os.PathLike, root: str | os.PathLike | None = None, blocking: bool = True):
        self.path = Path(path)
        self.fd: int | None = None
        self._dfd: int | None = None
        try:
            import fcntl
        except ImportError:  # pragma: no cover - non-POSIX: no lock
            return
        root, folders, self._name = _where(self.path, root)
        self._dfd = _open_folder(root, folders)
        try:
            while self.fd is None:
                try:
                    fd = os.open(self._name, os.O_RDWR | os.O_CREAT | _NOFOLLOW, 0o666, dir_fd=self._dfd)
                except OSError as exc:
                    if exc.errno == errno.ELOOP:
                        raise _refusal(stat.S_IFLNK, self.path) from None
                    exc.filename = str(self.path)   # the whole path, not the name in its folder
                    raise
                try:
                    mode = os.fstat(fd).st_mode
                    if not stat.S_ISREG(mode):
                        raise _refusal(mode, self.path)
                    fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
                    if self._same(fd):
                        self.fd = fd
                        continue
                except BaseException:
                    os.close(fd)
                    raise
                os.close(fd)   # removed (or replaced) by its holder meanwhile: lock the file there now
        except BaseException:
            os.close(self._dfd)
            self._dfd = None
            raise

    def _same(self, fd: int) -> bool:
        try:
            there = os.lstat(self._name, dir_fd=self._dfd)
        except FileNotFoundError:
            return False
        here = os.fstat(fd)
        return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)

    def release(self) -> None:
        if self.fd is not None:
            try:
                if self._same(self.fd):
                    os.unlink(self._name, dir_fd=self._dfd)   # while held: no one else holds this file
            except OSError:
                pass
            os.close(self.fd)   # closing the last descriptor releases the flock
            self.fd = None
        if self._dfd is not None:
            os.close(self._dfd)
            self._dfd = None

    def __enter__(self) -> "FileLock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def _json_default(o: Any):
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.bool_):
        return bool(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (set, frozenset, tuple)):
        return list(o)
    return str(o)


def to_json(obj: Any, indent: int | None = 1) -> str:
    """JSON text of results (numpy scalars and arrays as plain numbers and lists)."""
    return json.dumps(obj, indent=indent, default=_json_default, allow_nan=True)

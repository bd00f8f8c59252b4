"""Atomic file writes: a crash never leaves a half-written file, and files get normal permissions.

Every write goes to a temporary file in the target's folder, is flushed to disk and renamed into
place. The temporary file is created private (``mkstemp``); before the rename it is given the
permissions any other tool's output would have (``0666`` minus the process umask), so results
stay readable by the group and others as the user's umask allows. Only a regular file (or
nothing) is ever replaced: a device, a pipe, a folder or a symbolic link at the target is refused
with :class:`NotRegularFile` (``--out /dev/null`` must not turn the device into a file, even as
root). Failures are ``OSError`` naming the path; the command line turns them into one line.
"""

from __future__ import annotations

import errno
import io
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import numpy as np


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_umask()


class NotRegularFile(OSError):
    """The target of a write exists and is not a regular file (a device, a pipe, a folder, a link)."""


def atomic_write_bytes(path: Path, data: bytes, durable: bool = True) -> None:
    """``durable=False`` skips the flush to disk (a file that only matters while this machine runs,
    such as a progress heartbeat): still atomic for readers."""
    path = Path(path)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        pass
    else:
        if not stat.S_ISREG(mode):
            raise NotRegularFile(errno.EEXIST, "exists and is not a regular file (rankbench replaces only files)",
                                 str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        os.chmod(tmp, _FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str, durable: bool = True) -> None:
    atomic_write_bytes(path, text.encode(), durable)


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


def atomic_write_json(path: Path, obj: Any, durable: bool = True) -> None:
    atomic_write_text(path, to_json(obj), durable)


def atomic_save_npy(path: Path, arr: np.ndarray) -> None:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    atomic_write_bytes(path, buf.getvalue())

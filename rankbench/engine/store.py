"""Atomic file writes and the on-disk layout of a run folder.

A run folder holds ``config.yaml``, ``splits.json``, ``trials/*.json`` (one per setting x trial x
method, written as soon as it exists), and the aggregates (``trials.csv``, ``summary.csv``,
``summary.md``, ``manifest.json``, ``plots/``). Every write goes to a temporary file in the same
folder and is renamed into place, so a crash never leaves a half-written file.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode())


def _default(o: Any):
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def atomic_write_json(path: Path, obj: Any) -> None:
    atomic_write_text(path, json.dumps(obj, indent=1, default=_default, allow_nan=True))


def atomic_save_npy(path: Path, arr: np.ndarray) -> None:
    import io

    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    atomic_write_bytes(path, buf.getvalue())


def trial_file(run_dir: Path, setting: str, trial: int, method: str) -> Path:
    """Stable, filesystem-safe name for one result (settings can hold any characters)."""
    tag = hashlib.sha1(f"{setting}|{method}".encode()).hexdigest()[:10]
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in method)[:40]
    return Path(run_dir) / "trials" / f"{safe}-{tag}-t{trial:03d}.json"


def read_trials(run_dir: Path) -> list[dict[str, Any]]:
    out = []
    for p in sorted((Path(run_dir) / "trials").glob("*.json")):
        out.append(json.loads(p.read_text()))
    return out

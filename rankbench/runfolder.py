"""A run folder: its layout, its exclusive creation, and every read and write of its files.

This is the one place that knows where a run keeps what (the engine writes through it; reports,
checks and comparisons read through it)::

    <run>/config.yaml       the resolved config (extends, overrides and the regress block applied)
    <run>/splits.json       settings (label and typed values, in sweep order) and every trial's
                            seeds and row indices
    <run>/trials/*.json     one result per setting x trial x method, written atomically
    <run>/manifest.json     versions, machine, command, data root, start / end, executor and
                            workers per session, wall time per method; written when a session
                            starts (its end null) and when it returns
    <run>/trials.csv, summary.csv, curves.csv, diagnostics.csv, summary.md, summary.tex, results.json
    <run>/plots/            derived; rebuilt by ``rankbench report`` (results.json: the results for
                            machines, with a schema_version)
    <run>/.lock             the writer lock: who writes the folder now (pid, host, command, since)
    <run>/.running/*.json   one heartbeat per job in progress (what its fit is doing); removed
                            when the job ends

Folders are created exclusively (``mkdir`` fails if the folder exists): two runs started in the
same second get ``<timestamp>``, ``<timestamp>-2``, ... and never share a folder; a folder created
under ``<root>/<name>/`` also becomes ``<root>/<name>/latest`` (a symbolic link). A trial file that
does not parse or lacks a field is reported and treated as not done, so ``--resume`` recomputes
it instead of trusting it.

One process writes a folder at a time: :meth:`RunFolder.lock` takes an exclusive ``flock`` on
``.lock`` for as long as a run (or a resumed run, or ``rankbench report``) writes it; a second
writer is refused with one line naming the holder. The kernel releases the lock when its process
ends, however it ends, so the lock of a killed run never blocks (POSIX only; elsewhere there is no
lock).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .errors import RankbenchError
from .utils.fileio import atomic_write_json, atomic_write_text

CONFIG, SPLITS, MANIFEST, TRIALS, LATEST = "config.yaml", "splits.json", "manifest.json", "trials", "latest"
LOCK, RUNNING = ".lock", ".running"
_RECORD_KEYS = ("setting", "trial", "method", "metrics")


class RunFolderError(RankbenchError):
    """A run folder that is missing, not a run, or not writable."""


@dataclass
class Problem:
    """A trial file that cannot be used (kept on disk, recomputed on resume)."""

    path: Path
    reason: str


class RunLock:
    """The writer lock of one run folder, held by this process until :meth:`release` (or exit)."""

    def __init__(self, fd: int | None):
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the last descriptor releases the flock
            self._fd = None

    def __enter__(self) -> "RunLock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def _holder(path: Path) -> str:
    """Who holds a lock, from what the holder wrote into the lock file."""
    try:
        info = json.loads(path.read_text())
        return (f"pid {info['pid']} on {info['host']}, since {info['since']}: {info['command']}"
                if isinstance(info, dict) else "another process")
    except (OSError, ValueError, KeyError):
        return "a process that is just starting"


def trial_name(setting: str, trial: int, method: str) -> str:
    """Stable, filesystem-safe file name of one result (settings can hold any characters)."""
    tag = hashlib.sha1(f"{setting}|{method}".encode()).hexdigest()[:10]
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in method)[:40]
    return f"{safe}-{tag}-t{trial:03d}.json"


def job_id(setting: str, trial: int, method: str) -> str:
    """A job's id: its result file's name without ``.json`` (names its heartbeat too)."""
    return trial_name(setting, trial, method).removesuffix(".json")


def parse_record(text: str) -> dict[str, Any]:
    """A trial record from its JSON text; ValueError naming what is wrong."""
    rec = json.loads(text)
    if not isinstance(rec, dict):
        raise ValueError("not a JSON object")
    missing = [k for k in _RECORD_KEYS if k not in rec]
    if missing:
        raise ValueError(f"missing field {missing[0]!r}")
    if not isinstance(rec["metrics"], dict):
        raise ValueError("'metrics' is not a mapping")
    return rec


def _link_latest(base: Path, name: str) -> None:
    """Point ``<base>/latest`` at the newest run folder ``name`` (best effort: where links cannot
    be made, e.g. some Windows set-ups, there is simply no ``latest``)."""
    tmp = base / f".latest-{os.getpid()}"
    try:
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(name, target_is_directory=True)
        os.replace(tmp, base / LATEST)
    except OSError:
        tmp.unlink(missing_ok=True)


def _suffix(name: str) -> int:
    """The ``k`` of ``<stamp>-k`` (1 for a plain stamp): orders runs started in the same second."""
    tail = name.rsplit("-", 1)[-1] if name.count("-") >= 2 else ""
    return int(tail) if tail.isdigit() else 1


class RunFolder:
    """One run's folder (see the module docstring)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"RunFolder({str(self.path)!r})"

    # ------------------------------------------------------------------ creating and opening
    @classmethod
    def create(cls, path: str | os.PathLike | None = None, root: str | os.PathLike = "results",
               name: str = "run") -> "RunFolder":
        """A new, empty run folder: ``path`` exactly, or ``<root>/<name>/<timestamp>[-k]``.

        ``path`` may exist only as an empty folder; a folder holding anything is refused, so an
        earlier run is never overwritten.
        """
        try:
            if path is not None:
                p = Path(path)
                if p.exists() and (not p.is_dir() or any(p.iterdir())):
                    what = "a run" if (p / SPLITS).exists() or (p / CONFIG).exists() else "files"
                    raise RunFolderError(f"{p}: already holds {what}; choose another --out "
                                         + ("or continue it with --resume" if what == "a run" else ""))
                p.mkdir(parents=True, exist_ok=True)
                return cls(p)
            base = Path(root) / name
            base.mkdir(parents=True, exist_ok=True)
            stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
            for k in range(1, 1000):
                p = base / (stamp if k == 1 else f"{stamp}-{k}")
                try:
                    p.mkdir()
                except FileExistsError:
                    continue
                _link_latest(base, p.name)
                return cls(p)
            raise RunFolderError(f"{base}: could not create a new run folder")
        except OSError as exc:
            where = path if path is not None else Path(root) / name
            raise RunFolderError(f"{where}: cannot create the run folder ({exc.strerror or exc})") from None

    @classmethod
    def open(cls, path: str | os.PathLike) -> "RunFolder":
        """An existing run folder (one with a config.yaml)."""
        p = Path(path)
        if not p.is_dir():
            raise RunFolderError(f"{p}: no such run folder")
        if not (p / CONFIG).is_file():
            raise RunFolderError(f"{p}: not a run folder (no {CONFIG})")
        return cls(p)

    @property
    def concrete(self) -> "RunFolder":
        """The same folder by its own name, never through a link: ``results/x/latest`` becomes
        ``results/x/20250101-120000`` (a relative path stays relative to the working folder)."""
        real = Path(os.path.realpath(self.path))
        return RunFolder(real if self.path.is_absolute() else Path(os.path.relpath(real)))

    @staticmethod
    def latest(root: str | os.PathLike, name: str) -> "RunFolder":
        base = Path(root) / name
        runs = sorted((p for p in base.glob("*") if p.name != LATEST and (p / SPLITS).is_file()),
                      key=lambda p: p.stat().st_mtime) if base.is_dir() else []
        if not runs:
            raise RunFolderError(f"no earlier run of {name!r} under {base}")
        return RunFolder(runs[-1])

    def remove_if_empty_of_results(self) -> bool:
        """Delete a folder that holds no result (a run that failed before its first result)."""
        if any(self.trials_dir.glob("*.json")):
            return False
        import shutil

        shutil.rmtree(self.path, ignore_errors=True)
        link = self.path.parent / LATEST
        if link.is_symlink() and os.readlink(link) == self.path.name:
            # ``latest`` must not dangle: back to the newest run left, or gone with the last one
            runs = sorted(p.name for p in self.path.parent.iterdir()
                          if p.name != LATEST and not p.is_symlink() and (p / CONFIG).is_file())
            if runs:
                _link_latest(self.path.parent, max(runs, key=lambda n: (n.split("-")[:2], _suffix(n))))
            else:
                link.unlink(missing_ok=True)
        return True

    def lock(self, command: str) -> RunLock:
        """This process becomes the folder's only writer (see the module docstring); ``command``
        (what is writing, e.g. ``rankbench run --resume RUN``) is shown to a refused writer."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover - non-POSIX: no lock
            return RunLock(None)
        path = self.path / LOCK
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise RunFolderError(f"{self.path}: cannot lock the run folder ({exc.strerror or exc})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise RunFolderError(f"{self.path}: another rankbench writes this run folder ({_holder(path)}); "
                                 "wait for it to end or stop it") from None
        info = {"pid": os.getpid(), "host": socket.gethostname(), "command": command,
                "since": _dt.datetime.now().astimezone().isoformat(timespec="seconds")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode(), 0)
        return RunLock(fd)

    def check_writable(self) -> None:
        probe = self.path / ".write-test"
        try:
            probe.write_text("")
            probe.unlink()
        except OSError as exc:
            raise RunFolderError(f"{self.path}: not writable ({exc.strerror or exc})") from None

    # ------------------------------------------------------------------ config and splits
    @property
    def trials_dir(self) -> Path:
        return self.path / TRIALS

    def write_config(self, data: dict[str, Any]) -> None:
        atomic_write_text(self.path / CONFIG, yaml.safe_dump(data, sort_keys=False, allow_unicode=True))

    def read_config(self) -> dict[str, Any]:
        try:
            data = yaml.safe_load((self.path / CONFIG).read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError, UnicodeDecodeError) as exc:
            raise RunFolderError(f"{self.path / CONFIG}: unreadable ({exc})") from None
        if not isinstance(data, dict):
            raise RunFolderError(f"{self.path / CONFIG}: expected a mapping of config keys")
        return data

    def has_splits(self) -> bool:
        return (self.path / SPLITS).is_file()

    def write_splits(self, splits: dict[str, Any]) -> None:
        atomic_write_json(self.path / SPLITS, splits)

    def read_splits(self) -> dict[str, Any]:
        path = self.path / SPLITS
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise RunFolderError(f"{path}: unreadable ({exc})") from None
        if not isinstance(data, dict) or "settings" not in data:
            raise RunFolderError(f"{path}: not a rankbench splits file (no 'settings')")
        return data

    # ------------------------------------------------------------------ results
    def trial_path(self, setting: str, trial: int, method: str) -> Path:
        return self.trials_dir / trial_name(setting, trial, method)

    def write_trial(self, record: dict[str, Any]) -> Path:
        path = self.trial_path(record["setting"], record["trial"], record["method"])
        atomic_write_json(path, record)
        return path

    def trial_done(self, setting: str, trial: int, method: str) -> bool:
        """True only for a result file that parses and is the one asked for."""
        path = self.trial_path(setting, trial, method)
        try:
            rec = parse_record(path.read_text())
        except (OSError, ValueError):
            return False
        return (rec["setting"], rec["trial"], rec["method"]) == (setting, trial, method)

    def read_trials(self) -> tuple[list[dict[str, Any]], list[Problem]]:
        """Every usable result, and the files that are not (truncated, not JSON, fields missing)."""
        records, problems = [], []
        for p in sorted(self.trials_dir.glob("*.json")):
            try:
                records.append(parse_record(p.read_text()))
            except (OSError, ValueError, UnicodeDecodeError) as exc:
                problems.append(Problem(p, str(exc) or type(exc).__name__))
        return records, problems

    # ------------------------------------------------------------------ jobs in progress
    def write_heartbeat(self, job_id: str, state: dict[str, Any]) -> None:
        """What job ``job_id`` is doing now (atomically; not flushed to disk: it matters only while
        the run lives)."""
        atomic_write_json(self.path / RUNNING / f"{job_id}.json", state, durable=False)

    def remove_heartbeat(self, job_id: str) -> None:
        (self.path / RUNNING / f"{job_id}.json").unlink(missing_ok=True)

    def read_heartbeats(self) -> dict[str, dict[str, Any]]:
        """Every job in progress by id (a heartbeat being replaced or just removed is skipped)."""
        out = {}
        for p in (self.path / RUNNING).glob("*.json"):
            try:
                out[p.stem] = json.loads(p.read_text())
            except (OSError, ValueError):
                pass
        return out

    def clear_heartbeats(self) -> None:
        """Forget jobs of an earlier session (a killed run leaves its heartbeats behind)."""
        import shutil

        shutil.rmtree(self.path / RUNNING, ignore_errors=True)

    # ------------------------------------------------------------------ manifest
    def read_manifest(self) -> dict[str, Any]:
        try:
            data = json.loads((self.path / MANIFEST).read_text())
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        atomic_write_json(self.path / MANIFEST, manifest)

    def write_text(self, name: str, text: str) -> Path:
        path = self.path / name
        atomic_write_text(path, text)
        return path

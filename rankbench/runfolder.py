"""A run folder: its layout, its exclusive creation, and every read and write of its files.

The one place that knows where a run keeps what: ``config.yaml``, ``splits.json``,
``trials/*.json``, ``manifest.json``, the derived tables and ``plots/``, the writer's ``.lock`` and
the ``.running/`` heartbeats of jobs in progress (each file: docs/developer/house.md, "What a run
writes"). Every file is a typed record of :mod:`rankbench.records`, written atomically through
:mod:`rankbench.utils.fileio` (through no symbolic link inside the folder) and validated when read;
a trial file that does not validate or does not belong to this run (its setting, trial, seed,
method or config fingerprint) is a :class:`Problem`, and so treated as not done: ``--resume``
recomputes it. Folders are created exclusively (``<timestamp>``, ``<timestamp>-2``, ..., and a
``latest`` link), and one process writes a folder at a time (:meth:`RunFolder.lock`: an
exclusive ``flock`` the kernel releases however its process ends; POSIX only).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import shutil
import socket
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .errors import RankbenchError
from .records import (
    ROW_KEYS,
    SCHEMA_VERSION,
    Manifest,
    SettingSplits,
    Splits,
    TrialRecord,
    TrialSplit,
    config_fingerprint,
)
from .utils.fileio import FileLock, NotRegularFile, atomic_write_text, to_json

__all__ = ["ROW_KEYS", "SCHEMA_VERSION", "Manifest", "SettingSplits", "Splits", "TrialRecord", "TrialSplit",
           "config_fingerprint",
           "RunFolder", "RunFolderError", "Problem", "RunState", "trial_name", "job_id"]

CONFIG, SPLITS, MANIFEST, TRIALS, LATEST = "config.yaml", "splits.json", "manifest.json", "trials", "latest"
LOCK, RUNNING = ".lock", ".running"
#: the derived files (``rankbench report`` rebuilds them from the records)
TRIALS_CSV, SUMMARY_CSV, CURVES_CSV, DIAGNOSTICS_CSV = "trials.csv", "summary.csv", "curves.csv", "diagnostics.csv"
SUMMARY_MD, SUMMARY_TEX, PLOTS = "summary.md", "summary.tex", "plots"


class RunFolderError(RankbenchError):
    """A run folder that is missing, not a run, or not writable."""


@dataclass
class Problem:
    """A file of the run folder that cannot be used (kept on disk; a trial is recomputed on resume)."""

    path: Path
    reason: str


def run_methods(config: dict[str, Any]) -> list[str]:
    """The methods a run computes: its config's rankers, only those of ``methods`` when it names some."""
    names = [r["name"] for r in config.get("rankers") or [] if isinstance(r, dict) and "name" in r]
    return [m for m in names if not config.get("methods") or m in config["methods"]]


@dataclass
class RunState:
    """A run: its resolved config, its splits (None before they are drawn), its manifest (None
    without one), its usable trial records (finished or failed, in file-name order) and the files
    that are not usable. A run holds it in memory while it writes its folder and hands it to its
    report; :meth:`RunFolder.read_state` reads it back, each file once."""

    config: dict[str, Any]
    splits: Splits | None = None
    manifest: Manifest | None = None
    records: list[TrialRecord] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


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


@dataclass
class _Context:
    """What a trial record of this run must agree with: its settings' seeds (from splits.json),
    its methods (config.yaml) and the fingerprint of its config (manifest.json); None where the
    run folder does not say."""

    seeds: dict[str, list[tuple[int, int | None]]] | None
    methods: list[str] | None
    fingerprint: str | None

    @classmethod
    def of(cls, config: dict | None, splits: Splits | None, manifest: Manifest | None) -> "_Context":
        seeds = {s.label: [(t.seed, t.ranker_seed) for t in s.trials] for s in splits.settings} \
            if splits is not None else None
        return cls(seeds, None if config is None else run_methods(config),
                   manifest.config_fingerprint if manifest is not None else None)

    def check(self, rec: TrialRecord, file_name: str) -> None:
        """ValueError naming how ``rec`` (read from ``file_name``) does not belong to this run."""
        if trial_name(*rec.key) != file_name:
            raise ValueError(f"holds the result of {rec.method} trial {rec.trial} (setting {rec.setting!r}), "
                             "not the one its name says")
        if self.fingerprint is not None and rec.config_fingerprint != self.fingerprint:
            raise ValueError("computed by another run (its config fingerprint is not this run's)")
        if self.methods is not None and rec.method not in self.methods:
            raise ValueError(f"method {rec.method!r} is not a method of this run")
        if self.seeds is None:
            return
        trials = self.seeds.get(rec.setting)
        if trials is None:
            raise ValueError(f"setting {rec.setting!r} is not a setting of this run")
        if rec.trial >= len(trials):
            raise ValueError(f"trial {rec.trial}: this run has {len(trials)} trials")
        seed, ranker_seed = trials[rec.trial]
        if rec.seed != seed or None not in (rec.ranker_seed, ranker_seed) and rec.ranker_seed != ranker_seed:
            raise ValueError(f"seed {rec.seed} is not the seed splits.json records for trial {rec.trial} ({seed}): "
                             "a trial of another run")


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

        ``path`` may exist only as an empty folder, or as a run that never started: one killed
        before it drew its splits (while loading data or extracting features), which holds no
        result and whose writer is gone; :meth:`claim` clears it for reuse. A folder holding
        anything else is refused, so an earlier run is never overwritten. ``name`` is a name,
        never a path (the config's ``name``, checked by its schema).
        """
        try:
            if path is not None:
                p = Path(path)
                if p.exists() and (not p.is_dir() or any(p.iterdir())):
                    if cls(p)._never_started():
                        return cls(p)
                    if not p.is_dir():
                        raise RunFolderError(f"{p}: exists and is a file, not a folder; choose another --out")
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

    #: what a run that never started may leave: its config, its opening manifest, its lock, its
    #: heartbeats and an empty trials folder
    _START = {CONFIG, MANIFEST, LOCK, RUNNING, TRIALS}

    def _never_started(self, probe: bool = True) -> bool:
        """A run killed before its splits: nothing but its start, no result, no live writer
        (``probe``: its lock is tried; not when this process holds it)."""
        p = self.path
        if not p.is_dir() or not (p / CONFIG).is_file() or (p / SPLITS).exists():
            return False
        if any(e.name not in self._START for e in self._entries()) or any(self.trials_dir.glob("*")):
            return False
        if probe:
            try:
                self.lock("probe").release()
            except RunFolderError:  # its writer is still at it
                return False
        return True

    def _entries(self) -> list[Path]:
        """What the folder holds, but another process's passing write test (:meth:`check_writable`)."""
        return [e for e in self.path.iterdir() if not e.name.startswith(".write-test")]

    def claim(self, command: str) -> FileLock:
        """The lock of a new run (:meth:`lock`), taken before anything is cleared: the folder
        :meth:`create` gave, still empty, or a run that never started, whose files are cleared now,
        under the lock. A folder another process filled meanwhile is refused (two processes that
        each cleared a killed run's files, the lock's among them, both took a lock and wrote)."""
        lock = self.lock(command)
        try:
            if any(e.name != LOCK for e in self._entries()):
                if not self._never_started(probe=False):
                    raise RunFolderError(f"{self.path}: already holds a run, started meanwhile by another rankbench; "
                                         "choose another --out")
                self._clear_start()
        except BaseException:
            lock.release()
            raise
        return lock

    def _clear_start(self) -> None:
        for name in self._START - {LOCK}:   # the lock is this process's own
            target = self.path / name
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            else:
                target.unlink(missing_ok=True)

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

    def remove_if_empty_of_results(self) -> bool:
        """Delete a folder that holds no result (a run that failed before its first result)."""
        if any(self.trials_dir.glob("*.json")):
            return False
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

    def lock(self, command: str) -> FileLock:
        """This process becomes the folder's only writer (see the module docstring); ``command``
        (what is writing, e.g. ``rankbench run --resume RUN``) is shown to a refused writer."""
        path = self.path / LOCK
        try:
            lock = FileLock(path, self.path, blocking=False)
        except BlockingIOError:
            raise RunFolderError(f"{self.path}: another rankbench writes this run folder ({_holder(path)}); "
                                 "wait for it to end or stop it") from None
        except NotRegularFile as exc:
            raise RunFolderError(f"{path}: cannot lock the run folder: {exc.strerror}") from None
        except OSError as exc:
            raise RunFolderError(f"{self.path}: cannot lock the run folder ({exc.strerror or exc})") from None
        if lock.fd is not None:
            info = {"pid": os.getpid(), "host": socket.gethostname(), "command": command,
                    "since": _dt.datetime.now().astimezone().isoformat(timespec="seconds")}
            os.ftruncate(lock.fd, 0)
            os.pwrite(lock.fd, json.dumps(info).encode(), 0)
        return lock

    def writer(self) -> str | None:
        """Who writes the folder now, when that is another process (its pid, host, start and
        command); None when no one does, or this process."""
        path = self.path / LOCK
        try:
            FileLock(path, self.path, blocking=False).release()
        except BlockingIOError:
            try:
                if json.loads(path.read_text()).get("pid") == os.getpid():
                    return None
            except (OSError, ValueError, AttributeError):
                pass
            return _holder(path)
        except OSError:   # a folder it cannot lock (read-only): no writer can lock it either
            return None
        return None

    def check_writable(self) -> None:
        try:
            fd, probe = tempfile.mkstemp(dir=self.path, prefix=".write-test")   # O_EXCL: follows no link
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            raise RunFolderError(f"{self.path}: not writable ({exc.strerror or exc})") from None

    def _write(self, path: Path, text: str, durable: bool = True) -> Path:
        """Every file of the folder is written here: atomically, through no link below the folder."""
        atomic_write_text(path, text, durable, root=self.path)
        return path

    # ------------------------------------------------------------------ config and splits
    @property
    def trials_dir(self) -> Path:
        return self.path / TRIALS

    def write_config(self, data: dict[str, Any]) -> None:
        self._write(self.path / CONFIG, yaml.safe_dump(data, sort_keys=False, allow_unicode=True))

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

    def write_splits(self, splits: Splits) -> None:
        self._write(self.path / SPLITS, splits.to_json())

    def read_splits(self) -> Splits:
        """splits.json, validated (:class:`rankbench.records.Splits`); RunFolderError naming what is wrong."""
        path = self.path / SPLITS
        try:
            return Splits.parse(path.read_bytes())
        except (OSError, ValueError) as exc:
            raise RunFolderError(f"{path}: not a usable splits file ({_reason(exc)})") from None

    # ------------------------------------------------------------------ results
    def trial_path(self, setting: str, trial: int, method: str) -> Path:
        return self.trials_dir / trial_name(setting, trial, method)

    def write_trial(self, record: TrialRecord) -> Path:
        return self._write(self.trial_path(*record.key), record.to_json())

    def _context(self) -> _Context:
        """What this run's trial records must agree with (see :class:`_Context`)."""
        def read(what):
            try:
                return what()
            except RunFolderError:  # missing or unusable (reported where it is read)
                return None

        return _Context.of(read(self.read_config), read(self.read_splits), read(self.read_manifest))

    def read_trials(self, context: _Context | None = None) -> tuple[list[TrialRecord], list[Problem]]:
        """Every usable record (finished or failed) and the files that are not: truncated, not
        JSON, not a valid record (a field missing, unknown, of the wrong type or out of range), or
        not a record of this run (another setting, trial, seed, method or config)."""
        records, problems = [], []
        context = context or self._context()
        for p in sorted(self.trials_dir.glob("*.json")):
            try:
                rec = TrialRecord.parse(p.read_bytes())
                context.check(rec, p.name)
                records.append(rec)
            except (OSError, ValueError) as exc:
                problems.append(Problem(p, _reason(exc)))
        return records, problems

    def read_state(self) -> RunState:
        """The run as its folder holds it, each file read once: an unusable manifest, a config.yaml
        edited since the run started and results without their splits are problems too
        (RunFolderError for unreadable config or splits)."""
        config, problems = self.read_config(), []
        try:
            manifest = self.read_manifest()
        except RunFolderError as exc:
            manifest = None
            problems.append(Problem(self.path / MANIFEST, str(exc).split(": ", 1)[-1]))
        if manifest is not None and manifest.config_fingerprint not in (None, config_fingerprint(config)):
            problems.append(Problem(self.path / CONFIG, "edited since the run started (the manifest's fingerprint "
                                    "differs): the tables and grades follow the edited file, not the run"))
        splits = self.read_splits() if self.has_splits() else None
        records, bad = self.read_trials(_Context.of(config, splits, manifest))
        if manifest is None and not problems and (splits is not None or records or bad):
            problems.append(Problem(self.path / MANIFEST, "missing"))
            # the results' own fingerprints stand in for the manifest's
            if any(r.config_fingerprint not in (None, config_fingerprint(config)) for r in records):
                problems.append(Problem(self.path / CONFIG, "edited since the run started (its results' config "
                                        "fingerprint differs): the tables and grades follow the edited file, not "
                                        "the run"))
        if splits is None and records:
            problems.append(Problem(self.path / SPLITS, "missing: the trials' splits can be neither checked "
                                    "nor paired"))
        return RunState(config, splits, manifest, records, bad + problems)

    # ------------------------------------------------------------------ jobs in progress
    def write_heartbeat(self, job_id: str, state: dict[str, Any]) -> None:
        """What job ``job_id`` is doing now (atomically; not flushed to disk: it matters only while
        the run lives)."""
        self._write(self.path / RUNNING / f"{job_id}.json", to_json(state), durable=False)

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
        shutil.rmtree(self.path / RUNNING, ignore_errors=True)

    # ------------------------------------------------------------------ manifest
    def read_manifest(self) -> Manifest | None:
        """manifest.json, validated; None when the folder has none; RunFolderError when it is unusable."""
        path = self.path / MANIFEST
        try:
            text = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise RunFolderError(f"{path}: unreadable ({exc.strerror or exc})") from None
        try:
            return Manifest.parse(text)
        except ValueError as exc:
            raise RunFolderError(f"{path}: not a usable manifest ({_reason(exc)})") from None

    def write_manifest(self, manifest: Manifest) -> None:
        self._write(self.path / MANIFEST, manifest.to_json())

    @property
    def plots_dir(self) -> Path:
        return self.path / PLOTS

    def write_text(self, name: str, text: str) -> Path:
        return self._write(self.path / name, text)


def _reason(exc: Exception) -> str:
    """One line saying why a file is unusable."""
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0]

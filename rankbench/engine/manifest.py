"""A run's manifest (what made it: versions, machine, command, data root, plug-ins' code, sessions)
and the checks that a resumed run is the one its folder started."""

from __future__ import annotations

import datetime as _dt
import os
import platform
import subprocess
import sys
from pathlib import Path

from .. import __version__
from ..config import first_difference
from ..runfolder import CONFIG, MANIFEST, SPLITS, Manifest, RunFolder, RunFolderError, RunState, config_fingerprint
from ..utils.diskcache import code_fingerprint
from .plan import EngineOptions, Plan


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], capture_output=True, text=True, timeout=5,
                             cwd=Path(__file__).resolve().parent)
        return out.stdout.strip() if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def package_versions() -> dict[str, str]:
    from importlib import metadata

    out = {}
    for pkg in ("numpy", "scipy", "scikit-learn", "scikit-image", "opencv-python-headless", "pandas",
                "matplotlib", "joblib", "pydantic", "click", "pyyaml", "threadpoolctl"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return out


def run_manifest(p: Plan, opts: EngineOptions, state: RunState, prev: Manifest | None, started: _dt.datetime,
                 feature_timing: dict, n_done: int, n_total: int, executor: dict, final: bool = True) -> Manifest:
    """The run's manifest.json, from its state in memory (``prev``: the manifest before this
    session, None for a new run); ``executor`` describes where this session's jobs ran (each
    session keeps its own).

    Written when a session starts (``final=False``: the session's ``end`` is null) and again when
    it returns or is interrupted, which closes it. A session whose ``end`` stays null was killed.
    """
    wall: dict[str, float] = {}
    for r in state.records:  # the time this run spent: a reused result's was spent by the run that computed it
        wall[r.method] = wall.get(r.method, 0.0) + (r.wall_s if r.reused is None else 0.0)
    commit = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain", "--untracked-files=no") if commit else None
    now = _dt.datetime.now().astimezone()
    end = now.isoformat(timespec="seconds") if final else None
    session = {"start": started.isoformat(timespec="seconds"), "end": end, "executor": executor}
    sessions = [s.model_dump() for s in prev.sessions] if prev else []
    # the config the run was started with, as its folder holds it, stays the one recorded (a
    # resumed run cannot change it; one made before fingerprints keeps having none)
    config = prev.config if prev else state.config
    return Manifest.build({
        "rankbench_version": prev.rankbench_version if prev else __version__,
        "config_fingerprint": prev.config_fingerprint if prev else config_fingerprint(config),
        "config": config,
        "git_commit": commit,
        "git_dirty": bool(status) if status is not None else None,
        "python": sys.version.split()[0],
        "packages": package_versions(),
        "machine": {"platform": platform.platform(), "processor": platform.machine(), "cpus": os.cpu_count()},
        # where the run came from stays as it was started (collect files a run by its config's
        # folder): a resumed session's own command is not the run's
        "config_path": prev.config_path if prev else p.experiment.origin,
        "cwd": prev.cwd if prev else os.getcwd(),
        "invocation": prev.invocation if prev else opts.invocation,
        "executor": executor,
        # the root the loaders used: --data-root, else $RANKBENCH_DATA, else ./datasets
        "data_root": str(Path(opts.data_root or os.environ.get("RANKBENCH_DATA") or "datasets").resolve()),
        "datasets": {sp.config.dataset.name: sp.dataset.fingerprint for sp in p.settings},
        "plugin_code": prev.plugin_code if prev else plugin_code(p),
        "features": {**(prev.features if prev else {}), **feature_timing},
        "start": prev.start if prev else started.isoformat(timespec="seconds"),
        "sessions": sessions + [session],
        "end": end,
        "wall_s_per_method": {k: round(v, 3) for k, v in wall.items()},
        "n_results": n_done,
        "n_failed": sum(not r.ok for r in state.records),
        "n_expected": n_total,
        "complete": n_done == n_total,
    })


def verify_resume(folder: RunFolder) -> RunState:
    """The run in ``folder`` as it holds it (:meth:`~rankbench.runfolder.RunFolder.read_state`),
    refused (one line naming why) when it is not the run its folder started: one made by another
    rankbench version, one whose config.yaml was edited since (naming the first changed key), or
    one whose manifest is missing or unusable once it has splits or results, or one whose results
    lost their splits."""
    where = f"--resume {folder.path}"
    manifest = folder.read_manifest()  # an unusable one: RunFolderError naming the file
    if manifest is None and (folder.has_splits() or any(folder.trials_dir.glob("*.json"))):
        raise RunFolderError(f"{where}: no {MANIFEST}: the run's config and version cannot be verified; "
                             "start a new run")
    if manifest is not None and manifest.rankbench_version != __version__:
        raise RunFolderError(f"{where}: the run was made by rankbench {manifest.rankbench_version}, this is "
                             f"rankbench {__version__}; resume it with that version or start a new run")
    state = folder.read_state()
    problems = {pr.path.name: pr for pr in state.problems}
    if CONFIG in problems:  # edited since the start (its fingerprint is not the manifest's)
        diff = first_difference(manifest.config, state.config)
        what = "its text, not its values" if diff is None else f"{diff[0]}: {diff[1]!r} then, {diff[2]!r} now"
        raise RunFolderError(f"{where}: {CONFIG} was changed after the run started ({what}); put it back or start "
                             "a new run")
    if SPLITS in problems:  # drawn again, they would be paired with results computed on other rows, or other data
        raise RunFolderError(f"{where}: {SPLITS} {problems[SPLITS].reason}; start a new run")
    return state


def plugin_code(p: Plan) -> dict[str, str]:
    """Every plug-in class of the plan (its protocols, rankers and their steps; rankbench's own are
    versioned with it) and its code's fingerprint (:func:`~rankbench.utils.diskcache.code_fingerprint`)."""
    classes = {type(sp.protocol) for sp in p.settings}
    classes |= {c.cls for sp in p.settings for m in sp.methods for c in (m.ranker, *m.steps) if c.estimator is None}
    return {f"{c.__module__}.{c.__qualname__}": code for c in classes
            if c.__module__.split(".")[0] != "rankbench" and (code := code_fingerprint(c))}


def verify_code(prev: Manifest, p: Plan, where: str) -> None:
    """Refuse to resume a run whose plug-ins' code changed since it started: its trials would mix the
    two versions' results in one mean."""
    now = plugin_code(p)
    changed = sorted(k for k, v in prev.plugin_code.items() if now.get(k, v) != v)
    if changed:
        module, _, name = changed[0].rpartition(".")
        file = getattr(sys.modules.get(module), "__file__", None) or module
        raise RunFolderError(f"{where}: the code of plug-in {name} ({file}, or a module of its own package or "
                             "folder) changed since the run started; put it back or start a new run")

"""Run an experiment: settings x trials x methods, in parallel, resumable.

:func:`plan` loads each setting's dataset, builds its protocol and checks the dataset and every
ranker against it (what ``rankbench validate`` runs; nothing is written). :func:`execute` then
extracts (or loads cached) features, draws every trial's split from a recorded seed and writes
``splits.json`` and an open ``manifest.json`` (with the data root) before any ranker runs, so
even a run killed outright can be resumed. An executor (:mod:`.executors`: this machine's processes
or a Dask cluster) computes the (setting, trial, method) jobs, and each result is written
atomically the moment it exists, so an interrupted run loses at most the jobs in flight, and a
resumed run, on either executor, skips every finished job (a truncated or unreadable file counts
as unfinished) and reuses the recorded splits: the numbers come out exactly as in an
uninterrupted run.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import platform
import subprocess
import sys
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .. import __version__
from ..config import (
    Config,
    Experiment,
    RankerCfg,
    accepts_random_state,
    dataset_params,
    ranker_feature_names,
    ranker_params,
)
from ..datasets.base import Dataset
from ..errors import ConfigError, ErrorList, RankbenchError, Terminated
from ..params import check_params
from ..protocols.base import Protocol
from ..rankers.base import accepts_views, capabilities
from ..registry import datasets, features, preprocessors, protocols, rankers
from ..runfolder import RunFolder, job_id
from ..utils.meter import Meter
from ..utils.progress import FitReporter, JobInfo, RunProgress, reporting
from ..utils.seeds import ranker_seed, split_seed
from .cache import get_features
from .estimator import EstimatorSpec, duck_capability
from .executors import Work, make_executor
from .pipeline import RankerPipeline


class RunInterrupted(RankbenchError):
    """The user stopped a run (Ctrl-C, or SIGTERM: ``terminated``); finished results are kept in
    ``folder``."""

    def __init__(self, folder: RunFolder, done: int, total: int, terminated: bool = False):
        self.folder, self.done, self.total, self.terminated = folder, done, total, terminated
        how = "terminated (SIGTERM)" if terminated else "interrupted"
        super().__init__(f"{how}: {done} of {total} results saved in {folder.path}")


@dataclass
class EngineOptions:
    """How to run (not what): where the data is, where the jobs run, progress, what to record.

    ``executor`` is ``local`` (``jobs`` processes of this machine) or ``dask`` (the cluster whose
    scheduler is at ``scheduler``, or a LocalCluster sized to this machine); ``dask_timeout`` is
    how long to wait for its scheduler to answer and for its first worker, and ``retries`` how
    often a job that raised is run again there (see :mod:`rankbench.engine.executors`).
    """

    data_root: str | None = None
    jobs: int = 1
    executor: str = "local"
    scheduler: str | None = None
    dask_timeout: float = 20.0
    retries: int = 2
    use_cache: bool = True
    progress: bool = True
    #: what the caller wants recorded about how the run was started (command, overrides)
    invocation: dict[str, Any] = field(default_factory=dict)


@dataclass
class MethodSpec:
    """Everything needed to build one compared method's fresh estimator, in any process.

    The ranker is kept by name (a registry name or an import path), not as a class, so a worker
    process resolves it itself; users' classes from a file outside any package work in workers.
    """

    name: str
    ranker: str
    params: dict[str, Any]
    steps: list[tuple[str, dict[str, Any]]]
    feature_sets: list[str]
    combine: str
    seeded: bool

    def make(self, seed: int | None = None):
        params = dict(self.params)
        if self.seeded and "random_state" not in params and seed is not None:
            params["random_state"] = seed
        est = rankers.get(self.ranker)(**params)
        if not self.steps:
            return est
        steps = [(f"{name}_{i}", preprocessors.get(name)(**p)) for i, (name, p) in enumerate(self.steps)]
        return RankerPipeline(steps + [("ranker", est)])


@dataclass
class SettingPlan:
    label: str
    values: dict[str, Any]
    config: Config
    dataset: Dataset
    protocol: Protocol
    methods: list[MethodSpec]


@dataclass
class Plan:
    experiment: Experiment
    settings: list[SettingPlan]

    @property
    def n_jobs(self) -> int:
        return sum(s.config.trials * len(s.methods) for s in self.settings)


@dataclass
class Job:
    setting: str
    trial: int
    method: str
    seed: int
    ranker_seed: int


@dataclass
class Outcome:
    folder: RunFolder
    n_done: int
    n_total: int
    n_computed: int


# ----------------------------------------------------------------------------- planning
def _method(rcfg: RankerCfg, cfg: Config, origin: str) -> MethodSpec:
    cls, params = ranker_params(cfg, rcfg, f"{origin}: rankers.{rcfg.name}")
    steps = []
    for i, raw in enumerate(rcfg.preprocess):
        raw = dict(raw)
        name = raw.pop("name")
        scls = preprocessors.get(name)
        steps.append((name, check_params(scls, raw, f"{origin}: rankers.{rcfg.name}.preprocess.{i}")))
    return MethodSpec(rcfg.name, rcfg.ranker, params, steps, ranker_feature_names(cfg, rcfg), rcfg.combine,
                      accepts_random_state(cls))


def load_dataset(cfg: Config, data_root: str | None, origin: str = "") -> Dataset:
    where = f"{origin}: dataset" if origin else "dataset"
    loader = datasets.build(cfg.dataset.name, dataset_params(cfg), where)
    return loader.load(data_root)


def plan(experiment: Experiment, data_root: str | None = None, methods: list[EstimatorSpec] | None = None) -> Plan:
    """Load datasets, build protocols and check datasets and rankers against them; write nothing.

    ``methods`` (``app.evaluate``): compare these estimator objects instead of the config's rankers.
    """
    loaded: dict[str, Dataset] = {}
    out = []
    for st in experiment.settings:
        cfg = st.config
        origin = experiment.origin + (f" [{st.label}]" if st.label else "")
        dkey = json.dumps(cfg.dataset.model_dump(), sort_keys=True, default=str)
        if dkey not in loaded:
            loaded[dkey] = load_dataset(cfg, data_root, experiment.origin)
        dataset = loaded[dkey]
        protocol = protocols.build(cfg.protocol.name, cfg.protocol.params(), f"{origin}: protocol")
        errors = ErrorList()
        for check, arg in ((protocol.check_dataset, dataset), (protocol.check_features, [f.key for f in cfg.features])):
            try:
                check(arg)
            except ConfigError as exc:  # a protocol names the key path; the file comes from here
                msg = str(exc)
                errors.add(exc if msg.startswith(origin) else type(exc)(f"{origin}: {msg}"))
        specs = []
        for rcfg in cfg.run_rankers() if methods is None else []:
            with errors.check():
                spec = _method(rcfg, cfg, origin)
                _check_method(spec, spec.make(0), protocol, f"{origin}: rankers.{rcfg.name}", rcfg.ranker)
                specs.append(spec)
        for given in methods or []:
            with errors.check():
                specs.append(_checked_object(given, cfg, protocol, origin))
        errors.raise_any()
        out.append(SettingPlan(st.label, st.values, cfg, dataset, protocol, specs))
    return Plan(experiment, out)


def _check_method(spec, probe, protocol: Protocol, where: str, what: str) -> None:
    """A method (its spec and a fresh instance) checked against the protocol."""
    protocol.check_ranker(probe, where)
    if not spec.feature_sets:
        raise ConfigError(f"{where}: no feature sets defined (add a 'features:' list)")
    if spec.combine == "views" and not (accepts_views(probe) or protocol.consumes_views):
        raise ConfigError(f"{where}.combine: ranker {what!r} takes one feature matrix; use combine: concat")


def _checked_object(given: EstimatorSpec, cfg: Config, protocol: Protocol, origin: str) -> EstimatorSpec:
    """An estimator object as a method of this setting: the capability the protocol asks for taken
    from its methods when it declares none, its feature sets checked against the config's."""
    where = f"{origin}: estimator {given.name!r}"
    keys = [f.key for f in cfg.features]
    unknown = [n for n in given.feature_sets if n not in keys]
    if unknown:
        raise ConfigError(f"{where}: features: unknown feature set {unknown[0]!r}; defined: {', '.join(keys) or '(none)'}")
    spec = replace(given, feature_sets=given.feature_sets or keys)
    if not capabilities(given.estimator):
        spec = replace(spec, capability=duck_capability(given.estimator, protocol.capability))
    _check_method(spec, spec.make(0), protocol, where, type(given.estimator).__name__)
    return spec


# ----------------------------------------------------------------------------- features and splits
def _features(sp: SettingPlan, cache: dict, opts: EngineOptions, timing: dict) -> dict[str, np.ndarray]:
    """The feature sets the setting's methods use (every set when the protocol's split reads them)."""
    used = {n for m in sp.methods for n in m.feature_sets}
    feats = {}
    for f in sp.config.features:
        if f.key not in used and not sp.protocol.split_uses_features:
            continue
        extractor = features.build(f.extractor, f.params(), f"features.{f.key}")
        fkey = sp.dataset.fingerprint + json.dumps(extractor.cache_key(), sort_keys=True, default=str)
        if fkey not in cache:
            t0 = time.perf_counter()
            info: dict[str, Any] = {}
            cache[fkey] = get_features(sp.dataset, extractor, n_jobs=opts.jobs, progress=opts.progress,
                                       use_cache=opts.use_cache, info=info)
            # seconds: what getting them took in this run; extract_seconds: the extraction itself
            timing[f.key] = {"extractor": f.extractor, "shape": list(cache[fkey].shape),
                             "seconds": round(time.perf_counter() - t0, 3), **info}
        feats[f.key] = cache[fkey]
    return feats


def method_matrix(spec: MethodSpec, feats: dict[str, np.ndarray]):
    if spec.combine == "views":
        return {n: feats[n] for n in spec.feature_sets}
    mats = [feats[n] for n in spec.feature_sets]
    return mats[0] if len(mats) == 1 else np.hstack([m.reshape(len(m), -1) for m in mats])


def draw_splits(sp: SettingPlan, run_seed: int, feats: dict[str, np.ndarray] | None = None) -> list[dict[str, Any]]:
    """Every trial's split; protocols with ``split_uses_features`` also get the feature sets."""
    kw = {"features": feats or {}} if sp.protocol.split_uses_features else {}
    out = []
    for t in range(sp.config.trials):
        s = split_seed(run_seed, t)
        out.append({"trial": t, "seed": s, "ranker_seed": ranker_seed(run_seed, t),
                    **sp.protocol.split(sp.dataset, np.random.default_rng(s), **kw)})
    return out


def _recorded(folder: RunFolder, p: Plan) -> dict[str, list[dict]]:
    data = folder.read_splits()
    recorded = {s["label"]: s["trials"] for s in data["settings"]}
    for sp in p.settings:
        trials = recorded.get(sp.label)
        if trials is None or len(trials) != sp.config.trials:
            raise ConfigError(f"--resume: {folder.path / 'splits.json'} does not match the config "
                              f"(setting {sp.label or '(default)'!r}); start a new run")
    return recorded


# ----------------------------------------------------------------------------- jobs
def run_job(job: Job, protocol: Protocol, spec: MethodSpec, X, dataset: Dataset, split: dict,
            folder: RunFolder | None = None, progress_to: Callable[[dict], None] | None = None) -> dict[str, Any]:
    """Evaluate one method on one trial's split; write the record when ``folder`` is given.

    The fit's progress (:func:`rankbench.utils.progress.tick`) goes to ``progress_to`` (called
    with the job's state, in this process) or, without it, to the job's heartbeat in ``folder``
    (a worker process; removed when the job ends); with neither, nowhere. Warnings the job raises
    are kept in the record (``warnings``: each text once, with its count) for the caller to show.
    """
    jid = job_id(job.setting, job.trial, job.method)
    sink = progress_to or (partial(folder.write_heartbeat, jid) if folder is not None else None)
    meter = Meter()
    t0 = time.perf_counter()
    with contextlib.ExitStack() as stack:
        caught = stack.enter_context(warnings.catch_warnings(record=True))
        if sink is not None:
            if progress_to is None:
                stack.callback(folder.remove_heartbeat, jid)
            stack.enter_context(reporting(FitReporter(jid, sink)))
        result = protocol.evaluate(lambda: spec.make(job.ranker_seed), X, dataset, split, meter)
    record = {
        "setting": job.setting, "trial": job.trial, "seed": job.seed, "ranker_seed": job.ranker_seed,
        "method": job.method, "metrics": {**result.metrics, **meter.metrics()},
        "curves": result.curves, "extra": result.extra, "wall_s": time.perf_counter() - t0,
    }
    said = Counter(f"{w.category.__name__}: {w.message}" for w in caught)
    if said:
        record["warnings"] = [{"text": text, "count": n} for text, n in said.items()]
    if folder is not None:
        folder.write_trial(record)
    return record


def execute(p: Plan, folder: RunFolder, opts: EngineOptions, resume: bool = False) -> Outcome:
    """Run every job of ``p`` not finished in ``folder`` (see the module docstring)."""
    started = _dt.datetime.now().astimezone()
    exp = p.experiment
    executor = make_executor(opts.executor, opts.jobs, opts.scheduler, opts.dask_timeout, opts.retries)
    with executor:  # connect first: a wrong scheduler address costs no feature extraction
        fcache: dict[str, np.ndarray] = {}
        timing: dict[str, Any] = {}
        recorded = _recorded(folder, p) if resume else {}
        # workers get an absolute path: a reused worker pool may sit in another working folder
        target = RunFolder(folder.path.resolve())
        settings_out, work, n_total = [], [], 0
        slim: dict[int, Dataset] = {}
        matrices: dict[tuple, Any] = {}  # one object per distinct matrix: shipped to workers once
        for sp in p.settings:
            feats = _features(sp, fcache, opts, timing)
            splits = recorded.get(sp.label) or draw_splits(sp, sp.config.seed, feats)
            settings_out.append({"label": sp.label, "values": sp.values, "trials": splits})
            ds = slim.setdefault(id(sp.dataset), sp.dataset.without_images())
            for spec in sp.methods:
                mkey = (spec.combine, *(id(feats[n]) for n in spec.feature_sets))
                if mkey not in matrices:
                    matrices[mkey] = method_matrix(spec, feats)
                for s in splits:
                    n_total += 1
                    job = Job(sp.label, s["trial"], spec.name, s["seed"], s.get("ranker_seed", s["seed"]))
                    if not folder.trial_done(sp.label, s["trial"], spec.name):
                        work.append(Work(job, sp.protocol, spec, matrices[mkey], ds, s))
        if not resume:
            folder.write_splits({"settings": settings_out})
        # before any job: a run killed outright (no Ctrl-C, no exit) still records its data root
        # and command for --resume; this session stays open ("end": null) until it returns
        write_manifest(folder, p, opts, started, timing, n_total - len(work), n_total,
                       executor.describe(), final=False)
        folder.clear_heartbeats()  # jobs a killed session left "in progress"
        earlier = folder.read_trials()[0] if resume else []
        timings: dict[str, list[float]] = {}
        for r in earlier:  # what each method's jobs took before: the ETA of a resumed run starts informed
            if isinstance(r.get("wall_s"), (int, float)):
                timings.setdefault(r["method"], []).append(float(r["wall_s"]))
        progress = RunProgress(exp.name, [JobInfo(w.id, w.job.method, w.label) for w in work], executor.slots(),
                               timings, enabled=opts.progress)
        computed = 0
        try:
            computed = executor.run(run_job, work, target, progress)
        except KeyboardInterrupt as exc:
            done = _count_done(folder, p)
            write_manifest(folder, p, opts, started, timing, done, n_total, executor.describe())
            raise RunInterrupted(folder, done, n_total, isinstance(exc, Terminated)) from None
        finally:
            progress.close()
            folder.clear_heartbeats()
        done = _count_done(folder, p)
        write_manifest(folder, p, opts, started, timing, done, n_total, executor.describe())
    return Outcome(folder, done, n_total, computed)


def _count_done(folder: RunFolder, p: Plan) -> int:
    return sum(folder.trial_done(sp.label, t, m.name)
               for sp in p.settings for t in range(sp.config.trials) for m in sp.methods)


# ----------------------------------------------------------------------------- manifest
def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], capture_output=True, text=True, timeout=5,
                             cwd=Path(__file__).resolve().parent)
        return out.stdout.strip() if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def _versions() -> dict[str, str]:
    from importlib import metadata

    out = {}
    for pkg in ("numpy", "scipy", "scikit-learn", "scikit-image", "opencv-python-headless", "pandas",
                "matplotlib", "joblib", "pydantic", "click", "pyyaml", "threadpoolctl"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return out


def write_manifest(folder: RunFolder, p: Plan, opts: EngineOptions, started: _dt.datetime,
                   feature_timing: dict, n_done: int, n_total: int, executor: dict | None = None,
                   final: bool = True) -> None:
    """manifest.json; ``executor`` describes where this session's jobs ran (each session keeps its own).

    Written when a session starts (``final=False``: the session's ``end`` is null) and again when
    it returns or is interrupted, which closes it. A session whose ``end`` stays null was killed.
    """
    records, _ = folder.read_trials()
    wall: dict[str, float] = {}
    for r in records:
        wall[r["method"]] = wall.get(r["method"], 0.0) + float(r.get("wall_s", 0.0))
    prev = folder.read_manifest()
    executor = executor or {"kind": "local", "workers": opts.jobs}
    commit = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain", "--untracked-files=no") if commit else None
    now = _dt.datetime.now().astimezone()
    end = now.isoformat(timespec="seconds") if final else None
    session = {"start": started.isoformat(timespec="seconds"), "end": end, "executor": executor}
    sessions = prev.get("sessions", [])
    if sessions and sessions[-1].get("end") is None and sessions[-1].get("start") == session["start"]:
        sessions = sessions[:-1]  # this session's opening record, now closed
    manifest = {
        "rankbench_version": __version__,
        "git_commit": commit,
        "git_dirty": bool(status) if status is not None else None,
        "python": sys.version.split()[0],
        "packages": _versions(),
        "machine": {"platform": platform.platform(), "processor": platform.machine(), "cpus": os.cpu_count()},
        "config_path": p.experiment.origin,
        "cwd": os.getcwd(),
        "invocation": opts.invocation,
        "executor": executor,
        # the root the loaders used: --data-root, else $RANKBENCH_DATA, else ./datasets
        "data_root": str(Path(opts.data_root or os.environ.get("RANKBENCH_DATA") or "datasets").resolve()),
        "datasets": {sp.config.dataset.name: sp.dataset.fingerprint for sp in p.settings},
        "features": {**prev.get("features", {}), **feature_timing},
        "start": prev.get("start", started.isoformat(timespec="seconds")),
        "sessions": sessions + [session],
        "end": end,
        "wall_s_per_method": {k: round(v, 3) for k, v in wall.items()},
        "n_results": n_done,
        "n_expected": n_total,
        "complete": n_done == n_total,
    }
    folder.write_manifest(manifest)

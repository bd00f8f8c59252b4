"""Run an experiment: settings x trials x methods, in parallel, resumable.

:func:`execute` extracts (or loads cached) features, draws every trial's split from a recorded
seed and writes ``splits.json`` and an open ``manifest.json`` before any ranker runs, so even a
run killed outright can be resumed; an executor (:mod:`.executors`) then computes the unfinished
jobs, each result written atomically the moment it exists. A resumed run skips every finished job
and reuses the recorded splits: its numbers are those of an uninterrupted run.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..datasets.base import Dataset
from ..errors import ConfigError, RankbenchError, Terminated, os_error_line
from ..runfolder import SCHEMA_VERSION, SPLITS, Manifest, RunFolder, RunFolderError, RunState, SettingSplits, \
    Splits, TrialRecord, TrialSplit, trial_name
from ..utils.progress import JobInfo, RunProgress
from ..utils.seeds import ranker_seed, split_seed
from .cache import get_features
from .estimator import MethodSpec
from .executors import DaskExecutor, LocalExecutor, Work, WorkerDied, cores
from .jobs import Job, run_job
from .manifest import run_manifest, verify_code
from .plan import EngineOptions, Plan, SettingPlan
from .reuse import TrialKeys, reuse_enabled, setting_contents


log = logging.getLogger("rankbench.engine")


class RunInterrupted(RankbenchError):
    """A run stopped before its end (``how``: Ctrl-C, SIGTERM, a worker that died), ``status`` the
    exit status that says so; finished results are kept in ``folder``."""

    def __init__(self, folder: RunFolder | None, done: int, total: int, how: str = "interrupted", status: int = 130):
        self.folder, self.done, self.total, self.status = folder, done, total, status
        kept = f"saved in {folder.path}" if folder is not None else "computed (no run folder kept them)"
        super().__init__(f"{how}: {done} of {total} results {kept}")


@dataclass
class Outcome:
    """What a run (or a resumed session) did: finished jobs of ``n_total``, the failed jobs'
    records (retried by ``--resume``) and the run's state, as its folder (None: none) now holds it."""

    folder: RunFolder | None
    n_done: int
    n_total: int
    failed: list[TrialRecord]
    state: RunState


# ----------------------------------------------------------------------------- features and splits
def setting_features(sp: SettingPlan, cache: dict, opts: EngineOptions, timing: dict) -> dict[str, np.ndarray]:
    """The feature sets the setting's methods use (every set when the protocol's split reads them)."""
    used = {n for m in sp.methods for n in m.feature_sets}
    feats = {}
    for f in sp.config.features:
        if f.key not in used and not sp.protocol.split_uses_features:
            continue
        extractor = sp.components.features[f.key].build()
        fkey = sp.dataset.fingerprint + json.dumps(extractor.cache_key(), sort_keys=True, default=str)
        if fkey not in cache:
            t0 = time.perf_counter()
            info: dict[str, Any] = {}
            try:
                cache[fkey] = get_features(sp.dataset, extractor, n_jobs=opts.jobs, progress=opts.progress,
                                           use_cache=opts.use_cache, info=info)
            except ConfigError as exc:   # parameters that only together are wrong: said with their key
                raise ConfigError(f"features.{f.key}: {exc}") from exc
            except RankbenchError:
                raise
            except Exception as exc:   # an extractor that misbehaves is named, not a traceback
                raise RankbenchError(f"features.{f.key} ({f.extractor}): the extractor failed on {sp.dataset.name}: "
                                     f"{type(exc).__name__}: {exc}") from exc
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


#: the parts of a split its rankers are scored on, and the stream of the trial's seed that orders them
HELD_OUT, ORDER_STREAM = ("test", "probe", "gallery"), 0x0DE7


def draw_splits(sp: SettingPlan, run_seed: int, feats: dict[str, np.ndarray] | None = None) -> list[TrialSplit]:
    """Every trial's split; protocols with ``split_uses_features`` also get the feature sets, those
    with fixed trials the trial's index.

    The held-out parts (:data:`HELD_OUT`) are put in a random order drawn from the trial's seed and
    recorded so: in the order a protocol draws them (rows grouped by label; probe i and gallery i
    one person) a ranker that never reads its input (returns the probes against themselves, or
    the row index) would score near perfectly. Metrics do not depend on the order (ties count at
    their expected value), so an honest ranker's numbers do not change."""
    kw = {"features": feats or {}} if sp.protocol.split_uses_features else {}
    fixed = sp.protocol.fixed_trials(sp.dataset) is not None
    out = []
    for t in range(sp.config.trials):
        s = split_seed(run_seed, t)
        drawn = sp.protocol.split(sp.dataset, np.random.default_rng(s), **kw, **({"trial": t} if fixed else {}))
        order = np.random.default_rng([s, ORDER_STREAM])
        drawn = {k: order.permutation(v) if k in HELD_OUT else v for k, v in drawn.items()}
        try:
            split = TrialSplit.drawn(drawn, t, s, ranker_seed(run_seed, t))
            if split.top_row() >= len(sp.dataset):
                raise ValueError(f"row {split.top_row()} is beyond the dataset's {len(sp.dataset)} items")
        except ValueError as exc:  # a plug-in protocol's split: named, never a traceback
            raise RankbenchError(f"protocol {sp.protocol.registry_name}: trial {t}'s split: {exc}; expected "
                                 f"rows 0..{len(sp.dataset) - 1} of the dataset, each at most once") from None
        out.append(split)
    return out


def _recorded(data: Splits, p: Plan, folder: RunFolder | None,
              contents: dict[str, tuple[str, str]]) -> dict[str, list[TrialSplit]]:
    """The splits a resumed run recorded, checked against its settings, their datasets and the
    files their protocols read (``contents``: each setting's :func:`setting_contents`)."""
    where = f"--resume: {folder.path / SPLITS if folder is not None else SPLITS}"
    for sp in p.settings:
        got = data.setting(sp.label)
        if got is None or len(got.trials) != sp.config.trials:
            raise ConfigError(f"{where} does not match the config (setting {sp.label or '(default)'!r}); "
                              "start a new run")
        n = len(sp.dataset)
        if got.n_items is not None and got.n_items != n:
            raise RunFolderError(f"{where}: the splits were drawn on {got.n_items} items, the dataset now has {n}; "
                                 "start a new run")
        if got.dataset_fingerprint not in (None, sp.dataset.fingerprint):
            raise RunFolderError(f"{where}: dataset {sp.config.dataset.name!r} changed since the splits were drawn "
                                 "(its content fingerprint differs); start a new run")
        content, files = contents[sp.label]
        if got.data_content not in (None, content):
            raise RunFolderError(f"{where}: the labels of dataset {sp.config.dataset.name!r} (or other data its "
                                 "protocol reads beside the features) changed since the splits were drawn; start a "
                                 "new run")
        if got.protocol_files not in (None, files):
            named = ", ".join(map(str, sp.protocol.input_files(sp.dataset)))
            raise RunFolderError(f"{where}: {named or 'a file the protocol reads'} changed since the splits were "
                                 "drawn; put it back or start a new run")
        top = got.top_row()
        if top >= n:
            raise RunFolderError(f"{where}: row {top} is beyond the dataset's {n} items; start a new run")
    return {s.label: s.trials for s in data.settings}


def execute(p: Plan, folder: RunFolder | None, opts: EngineOptions, state: RunState) -> Outcome:
    """Run every job of ``p`` not finished in ``state`` (a new run's config alone, or the run
    ``--resume`` read), writing ``folder`` as results arrive (nothing without one); the run's
    state stays in memory and comes back in the outcome (see the module docstring)."""
    started = _dt.datetime.now().astimezone()
    exp = p.experiment
    opts = _capped(opts)
    prev, jobs = state.manifest, _jobs(p)
    if prev is not None and folder is not None:
        verify_code(prev, p, f"--resume {folder.path}")
    records = {r.key: r for r in state.records}
    problems = {pr.path.name: pr for pr in state.problems}

    def n_done() -> int:
        return sum(r.ok and k in jobs for k, r in records.items())

    def manifest(timing: dict, n_total: int, final: bool = True) -> Manifest:
        state.records = sorted(records.values(), key=lambda r: trial_name(*r.key))
        state.manifest = run_manifest(p, opts, state, prev, started, timing, n_done(), n_total, executor.describe(),
                                      final)
        if folder is not None:
            folder.write_manifest(state.manifest)
        return state.manifest

    executor = (DaskExecutor(opts.scheduler, opts.dask_timeout, opts.retries) if opts.executor == "dask"
                else LocalExecutor(opts.jobs))
    with executor:  # connect first: a wrong scheduler address costs no feature extraction
        # before the features: a run killed while extracting them is resumed with its data root and
        # its config verified (or replaced by a new run: it holds no splits and no result)
        fingerprint = manifest({}, p.n_jobs, final=False).config_fingerprint  # stamped on every record
        fcache: dict[str, np.ndarray] = {}
        timing: dict[str, Any] = {}
        contents = {sp.label: setting_contents(sp) for sp in p.settings}
        recorded = _recorded(state.splits, p, folder, contents) if state.splits is not None else {}
        # workers get an absolute path: a reused worker pool may sit in another working folder
        target = RunFolder(folder.path.resolve()) if folder is not None else None
        settings_out, work, n_total = [], [], 0
        slim: dict[int, Dataset] = {}
        matrices: dict[tuple, Any] = {}  # one object per distinct matrix: shipped to workers once
        keys = TrialKeys(reuse_enabled(opts))
        for sp in p.settings:
            feats = setting_features(sp, fcache, opts, timing)
            splits = recorded.get(sp.label) or draw_splits(sp, sp.config.seed, feats)
            content, files = contents[sp.label]
            settings_out.append(SettingSplits(label=sp.label, values=sp.values, n_items=len(sp.dataset),
                                              dataset_fingerprint=sp.dataset.fingerprint or None, data_content=content,
                                              protocol_files=files, trials=splits))
            ds = slim.setdefault(id(sp.dataset), sp.dataset.without_images())
            skey = keys.setting(sp, contents[sp.label])
            for spec in sp.methods:
                mkey = (spec.combine, *(id(feats[n]) for n in spec.feature_sets))
                if mkey not in matrices:
                    matrices[mkey] = method_matrix(spec, feats)
                xkey = keys.matrix(mkey, matrices[mkey]) if skey else ""
                method_key = keys.method(spec) if skey else None
                for s in splits:
                    n_total += 1
                    key = (sp.label, s.trial, spec.name)
                    if key in records and records[key].ok:
                        continue
                    job = Job(sp.label, s.trial, spec.name, s.seed, s.fit_seed, fingerprint,
                              keys.job(skey, xkey, method_key, s))
                    work.append(Work(job, sp.protocol, spec, matrices[mkey], ds, s))
        if not recorded:  # a new run, or one killed before its splits were written
            state.splits = Splits(schema_version=SCHEMA_VERSION, settings=settings_out)
            if folder is not None:
                folder.write_splits(state.splits)
        # before any job: a run killed outright (no Ctrl-C, no exit) still records its data root
        # and command for --resume; this session stays open ("end": null) until it returns
        manifest(timing, n_total, final=False)
        if folder is not None:
            folder.clear_heartbeats()  # jobs a killed session left "in progress"
        timings: dict[str, list[float]] = {}
        for r in records.values():  # what each method's jobs took before: the ETA of a resumed run starts informed
            if r.ok:
                timings.setdefault(r.method, []).append(r.wall_s)
        progress = RunProgress(exp.name, [JobInfo(w.id, w.job.method, w.label) for w in work], executor.slots(),
                               timings, enabled=opts.progress)
        arrived: list[TrialRecord] = []
        try:
            executor.run(run_job, work, target, progress, arrived)
        except (KeyboardInterrupt, WorkerDied) as exc:
            # what arrived, and what workers wrote that had not arrived yet
            records.update((r.key, r) for r in (folder.read_trials()[0] if folder is not None else arrived))
            manifest(timing, n_total)
            how, status = ((str(exc), 1) if isinstance(exc, WorkerDied) else
                           ("terminated (SIGTERM)", 143) if isinstance(exc, Terminated) else ("interrupted", 130))
            raise RunInterrupted(folder, n_done(), n_total, how, status) from None
        except OSError as exc:   # a full disk, a folder gone: what was saved stays, --resume goes on
            if folder is not None:
                records.update((r.key, r) for r in folder.read_trials()[0])
            raise RunInterrupted(folder, n_done(), n_total, os_error_line(exc), 1) from None
        finally:
            progress.close()
            if folder is not None:
                folder.clear_heartbeats()
        records.update((r.key, r) for r in arrived)
        for r in arrived:  # a file this session wrote again is no longer a problem
            problems.pop(trial_name(*r.key), None)
        state.problems = list(problems.values())
        manifest(timing, n_total)
    failed = [r for r in state.records if not r.ok and r.key in jobs]
    return Outcome(folder, n_done(), n_total, failed, state)


def _jobs(p: Plan) -> set[tuple[str, int, str]]:
    """(setting, trial, method) of every job of the plan."""
    return {(sp.label, t, m.name) for sp in p.settings for t in range(sp.config.trials) for m in sp.methods}


def _capped(opts: EngineOptions) -> EngineOptions:
    """``opts`` with local processes capped at the machine's cores (more only cost memory and
    start-up; the executor also starts no more than it has jobs); said when it changes anything."""
    jobs = max(1, min(opts.jobs, cores()))
    if jobs < opts.jobs:
        log.info(f"--jobs {opts.jobs}: using {jobs}, the cores of this machine")
    return replace(opts, jobs=jobs)

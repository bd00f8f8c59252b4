"""Run an experiment: settings x trials x methods, in parallel, resumable.

:func:`plan` loads each setting's dataset, builds its protocol and checks the dataset and every
ranker against it (what ``rankbench validate`` runs; nothing is written). :func:`execute` then
extracts (or loads cached) features, draws every trial's split from a recorded seed and writes
``splits.json`` and an open ``manifest.json`` (with the data root) before any ranker runs, so
even a run killed outright can be resumed. An executor (:mod:`.executors`: this machine's processes
or a Dask cluster) computes the (setting, trial, method) jobs, and each result is written
atomically the moment it exists, so an interrupted run loses at most the jobs in flight, and a
resumed run, on either executor, skips every finished job (a truncated, unreadable or invalid
file counts as unfinished, and so does a failed job) and reuses the recorded splits: the numbers
come out exactly as in an uninterrupted run. :func:`verify_resume` first makes sure the folder's
run is the one being continued (its config, its rankbench version). A job that fails (its ranker
raises, or returns what its protocol refuses) is recorded as failed and the other jobs go on
(:func:`run_job`).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import logging
import math
import numbers
import os
import platform
import subprocess
import sys
import time
import traceback
import warnings
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, Callable

import numpy as np
from pydantic import ValidationError
from sklearn import config_context

from .. import __version__
from ..components import ComponentSpec
from ..config import (
    Components,
    Config,
    DatasetCfg,
    Experiment,
    ProtocolCfg,
    RankerCfg,
    dataset_params,
    first_difference,
    ranker_feature_names,
    value_at,
)
from ..datasets.base import Dataset
from ..errors import ConfigError, DataError, ErrorList, RankbenchError, Terminated
from ..params import check_data_bounds, data_bounds
from ..protocols.base import Protocol
from ..rankers.base import accepts_views, capabilities
from ..registry import datasets, protocols
from ..runfolder import (
    CONFIG,
    MANIFEST,
    ROW_KEYS,
    SPLITS,
    Manifest,
    RunFolder,
    RunFolderError,
    Splits,
    TrialRecord,
    config_fingerprint,
    job_id,
)
from ..utils.diskcache import cached, code_fingerprint, digest, reuse_allowed, source_fingerprint
from ..utils.meter import Meter
from ..utils.progress import FitReporter, JobInfo, RunProgress, reporting
from ..utils.seeds import ranker_seed, split_seed
from .cache import get_features
from .estimator import MethodSpec, duck_capability, needs
from .executors import Work, make_executor


log = logging.getLogger("rankbench.engine")


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

    def __post_init__(self):
        """Refuse what the command line's options refuse (``--jobs 0``, ``--dask-timeout nan``), for
        Python callers, with the same conditions."""
        def whole(v) -> bool:
            return isinstance(v, numbers.Integral) and not isinstance(v, bool)

        for key, low in (("jobs", 1), ("retries", 0)):
            if not whole(getattr(self, key)) or getattr(self, key) < low:
                raise ConfigError(f"{key}: expected an integer >= {low}, got {getattr(self, key)!r}")
        if self.executor not in ("local", "dask"):
            raise ConfigError(f"executor: expected 'local' or 'dask', got {self.executor!r}")
        t = self.dask_timeout
        if isinstance(t, bool) or not isinstance(t, numbers.Real) or not math.isfinite(t) or t <= 0:
            raise ConfigError(f"dask_timeout: expected a finite number of seconds > 0, got {t!r}")
        self.jobs, self.retries = int(self.jobs), int(self.retries)


@dataclass
class SettingPlan:
    label: str
    values: dict[str, Any]
    config: Config
    dataset: Dataset
    protocol: Protocol
    methods: list[MethodSpec]
    components: Components


@dataclass
class Plan:
    experiment: Experiment
    settings: list[SettingPlan]

    @property
    def n_jobs(self) -> int:
        return sum(s.config.trials * len(s.methods) for s in self.settings)

    def faults(self) -> list[str]:
        """One line per method whose ranker cannot be built (see :attr:`MethodSpec.fault`)."""
        seen = dict.fromkeys(f"{self.experiment.origin}: rankers.{m.name}: the ranker cannot be built: {m.fault}"
                             for s in self.settings for m in s.methods if getattr(m, "fault", None))
        return list(seen)


@dataclass
class Job:
    setting: str
    trial: int
    method: str
    seed: int
    ranker_seed: int | None
    #: the run's config fingerprint, stamped on the record (None for a run made before fingerprints)
    fingerprint: str | None = None
    #: the key of the job's result in the cache (:class:`TrialKeys`), None: computed, not reused
    reuse_key: str | None = None


@dataclass
class Outcome:
    """What a run (or a resumed session) left in its folder: finished jobs of ``n_total``, the
    jobs this session computed, and the failed jobs' records (retried by ``--resume``)."""

    folder: RunFolder
    n_done: int
    n_total: int
    n_computed: int
    failed: list[TrialRecord] = field(default_factory=list)


# ----------------------------------------------------------------------------- planning
def _method(rcfg: RankerCfg, cfg: Config, components: Components) -> MethodSpec:
    ranker, steps = components.rankers[rcfg.name]
    return MethodSpec(rcfg.name, ranker, ranker_feature_names(cfg, rcfg), rcfg.combine, list(steps))


def load_dataset(cfg: Config, data_root: str | None, origin: str = "") -> Dataset:
    where = f"{origin}: dataset" if origin else "dataset"
    loader = datasets.build(cfg.dataset.name, dataset_params(cfg), where)
    return loader.load(data_root)


def data_mistakes(data: dict, origin: str, data_root: str | None) -> list[RankbenchError]:
    """The mistakes of the dataset a config names and of its protocol against that dataset, looked
    for even where the rest of the config has mistakes, so that ``validate`` reports every one at
    once. What the config's own checks refuse (an unknown loader, a bad parameter) is left to them,
    and so is a dataset or protocol the sweep changes: nothing is reported twice or guessed."""
    swept = data.get("sweep") if isinstance(data.get("sweep"), dict) else {}
    try:
        if any(str(k).startswith("dataset") for k in swept):
            return []
        dcfg = DatasetCfg.model_validate(data.get("dataset"))
        params = {**dcfg.params(), **({"root": dcfg.root} if dcfg.root is not None else {})}
        loader = datasets.build(dcfg.name, params, f"{origin}: dataset")
    except (ValidationError, RankbenchError):
        return []
    try:
        dataset = loader.load(data_root)
    except RankbenchError as exc:
        return [exc]
    try:
        if any(str(k).startswith("protocol") for k in swept):
            return []
        pcfg = ProtocolCfg.model_validate(data.get("protocol"))
        protocol = protocols.build(pcfg.name, pcfg.params(), f"{origin}: protocol")
    except (ValidationError, RankbenchError):
        return []
    try:
        protocol.check_dataset(dataset)
    except ConfigError as exc:  # a protocol names the key path; the file comes from here
        return [exc if str(exc).startswith(origin) else type(exc)(f"{origin}: {exc}")]
    except RankbenchError as exc:
        return [exc]
    return []


def plan(experiment: Experiment, data_root: str | None = None, methods: list[MethodSpec] | None = None) -> Plan:
    """Load datasets, build protocols and check datasets and rankers against them; write nothing.

    ``methods`` (``app.evaluate``): compare these methods built from estimator objects
    (:meth:`ComponentSpec.of <rankbench.components.ComponentSpec.of>`) instead of the config's rankers.
    """
    loaded: dict[str, Dataset] = {}
    out = []
    for st in experiment.settings:
        cfg = st.config
        origin = experiment.origin + (f" [{st.label}]" if st.label else "")
        dkey = json.dumps(cfg.dataset.model_dump(), sort_keys=True, default=str)
        if dkey not in loaded:
            try:
                loaded[dkey] = st.components.dataset.build().load(data_root)
            except DataError as exc:   # said with the rankers' mistakes, not instead of them
                loaded[dkey] = exc
        dataset = loaded[dkey]
        protocol = st.components.protocol.build()
        errors = ErrorList()
        checks = [(protocol.check_features, [f.key for f in cfg.features])]
        if isinstance(dataset, DataError):
            errors.add(dataset)
        else:
            checks[:0] = [(protocol.check_dataset, dataset), (partial(check_trials, protocol, cfg.trials), dataset)]
        for check, arg in checks:
            try:
                check(arg)
            except ConfigError as exc:  # a protocol names the key path; the file comes from here
                msg = str(exc)
                errors.add(exc if msg.startswith(origin) else type(exc)(f"{origin}: {msg}"))
            except DataError as exc:
                errors.add(exc)
        specs = []
        bounds = None if isinstance(dataset, DataError) else DataBounds(st.components.features, dataset, protocol)
        for rcfg in cfg.run_rankers() if methods is None else []:
            with errors.check():
                specs.append(_checked_method(rcfg, cfg, st.components, protocol, origin, bounds))
        for given in methods or []:
            with errors.check():
                specs.append(_checked_object(given, cfg, protocol, origin, bounds))
        errors.raise_any()
        out.append(SettingPlan(st.label, st.values, cfg, dataset, protocol, specs, st.components))
    return Plan(experiment, out)


def _checked_method(rcfg: RankerCfg, cfg: Config, components: Components, protocol: Protocol, origin: str,
                    bounds: "DataBounds | None" = None) -> MethodSpec:
    """One ranker entry as a method, checked against the protocol (:func:`_capable`)."""
    where = f"{origin}: rankers.{rcfg.name}"
    spec = _method(rcfg, cfg, components)
    _require_features(spec, where)
    return _capable(spec, protocol, where, bounds)


def _require_features(spec, where: str) -> None:
    if not spec.feature_sets:
        raise ConfigError(f"{where}: no feature sets defined (add a 'features:' list)")


def _capable(spec: MethodSpec, protocol: Protocol, where: str, bounds: "DataBounds | None" = None) -> MethodSpec:
    """The method with the capability it runs as under ``protocol`` resolved, once, before any
    job: its own (a mixin it declares), or for a ranker that declares none the first of the
    protocol's whose methods it has (:func:`~.estimator.duck_capability`); one that has none is
    refused naming what each capability needs. A ranker whose own code fails to build is
    contained (:attr:`MethodSpec.fault`), not fatal."""
    try:
        probe = spec.make(0)
    except RankbenchError:
        raise
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the ranker's own code: contained, not fatal
        return replace(spec, fault=fault_line(exc))
    ranker = probe.steps[-1][1] if spec.steps else probe
    obj = spec.ranker.estimator is not None
    what = type(ranker).__name__ if obj else spec.ranker.name
    if not capabilities(ranker) and spec.capability is None:
        capability = duck_capability(ranker, protocol.capability)
        if capability is None:
            raise ConfigError(f"{where}: {'it' if obj else f'ranker {what!r}'} cannot run under protocol "
                              f"{protocol.registry_name!r}: it declares no capability and has the methods of none "
                              f"the protocol uses, which need: {needs(ranker, protocol.capability)}")
        spec = replace(spec, capability=capability)
        probe = spec.make(0)
    _check_method(spec, probe, protocol, where, what, bounds)
    return spec


def _check_method(spec, probe, protocol: Protocol, where: str, what: str,
                  bounds: "DataBounds | None" = None) -> None:
    """A method (its spec and a fresh instance) checked against the protocol (and, with
    ``bounds``, its parameters bounded by the data against the data)."""
    protocol.check_ranker(probe, where)
    if spec.combine == "views" and not (accepts_views(probe) or protocol.consumes_views):
        raise ConfigError(f"{where}.combine: ranker {what!r} takes one feature matrix; use combine: concat")
    if bounds is not None:
        bounds.check(spec, probe, where)


class DataBounds:
    """A setting's check of ranker parameters bounded by the data they are fitted on
    (:class:`rankbench.params.AtMost`): the feature dimension (each feature set's, from its first
    item, computed only when a ranker declares a bound), through the method's preprocessing
    steps, and the sizes the protocol gives (:meth:`Protocol.fit_sizes`)."""

    def __init__(self, extractors: dict[str, ComponentSpec], dataset: Dataset, protocol: Protocol):
        self.extractors, self.dataset, self.protocol = extractors, dataset, protocol
        self._dims: dict[str, int | None] = {}

    def _dim(self, key: str) -> int | None:
        if key not in self._dims:
            extractor = self.extractors[key].build()
            try:
                self._dims[key] = extractor.n_features(self.dataset)
            except RankbenchError:
                raise
            except Exception:  # noqa: BLE001 - an extractor's own fault: the run meets it, named, when extracting
                self._dims[key] = None
        return self._dims[key]

    def check(self, spec, probe, where: str) -> None:
        target = getattr(probe, "fit_target", probe)
        if not data_bounds(type(target)) or spec.combine == "views":
            return
        dims = [self._dim(k) for k in spec.feature_sets]
        d = None if None in dims else (sum(dims), " + ".join(
            f"feature set {k}: {n}" for k, n in zip(spec.feature_sets, dims)))
        sizes = dict(self.protocol.fit_sizes(self.dataset, d))
        for step in getattr(probe, "steps", [])[:-1]:
            sizes["n_features"] = _step_dim(step, sizes.get("n_features"), sizes.get("n_samples"))
        check_data_bounds(target, sizes, where)


def _step_dim(step: tuple[str, Any], d: tuple[int, str] | None, n: tuple[int, str] | None):
    """The dimension after a preprocessing step (an upper bound): the same for a column-wise step
    (scikit-learn's ``OneToOneFeatureMixin``), at most ``n_components`` (and the rows and columns
    it is fitted on) for a projection; None when the step does not say."""
    from sklearn.base import OneToOneFeatureMixin

    name, est = step
    if d is None or isinstance(est, OneToOneFeatureMixin):
        return d
    k = est.get_params().get("n_components") if hasattr(est, "get_params") else None
    if not isinstance(k, int) or isinstance(k, bool):
        return None
    size, limit = min((k, f"{name.rsplit('_', 1)[0]} keeps n_components = {k}"), d, *([n] if n else []),
                      key=lambda x: x[0])
    return size, (limit if size < d[0] else d[1])


def _checked_object(given: MethodSpec, cfg: Config, protocol: Protocol, origin: str,
                    bounds: "DataBounds | None" = None) -> MethodSpec:
    """A method built from an estimator object, as a method of this setting: its feature sets
    checked against the config's, its capability resolved (:func:`_capable`)."""
    where = f"{origin}: estimator {given.name!r}"
    keys = [f.key for f in cfg.features]
    unknown = [n for n in given.feature_sets if n not in keys]
    if unknown:
        raise ConfigError(f"{where}: features: unknown feature set {unknown[0]!r}; defined: {', '.join(keys) or '(none)'}")
    spec = replace(given, feature_sets=given.feature_sets or keys, capability=None)
    _require_features(spec, where)
    return _capable(spec, protocol, where, bounds)


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


def check_trials(protocol: Protocol, trials: int, dataset: Dataset) -> None:
    """A protocol whose split data fixes its trials (a split file) gives no more than it holds."""
    fixed = protocol.fixed_trials(dataset)
    if fixed is not None and trials > fixed:
        raise ConfigError(f"trials: expected at most {fixed}, the trials the protocol's fixed split holds, "
                          f"got {trials}")


def draw_splits(sp: SettingPlan, run_seed: int, feats: dict[str, np.ndarray] | None = None) -> list[dict[str, Any]]:
    """Every trial's split; protocols with ``split_uses_features`` also get the feature sets, those
    with fixed trials the trial's index."""
    kw = {"features": feats or {}} if sp.protocol.split_uses_features else {}
    fixed = sp.protocol.fixed_trials(sp.dataset) is not None
    out = []
    for t in range(sp.config.trials):
        s = split_seed(run_seed, t)
        out.append({"trial": t, "seed": s, "ranker_seed": ranker_seed(run_seed, t),
                    **sp.protocol.split(sp.dataset, np.random.default_rng(s), **kw, **({"trial": t} if fixed else {}))})
    return out


def verify_resume(folder: RunFolder) -> None:
    """Refuse to continue a run that is not the one its folder started (one line naming why): one
    made by another rankbench version, one whose config.yaml was edited since (naming the first
    changed key), or one whose manifest is missing or unusable once it has splits or results."""
    where = f"--resume {folder.path}"
    manifest = folder.read_manifest()  # an unusable one: RunFolderError naming the file
    if manifest is None:
        if folder.has_splits() or any(folder.trials_dir.glob("*.json")):
            raise RunFolderError(f"{where}: no {MANIFEST}: the run's config and version cannot be verified; "
                                 "start a new run")
        return
    if manifest.rankbench_version != __version__:
        raise RunFolderError(f"{where}: the run was made by rankbench {manifest.rankbench_version}, this is "
                             f"rankbench {__version__}; resume it with that version or start a new run")
    if manifest.config_fingerprint is None or manifest.config is None:
        return  # a run made before fingerprints
    now = folder.read_config()
    if config_fingerprint(now) != manifest.config_fingerprint:
        key = first_difference(manifest.config, now) or "(top level)"
        then, later = (value_at(c, key, _Absent()) for c in (manifest.config, now))
        raise RunFolderError(f"{where}: {CONFIG} was changed after the run started ({key}: {then!r} then, "
                             f"{later!r} now); put it back or start a new run")


class _Absent:
    """A key a config does not have, as a message shows it."""

    def __repr__(self) -> str:
        return "absent"


def _recorded(folder: RunFolder, p: Plan) -> dict[str, list[dict]]:
    """The splits a resumed run recorded, checked against its settings and their datasets."""
    data = folder.read_splits()
    where = f"--resume: {folder.path / SPLITS}"
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
        top = max((max(t[k], default=-1) for t in got.trials for k in ROW_KEYS if isinstance(t.get(k), list)),
                  default=-1)
        if top >= n:
            raise RunFolderError(f"{where}: row {top} is beyond the dataset's {n} items; start a new run")
    return {s.label: s.trials for s in data.settings}


# ----------------------------------------------------------------------------- reuse
#: what a trial's result does not depend on: how results are reported and the command line
_NOT_IN_TRIALS = ("rankbench.report", "rankbench.cli", "rankbench.app", "rankbench.__main__")


def reuse_enabled(opts: EngineOptions) -> bool:
    """Whether finished results are reused: the cache is on (no ``--no-cache``) and
    ``$RANKBENCH_REUSE`` is not ``0``."""
    return opts.use_cache and reuse_allowed()


class TrialKeys:
    """The key of a job's result in the one cache (kind ``trials``): a digest of everything the
    result is computed from, so that an identical job, in this run (a sweep's setting that does
    not change the method) or in another (a config that repeats another's trials), takes the
    result instead of computing it again.

    The key holds the dataset (its loader's parameters and its files' fingerprint), the protocol
    and its parameters, the method's feature matrix (its bytes), the split (rows and seeds), the
    method (its ranker's and preprocessing steps' names and parameters, its feature sets), the
    source of every rankbench module but the report and the command line (any edit, comments
    included, makes new keys), a plug-in's own code (:func:`code_fingerprint`), and the versions of
    Python, rankbench and the libraries. No key (computed every time): an object method
    (``app.evaluate``), a dataset without a fingerprint, code whose source cannot be read. Code a
    plug-in imports from other packages is not covered: after changing it, ``rankbench cache
    --clear trials``.
    """

    def __init__(self, enabled: bool):
        code = source_fingerprint("rankbench", _NOT_IN_TRIALS) if enabled else None
        self.base = digest(code, __version__, sys.version, _versions()) if code else None
        self._matrices: dict[tuple, str] = {}

    def setting(self, sp: SettingPlan) -> str | None:
        if self.base is None or not sp.dataset.fingerprint:
            return None
        data = {k: v for k, v in dataset_params(sp.config).items() if k != "root"}
        plugin = _plugin_code(type(sp.protocol))
        if plugin is False:
            return None
        return digest(self.base, sp.config.dataset.name, data, sp.dataset.fingerprint, len(sp.dataset),
                      sp.config.protocol.model_dump(), plugin)

    def matrix(self, mkey: tuple, X) -> str:
        if mkey not in self._matrices:
            self._matrices[mkey] = digest(X)
        return self._matrices[mkey]

    @staticmethod
    def method(spec: MethodSpec) -> str | None:
        parts = [spec.ranker, *spec.steps]
        if spec.fault or any(c.estimator is not None for c in parts):
            return None
        code = [_plugin_code(c.cls) for c in parts]
        if False in code:
            return None
        return digest([[c.kind, c.name, c.params] for c in parts], spec.feature_sets, spec.combine,
                      spec.capability, code)

    @staticmethod
    def job(setting: str | None, matrix: str, method: str | None, split: dict) -> str | None:
        return None if setting is None or method is None else digest(setting, matrix, method, split)


def _plugin_code(cls: type) -> str | None | bool:
    """None for rankbench's own code (in the key's source digest), a plug-in's code fingerprint,
    or False when that cannot be read."""
    if cls.__module__ == "rankbench" or cls.__module__.startswith("rankbench."):
        return None
    return code_fingerprint(cls) or False


def _reused(entry: dict, base: dict) -> TrialRecord:
    """A stored result as this job's record: its own labels, the stored result, where it came from."""
    return TrialRecord.build({**entry["record"], **base, "reused": entry["origin"]})


# ----------------------------------------------------------------------------- jobs
def run_job(job: Job, protocol: Protocol, spec: MethodSpec, X, dataset: Dataset, split: dict,
            folder: RunFolder | None = None, progress_to: Callable[[dict], None] | None = None) -> TrialRecord:
    """Evaluate one method on one trial's split; write the record when ``folder`` is given.

    The fit's progress (:func:`rankbench.utils.progress.tick`) goes to ``progress_to`` (called
    with the job's state, in this process) or, without it, to the job's heartbeat in ``folder``
    (a worker process; removed when the job ends); with neither, nowhere. Warnings the job raises
    are kept in the record (``warnings``: each text once, with its count) for the caller to show.

    A job that fails is contained: any exception while building the ranker, fitting it, scoring
    with it or scoring its output (a :class:`~rankbench.errors.RankerFault` when its protocol
    refuses what it returned, a record that refuses a non-finite metric), and a ``sys.exit`` in
    the ranker's code, gives a *failed* record (``status: failed``: the exception's last line, the
    phase it stopped in, its traceback) instead of ending the run. Ctrl-C and SIGTERM are not
    caught.

    With a ``reuse_key``, the result of an identical job is taken from the cache (the record
    says so in ``reused``), and a finished result is stored there; a job waits for an identical
    one in progress elsewhere instead of computing it too. Failed results are not stored.
    """
    base = {"setting": job.setting, "trial": job.trial, "seed": job.seed, "ranker_seed": job.ranker_seed,
            "method": job.method, "config_fingerprint": job.fingerprint}
    if job.reuse_key is None:
        record = _computed(job, protocol, spec, X, dataset, split, base, folder, progress_to)
    else:
        made: list[TrialRecord] = []

        def compute() -> dict:
            made.append(_computed(job, protocol, spec, X, dataset, split, base, folder, progress_to))
            origin = {"run": str(folder.path) if folder is not None else None, "setting": job.setting,
                      "trial": job.trial, "method": job.method,
                      "at": _dt.datetime.now().astimezone().isoformat(timespec="seconds")}
            return {"record": made[0].model_dump(mode="json"), "origin": origin}

        entry, hit = cached("trials", job.reuse_key, compute, keep=lambda e: e["record"]["status"] == "ok")
        record = _reused(entry, base) if hit else made[0]
    if folder is not None:
        folder.write_trial(record)
    return record


def _computed(job: Job, protocol: Protocol, spec: MethodSpec, X, dataset: Dataset, split: dict, base: dict,
              folder: RunFolder | None, progress_to: Callable[[dict], None] | None) -> TrialRecord:
    """The job's record, computed (see :func:`run_job`)."""
    jid = job_id(job.setting, job.trial, job.method)
    sink = progress_to or (partial(folder.write_heartbeat, jid) if folder is not None else None)
    meter = Meter()

    def make():
        meter.phase = "build"
        ranker = spec.make(job.ranker_seed)
        meter.phase = None
        return ranker

    t0 = time.perf_counter()
    caught: list = []
    try:
        with contextlib.ExitStack() as stack:
            caught = stack.enter_context(warnings.catch_warnings(record=True))
            # every component of a job is built from a spec the config checked: not checked again at fit
            stack.enter_context(config_context(skip_parameter_validation=True))
            if sink is not None:
                if progress_to is None:
                    stack.callback(folder.remove_heartbeat, jid)
                stack.enter_context(reporting(FitReporter(jid, sink)))
            result = protocol.evaluate(make, X, dataset, split, meter)
        record = TrialRecord.build({
            **base, "metrics": {**result.metrics, **meter.metrics()}, "curves": result.curves, "extra": result.extra,
            "wall_s": time.perf_counter() - t0, "warnings": _said(caught)})
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - whatever the ranker does, the run goes on
        record = TrialRecord.build({
            **base, "status": "failed", "error": fault_line(exc), "phase": meter.phase or "evaluate",
            "traceback": "".join(traceback.format_exception(exc))[-20000:],
            "wall_s": time.perf_counter() - t0, "warnings": _said(caught)})
    return record


def _said(caught: list) -> list[dict[str, Any]]:
    """Caught warnings as ``{"text", "count"}``, each text once."""
    said = Counter(f"{w.category.__name__}: {w.message}" for w in caught)
    return [{"text": text, "count": n} for text, n in said.items()]


def fault_line(exc: BaseException) -> str:
    """Why a job failed, in one line: a user error's message, or the exception's last line."""
    if isinstance(exc, RankbenchError):
        text = str(exc)
    elif isinstance(exc, SystemExit):
        text = f"SystemExit: the ranker's code called sys.exit({exc.code!r})"
    else:
        text = traceback.format_exception_only(exc)[-1]
    return " ".join(text.split())[:500] or type(exc).__name__


def execute(p: Plan, folder: RunFolder, opts: EngineOptions, resume: bool = False) -> Outcome:
    """Run every job of ``p`` not finished in ``folder`` (see the module docstring)."""
    started = _dt.datetime.now().astimezone()
    exp = p.experiment
    opts = _capped(opts)
    executor = make_executor(opts.executor, opts.jobs, opts.scheduler, opts.dask_timeout, opts.retries)
    with executor:  # connect first: a wrong scheduler address costs no feature extraction
        # before the features: a run killed while extracting them is resumed with its data root and
        # its config verified (or replaced by a new run: it holds no splits and no result)
        write_manifest(folder, p, opts, started, {}, _count_done(folder, p) if resume else 0, p.n_jobs,
                       executor.describe(), final=False)
        fcache: dict[str, np.ndarray] = {}
        timing: dict[str, Any] = {}
        recorded = _recorded(folder, p) if resume and folder.has_splits() else {}
        fingerprint = folder.read_manifest().config_fingerprint  # stamped on every record of this run
        done = folder.done_jobs() if resume else set()
        # workers get an absolute path: a reused worker pool may sit in another working folder
        target = RunFolder(folder.path.resolve())
        settings_out, work, n_total = [], [], 0
        slim: dict[int, Dataset] = {}
        matrices: dict[tuple, Any] = {}  # one object per distinct matrix: shipped to workers once
        keys = TrialKeys(reuse_enabled(opts))
        for sp in p.settings:
            feats = setting_features(sp, fcache, opts, timing)
            splits = recorded.get(sp.label) or draw_splits(sp, sp.config.seed, feats)
            settings_out.append({"label": sp.label, "values": sp.values, "n_items": len(sp.dataset),
                                 "dataset_fingerprint": sp.dataset.fingerprint or None, "trials": splits})
            ds = slim.setdefault(id(sp.dataset), sp.dataset.without_images())
            skey = keys.setting(sp)
            for spec in sp.methods:
                mkey = (spec.combine, *(id(feats[n]) for n in spec.feature_sets))
                if mkey not in matrices:
                    matrices[mkey] = method_matrix(spec, feats)
                xkey = keys.matrix(mkey, matrices[mkey]) if skey else ""
                method_key = keys.method(spec) if skey else None
                for s in splits:
                    n_total += 1
                    if (sp.label, s["trial"], spec.name) in done:
                        continue
                    job = Job(sp.label, s["trial"], spec.name, s["seed"], s.get("ranker_seed", s["seed"]), fingerprint,
                              keys.job(skey, xkey, method_key, s))
                    work.append(Work(job, sp.protocol, spec, matrices[mkey], ds, s))
        if not recorded:  # a new run, or one killed before its splits were written
            folder.write_splits(Splits.build({"settings": settings_out}))
        # before any job: a run killed outright (no Ctrl-C, no exit) still records its data root
        # and command for --resume; this session stays open ("end": null) until it returns
        write_manifest(folder, p, opts, started, timing, n_total - len(work), n_total,
                       executor.describe(), final=False)
        folder.clear_heartbeats()  # jobs a killed session left "in progress"
        earlier = folder.read_trials()[0] if resume else []
        timings: dict[str, list[float]] = {}
        for r in earlier:  # what each method's jobs took before: the ETA of a resumed run starts informed
            if r.ok:
                timings.setdefault(r.method, []).append(r.wall_s)
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
    jobs = _jobs(p)
    failed = [r for r in folder.read_trials()[0] if not r.ok and r.key in jobs]
    return Outcome(folder, done, n_total, computed, failed)


def _jobs(p: Plan) -> set[tuple[str, int, str]]:
    """(setting, trial, method) of every job of the plan."""
    return {(sp.label, t, m.name) for sp in p.settings for t in range(sp.config.trials) for m in sp.methods}


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _capped(opts: EngineOptions) -> EngineOptions:
    """``opts`` with local processes capped at the machine's cores (more only cost memory and
    start-up; the executor also starts no more than it has jobs); said when it changes anything."""
    jobs = max(1, min(opts.jobs, cores()))
    if jobs < opts.jobs:
        log.info(f"--jobs {opts.jobs}: using {jobs}, the cores of this machine")
    return replace(opts, jobs=jobs)


def _count_done(folder: RunFolder, p: Plan) -> int:
    return len(folder.done_jobs() & _jobs(p))


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
    for r in records:  # the time this run spent: a reused result's was spent by the run that computed it
        wall[r.method] = wall.get(r.method, 0.0) + (r.wall_s if r.reused is None else 0.0)
    prev = folder.read_manifest()
    executor = executor or {"kind": "local", "workers": opts.jobs}
    commit = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain", "--untracked-files=no") if commit else None
    now = _dt.datetime.now().astimezone()
    end = now.isoformat(timespec="seconds") if final else None
    session = {"start": started.isoformat(timespec="seconds"), "end": end, "executor": executor}
    sessions = [s.model_dump() for s in prev.sessions] if prev else []
    if sessions and sessions[-1]["end"] is None and sessions[-1]["start"] == session["start"]:
        sessions = sessions[:-1]  # this session's opening record, now closed
    # the config the run was started with, as its folder holds it, stays the one recorded (a
    # resumed run cannot change it; one made before fingerprints keeps having none)
    config = prev.config if prev else folder.read_config()
    n_ok = sum(r.ok for r in records)
    folder.write_manifest(Manifest.build({
        "rankbench_version": prev.rankbench_version if prev else __version__,
        "config_fingerprint": prev.config_fingerprint if prev else config_fingerprint(config),
        "config": config,
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
        "features": {**(prev.features if prev else {}), **feature_timing},
        "start": prev.start if prev else started.isoformat(timespec="seconds"),
        "sessions": sessions + [session],
        "end": end,
        "wall_s_per_method": {k: round(v, 3) for k, v in wall.items()},
        "n_results": n_done,
        "n_failed": len(records) - n_ok,
        "n_expected": n_total,
        "complete": n_done == n_total,
    }))

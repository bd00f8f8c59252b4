"""A run's plan: each setting's dataset loaded, its protocol built, and the dataset and every
method checked against it, before any work (what ``rankbench validate`` runs; nothing is written)."""

from __future__ import annotations

import json
import math
import numbers
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from pydantic import ValidationError

from ..components import ComponentSpec
from ..config import Components, Config, DatasetCfg, Experiment, ProtocolCfg, RankerCfg, dataset_params, ranker_feature_names
from ..datasets.base import Dataset, load
from ..errors import ConfigError, DataError, ErrorList, RankbenchError
from ..metrics import metric_info
from ..params import check_data_bounds, data_bounds
from ..protocols.base import Protocol
from ..rankers.base import accepts_views, capabilities
from ..registry import datasets, protocols
from .estimator import MethodSpec, duck_capability, needs
from .jobs import fault_line


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
        if self.scheduler is not None and self.executor != "dask":
            raise ConfigError(f"--scheduler: expected only with --executor dask, got {self.scheduler}")
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
                             for s in self.settings for m in s.methods if m.fault)
        return list(seen)


def _method(rcfg: RankerCfg, cfg: Config, components: Components) -> MethodSpec:
    ranker, steps = components.rankers[rcfg.name]
    return MethodSpec(rcfg.name, ranker, ranker_feature_names(cfg, rcfg), rcfg.combine, list(steps))


def load_dataset(cfg: Config, data_root: str | None, origin: str = "") -> Dataset:
    where = f"{origin}: dataset" if origin else "dataset"
    return load(datasets.build(cfg.dataset.name, dataset_params(cfg), where), data_root)


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
        dataset = load(loader, data_root)
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


def plan(experiment: Experiment, data_root: str | None = None, methods: list[MethodSpec] | None = None,
         published: bool = True) -> Plan:
    """Load datasets, build protocols and check datasets and rankers against them; write nothing.

    ``methods`` (``app.evaluate``): compare these methods built from estimator objects
    (:meth:`ComponentSpec.of <rankbench.components.ComponentSpec.of>`) instead of the config's rankers.
    ``published``: check that the published numbers and claims name metrics the run reports
    (:func:`check_reported`); off for a run already made (resumed, refitted), checked when it started.
    """
    loaded: dict[str, Dataset] = {}
    out, found, seen = [], ErrorList(), set()
    for st in experiment.settings:
        cfg = st.config
        origin = experiment.origin + (f" [{st.label}]" if st.label else "")
        dkey = json.dumps(cfg.dataset.model_dump(), sort_keys=True, default=str)
        if dkey not in loaded:
            try:
                loaded[dkey] = load(st.components.dataset.build(), data_root)
            except DataError as exc:   # said with the rankers' mistakes, not instead of them
                loaded[dkey] = exc
        dataset = loaded[dkey]
        protocol = st.components.protocol.build()
        errors = ErrorList()
        checks = [(protocol.check_features, [f.key for f in cfg.features])]
        trials = partial(check_trials, protocol, cfg.trials)
        if isinstance(dataset, DataError):
            errors.add(dataset)
        else:
            checks[:0] = [(protocol.check_dataset, dataset), (trials, dataset)]
        for check, arg in checks:
            if check is trials and errors.found:   # a dataset the protocol refused: its trials would say it again
                continue
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
        with errors.check():
            _one_input(protocol, specs, origin)
        for error in errors.found:   # every setting's mistakes at once; one that all settings share, once
            if (shared := str(error).replace(origin, experiment.origin, 1)) not in seen:
                seen.add(shared)
                found.add(error)
        if not errors.found:
            out.append(SettingPlan(st.label, st.values, cfg, dataset, protocol, specs, st.components))
    found.raise_any()
    if published:
        check_reported(experiment.config, out, experiment.origin)
    return Plan(experiment, out)


def _one_input(protocol: Protocol, specs: list[MethodSpec], origin: str) -> None:
    """Under a protocol that builds its own models from the feature views once for every compared
    method (``consumes_views``: Merler et al.'s base models), the methods name one feature list
    and one ``combine``: another would give a method other base models, and its numbers would be
    compared with the others' as if they were of the same ones."""
    if not protocol.consumes_views:
        return
    first = specs[0] if specs else None
    for s in specs[1:]:
        if (s.feature_sets, s.combine) != (first.feature_sets, first.combine):
            raise ConfigError(f"{origin}: rankers.{s.name}: features {s.feature_sets} with combine {s.combine!r}, "
                              f"where rankers.{first.name} has {first.feature_sets} with {first.combine!r}; protocol "
                              f"{protocol.registry_name!r} fits its base models on them once for every compared "
                              "method: expected one feature list and combine for all")


def check_reported(cfg: Config, settings: list[SettingPlan], origin: str) -> None:
    """Every published number and claim of ``cfg`` names a metric the run will report: a numbered
    metric (``cmc@10``, ``map@100``) only at a number its protocol reports on its dataset
    (:meth:`~rankbench.protocols.base.Protocol.reported_numbers`), in the setting it names, or in
    some setting when it names none; what is never measured would only be graded MISSING after
    the whole run. Every mistake is reported at once, one line each."""
    errors = ErrorList()
    for where, metric, label in _published_metrics(cfg):
        shown = [st for st in settings if label is None or st.label == label]
        missing = [st for st in shown if not _reports(st, metric)]
        if shown and len(missing) == len(shown):
            errors.add(ConfigError(f"{origin}: {where}: expected a metric the run reports, got {metric!r}"
                                   f"{_reported_at(missing, metric)}"))
    errors.raise_any()


def check_measured(cfg: Config, measured: set[str], origin: str) -> None:
    """:func:`check_reported` for a run already made (``check --expected``): every metric a
    published number or claim of ``cfg`` names is one the run measured (``measured``, the metrics
    of its records; none recorded yet: nothing to hold them against)."""
    errors = ErrorList()
    for where, metric, _ in _published_metrics(cfg) if measured else ():
        if metric not in measured:
            stem = metric.split("@", 1)[0].split("/", 1)[0]
            alike = sorted(m for m in measured if m.split("@", 1)[0].split("/", 1)[0] == stem)
            errors.add(ConfigError(f"{origin}: {where}: expected a metric the run measured, got {metric!r}"
                                   + (f"; it measured {', '.join(alike)}" if alike else "")))
    errors.raise_any()


def _published_metrics(cfg: Config) -> list[tuple[str, str, str | None]]:
    """(key path, metric, setting label or None for any) of every metric a published number or a
    claim names."""
    out = [(f"expected.{i}.metric", e.metric, e.setting) for i, e in enumerate(cfg.expected)]
    for i, c in enumerate(cfg.claims):
        ref = getattr(c.baseline_limit, "metric", None)
        named = (("metric", c.metric), ("from_metric", c.from_metric), ("baseline_limit.metric", ref))
        out += [(f"claims.{i}.{key}", m, None) for key, m in named if isinstance(m, str)]
    return out


def _numbers(st: SettingPlan, metric: str) -> tuple[str, tuple[int, ...] | None]:
    """A numbered metric's family (``cmc@K``) and the numbers the setting's protocol reports it
    at (None: any); ("", None) for a metric that is not numbered."""
    info = metric_info(metric)
    if info is None or "@" not in info.family:
        return "", None
    return info.family, st.protocol.reported_numbers(info.family, st.dataset)


def _reports(st: SettingPlan, metric: str) -> bool:
    family, numbers = _numbers(st, metric)
    stem = family.split("@", 1)[0]
    return numbers is None or metric.split("/", 1)[0] in {f"{stem}@{n}" for n in numbers}


def _reported_at(settings: list[SettingPlan], metric: str) -> str:
    """Where the run reports ``metric``'s family instead: ``"; protocol reid reports cmc@K at K = 1, 5"``."""
    family, _ = _numbers(settings[0], metric)
    found = sorted({n for st in settings for n in _numbers(st, metric)[1] or ()})
    return (f"; protocol {settings[0].protocol.registry_name} reports {family} at {family.split('@', 1)[1]} = "
            f"{', '.join(map(str, found)) or 'none'}")


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
    refused naming what each capability needs; then checked against the protocol. A ranker whose
    own code fails to build is contained (:attr:`MethodSpec.fault`), not fatal."""
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
    protocol.check_ranker(probe, where)
    if spec.combine == "views" and not (accepts_views(probe) or protocol.consumes_views):
        raise ConfigError(f"{where}.combine: ranker {what!r} takes one feature matrix; use combine: concat")
    if bounds is not None:  # parameters bounded by the data, against the data
        bounds.check(spec, probe, where)
    return spec


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
        bounds = {**data_bounds(type(target)), **self.protocol.ranker_bounds()}
        if not bounds or spec.combine == "views":
            return
        dims = [self._dim(k) for k in spec.feature_sets]
        d = None if None in dims else (sum(dims), " + ".join(
            f"feature set {k}: {n}" for k, n in zip(spec.feature_sets, dims)))
        sizes = dict(self.protocol.fit_sizes(self.dataset, d))
        for step in getattr(probe, "steps", [])[:-1]:
            sizes["n_features"] = _step_dim(step, sizes.get("n_features"), sizes.get("n_samples"))
        check_data_bounds(target, sizes, where, bounds)


def _step_dim(step: tuple[str, Any], d: tuple[int, str] | None, n: tuple[int, str] | None):
    """The dimension after a preprocessing step (an upper bound): the same for a column-wise step
    (scikit-learn's ``OneToOneFeatureMixin``), at most ``n_components`` (and the rows and columns
    it is fitted on) for a projection; None when the step does not say."""
    from sklearn.base import OneToOneFeatureMixin

    name, est = step
    if d is None or isinstance(est, OneToOneFeatureMixin):
        return d
    from sklearn.decomposition import PCA as SkPCA

    from ..preprocess.pca import PCA

    k = est.get_params().get("n_components") if hasattr(est, "get_params") else None
    if not isinstance(k, int) or isinstance(k, bool):
        return None
    step_name = name.rsplit("_", 1)[0]
    if n and isinstance(est, (PCA, SkPCA)):   # centred: n rows span n - 1 directions at most
        n = (n[0] - 1, f"{step_name} keeps at most one direction fewer than its rows ({n[1]})")
    size, limit = min((k, f"{step_name} keeps n_components = {k}"), d, *([n] if n else []), key=lambda x: x[0])
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


def check_trials(protocol: Protocol, trials: int, dataset: Dataset) -> None:
    """A protocol whose split data fixes its trials (a split file) gives no more than it holds."""
    fixed = protocol.fixed_trials(dataset)
    if fixed is not None and trials > fixed:
        raise ConfigError(f"trials: expected at most {fixed}, the trials the protocol's fixed split holds, "
                          f"got {trials}")

"""Run an experiment: settings x trials x methods, in parallel, resumable.

The runner resolves the config, loads the dataset once, extracts (or loads cached) features, draws
every trial's split from a recorded seed and writes ``splits.json`` before any ranker runs. Each
(setting, trial, method) job writes its own result file atomically the moment it finishes, so an
interrupted run loses at most the jobs in flight, and ``--resume`` skips every finished job and
reuses the recorded splits: the numbers come out exactly as in an uninterrupted run.
"""

from __future__ import annotations

import copy
import datetime as _dt
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ..config import (Config, RankerCfg, dataset_params, load_config, ranker_feature_names,
                      setting_configs, yaml_load)
from ..datasets.base import Dataset
from ..errors import ConfigError, RankbenchError
from ..protocols.base import Meter, Protocol
from ..registry import datasets, features, init_params, preprocessors, protocols, rankers
from ..rankers.base import accepts_views
from .cache import get_features
from .pipeline import Preprocessed
from .progress import progress_bar
from .store import atomic_write_json, atomic_write_text, trial_file


class RunInterrupted(RankbenchError):
    """The user stopped a run; finished results are kept."""


@dataclass
class RunOptions:
    data_root: str | None = None
    out: str | None = None
    trials: int | None = None
    seed: int | None = None
    jobs: int = 1
    sets: list[str] = field(default_factory=list)
    resume: bool = False
    progress: bool = True
    regress: bool = False
    use_cache: bool = True
    results_root: str = "results"


@dataclass
class Job:
    setting: str
    trial: int
    seed: int
    method: str
    path: Path


def trial_seed(seed: int, trial: int) -> int:
    """The recorded seed of one trial: independent streams per (run seed, trial)."""
    return int(np.random.SeedSequence([seed, trial]).generate_state(1)[0] & 0x7FFFFFFF)


# ----------------------------------------------------------------------------- building blocks
def build_dataset(cfg: Config, data_root: str | None) -> Dataset:
    loader = datasets.build(cfg.dataset.name, dataset_params(cfg),
                            f"dataset ({cfg.dataset.name})")
    return loader.load(data_root)


def build_protocol(cfg: Config) -> Protocol:
    return protocols.build(cfg.protocol.name, cfg.protocol.params(), f"protocol ({cfg.protocol.name})")


def make_ranker_factory(rcfg: RankerCfg, seed: int):
    """A zero-argument callable giving a fresh (preprocessed) ranker for this trial."""
    cls = rankers.get(rcfg.ranker)
    params = rcfg.params()
    if "random_state" in init_params(cls) and "random_state" not in params:
        params["random_state"] = seed
    steps_cfg = [dict(s) for s in rcfg.preprocess]

    def make():
        ranker = cls(**params)
        if not steps_cfg:
            return ranker
        steps = [preprocessors.get(s.pop("name"))(**s) for s in copy.deepcopy(steps_cfg)]
        return Preprocessed(steps, ranker)

    return make


def ranker_matrix(cfg: Config, rcfg: RankerCfg, feats: dict[str, np.ndarray], sample) -> Any:
    names = ranker_feature_names(cfg, rcfg)
    if not names:
        raise ConfigError(f"rankers.{rcfg.name}: no feature sets defined (add a 'features:' list)")
    if rcfg.combine == "views":
        if not accepts_views(sample):
            raise ConfigError(f"rankers.{rcfg.name}.combine: ranker {rcfg.ranker!r} takes one feature "
                              f"matrix; use combine: concat")
        return {n: feats[n] for n in names}
    mats = [feats[n] for n in names]
    return mats[0] if len(mats) == 1 else np.hstack([m.reshape(len(m), -1) for m in mats])


def _run_job(job: Job, protocol: Protocol, make, X, dataset: Dataset, split: dict) -> dict:
    meter = Meter()
    t0 = time.perf_counter()
    result = protocol.evaluate(make, X, dataset, split, meter)
    record = {
        "setting": job.setting, "trial": job.trial, "seed": job.seed, "method": job.method,
        "metrics": {**result.metrics, **meter.metrics()},
        "curves": result.curves, "extra": result.extra,
        "wall_s": time.perf_counter() - t0,
    }
    atomic_write_json(job.path, record)
    return record


# ----------------------------------------------------------------------------- the run
def _run_dir(opts: RunOptions, name: str) -> Path:
    if opts.out:
        return Path(opts.out)
    base = Path(opts.results_root) / name
    if opts.resume:
        runs = sorted(p for p in base.glob("*") if (p / "splits.json").is_file()) if base.is_dir() else []
        if not runs:
            raise ConfigError(f"--resume: no earlier run of {name!r} under {base}; give --out RUN_DIR")
        return runs[-1]
    return base / _dt.datetime.now().strftime("%Y%m%d-%H%M%S")


def _check_writable(run_dir: Path) -> None:
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        probe = run_dir / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise ConfigError(f"output folder {run_dir} is not writable ({exc.strerror or exc})") from None


def prepare(config_path: str | Path, opts: RunOptions):
    """Resolve the config and its sweep settings (also used by ``rankbench validate``)."""
    sets = list(opts.sets)
    if opts.trials is not None:
        sets.append(f"protocol.trials={opts.trials}")
    if opts.seed is not None:
        sets.append(f"protocol.seed={opts.seed}")
    data, cfg = load_config(config_path, sets, regress=opts.regress)
    settings = setting_configs(data, cfg, str(config_path))
    return data, cfg, settings


def run_experiment(config_path: str | Path, opts: RunOptions) -> Path:
    started = _dt.datetime.now().astimezone()
    data, cfg, settings = prepare(config_path, opts)
    run_dir = _run_dir(opts, cfg.name)
    resolved = yaml.safe_dump(data, sort_keys=False)
    if opts.resume:
        if not (run_dir / "splits.json").is_file():
            raise ConfigError(f"--resume: {run_dir} holds no earlier run (no splits.json)")
        if (run_dir / "config.yaml").is_file() and yaml_load((run_dir / "config.yaml").read_text()) != data:
            raise ConfigError(f"--resume: the config differs from the one {run_dir} was started with; "
                              f"start a new run instead")
    elif (run_dir / "splits.json").is_file():
        raise ConfigError(f"output folder {run_dir} already holds a run; use --resume to continue it "
                          f"or choose another --out")
    _check_writable(run_dir)
    atomic_write_text(run_dir / "config.yaml", resolved)

    # dataset and features, shared by settings where their configs agree
    ds_cache: dict[str, Dataset] = {}
    feat_cache: dict[str, np.ndarray] = {}
    splits_path = run_dir / "splits.json"
    recorded = json.loads(splits_path.read_text()) if opts.resume else {}
    all_splits: dict[str, list[dict]] = {}
    work: list[tuple[Job, Protocol, Any, Any, Dataset, dict]] = []
    for label, scfg in settings:
        dkey = json.dumps(scfg.dataset.model_dump(), sort_keys=True, default=str)
        if dkey not in ds_cache:
            ds_cache[dkey] = build_dataset(scfg, opts.data_root)
        dataset = ds_cache[dkey]
        protocol = build_protocol(scfg)
        protocol.check_dataset(dataset)
        feats = {}
        for f in scfg.features:
            extractor = features.build(f.extractor, f.params(), f"features.{f.key}")
            fkey = dkey + json.dumps(extractor.cache_key(), sort_keys=True, default=str)
            if fkey not in feat_cache:
                feat_cache[fkey] = get_features(dataset, extractor, n_jobs=opts.jobs,
                                                progress=opts.progress, use_cache=opts.use_cache)
            feats[f.key] = feat_cache[fkey]
        if label in recorded:
            splits = recorded[label]
        else:
            splits = []
            for t in range(scfg.protocol.trials):
                s = trial_seed(scfg.protocol.seed, t)
                splits.append({"trial": t, "seed": s, **protocol.split(dataset, np.random.default_rng(s))})
        all_splits[label] = splits
        slim = dataset.without_images()
        for rcfg in scfg.rankers:
            probe = _probe(rcfg)
            protocol.check_ranker(probe, f"rankers.{rcfg.name}")
            X = ranker_matrix(scfg, rcfg, feats, probe)
            for sp in splits:
                job = Job(label, sp["trial"], sp["seed"], rcfg.name,
                          trial_file(run_dir, label, sp["trial"], rcfg.name))
                work.append((job, protocol, make_ranker_factory(rcfg, sp["seed"]), X, slim, sp))
    atomic_write_json(splits_path, all_splits)

    todo = [w for w in work if not w[0].path.is_file()]
    try:
        if opts.jobs == 1 or len(todo) <= 1:
            bar = progress_bar(todo, desc=cfg.name, enabled=opts.progress)
            for w in bar:
                if hasattr(bar, "set_postfix_str"):
                    job = w[0]
                    bar.set_postfix_str(f"{job.setting + ' ' if job.setting else ''}{job.method} trial {job.trial}")
                _run_job(*w)
        else:
            from joblib import Parallel, delayed

            gen = Parallel(n_jobs=opts.jobs, return_as="generator_unordered")(
                delayed(_run_job)(*w) for w in todo)
            for _ in progress_bar(gen, desc=cfg.name, total=len(todo), enabled=opts.progress):
                pass
    except KeyboardInterrupt:
        done = sum(w[0].path.is_file() for w in work)
        raise RunInterrupted(f"interrupted: {done} of {len(work)} results saved in {run_dir}; "
                             f"continue with: rankbench run {config_path} --out {run_dir} --resume") from None

    from ..report.build import build_report, write_manifest

    built = build_report(run_dir, plots=cfg.output.plots)
    write_manifest(run_dir, started, _dt.datetime.now().astimezone(), str(config_path), built["records"])
    return run_dir


def _probe(rcfg: RankerCfg):
    """An unfitted instance, to ask a ranker for its capabilities."""
    return make_ranker_factory(rcfg, 0)()

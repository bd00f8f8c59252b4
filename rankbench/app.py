"""What rankbench does for its users, one function per use case, callable from Python and from
the command line alike (:mod:`rankbench.cli` parses arguments, calls these and prints what they
return); everything a user can get wrong becomes one :class:`~rankbench.errors.RankbenchError`.

Example (Python)::

    from rankbench import app
    result = app.run("configs/quickstart.yaml", overrides=app.Overrides(trials=2))
    print(result.report.markdown)
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import io
import json
import logging
import math
import os
import pickle
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from .components import ComponentSpec
from .config import (
    ABSENT,
    Config,
    Experiment,
    Overrides,
    apply_overrides,
    check_published,
    first_difference,
    load_experiment,
    load_raw,
    RankerCfg,
    parse_set,
    ranker_feature_names,
    read_yaml,
    resolve,
    set_path,
)
from .engine.cache import get_features
from .engine import refit
from .engine.estimator import MethodSpec
from .engine.execute import Outcome, RunInterrupted, execute
from .engine.export import write_svmlight, write_trec
from .engine.manifest import verify_resume
from .engine.plan import EngineOptions, Plan, check_measured, data_mistakes, load_dataset, plan
from .engine.reuse import data_content
from .errors import ConfigError, ConfigErrors, ErrorList, JobsFailed, RankbenchError, did_you_mean
from .params import init_params
from .registry import ALL, parameter_table, plugin_errors
from .report.build import (
    Report,
    RunData,
    build_report,
    grade_run_claims,
    load_run,
    results_of,
    run_data,
    status_lines,
    status_said,
    summary_of,
)
from .report.check import Grade, GradedNumber, any_fail, check_markdown, counts_line, grade_counts, grade_rows
from .report.claims import GradedClaim, claims_markdown
from .report.collect import paper_of, write_collected
from .report.compare import CORRECTIONS, Comparison, compare_methods, compare_runs
from .report.figures import PAPERS, draw, figure_paper, require_complete
from .report.mlflow_store import log_run
from .report.mlflow_store import require_mlflow as mlflow_ready
from .report.notes import NoteEntry, paper_note
from .report.plots.style import style_file
from .report.results import results_json
from .report.tables import trials_frame, with_sweep_columns
from .runfolder import CONFIG, RunFolder, RunState
from .utils import diskcache
from .utils.diskcache import cache_dir
from .utils.fileio import atomic_write_bytes, atomic_write_text
from .utils.progress import configure_logging, progress_shown

log = logging.getLogger("rankbench.app")

__all__ = ["Overrides", "EngineOptions", "RunInterrupted", "parse_set", "Grade", "check_markdown", "claims_markdown",
           "counts_line", "validate", "run", "failed_line", "evaluate", "paper_settings", "Exported",
           "report", "check", "export", "mlflow_ready", "export_features", "collect", "notes", "figures", "compare",
           "components", "describe_component", "plugin_errors", "cache_dir",
           "load_results", "configure_logging", "progress_shown"]


# ----------------------------------------------------------------------------- validate
def validate(config: str | Path, overrides: Overrides | None = None, data_root: str | None = None) -> Plan:
    """Every check ``run`` makes before any work (config, components, dataset, rankers); writes nothing.

    A ranker that cannot be built (an abstract class, an ``__init__`` that raises) is a mistake
    here, one line each; ``run`` computes the other methods and records its jobs as failed."""
    p = plan(_experiment(config, overrides, data_root), data_root)
    if p.faults():
        raise ConfigErrors(p.faults())
    return p


def _experiment(config: str | Path, overrides: Overrides | None, data_root: str | None) -> Experiment:
    """``load_experiment``; when the config has mistakes, its dataset's are reported with them
    (:func:`~rankbench.engine.plan.data_mistakes`), so that every mistake is said at once."""
    try:
        return load_experiment(config, overrides)
    except ConfigError as mistakes:
        found = ErrorList()
        found.add(mistakes)
        try:
            data = apply_overrides(load_raw(config), overrides or Overrides(), str(config))
        except RankbenchError:
            raise mistakes from None
        for more in data_mistakes(data, str(config), data_root):
            found.add(more)
        found.raise_any()
        raise


# ----------------------------------------------------------------------------- run
@dataclass
class RunResult:
    folder: RunFolder
    outcome: Outcome
    report: Report | None = None


def _resume_experiment(folder: RunFolder, started: dict, config: str | Path | None, overrides: Overrides,
                       regressed: bool) -> Experiment:
    """The experiment a folder was started with (``started``, its config.yaml, with its regress
    block applied when ``regressed``); a given config / overrides must agree with it."""
    origin = str(folder.path / CONFIG)
    if config is None and overrides.regress and not regressed:   # config.yaml holds no block to apply
        raise ConfigError(f"--resume {folder.path}: the run was started without --regress, now with it; resume "
                          "without changing it (the folder keeps its own config) or start a new run")
    if config is not None:
        wanted = load_experiment(config, overrides).data
    elif not overrides.empty():
        wanted = apply_overrides(started, replace(overrides, regress=False), origin)
    else:
        wanted = started
    diff = first_difference(started, wanted)
    if diff is not None:
        key, was, now = diff
        was, now = ("(every ranker)" if key == "methods" and v in (None, ABSENT) else repr(v) for v in (was, now))
        raise ConfigError(f"--resume {folder.path}: the run was started with {key} = {was}, now {now}; resume "
                          "without changing it (the folder keeps its own config) or start a new run")
    return resolve(started, origin, overrides.max_settings)


def _run_data_root(manifest, data_root: str | None) -> str | None:
    """A run reads its data again where it was started unless told otherwise: without
    --data-root (or $RANKBENCH_DATA), the data root its ``manifest`` records, if that folder exists."""
    recorded = manifest.data_root if manifest is not None else None
    if data_root is None and isinstance(recorded, str) and Path(recorded).is_dir():
        return recorded
    return data_root


def run(config: str | Path | None = None, *, overrides: Overrides | None = None, out: str | Path | None = None,
        resume: str | Path | None = None, results_root: str | Path = "results",
        options: EngineOptions | None = None, plots: bool | None = None, style: str | Path | None = None) -> RunResult:
    """Run ``config`` into a new run folder, or continue the run in ``resume``.

    A run whose every job failed raises :class:`~rankbench.errors.JobsFailed` (after its report is
    written); one where some failed returns them in ``outcome.failed``.

    A new folder is created exclusively, only after the config, the dataset and every ranker have
    passed their checks, and is removed again if the run fails before its first result. ``style``:
    a matplotlib style file for the figures, on top of rankbench's own.
    """
    if style is not None:
        style_file(style)   # a wrong style file is refused before any work
    overrides = overrides or Overrides()
    options = options or EngineOptions()
    if not options.invocation:  # called from Python: record what was asked, as the CLI does
        options = replace(options, invocation={
            "argv": None, "api": "rankbench.app.run", "config": None if config is None else str(config),
            "resume": None if resume is None else str(resume),
            "overrides": [f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in overrides.sets],
            "trials": overrides.trials, "seed": overrides.seed, "regress": overrides.regress,
            "methods": overrides.methods})
    command = " ".join(options.invocation.get("argv") or ["rankbench.app.run", str(config or resume)])
    with contextlib.ExitStack() as held:
        if resume is not None:
            if out is not None:
                raise ConfigError(f"--out {out}: a resumed run stays in its own folder ({resume}); drop --out, or "
                                  "start a new run with --out")
            folder = RunFolder.open(resume)
            folder.check_writable()
            held.enter_context(folder.lock(command))  # before any work: a second writer is refused at once
            state = verify_resume(folder)
            exp = _resume_experiment(folder, state.config, config, overrides,
                                     bool(state.manifest and state.manifest.invocation.get("regress")))
            options = replace(options, data_root=_run_data_root(state.manifest, options.data_root))
            new = False
        elif config is None:
            raise ConfigError("run: give a config file, or --resume RUN_DIR")
        else:
            exp = _experiment(config, overrides, options.data_root)
            state, new = RunState(exp.data), True
        p = plan(exp, options.data_root, published=new)   # a resumed run's were checked when it started
        if new:
            folder = _new_folder(held, command, out, results_root, exp.name)
        outcome, built = _executed(p, state, folder, new, options, exp.config.output.plots if plots is None else plots,
                                   style)
    if outcome.failed and not outcome.n_done:   # nothing to show: an error, not a result
        raise JobsFailed(failed_line(outcome), [(r.setting, r.trial, r.method, r.phase, r.error)
                                                for r in sorted(outcome.failed, key=lambda r: r.key)],
                         folder=folder.path)
    return RunResult(folder, outcome, built)


def _new_folder(held: contextlib.ExitStack, command: str, out: str | Path | None, root: str | Path = "results",
                name: str = "run") -> RunFolder:
    """A new run folder (:meth:`RunFolder.create`), written by this process alone while ``held``."""
    folder = RunFolder.create(out, root, name)
    folder.check_writable()
    held.enter_context(folder.claim(command))
    return folder


def _executed(p: Plan, state: RunState, folder: RunFolder | None, new: bool, options: EngineOptions, plots: bool,
              style: str | Path | None = None) -> tuple[Outcome, Report | None]:
    """The plan executed (``state``: a new run's config, or the run a resume read), written into
    ``folder`` (None: nowhere) with its report, built from the run held in memory: the one path of
    ``run``, ``run --resume`` and ``evaluate``. A new folder that got no result is removed again."""
    if folder is None:
        return execute(p, None, options, state), None
    try:
        if new:
            folder.write_config(state.config)
        outcome = execute(p, folder, options, state)
    except RunInterrupted:
        with contextlib.suppress(Exception):   # a partial report; never hides the interruption
            build_report(folder, plots=plots)
        raise
    except BaseException:
        if new:
            folder.remove_if_empty_of_results()
        raise
    return outcome, build_report(run_data(folder, outcome.state), plots=plots, style=style,
                                 n_jobs=options.jobs if options.executor == "local" else 1)


def failed_line(outcome: Outcome) -> str:
    """A run's failed jobs in one line, as ``rankbench run`` ends with them (each was logged, with
    its error, as it failed; the report lists them)."""
    names = ", ".join(dict.fromkeys(r.method for r in outcome.failed))
    return (f"{len(outcome.failed)} of {outcome.n_total} jobs failed ({names}; the report lists each with its "
            f"error); after fixing them: rankbench run --resume {outcome.folder.path}")


# ----------------------------------------------------------------------------- evaluate
#: where paper settings ("prosser/viper_p316") are found: the configs/ folder of the rankbench checkout
CONFIGS = Path(__file__).resolve().parents[1] / "configs"


def paper_settings() -> list[str]:
    """The paper settings ``evaluate`` accepts by name (``<paper>/<config>``, from ``configs/``)."""
    if not CONFIGS.is_dir():
        return []
    return sorted(str(p.relative_to(CONFIGS).with_suffix("")) for p in CONFIGS.glob("*/*.yaml"))


def _setting_experiment(config: str | Path | dict, overrides: Overrides) -> Experiment:
    """A config file, a config mapping, or a paper setting's name, resolved with ``overrides``."""
    if isinstance(config, dict):
        data = dict(config)
        data.setdefault("name", "evaluate")
        return resolve(apply_overrides(data, overrides, "<config dict>"), "<config dict>")
    path = Path(config)
    if path.is_file():
        return load_experiment(path, overrides)
    named = CONFIGS / f"{config}.yaml"
    if path.suffix not in (".yaml", ".yml") and named.is_file():
        return load_experiment(named, overrides)
    known = paper_settings()
    raise ConfigError(f"evaluate: {str(config)!r}: expected a config file, a config mapping or a paper setting "
                      f"({did_you_mean(str(config), known)}settings: {', '.join(known) or f'none ({CONFIGS} not found)'})")


def _plain(value: Any) -> Any:
    """A parameter value as YAML can store it (numbers, text, lists, mappings), else its repr."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        return value.item()
    return repr(value)


def evaluate(estimator: Any, config: str | Path | dict, *, trials: int | None = None, seed: int | None = None,
             out: str | Path | None = None, data_root: str | None = None, name: str | None = None,
             features: str | list[str] | None = None, combine: str | None = None,
             sets: dict[str, Any] | None = None, jobs: int = 1, progress: bool = True):
    """Run a paper's protocol on an estimator object you hold: its dataset, features, splits,
    trials and seeds, without a config file or a module of your own.

    Parameters
    ----------
    estimator : a scikit-learn-style object (``get_params``, ``fit``). It runs as a configured ranker
        does: each trial fits a fresh copy (``sklearn.base.clone``), with ``random_state`` set from
        the trial where it is None. An object that declares no capability (a mixin of
        :mod:`rankbench.rankers.base`) is taken for the one the protocol asks for when it has that
        capability's methods (e.g. ``fit`` and ``predict`` under ``classification``).
    config : a config file, a config mapping (as the YAML would read), or a paper setting such as
        ``"prosser/viper_p316"`` (:func:`paper_settings` lists them). The config's own rankers are
        not run; its published numbers and claims about them are graded NOT RUN.
    trials, seed : override the config's.
    out : also keep the run as a run folder (report, ``rankbench check`` / ``compare`` / ``export``).
    data_root : where the datasets are (as ``--data-root``).
    name : the method's name in the tables (default: the estimator's class name).
    features : the config's feature sets it gets (default: every one).
    combine : ``concat`` or ``views`` (default: ``views`` where the protocol consumes views, as
        ``stacked_retrieval`` does, else ``concat``).
    sets : config overrides, as ``--set`` gives them (``{"protocol.n_test": 100}``).
    jobs : worker processes on this machine; more than one needs an estimator that pickles.
    progress : show progress on stderr.

    Returns
    -------
    (trials, summary) : the pandas frames :func:`load_results` returns.

    Raises
    ------
    JobsFailed : when any job failed (the estimator raised, called ``sys.exit``, or returned NaN,
        the wrong shape or no numbers), as ``rankbench run`` exits 1: its message names the
        method, the trial and the fault; it carries the finished jobs' frames (``.trials``,
        ``.summary``) and every failed job (``.failed``).
    ConfigError : an estimator with none of the protocol's capabilities, one that cannot be
        built or breaks its declared parameter constraints, or an argument the command line would
        refuse too (``jobs=0``), before any job.

    Example::

        trials, summary = app.evaluate(MyRanker(scale=2.0), "prosser/viper_p316", trials=3,
                                       data_root="../shared/datasets")
    """
    if estimator is None or isinstance(estimator, type):
        raise ConfigError(f"evaluate: estimator: expected an estimator object (an instance, e.g. "
                          f"{getattr(estimator, '__name__', 'MyRanker')}()), got {estimator!r}")
    if not isinstance(config, (str, os.PathLike, dict)):
        raise ConfigError(f"evaluate: config: expected a config file's path, a paper's config name or a dict, got "
                          f"{type(config).__name__}")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise ConfigError(f"evaluate: name: expected a method name (text), got {name!r}")
    if features is not None and not (isinstance(features, str) or (isinstance(features, (list, tuple))
                                                                      and all(isinstance(f, str) for f in features))):
        raise ConfigError(f"evaluate: features: expected a feature set's name or a list of them, got {features!r}")
    if sets is not None and not (isinstance(sets, dict) and all(isinstance(k, str) for k in sets)):
        raise ConfigError(f"evaluate: sets: expected a mapping of key paths (text) to values, got {sets!r}")
    sets_used = [features] if isinstance(features, str) else list(features or [])
    if len(set(sets_used)) < len(sets_used):
        raise ConfigError(f"evaluate: features: expected each feature set once, got {features!r}")
    for arg, value in (("data_root", data_root), ("out", out)):
        if value is not None and not isinstance(value, (str, os.PathLike)):
            raise ConfigError(f"evaluate: {arg}: expected a folder path, got {value!r}")
    try:
        shown = repr(estimator)
    except Exception:  # noqa: BLE001 - a user's __repr__ (or the get_params it calls) that fails
        shown = f"<{type(estimator).__name__} object>"
    call = (f"rankbench.app.evaluate({shown}, {str(config) if not isinstance(config, dict) else '<dict>'!r}"
            + "".join(f", {k}={v!r}" for k, v in (("trials", trials), ("seed", seed), ("sets", sets)) if v) + ")")
    options = EngineOptions(data_root=data_root, jobs=jobs, progress=progress,   # jobs checked as --jobs is
                            invocation={"argv": None, "api": "rankbench.app.evaluate", "call": call,
                                        "config": None if isinstance(config, dict) else str(config),
                                        "trials": trials, "seed": seed})
    overrides = Overrides(sets=list((sets or {}).items()), trials=trials, seed=seed)
    exp = _setting_experiment(config, overrides)
    label = name or type(estimator).__name__
    if label in [r.name for r in exp.config.rankers]:
        raise ConfigError(f"evaluate: name: {label!r} is a ranker of the config; give the estimator another name")
    if label in [e.method for e in exp.config.expected if e.published_only]:   # its grades would be the paper's
        raise ConfigError(f"evaluate: name: {label!r} is a method the config's published numbers name (published "
                          "only); give the estimator another name")
    if combine not in (None, "concat", "views"):
        raise ConfigError(f"evaluate: combine: expected 'concat' or 'views', got {combine!r}")
    if jobs > 1:
        try:
            pickle.dumps(estimator)
        except Exception as exc:  # noqa: BLE001 - whatever stops pickling stops worker processes
            raise ConfigError(f"evaluate: jobs: {jobs} worker processes need an estimator that pickles (its class "
                              f"importable from a module), got {type(exc).__name__}: {exc}; use jobs=1") from None
    consumes = getattr(exp.components.protocol.cls, "consumes_views", False)
    spec = MethodSpec(label, ComponentSpec.of(estimator, where=f"evaluate: estimator {label!r}"), sets_used,
                      combine or ("views" if consumes else "concat"))
    p = plan(exp, data_root, methods=[spec])
    if p.faults():   # a copy of the estimator cannot be made: every job would fail
        raise ConfigErrors(p.faults())
    made = p.settings[0].methods[0]
    entry = {"name": label, "ranker": made.ranker.name, "features": made.feature_sets, "combine": made.combine}
    if hasattr(estimator, "get_params"):
        entry.update({k: _plain(v) for k, v in estimator.get_params(deep=False).items() if k not in entry})
    data = {**exp.data, "rankers": [*exp.data["rankers"], entry], "methods": [label]}
    with contextlib.ExitStack() as held:
        folder = None if out is None else _new_folder(held, call, out)
        outcome, _ = _executed(p, RunState(data), folder, True, options, exp.config.output.plots)
        trials_, summary = load_results(run_data(folder, outcome.state))
        if outcome.failed:
            raise JobsFailed(_failed_message(outcome, out), [(r.setting, r.trial, r.method, r.phase, r.error)
                                                             for r in sorted(outcome.failed, key=lambda r: r.key)],
                             trials_, summary, None if folder is None else folder.path)
        return trials_, summary


def _failed_message(outcome: Outcome, out: str | Path | None) -> str:
    """The failed jobs of an evaluation in one line, as ``rankbench run`` counts them: the first
    named with its trial, phase and error, the others counted."""
    failed = sorted(outcome.failed, key=lambda r: r.key)
    first = failed[0]
    at = f"trial {first.trial}" + (f" of {first.setting}" if first.setting else "")
    others = ", ".join(f"trial {r.trial}" + (f" of {r.setting}" if r.setting else "") for r in failed[1:6]) \
        + (f" and {len(failed) - 6} more" if len(failed) > 6 else "")
    kept = "; what finished is on this error (.trials, .summary)" + (f" and in {out}" if out is not None else "")
    return (f"evaluate: {len(failed)} of {outcome.n_total} jobs failed: {first.method} {at} FAILED in "
            f"{first.phase}: {first.error}" + (f"; also {others}" if others else "") + kept)


# ----------------------------------------------------------------------------- report, check
def report(run_dir: str | Path, plots: bool = True, max_rank: int | None = None,
           style: str | Path | None = None) -> Report:
    """Rebuild RUN_DIR's tables (CSV, Markdown, LaTeX), results.json and plots from its stored results.

    ``max_rank`` ends the CMC figures' rank axis (default: the largest rank the run tabulates);
    ``style`` is a matplotlib style file applied on top of rankbench's own figure style.
    Returns the :class:`~rankbench.report.build.Report` (``markdown``, ``latex``, ``summary``,
    ``plots``, ...). What a reader must know before its numbers (an incomplete run, unusable files)
    is said as warnings too, as collect, notes and export say it.
    """
    folder = RunFolder.open(run_dir)
    if style is not None:
        style_file(style)
    with folder.lock("rankbench report"):  # not while a run writes the same files
        built = build_report(folder, plots=plots, max_rank=max_rank, style=style)
    for line in status_said(built.run):
        log.warning("%s", line)
    return built


@dataclass
class CheckResult:
    """Graded published numbers (``rows``) and claims, their grade counts, what to know about the
    run (``status``), whether ``check`` fails, and a note when there was nothing to grade."""

    rows: list[GradedNumber]
    counts: dict[str, int]
    status: list[str]
    failed: bool
    claims: list[GradedClaim] = field(default_factory=list)
    note: str = ""


def check(run_dir: str | Path, expected_file: str | Path | None = None) -> CheckResult:
    """Grade RUN_DIR against the published numbers and claims of its config (or of ``expected_file``).

    ``failed`` is True on a FAIL, FAILED or MISSING grade or an incomplete run; a run with nothing to
    grade is not a failure (``note`` says so).
    """
    run_data = load_run(RunFolder.open(run_dir))
    source = Path(expected_file) if expected_file else run_data.folder.path / CONFIG
    doc = read_yaml(Path(expected_file), "expected-numbers") if expected_file else run_data.config
    if not doc.get("expected") and not doc.get("claims"):
        return CheckResult([], {}, status_lines(run_data), not run_data.complete,
                           note=f"nothing to grade: {source} lists no published numbers (expected) or claims")
    # checked as a config's own are (a ranker --methods left out stays a ranker: its rows are NOT RUN)
    published = check_published(run_data.config, doc, str(source))
    if expected_file:   # a config's own were held against what its protocol reports when it was validated
        check_measured(published, {m for r in run_data.records for m in r.metrics}, str(source))
    rows = grade_rows(summary_of(run_data), published.expected, run_data.methods, run_data.failures())
    claim_rows = grade_run_claims(run_data, published.claims)
    failed = any_fail(rows + claim_rows) or not run_data.complete
    return CheckResult(rows, grade_counts(rows + claim_rows), status_lines(run_data), failed, claim_rows)


# ----------------------------------------------------------------------------- features
def export_features(config: str | Path, out: str | Path, data_root: str | None = None, jobs: int = 1,
                    progress: bool = True, overwrite: bool = False) -> dict[str, tuple[int, ...]]:
    """Extract a config's feature sets for the whole dataset into one .npz: ``ids``, the item
    columns the dataset has (``identity``, ``cam``, ``label``, ``category``, ``subject``, ``group``)
    and ``X_<set>`` per feature set. An existing ``out`` is refused unless ``overwrite``, and so is a
    sweep that changes the dataset or the features (one file holds one setting's)."""
    if Path(out).exists() and not overwrite:
        raise RankbenchError(f"{out}: already exists; choose another --out or add --force to replace it")
    exp = load_experiment(config)
    first = exp.settings[0]
    if any((s.components.dataset, s.components.features) != (first.components.dataset, first.components.features)
           for s in exp.settings):
        keys = [k for k in exp.config.sweep if k.split(".")[0] in ("dataset", "features")] or list(exp.config.sweep)
        raise ConfigError(f"{exp.origin}: sweep: {', '.join(keys)}: the features differ between the settings and "
                          "the file holds one setting's; edit the config to one value of each swept key")
    ds = load_dataset(first.config, data_root, exp.origin)
    arrays: dict[str, np.ndarray] = {"ids": ds.items["id"].astype(str).to_numpy()}
    for col in ("identity", "cam", "label", "category", "subject", "group"):
        if col in ds.items.columns:
            arrays[col] = ds.items[col].to_numpy()
    for key, extractor in first.components.features.items():
        arrays[f"X_{key}"] = get_features(ds, extractor.build(), n_jobs=jobs, progress=progress)
    buf = io.BytesIO()
    np.savez_compressed(buf, **{k: (v.astype(str) if v.dtype == object else v) for k, v in arrays.items()})
    atomic_write_bytes(Path(out), buf.getvalue())
    return {k: v.shape for k, v in arrays.items()}


# ----------------------------------------------------------------------------- export
EXPORT_FORMATS = ("trec", "svmlight", "json", "mlflow")


@dataclass
class Exported:
    """What :func:`export` made: the files it wrote, the results document (``json``) and the MLflow
    parent run's id (``mlflow``)."""

    files: list[Path] = field(default_factory=list)
    document: dict[str, Any] | None = None
    run_id: str = ""


def export(run_dir: str | Path, fmt: str, out: str | Path | None = None, data_root: str | None = None,
           jobs: int = 1, progress: bool = True, overwrite: bool = False) -> Exported:
    """A run's results or data in another tool's format (``rankbench export --help`` describes each).

    ``json``: the results document, returned as ``document`` and written to ``out`` when given.
    ``mlflow``: the run logged to the local MLflow store ``out`` (default ``./mlruns``;
    :mod:`rankbench.report.mlflow_store`), the parent run's id as ``run_id``. ``trec`` and
    ``svmlight`` (:mod:`rankbench.engine.export`) read the run's dataset again (from ``data_root``,
    else the one the run recorded; it must be unchanged) and write into ``out`` (default
    ``<run>/export/<format>``). An existing ``json`` file is refused unless ``overwrite``, and so
    is ``out`` inside the run folder (but under its ``export/``); what a reader must know of the
    run (incomplete, failed jobs) is logged as a warning.
    """
    if fmt not in EXPORT_FORMATS:
        raise ConfigError(f"export: --format: expected one of {', '.join(EXPORT_FORMATS)}, got {fmt!r}")
    if out is not None and not str(out).strip():
        raise ConfigError("export: --out: expected a file or folder path, got ''")
    if fmt == "json" and out is not None and Path(out).exists() and not overwrite:
        raise ConfigError(f"export: {out}: already exists; choose another --out or add --force to replace it")
    folder = RunFolder.open(run_dir)
    own, target = folder.concrete.path.resolve(), None if out is None else Path(out).resolve()
    if target is not None and target.is_relative_to(own) and not target.is_relative_to(own / "export"):
        raise ConfigError(f"export: --out {out}: inside the run folder, whose files are its results; choose a "
                          f"path outside it or under {folder.path / 'export'}")
    run_data = load_run(folder)
    for line in status_said(run_data):
        log.warning("%s", line)
    if fmt == "json":
        doc = results_of(run_data)
        if out is not None:
            atomic_write_text(Path(out), results_json(doc))
        return Exported([Path(out)] if out is not None else [], doc)
    if fmt == "mlflow":
        store = Path(out) if out is not None else Path("mlruns")
        return Exported(run_id=log_run(results_of(run_data), run_data.config, folder.concrete.path, store))
    protocol_name = run_data.protocol_name
    if fmt == "trec" and protocol_name not in ("retrieval", "stacked_retrieval"):
        raise ConfigError(f"export --format trec: expected a retrieval run, got protocol {protocol_name!r}")
    where = _run_data_root(run_data.manifest, data_root)
    sources = _RunSources(folder, run_data, where, jobs, progress)
    target = Path(out) if out is not None else folder.path / "export" / fmt
    with contextlib.ExitStack() as held:
        if out is None:
            held.enter_context(folder.lock(f"rankbench export --format {fmt}"))
        root = target if out is not None else folder.path   # no link followed below it
        if fmt == "trec":
            return Exported(write_trec(run_data.records, run_data.settings, sources.dataset, target, root))
        return Exported(write_svmlight(protocol_name, sources.protocol, run_data.settings, sources.dataset,
                                       sources.features, target, root))


class _RunSources:
    """What a run's settings read, built again from its config.yaml (schema only: a run of
    ``evaluate`` names an object's class there) and checked against what the run recorded."""

    def __init__(self, folder: RunFolder, run_data, data_root: str | None, jobs: int, progress: bool):
        self.folder, self.run, self.data_root, self.jobs, self.progress = folder, run_data, data_root, jobs, progress
        self._configs: dict[str, Any] = {}
        self._datasets: dict[str, Any] = {}

    def config(self, label: str):
        if label not in self._configs:
            data = copy.deepcopy(self.run.config)
            for key in ("sweep", "expected", "claims"):
                data.pop(key, None)
            for k, v in self.run.setting_values().get(label, {}).items():
                set_path(data, k, v, f"{self.folder.path / CONFIG}: sweep")
            try:
                self._configs[label] = Config.model_validate(data)
            except ValidationError as err:
                raise ConfigError(f"{self.folder.path / CONFIG}: not a config this rankbench reads "
                                  f"({err.errors()[0]['msg']})") from None
        return self._configs[label]

    def dataset(self, label: str):
        """The setting's dataset, read again and refused unless it is the data the run used: the
        content fingerprint and item count splits.json recorded for the setting (as ``--resume``
        checks), else (a run made before those) the manifest's fingerprint of an unswept dataset."""
        cfg = self.config(label)
        key = repr(cfg.dataset.model_dump())
        if key not in self._datasets:  # read and digested once, asked for each trial and part
            ds = load_dataset(cfg, self.data_root, str(self.folder.path / CONFIG))
            self._datasets[key] = ds, data_content(ds)
        ds, content = self._datasets[key]
        st = next((s for s in self.run.settings if s.label == label), None)
        recorded = st.dataset_fingerprint if st is not None else None
        if recorded is None and not any(k.startswith("dataset.") for k in self.run.config.get("sweep") or {}):
            recorded = (self.run.manifest.datasets if self.run.manifest else {}).get(cfg.dataset.name)
        n_items = st.n_items if st is not None else None
        where = f" (setting {label})" if label else ""
        if recorded and recorded != ds.fingerprint or n_items is not None and n_items != len(ds):
            raise RankbenchError(f"{self.folder.path}: dataset {cfg.dataset.name!r}{where} changed since the run "
                                 f"(fingerprint {ds.fingerprint}, {len(ds)} items; the run's {recorded}"
                                 + (f", {n_items} items" if n_items is not None else "") + "); export reads the data "
                                 "the run used: point --data-root at it")
        if st is not None and st.data_content not in (None, content):
            raise RankbenchError(f"{self.folder.path}: the labels of dataset {cfg.dataset.name!r}{where} (or other "
                                 "data its protocol reads beside the features) changed since the run; export reads "
                                 "the data the run used: point --data-root at it")
        return ds

    def protocol(self, label: str):
        cfg = self.config(label)
        where = f"{self.folder.path / CONFIG}: protocol"
        return ALL["protocols"].build(cfg.protocol.name, cfg.protocol.params(), where)

    def features(self, label: str) -> dict[str, np.ndarray]:
        cfg, ds = self.config(label), self.dataset(label)
        return {f.key: get_features(ds, ALL["features"].build(f.extractor, f.params(), f"features.{f.key}"),
                                    n_jobs=self.jobs, progress=self.progress)
                for f in cfg.features}


# ----------------------------------------------------------------------------- collect
def collect(run_dirs: list[str | Path], out: str | Path):
    """Several runs into one REPORT.md and, beside it, one self-contained REPORT.html
    (:mod:`rankbench.report.collect`), each run once and by its own name (:func:`_distinct`).
    Returns a :class:`rankbench.report.collect.Collected` (paths, number of runs, grade counts).
    """
    out = Path(out)
    if out.suffix.lower() in (".html", ".htm"):
        raise ConfigError(f"--out {out}: expected the Markdown report's path (e.g. {out.with_suffix('.md')}); the HTML "
                          "page is written beside it with .html, and two reports are never written to one file")
    folders = _distinct(run_dirs)
    with contextlib.ExitStack() as held:
        for f in folders:  # each run's report is rewritten: not while a run writes the same files
            held.enter_context(f.lock("rankbench collect"))
        res = write_collected([f.path for f in folders], out)
    for line in res.said:
        log.warning("%s", line)
    return res


def _distinct(run_dirs: list[str | Path]) -> list[RunFolder]:
    """The run folders, each once (a folder given twice, e.g. through a ``latest`` link and its
    own name, is read once) and by its own name, never a ``latest`` link."""
    folders: dict[Path, RunFolder] = {}
    for d in run_dirs:
        folder = RunFolder.open(d).concrete
        folders.setdefault(folder.path.resolve(), folder)
    return list(folders.values())


def _one_per_name(seen: dict[str, Path], run: RunData, command: str) -> None:
    """Refuse a second run of one config (by name): a paper's page and figures show one run of each
    (a second would be a duplicate section, or a figure overwritten or dropped)."""
    first = seen.setdefault(run.name, run.folder.path)
    if first != run.folder.path:
        raise RankbenchError(f"{command}: {first} and {run.folder.path} are both runs of {run.name!r}: "
                             "give one of them")


# ----------------------------------------------------------------------------- notes
@dataclass
class NotesResult:
    """What ``notes`` wrote: the note, how many runs it covers, and how many of them were graded
    with their committed config's published numbers and claims."""

    path: Path
    markdown: str
    n_runs: int
    n_committed: int


#: the parts of a config that decide what a run computes (not how it is graded or described)
COMPUTES = ("dataset", "features", "protocol", "rankers", "sweep", "seed")


def computes(cfg) -> dict[str, Any]:
    """What a validated config computes: :data:`COMPUTES`, each component's parameters with the
    defaults it leaves out filled in (so a default written out equals one left out)."""
    def filled(registry, name: str, params: dict[str, Any]) -> Any:
        try:
            cls = registry.get(name)
        except RankbenchError:
            return {"unknown component": name, **params}
        defaults = {k: p.default for k, p in init_params(cls).items() if p.default is not p.empty}
        return json.loads(json.dumps({**defaults, **params}, default=str))  # tuples and lists alike

    def fixed(r: RankerCfg) -> dict[str, Any]:  # the feature sets named, also where left to the default
        return {**{k: v for k, v in r.model_dump().items() if k in RankerCfg.model_fields},
                "features": ranker_feature_names(cfg, r)}

    return {"dataset": [cfg.dataset.root, filled(ALL["datasets"], cfg.dataset.name, cfg.dataset.params())],
            "features": [[f.key, f.extractor, filled(ALL["features"], f.extractor, f.params())] for f in cfg.features],
            "protocol": filled(ALL["protocols"], cfg.protocol.name, cfg.protocol.params()),
            "rankers": [[fixed(r), filled(ALL["rankers"], r.ranker, r.params())] for r in cfg.rankers],
            "sweep": cfg.sweep, "seed": cfg.seed}


def committed_configs(configs: str | Path, paper: str) -> dict[str, tuple[Path, Experiment]]:
    """A paper's committed configs by name: ``<configs>/<paper>/**/*.yaml`` except ``base/`` files
    (parts that configs extend, not experiments)."""
    folder = Path(configs) / paper
    if not folder.is_dir():
        papers = sorted(p.name for p in Path(configs).iterdir() if p.is_dir()) if Path(configs).is_dir() else []
        raise RankbenchError(f"{folder}: no such paper folder; expected one of: {', '.join(papers) or '(none)'}")
    found: dict[str, tuple[Path, Experiment]] = {}
    for path in sorted(folder.rglob("*.yaml")):
        if "base" not in path.relative_to(folder).parts:
            exp = load_experiment(path)
            found.setdefault(exp.name, (path, exp))
    return found


def notes(paper: str, run_dirs: list[str | Path] | None = None, out: str | Path | None = None,
          configs: str | Path = "configs", results: str | Path = "results") -> NotesResult:
    """Write PAPER's page (default ``docs/papers/<paper>.md``, :mod:`rankbench.report.notes`) from
    its run folders (default every run folder in ``results/<paper>/``); the hand-written parts
    beside ``out`` (``<paper>.opening.md``, ``.differs.md``, ``.history.md``) are kept verbatim.

    A run is graded with the published numbers and claims of the committed config of its name
    (``configs/<paper>/``) when it computed what that config computes (:func:`computes`: the same
    dataset, features, protocol, rankers, sweep and seed), else with its own, and the note says which.
    A run of another paper (its config in another folder of ``configs``) is refused.
    """
    committed = committed_configs(configs, paper)
    if run_dirs is None:
        base = Path(results) / paper
        run_dirs = sorted(d for d in base.iterdir() if (d / CONFIG).is_file()) if base.is_dir() else []
        if not run_dirs:
            raise RankbenchError(f"{base}: no run folders; run make reproduce-{paper} first, or name the run folders")
    entries, seen = [], {}
    for folder in _distinct(run_dirs):
        path = folder.path
        run = load_run(folder)
        _one_per_name(seen, run, "notes")
        owner = paper_of(run)
        if owner != paper and (Path(configs) / owner).is_dir():
            raise RankbenchError(f"{path}: a run of {owner} (its config {run.manifest.config_path}), not of {paper}: "
                                 f"its page is written by: rankbench notes {owner}")
        for line in status_said(run):
            log.warning("%s", line)
        config_path, exp = committed.get(run.name, (None, None))
        differs = None
        if exp is not None:
            try:
                ours = computes(resolve(run.config, str(path / CONFIG)).config)
            except RankbenchError:
                ours = {}
            theirs = computes(exp.config)
            differs = [k for k in COMPUTES if ours.get(k) != theirs.get(k)]
        if exp is not None and not differs:
            expected, claims = exp.config.expected, exp.config.claims
            graded_with = f"with the published numbers and claims of `{config_path.as_posix()}` as committed"
        else:
            own = check_published(run.config, run.config, str(path / CONFIG))
            expected, claims = own.expected, own.claims
            graded_with = ("with the run's own config: " + (f"no config of {paper} is named {run.name!r}"
                           if exp is None else f"`{config_path.as_posix()}` now computes something else "
                           f"(it differs in {', '.join(differs)})"))
        entries.append(NoteEntry(run, config_path.as_posix() if config_path else "", expected, claims, graded_with))
    order = {name: i for i, name in enumerate(committed)}
    entries.sort(key=lambda e: order.get(e.run.name, len(order)))  # stable: unmatched runs last, as given
    out = Path(out) if out else Path("docs") / "papers" / f"{paper}.md"
    hand = {part: out.with_name(f"{out.stem}.{part}.md") for part in ("opening", "differs", "history")}
    hand = {part: path for part, path in hand.items() if path.is_file()}
    md = paper_note(paper, entries, kept=tuple(path.as_posix() for path in hand.values()),
                    **{part: path.read_text() for part, path in hand.items()})
    atomic_write_text(out, md)
    return NotesResult(out, md, len(entries), sum(e.graded_with.startswith("with the published") for e in entries))


# ----------------------------------------------------------------------------- figures
@dataclass
class FiguresResult:
    """What ``figures`` wrote, per paper, and the run folders no paper draws figures of."""

    written: dict[str, list[Path]]
    skipped: list[Path] = field(default_factory=list)


def figures(run_dirs: list[str | Path], paper: str | None = None, out: str | Path | None = None,
            data_root: str | None = None, fig7_time: float | None = None) -> FiguresResult:
    """A paper's own figures, drawn from its run folders (:mod:`rankbench.report.figures`).

    Parameters
    ----------
    run_dirs : the run folders (a folder given twice, e.g. through ``latest``, is read once; two runs of one
        config, by name, are refused).
    paper : whose figures (merler, yan, yuli); default: each run's own paper (the folder of its
        config, ``configs/<paper>/``, else its protocol's); a run of another paper is left out, with a warning.
    out : the folder of the figures (default ``results/<paper>/figures``).
    data_root : where a figure of a fitted model (yan's Figure 3, yuli's) reads the data to refit
        the method on its trial's recorded split (default: the run's recorded data root when that
        folder exists, else ``$RANKBENCH_DATA`` / ``./datasets``).
    fig7_time : merler's Figure 7 at this ranking time (default: where the MAP curves differ most).

    Returns
    -------
    FiguresResult : the files written per paper and the runs that no paper draws figures of.
    """
    if paper is not None and paper not in PAPERS:
        raise RankbenchError(f"figures: {paper!r} is not a paper with figures (those are: {', '.join(PAPERS)})")
    groups: dict[str, list] = {}
    skipped: list[Path] = []
    seen: dict[str, Path] = {}
    for folder in _distinct(run_dirs):
        run = load_run(folder)
        owner = figure_paper(run)
        if owner is None:
            skipped.append(folder.path)
        elif paper not in (None, owner):
            log.warning("%s: a run of %s, not of %s: left out (its figures: rankbench figures %s RUN_DIR...)",
                        folder.path, owner, paper, owner)
        else:
            _one_per_name(seen, run, "figures")
            require_complete(run)
            groups.setdefault(owner, []).append(run)

    def refit_trial(run, setting: str, trial: int, method: str):
        root = _run_data_root(run.manifest, data_root)
        fitted = refit.refit(resolve(run.config, str(run.folder.path / CONFIG)), root, setting, method,
                             run.splits_of(setting)[trial])
        _check_refitted(run, setting, trial, method, fitted)
        return fitted

    written = {}
    for owner, runs in groups.items():
        folder = Path(out) if out is not None else Path("results") / owner / "figures"
        options = {"fig7_time": fig7_time} if owner == "merler" else {}
        written[owner] = draw(owner, runs, folder, refit_trial, **options)
    if not any(written.values()):
        raise RankbenchError(f"figures: none drawn: no figure of {paper or 'any paper'} reads these runs "
                             f"({', '.join(str(d) for d in run_dirs)})")
    return FiguresResult(written, skipped)


def _check_refitted(run, setting: str, trial: int, method: str, fitted) -> None:
    """A refitted model must be fitted on the data the run used (else an error naming the data
    root to give) and should measure what its trial recorded (else a warning: the figure shows
    a model the run did not score, e.g. of a ranker whose fit is not deterministic)."""
    st = next((s for s in run.settings if s.label == setting), None)
    recorded = st.dataset_fingerprint if st is not None else None
    if st is not None and st.data_content not in (None, data_content(fitted.dataset)):
        raise RankbenchError(f"{run.folder.path}: the labels of dataset {fitted.dataset.name!r} changed since the run; "
                             "the figures refit on the data the run used: point --data-root at it")
    if recorded and fitted.dataset.fingerprint and recorded != fitted.dataset.fingerprint:
        raise RankbenchError(f"{run.folder.path}: dataset {fitted.dataset.name!r} changed since the run (fingerprint "
                             f"{fitted.dataset.fingerprint}, the run's {recorded}); the figures refit on the data the "
                             "run used: point --data-root at it")
    record = next((r for r in run.records if r.key == (setting, trial, method)), None)
    for name, value in fitted.metrics.items():
        if record is not None and name in record.metrics and not math.isclose(value, record.metrics[name],
                                                                              rel_tol=1e-9, abs_tol=1e-12):
            log.warning(
                "%s: %s refitted on trial %d%s measures %s = %.6g, the trial recorded %.6g: the figure shows a model "
                "the run did not score", run.folder.path, method, trial, f" of {setting}" if setting else "", name,
                value, record.metrics[name])
            return


# ----------------------------------------------------------------------------- compare
def compare(run_a: str | Path, run_b: str | Path | None = None, *, methods: tuple[str, str] | None = None,
            metrics: list[str] | None = None, csv: str | Path | None = None,
            correction: str = "holm") -> Comparison:
    """Paired comparison over shared trials (:mod:`rankbench.report.compare`): every method of
    RUN_A against itself in RUN_B, or (one run) method ``methods[0]`` against ``methods[1]``.

    ``metrics``: default every quality metric both sides measure; ``correction``: ``"holm"`` or
    ``"none"``; ``csv`` also writes the table as CSV (fractions, as in the run folders).
    """
    if correction not in CORRECTIONS:
        raise ConfigError(f"compare: correction: expected one of {', '.join(CORRECTIONS)}, got {correction!r}")
    a = load_run(RunFolder.open(run_a))
    runs = [a]
    if run_b is not None:
        if methods:
            raise ConfigError(f"{run_b}: --methods: expected one run (two methods of it), got a second run; "
                              "two runs compare every method they share")
        runs.append(load_run(RunFolder.open(run_b)))
        result = compare_runs(a, runs[1], metrics, correction)
    elif not methods:
        raise ConfigError(f"{run_a}: compare: expected a second run or --methods X Y, got neither")
    else:
        result = compare_methods(a, methods[0], methods[1], metrics, correction)
    # what check and report say first (an incomplete run, unusable results) holds for its pairs too
    result.warnings[:0] = [line for r in runs for line in status_said(r)]
    if csv is not None:
        atomic_write_text(Path(csv), result.to_csv())
    return result


# ----------------------------------------------------------------------------- the cache
def cache_usage(kinds: list[str] | None = None):
    """What rankbench's on-disk cache holds, per kind (features, base models, ...), largest first;
    only ``kinds`` when given (each one of :data:`~rankbench.utils.diskcache.KINDS`, held or not:
    a kind with no entry has nothing to show or clear)."""
    unknown = [k for k in kinds or () if k not in diskcache.KINDS]
    if unknown:
        raise ConfigError(f"--kind: expected one of the cache's kinds ({', '.join(diskcache.KINDS)}), "
                          f"got {', '.join(map(repr, unknown))}")
    rows = diskcache.usage()
    return [u for u in rows if u.kind in kinds] if kinds else rows


def clear_cache(kinds: list[str] | None = None):
    """Delete the cache entries of ``kinds`` (default every kind); returns what was freed and what
    could not be (:class:`rankbench.utils.diskcache.Cleared`: ``freed`` and ``kept`` bytes, one
    error line per path left)."""
    cache_usage(kinds)   # each kind must be one of the cache's
    return diskcache.clear(list(kinds) if kinds else None)


# ----------------------------------------------------------------------------- components
def components(kind: str | None = None) -> dict[str, list[tuple[str, str, str]]]:
    """(name, summary, origin) of every registered component, by kind."""
    return {k: reg.describe() for k, reg in ALL.items() if kind in (None, k)}


def describe_component(kind: str, name: str) -> dict[str, Any]:
    """A component's class, origin, parameters (constraint and default) and docstring."""
    reg = ALL[kind]
    cls = reg.get(name, f"{kind} {name}")
    entry = next((e for e in reg.entries() if e.cls is cls), None)
    return {"name": name, "class": f"{cls.__module__}.{cls.__qualname__}",
            "origin": entry.origin if entry else "import path",
            "parameters": parameter_table(cls), "doc": inspect.getdoc(cls) or ""}


# ----------------------------------------------------------------------------- results as data
def load_results(run_dir: str | Path | RunData):
    """A run's results as pandas frames, e.g. for your own statistics or plots.

    Parameters
    ----------
    run_dir : a run folder (read only; nothing is written), or a run's data (``report.build.RunData``).

    Returns
    -------
    trials : DataFrame
        ``setting, [swept keys], trial, method, metric, value``: one row per trial and metric.
    summary : DataFrame
        ``setting, [swept keys], method, metric, mean, std, n_trials`` (std with ddof = 1; NaN for
        one trial).

    A swept run has one column per swept key path (e.g. ``protocol.n_test``) holding the values
    as recorded in splits.json, typed (integers stay integers), so ``summary.sort_values(
    "protocol.n_test")`` sorts numerically. Rates are fractions, as in the files.
    """
    run = run_dir if isinstance(run_dir, RunData) else load_run(RunFolder.open(run_dir))
    values = run.setting_values()
    trials = run.ordered(trials_frame(run.records))
    return with_sweep_columns(trials, values), with_sweep_columns(summary_of(run), values)

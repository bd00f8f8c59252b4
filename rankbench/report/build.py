"""Rebuild a run folder's tables, plots and check from its per-trial result files."""

from __future__ import annotations

import logging
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..config import ClaimCfg, ExpectedCfg, check_published
from ..errors import RankbenchError
from ..runfolder import CONFIG, CURVES_CSV, DIAGNOSTICS_CSV, MANIFEST, SUMMARY_CSV, SUMMARY_MD, SUMMARY_TEX, \
    TRIALS, TRIALS_CSV, Manifest, Problem, RunFolder, RunState, SettingSplits, TrialRecord, TrialSplit, run_methods, \
    trial_name
from .check import GradedNumber, check_markdown, counts_line, grade_rows
from .claims import GradedClaim, claims_markdown, grade_claims
from .plots.draw import PlotFile, make_plots
from .results import RESULTS, results_document, results_json
from .tables import (
    curves_frame,
    diagnostics_frame,
    headline_metric,
    in_run_order,
    setting_title,
    summary_frame,
    summary_latex,
    summary_markdown,
    trials_frame,
    with_sweep_columns,
)

log = logging.getLogger("rankbench.report")


@dataclass
class RunData:
    """Everything a report needs from one run folder, read once: the finished trials' records,
    the failed ones, and the files that could not be used."""

    folder: RunFolder
    config: dict[str, Any]
    records: list[TrialRecord]
    problems: list[Problem]
    methods: list[str]
    settings: list[SettingSplits] = field(default_factory=list)
    manifest: Manifest | None = None
    failed: list[TrialRecord] = field(default_factory=list)

    @property
    def name(self) -> str:
        return str(self.config.get("name", self.folder.path.name))

    @property
    def n_trials(self) -> int:
        """The number of trials this run was made with (its resolved config, after ``--trials`` or
        ``--regress``)."""
        return int(self.config.get("trials") or 0)

    def trials_of(self, setting: str) -> int:
        """The trials of one setting: its own when the sweep sets ``trials``, else the run's."""
        values = self.setting_values().get(setting, {})
        return int(values["trials"]) if "trials" in values else self.n_trials

    @property
    def n_expected(self) -> int:
        return sum(self.trials_of(s) for s in self.setting_order or [""]) * len(self.methods)

    def file_names(self) -> set[str]:
        """The names of the result files the run makes, one per setting, trial and method."""
        return {trial_name(s, t, m) for s in self.setting_order or [""] for t in range(self.trials_of(s))
                for m in self.methods}

    @property
    def complete(self) -> bool:
        return not self.problems and not self.failed and len(self.records) >= self.n_expected

    @property
    def setting_order(self) -> list[str]:
        return [s.label for s in self.settings] or sorted({r.setting for r in self.records})

    def setting_values(self) -> dict[str, dict[str, Any]]:
        """Each setting's swept values as recorded in splits.json (typed: ints stay ints)."""
        return {s.label: s.values for s in self.settings}

    def splits_of(self, setting: str) -> dict[int, TrialSplit]:
        """The recorded split (seeds and row indices) of every trial of one setting."""
        for s in self.settings:
            if s.label == setting:
                return {t.trial: t for t in s.trials}
        return {}

    def ordered(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Rows of a tidy frame in the run's order (:func:`~.tables.in_run_order`), then by trial."""
        return in_run_order(frame, self.setting_order, self.methods, "trial")

    def provenance(self) -> dict[str, Any]:
        """What reproduces this run's numbers, from manifest.json: the config, the commit (and
        whether the checkout had local changes), the command as it was typed, and a command that
        reruns exactly the resolved config stored in the run folder."""
        m = self.manifest or Manifest(rankbench_version="", start="")
        inv = m.invocation
        argv = inv.get("argv")
        if not argv and inv.get("api") == "rankbench.app.run" and inv.get("config"):  # the same run from the CLI
            argv = ["rankbench", "run", inv["config"]] + [w for o in inv.get("overrides") or [] for w in ("--set", o)]
            argv += [w for k in ("trials", "seed") if inv.get(k) is not None for w in (f"--{k}", str(inv[k]))]
            argv += ["--regress"] if inv.get("regress") else []
            argv += ["--methods", *inv["methods"]] if inv.get("methods") else []
        root = m.data_root
        rerun = ["rankbench", "run", str(self.folder.path / CONFIG)] + (["--data-root", root] if root else [])
        return {"config": m.config_path, "commit": m.git_commit, "dirty": m.git_dirty,
                "command": shlex.join(argv) if argv else inv.get("call"), "rerun": shlex.join(rerun),
                "overrides": inv.get("overrides") or [], "data_root": root,
                "datasets": m.datasets, "version": m.rankbench_version or None,
                "start": m.start or None, "end": m.end, "complete": m.complete if self.manifest else None}

    def failures(self) -> dict[tuple[str, str], str]:
        """Each (setting, method) with failed jobs: how many of its trials failed, and the first error."""
        out: dict[tuple[str, str], list[TrialRecord]] = {}
        for r in sorted(self.failed, key=lambda r: r.trial):
            out.setdefault((r.setting, r.method), []).append(r)
        return {k: f"{len(v)} of {self.trials_of(k[0])} trials failed (trial {v[0].trial}, {v[0].phase or 'evaluate'}: "
                   f"{v[0].error})" for k, v in out.items()}

    def failed_methods(self) -> dict[str, str]:
        """Each method with failed jobs (in any setting) and why, for claims."""
        out: dict[str, str] = {}
        for (setting, method), why in self.failures().items():
            out.setdefault(method, (f"{setting}: " if setting else "") + why)
        return out

    @property
    def protocol_name(self) -> str | None:
        return (self.config.get("protocol") or {}).get("name")

    @property
    def dataset_name(self) -> str:
        return str((self.config.get("dataset") or {}).get("name", ""))


def load_run(folder: RunFolder | str, require_results: bool = True) -> RunData:
    """A run folder's config, splits, manifest and records, each validated; an unusable manifest
    is one more problem (the report says so and goes without provenance)."""
    folder = folder if isinstance(folder, RunFolder) else RunFolder.open(folder)
    state = folder.read_state()
    if require_results and not state.records:
        problems = state.problems
        extra = f" ({len(problems)} unreadable result file(s), e.g. {problems[0].path.name}: " \
                f"{problems[0].reason})" if problems else ""
        raise RankbenchError(f"{folder.path}: no trial results yet{extra}")
    return run_data(folder, state)


def run_data(folder: RunFolder | None, state: RunState) -> RunData:
    """What a report reads of a run, from the run's state (as a run holds it, or as read back)."""
    read = state.records
    return RunData(folder, state.config, [r for r in read if r.ok], list(state.problems), run_methods(state.config),
                   state.splits.settings if state.splits is not None else [], state.manifest,
                   [r for r in read if not r.ok])


def summary_of(run: RunData) -> pd.DataFrame:
    return summary_frame(trials_frame(run.records), run.methods, run.setting_order)


def status_lines(run: RunData) -> list[str]:
    """What a reader must know before trusting the tables (empty for a complete run)."""
    out = []
    where = run.folder.path.absolute()   # a command that works wherever the report is read
    writer = run.folder.writer() if run.folder is not None and len(run.records) < run.n_expected else None
    if writer is not None:   # a --resume now would be refused: the run is going on
        out.append(f"**Still running:** {len(run.records)} of {run.n_expected} results so far, written by {writer}.")
    elif len(run.records) < run.n_expected:
        out.append(f"**Incomplete run:** {len(run.records)} of {run.n_expected} results "
                   f"(continue it with `--resume {where}`).")
    if run.failed:
        methods = ", ".join(dict.fromkeys(r.method for r in run.failed))
        out.append(f"**FAILED:** {len(run.failed)} job(s) of {methods} (listed under Failed jobs, each with its "
                   f"error); their numbers are left out and graded FAILED; `--resume {where}` retries them.")
    warned = sum(1 for r in run.records if r.warnings)
    if warned:
        out.append(f"**Warnings:** {warned} of {len(run.records)} results came with warnings (listed under Warnings).")
    ours = run.file_names() if run.problems else set()
    edited = any(p.path.name == CONFIG for p in run.problems)  # its stray files are likely the run's own
    for p in run.problems:
        if p.path.name == MANIFEST:
            out.append(f"**Unusable manifest** `{p.path.name}` ({p.reason}): the run's provenance is unknown, and "
                       "`--resume` refuses a run it cannot verify.")
        elif p.path.parent.name == TRIALS and p.path.name in ours:
            out.append(f"**Unusable result file** `{p.path.name}` ({p.reason}); it is left out here and "
                       "recomputed by `--resume`.")
        elif p.path.parent.name == TRIALS:
            out.append(f"**Stray file** `{p.path.name}` ({p.reason}): no result this run makes has its name; "
                       + ("it is left out here: put config.yaml back (its results may be this file's), do not "
                          "remove it." if edited else "it is left out here: remove it."))
        else:
            out.append(f"**`{p.path.name}`** {p.reason}; `--resume` refuses such a run.")
    return out


def status_said(run: RunData) -> list[str]:
    """:func:`status_lines` as plain lines naming the run folder, for the terminal."""
    return [f"{run.folder.path}: {line.replace('**', '')}" for line in status_lines(run)]


_STATED_TRIALS = re.compile(r"\b(\d+)(\s+(?:trials|repetitions))\b")


def run_description(run: RunData) -> str:
    """The config's description, with any number of trials it states that this run did not make
    marked in place (``50 trials [this run: 3]``): the prose describes the full protocol."""
    n = run.n_trials

    def mark(m: re.Match) -> str:
        return m.group(0) if int(m.group(1)) == n else f"{m.group(0)} [this run: {n}]"

    return _STATED_TRIALS.sub(mark, str(run.config.get("description") or "").strip())


def run_facts(run: RunData) -> str:
    """What this run did, from the run itself (never from the config's prose): trials and seed,
    how it was reduced or changed (``--regress``, ``--trials``, ``--set``), its settings and methods."""
    counts = list(dict.fromkeys(run.trials_of(s) for s in run.setting_order or [""]))   # a swept trials: each
    inv = run.manifest.invocation if run.manifest else {}
    how = [w for w, on in (("--regress", inv.get("regress")), (f"--trials {inv.get('trials')}", inv.get("trials")))
           if on] + [f"--set {s}" for s in inv.get("overrides") or ()]
    facts = (f"This run: {', '.join(map(str, counts))} trial{'s' if counts != [1] else ''}"
             f"{' (by setting)' if len(counts) > 1 else ''} (run seed {run.config.get('seed', 0)}")
    facts += (", " + ", ".join(how) if how else "") + ")"
    values = run.setting_values()
    for k in dict.fromkeys(k for v in values.values() for k in v):
        shown = list(dict.fromkeys(str(v[k]) for v in values.values() if k in v))   # a value may be a list
        facts += f", {k.split('.')[-1]} = {', '.join(shown)}"
    configured = [r for r in run.config.get("rankers", []) if isinstance(r, dict)]
    if inv.get("api") == "rankbench.app.evaluate":
        some = f" (an estimator object given to app.evaluate; the config's {len(configured) - 1} rankers not run)"
    else:
        some = (f" ({len(run.methods)} of the config's {len(configured)} rankers (--methods))"
                if len(run.methods) < len(configured) else "")
    facts += f"; methods: {', '.join(run.methods)}{some}."
    reused = sum(r.reused is not None for r in run.records)
    if reused:
        facts += (f" {reused} of its {len(run.records)} results were taken from identical jobs computed before "
                  "(the same data, split, method and code; their times are the ones measured then; "
                  "`rankbench run --no-cache` computes every one).")
    return facts


def headline_of(run: RunData, summary: pd.DataFrame) -> str | None:
    return headline_metric(run.protocol_name, set(summary["metric"]))


@dataclass(frozen=True)
class Report:
    """A run's report as :func:`build_report` wrote it: the summary frame, the Markdown and LaTeX,
    the figures, the graded published numbers and claims, and the run it was built from."""

    run: RunData
    summary: pd.DataFrame
    markdown: str
    latex: str
    plots: list[PlotFile]
    grades: list[GradedNumber]
    claims: list[GradedClaim]


def build_report(folder: RunData | RunFolder | str, plots: bool = True, max_rank: int | None = None,
                 style: str | None = None, n_jobs: int = 1) -> Report:
    """Rebuild a run's derived files from its per-trial results.

    Writes ``trials.csv``, ``summary.csv``, ``curves.csv`` and ``diagnostics.csv`` (each with one
    typed column per swept key), ``summary.md`` (tables, published numbers, claims, the rankers'
    chosen hyper-parameters, plots), ``summary.tex`` (booktabs tables), ``results.json`` (the
    machine-readable results, :mod:`rankbench.report.results`) and ``plots/``.

    Parameters
    ----------
    folder : the run folder, or the run as a run holds it (:func:`run_data`).
    plots : draw the figures (PNG at 300 dpi, SVG and PDF).
    max_rank : last rank of CMC figures (default: the largest rank the run reports).
    style : a matplotlib style file applied on top of rankbench's own (``--style``).
    n_jobs : processes drawing the figures of a large report (:func:`~rankbench.report.plots.draw.make_plots`).

    Returns
    -------
    Report
    """
    run = folder if isinstance(folder, RunData) else load_run(folder)
    values = run.setting_values()
    trials = run.ordered(trials_frame(run.records))
    summary = summary_frame(trials, run.methods, run.setting_order)
    diag = run.ordered(diagnostics_frame(run.records))
    for name, frame in ((TRIALS_CSV, trials), (SUMMARY_CSV, summary), (CURVES_CSV, run.ordered(curves_frame(run.records))),
                        (DIAGNOSTICS_CSV, diag)):
        run.folder.write_text(name, with_sweep_columns(frame, values).to_csv(index=False))
    md = summary_markdown(summary, run.name, run.methods, run.setting_order,
                          description=run_description(run), status=[run_facts(run)] + status_lines(run),
                          values=values, headline=headline_of(run, summary))
    graded, grades, claim_rows = graded_sections(run, summary, *published(run), diag)
    md += graded
    run.folder.write_text(RESULTS, results_json(results_document(run, summary, headline_of(run, summary), grades,
                                                                 claim_rows)))
    latex = summary_latex(summary, run.name, run.methods, values)
    run.folder.write_text(SUMMARY_TEX, latex)
    plot_paths = []
    if plots:
        plot_paths = make_plots(run, summary, max_rank=max_rank, style=style, n_jobs=n_jobs)
        pngs = [p.path for p in plot_paths if p.path.suffix == ".png"]
        if pngs:
            md += "\n## Plots\n\n" + "\n".join(f"![{p.stem}](plots/{p.name})" for p in pngs) + "\n"
    run.folder.write_text(SUMMARY_MD, md)
    return Report(run, summary, md, latex, plot_paths, grades, claim_rows)


def failed_markdown(failed: list[TrialRecord], values: dict[str, dict[str, Any]]) -> str:
    """The failed jobs, one row each: where, which method and trial, in which phase, and why."""
    lines = ["| setting | method | trial | phase | error |", "|---|---|---|---|---|"]
    for r in sorted(failed, key=lambda r: (r.method, r.setting, r.trial)):
        error = (r.error or "").replace("|", "\\|")
        lines.append(f"| {setting_title(r.setting, values.get(r.setting)) or '–'} | {r.method} | {r.trial} | "
                     f"{r.phase or 'evaluate'} | {error} |")
    return "\n".join(lines)


def warnings_markdown(records: list[TrialRecord]) -> str:
    """What the finished trials warned of, one row per text: the methods and how many results
    said it (a concept a trial left out of its MAP, probes a re-id trial could not score ...)."""
    said: dict[str, dict[str, int]] = {}
    for r in records:
        for w in r.warnings:
            by = said.setdefault(w.text, {})
            by[r.method] = by.get(r.method, 0) + 1
    lines = ["| warning | method (results) |", "|---|---|"]
    for text, by in said.items():
        shown = " ".join(text.split()).replace("|", "\\|")
        lines.append(f"| {shown} | {', '.join(f'{m} ({n})' for m, n in by.items())} |")
    return "\n".join(lines)


def graded_rows(run: RunData, summary: pd.DataFrame, expected: list[ExpectedCfg],
                claims: list[ClaimCfg]) -> tuple[list[GradedNumber], list[GradedClaim]]:
    """The run's graded published numbers and claims."""
    grades = grade_rows(summary, expected, run.methods, run.failures()) if expected else []
    return grades, grade_run_claims(run, claims) if claims else []


def graded_sections(run: RunData, summary: pd.DataFrame, expected: list[ExpectedCfg], claims: list[ClaimCfg],
                    diag: pd.DataFrame | None = None) -> tuple[str, list[GradedNumber], list[GradedClaim]]:
    """A run graded against published numbers ``expected`` and ``claims``, in Markdown: the
    ``## Published numbers``, ``## Claims``, ``## Failed jobs`` and ``## Chosen by the rankers``
    sections (each only when it has rows), and the graded rows of both.

    ``diag`` is the run's diagnostics frame in its order (default: read from its records).
    """
    md = ""
    grades, claim_rows = graded_rows(run, summary, expected, claims)
    if grades:
        md += ("\n## Published numbers\n\n" + counts_line(grades, "published number") + ".\n\n"
               + check_markdown(grades) + "\n")
    if claim_rows:
        md += "\n## Claims\n\n" + counts_line(claim_rows, "claim") + ".\n\n" + claims_markdown(claim_rows) + "\n"
    if run.failed:
        md += "\n## Failed jobs\n\n" + failed_markdown(run.failed, run.setting_values()) + "\n"
    if any(r.warnings for r in run.records):
        md += "\n## Warnings\n\n" + warnings_markdown(run.records) + "\n"
    diag = run.ordered(diagnostics_frame(run.records)) if diag is None else diag
    chosen = diagnostics_markdown(diag, run.methods, run.setting_values())
    if chosen:
        md += "\n## Chosen by the rankers\n\n" + chosen + "\n"
    return md, grades, claim_rows


def results_of(run: RunData) -> dict[str, Any]:
    """The run's ``results.json`` document (:mod:`rankbench.report.results`), computed afresh."""
    summary = summary_of(run)
    grades, claim_rows = graded_rows(run, summary, *published(run))
    return results_document(run, summary, headline_of(run, summary), grades, claim_rows)


def diagnostics_markdown(diag: pd.DataFrame, methods: list[str], values: dict[str, dict[str, Any]]) -> str:
    """What the rankers chose (e.g. PRSVM's C), per setting and method (``diag`` in the run's order):
    every trial's value for a whole-trial choice, the spread over tasks and trials for a per-task
    one (diagnostics.csv has every value)."""
    if diag.empty:
        return ""
    lines = ["| setting | method | name | value(s) |", "|---|---|---|---|"]
    for (setting, method, name), g in diag.groupby(["setting", "method", "name"], sort=False):
        vals = g["value"].tolist()
        nums = pd.to_numeric(g["value"], errors="coerce")
        per_task = g["task"].nunique() > 1 or (g["task"] != "").any()
        over = (f"{g['task'].nunique()} tasks x " if per_task else "") + f"{g['trial'].nunique()} trial(s)"
        if nums.notna().all() and nums.nunique() == 1 and len(vals) > 1:
            text = f"{nums.iloc[0]:.4g} in all {over}"
        elif nums.notna().all() and (per_task or len(vals) > 10):
            text = f"median {nums.median():.4g} (range {nums.min():.4g} to {nums.max():.4g}) over {over}"
        elif nums.notna().all():
            text = ", ".join(f"{v:.4g}" for v in nums) + (f" (trials {', '.join(map(str, g['trial']))})"
                                                         if len(vals) > 1 else "")
        else:
            counts = pd.Series(vals).astype(str).value_counts()
            text = ", ".join(f"{k} x{v}" for k, v in counts.items())
        lines.append(f"| {setting_title(setting, values.get(setting)) or '–'} | {method} | {name} | {text} |")
    return "\n".join(lines)


def grade_run_claims(run: RunData, claims: list[ClaimCfg]) -> list[GradedClaim]:
    """A run's claims graded on its trial records, trials paired by its recorded splits."""
    splits = {s: run.splits_of(s) for s in run.setting_order} if run.settings else None
    return grade_claims(claims, run.records, run.setting_order, splits, run.setting_values(), run.methods,
                        run.failed_methods())


def published(run: RunData) -> tuple[list[ExpectedCfg], list[ClaimCfg]]:
    """The run's own published numbers and claims, checked as ``check`` checks them."""
    if not run.config.get("expected") and not run.config.get("claims"):
        return [], []
    cfg = check_published(run.config, run.config, str(run.folder.path / CONFIG))
    return cfg.expected, cfg.claims

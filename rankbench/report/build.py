"""Rebuild a run folder's tables, plots and check from its per-trial result files."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..errors import RankbenchError
from ..runfolder import Problem, RunFolder
from .check import check_markdown, grade_rows
from .claims import claims_markdown, grade_claims
from .plots import make_plots
from .tables import summary_frame, summary_markdown, trials_frame


@dataclass
class RunData:
    """Everything a report needs from one run folder, read once."""

    folder: RunFolder
    config: dict[str, Any]
    records: list[dict[str, Any]]
    problems: list[Problem]
    methods: list[str]
    settings: list[dict[str, Any]] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return str(self.config.get("name", self.folder.path.name))

    @property
    def n_expected(self) -> int:
        trials = int(self.config.get("trials") or 0)
        return trials * len(self.methods) * max(1, len(self.settings))

    @property
    def complete(self) -> bool:
        return not self.problems and len(self.records) >= self.n_expected

    @property
    def setting_order(self) -> list[str]:
        return [s["label"] for s in self.settings] or sorted({r["setting"] for r in self.records})

    def setting_values(self) -> dict[str, dict[str, Any]]:
        return {s["label"]: s.get("values", {}) for s in self.settings}


def load_run(folder: RunFolder | str, require_results: bool = True) -> RunData:
    folder = folder if isinstance(folder, RunFolder) else RunFolder.open(folder)
    cfg = folder.read_config()
    records, problems = folder.read_trials()
    if require_results and not records:
        extra = f" ({len(problems)} unreadable result file(s), e.g. {problems[0].path.name}: " \
                f"{problems[0].reason})" if problems else ""
        raise RankbenchError(f"{folder.path}: no trial results yet{extra}")
    methods = [r["name"] for r in cfg.get("rankers", []) if isinstance(r, dict) and "name" in r]
    settings = folder.read_splits()["settings"] if folder.has_splits() else []
    return RunData(folder, cfg, records, problems, methods, settings, folder.read_manifest())


def summary_of(run: RunData) -> pd.DataFrame:
    return summary_frame(trials_frame(run.records), run.methods, run.setting_order)


def status_lines(run: RunData) -> list[str]:
    """What a reader must know before trusting the tables (empty for a complete run)."""
    out = []
    if len(run.records) < run.n_expected:
        out.append(f"**Incomplete run:** {len(run.records)} of {run.n_expected} results "
                   f"(continue it with `--resume {run.folder.path}`).")
    for p in run.problems:
        out.append(f"**Unusable result file** `{p.path.name}` ({p.reason}); it is left out here and "
                   "recomputed by `--resume`.")
    return out


def build_report(folder: RunFolder | str, plots: bool = True) -> dict:
    """Write trials.csv, summary.csv, summary.md (with the check table) and plots/."""
    run = load_run(folder)
    trials = trials_frame(run.records)
    summary = summary_frame(trials, run.methods, run.setting_order)
    run.folder.write_text("trials.csv", trials.to_csv(index=False))
    run.folder.write_text("summary.csv", summary.to_csv(index=False))
    md = summary_markdown(summary, run.name, run.methods, run.setting_order,
                          description=run.config.get("description", ""), status=status_lines(run))
    expected = run.config.get("expected") or []
    if expected:
        md += "\n## Published numbers\n\n" + check_markdown(grade_rows(summary, expected)) + "\n"
    claims = run.config.get("claims") or []
    if claims:
        rows = grade_claims(_claim_dicts(claims), summary, run.records, run.setting_order)
        md += "\n## Claims\n\n" + claims_markdown(rows) + "\n"
    plot_paths = []
    if plots:
        plot_paths = make_plots(run, summary)
        pngs = [p for p in plot_paths if p.suffix == ".png"]
        if pngs:
            md += "\n## Plots\n\n" + "\n".join(f"![{p.stem}](plots/{p.name})" for p in pngs) + "\n"
    run.folder.write_text("summary.md", md)
    return {"summary": summary, "plots": plot_paths, "markdown": md, "run": run}


def _claim_dicts(claims: list[dict]) -> list[dict]:
    """Claims as stored in config.yaml, with ``from`` spelt as the field name ``from_``."""
    return [{("from_" if k == "from" else k): v for k, v in c.items()} for c in claims if isinstance(c, dict)]

"""REPORT.md and REPORT.html across runs: per paper, a verdict, our numbers beside the published
ones, the claims, and per run what reproduces it, its tables and its figures."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..utils.fileio import atomic_write_text
from .build import Report, build_report, status_said
from .check import Grade, grade_counts, legend, totals_line
from .html import page, verdict


@dataclass
class Collected:
    """What ``collect`` wrote and how the published numbers came out."""

    markdown: Path
    html: Path
    n_runs: int
    #: graded numbers and claims that fail ``check`` (FAIL, MISSING)
    n_fail: int
    counts: dict[str, int]
    #: what a reader must know of each run before its numbers (:func:`status_said`)
    said: list[str]


def paper_of(run) -> str:
    """The paper a run belongs to: the folder of its config (``configs/prosser/x.yaml`` -> prosser)."""
    cfg_path = run.manifest.config_path if run.manifest else ""
    parent = Path(cfg_path).parent.name if cfg_path else ""
    return parent if parent and parent != "configs" else "other"


def _provenance_md(prov: dict[str, Any]) -> list[str]:
    commit = (f"`{prov['commit'][:12]}`" + (" (with local changes)" if prov["dirty"] else "")) if prov["commit"] \
        else "unknown"
    out = [f"- config `{prov['config'] or 'unknown'}`" + (f" with `{' '.join('--set ' + o for o in prov['overrides'])}`"
                                                        if prov["overrides"] else "") + f", commit {commit}"]
    if prov["command"]:
        out.append(f"- command: `{prov['command']}`")
    out.append(f"- rerun exactly: `{prov['rerun']}`")
    return out


def write_collected(run_dirs: list[Path], out: Path) -> Collected:
    """Rebuild each run's report, then write ``out`` (Markdown) and ``out`` with ``.html``."""
    papers: dict[str, list[Report]] = {}
    for rd in run_dirs:
        built = build_report(rd, plots=True)
        papers.setdefault(paper_of(built.run), []).append(built)
    numbers = [r for bs in papers.values() for b in bs for r in b.grades]
    claims = [r for bs in papers.values() for b in bs for r in b.claims]
    totals = grade_counts(numbers + claims)
    n_fail = sum(Grade(r["grade"]).fails for r in numbers + claims)
    html_path = out.with_suffix(".html")
    lines = ["# rankbench reproduction report", "",
             f"Grades: {legend()} The same report with figures inline: [{html_path.name}]({html_path.name}).", "",
             totals_line(numbers, claims), ""]
    for paper in sorted(papers):
        builts = papers[paper]
        _, sentence = verdict([r for b in builts for r in b.grades], [c for b in builts for c in b.claims],
                              sum(not b.run.complete for b in builts))
        lines += [f"## {paper}", "", f"**Verdict:** {sentence}", ""]
        for built in builts:
            run = built.run
            rel = Path(os.path.relpath(run.folder.path, out.parent)).as_posix()
            body = built.markdown.split("\n", 1)[1]  # drop the run's own title
            body = body.replace("](plots/", f"]({rel}/plots/")
            body = body.replace("\n## ", "\n#### ").replace("\n### ", "\n#### ")
            lines += [f"### {run.name}", "", f"run: `{rel}`", ""] + _provenance_md(run.provenance()) + [body]
    atomic_write_text(out, "\n".join(lines) + "\n")
    atomic_write_text(html_path, page(papers, html_path))
    said = [line for bs in papers.values() for b in bs for line in status_said(b.run)]
    return Collected(out, html_path, sum(len(b) for b in papers.values()), n_fail, totals, said)

"""REPORT.md across runs: one section per paper, our numbers beside the published ones, plots."""

from __future__ import annotations

import os
from pathlib import Path

from ..utils.fileio import atomic_write_text
from .build import build_report
from .check import grade_counts, grade_rows


def _paper(run) -> str:
    cfg_path = run.manifest.get("config_path", "") or ""
    parent = Path(cfg_path).parent.name if cfg_path else ""
    return parent if parent and parent != "configs" else "other"


def write_collected(run_dirs: list[Path], out: Path) -> tuple[Path, int]:
    sections: dict[str, list[str]] = {}
    n_fail = 0
    totals: dict[str, int] = {}
    for rd in run_dirs:
        built = build_report(rd, plots=True)
        run = built["run"]
        cfg = run.config
        rows = grade_rows(built["summary"], cfg.get("expected") or [])
        n_fail += sum(r["grade"] == "FAIL" for r in rows)
        for k, v in grade_counts(rows).items():
            totals[k] = totals.get(k, 0) + v
        rel = Path(os.path.relpath(rd, out.parent))
        body = built["markdown"].split("\n", 1)[1]  # drop the run's own title
        body = body.replace("](plots/", f"]({rel.as_posix()}/plots/")
        body = body.replace("\n## ", "\n#### ").replace("\n### ", "\n#### ")
        sections.setdefault(_paper(run), []).append(f"### {cfg.get('name', rd.name)}\n\nrun: `{rd}`\n{body}")
    lines = ["# rankbench reproduction report", "",
             "Grades: OK = within the stated tolerance of the published number, OKISH = within 1.5x, "
             "FAIL = beyond; GAP = a documented known mismatch (its reason is in the note); "
             "PUBLISHED = a published row we do not run.", "",
             "Totals: " + (", ".join(f"{v} {k}" for k, v in sorted(totals.items())) or "no published numbers"), ""]
    for paper in sorted(sections):
        lines += [f"## {paper}", ""] + sections[paper]
    atomic_write_text(out, "\n".join(lines) + "\n")
    return out, n_fail

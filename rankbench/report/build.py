"""Rebuild a run folder's tables, plots and check from its per-trial result files."""

from __future__ import annotations

import datetime as _dt
import json
import platform
import subprocess
import sys
from pathlib import Path

import yaml

from .. import __version__
from ..engine.store import atomic_write_json, atomic_write_text, read_trials
from ..errors import RankbenchError
from .check import check_markdown, grade_rows
from .plots import make_plots
from .tables import summary_frame, summary_markdown, trials_frame


def load_run(run_dir: Path):
    run_dir = Path(run_dir)
    cfg_path = run_dir / "config.yaml"
    if not cfg_path.is_file():
        raise RankbenchError(f"{run_dir}: not a run folder (no config.yaml)")
    cfg = yaml.safe_load(cfg_path.read_text()) or {}
    records = read_trials(run_dir)
    if not records:
        raise RankbenchError(f"{run_dir}: no trial results yet (trials/ is empty)")
    methods = [r["name"] for r in cfg.get("rankers", [])]
    return cfg, records, methods


def build_report(run_dir: Path, plots: bool = True) -> dict:
    """Write trials.csv, summary.csv, summary.md (with the check table) and plots/."""
    run_dir = Path(run_dir)
    cfg, records, methods = load_run(run_dir)
    trials = trials_frame(records).sort_values(["setting", "method", "trial", "metric"], kind="stable")
    summary = summary_frame(trials, methods)
    atomic_write_text(run_dir / "trials.csv", trials.to_csv(index=False))
    atomic_write_text(run_dir / "summary.csv", summary.to_csv(index=False))
    title = cfg.get("name", run_dir.name)
    md = summary_markdown(summary, title, methods)
    if cfg.get("description"):
        md = md.replace("\n", f"\n\n{cfg['description']}\n", 1)
    expected = cfg.get("expected") or []
    if expected:
        md += "\n## Published numbers\n\n" + check_markdown(grade_rows(summary, expected)) + "\n"
    plot_paths = []
    if plots:
        plot_paths = make_plots(records, summary, methods, run_dir / "plots", title, expected)
        pngs = [p for p in plot_paths if p.suffix == ".png"]
        if pngs:
            md += "\n## Plots\n\n" + "\n".join(f"![{p.stem}](plots/{p.name})" for p in pngs) + "\n"
    atomic_write_text(run_dir / "summary.md", md)
    return {"summary": summary, "plots": plot_paths, "markdown": md, "config": cfg, "records": records}


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                             cwd=Path(__file__).resolve().parent)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def _versions() -> dict[str, str]:
    from importlib import metadata

    out = {}
    for pkg in ("numpy", "scipy", "scikit-learn", "scikit-image", "opencv-python-headless",
                "pandas", "matplotlib", "joblib", "pydantic", "click", "pyyaml"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return out


def write_manifest(run_dir: Path, started: _dt.datetime, ended: _dt.datetime, config_path: str = "",
                   records: list[dict] | None = None) -> None:
    records = read_trials(run_dir) if records is None else records
    wall: dict[str, float] = {}
    for r in records:
        wall[r["method"]] = wall.get(r["method"], 0.0) + r.get("wall_s", 0.0)
    manifest = {
        "rankbench_version": __version__,
        "git_commit": _git_commit(),
        "python": sys.version.split()[0],
        "packages": _versions(),
        "machine": {"platform": platform.platform(), "processor": platform.machine(),
                    "cpus": __import__("os").cpu_count()},
        "start": started.isoformat(timespec="seconds"),
        "end": ended.isoformat(timespec="seconds"),
        "wall_s_per_method": {k: round(v, 3) for k, v in wall.items()},
        "n_results": len(records),
        "config_path": str(config_path),
    }
    prev = run_dir / "manifest.json"
    if prev.is_file():  # a resumed run keeps its first start time
        try:
            manifest["start"] = json.loads(prev.read_text()).get("start", manifest["start"])
        except ValueError:
            pass
    atomic_write_json(prev, manifest)

"""Merler et al.'s figures 6, 7 and 9 from the run folders of configs/merler/ (PNG + SVG).

* Figure 6 (one file per run with staged curves, ``fig6_<run>``): MAP at depth 100, 500 and full
  depth against ranking time (seconds to rank one concept's test collection, base-model
  evaluations included; mean over concepts and trials), one line per staged method (RankBoost,
  Imbalanced RankBoost, the gradient-boosting peers); a second row against base-model
  evaluations per test item (the machine-independent cost).
* Figure 7 (``fig7_<run>``): average precision per concept at full depth at one ranking time t,
  RankBoost beside Imbalanced RankBoost; t is where their mean MAP curves differ most, as in
  the paper ("the ranking time t = 7 seconds, where the difference between the two algorithms
  is maximum"), unless ``--fig7-time`` is given. A method that has not produced its first ranking
  by t is drawn at its first ranking.
* Figure 9 (``fig9``, from the ``synthetic_fig9_regularizers`` run): Imbalanced RankBoost's MAP
  against ranking time, one panel per regulariser of eq. 8, one line per lambda; RankBoost from the
  first trial of ``synthetic_trecvid`` (the same split and base models) for reference.

Usage: python scripts/merler_figures.py RESULTS_DIR OUT_DIR [--fig7-time SECONDS]
(RESULTS_DIR holds one run folder per config, e.g. results/merler/synthetic_trecvid.)
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rankbench.report.claims import mean_curve  # noqa: E402
from rankbench.runfolder import RunFolder  # noqa: E402

STYLE = {"RankBoost": ("tab:red", "--"), "IRB": ("tab:blue", "-")}
DEPTHS = (("map@100", "MAP@100"), ("map@500", "MAP@500"), ("map", "MAP (full depth)"))


def _records(run: Path) -> list[dict]:
    records, _ = RunFolder.open(run).read_trials()
    return records


def _staged_methods(records: list[dict], setting: str = "") -> list[str]:
    seen = []
    for r in records:
        if r["setting"] == setting and "staged" in (r.get("curves") or {}) and r["method"] not in seen:
            seen.append(r["method"])
    return sorted(seen, key=lambda m: (m not in STYLE, list(STYLE).index(m) if m in STYLE else 0, m))


def _style(method: str, i: int):
    colour, ls = STYLE.get(method, (f"C{2 + i}", ":"))
    return {"color": colour, "linestyle": ls, "linewidth": 1.8 if method in STYLE else 1.2}


def _save(fig, out: Path, stem: str) -> list[Path]:
    paths = []
    for ext in ("png", "svg"):
        p = out / f"{stem}.{ext}"
        fig.savefig(p, dpi=130, bbox_inches="tight")
        paths.append(p)
    return paths


def figure6(run: Path, out: Path) -> list[Path]:
    import matplotlib.pyplot as plt

    records = _records(run)
    methods = _staged_methods(records)
    if not methods:
        return []
    n_trials = len({r["trial"] for r in records})
    fig, axes = plt.subplots(2, 3, figsize=(13, 7.5))
    for col, (y, label) in enumerate(DEPTHS):
        for row, (x, xlabel) in enumerate((("rank_s", "ranking time per concept (s)"),
                                           ("evals", "base-model evaluations per test item"))):
            ax = axes[row, col]
            for i, m in enumerate(methods):
                c = mean_curve(records, m, "staged", x, y)
                if c is not None:
                    ax.plot(c[0], c[1], label=m, **_style(m, i))
            ax.set_xlabel(xlabel)
            ax.set_ylabel(label)
            ax.grid(alpha=0.3)
            if row == 0:
                ax.set_title(label)
    axes[0, 0].legend(fontsize=8, loc="lower right")
    fig.suptitle(f"{run.name}: MAP against ranking cost (mean over concepts and {n_trials} trial(s); "
                 "Merler et al. Fig. 6)", fontsize=11)
    fig.tight_layout()
    paths = _save(fig, out, f"fig6_{run.name}")
    plt.close(fig)
    return paths


def _concept_ap_at(records: list[dict], method: str, t: float) -> dict[str, float]:
    """Mean over trials of each concept's full-depth AP at ranking time t."""
    per: dict[str, list[float]] = {}
    for r in records:
        if r["method"] != method or r["setting"]:
            continue
        for key, c in (r.get("curves") or {}).items():
            if not key.startswith("staged/"):
                continue
            xs, ys = np.asarray(c["rank_s"], float), np.asarray(c["ap"], float)
            per.setdefault(key.split("/", 1)[1], []).append(float(np.interp(t, xs, ys)))
    return {k: float(np.mean(v)) for k, v in per.items()}


def figure7(run: Path, out: Path, t: float | None) -> list[Path]:
    import matplotlib.pyplot as plt

    records = _records(run)
    a = mean_curve(records, "RankBoost", "staged", "rank_s", "map")
    b = mean_curve(records, "IRB", "staged", "rank_s", "map")
    if a is None or b is None:
        return []
    if t is None:
        grid = np.unique(np.concatenate([a[0], b[0]]))
        grid = grid[(grid >= max(a[0][0], b[0][0])) & (grid <= min(a[0][-1], b[0][-1]))]
        gap = np.abs(np.interp(grid, *b) - np.interp(grid, *a))
        t = float(grid[int(np.argmax(gap))]) if len(grid) else float(min(a[0][-1], b[0][-1]))
    rb, irb = _concept_ap_at(records, "RankBoost", t), _concept_ap_at(records, "IRB", t)
    concepts = sorted(set(rb) & set(irb), key=str.lower)
    if not concepts:
        return []
    x = np.arange(len(concepts))
    fig, ax = plt.subplots(figsize=(max(7, 0.55 * len(concepts) + 2), 4.2))
    ax.bar(x - 0.2, [rb[c] for c in concepts], 0.4, label="RankBoost", color="tab:red")
    ax.bar(x + 0.2, [irb[c] for c in concepts], 0.4, label="IRB", color="tab:blue")
    ax.set_xticks(x, concepts, rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("average precision (full depth)")
    better = sum(irb[c] >= rb[c] - 1e-12 for c in concepts)
    ax.set_title(f"{run.name}: AP per concept at ranking time t = {t:.3g} s; IRB better or equal on "
                 f"{better} of {len(concepts)} (Merler et al. Fig. 7)", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    paths = _save(fig, out, f"fig7_{run.name}")
    plt.close(fig)
    return paths


def figure9(fig9_run: Path, reference: Path | None, out: Path) -> list[Path]:
    import matplotlib.pyplot as plt

    records = _records(fig9_run)
    settings = sorted({r["setting"] for r in records})
    parsed = {}
    for s in settings:
        reg = re.search(r"regularizer=([a-z_]+)", s)
        lam = re.search(r"lam=([0-9.eE+-]+)", s)
        if reg and lam:
            parsed[s] = (reg.group(1), float(lam.group(1)))
    regs = sorted({v[0] for v in parsed.values()})
    if not regs:
        return []
    ref = None
    if reference is not None and reference.is_dir():
        ref_records = [r for r in _records(reference) if r["trial"] == 0]
        ref = mean_curve(ref_records, "RankBoost", "staged", "rank_s", "map")
    fig, axes = plt.subplots(1, len(regs), figsize=(4.6 * len(regs), 3.9), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, reg in zip(axes, regs):
        for i, (s, (rg, lam)) in enumerate(sorted(((s, v) for s, v in parsed.items() if v[0] == reg),
                                                  key=lambda kv: kv[1][1])):
            c = mean_curve(records, "IRB", "staged", "rank_s", "map", setting=s)
            if c is not None:
                ax.plot(c[0], c[1], label=f"IRB, lambda = {lam:.0e}", color=f"C{i}")
        if ref is not None:
            ax.plot(ref[0], ref[1], label="RankBoost", color="tab:red", linestyle="--")
        ax.set_title(f"regulariser: {reg}", fontsize=10)
        ax.set_xlabel("ranking time per concept (s)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("MAP (full depth)")
    axes[0].legend(fontsize=8, loc="lower right")
    fig.suptitle("Imbalanced RankBoost: regulariser x lambda (Merler et al. Fig. 9)", fontsize=11)
    fig.tight_layout()
    paths = _save(fig, out, "fig9")
    plt.close(fig)
    return paths


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path, help="folder holding one run folder per merler config")
    ap.add_argument("out", type=Path)
    ap.add_argument("--fig7-time", type=float, default=None, help="ranking time of Figure 7 (default: max gap)")
    args = ap.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    args.out.mkdir(parents=True, exist_ok=True)
    written = []
    for run in sorted(p for p in args.results.iterdir() if (p / "trials").is_dir()):
        if run.name == "synthetic_fig9_regularizers":
            written += figure9(run, args.results / "synthetic_trecvid", args.out)
            continue
        written += figure6(run, args.out)
        written += figure7(run, args.out, args.fig7_time)
    for p in written:
        print(p)
    if not written:
        print(f"no run folders with staged curves under {args.results}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

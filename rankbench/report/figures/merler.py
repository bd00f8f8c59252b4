"""Merler et al.'s figures 6, 7 and 9, and the lambda trade-off, from the run folders of configs/merler/.

* Figure 6 (one file per run with staged curves, ``fig6_<run>``): MAP at depth 100, 500 and full
  depth against ranking time (seconds to rank one concept's test collection, base-model
  evaluations included; mean over concepts and trials; top row) and against base-model evaluations
  per test item (the machine-independent cost; bottom row), one line per staged method. Colour
  names the algorithm (RankBoost red, Imbalanced RankBoost blue, the gradient-boosting peers
  green / purple), line style the reading of the weak rankers' range (solid: outputs in [-1, 1],
  the paper's experiments; dashed: (o + 1) / 2 in [0, 1], its Figures 2-3), read from each
  method's ``weak_range`` in the run's config.yaml: both readings side by side on one figure.
* Figure 7 (``fig7_<run>``): average precision per concept at full depth at one ranking time t,
  RankBoost beside Imbalanced RankBoost; t is where their mean MAP curves differ most, as in
  the paper ("the ranking time t = 7 seconds, where the difference between the two algorithms
  is maximum"), unless ``--fig7-time`` is given. A method that has not produced its first ranking
  by t is drawn at its first ranking.
* Figure 9 (``fig9``, from the ``synthetic_fig9_regularizers`` run): Imbalanced RankBoost's MAP
  against base-model evaluations, one panel per regulariser of eq. 8, one line per lambda; RankBoost
  from the first trial of ``synthetic_trecvid`` (the same split and base models) for reference.
* The lambda trade-off (``lambda_<run>``, from each ``<name>_lambda`` run): Imbalanced RankBoost's
  staged MAP against evaluations for each lambda (left), and its final MAP at depth 100 and full
  depth against its final evaluations per item, one point per lambda (right); RankBoost's from the
  ``<name>`` run (the same splits and base models) for reference.

Runs are recognised by their config's name, methods by their display names (RankBoost, IRB: a
figure whose method a run lacks is not drawn, with a warning); each figure is written as PNG, SVG
and PDF (:func:`rankbench.report.plots.style.save`). RankBoost's reference beside Figure 9 or a lambda
trade-off is left out, with a warning naming both runs, when its run recorded other data or splits.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from ...runfolder import TrialRecord
from ..build import RunData
from ..claims import mean_curve
from ..compare import dataset_difference, split_key
from ..plots.style import pyplot, save

COLOURS = {"bipartite_rankboost": "tab:red", "imbalanced_rankboost": "tab:blue", "lgbm_lambdarank": "tab:green",
           "xgb_pairwise": "tab:purple"}
ORDER = ("bipartite_rankboost", "imbalanced_rankboost")
DEPTHS = (("map@100", "MAP@100"), ("map@500", "MAP@500"), ("map", "MAP (full depth)"))
COSTS = (("rank_s", "ranking time per concept (s)"), ("evals", "base-model evaluations per test item"))

log = logging.getLogger("rankbench.report")


def _rankers(run: RunData) -> dict[str, dict]:
    """Each method's config entry (ranker name and parameters), from the run's config."""
    return {r["name"]: r for r in run.config.get("rankers", []) if isinstance(r, dict) and "name" in r}


def _lacks(run: RunData, figure: str, methods: tuple[str, ...]) -> bool:
    """Whether ``run`` lacks a method ``figure`` needs (by display name); a warning names them."""
    missing = [m for m in methods if m not in run.methods]
    if missing:
        log.warning("%s: %s needs the method(s) %s; the run has no %s: not drawn", run.folder.path, figure,
                    ", ".join(methods), ", ".join(missing))
    return bool(missing)


def _staged_methods(records: list[TrialRecord], entries: dict[str, dict], setting: str = "") -> list[str]:
    seen = []
    for r in records:
        if r.setting == setting and "staged" in r.curves and r.method not in seen:
            seen.append(r.method)

    def key(m):
        e = entries.get(m, {})
        algo = e.get("ranker", "")
        return (ORDER.index(algo) if algo in ORDER else len(ORDER), e.get("weak_range") == "unit", m)
    return sorted(seen, key=key)


def _style(method: str, entries: dict[str, dict], i: int) -> dict:
    e = entries.get(method, {})
    paper_algo = e.get("ranker") in ORDER
    return {"color": COLOURS.get(e.get("ranker"), f"C{4 + i}"),
            "linestyle": "--" if e.get("weak_range") == "unit" else "-",
            "linewidth": 1.9 if paper_algo else 1.2}


def figure6(run: RunData, out: Path) -> list[Path]:
    plt = pyplot()
    records = run.records
    entries = _rankers(run)
    methods = _staged_methods(records, entries)
    if not methods:
        return []
    n_trials = len({r.trial for r in records})
    fig, axes = plt.subplots(2, 3, figsize=(13, 7.5))
    for col, (y, label) in enumerate(DEPTHS):
        for row, (x, xlabel) in enumerate(COSTS):
            ax = axes[row, col]
            for i, m in enumerate(methods):
                c = mean_curve(records, m, "staged", x, y)
                if c is not None:
                    ax.plot(c[0], 100 * c[1], label=m, **_style(m, entries, i))
            ax.set_xscale("log")
            ax.set_xlabel(xlabel)
            ax.set_ylabel(f"{label} (%)")
            ax.grid(alpha=0.3, which="both")
            if row == 0:
                ax.set_title(label)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 6), fontsize=9, frameon=False)
    fig.suptitle(f"{run.name}: MAP against ranking cost (mean over concepts and {n_trials} trial(s); "
                 "Merler et al. Fig. 6; solid: outputs in [-1, 1], dashed: in [0, 1])", fontsize=11)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return save(fig, out, f"fig6_{run.name}")


def _concept_ap_at(records: list[TrialRecord], method: str, t: float) -> dict[str, float]:
    """Mean over trials of each concept's full-depth AP at ranking time t."""
    per: dict[str, list[float]] = {}
    for r in records:
        if r.method != method or r.setting:
            continue
        for key, c in r.curves.items():
            if not key.startswith("staged/"):
                continue
            xs, ys = np.asarray(c["rank_s"], float), np.asarray(c["ap"], float)
            per.setdefault(key.split("/", 1)[1], []).append(float(np.interp(t, xs, ys)))
    return {k: float(np.mean(v)) for k, v in per.items()}


def figure7(run: RunData, out: Path, t: float | None) -> list[Path]:
    plt = pyplot()
    if _lacks(run, "Figure 7", ("RankBoost", "IRB")):
        return []
    records = run.records
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
    return save(fig, out, f"fig7_{run.name}")


def _lambda_settings(run: RunData) -> dict[str, tuple[str | None, float]]:
    """{setting label: (regulariser or None, lambda)} of a run sweeping IRB's ``lam`` (and maybe its
    ``regularizer``), from the settings' typed values in splits.json."""
    parsed = {}
    for label, values in run.setting_values().items():
        lam = [v for k, v in values.items() if k.endswith(".lam")]
        reg = [v for k, v in values.items() if k.endswith(".regularizer")]
        if lam:
            parsed[label] = (reg[0] if reg else None, float(lam[0]))
    return parsed


def _unlike(run: RunData, reference: RunData) -> str | None:
    """Why ``reference``'s RankBoost is not on the data and the recorded split (rows, seeds, base
    models' seed) of every trial of ``run``, or None."""
    if "RankBoost" not in reference.methods:
        return "it has no RankBoost"
    ref = reference.splits_of("")
    for st in run.settings:
        differ = ", ".join(str(t.trial) for t in st.trials if split_key(t) != split_key(ref.get(t.trial)))
        why = dataset_difference(run, reference, st.label, "")
        if why or differ:
            return why or f"its splits of trial(s) {differ} differ from the run's or are missing"
    return None


def _same_splits(run: RunData, reference: RunData | None, figure: str) -> RunData | None:
    """``reference`` when its RankBoost ran on ``run``'s data and splits, else None (a warning names
    both runs and what differs)."""
    why = _unlike(run, reference) if reference is not None else None
    if why:
        log.warning("%s: %s leaves out RankBoost of %s for reference: %s", run.folder.path, figure,
                    reference.folder.path, why)
    return None if why else reference


def _reference_records(reference: RunData | None, trials: set[int]) -> list[TrialRecord]:
    """RankBoost's records in a reference run, on the given trials only (the same splits)."""
    if reference is None:
        return []
    return [r for r in reference.records if r.method == "RankBoost" and r.trial in trials]


def _reference(reference: RunData | None, trials: set[int]):
    """RankBoost's staged MAP against evaluations in a reference run, on the given trials."""
    recs = _reference_records(reference, trials)
    return mean_curve(recs, "RankBoost", "staged", "evals", "map") if recs else None


def figure9(fig9_run: RunData, reference: RunData | None, out: Path) -> list[Path]:
    plt = pyplot()
    records = fig9_run.records
    parsed = _lambda_settings(fig9_run)
    regs = sorted({v[0] for v in parsed.values() if v[0]})
    if not regs or _lacks(fig9_run, "Figure 9", ("IRB",)):
        return []
    reference = _same_splits(fig9_run, reference, "Figure 9")
    ref = _reference(reference, {r.trial for r in records})
    fig, axes = plt.subplots(1, len(regs), figsize=(4.6 * len(regs), 4.2), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, reg in zip(axes, regs):
        for i, (s, (rg, lam)) in enumerate(sorted(((s, v) for s, v in parsed.items() if v[0] == reg),
                                                  key=lambda kv: kv[1][1])):
            c = mean_curve(records, "IRB", "staged", "evals", "map", setting=s)
            if c is not None:
                ax.plot(c[0], 100 * c[1], label=f"IRB, lambda = {lam:.0e}", color=plt.cm.viridis(i / 4))
        if ref is not None:
            ax.plot(ref[0], 100 * ref[1], label="RankBoost", color="tab:red", linestyle="--")
        ax.set_xscale("log")
        ax.set_title(f"regulariser: {reg}", fontsize=10)
        ax.set_xlabel("base-model evaluations per test item")
        ax.grid(alpha=0.3, which="both")
    axes[0].set_ylabel("MAP, full depth (%)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 6), fontsize=9, frameon=False)
    fig.suptitle("Imbalanced RankBoost: regulariser x lambda (Merler et al. Fig. 9)", fontsize=11)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return save(fig, out, "fig9")


def figure_lambda(run: RunData, reference: RunData | None, out: Path) -> list[Path]:
    """IRB's MAP / cost trade-off over lambda (module docstring)."""
    plt = pyplot()
    records = run.records
    parsed = _lambda_settings(run)
    if not parsed or _lacks(run, "The lambda trade-off", ("IRB",)):
        return []
    reference = _same_splits(run, reference, "The lambda trade-off")
    lams = sorted(parsed.items(), key=lambda kv: kv[1][1])
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.4))
    trials = {r.trial for r in records}
    ref = _reference(reference, trials)
    for i, (s, (_, lam)) in enumerate(lams):
        c = mean_curve(records, "IRB", "staged", "evals", "map", setting=s)
        if c is not None:
            left.plot(c[0], 100 * c[1], color=plt.cm.viridis(i / max(len(lams) - 1, 1)), label=f"IRB, lambda = {lam:g}")
    if ref is not None:
        left.plot(ref[0], 100 * ref[1], color="tab:red", linestyle="--", label="RankBoost")
    left.set_xscale("log")
    left.set_xlabel("base-model evaluations per test item")
    left.set_ylabel("MAP, full depth (%)")
    left.grid(alpha=0.3, which="both")
    left.legend(fontsize=8, loc="lower right")
    for y, marker in (("map@100", "s"), ("map", "o")):
        pts = []
        for s, (_, lam) in lams:
            ev = [r.metrics["evals"] for r in records if r.setting == s and r.method == "IRB"]
            mp = [r.metrics[y] for r in records if r.setting == s and r.method == "IRB"]
            if ev:
                pts.append((lam, np.mean(ev), 100 * np.mean(mp)))
        if pts:
            lam_v, ev_v, mp_v = map(np.array, zip(*pts))
            right.plot(ev_v, mp_v, marker=marker, color="tab:blue", label=f"IRB final {y}")
            for l, e, m in pts:
                right.annotate(f"{l:g}", (e, m), textcoords="offset points", xytext=(4, 4), fontsize=7)
    rb = _reference_records(reference, trials)
    for y, marker in (("map@100", "s"), ("map", "o")) if rb else ():
        right.plot([np.mean([r.metrics["evals"] for r in rb])], [100 * np.mean([r.metrics[y] for r in rb])],
                   marker=marker, color="tab:red", linestyle="none", label=f"RankBoost final {y}")
    right.set_xscale("log")
    right.set_xlabel("base-model evaluations per test item (final model)")
    right.set_ylabel("MAP (%)")
    right.grid(alpha=0.3, which="both")
    right.legend(fontsize=8, loc="lower right")
    fig.suptitle(f"{run.name}: Imbalanced RankBoost's MAP / cost trade-off over lambda (labels: lambda; "
                 f"{len(trials)} trial(s){', RankBoost on the same' if rb else ''})", fontsize=11)
    fig.tight_layout()
    return save(fig, out, f"lambda_{run.name}")


def draw(runs: list[RunData], out: Path, refit=None, fig7_time: float | None = None) -> list[Path]:
    """Every figure the merler runs allow: Figure 9 from ``synthetic_fig9_regularizers`` (RankBoost
    from ``synthetic_trecvid``, if given), the lambda trade-off from each ``<name>_lambda`` run
    (RankBoost from ``<name>``, if given), Figures 6 and 7 from every other run with staged curves.
    ``fig7_time``: Figure 7's ranking time (default: where the mean MAP curves differ most)."""
    by_name = {run.name: run for run in runs}
    written = []
    for run in sorted(runs, key=lambda r: r.name):
        if run.name == "synthetic_fig9_regularizers":
            written += figure9(run, by_name.get("synthetic_trecvid"), out)
        elif run.name.endswith("_lambda"):
            written += figure_lambda(run, by_name.get(run.name[: -len("_lambda")]), out)
        else:
            written += figure6(run, out)
            written += figure7(run, out, fig7_time)
    return written

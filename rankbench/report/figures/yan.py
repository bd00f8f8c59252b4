"""Yan et al.'s Figure 3 (decision boundaries on the two spirals) and Figure 6 (error rate against
the number of constraints) from the run folders of ``configs/yan/``.

* ``figure3_spirals``: the spirals with trial 0's labelled points and constraint pairs, and the
  decision boundaries of every method of the ``spirals`` run side by side, each refitted on that
  recorded split with the run's own parameters (a run folder keeps numbers, not models), titled
  with the recorded error rate of that trial and the mean over trials.
* ``figure6``: (a)/(c) PKLR with temporal, active and both kinds of constraints; (b)/(d) PKLR, PKLR
  with positive constraints only, RCA+KLR and KLR; error rate (%) of the test images against the
  number of constraints as the paper counts them, pairs of sequences (the trials' ``n_pairs``, mean
  over trials, for each K constrained sequences), mean +- standard deviation (ddof 1) over the
  trials; the dashed line is KLR with the per-sequence majority vote (the paper's baseline; left
  out, with a warning, when the run has no KLR at K = 0).
* ``figure6.md``: the numbers behind every curve, mean +- std per K, with the pairs.

Runs are recognised by their config's name: ``spirals`` and the four Town Centre panels
``towncentre6_types``, ``towncentre6_methods``, ``towncentre5_types``, ``towncentre5_methods`` (a
missing panel is left blank).
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from ..build import RunData
from ..plots.style import pyplot, save
from ...utils.fileio import atomic_write_text

log = logging.getLogger("rankbench.report")
PANELS = [("towncentre6_types", "(a) 6 people: constraint types", "strategy"),
          ("towncentre6_methods", "(b) 6 people: methods (both kinds)", "method"),
          ("towncentre5_types", "(c) 5 people: constraint types", "strategy"),
          ("towncentre5_methods", "(d) 5 people: methods (both kinds)", "method")]


def records(run: RunData) -> pd.DataFrame:
    """One row per finished (setting, trial, method) with the setting's swept values as columns."""
    values = run.setting_values()
    rows = []
    for r in run.records:
        v = {k.split(".")[-1]: x for k, x in values.get(r.setting, {}).items()}
        rows.append({"setting": r.setting, "trial": r.trial, "method": r.method, **v, **r.metrics,
                     "n_pairs": r.extra.get("n_pairs", np.nan)})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- Figure 3
def figure3(run: RunData, out: Path, refit) -> list[Path]:
    plt = pyplot()
    split = run.splits_of("")[0]
    fitted = {m: refit(run, "", 0, m) for m in run.methods}
    first = next(iter(fitted.values()))
    X = np.asarray(first.X)
    y = first.dataset.column((run.config.get("protocol") or {}).get("label", "label"))
    recs = records(run)
    train, C = np.array(split.train), np.array(split.constraints).reshape(-1, 3)
    pad = 0.5
    gx, gy = np.meshgrid(np.linspace(X[:, 0].min() - pad, X[:, 0].max() + pad, 300),
                         np.linspace(X[:, 1].min() - pad, X[:, 1].max() + pad, 300))
    grid = np.c_[gx.ravel(), gy.ravel()]
    fig, axes = plt.subplots(1, 1 + len(run.methods), figsize=(4.2 * (1 + len(run.methods)), 4.4))

    def scatter(ax):
        for c, marker, colour in zip(np.unique(y), ("o", "x"), ("tab:blue", "tab:orange")):
            k = y == c
            ax.scatter(X[k, 0], X[k, 1], s=8, marker=marker, c=colour, alpha=0.35, linewidths=0.8)
            kt = np.intersect1d(np.flatnonzero(k), train)
            ax.scatter(X[kt, 0], X[kt, 1], s=24, marker=marker, c=colour, edgecolors="k" if marker == "o" else None,
                       linewidths=1.2)
        for n, (i, j, _) in enumerate(C, 1):
            ax.plot(X[[i, j], 0], X[[i, j], 1], "-", c="tab:red", lw=1)
            for e in (i, j):
                ax.annotate(str(n), X[e], color="tab:red", fontsize=9, fontweight="bold",
                            bbox={"boxstyle": "square,pad=0.1", "fc": "w", "ec": "tab:red"})
        ax.set_xticks([]), ax.set_yticks([])

    scatter(axes[0])
    axes[0].set_title(f"(a) two spirals: o / x classes, labelled points bold, {len(C)} constraint pairs (red)",
                      fontsize=9)
    for ax, method, letter in zip(axes[1:], run.methods, "bcdefg"):
        F = np.asarray(fitted[method].model.decision_function(grid)).reshape(gx.shape)
        ax.contourf(gx, gy, F > 0, levels=[-0.5, 0.5, 1.5], colors=["#dde8f6", "#fbe7d6"])
        ax.contour(gx, gy, F, levels=[0.0], colors="k", linewidths=1.2)
        scatter(ax)
        mine = recs[recs.method == method]
        e0 = mine.loc[mine.trial == 0, "error_rate"].iloc[0]
        ax.set_title(f"({letter}) {method}: error {100 * e0:.1f} % (trial 0), "
                     f"{100 * mine.error_rate.mean():.1f} % (mean of {len(mine)})", fontsize=9)
    fig.tight_layout()
    return save(fig, out, "figure3_spirals")


# ----------------------------------------------------------------------------- Figure 6
def curves(df: pd.DataFrame, by: str) -> pd.DataFrame:
    """Mean and std (ddof 1) of error_rate and vote_error_rate per series and K."""
    key = "strategy" if by == "strategy" else "method"
    g = df.groupby([key, "n_constraints"])
    out = g[["error_rate", "vote_error_rate"]].agg(["mean", "std", "count"])
    out.columns = [f"{a}_{b}" for a, b in out.columns]
    out["pairs"] = g["n_pairs"].mean()
    return out.reset_index().rename(columns={key: "series"})


def _percent(mean: float, std: float) -> str:
    """``12.3 +- 4.5`` in %; the mean alone where the std is not defined (a single trial)."""
    return f"{100 * mean:.1f}" + ("" if np.isnan(std) else f" +- {100 * std:.1f}")


def figure6(panels: dict[str, RunData], out: Path) -> list[Path]:
    plt = pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(11, 8.5))
    lines = ["# Yan et al. Figure 6 on Town Centre: error rate (%) of the test images, mean +- std over trials",
             ""]
    for ax, (name, title, by) in zip(axes.ravel(), PANELS):
        run = panels.get(name)
        if run is None:
            ax.set_visible(False)
            continue
        df = records(run)
        missing = [k for k in ["n_constraints"] + (["strategy"] if by == "strategy" else []) if k not in df]
        if missing:
            log.warning("%s: Figure 6's panel %s needs the run to sweep %s; left blank", run.folder.path,
                        title.split()[0], " and ".join(f"protocol.{k}" for k in missing))
            ax.set_visible(False)
            continue
        cv = curves(df, by)
        klr = "KLR" if by == "method" else "PKLR"
        base = df[(df.n_constraints == 0) & (df.method == klr)]
        base = base.drop_duplicates("trial")  # K = 0 is the same KLR under every strategy
        if base.empty:
            log.warning("%s: Figure 6's panel %s has no %s at K = 0: its baseline, KLR with the per-sequence "
                        "majority vote, is left out", run.folder.path, title.split()[0], klr)
        for series, c in cv.groupby("series", sort=False):
            x = c.pairs.where(c.pairs.notna(), c.n_constraints)   # pairs of sequences, as the paper counts
            ax.errorbar(x, 100 * c.error_rate_mean, yerr=100 * c.error_rate_std.fillna(0), capsize=3,
                        marker="o", ms=4, label=series)
        if not base.empty:
            ax.axhline(100 * base.vote_error_rate.mean(), ls="--", c="0.4",
                       label=f"KLR + majority vote ({100 * base.vote_error_rate.mean():.1f} %)")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("number of constraints (pairs of sequences; mean over trials)")
        ax.set_ylabel("error rate (%)")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        lines += [f"## {title} ({name}, {int(cv.error_rate_count.max())} trials)", "",
                  "K = constrained sequences; each cell: error % mean +- std (constraint pairs)", "",
                  "| K | " + " | ".join(cv.series.unique()) + " |",
                  "|---|" + "---|" * cv.series.nunique()]
        table = cv.pivot(index="n_constraints", columns="series")
        for k in table.index:
            cells = [f"{_percent(table.loc[k, ('error_rate_mean', s)], table.loc[k, ('error_rate_std', s)])} "
                     f"({table.loc[k, ('pairs', s)]:.1f})" for s in cv.series.unique()]
            lines.append(f"| {k} | " + " | ".join(cells) + " |")
        if not base.empty:
            vote = base.vote_error_rate
            lines += ["", f"KLR with the per-sequence majority vote (K = 0): {_percent(vote.mean(), vote.std())} %"]
        lines.append("")
    if not any(ax.get_visible() for ax in axes.ravel()):
        plt.close(fig)
        return []
    fig.tight_layout()
    written = save(fig, out, "figure6")
    atomic_write_text(out / "figure6.md", "\n".join(lines) + "\n")
    return written + [out / "figure6.md"]


def draw(runs: list[RunData], out: Path, refit=None) -> list[Path]:
    """Figure 3 from the ``spirals`` run (needs ``refit``), Figure 6 from the Town Centre panels given."""
    by_name = {run.name: run for run in runs}
    written = []
    if "spirals" in by_name and refit is not None:
        written += figure3(by_name["spirals"], out, refit)
    panels = {name: by_name[name] for name, _, _ in PANELS if name in by_name}
    if panels:
        written += figure6(panels, out)
    return written

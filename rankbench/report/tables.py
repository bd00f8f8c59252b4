"""Per-trial results to tidy tables (``trials.csv``, ``summary.csv``) and readable Markdown."""

from __future__ import annotations

import numpy as np
import pandas as pd

RATE_PREFIXES = ("cmc@", "nauc", "ap@", "ap/", "ap", "map", "pair_acc", "error_rate")
COST = ("train_s", "test_s", "peak_mb")


def is_rate(metric: str) -> bool:
    return metric.split("/")[0].startswith(RATE_PREFIXES)


def trials_frame(records: list[dict]) -> pd.DataFrame:
    rows = [
        {"setting": r["setting"], "trial": r["trial"], "method": r["method"], "metric": m, "value": v}
        for r in records for m, v in r["metrics"].items()
    ]
    return pd.DataFrame(rows, columns=["setting", "trial", "method", "metric", "value"])


def summary_frame(trials: pd.DataFrame, method_order: list[str] | None = None) -> pd.DataFrame:
    """Mean, sample standard deviation (ddof=1, as Matlab's std; 0 for one trial) and count."""
    g = trials.groupby(["setting", "method", "metric"], sort=False)["value"]
    out = g.agg(mean="mean", std=lambda v: float(np.std(v, ddof=1)) if len(v) > 1 else 0.0,
                n_trials="count").reset_index()
    if method_order:
        out["_o"] = out["method"].map({m: i for i, m in enumerate(method_order)})
        out = out.sort_values(["setting", "_o"], kind="stable").drop(columns="_o")
    return out


def fmt_value(metric: str, mean: float, std: float | None = None) -> str:
    if mean is None or (isinstance(mean, float) and np.isnan(mean)):
        return "–"
    if is_rate(metric):
        s = f"{100 * mean:.2f}"
        return s + (f" ± {100 * std:.2f}" if std is not None else "")
    digits = 4 if metric.startswith("mae") else 3 if metric in COST else 4
    s = f"{mean:.{digits}f}"
    return s + (f" ± {std:.{digits}f}" if std is not None else "")


def _ordered_metrics(metrics: list[str]) -> list[str]:
    def key(m: str):
        base = m.split("/")[0]
        if base.startswith("cmc@"):
            return (0, int(base[4:]), m)
        if m in COST:
            return (2, COST.index(m), m)
        return (1, 0, m)
    return sorted(metrics, key=key)


def markdown_table(summary: pd.DataFrame, metrics: list[str], methods: list[str], header: str = "method") -> str:
    lines = ["| " + header + " | " + " | ".join(metrics) + " |",
             "|---" * (len(metrics) + 1) + "|"]
    idx = summary.set_index(["method", "metric"])
    for meth in methods:
        cells = []
        for m in metrics:
            if (meth, m) in idx.index:
                row = idx.loc[(meth, m)]
                cells.append(fmt_value(m, float(row["mean"]), float(row["std"])))
            else:
                cells.append("–")
        lines.append(f"| {meth} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def summary_markdown(summary: pd.DataFrame, title: str, methods: list[str]) -> str:
    """Headline metrics per setting, then per-task tables; rates in %, mean ± std over trials."""
    out = [f"# {title}", "", "Mean ± standard deviation over trials; rates in %, times in seconds, memory in MB.", ""]
    for setting, sub in summary.groupby("setting", sort=False):
        if setting:
            out += [f"## {setting}", ""]
        present = [m for m in methods if m in set(sub["method"])]
        metrics = list(dict.fromkeys(sub["metric"]))
        plain = _ordered_metrics([m for m in metrics if "/" not in m])
        n = int(sub["n_trials"].max())
        out += [f"{n} trial(s).", "", markdown_table(sub, plain, present), ""]
        families = dict.fromkeys(m.split("/")[0] for m in metrics if "/" in m)
        for fam in families:
            tasks = [m for m in metrics if m.startswith(fam + "/")]
            renamed = sub[sub["metric"].isin(tasks)].copy()
            out += [f"### {fam} per task", "",
                    markdown_table(renamed, tasks, present).replace(f"{fam}/", ""), ""]
    return "\n".join(out)

"""Per-trial results to tidy tables (``trials.csv``, ``summary.csv``) and readable Markdown."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..metrics import is_rate, metric_info

COST_ORDER = ("train_s", "test_s", "rank_s", "evals", "peak_mb")


def is_cost(metric: str) -> bool:
    info = metric_info(metric)
    return bool(info and info.cost)


def trials_frame(records: list[dict]) -> pd.DataFrame:
    rows = [
        {"setting": r["setting"], "trial": r["trial"], "method": r["method"], "metric": m, "value": v}
        for r in records for m, v in r["metrics"].items()
    ]
    return pd.DataFrame(rows, columns=["setting", "trial", "method", "metric", "value"])


def summary_frame(trials: pd.DataFrame, method_order: list[str] | None = None,
                  setting_order: list[str] | None = None) -> pd.DataFrame:
    """Mean, sample standard deviation (ddof=1, as Matlab's std; NaN for one trial) and count,
    settings in the run's own order (a sweep's order, never the text order of its labels)."""
    g = trials.groupby(["setting", "method", "metric"], sort=False)["value"]
    out = g.agg(mean="mean", std=lambda v: float(np.std(v, ddof=1)) if len(v) > 1 else float("nan"),
                n_trials="count").reset_index()
    keys = []
    if setting_order:
        rank = {s: i for i, s in enumerate(setting_order)}
        out["_s"] = out["setting"].map(lambda s: rank.get(s, len(rank)))
        keys.append("_s")
    if method_order:
        rank_m = {m: i for i, m in enumerate(method_order)}
        out["_o"] = out["method"].map(lambda m: rank_m.get(m, len(rank_m)))
        keys.append("_o")
    if keys:
        out = out.sort_values(keys, kind="stable").drop(columns=keys).reset_index(drop=True)
    return out


def _digits(metric: str, value: float) -> int:
    if is_rate(metric):
        return 2
    if is_cost(metric):  # seconds and megabytes: three significant figures are plenty
        a = abs(value)
        return 0 if a >= 100 else 1 if a >= 10 else 2 if a >= 0.1 else 3
    return 4


def fmt_value(metric: str, mean: float | None, std: float | None = None) -> str:
    """A value as tables show it: rates in %, costs to sensible precision, ``± std`` when known."""
    if mean is None or (isinstance(mean, float) and np.isnan(mean)):
        return "–"
    k = 100.0 if is_rate(metric) else 1.0
    d = _digits(metric, mean * k)
    s = f"{k * mean:.{d}f}"
    if std is not None and not (isinstance(std, float) and np.isnan(std)):
        s += f" ± {k * std:.{d}f}"
    return s


def _ordered_metrics(metrics: list[str]) -> list[str]:
    def key(m: str):
        base = m.split("/")[0]
        info = metric_info(base)
        if info and info.cost:
            return (2, COST_ORDER.index(base) if base in COST_ORDER else 99, 0, m)
        if "@" in base and base.split("@")[1].isdigit():  # cmc@1, 5, 10 ... in numeric order
            fam, k = base.split("@")
            return (0, fam, int(k), m)
        return (1, base, 0, m)
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


def summary_markdown(summary: pd.DataFrame, title: str, methods: list[str], setting_order: list[str] | None = None,
                     description: str = "", status: list[str] | None = None) -> str:
    """Headline metrics per setting, then per-task tables; rates in %, mean ± std over trials."""
    out = [f"# {title}", ""]
    if description:
        out += [description.strip(), ""]
    for line in status or []:
        out += [line, ""]
    out += ["Mean ± standard deviation over trials; rates in %, times in seconds, memory in MB.", ""]
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

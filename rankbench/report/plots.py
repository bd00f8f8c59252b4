"""Plots made for reading: CMC curves, bars with error bars, per-task bars, sweeps, MAP vs time.

Every figure is written as PNG and SVG. Published numbers from the config's ``expected`` block are
drawn beside ours (black diamonds) where they exist.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..metrics import is_rate
from ..registry import protocols


def headline_metric(protocol_name: str | None, metrics: set[str]) -> str | None:
    """The metric a protocol declares as its headline, if the run has it; else the first rate."""
    try:
        declared = getattr(protocols.get(protocol_name), "headline", None) if protocol_name else None
    except Exception:  # a run of a protocol that is no longer installed: fall back
        declared = None
    if declared in metrics:
        return declared
    rates = sorted(m for m in metrics if "/" not in m and is_rate(m))
    return rates[0] if rates else None


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"figure.dpi": 110, "axes.grid": True, "grid.alpha": 0.3,
                         "axes.spines.top": False, "axes.spines.right": False})
    return plt


def _save(fig, out: Path, stem: str) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext in ("png", "svg"):
        p = out / f"{stem}.{ext}"
        fig.savefig(p, bbox_inches="tight")
        paths.append(p)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return paths


def _slug(s: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in s).strip("_")[:60] or "all"


def _scale(metric: str) -> float:
    return 100.0 if is_rate(metric) else 1.0


def _published(expected: list[dict], setting: str, metric: str) -> dict[str, float]:
    return {e["method"]: e["value"] for e in expected
            if e["metric"] == metric and (e.get("setting") or "") == setting}


def cmc_plot(records: list[dict], methods: list[str], setting: str, out: Path, title: str,
             max_rank: int = 50, expected: list[dict] | None = None) -> list[Path]:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    for m in methods:
        curves = [r["curves"]["cmc"] for r in records
                  if r["method"] == m and r["setting"] == setting and "cmc" in r.get("curves", {})]
        if not curves:
            continue
        n = min(len(c) for c in curves)
        mean = np.mean([c[:n] for c in curves], axis=0)[:max_rank] * 100
        ranks = np.arange(1, len(mean) + 1)
        ax.plot(ranks, mean, marker="o", markersize=2.5, linewidth=1.6,
                label=f"{m} (r1 {mean[0]:.1f}%)")
    for e in expected or []:
        if (e.get("setting") or "") == setting and e["metric"].startswith("cmc@"):
            r = int(e["metric"][4:])
            if r <= max_rank:
                ax.plot([r], [e["value"] * 100], "kD", markersize=4, alpha=0.7)
    if expected:
        ax.plot([], [], "kD", markersize=4, label="published")
    ax.set_xlabel("rank")
    ax.set_ylabel("matching rate (%)")
    ax.set_ylim(0, 100)
    ax.set_xlim(1, max_rank)
    ax.set_title(title)
    ax.legend(fontsize=8, loc="lower right")
    return _save(fig, out, f"cmc_{_slug(setting)}")


def bar_plot(summary: pd.DataFrame, methods: list[str], metric: str, setting: str, out: Path,
             title: str, expected: list[dict]) -> list[Path]:
    plt = _plt()
    sub = summary[(summary["setting"] == setting) & (summary["metric"] == metric)].set_index("method")
    present = [m for m in methods if m in sub.index]
    pub = _published(expected, setting, metric)
    k = _scale(metric)
    fig, ax = plt.subplots(figsize=(max(4.5, 0.9 * len(present) + 2), 4))
    x = np.arange(len(present))
    ax.bar(x, sub.loc[present, "mean"] * k, yerr=sub.loc[present, "std"] * k, capsize=4,
           color="#4C72B0", alpha=0.85, label="ours (mean ± std)")
    px = [i for i, m in enumerate(present) if m in pub]
    if px:
        ax.plot(px, [pub[present[i]] * k for i in px], "kD", label="published")
    ax.set_xticks(x, present, rotation=20, ha="right")
    ax.set_ylabel(metric + (" (%)" if k == 100 else ""))
    ax.set_title(title)
    ax.legend(fontsize=8)
    return _save(fig, out, f"bars_{_slug(metric)}_{_slug(setting)}")


def task_plot(summary: pd.DataFrame, methods: list[str], family: str, setting: str, out: Path,
              title: str, expected: list[dict]) -> list[Path]:
    plt = _plt()
    sub = summary[(summary["setting"] == setting) & summary["metric"].str.startswith(family + "/")]
    tasks = list(dict.fromkeys(sub["metric"]))
    present = [m for m in methods if m in set(sub["method"])]
    k = _scale(family)
    width = 0.8 / max(len(present), 1)
    fig, ax = plt.subplots(figsize=(max(6, 0.75 * len(tasks) * max(1, len(present) / 3) + 2), 4.4))
    idx = sub.set_index(["method", "metric"])
    for j, m in enumerate(present):
        vals = [idx.loc[(m, t), "mean"] * k if (m, t) in idx.index else np.nan for t in tasks]
        errs = [idx.loc[(m, t), "std"] * k if (m, t) in idx.index else 0 for t in tasks]
        xs = np.arange(len(tasks)) + (j - (len(present) - 1) / 2) * width
        ax.bar(xs, vals, width, yerr=errs, capsize=2, label=m)
        pub = [_published(expected, setting, t).get(m) for t in tasks]
        pts = [(x, p * k) for x, p in zip(xs, pub) if p is not None]
        if pts:
            ax.plot(*zip(*pts), "kD", markersize=3)
    if any(_published(expected, setting, t) for t in tasks):
        ax.plot([], [], "kD", markersize=3, label="published")
    ax.set_xticks(np.arange(len(tasks)), [t.split("/", 1)[1] for t in tasks], rotation=30, ha="right")
    ax.set_ylabel(family + (" (%)" if k == 100 else ""))
    vals_all = sub["mean"].to_numpy() * k
    if k == 100 and len(vals_all):
        ax.set_ylim(max(0, np.nanmin(vals_all) - 10), 100)
    ax.set_title(title)
    ax.legend(fontsize=7, ncol=min(4, len(present) + 1))
    return _save(fig, out, f"tasks_{_slug(family)}_{_slug(setting)}")


def sweep_plot(summary: pd.DataFrame, methods: list[str], metric: str, out: Path, title: str,
               expected: list[dict], values: dict[str, dict[str, Any]] | None = None) -> list[Path] | None:
    """Metric against the swept value (one sweep key with numeric values), in value order."""
    settings = [s for s in dict.fromkeys(summary["setting"]) if s]
    parsed = []
    for s in settings:
        v = (values or {}).get(s)
        if v is None:  # a run folder from before typed settings were recorded
            if "," in s or "=" not in s:
                return None
            key, raw = s.split("=", 1)
            v = {key: raw}
        if len(v) != 1:
            return None
        (key, val), = v.items()
        try:
            parsed.append((s, key, float(val)))
        except (TypeError, ValueError):
            return None
    parsed.sort(key=lambda p: p[2])
    if len({p[1] for p in parsed}) != 1:
        return None
    plt = _plt()
    k = _scale(metric)
    fig, ax = plt.subplots(figsize=(6, 4.2))
    sub = summary[summary["metric"] == metric].set_index(["setting", "method"])
    for m in methods:
        pts = [(v, sub.loc[(s, m), "mean"] * k, sub.loc[(s, m), "std"] * k)
               for s, _, v in parsed if (s, m) in sub.index]
        if not pts:
            continue
        xs, ys, es = zip(*pts)
        line = ax.errorbar(xs, ys, yerr=es, marker="o", capsize=3, label=m)
        pub = [(v, _published(expected, s, metric).get(m)) for s, _, v in parsed]
        pub = [(v, p * k) for v, p in pub if p is not None]
        if pub:
            ax.plot(*zip(*pub), linestyle="--", marker="D", color=line[0].get_color(), alpha=0.6,
                    label=f"{m} (published)")
    ax.set_xlabel(parsed[0][1].split(".")[-1])
    ax.set_ylabel(metric + (" (%)" if k == 100 else ""))
    ax.set_title(title)
    ax.legend(fontsize=8)
    return _save(fig, out, f"sweep_{_slug(metric)}")


def time_plot(summary: pd.DataFrame, methods: list[str], metric: str, setting: str, out: Path,
              title: str) -> list[Path]:
    """A quality metric against ranking (test) time, one point per method."""
    plt = _plt()
    sub = summary[summary["setting"] == setting].set_index(["method", "metric"])
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for m in methods:
        if (m, metric) in sub.index and (m, "test_s") in sub.index:
            ax.errorbar(sub.loc[(m, "test_s"), "mean"], sub.loc[(m, metric), "mean"],
                        yerr=sub.loc[(m, metric), "std"], marker="o", capsize=3, label=m)
    ax.set_xlabel("ranking time (s)")
    ax.set_ylabel(metric)
    ax.set_title(title)
    ax.legend(fontsize=8)
    return _save(fig, out, f"time_{_slug(metric)}_{_slug(setting)}")


def _view_weights(record: dict) -> tuple[str, dict[str, dict[str, float]]] | None:
    """(name, {task: {view: weight}}) of the first per-view diagnostic of a record, if any.

    Protocols store a ranker's ``diagnostics_`` under ``extra["diagnostics"]``, per task
    (``{task: {name: value}}``) or for the whole trial (``{name: value}``); a value that maps
    view names to numbers (learned kernel weights) is drawn as shares.
    """
    diag = (record.get("extra") or {}).get("diagnostics") or {}
    per_task = diag if diag and all(isinstance(v, dict) for v in diag.values()) else {"": diag}
    for task, d in per_task.items():
        for name, value in (d or {}).items():
            if isinstance(value, dict) and value and all(isinstance(x, (int, float)) for x in value.values()):
                return name, {t: dd[name] for t, dd in per_task.items() if isinstance((dd or {}).get(name), dict)}
    return None


def kernel_weight_plot(records: list[dict], method: str, setting: str, out: Path,
                       title: str) -> list[Path]:
    """Mean learned per-view weight per task (e.g. a multiple-kernel ranker's), as stacked bars."""
    found = [_view_weights(r) for r in records if r["method"] == method and r["setting"] == setting]
    found = [f for f in found if f]
    if not found:
        return []
    what = found[0][0]
    weights = [w for _, w in found]
    tasks = list(weights[0])
    views = list(dict.fromkeys(v for w in weights for t in tasks for v in w.get(t, {})))
    mean = np.array([[np.mean([w[t].get(v, 0.0) for w in weights if t in w]) for v in views] for t in tasks])
    share = mean / np.where(mean.sum(axis=1, keepdims=True) > 0, mean.sum(axis=1, keepdims=True), 1)
    plt = _plt()
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(tasks) + 2), 4.2))
    bottom = np.zeros(len(tasks))
    for j, v in enumerate(views):
        ax.bar(np.arange(len(tasks)), share[:, j], bottom=bottom, label=v)
        bottom += share[:, j]
    ax.set_xticks(np.arange(len(tasks)), tasks, rotation=30, ha="right")
    ax.set_ylabel("share of kernel weight")
    ax.set_ylim(0, 1)
    ax.set_title(f"{title}: {method} {what.replace('_', ' ')} (mean over {len(weights)} trials)")
    ax.legend(fontsize=8, bbox_to_anchor=(1.01, 1), loc="upper left")
    return _save(fig, out, f"kernel_weights_{_slug(method)}_{_slug(setting)}")


def make_plots(run, summary: pd.DataFrame) -> list[Path]:
    """Every figure a run supports, into ``<run>/plots``."""
    records, methods, title = run.records, run.methods, run.name
    expected: list[dict[str, Any]] = run.config.get("expected") or []
    out = run.folder.path / "plots"
    summary = summary.assign(std=summary["std"].fillna(0.0))  # one trial: no error bar
    paths: list[Path] = []
    settings = list(dict.fromkeys(summary["setting"]))
    metrics = set(summary["metric"])
    headline = headline_metric((run.config.get("protocol") or {}).get("name"), metrics)
    for s in settings:
        label = f"{title}" + (f" [{s}]" if s else "")
        if any("cmc" in r.get("curves", {}) for r in records):
            paths += cmc_plot(records, methods, s, out, label, expected=expected)
        if headline and not headline.startswith("cmc"):
            paths += bar_plot(summary, methods, headline, s, out, label, expected)
        for fam in dict.fromkeys(m.split("/")[0] for m in metrics if "/" in m):
            paths += task_plot(summary, methods, fam, s, out, label, expected)
        if "map" in metrics:
            paths += time_plot(summary, methods, "map", s, out, label)
        for m in methods:
            paths += kernel_weight_plot(records, m, s, out, label)
    if len([s for s in settings if s]) > 1 and headline:
        paths += sweep_plot(summary, methods, headline, out, title, expected, run.setting_values()) or []
    return paths

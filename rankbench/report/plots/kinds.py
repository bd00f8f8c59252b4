"""The figure kinds of a report: CMC curves, bars, per-task bars, sweeps, a metric against its
cost, stored curves, learned view weights, drawn to the conventions of docs/developer/house.md
(Reports). Published numbers (the config's ``expected`` rows of methods in the run) are hollow
diamonds in the method's colour. Each kind returns a figure laid out to fit its canvas
(constrained layout), or None when the data hold nothing to draw.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...metrics import is_rate, metric_info, metric_label
from ...registry import protocols
from ...runfolder import TrialRecord
from ..claims import trial_curves
from ..tables import is_cost, record_diagnostics
from .style import figsize, method_styles, pyplot, styled

MAX_TASKS = 40


def _scale(metric: str) -> float:
    return 100.0 if is_rate(metric) else 1.0


def parameter_label(key: str, protocol_name: str | None = None) -> str:
    """A swept key path as a reader names it: a protocol parameter by the protocol's
    ``parameter_labels`` ("Test people"), else by its name ("n_constraints" -> "Constraints"); a
    ranker's parameter with the method (``K``, ``lam (IRB)``); an extractor's by its name."""
    parts = key.split(".")
    name = parts[-1]
    if parts[0] == "protocol" and len(parts) == 2:
        try:
            declared = getattr(protocols.get(protocol_name), "parameter_labels", {}) if protocol_name else {}
        except Exception:  # noqa: BLE001 - a protocol no longer installed: its key's own name
            declared = {}
        if name in declared:
            return declared[name]
        text = (name[2:] if name.startswith("n_") and len(name) > 2 else name).replace("_", " ")
        return text[:1].upper() + text[1:]
    if parts[0] == "rankers" and len(parts) == 3 and parts[1] != "*":
        return f"{name} ({parts[1]})"
    return name.replace("_", " ")


def _room(ax, xs=None, ys=None, rate_axis: bool = False) -> None:
    """Axes from zero with 10 % room beyond the largest value, so no marker sits on the frame
    (a rate axis ends at 100 at most)."""
    if xs is not None and len(xs):
        ax.set_xlim(0, float(np.nanmax(xs)) * 1.1 or 1.0)
    if ys is not None and len(ys):
        top = float(np.nanmax(ys)) * 1.1 or 1.0
        ax.set_ylim(0, min(top, 100.0) if rate_axis else top)


def category_labels(ax, x, names: list[str], inches: float) -> None:
    """Names under bars ``inches`` apart: wrapped onto lines that fit, turned 30 degrees only when a
    single word is too long for its place."""
    import textwrap

    import matplotlib

    size = matplotlib.font_manager.FontProperties(size=matplotlib.rcParams["xtick.labelsize"]).get_size_in_points()
    chars = max(4, int(inches * 72 / (0.6 * size)))
    wrapped = ["\n".join(textwrap.wrap(n, chars, break_long_words=False)) or n for n in names]
    if max(len(line) for w in wrapped for line in w.split("\n")) <= chars:
        ax.set_xticks(x, wrapped)
    else:
        ax.set_xticks(x, names, rotation=30, ha="right", rotation_mode="anchor")


def set_title(ax, title: str) -> None:
    """The title above the plot, left-aligned: what is shown on its first line, on what (after
    the first ": ") below, broken at commas to the figure's width, so that no title runs off it."""
    import matplotlib

    head, _, rest = title.partition(": ")
    size = matplotlib.font_manager.FontProperties(size=matplotlib.rcParams["axes.titlesize"]).get_size_in_points()
    chars = max(30, int((ax.figure.get_size_inches()[0] - 0.8) * 72 / (0.6 * size)))
    lines = [head]
    for part in rest.split(", ") if rest else []:
        if len(lines) > 1 and len(lines[-1]) + 2 + len(part) <= chars:
            lines[-1] += ", " + part
        else:
            lines.append(part)
    ax.set_title("\n".join(lines[:1]) + ("\n" + ",\n".join(lines[1:]) if rest else ""), loc="left")


def dodge(n: int, xs) -> np.ndarray:
    """x offsets of ``n`` series at the same x values, so that their error bars stand apart: a
    small step of the smallest gap between the xs (at most a third of it for all together)."""
    xs = np.unique(np.asarray(list(xs), dtype=float))
    gap = float(np.diff(xs).min()) if len(xs) > 1 else 1.0
    step = gap * min(0.06, 0.33 / max(n, 1))
    return (np.arange(n) - (n - 1) / 2) * step


def _legend(ax, order: list[str] | None = None) -> None:
    """Legend beside the axes, never over the data; entries grouped by method in ``order``
    (a method's own entry, then its published points)."""
    handles, labels = ax.get_legend_handles_labels()
    if order:
        def rank(label: str) -> int:
            hits = [i for i, m in enumerate(order) if label == m or label.startswith((m + " ", m + ","))]
            return hits[0] if hits else len(order)
        pairs = sorted(zip(handles, labels), key=lambda hl: rank(hl[1]))
        handles, labels = [h for h, _ in pairs], [lab for _, lab in pairs]
    if handles:
        ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)


def _published(expected: list[dict], setting: str, metric: str, methods: list[str] | None = None) -> dict[str, float]:
    """Published values of ``metric`` at ``setting`` for methods of the run (not published-only rows)."""
    return {e["method"]: float(e["value"]) for e in expected
            if e["metric"] == metric and (e.get("setting") or "") == setting and not e.get("published_only")
            and (methods is None or e["method"] in methods)}


# ----------------------------------------------------------------------------- figures
@styled
def cmc_figure(records: list[TrialRecord], methods: list[str], setting: str, title: str, max_rank: int = 50,
               marked: list[int] | None = None, expected: list[dict] | None = None,
               styles: dict[str, dict] | None = None):
    """Mean CMC curve per method with a ± 1 std band over trials, up to ``max_rank``; markers at
    the ranks the run tabulates (``marked``), published points in each method's colour."""
    plt = pyplot()
    styles = styles or method_styles(methods)
    fig, ax = plt.subplots(figsize=figsize())
    drawn = []
    for m in methods:
        curves = [r.curves["cmc"] for r in records if r.method == m and r.setting == setting and "cmc" in r.curves]
        if not curves:
            continue
        n = min(min(len(c) for c in curves), max_rank)
        arr = np.asarray([c[:n] for c in curves], float) * 100
        mean = arr.mean(axis=0)
        ranks = np.arange(1, n + 1)
        st = styles[m]
        marks = [r - 1 for r in (marked or []) if 1 <= r <= n]
        ax.plot(ranks, mean, color=st["color"], marker=st["marker"], markevery=marks or None,
                markersize=4 if marks else 0, linewidth=1.5, linestyle=st["linestyle"], clip_on=False, zorder=3,
                label=f"{m} ({mean[0]:.1f}% at rank 1)")
        if len(arr) > 1:
            sd = arr.std(axis=0, ddof=1)
            ax.fill_between(ranks, np.clip(mean - sd, 0, 100), np.clip(mean + sd, 0, 100), color=st["color"],
                            alpha=0.15, linewidth=0)
        drawn.append(m)
        pts = [(int(e["metric"][4:]), float(e["value"]) * 100) for e in expected or []
               if e["method"] == m and not e.get("published_only") and e["metric"].startswith("cmc@")
               and (e.get("setting") or "") == setting and int(e["metric"][4:]) <= n]
        if pts:
            ax.scatter(*zip(*pts), marker="D", s=30, facecolors="white", edgecolors=st["color"],
                       linewidths=1.4, zorder=5, clip_on=False, label=f"{m}, published")
    if not drawn:
        plt.close(fig)
        return None
    from matplotlib.ticker import MaxNLocator

    ax.set_xlim(1, max_rank)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylim(0, 100)
    ax.set_xlabel("Rank")
    ax.set_ylabel("Matching rate (%)")
    set_title(ax, title)
    _legend(ax, methods)
    return fig


def _errors(std: pd.Series | np.ndarray) -> np.ndarray | None:
    s = np.asarray(std, float)
    return None if np.isnan(s).all() else np.nan_to_num(s)


@styled
def bar_figure(summary: pd.DataFrame, methods: list[str], metric: str, setting: str, title: str,
               expected: list[dict], styles: dict[str, dict] | None = None):
    """One bar per method from zero, ± 1 std error bars, published values as hollow diamonds."""
    plt = pyplot()
    styles = styles or method_styles(methods)
    sub = summary[(summary["setting"] == setting) & (summary["metric"] == metric)].set_index("method")
    present = [m for m in methods if m in sub.index]
    if not present:
        return None
    k = _scale(metric)
    fig, ax = plt.subplots(figsize=figsize(len(present), 0.8, 2.2))
    x = np.arange(len(present))
    means = sub.loc[present, "mean"].to_numpy(float) * k
    err = _errors(sub.loc[present, "std"].to_numpy(float) * k)
    bars = ax.bar(x, means, yerr=err, capsize=4 if err is not None else 0, width=0.65,
                  color=[styles[m]["color"] for m in present], alpha=0.9, zorder=2)
    from matplotlib.legend_handler import HandlerTuple

    # the legend's swatch shows every bar's colour, not the first one's
    handles, labels = [tuple(bars.patches)], ["ours" + (" (mean ± 1 std)" if err is not None else "")]
    pub = _published(expected, setting, metric, present)
    px = [i for i, m in enumerate(present) if m in pub]
    if px:
        handles.append(ax.scatter(px, [pub[present[i]] * k for i in px], marker="D", s=34, facecolors="white",
                                  edgecolors="black", linewidths=1.3, zorder=5, clip_on=False, label="published"))
        labels.append("published")
    top = np.nanmax(np.concatenate([means + (err if err is not None else 0), [pub[m] * k for m in pub] or [0]]))
    ax.set_ylim(0, top * 1.08 if top > 0 else 1)
    category_labels(ax, x, present, 0.8)
    ax.grid(axis="x", visible=False)
    ax.set_ylabel(metric_label(metric))
    set_title(ax, title)
    ax.legend(handles, labels, handler_map={tuple: HandlerTuple(ndivide=None, pad=0)}, loc="upper left",
              bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    return fig


@styled
def task_figure(summary: pd.DataFrame, methods: list[str], family: str | list[str], setting: str, title: str,
                expected: list[dict], styles: dict[str, dict] | None = None):
    """Grouped bars per task (attribute, concept) from zero, one colour per method; none beyond
    ``MAX_TASKS`` tasks (bars too thin to read; the per-task table and CSV hold every value).
    ``family`` as a list: one row per family over the same tasks (e.g. AP at depths 100, 500 and
    all, ranking time), the task names under the last, the title over the first and the legend
    beside it."""
    plt = pyplot()
    styles = styles or method_styles(methods)
    families = [family] if isinstance(family, str) else list(family)
    subs = [summary[(summary["setting"] == setting) & summary["metric"].str.startswith(f + "/")] for f in families]
    tasks = list(dict.fromkeys(t.split("/", 1)[1] for sub in subs for t in sub["metric"]))
    present = [m for m in methods if any(m in set(sub["method"]) for sub in subs)]
    if not tasks or not present or len(tasks) > MAX_TASKS:
        return None
    w, h = figsize(len(tasks) * len(present), 0.16, 2.5)
    fig, axes = plt.subplots(len(families), 1, figsize=(w, h + 2.2 * (len(families) - 1)), sharex=True, squeeze=False)
    axes = list(axes[:, 0])
    for ax, f, sub in zip(axes, families, subs):
        _task_row(ax, sub, present, f, tasks, setting, expected, styles)
    axes[-1].set_xticks(np.arange(len(tasks)), tasks, rotation=30 if len(tasks) <= 12 else 60,
                        ha="right", rotation_mode="anchor")
    set_title(axes[0], title)
    _legend(axes[0])
    return fig


def _task_row(ax, sub: pd.DataFrame, methods: list[str], family: str, tasks: list[str], setting: str,
              expected: list[dict], styles: dict[str, dict]) -> None:
    """One family's bars of :func:`task_figure`: a group per task, a bar per method, published
    values as open diamonds in the method's colour."""
    k = _scale(family)
    width = 0.8 / len(methods)
    idx = sub.set_index(["method", "metric"])
    names = [f"{family}/{t}" for t in tasks]
    any_pub = False
    for j, m in enumerate(methods):
        vals = np.array([idx.loc[(m, t), "mean"] * k if (m, t) in idx.index else np.nan for t in names])
        errs = _errors([idx.loc[(m, t), "std"] * k if (m, t) in idx.index else np.nan for t in names])
        xs = np.arange(len(tasks)) + (j - (len(methods) - 1) / 2) * width
        ax.bar(xs, vals, width, yerr=errs, capsize=1.5 if errs is not None else 0, color=styles[m]["color"],
               label=m, zorder=2, error_kw={"linewidth": 0.8})
        pub = [_published(expected, setting, t, [m]).get(m) for t in names]
        pts = [(x, p * k) for x, p in zip(xs, pub) if p is not None]
        if pts:
            any_pub = True
            ax.scatter(*zip(*pts), marker="D", s=16, facecolors="white", edgecolors=styles[m]["color"],
                       linewidths=1.0, zorder=5, clip_on=False)
    if any_pub:
        ax.scatter([], [], marker="D", s=16, facecolors="white", edgecolors="black", label="published (method's colour)")
    ax.grid(axis="x", visible=False)
    ax.set_ylim(bottom=0)
    if k == 100:
        ax.set_ylim(0, 100)
    ax.set_ylabel(metric_label(family))


@styled
def sweep_figure(summary: pd.DataFrame, methods: list[str], metric: str, key: str,
                 points: list[tuple[str, Any]], title: str, expected: list[dict],
                 styles: dict[str, dict] | None = None, protocol: str | None = None):
    """``metric`` against one swept value (typed, in value order): ± 1 std error bars (the methods'
    dodged apart at each x), published values dotted in the method's colour; integer ticks at the
    swept values when they are integers; the x axis named by :func:`parameter_label`, on a log
    scale when the values are positive and span two decades or more (a geometric sweep)."""
    plt = pyplot()
    styles = styles or method_styles(methods)
    k = _scale(metric)
    points = sorted(points, key=lambda p: p[1])
    sub = summary[summary["metric"] == metric].set_index(["setting", "method"])
    fig, ax = plt.subplots(figsize=figsize())
    present = [m for m in methods if any((s, m) in sub.index for s, _ in points)]
    values = np.asarray([v for _, v in points], dtype=float)
    log = bool(values.min() > 0 and values.max() >= 100 * values.min())
    # dodged in the axis' own units: added to x, or to log10 x on a log axis
    shift = dict(zip(present, dodge(len(present), np.log10(values) if log else values)))

    def moved(x, m):
        return np.asarray(x, float) * 10 ** shift[m] if log else np.asarray(x, float) + shift[m]

    for m in present:
        pts = [(v, sub.loc[(s, m), "mean"] * k, sub.loc[(s, m), "std"] * k) for s, v in points if (s, m) in sub.index]
        xs, ys, es = zip(*pts)
        st = styles[m]
        ax.errorbar(moved(xs, m), ys, yerr=_errors(es), marker=st["marker"], color=st["color"],
                    linestyle=st["linestyle"], capsize=3, markersize=5, clip_on=False, label=m)
        pub = [(v, _published(expected, s, metric, [m]).get(m)) for s, v in points]
        pub = [(float(moved([v], m)[0]), p * k) for v, p in pub if p is not None]
        if pub:
            ax.plot(*zip(*pub), linestyle=":", marker="D", markersize=5, color=st["color"], markerfacecolor="white",
                    clip_on=False, label=f"{m}, published")
    if not present:
        plt.close(fig)
        return None
    xs = [v for _, v in points]
    if log:
        ax.set_xscale("log")
    elif all(isinstance(v, (int, np.integer)) for v in xs):
        ax.set_xticks(sorted(set(xs)))
    ax.set_xlabel(parameter_label(key, protocol))
    ax.set_ylabel(metric_label(metric))
    if k == 100 or (metric_info(metric) and not is_cost(metric)):
        ax.set_ylim(bottom=0)
    set_title(ax, title)
    _legend(ax, methods)
    return fig


@styled
def time_figure(summary: pd.DataFrame, methods: list[str], metric: str, setting: str, title: str,
                styles: dict[str, dict] | None = None, cost: str = "test_s"):
    """A quality metric against a cost (ranking time), one point per method with ± 1 std bars."""
    plt = pyplot()
    styles = styles or method_styles(methods)
    sub = summary[summary["setting"] == setting].set_index(["method", "metric"])
    k = _scale(metric)
    fig, ax = plt.subplots(figsize=figsize())
    xs, ys = [], []
    for m in methods:
        if (m, metric) in sub.index and (m, cost) in sub.index:
            st = styles[m]
            x, y = sub.loc[(m, cost), "mean"], sub.loc[(m, metric), "mean"] * k
            ex, ey = _errors([sub.loc[(m, cost), "std"]]), _errors([sub.loc[(m, metric), "std"] * k])
            ax.errorbar(x, y, xerr=ex, yerr=ey, marker=st["marker"], color=st["color"], capsize=3, linestyle="none",
                        clip_on=False, label=m)
            xs.append(x + (ex[0] if ex is not None else 0))
            ys.append(y + (ey[0] if ey is not None else 0))
    if not xs:
        plt.close(fig)
        return None
    _room(ax, xs, ys, k == 100)
    ax.set_xlabel(metric_label(cost))
    ax.set_ylabel(metric_label(metric))
    set_title(ax, title)
    _legend(ax)
    return fig


#: a curve averaged over a family's members is drawn at most at this many x points per trial
MEMBER_MEAN_POINTS = 500


def _trial_series(records: list[TrialRecord], method: str, curves: list[str], x: str, y: str,
                  setting: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each trial's ``(x, y)`` of one stored curve, or of the mean over several (a family's
    members, each on the union of their x points and held at its end values outside its own,
    at most :data:`MEMBER_MEAN_POINTS` of them)."""
    per_curve = [trial_curves(records, method, c, x, y, setting) for c in curves]
    out = []
    for t in sorted(set().union(*per_curve)):
        series = [p[t] for p in per_curve if t in p]
        if len(curves) == 1:
            out.append(series[0])
            continue
        grid = np.unique(np.concatenate([sx for sx, _ in series]))
        if len(grid) > MEMBER_MEAN_POINTS:
            grid = grid[np.unique(np.linspace(0, len(grid) - 1, MEMBER_MEAN_POINTS).round().astype(int))]
        out.append((grid, np.mean([np.interp(grid, sx, sy) for sx, sy in series], axis=0)))
    return out


@styled
def curve_figure(records: list[TrialRecord], methods: list[str], curve: str | list[str], x: str, y: str | list[str],
                 setting: str, title: str, styles: dict[str, dict] | None = None):
    """Mean of a stored curve's ``y`` series against its ``x`` series per method, with a ± 1 std
    band over trials (trials on a common grid of ``x``, each held at its last value after it ends,
    as claims grade them). ``curve`` as a list of curves (a family's members): per trial, their
    mean (:func:`drawn_curves`). ``y`` as a list: one panel per series, side by side on the same
    ``x`` (e.g. MAP at depths 100, 500 and all against ranking time), the title over the first and
    the legend beside the last."""
    plt = pyplot()
    styles = styles or method_styles(methods)
    ys = [y] if isinstance(y, str) else list(y)
    members = [curve] if isinstance(curve, str) else list(curve)
    series = {m: {v: _trial_series(records, m, members, x, v, setting) for v in ys} for m in methods}
    if not any(any(per.values()) for per in series.values()):
        return None
    w, h = figsize()
    fig, axes = plt.subplots(1, len(ys), figsize=(w * (1 + 0.62 * (len(ys) - 1)), h), squeeze=False)
    axes = list(axes[0])
    for ax, v in zip(axes, ys):
        _curve_panel(ax, methods, {m: series[m][v] for m in methods}, x, v, styles)
    set_title(axes[0], title)
    _legend(axes[-1])
    return fig


def _curve_panel(ax, methods: list[str], series: dict[str, list[tuple[np.ndarray, np.ndarray]]], x: str, y: str,
                 styles: dict[str, dict]) -> None:
    """One panel of :func:`curve_figure`: each method's mean of its trials' ``(x, y)`` series."""
    k = _scale(y)
    all_x, all_y = [], []
    for m in methods:
        if not series.get(m):
            continue
        xs = np.unique(np.concatenate([sx for sx, _ in series[m]]))
        per_trial = np.array([np.interp(xs, sx, sy) for sx, sy in series[m]]) * k
        mean = per_trial.mean(axis=0)
        st = styles[m]
        ax.plot(xs, mean, color=st["color"], linewidth=1.5, linestyle=st["linestyle"],
                marker=st["marker"] if len(xs) <= 25 else None, markersize=3.5, clip_on=False, label=m)
        top = mean
        if len(per_trial) > 1:
            sd = per_trial.std(axis=0, ddof=1)
            low, top = mean - sd, mean + sd
            ax.fill_between(xs, np.clip(low, 0, None), np.minimum(top, 100) if k == 100 else top,
                            color=st["color"], alpha=0.15, linewidth=0)
        all_x.append(np.max(xs))
        all_y.append(np.max(top))
    if all_x:
        _room(ax, all_x if is_cost(x) else None, all_y, k == 100)
    ax.set_xlabel(metric_label(x))
    ax.set_ylabel(metric_label(y))


def view_weights(records: list[TrialRecord], method: str, setting: str) -> tuple[str, list[dict[str, dict[str, float]]]] | None:
    """(name, per trial ``{task: {view: weight}}``) of a method's first per-view diagnostic
    (a diagnostic whose value maps view names to numbers, e.g. learned kernel weights)."""
    found_name, per_trial = None, []
    for r in records:
        if r.method != method or r.setting != setting:
            continue
        weights: dict[str, dict[str, float]] = {}
        for task, d in record_diagnostics(r).items():
            for name, value in (d or {}).items():
                if isinstance(value, dict) and value and all(isinstance(v, (int, float)) for v in value.values()) \
                        and name == (found_name or name):
                    found_name = name
                    weights[task or "all"] = {str(k): float(v) for k, v in value.items()}
        if weights:
            per_trial.append(weights)
    return (found_name, per_trial) if per_trial else None


@styled
def kernel_weight_figure(records: list[TrialRecord], method: str, setting: str, title: str):
    """Mean learned per-view weight per task (e.g. a multiple-kernel ranker's), as stacked shares,
    each share of 8 % or more written on its segment."""
    got = view_weights(records, method, setting)
    if got is None:
        return None
    what, weights = got
    tasks = list(weights[0])
    views = list(dict.fromkeys(v for w in weights for t in tasks for v in w.get(t, {})))
    mean = np.array([[np.mean([w[t].get(v, 0.0) for w in weights if t in w]) for v in views] for t in tasks])
    total = mean.sum(axis=1, keepdims=True)
    share = 100 * mean / np.where(total > 0, total, 1)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=figsize(len(tasks), 0.7, 2.5))
    bottom = np.zeros(len(tasks))
    for j, v in enumerate(views):
        bars = ax.bar(np.arange(len(tasks)), share[:, j], bottom=bottom, width=0.7, label=v, zorder=2)
        ax.bar_label(bars, labels=[f"{p:.0f}" if p >= 8 else "" for p in share[:, j]], label_type="center",
                     fontsize=7, color="white")
        bottom += share[:, j]
    ax.set_xticks(np.arange(len(tasks)), tasks, rotation=30 if len(tasks) > 3 else 0,
                  ha="right" if len(tasks) > 3 else "center", rotation_mode="anchor")
    ax.grid(axis="x", visible=False)
    ax.set_ylabel(f"Share of the {what.replace('_', ' ')} (%)")
    ax.set_ylim(0, 100)
    set_title(ax, title)
    _legend(ax)
    return fig

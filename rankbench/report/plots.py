"""Figures as a paper prints them: CMC curves, bars, per-task bars, sweeps, stored curves.

Every figure is written as PNG (300 dpi), SVG (text kept as text, so it stays editable) and PDF
(TrueType text) with a readable name (``cmc.png``, ``cmc_n_test-316.pdf``, ``mae_vs_K.svg``,
``pair_acc_per_task.png``). Conventions shared by all of them:

* a title that says what is shown and on what (dataset, the protocol's numeric parameters, the
  setting's swept values, the number of trials), axis labels that name the metric and its unit
  as :mod:`rankbench.metrics` declares them ("Mean absolute error", "Error rate (%)") and swept
  parameters by what they count (a protocol's ``parameter_labels``: "Test people", "Constraints");
* one colour, marker and line style per method, the same in every figure of a run, so that a
  series drawn over another still shows; error bars of methods at the same x are dodged apart;
* rates in %, bars from zero, integer ticks for integer sweeps, legends outside the axes;
* spread as ± one standard deviation over trials (bands on curves, error bars on bars), none for
  a single trial; a title says "mean ± 1 std" only where the figure draws it;
* published numbers (the config's ``expected`` rows of methods in the run) as hollow diamonds in
  the method's colour, labelled in the legend.

The look comes from a matplotlib style file shipped with rankbench (``rankbench.mplstyle``: sizes,
fonts, SVG / PDF text); ``rankbench report RUN --style my.mplstyle`` applies a file of one's own on
top of it. Every figure is laid out to fit its canvas (constrained layout), and
:func:`layout_problems` finds what a reader would see wrong (text cut off at an edge, tick labels
or titles running into each other, a legend over the plot): ``make_plots`` logs a warning for any,
and the tests draw every kind of figure through it.

Drawing is the slow part of a report (three formats per figure), so ``make_plots`` keeps an index
of what it drew (``plots/.index.json``: the figures, their captions and layout warnings) under a
digest of everything a figure is drawn from: the run's config and trial records, the options
(``max_rank``, ``--style``), the style files, matplotlib's version and the code of this package
and of :mod:`rankbench.metrics`. A report asked for again from the same inputs (``rankbench
collect`` after ``rankbench run``) reuses the figures on disk; any change draws them again.

What is drawn is decided by the run, not by the paper: the metrics' declarations
(:mod:`rankbench.metrics`), the protocol's headline metric and the curves the trials stored
(``curves["cmc"]`` as a list, any other curve as a mapping of series, drawn as each declared
metric series against the first cost series, e.g. ``map@100`` against ``rank_s``).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import io
import itertools
import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from ..errors import ConfigError
from ..metrics import is_rate, metric_info, metric_label
from ..registry import protocols
from ..runfolder import TrialRecord
from ..utils.diskcache import digest, module_fingerprint
from ..utils.fileio import atomic_write_bytes, atomic_write_text, refuse_link
from .claims import mean_curve, trial_curves
from .tables import headline_metric, is_cost, ordered_metrics, record_diagnostics, setting_title

__all__ = ["PlotFile", "make_plots", "headline_metric", "cmc_figure", "bar_figure", "task_figure", "sweep_figure",
           "time_figure", "curve_figure", "kernel_weight_figure", "layout_problems", "STYLE_FILE", "FORMATS"]

log = logging.getLogger("rankbench.report")

#: the house style (a matplotlib style file); SVG element ids come from a fixed salt in it, so a
#: figure redrawn from the same trials is the same file (and a report collected twice the same page)
STYLE_FILE = Path(__file__).with_name("rankbench.mplstyle")
#: a user's style file applied on top of the house style while a report draws (``--style``)
_USER_STYLE: contextvars.ContextVar[str | None] = contextvars.ContextVar("rankbench_user_style", default=None)
#: every figure is written in each of these formats
FORMATS = ("png", "svg", "pdf")
#: in ``plots/``: what the last report drew and from what (:func:`make_plots`)
PLOTS_INDEX = ".index.json"
MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*", "<", ">")
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (3, 1)))
#: every figure is FIG_H inches high and FIG_W wide; figures of many categories (methods, tasks)
#: grow wider, up to twice FIG_W, so that a report shows them at one consistent scale
FIG_W, FIG_H = 6.4, 4.0


def figsize(categories: int = 0, per_category: float = 0.0, fixed: float = 0.0) -> tuple[float, float]:
    """The figure size of the style in use (``figure.figsize``; the house style's is FIG_W x
    FIG_H), or wider for ``categories`` x ``per_category`` inches plus ``fixed`` (axis labels,
    legend), at most twice as wide."""
    import matplotlib

    w, h = matplotlib.rcParams["figure.figsize"]
    return min(2 * w, max(w, fixed + per_category * categories)), h


MAX_TASKS = 40


@dataclass
class PlotFile:
    """One written figure file and the sentence that says what it shows."""

    path: Path
    caption: str

    @property
    def suffix(self) -> str:
        return self.path.suffix

    @property
    def stem(self) -> str:
        return self.path.stem

    @property
    def name(self) -> str:
        return self.path.name


def pyplot():
    """matplotlib's ``pyplot`` on the Agg backend (files only, no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def style_file(path: str | Path) -> Path:
    """A user's matplotlib style file, checked: it exists and matplotlib reads it."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise ConfigError(f"--style {path}: expected a matplotlib style file (.mplstyle), got "
                          + ("a folder" if p.exists() else "no such file"))
    import matplotlib

    try:
        matplotlib.rc_params_from_file(str(p), use_default_template=False)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"--style {path}: not a readable matplotlib style file ({exc})") from None
    return p


@contextlib.contextmanager
def user_style(path: str | Path | None):
    """While drawing, apply ``path`` (a matplotlib style file) on top of the house style."""
    token = _USER_STYLE.set(str(style_file(path)) if path else None)
    try:
        yield
    finally:
        _USER_STYLE.reset(token)


def _style():
    """The house style, and a user's on top of it, without touching the caller's settings."""
    user = _USER_STYLE.get()
    return pyplot().style.context([str(STYLE_FILE)] + ([user] if user else []))


def _styled(fn):
    """Build a figure in the style (:func:`_style`)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with _style():
            return fn(*args, **kwargs)

    return wrapper


def save(fig, out: Path, stem: str, caption: str = "", laid_out: bool = False,
         root: Path | None = None) -> list[PlotFile]:
    """Write ``fig`` as ``<stem>.png`` (300 dpi), ``<stem>.svg`` (editable text) and ``<stem>.pdf``
    and close it. No creation date is written, so the same figure is the same file. Each file is
    written atomically through no link below ``root`` (default ``out``; a run's plots: the run
    folder).

    The figure is laid out once (its constrained layout and, with ``savefig.bbox: tight``, the
    tight box, both in inches) and every format is written from that layout, instead of each
    format laying the figure out again (two draws per format otherwise). ``laid_out``: the figure
    was drawn since it last changed (by :func:`layout_problems`), so its layout stands."""
    import matplotlib

    plt = pyplot()
    out.mkdir(parents=True, exist_ok=True)
    files = []
    undated = {"svg": {"Date": None}, "pdf": {"CreationDate": None, "ModDate": None}}
    with _style():
        if not laid_out:
            fig.canvas.draw()
        bbox = None
        if matplotlib.rcParams["savefig.bbox"] == "tight":
            pad = matplotlib.rcParams["savefig.pad_inches"]
            bbox = fig.get_tightbbox(fig.canvas.get_renderer()).padded(pad, pad)
        # keep the layout made above: with no layout engine (and none made again from the
        # style's rc while saving), savefig neither lays out nor draws a second time per format
        with matplotlib.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
            fig.set_layout_engine(None)
            for ext in FORMATS:
                p, buf = out / f"{stem}.{ext}", io.BytesIO()
                fig.savefig(buf, format=ext, metadata=undated.get(ext), bbox_inches=bbox)
                atomic_write_bytes(p, buf.getvalue(), root=out if root is None else root)
                files.append(PlotFile(p, caption))
    plt.close(fig)
    return files


# ----------------------------------------------------------------------------- what a reader sees
def _overlap(a, b, tol: float = 1.0) -> bool:
    """Whether two display boxes share more than ``tol`` pixels in both directions."""
    return min(a.x1, b.x1) - max(a.x0, b.x0) > tol and min(a.y1, b.y1) - max(a.y0, b.y0) > tol


def _shown_ticklabels(axis, limits) -> list:
    """The tick labels an axis draws: non-empty, at ticks inside its view."""
    lo, hi = sorted(limits)
    pad = (hi - lo) * 1e-9
    return [t for t, loc in zip(axis.get_ticklabels(), axis.get_ticklocs())
            if t.get_visible() and t.get_text() and lo - pad <= loc <= hi + pad]


def _crowded(name: str, axis, limits, renderer) -> list[str]:
    """Neighbouring tick labels of one axis that run into each other. Turned labels are compared
    as the parallel strips they are (their distance across the strips against the text's height),
    not by their upright bounding boxes, which overlap whenever the labels are turned."""
    import math

    shown = _shown_ticklabels(axis, limits)
    boxes = [t.get_window_extent(renderer) for t in shown]
    order = sorted(range(len(shown)), key=lambda i: (boxes[i].x0, boxes[i].y0))
    out = []
    for i, j in zip(order, order[1:]):
        a, b = shown[i], shown[j]
        angle = math.radians(a.get_rotation() % 180)
        if name == "x" and 0 < angle < math.pi and a.get_rotation() == b.get_rotation():
            gap = abs(b.get_window_extent(renderer).x1 - boxes[i].x1) if a.get_ha() == "right" else \
                abs(b.get_window_extent(renderer).x0 - boxes[i].x0)
            height = a.get_size() * a.figure.dpi / 72 * len(a.get_text().split("\n"))
            if gap * abs(math.sin(angle)) < height:
                out.append(f"{name} tick label {a.get_text()!r} runs into {name} tick label {b.get_text()!r}")
        elif _overlap(boxes[i], boxes[j]):
            out.append(f"{name} tick label {a.get_text()!r} runs into {name} tick label {b.get_text()!r}")
    return out


def layout_problems(fig) -> list[str]:
    """What a reader would see wrong in ``fig``, one phrase each (empty when nothing): a text or the
    legend cut off at the figure's edge, tick labels running into each other, a title, axis label,
    tick label or legend over another, a legend over the plot."""
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    edge = fig.bbox
    found: list[str] = []
    for ax in fig.axes:
        texts = [(f"title {t.get_text()!r}", t) for t in (ax.title, ax._left_title, ax._right_title)]
        texts += [(f"{n} label {t.get_text()!r}", t) for n, t in (("x", ax.xaxis.label), ("y", ax.yaxis.label))]
        texts = [(n, t.get_window_extent(r)) for n, t in texts if t.get_visible() and t.get_text()]
        ticks = {n: [(f"{n} tick label {t.get_text()!r}", t.get_window_extent(r)) for t in _shown_ticklabels(a, lim)]
                 for n, a, lim in (("x", ax.xaxis, ax.get_xlim()), ("y", ax.yaxis, ax.get_ylim()))}
        leg = ax.get_legend()
        boxes = texts + ticks["x"] + ticks["y"]
        if leg is not None and leg.get_visible():
            boxes.append(("legend", leg.get_window_extent(r)))
            if _overlap(leg.get_window_extent(r), ax.bbox):
                found.append("the legend covers the plot")
        for name, box in boxes:
            if box.x0 < edge.x0 - 1 or box.y0 < edge.y0 - 1 or box.x1 > edge.x1 + 1 or box.y1 > edge.y1 + 1:
                found.append(f"{name} is cut off at the figure's edge")
        for axis, a, lim in (("x", ax.xaxis, ax.get_xlim()), ("y", ax.yaxis, ax.get_ylim())):
            found += _crowded(axis, a, lim, r)
        others = texts + ([("legend", leg.get_window_extent(r))] if leg is not None and leg.get_visible() else [])
        for i, (n1, b1) in enumerate(others):   # titles, axis labels, legend: with each other and the ticks
            for n2, b2 in others[i + 1:] + ticks["x"] + ticks["y"]:
                if _overlap(b1, b2):
                    found.append(f"{n1} overlaps {n2}")
    return found


def slug(s: str) -> str:
    """A readable file-name part: ``cmc@1`` -> ``cmc1``, ``rankers.*.K=4`` -> ``K-4``."""
    s = s.replace("@", "")
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in s).strip("_")[:60] or "all"


def setting_slug(label: str, values: dict[str, Any] | None) -> str:
    if values:
        return "_".join(slug(f"{k.split('.')[-1]}-{v:g}" if isinstance(v, float) else f"{k.split('.')[-1]}-{v}")
                        for k, v in values.items())
    return slug(label) if label else ""


def _stem(*parts: str) -> str:
    return "_".join(p for p in parts if p)


def _scale(metric: str) -> float:
    return 100.0 if is_rate(metric) else 1.0


def axis_label(metric: str) -> str:
    """What the metric is, with its unit: "Matching rate at rank 1 (%)", "Mean absolute error",
    "Training time (s)" (:func:`rankbench.metrics.metric_label`)."""
    return metric_label(metric)


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


def method_styles(methods: list[str]) -> dict[str, dict[str, Any]]:
    """One colour, marker and line style per method, in the run's order (the same in every figure):
    a line drawn over another of the same values still shows the one below."""
    import matplotlib

    cmap = matplotlib.colormaps["tab10"]
    return {m: {"color": cmap(i % 10), "marker": MARKERS[i % len(MARKERS)], "linestyle": LINESTYLES[i % len(LINESTYLES)]}
            for i, m in enumerate(methods)}


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


def _trials_text(n: int, spread: bool = True) -> str:
    return "1 trial" if n == 1 else f"{n} trials, mean ± 1 std" if spread else f"mean of {n} trials"


def _value(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def context(config: dict, setting: str, values: dict[str, Any] | None, n_trials: int,
            varied: str | None = None, spread: bool = True) -> str:
    """``viper, Test people = 316, 5 trials, mean ± 1 std``: the dataset, the protocol's numeric
    parameters by their readable names (a setting's swept values replace them; ``varied``, a
    figure's swept axis, is left out), the number of trials (and whether the figure draws the spread)."""
    proto = config.get("protocol") or {}
    params = {f"protocol.{k}": v for k, v in proto.items()
              if isinstance(v, (int, float)) and not isinstance(v, bool) and k != "seed"}
    for k in [*(values or {}), *([varied] if varied else [])]:
        params.pop(f"protocol.{k.split('.')[-1]}" if k.startswith("protocol.") else k, None)
    shown = {**params, **(values or {})}
    parts = [str((config.get("dataset") or {}).get("name", ""))]
    parts += [f"{parameter_label(k, proto.get('name'))} = {_value(v)}" for k, v in shown.items()]
    if not values and setting:
        parts.append(setting)
    parts.append(_trials_text(n_trials, spread))
    return ", ".join(p for p in parts if p)


# ----------------------------------------------------------------------------- figures
@_styled
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


@_styled
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
    ax.set_ylabel(axis_label(metric))
    set_title(ax, title)
    ax.legend(handles, labels, handler_map={tuple: HandlerTuple(ndivide=None, pad=0)}, loc="upper left",
              bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    return fig


@_styled
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
    ax.set_ylabel(axis_label(family))


@_styled
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
    ax.set_ylabel(axis_label(metric))
    if k == 100 or (metric_info(metric) and not is_cost(metric)):
        ax.set_ylim(bottom=0)
    set_title(ax, title)
    _legend(ax, methods)
    return fig


def sweep_groups(summary: pd.DataFrame, values: dict[str, dict[str, Any]]) -> list[tuple[str, dict, list]]:
    """Sweeps to draw: (x key, the other keys' fixed values, [(setting, x value)]) for each numeric
    swept key, one group per combination of the other keys (a two-key sweep gives a figure per
    value of the other key)."""
    settings = [s for s in dict.fromkeys(summary["setting"]) if s and values.get(s)]
    if len(settings) < 2:
        return []
    keys = list(dict.fromkeys(k for s in settings for k in values[s]))
    out = []
    for key in keys:
        if not all(isinstance(values[s].get(key), (int, float)) and not isinstance(values[s].get(key), bool)
                   for s in settings):
            continue
        groups: dict[tuple, list] = {}
        for s in settings:
            rest = tuple((k, values[s].get(k)) for k in keys if k != key)
            groups.setdefault(rest, []).append((s, values[s][key]))
        out += [(key, dict(rest), pts) for rest, pts in groups.items() if len({v for _, v in pts}) > 1]
    return out


@_styled
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
    ax.set_xlabel(axis_label(cost))
    ax.set_ylabel(axis_label(metric))
    set_title(ax, title)
    _legend(ax)
    return fig


def stored_curves(records: list[TrialRecord], setting: str) -> dict[str, tuple[str, list[str]]]:
    """Curves stored as mappings of series: ``{curve: (x series, [declared y series])}``; x is the
    first cost series (e.g. ``rank_s``), else the first series."""
    out: dict[str, tuple[str, list[str]]] = {}
    for r in records:
        if r.setting != setting:
            continue
        for name, data in r.curves.items():
            if name in out or not isinstance(data, dict) or len(data) < 2:
                continue
            keys = list(data)
            x = next((s for s in keys if is_cost(s)), keys[0])
            ys = [s for s in keys if s != x and metric_info(s) is not None and not is_cost(s)]
            if ys:
                out[name] = (x, ys)
    return out


def drawn_curves(records: list[TrialRecord], setting: str) -> dict[str, tuple[list[str], str, list[str]]]:
    """The stored curves a report draws: ``{label: (curves, x, ys)}``. A curve on its own is drawn
    as it is; a family of curves named ``<family>/<member>`` (e.g. ``staged/<concept>``) is drawn
    once, as the curve ``<family>`` itself when the trials stored it (the protocol's own
    aggregate), else as the mean over its members (:func:`curve_figure`); the members' own points
    stay in ``curves.csv``."""
    stored = stored_curves(records, setting)
    out: dict[str, tuple[list[str], str, list[str]]] = {}
    for name, (x, ys) in stored.items():
        family = name.split("/", 1)[0] if "/" in name else None
        if family is None:
            out[name] = ([name], x, ys)
        elif family not in stored:
            out.setdefault(family, ([], x, ys))[0].append(name)
    return out


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


@_styled
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
    ax.set_xlabel(axis_label(x))
    ax.set_ylabel(axis_label(y))


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


@_styled
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


# ----------------------------------------------------------------------------- a run's figures
def default_max_rank(metrics: set[str]) -> int:
    """The largest rank the run tabulates (``cmc@K``), else 50."""
    ranks = [int(m[4:]) for m in metrics if m.startswith("cmc@") and m[4:].isdigit()]
    return max(ranks) if ranks else 50


def make_plots(run, summary: pd.DataFrame, max_rank: int | None = None, style: str | Path | None = None,
               n_jobs: int = 1) -> list[PlotFile]:
    """Every figure a run supports, into ``<run>/plots`` (PNG, SVG and PDF each; figures of an
    earlier report there are removed first, so the folder holds exactly this report's figures).

    ``max_rank`` adds CMC figures ending at that rank under names of their own
    (``cmc_rank20.png``) beside the standard ones, which it leaves as they are; such figures of
    earlier reports are kept (each was asked for by name). ``style``: a matplotlib style file
    applied on top of the house style. A figure with :func:`layout_problems` is written and
    named in a warning.

    When ``plots/.index.json`` says the figures on disk were drawn from the same inputs (see the
    module's docstring) and every one of them is still there, they are returned as they are
    (their layout warnings logged again) instead of being drawn again.

    ``n_jobs`` > 1 draws a report of at least :data:`PARALLEL_FIGURES` figures in that many
    processes (each given the run and drawing every n-th figure): the same files, as each figure
    is drawn alone.
    """
    out = run.folder.plots_dir
    refuse_link(out)   # its old figures are deleted below: never those of a folder it names
    key = _plots_key(run, summary, max_rank, style)
    reused = _reusable_plots(out, key)
    if reused is not None:
        files, warnings = reused
        for w in warnings:
            log.warning("%s", w)
        return files
    for old in (p for ext in FORMATS for p in out.glob(f"*.{ext}")):
        if not re.search(r"_rank\d+$", old.stem):
            old.unlink(missing_ok=True)
    n = max(1, int(n_jobs))
    if n > 1 and len(_make_plots(run, summary, max_rank, None)) < PARALLEL_FIGURES:
        n = 1
    if n == 1:
        with user_style(style):
            drawn = _make_plots(run, summary, max_rank, (0, 1))
    else:
        from joblib import Parallel, delayed

        parts = Parallel(n_jobs=n, backend="loky")(
            delayed(_draw_part)(run, summary, max_rank, None if style is None else str(style), (k, n))
            for k in range(n))
        drawn = sorted((d for part in parts for d in part), key=lambda d: d[0])
    files = [f for _, fs, _ in drawn for f in fs]
    warnings = [w for _, _, ws in drawn for w in ws]
    for w in warnings:
        log.warning("%s", w)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / PLOTS_INDEX, json.dumps(
        {"key": key, "files": [{"name": f.name, "caption": f.caption} for f in files], "warnings": warnings},
        indent=1) + "\n", root=run.folder.path)
    return files


#: the fewest figures drawn in several processes (``make_plots(n_jobs=...)``): below it, starting
#: the processes and sending them the run costs more than it saves
PARALLEL_FIGURES = 24


def _draw_part(run, summary: pd.DataFrame, max_rank: int | None, style: str | None,
               part: tuple[int, int]) -> list[tuple[int, list[PlotFile], list[str]]]:
    """One process's share of a report's figures (:func:`make_plots` with ``n_jobs``), drawn from
    the run as the report holds it (not read again from its folder)."""
    with user_style(style):
        return _make_plots(run, summary, max_rank, part)


def _plots_key(run, summary: pd.DataFrame, max_rank: int | None, style: str | Path | None) -> str:
    """A digest of everything ``make_plots`` draws from."""
    import matplotlib

    styles = [STYLE_FILE] + ([style_file(style)] if style else [])
    code = [module_fingerprint(__name__), module_fingerprint("rankbench.metrics")]
    return digest(run.config, [r.to_json() for r in run.records + run.failed], summary.to_csv(index=False),
                  max_rank, [p.read_text(encoding="utf-8") for p in styles], matplotlib.__version__, code)


def _read_index(out: Path) -> tuple[str, list[PlotFile], list[str]] | None:
    """(key, figures, layout warnings) that ``plots/.index.json`` records in ``out``, or None."""
    try:
        index = json.loads((out / PLOTS_INDEX).read_text(encoding="utf-8"))
        return (index["key"], [PlotFile(out / f["name"], f["caption"]) for f in index["files"]],
                list(index["warnings"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _reusable_plots(out: Path, key: str) -> tuple[list[PlotFile], list[str]] | None:
    """(figures, layout warnings) of ``out`` when its index was written under ``key`` and each
    figure is still there."""
    index = _read_index(out)
    if index is None or index[0] != key or not all(f.path.is_file() and not f.path.is_symlink() for f in index[1]):
        return None
    return index[1], index[2]


def plot_warnings(out: Path) -> list[str]:
    """The layout warnings ``plots/.index.json`` records for the figures in ``out`` (none without one)."""
    index = _read_index(out)
    return index[2] if index is not None else []


def _in_sentence(label: str) -> str:
    """A label inside a sentence: "Test people" -> "test people"; "K", "MAP" stay as they are."""
    return label[:1].lower() + label[1:] if len(label) > 1 and label[1].islower() else label


def _shared_words(names: list[str]) -> str:
    """What several panels' quantities have in common, for one title: the words they all begin
    with ("Mean average precision" for MAP at depth 100, at depth 500 and MAP), else all of them
    joined by "and"."""
    words = [n.split() for n in names]
    common = []
    for group in zip(*words):
        if len(set(group)) > 1:
            break
        common.append(group[0])
    while common and common[-1] in ("at", "of", "in", "on", "by"):
        common.pop()
    return " ".join(common) if common and len(names) > 1 else " and ".join(names[:1] + [_in_sentence(n) for n in names[1:]])


def _make_plots(run, summary: pd.DataFrame, max_rank: int | None, part: tuple[int, int] | None
                ) -> list[tuple[int, list[PlotFile], list[str]]]:
    """The report's figures in a fixed order, as (place, files, layout warnings): those whose place
    is ``k`` modulo ``n`` for ``part`` = (k, n); with ``part`` None none is drawn (one entry per
    figure the run supports, to count them)."""
    records, methods, cfg = run.records, run.methods, run.config
    expected: list[dict[str, Any]] = cfg.get("expected") or []
    values = run.setting_values()
    out = run.folder.plots_dir
    styles = method_styles(methods + [m for m in dict.fromkeys(summary["method"]) if m not in methods])
    methods = list(styles)
    drawn: list[tuple[int, list[PlotFile], list[str]]] = []
    settings = list(dict.fromkeys(summary["setting"]))
    metrics = set(summary["metric"])
    headline = headline_metric(run.protocol_name, metrics)
    rank_metrics = sorted(int(m[4:]) for m in metrics if m.startswith("cmc@") and m[4:].isdigit())
    n_of = summary.groupby("setting", sort=False)["n_trials"].max().to_dict()

    place = itertools.count()

    def emit(build: Callable[[], Any], stem: str, caption: str) -> None:
        i = next(place)
        if part is None:
            drawn.append((i, [], []))
            return
        if i % part[1] != part[0]:
            return
        fig = build()
        if fig is None:
            return
        with _style():
            warnings = [f"plots/{stem}: {problem}" for problem in layout_problems(fig)]
        drawn.append((i, save(fig, out, stem, caption, laid_out=True, root=run.folder.path), warnings))

    def name(metric: str) -> str:
        return metric_label(metric, unit=False)

    for s in settings:
        where = context(cfg, s, values.get(s), int(n_of.get(s, 1)))
        tag = setting_slug(s, values.get(s))
        if any("cmc" in r.curves for r in records if r.setting == s):
            for mr, suffix in [(default_max_rank(metrics), "")] + ([(max_rank, f"rank{max_rank}")] if max_rank else []):
                emit(lambda: cmc_figure(records, methods, s, f"CMC: {where}", mr, rank_metrics, expected, styles),
                     _stem("cmc", tag, suffix), f"Cumulative matching characteristic up to rank {mr}; {where}.")
        if headline and not headline.startswith("cmc"):
            emit(lambda: bar_figure(summary, methods, headline, s, f"{name(headline)}: {where}", expected, styles),
                 _stem(slug(headline), tag), f"{name(headline)} per method; {where}.")
        families = list(dict.fromkeys(m.split("/")[0] for m in ordered_metrics(list(metrics)) if "/" in m))
        if families:
            shown = f"{name(families[0])} per task" if len(families) == 1 else "Per task, a row per metric"
            emit(lambda: task_figure(summary, methods, families, s, f"{shown}: {where}", expected, styles),
                 _stem(*([slug(families[0])] if len(families) == 1 else []), "per_task", tag),
                 f"{', '.join(families)} per task and method{' (a row each)' if len(families) > 1 else ''}; {where}.")
        if headline == "map":  # retrieval: MAP against the time it took to rank (Merler et al.)
            emit(lambda: time_figure(summary, methods, "map", s, f"{name('map')} against scoring time: {where}", styles),
                 _stem("map_vs_test_s", tag), f"Mean average precision against scoring (ranking) time; {where}.")
        for label, (curves, x, ys) in drawn_curves(records, s).items():
            family = curves != [label]
            what = f"{label}, mean over {len(curves)}" if family else label
            members = f" (mean over {', '.join(c.split('/', 1)[1] for c in curves)})" if family else ""
            shown = _shared_words([name(y) for y in ys])
            emit(lambda: curve_figure(records, methods, curves, x, ys, s, f"{shown} against {_in_sentence(name(x))} "
                              f"({what}): {where}", styles),
                 _stem(slug(label), *([slug(ys[0])] if len(ys) == 1 else []), "vs", slug(x), tag),
                 f"{', '.join(ys)} against {x}{' (a panel each)' if len(ys) > 1 else ''}, curve {label!r}{members}; "
                 f"{where}.")
        for m in methods:
            plain = context(cfg, s, values.get(s), int(n_of.get(s, 1)), spread=False)
            emit(lambda: kernel_weight_figure(records, m, s, f"{m}'s learned weights: {plain}"),
                 _stem("weights", slug(m), tag), f"Share of each view in {m}'s learned weights; {plain}.")
    if headline:
        for key, rest, points in sweep_groups(summary, values):
            n = int(max(n_of.get(p[0], 1) for p in points))
            where = context(cfg, "", rest, n, varied=key)
            swept = parameter_label(key, run.protocol_name)
            emit(lambda: sweep_figure(summary, methods, headline, key, points, f"{name(headline)} against "
                              f"{_in_sentence(swept)}: {where}", expected, styles, run.protocol_name),
                 _stem(slug(headline), "vs", slug(key.split(".")[-1]), setting_slug("", rest)),
                 f"{name(headline)} against the swept {key}; {where}.")
    return drawn

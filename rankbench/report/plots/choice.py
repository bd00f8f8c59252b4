"""Which figures a run gets, with their file names, titles and captions. What is drawn is decided
by the run, not by the paper: the metrics' declarations (:mod:`rankbench.metrics`), the protocol's
headline metric, the settings' swept values and the curves the trials stored (``curves["cmc"]``
as a list, any other curve as a mapping of series, drawn as each declared metric series against
the first cost series, e.g. ``map@100`` against ``rank_s``)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Callable

import pandas as pd

from ...metrics import metric_info, metric_label
from ...runfolder import TrialRecord
from ..tables import headline_metric, is_cost, ordered_metrics, short_names, shown_value
from . import kinds
from .kinds import parameter_label
from .style import method_styles


def slug(s: str) -> str:
    """A readable file-name part: ``cmc@1`` -> ``cmc1``, ``rankers.*.K=4`` -> ``K-4``."""
    s = s.replace("@", "")
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in s).strip("_")[:60] or "all"


def setting_slug(label: str, values: dict[str, Any] | None, names: dict[str, str] | None = None) -> str:
    """A setting as a file-name part: its swept values by their keys'
    :func:`~rankbench.report.tables.short_names` (``names``: the run's; default: among ``values``),
    each number as exactly as it is needed."""
    if values:
        names = names or short_names(values)
        return "_".join(slug(f"{names.get(k, k)}-{shown_value(v)}") for k, v in values.items())
    return slug(label) if label else ""


def _stem(*parts: str) -> str:
    return "_".join(p for p in parts if p)




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
    parts += [f"{parameter_label(k, proto.get('name'))} = {shown_value(v)}" for k, v in shown.items()]
    if not values and setting:
        parts.append(setting)
    parts.append("1 trial" if n_trials == 1 else f"{n_trials} trials, mean ± 1 std" if spread
                 else f"mean of {n_trials} trials")
    return ", ".join(p for p in parts if p)


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


def default_max_rank(metrics: set[str]) -> int:
    """The largest rank the run tabulates (``cmc@K``), else 50."""
    ranks = [int(m[4:]) for m in metrics if m.startswith("cmc@") and m[4:].isdigit()]
    return max(ranks) if ranks else 50


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


@dataclass(frozen=True)
class Figure:
    """One figure a run gets: its file stem, its caption, and ``draw()``, which builds it (None when
    the data hold nothing to draw)."""

    stem: str
    caption: str
    draw: Callable[[], Any]


def run_figures(run, summary: pd.DataFrame, max_rank: int | None = None) -> list[Figure]:
    """Every figure ``run`` supports, in a fixed order: per setting its CMC curves (and those up to
    ``max_rank``), its headline metric's bars, per-task bars, MAP against scoring time, the stored
    curves and the methods' learned view weights; then a sweep figure of the headline metric per
    numeric swept key."""
    records, methods, cfg = run.records, run.methods, run.config
    expected: list[dict[str, Any]] = cfg.get("expected") or []
    values = run.setting_values()
    styles = method_styles(methods + [m for m in dict.fromkeys(summary["method"]) if m not in methods])
    methods = list(styles)
    metrics = set(summary["metric"])
    headline = headline_metric(run.protocol_name, metrics)
    rank_metrics = sorted(int(m[4:]) for m in metrics if m.startswith("cmc@") and m[4:].isdigit())
    n_of = summary.groupby("setting", sort=False)["n_trials"].max().to_dict()
    out: list[Figure] = []

    def name(metric: str) -> str:
        return metric_label(metric, unit=False)

    names = short_names(k for v in values.values() for k in v)
    for s in dict.fromkeys(summary["setting"]):
        where = context(cfg, s, values.get(s), int(n_of.get(s, 1)))
        tag = setting_slug(s, values.get(s), names)
        if any("cmc" in r.curves for r in records if r.setting == s):
            for mr, suffix in [(default_max_rank(metrics), "")] + ([(max_rank, f"rank{max_rank}")] if max_rank else []):
                out.append(Figure(_stem("cmc", tag, suffix), f"Cumulative matching characteristic up to rank {mr}; {where}.",
                                  partial(kinds.cmc_figure, records, methods, s, f"CMC: {where}", mr, rank_metrics,
                                          expected, styles)))
        if headline and not headline.startswith("cmc"):
            out.append(Figure(_stem(slug(headline), tag), f"{name(headline)} per method; {where}.",
                              partial(kinds.bar_figure, summary, methods, headline, s, f"{name(headline)}: {where}",
                                      expected, styles)))
        families = list(dict.fromkeys(m.split("/")[0] for m in ordered_metrics(list(metrics)) if "/" in m))
        if families:
            shown = f"{name(families[0])} per task" if len(families) == 1 else "Per task, a row per metric"
            out.append(Figure(_stem(*([slug(families[0])] if len(families) == 1 else []), "per_task", tag),
                              f"{', '.join(families)} per task and method{' (a row each)' if len(families) > 1 else ''}; "
                              f"{where}.",
                              partial(kinds.task_figure, summary, methods, families, s, f"{shown}: {where}", expected,
                                      styles)))
        if headline == "map":  # retrieval: MAP against the time it took to rank (Merler et al.)
            out.append(Figure(_stem("map_vs_test_s", tag),
                              f"Mean average precision against scoring (ranking) time; {where}.",
                              partial(kinds.time_figure, summary, methods, "map", s,
                                      f"{name('map')} against scoring time: {where}", styles)))
        for label, (curves, x, ys) in drawn_curves(records, s).items():
            family = curves != [label]
            what = f"{label}, mean over {len(curves)}" if family else label
            members = f" (mean over {', '.join(c.split('/', 1)[1] for c in curves)})" if family else ""
            shown = _shared_words([name(y) for y in ys])
            out.append(Figure(_stem(slug(label), *([slug(ys[0])] if len(ys) == 1 else []), "vs", slug(x), tag),
                              f"{', '.join(ys)} against {x}{' (a panel each)' if len(ys) > 1 else ''}, curve {label!r}"
                              f"{members}; {where}.",
                              partial(kinds.curve_figure, records, methods, curves, x, ys, s,
                                      f"{shown} against {_in_sentence(name(x))} ({what}): {where}", styles)))
        plain = context(cfg, s, values.get(s), int(n_of.get(s, 1)), spread=False)
        for m in methods:
            out.append(Figure(_stem("weights", slug(m), tag), f"Share of each view in {m}'s learned weights; {plain}.",
                              partial(kinds.kernel_weight_figure, records, m, s, f"{m}'s learned weights: {plain}")))
    if headline:
        for key, rest, points in sweep_groups(summary, values):
            where = context(cfg, "", rest, int(max(n_of.get(p[0], 1) for p in points)), varied=key)
            swept = parameter_label(key, run.protocol_name)
            out.append(Figure(_stem(slug(headline), "vs", slug(names.get(key, key)), setting_slug("", rest, names)),
                              f"{name(headline)} against the swept {key}; {where}.",
                              partial(kinds.sweep_figure, summary, methods, headline, key, points,
                                      f"{name(headline)} against {_in_sentence(swept)}: {where}", expected, styles,
                                      run.protocol_name)))
    return out

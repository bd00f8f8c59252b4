"""Grade a paper's relative claims: one method better than another, a gain from one setting to
another, a curve above another, a speed-up to reach another method's best.

Many papers report no table, only claims about their plots ("Imbalanced RankBoost reaches
RankBoost's MAP several times faster", "pairwise constraints cut the error"). A config states
them in a ``claims:`` list and every run grades them, OK or FAIL (GAP when the config documents a
``known_gap``), with the measured figures that decided the grade, so a stand-in dataset that does
not show a claim says so plainly. Four kinds:

``better``
    ``method`` beats ``than`` on ``metric`` (in the metric's declared direction) at every setting
    listed in ``settings`` (default: all), by at least ``by`` (absolute, default 0).
``improves``
    ``method``'s ``metric`` at setting ``to`` beats its value at setting ``from_`` (YAML key
    ``from``) by at least ``by``.
``dominates``
    ``method``'s curve ``curve`` (``y`` against ``x``, mean over trials) lies at or above (for
    a higher-is-better ``y``) ``than``'s wherever both are defined, within ``by``.
``speedup``
    ``method`` reaches ``than``'s best ``y`` at an ``x`` (e.g. ranking time) at least ``at_least``
    times smaller than the ``x`` at which ``than`` reaches it.

Curves are what protocols store per trial under ``curves[<curve>]`` as a mapping of series
(``{"rank_s": [...], "map@100": [...]}``); trials are averaged on a common grid of ``x`` (linear
interpolation, each trial's curve held flat after its last point).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..metrics import metric_info


def _higher(metric: str) -> bool:
    info = metric_info(metric)
    return True if info is None else info.higher_is_better


def _fmt(metric: str, v: float) -> str:
    info = metric_info(metric)
    return f"{100 * v:.2f}" if info is not None and info.rate else f"{v:.4g}"


def _value(idx: pd.DataFrame, setting: str, method: str, metric: str) -> float | None:
    key = (setting, method, metric)
    return float(idx.loc[key]["mean"]) if key in idx.index else None


def mean_curve(records: list[dict], method: str, curve: str, x: str, y: str,
               setting: str = "") -> tuple[np.ndarray, np.ndarray] | None:
    """The trials' mean ``y`` against ``x`` of one method (None when no trial stored it)."""
    series = []
    for r in records:
        c = (r.get("curves") or {}).get(curve)
        if r["method"] != method or r["setting"] != setting or not isinstance(c, dict):
            continue
        if x in c and y in c and len(c[x]):
            xs, ys = np.asarray(c[x], float), np.asarray(c[y], float)
            order = np.argsort(xs, kind="stable")
            series.append((xs[order], ys[order]))
    if not series:
        return None
    grid = np.unique(np.concatenate([s[0] for s in series]))
    ys = np.mean([np.interp(grid, sx, sy) for sx, sy in series], axis=0)
    return grid, ys


def _reach(xs: np.ndarray, ys: np.ndarray, target: float, higher: bool) -> float | None:
    hit = ys >= target if higher else ys <= target
    return float(xs[np.argmax(hit)]) if hit.any() else None


def grade_claims(claims: list[dict[str, Any]], summary: pd.DataFrame, records: list[dict],
                 setting_order: list[str], methods: list[str] | None = None) -> list[dict[str, Any]]:
    """One row per claim: grade, the measured figures behind it, source and note; NOT RUN when
    a method it names is outside ``methods``, the rankers the run computes (``--methods``)."""
    idx = summary.set_index(["setting", "method", "metric"])
    rows = []
    for c in claims:
        kind = c["kind"]
        row = {"claim": c.get("name") or _describe(c), "grade": "FAIL", "measured": "", "source": c.get("source", ""),
               "note": c.get("note", "")}
        if methods is not None and not {c["method"], c.get("than") or c["method"]} <= set(methods):
            rows.append({**row, "grade": "NOT RUN", "measured": "a method it names is not run (--methods)"})
            continue
        try:
            ok, measured = _GRADERS[kind](c, idx, records, setting_order)
        except _Missing as exc:
            row.update(grade="MISSING", measured=str(exc))
            rows.append(row)
            continue
        row["measured"] = measured
        row["grade"] = "OK" if ok else ("GAP" if c.get("known_gap") else "FAIL")
        if not ok and c.get("known_gap"):
            row["note"] = (row["note"] + " " if row["note"] else "") + f"known gap: {c['known_gap']}"
        rows.append(row)
    return rows


class _Missing(Exception):
    pass


def _describe(c: dict) -> str:
    k = c["kind"]
    if k == "better":
        return f"{c['method']} better than {c['than']} on {c['metric']}"
    if k == "improves":
        return f"{c['method']} {c['metric']}: {c['to']} better than {c['from_']}"
    if k == "dominates":
        return f"{c['method']} {c['y']} at or above {c['than']} at every {c['x']}"
    return f"{c['method']} reaches {c['than']}'s best {c['y']} {c['at_least']:g}x faster in {c['x']}"


def _better(c, idx, records, order):
    m, higher, by = c["metric"], _higher(c["metric"]), float(c.get("by") or 0.0)
    settings = order if not c.get("settings") else list(c["settings"])
    wins, parts = 0, []
    for s in settings:
        a, b = _value(idx, s, c["method"], m), _value(idx, s, c["than"], m)
        if a is None or b is None:
            raise _Missing(f"{m} of {c['method'] if a is None else c['than']} not measured"
                           + (f" at {s}" if s else ""))
        gain = (a - b) if higher else (b - a)
        wins += gain >= by
        parts.append(f"{(s.split('=')[-1] + ': ') if s else ''}{_fmt(m, a)} vs {_fmt(m, b)}")
    return wins == len(settings), f"{wins} of {len(settings)} settings ({'; '.join(parts)})"


def _improves(c, idx, records, order):
    m, higher, by = c["metric"], _higher(c["metric"]), float(c.get("by") or 0.0)
    a, b = _value(idx, c["to"], c["method"], m), _value(idx, c["from_"], c["method"], m)
    if a is None or b is None:
        raise _Missing(f"{m} of {c['method']} not measured at {c['to'] if a is None else c['from_']}")
    gain = (a - b) if higher else (b - a)
    return gain >= by, f"{_fmt(m, b)} -> {_fmt(m, a)} (needs a gain of {_fmt(m, by)})"


def _curves(c, records):
    setting = c.get("setting") or ""
    a = mean_curve(records, c["method"], c["curve"], c["x"], c["y"], setting)
    b = mean_curve(records, c["than"], c["curve"], c["x"], c["y"], setting)
    if a is None or b is None:
        raise _Missing(f"curve {c['curve']!r} of {c['method'] if a is None else c['than']} not stored")
    return a, b


def _dominates(c, idx, records, order):
    (ax, ay), (bx, by_) = _curves(c, records)
    lo, hi = max(ax[0], bx[0]), min(ax[-1], bx[-1])
    grid = np.unique(np.concatenate([ax, bx]))
    grid = grid[(grid >= lo) & (grid <= hi)]
    if not len(grid):
        raise _Missing(f"the {c['x']} ranges of the two curves do not overlap")
    fa, fb = np.interp(grid, ax, ay), np.interp(grid, bx, by_)
    higher = _higher(c["y"])
    gap = (fa - fb) if higher else (fb - fa)
    tol = float(c.get("by") or 0.0)
    ok = bool((gap >= -tol).all())
    worst = int(np.argmin(gap))
    return ok, (f"{int((gap >= -tol).sum())} of {len(grid)} {c['x']} points; worst at {c['x']} = "
                f"{grid[worst]:.3g}: {_fmt(c['y'], fa[worst])} vs {_fmt(c['y'], fb[worst])}")


def _speedup(c, idx, records, order):
    (ax, ay), (bx, by_) = _curves(c, records)
    higher = _higher(c["y"])
    best = float(by_.max() if higher else by_.min())
    xb, xa = _reach(bx, by_, best, higher), _reach(ax, ay, best, higher)
    if xa is None:
        return False, f"{c['method']} never reaches {c['than']}'s best {_fmt(c['y'], best)}"
    ratio = xb / max(xa, 1e-12)
    return ratio >= float(c["at_least"]), (f"{ratio:.2f}x ({c['x']} {xa:.3g} vs {xb:.3g} to reach "
                                           f"{_fmt(c['y'], best)}; needs {float(c['at_least']):g}x)")


_GRADERS = {"better": _better, "improves": _improves, "dominates": _dominates, "speedup": _speedup}


def claims_markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| claim | grade | measured | source | note |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['claim']} | {r['grade']} | {r['measured']} | {r['source']} | {r['note']} |")
    return "\n".join(lines)

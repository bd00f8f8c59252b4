"""Grade a paper's relative claims with paired statistics: one method better than another, a gain
from one setting to another, a curve above another, a speed-up to reach another method's best.

Many papers report no table, only claims about their plots ("Imbalanced RankBoost reaches
RankBoost's MAP several times faster", "pairwise constraints cut the error"). A config states
them in a ``claims:`` list and every run grades them with the figures that decided the grade, so
a stand-in dataset that does not show a claim says so plainly. Four kinds:

``better``
    ``method`` beats ``than`` on ``metric`` (in the metric's declared direction) at every setting
    listed in ``settings`` (default: all), by more than ``by`` (absolute, default 0).
``improves``
    ``method``'s ``metric`` at setting ``to`` beats ``from_method``'s ``from_metric`` (defaults:
    ``method`` and ``metric``) at setting ``from_`` (YAML key ``from``) by more than ``by``.
``dominates``
    ``method``'s curve ``curve`` (``y`` against ``x``) lies above (for a higher-is-better ``y``)
    ``than``'s over the x range ``span`` names: on average over that range, and nowhere below it by
    more than the tolerance ``by`` (default 0).
``speedup``
    ``method`` reaches the target ``level`` x ``than``'s best ``y`` (for a lower-is-better ``y``,
    that best / ``level``) at an ``x`` (e.g. ranking time) more than ``at_least`` times smaller
    than the ``x`` at which ``than`` reaches it (exactly ``at_least`` is short of it, as a gain of
    exactly ``by`` is). Both reaching it at ``x = 0`` is a tie.

The statistic
-------------
Every claim is a paired comparison (:func:`rankbench.report.compare.paired_stats`, the one
statistic ``compare`` prints): both sides are measured on the same splits, so the claim is judged
on the per-pair differences, their mean and its 95 % two-sided t-interval. ``unit`` names the pairs
of ``better`` and ``improves``: ``trials`` (default) pairs the trials both sides ran (across two
settings, only trials whose recorded train / test rows agree; a trial that repeats an earlier one's
whole split and both numbers, as a deterministic method on the dataset's own split does, is one
pair, not another); ``tasks`` pairs the per-task values
``metric/<task>`` of every trial x task (a paper whose significance statement is over its concepts).
Curves are paired per trial: each trial's curve is interpolated on a common grid of ``x`` (held
flat after its last point), and the pair is the mean gap over the grid (the area between the
curves over the width); ``speedup`` pairs the per-trial ratios on a log scale (the interval of
their geometric mean).

How a claim is graded
---------------------
(what each grade means: :class:`~rankbench.report.check.Grade`) OK needs the claimed sign with an
interval clear of the margin (zero, or ``by``); the right sign without it is a TREND, and so is any
claim on one pair, or an ``improves`` whose two settings share no trial's rows (unpaired: its
means' sign and margin can fail it, not pass it). Identical differences (zero variance) have no
t-interval: the exact two-sided sign test, p = 2^(1 - n), makes them OK from 6 pairs on. A tie is a FAIL; so is, for ``dominates``,
``than`` significantly above by more than ``by`` at some grid point, and for ``speedup`` never
reaching the target. VOID compares ``than`` (for ``improves`` the ``from`` side, for curves the end
of ``than``'s curve) with ``baseline_limit``, whatever the claim's outcome.

A claim over several settings takes the worst grade of its settings (FAIL, then VOID, then TREND):
requiring every setting to be significant on its own is an intersection-union test, valid at the
5 % level without a multiple-comparison correction.

Curves are what protocols store per trial under ``curves[<curve>]`` as a mapping of series
(``{"rank_s": [...], "map@100": [...]}``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypedDict

import numpy as np
import pandas as pd

from ..config import BaselineRef, ClaimCfg
from ..metrics import metric_info
from ..runfolder import TrialRecord, TrialSplit
from .check import Grade
from .compare import IDENTICAL, TESTED, PairedStats, mean_interval, paired_stats, rows_key
from .tables import higher_is_better, setting_title, trials_frame

#: how a claim over several settings (or a curve with failing points) combines its parts: worst first
_WORST_FIRST = (Grade.FAIL, Grade.VOID, Grade.TREND, Grade.OK)
#: pairs needed before identical differences count as significant (two-sided sign test p = 2^(1-n) < 0.05)
SIGN_TEST_PAIRS = 6


def _fmt(metric: str, v: float) -> str:
    info = metric_info(metric)
    return f"{100 * v:.2f}" if info is not None and info.rate else f"{v:.4g}"


def _signed(metric: str, v: float) -> str:
    return ("+" if v >= 0 else "-") + _fmt(metric, abs(v))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


# ----------------------------------------------------------------------------- the one judgement
@dataclass
class Judged:
    """A paired comparison graded against a claim: the grade, and what to add to the figures."""

    grade: Grade
    why: str = ""


def judge(st: PairedStats, higher: bool, margin: float = 0.0) -> Judged:
    """Grade :func:`paired_stats` of ``a - b`` for the claim "a beats b by more than ``margin``"
    (``higher``: whether larger values are better). See the module docstring for the rules."""
    n = st.n_trials
    gain = st.diff if higher else -st.diff
    low = st.ci_low if higher else -st.ci_high
    if n == 0:
        return Judged(Grade.FAIL, "no pair")
    if not gain - margin > IDENTICAL:
        why = "a tie" if abs(gain) <= IDENTICAL else "the wrong sign" if gain < 0 else "short of the margin"
        return Judged(Grade.FAIL, why)
    if st.test == TESTED:
        return Judged(Grade.OK if low > margin else Grade.TREND, "" if low > margin else "not significant")
    if st.test == "identical differences":
        p = 2.0 ** (1 - n)
        return Judged(Grade.OK if n >= SIGN_TEST_PAIRS else Grade.TREND,
                      f"identical differences: no t-interval; sign test p = {p:.3g}")
    return Judged(Grade.TREND, f"{_plural(n, 'trial')}: no test possible")


def _interval(metric: str, st: PairedStats) -> str:
    """``-0.90 [-3.10, +1.30]``: the mean difference and its interval, in the metric's units."""
    d = _signed(metric, st.diff)
    if st.test != TESTED:
        return d
    return f"{d} [{_signed(metric, st.ci_low)}, {_signed(metric, st.ci_high)}]"


def _worse(value: float, limit: float, higher: bool) -> bool:
    return value < limit if higher else value > limit


def _void_text(who: str, metric: str, value: float, limit: tuple[float, str], higher: bool) -> str:
    bound, what = limit
    return (f"{who} {_fmt(metric, value)} is worse than the paper's own baseline "
            f"({'>=' if higher else '<='} {_fmt(metric, bound)}{what}): not a fair test")


# ----------------------------------------------------------------------------- what a run holds
@dataclass
class _Run:
    """The parts of a run the graders read, with the per-trial values built once."""

    records: list[TrialRecord]
    setting_order: list[str]
    splits: dict[str, dict[int, TrialSplit]] | None = None
    values: dict[str, dict[str, Any]] = field(default_factory=dict)

    @cached_property
    def trials(self) -> pd.DataFrame:
        return trials_frame(self.records)

    def title(self, setting: str) -> str:
        return setting_title(setting, self.values.get(setting)) if setting else ""

    def series(self, setting: str, method: str, metric: str, unit: str) -> pd.Series:
        """One side's values, indexed by trial (``unit: trials``) or by (trial, task)."""
        t = self.trials
        sel = t[(t["setting"] == setting) & (t["method"] == method)]
        if unit == "tasks":
            sel = sel[sel["metric"].str.startswith(metric + "/")]
            index = pd.MultiIndex.from_arrays([sel["trial"], sel["metric"].str.split("/", n=1).str[1]])
        else:
            sel = sel[sel["metric"] == metric]
            index = pd.Index(sel["trial"])
        return pd.Series(sel["value"].to_numpy(float), index=index).sort_index()

    def limit(self, limit: float | BaselineRef | None) -> tuple[float, str] | None:
        """A claim's ``baseline_limit`` as (value, what it is): a number, or the mean of a measured
        value of the run (:class:`~rankbench.config.BaselineRef`)."""
        if limit is None:
            return None
        if not isinstance(limit, BaselineRef):
            return float(limit), ""
        s = self.series(limit.setting, limit.method, limit.metric, "trials")
        where = f" at {self.title(limit.setting)}" if limit.setting else ""
        if s.empty:
            raise _Missing(f"baseline_limit: {limit.metric} of {limit.method} not measured{where}")
        return float(s.mean()), f", {limit.method}'s {limit.metric}{where}"

    def task_families_hint(self, unit: str) -> str:
        """For a ``unit: tasks`` claim that found nothing: the per-task families the run has."""
        if unit != "tasks":
            return ""
        fams = sorted({m.split("/", 1)[0] for m in self.trials["metric"] if "/" in m})
        return f" (per-task values in this run: {', '.join(f'{f}/<task>' for f in fams) or 'none'})"

    def repeats(self, setting: str, a: pd.Series, b: pd.Series) -> list[int]:
        """The trials of ``a`` and ``b`` (indexed by trial) that repeat an earlier one: the same
        split but for its number and seeds (a protocol that draws nothing: the dataset's own split)
        and the same two values. A deterministic method gives such a trial its number again, and
        counted again it would make a sign test of one result (p = 2^(1 - n))."""
        splits = (self.splits or {}).get(setting, {})
        seen, out = {}, []
        for t in a.index:
            split = splits.get(t)
            if split is None:
                continue
            key = (json.dumps(split.model_dump(exclude={"trial", "seed", "ranker_seed"}), sort_keys=True),
                   float(a[t]), float(b[t]))
            if key in seen:
                out.append(int(t))
            seen.setdefault(key, t)
        return out

    def same_rows(self, setting_a: str, setting_b: str, trials) -> tuple[list[int], list[int]]:
        """(trials whose train / test rows agree between two settings, trials whose rows differ);
        every trial agrees when the settings are the same or the run recorded no splits."""
        trials = sorted(set(trials))
        if setting_a == setting_b or self.splits is None:
            return trials, []
        a, b = self.splits.get(setting_a, {}), self.splits.get(setting_b, {})
        keep = [t for t in trials if rows_key(a.get(t)) is not None and rows_key(a.get(t)) == rows_key(b.get(t))]
        return keep, [t for t in trials if t not in keep]


class _Missing(Exception):
    pass


# ----------------------------------------------------------------------------- grading
#: a claim graded (:func:`grade_claims`): its name, grade, the figures that decided it, source and note
GradedClaim = TypedDict("GradedClaim", {"claim": str, "grade": Grade, "measured": str, "source": str, "note": str})


def grade_claims(claims: list[ClaimCfg], records: list[TrialRecord], setting_order: list[str],
                 splits: dict[str, dict[int, TrialSplit]] | None = None,
                 values: dict[str, dict[str, Any]] | None = None,
                 methods: list[str] | None = None,
                 failed: dict[str, str] | None = None) -> list[GradedClaim]:
    """One row per claim: ``claim``, ``grade``, ``measured`` (the figures that decided it),
    ``source`` and ``note``; NOT RUN when a method it names is outside ``methods``, the rankers
    the run computes (``--methods``).

    Parameters
    ----------
    claims : the config's claims.
    records : the run's trial records (per-trial ``metrics`` and ``curves``).
    setting_order : the run's settings in sweep order (a claim without ``settings`` grades all).
    splits : each setting's recorded split per trial (``RunData.splits_of``), to pair trials of two
        settings only where their train / test rows agree; None pairs them by trial index.
    values : each setting's swept values, to name settings as ``K = 4`` instead of their labels.
    methods : the rankers the run computes (None: every method a claim names).
    failed : methods with failed jobs, each with why; a claim naming one is graded FAILED.
    """
    run = _Run(records, setting_order, splits, values or {})
    rows = []
    for c in claims:
        row = {"claim": c.name or _describe(c), "grade": Grade.FAIL, "measured": "", "source": c.source,
               "note": c.note}
        named = {c.method, c.than or c.method, c.from_method or c.method}
        if methods is not None and not named <= set(methods):
            rows.append({**row, "grade": Grade.NOT_RUN, "measured": "a method it names is not run (--methods)"})
            continue
        broken = [m for m in sorted(named) if m in (failed or {})]
        if broken:
            rows.append({**row, "grade": Grade.FAILED, "measured": "; ".join(f"{m}: {failed[m]}" for m in broken)})
            continue
        try:
            grade, measured = _GRADERS[c.kind](c, run)
        except _Missing as exc:
            row.update(grade=Grade.MISSING, measured=str(exc))
            rows.append(row)
            continue
        if grade in (Grade.FAIL, Grade.TREND) and c.known_gap:
            grade = Grade.GAP
            row["note"] = (row["note"] + " " if row["note"] else "") + f"known gap: {c.known_gap}"
        row.update(grade=grade, measured=measured)
        rows.append(row)
    return rows


def _describe(c: ClaimCfg) -> str:
    if c.kind == "better":
        return f"{c.method} better than {c.than} on {c.metric}"
    if c.kind == "improves":
        src, src_metric = c.from_method or c.method, c.from_metric or c.metric
        before = c.from_ if (src, src_metric) == (c.method, c.metric) else f"{src}'s {src_metric} at {c.from_}"
        return f"{c.method} {c.metric}: {c.to} better than {before}"
    if c.kind == "dominates":
        return f"{c.method}'s {c.y} above {c.than}'s over {c.x}"
    target = f"{c.level:.0%} of {c.than}'s best" if c.level < 1 else f"{c.than}'s best"
    return f"{c.method} reaches {target} {c.y} {c.at_least:g}x faster in {c.x}"


def _pair(a: pd.Series, b: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    a, b = a.align(b, join="inner")
    return a.to_numpy(float), b.to_numpy(float)


def _units(st: PairedStats, unit: str) -> str:
    return _plural(st.n_trials, "trial" if unit == "trials" else "trial x task pair")


def _better(c: ClaimCfg, run: _Run) -> tuple[Grade, str]:
    m, higher, unit, limit = c.metric, higher_is_better(c.metric), c.unit, run.limit(c.baseline_limit)
    settings = list(c.settings or run.setting_order)
    grades, parts = [], []
    for s in settings:
        sa, sb = run.series(s, c.method, m, unit), run.series(s, c.than, m, unit)
        if sa.empty or sb.empty:
            what = f"per-task {m}" if unit == "tasks" else m
            raise _Missing(f"{what} of {c.method if sa.empty else c.than} not measured"
                           + (f" at {run.title(s)}" if s else "") + run.task_families_hint(unit))
        sa, sb = sa.align(sb, join="inner")
        again = run.repeats(s, sa, sb) if unit == "trials" else []
        a, b = _pair(sa.drop(again), sb.drop(again))
        if not len(a):
            raise _Missing(f"{c.method} and {c.than} share no trial" + (f" at {run.title(s)}" if s else ""))
        st = paired_stats(a, b)
        j = judge(st, higher, c.by)
        if limit is not None and _worse(st.mean_b, limit[0], higher):
            j = Judged(Grade.VOID, _void_text(c.than, m, st.mean_b, limit, higher))
        grades.append(j.grade)
        where = f"{run.title(s)}: " if s else ""
        parts.append(f"{where}{_fmt(m, st.mean_a)} vs {_fmt(m, st.mean_b)}, {_interval(m, st)} over "
                     f"{_units(st, unit)}" + (f" ({len(again)} more repeat a trial's split and numbers)"
                                              if again else "") + f": {j.grade}" + (f" ({j.why})" if j.why else ""))
    head = _tally(grades, "setting") if len(settings) > 1 else ""
    return min(grades, key=_WORST_FIRST.index), (head + "; ".join(parts))


def _tally(grades: list[Grade], what: str) -> str:
    """``OK at 3, TREND at 2 of 5 settings: ``."""
    counts = [f"{g} at {grades.count(g)}" for g in (Grade.OK, Grade.TREND, Grade.VOID, Grade.FAIL) if g in grades]
    return f"{', '.join(counts)} of {len(grades)} {what}s: "


def _improves(c: ClaimCfg, run: _Run) -> tuple[Grade, str]:
    m, higher, unit, limit = c.metric, higher_is_better(c.metric), c.unit, run.limit(c.baseline_limit)
    from_method, from_metric = c.from_method or c.method, c.from_metric or m
    sa = run.series(c.to, c.method, m, unit)
    sb = run.series(c.from_, from_method, from_metric, unit)
    if sa.empty or sb.empty:
        who, what, where = (c.method, m, c.to) if sa.empty else (from_method, from_metric, c.from_)
        raise _Missing(f"{'per-task ' if unit == 'tasks' else ''}{what} of {who} not measured"
                       + (f" at {run.title(where)}" if where else "") + run.task_families_hint(unit))
    shared = sorted(set(sa.index.get_level_values(0)) & set(sb.index.get_level_values(0)))
    if not shared:
        raise _Missing(f"{c.method} at {run.title(c.to) or 'the run'} and {from_method} at "
                       f"{run.title(c.from_) or 'the run'} share no trial")
    keep, dropped = run.same_rows(c.to, c.from_, shared)
    means = (float(sa.mean()), float(sb.mean()))   # without pairs, the sign and margin are all there is
    sa, sb = (x[x.index.get_level_values(0).isin(keep)] for x in (sa, sb))
    sa, sb = sa.align(sb, join="inner")
    again = run.repeats(c.to, sa, sb) if unit == "trials" else []
    a, b = _pair(sa.drop(again), sb.drop(again))
    st = paired_stats(a, b)
    if len(a):
        j = judge(st, higher, c.by)
    else:
        short = judge(paired_stats([means[0]], [means[1]]), higher, c.by)
        j = Judged(Grade.FAIL if short.grade == Grade.FAIL else Grade.TREND,
                   "no trial shares its train / test rows between the two settings: no paired test possible"
                   + (f"; the means show {short.why}" if short.grade == Grade.FAIL else ""))
    if limit is not None and len(a) and _worse(st.mean_b, limit[0], higher):
        j = Judged(Grade.VOID, _void_text(f"{from_method} at {run.title(c.from_)}", from_metric, st.mean_b,
                                          limit, higher))
    left = (f"; trial(s) {', '.join(map(str, dropped))} left out: their train / test rows differ between the "
            "settings" if dropped else "")
    if not len(a):
        return j.grade, f"{_fmt(from_metric, means[1])} -> {_fmt(m, means[0])} (means; {j.why}){left}"
    margin = f"; needs a gain above {_fmt(m, c.by)}" if c.by else ""
    return j.grade, (f"{_fmt(from_metric, st.mean_b)} -> {_fmt(m, st.mean_a)}, {_interval(m, st)} over "
                     f"{_units(st, unit)}" + (f" ({len(again)} more repeat a trial's split and numbers)"
                                              if again else "") + f"{margin}" + (f" ({j.why})" if j.why else "")
                     + left)


# ----------------------------------------------------------------------------- curves
def trial_curves(records: list[TrialRecord], method: str, curve: str, x: str, y: str,
                 setting: str = "") -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Each trial's ``(x, y)`` of one method's stored curve, sorted by ``x``."""
    out = {}
    for r in records:
        c = r.curves.get(curve)
        if r.method != method or r.setting != setting or not isinstance(c, dict):
            continue
        if x in c and y in c and len(c[x]):
            xs, ys = np.asarray(c[x], float), np.asarray(c[y], float)
            order = np.argsort(xs, kind="stable")
            out[r.trial] = (xs[order], ys[order])
    return out


def mean_curve(records: list[TrialRecord], method: str, curve: str, x: str, y: str,
               setting: str = "") -> tuple[np.ndarray, np.ndarray] | None:
    """The trials' mean ``y`` against ``x`` of one method (None when no trial stored it): each
    trial interpolated on the union of their ``x`` points, held flat after its last point."""
    series = list(trial_curves(records, method, curve, x, y, setting).values())
    if not series:
        return None
    grid = np.unique(np.concatenate([s[0] for s in series]))
    return grid, np.mean([np.interp(grid, sx, sy) for sx, sy in series], axis=0)


def _curve_pair(c: ClaimCfg, run: _Run):
    """Both methods' per-trial curves, on the trials both stored."""
    setting = c.setting or ""
    a = trial_curves(run.records, c.method, c.curve, c.x, c.y, setting)
    b = trial_curves(run.records, c.than, c.curve, c.x, c.y, setting)
    if not a or not b:
        named = [s for s in run.setting_order if s]
        hint = (f" at {run.title(setting) if setting else 'no setting'}; this run's settings are "
                f"{', '.join(named)}: give the claim one of them as setting:" if named and setting not in named else
                f" as series {c.x!r} and {c.y!r}")
        raise _Missing(f"curve {c.curve!r} of {c.method if not a else c.than} not stored{hint}")
    trials = sorted(set(a) & set(b))
    if not trials:
        raise _Missing(f"{c.method} and {c.than} share no trial with curve {c.curve!r}")
    return trials, [a[t] for t in trials], [b[t] for t in trials]


def _curve_end_void(c: ClaimCfg, b: list, run: _Run) -> Judged | None:
    """VOID when ``than``'s curves end (on average) worse than the claim's ``baseline_limit``."""
    limit = run.limit(c.baseline_limit)
    if limit is None:
        return None
    higher = higher_is_better(c.y)
    end = float(np.mean([ys[-1] for _, ys in b]))
    return Judged(Grade.VOID, _void_text(f"{c.than}'s final {c.y}", c.y, end, limit, higher)) \
        if _worse(end, limit[0], higher) else None


def _dominates(c: ClaimCfg, run: _Run) -> tuple[Grade, str]:
    from scipy.integrate import trapezoid

    _, a, b = _curve_pair(c, run)
    higher, tol, xname = higher_is_better(c.y), c.by, c.x
    first_a, last_a = min(xs[0] for xs, _ in a), max(xs[-1] for xs, _ in a)
    first_b, last_b = min(xs[0] for xs, _ in b), max(xs[-1] for xs, _ in b)
    lo = max(first_a, first_b)
    hi = max(last_a, last_b) if c.span == "union" else min(last_a, last_b)
    grid = np.unique(np.concatenate([xs for xs, _ in a + b]))
    grid = grid[(grid >= lo) & (grid <= hi)]
    if not len(grid):
        raise _Missing(f"the {xname} ranges of the two curves do not overlap")
    fa = np.array([np.interp(grid, xs, ys) for xs, ys in a])
    fb = np.array([np.interp(grid, xs, ys) for xs, ys in b])
    gap = (fa - fb) if higher else (fb - fa)          # per trial x point, positive where method is better
    width = grid[-1] - grid[0]
    area = trapezoid(gap, grid, axis=1) / width if width > 0 else gap[:, 0]
    st = paired_stats(area, np.zeros_like(area))
    j = judge(st, True)
    n = len(a)
    mean_gap, sd, half = mean_interval(gap)
    if n > 1:  # a point where every trial differs alike is significant by the sign test only (judge)
        half = np.where(sd <= IDENTICAL, 0.0 if n >= SIGN_TEST_PAIRS else np.inf, half)
    below = mean_gap + half < -tol - IDENTICAL           # the other method significantly above here
    at_or_above = int((mean_gap >= -tol - IDENTICAL).sum())
    worst = int(np.argmin(mean_gap))
    ya, yb = fa.mean(axis=0), fb.mean(axis=0)
    text = (f"mean gap {_interval(c.y, st)} over {xname} {grid[0]:.3g} to {grid[-1]:.3g} ({_plural(n, 'trial')})"
            + (f" ({j.why})" if j.why else "")
            + f"; {at_or_above} of {len(grid)} {xname} points at or above; worst at {xname} = {grid[worst]:.3g}: "
              f"{_fmt(c.y, ya[worst])} vs {_fmt(c.y, yb[worst])}")
    grade = j.grade
    if below.any():
        grade = Grade.FAIL
        text += (f"; {c.than} significantly above at {int(below.sum())} point(s), from {xname} = "
                 f"{grid[np.argmax(below)]:.3g}")
    void = _curve_end_void(c, b, run)
    return (void.grade, f"{void.why}; {text}") if void is not None else (grade, text)


def _reach(xs: np.ndarray, ys: np.ndarray, target: float, higher: bool) -> float | None:
    hit = ys >= target - IDENTICAL if higher else ys <= target + IDENTICAL
    return float(xs[np.argmax(hit)]) if hit.any() else None


def _speedup(c: ClaimCfg, run: _Run) -> tuple[Grade, str]:
    trials, a, b = _curve_pair(c, run)
    higher, level, need = higher_is_better(c.y), c.level, c.at_least
    y = c.y
    ratios, never, xa_all, xb_all, targets = [], [], [], [], []
    what = (f"{c.than}'s best {y}" if level == 1 else f"{level:.0%} of {c.than}'s best {y}" if higher
            else f"{c.than}'s best {y} / {level:g}")
    for t, (ax, ay), (bx, by_) in zip(trials, a, b):
        best = float(by_.max() if higher else by_.min())
        target = level * best if higher else best / level
        xb, xa = _reach(bx, by_, target, higher), _reach(ax, ay, target, higher)
        if xb is None:   # a target beyond than's own best: a y of the other sign than level assumes
            raise _Missing(f"{c.than} never reaches {what} ({_fmt(y, target)}) itself in trial {t}: level "
                           f"needs a {'positive' if higher else 'negative'} best {y}")
        targets.append(target)
        if xa is None:
            never.append(t)
            continue
        xa_all.append(xa)
        xb_all.append(xb)
        floor = min((x for x in (*ax, *bx) if x > 0), default=1e-12)   # both at x = 0: a tie, not 0x
        ratios.append(max(xb, floor) / max(xa, floor))
    void = _curve_end_void(c, b, run)
    if never:
        text = (f"{c.method} never reaches {what} ({_fmt(y, float(np.mean(targets)))}) in "
                f"{len(never)} of {_plural(len(a), 'trial')}"
                + (f" (trial(s) {', '.join(map(str, never))})" if len(a) > 1 else ""))
        return (void.grade, f"{void.why}; {text}") if void is not None else (Grade.FAIL, text)
    logs = np.log(ratios)
    st = paired_stats(logs, np.zeros_like(logs))
    j = judge(st, True, float(np.log(need)))
    gm = float(np.exp(st.diff))
    spread = (f" [{np.exp(st.ci_low):.2f}, {np.exp(st.ci_high):.2f}]" if st.test == TESTED else "")
    mean_of = "geometric mean over " + _plural(len(ratios), "trial") if len(ratios) > 1 else "1 trial"
    text = (f"{gm:.2f}x{spread} ({mean_of}; {c.x} {np.mean(xa_all):.3g} vs {np.mean(xb_all):.3g} to reach "
            f"{what}, {_fmt(y, float(np.mean(targets)))}; needs {need:g}x)" + (f" ({j.why})" if j.why else ""))
    return (void.grade, f"{void.why}; {text}") if void is not None else (j.grade, text)


_GRADERS = {"better": _better, "improves": _improves, "dominates": _dominates, "speedup": _speedup}


def claims_markdown(rows: list[GradedClaim]) -> str:
    lines = ["| claim | grade | measured | source | note |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['claim']} | {r['grade']} | {r['measured']} | {r['source']} | {r['note']} |")
    return "\n".join(lines)

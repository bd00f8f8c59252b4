"""Paired comparisons: two runs on the same splits, or two methods of one run.

A difference between two methods (or two runs of a method) is only meaningful against the spread
of the trials they share. Each trial scores both sides on the same split (same seed, same train
and test rows), so the per-trial differences ``d_t = a_t - b_t`` are paired: we report their mean,
a 95 % confidence interval ``mean ± t_{0.975, n-1} s / sqrt(n)``, the paired t-test's p-value and
the Wilcoxon signed-rank test's p-value (:mod:`scipy.stats`). Whether the splits really are the
same is read from both runs' ``splits.json``; trials whose splits differ are still compared, with
a warning, since their differences then mix the methods with the draw of the data. Runs on
different data (another dataset, its content or its number of items, as each run's ``splits.json``
and config record them) are refused: their trials share no items to pair.

Where no test applies (:func:`paired_stats`) the table says why. The p-values of one table are
adjusted together by Holm's method (:func:`holm`; ``correction="none"`` keeps them raw), as
several comparisons at once make some "significant" difference likely by chance.
:func:`paired_stats` is the one statistic behind both ``compare`` and the graded claims.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..errors import RankbenchError
from ..runfolder import ROW_KEYS, TrialSplit
from .tables import fmt_value, higher_is_better, is_cost, ordered_metrics, setting_title, trials_frame

COLUMNS = ["setting", "a", "b", "metric", "n_trials", "mean_a", "mean_b", "diff", "ci_low", "ci_high",
           "t_p", "wilcoxon_p", "t_p_adj", "wilcoxon_p_adj", "test", "same_splits", "better"]
#: multiple-comparison corrections ``compare`` offers
CORRECTIONS = ("holm", "none")
#: what the ``test`` column says when a test applies
TESTED = "t"
#: differences closer than this are the same number (a rounding error is not a spread)
IDENTICAL = 1e-12


class CompareError(RankbenchError):
    """Two things that cannot be compared (nothing in common, an unknown method or metric)."""


@dataclass
class Comparison:
    """Paired differences ``a - b`` per setting and metric (``table``) and what to beware of."""

    table: pd.DataFrame
    a_label: str
    b_label: str
    warnings: list[str] = field(default_factory=list)
    #: which multiple-comparison correction the table's adjusted p-values carry, in one sentence
    correction: str = ""

    def to_csv(self) -> str:
        """Fractions as stored (not %), one row per setting x pair x metric."""
        return self.table.to_csv(index=False)

    def to_markdown(self, alpha: float = 0.05) -> str:
        return comparison_markdown(self, alpha)


def mean_interval(d, level: float = 0.95):
    """Mean, standard deviation (ddof = 1) and half-width ``t_{(1+level)/2, n-1} s / sqrt(n)`` of
    the two-sided t-interval of the mean, along the first axis of ``d`` (one row per pair; any
    further axes, e.g. the points of a curve, are computed at once). The half-width is NaN for
    fewer than two rows."""
    from scipy import stats

    d = np.asarray(d, float)
    n = d.shape[0]
    mean = d.mean(axis=0) if n else np.full(d.shape[1:], np.nan)
    if n < 2:
        nan = np.full(np.shape(mean), np.nan)
        return mean, nan, nan
    sd = d.std(axis=0, ddof=1)
    return mean, sd, stats.t.ppf((1 + level) / 2, n - 1) * sd / np.sqrt(n)


@dataclass(frozen=True)
class PairedStats:
    """The paired comparison of ``a - b`` (:func:`paired_stats`): ``n_trials`` pairs, both means,
    ``diff`` (mean of ``a - b``), ``sd`` (of the differences, ddof = 1), the 95 % t-interval
    ``ci_low`` / ``ci_high``, the paired t-test's and Wilcoxon's p-values, and ``test``: ``"t"``
    (:data:`TESTED`) when the interval and tests apply, else why not (the interval and p-values NaN)."""

    n_trials: int
    mean_a: float
    mean_b: float
    diff: float
    sd: float
    ci_low: float = np.nan
    ci_high: float = np.nan
    t_p: float = np.nan
    wilcoxon_p: float = np.nan
    test: str = TESTED


def paired_stats(a, b) -> PairedStats:
    """Mean difference, its 95 % t-interval and the paired t-test and Wilcoxon p-values of ``a - b``.

    No test applies (``test`` says why) for fewer than two pairs (``"1 trial"``) or when every
    difference is the same, zero or not (``"identical differences"``); differences within
    :data:`IDENTICAL` of each other count as identical (a rounding error is not a spread).
    """
    from scipy import stats

    a, b = np.asarray(a, float), np.asarray(b, float)
    d = a - b
    n = len(d)
    means = (float(a.mean()), float(b.mean()), float(d.mean())) if n else (np.nan,) * 3
    if n < 2:
        return PairedStats(n, *means, sd=np.nan, test=f"{n} trial" + ("s" if n != 1 else ""))
    if np.ptp(d) <= IDENTICAL:
        return PairedStats(n, *means, sd=0.0, test="identical differences")
    _, sd, half = mean_interval(d)
    with warnings.catch_warnings():  # small samples: scipy notes it falls back to an approximation
        warnings.simplefilter("ignore")
        t_p, w_p = float(stats.ttest_rel(a, b).pvalue), float(stats.wilcoxon(d).pvalue)
    return PairedStats(n, *means, sd=float(sd), ci_low=means[2] - half, ci_high=means[2] + half, t_p=t_p,
                       wilcoxon_p=w_p)


def holm(p) -> np.ndarray:
    """Holm's step-down adjustment of a family of p-values (NaN entries are not tests and stay NaN).

    The k-th smallest of m p-values becomes ``max over j <= k of min(1, (m - j + 1) p_(j))``; a
    difference is then significant at ``alpha`` when its adjusted p-value is below ``alpha``, with
    the chance of any false positive in the family at most ``alpha``.
    """
    p = np.asarray(p, float)
    out = np.full_like(p, np.nan)
    ok = ~np.isnan(p)
    m = int(ok.sum())
    if m:
        order = np.argsort(p[ok], kind="stable")
        scaled = np.minimum(1.0, (m - np.arange(m)) * p[ok][order])
        adj = np.empty(m)
        adj[order] = np.maximum.accumulate(scaled)
        out[ok] = adj
    return out


def split_key(split: TrialSplit | None) -> str | None:
    """A recorded split whole (its seeds, rows and the protocol's own keys, not its trial's number) as
    one comparable string; None for an unknown split."""
    if split is None:
        return None
    return json.dumps(split.model_dump(exclude={"trial"}), sort_keys=True)


def rows_key(split: TrialSplit | None) -> str | None:
    """The data partition of a recorded split (its :data:`ROW_KEYS` lists) as one comparable
    string; None for an unknown split. Trials of two settings with the same rows are paired on the
    same data even when the rest of their splits (e.g. the constraints each setting draws) differ."""
    if split is None:
        return None
    return json.dumps(split.model_dump(include=set(ROW_KEYS)), sort_keys=True)


def _better(metric: str, st, a: str, b: str, alpha: float = 0.05) -> str:
    """Which side is better by the (adjusted) t-test, or why neither is."""
    p = st["t_p_adj"] if "t_p_adj" in st else st["t_p"]
    if st.get("test", TESTED) != TESTED:
        return f"no test applies ({st['test']})"
    if np.isnan(p) or p >= alpha or st["diff"] == 0:
        return "no significant difference"
    a_wins = (st["diff"] > 0) == higher_is_better(metric)
    return a if a_wins else b


def _metrics_for(wanted: list[str] | None, have_a: set[str], have_b: set[str], a: str, b: str) -> list[str]:
    common = have_a & have_b
    if wanted:
        for m in wanted:
            if m not in common:
                where = a if m not in have_a else b
                plain = ", ".join(ordered_metrics([x for x in common if "/" not in x])) or "none"
                raise CompareError(f"{where}: --metric: expected a metric both sides measure ({plain}), got {m!r}")
        return list(dict.fromkeys(wanted))
    return ordered_metrics([m for m in common if "/" not in m and not is_cost(m)])


def _pairs(ta: pd.DataFrame, tb: pd.DataFrame, setting: str, metric: str, method_a: str, method_b: str):
    """Per-trial values of both sides on the trials they share, sorted by trial."""
    xa = ta[(ta.setting == setting) & (ta.method == method_a) & (ta.metric == metric)].set_index("trial")["value"]
    xb = tb[(tb.setting == setting) & (tb.method == method_b) & (tb.metric == metric)].set_index("trial")["value"]
    shared = sorted(set(xa.index) & set(xb.index))
    return shared, xa.loc[shared].to_numpy(float), xb.loc[shared].to_numpy(float)


def _finish(rows: list[dict[str, Any]], correction: str, sides: tuple[str, str],
            alpha: float = 0.05) -> tuple[pd.DataFrame, str]:
    """The table with its tests' p-values adjusted together and, per row, which side is better;
    and one sentence saying which correction was applied."""
    table = pd.DataFrame(rows, columns=COLUMNS)
    tested = int(table["t_p"].notna().sum())
    if correction == "holm" and tested > 1:
        table["t_p_adj"], table["wilcoxon_p_adj"] = holm(table["t_p"]), holm(table["wilcoxon_p"])
        note = (f"p-values adjusted by Holm's method over the {tested} tests of this table; each row's 95 % "
                "interval is its own, not adjusted (it may exclude 0 where the adjusted test finds no difference)")
    else:
        table["t_p_adj"], table["wilcoxon_p_adj"] = table["t_p"], table["wilcoxon_p"]
        note = ("no test applies to any row (too few trials, or identical differences)" if tested == 0 else
                "no multiple-comparison correction (one test)" if tested == 1 else
                f"no multiple-comparison correction over the {tested} tests of this table (--correction none)")
    table["better"] = [_better(r["metric"], r, *sides, alpha) for r in table.to_dict("records")]
    return table, note


def compare_runs(run_a, run_b, metrics: list[str] | None = None, correction: str = "holm") -> Comparison:
    """Every method present in both runs, paired over the trials both ran, per shared setting; the
    p-values of all of them adjusted together (``correction``: ``holm`` or ``none``)."""
    ta, tb = trials_frame(run_a.records), trials_frame(run_b.records)
    label_a, label_b = str(run_a.folder.path), str(run_b.folder.path)
    settings = [s for s in run_a.setting_order if s in set(run_b.setting_order)]
    if not settings:
        raise CompareError(f"{label_b}: no setting in common with {label_a} "
                           f"({', '.join(run_a.setting_order) or 'no sweep'} vs {', '.join(run_b.setting_order) or 'no sweep'})")
    methods = [m for m in run_a.methods if m in set(tb["method"]) and m in set(ta["method"])]
    if not methods:
        raise CompareError(f"{label_b}: no method in common with {label_a} "
                           f"({', '.join(run_a.methods)} vs {', '.join(run_b.methods)})")
    chosen = _metrics_for(metrics, set(ta[ta.method.isin(methods)].metric), set(tb[tb.method.isin(methods)].metric),
                          label_a, label_b)
    rows, warnings = [], []
    for s in settings:
        other = dataset_difference(run_a, run_b, s)
        if other:
            where = f" (setting {setting_title(s, run_a.setting_values().get(s))})" if s else ""
            raise CompareError(f"{label_b}: not on the data of {label_a}{where}: {other}; paired statistics "
                               "need the same items and splits")
        sa, sb = run_a.splits_of(s), run_b.splits_of(s)
        for m in methods:
            for metric in chosen:
                trials, a, b = _pairs(ta, tb, s, metric, m, m)
                if not trials:
                    continue
                same = [t for t in trials if split_key(sa.get(t)) is not None and split_key(sa.get(t)) == split_key(sb.get(t))]
                st = paired_stats(a, b)
                rows.append({"setting": s, "a": f"{m} (A)", "b": f"{m} (B)", "metric": metric, **asdict(st),
                             "same_splits": len(same) == len(trials)})
        differ = sorted(t for t in set(sa) & set(sb) if split_key(sa[t]) != split_key(sb[t]))
        if differ:
            where = f"setting {setting_title(s, run_a.setting_values().get(s))}: " if s else ""
            warnings.append(f"{where}the splits of trial(s) {', '.join(map(str, differ))} differ between the runs "
                            "(seed or train / test rows); their differences are not paired on the same data")
    if not rows:
        raise CompareError(f"{label_b}: no trial in common with {label_a}")
    table, note = _finish(rows, correction, ("A", "B"))
    return Comparison(table, label_a, label_b, warnings, note)


def dataset_difference(run_a, run_b, setting: str, setting_b: str | None = None) -> str | None:
    """What differs between the data two runs measured one setting on (``"A vs B"``; ``setting_b``:
    run B's setting, when another), or None: the dataset's content fingerprint and size where both
    runs' splits record them, else its name and loader options in the configs."""
    sa, sb = (next((x for x in r.settings if x.label == s), None)
              for r, s in ((run_a, setting), (run_b, setting if setting_b is None else setting_b)))
    fa, fb = (x.dataset_fingerprint if x else None for x in (sa, sb))
    na, nb = (x.n_items if x else None for x in (sa, sb))
    if na is not None and nb is not None and na != nb:
        return f"{na} vs {nb} items"
    ca, cb = (x.data_content if x else None for x in (sa, sb))
    if fa and fb and fa != fb:
        return f"dataset content fingerprint {fa} vs {fb}"
    if ca and cb and ca != cb:
        return "the dataset's labels (or other data the protocol reads) differ"
    if fa and fb:
        return None
    da, db = ({k: v for k, v in (r.config.get("dataset") or {}).items() if k != "root"} for r in (run_a, run_b))
    if da != db:
        return f"dataset {da} vs {db}"
    return None


def compare_methods(run, method_a: str, method_b: str, metrics: list[str] | None = None,
                    correction: str = "holm") -> Comparison:
    """Method ``a`` against method ``b`` of one run, paired over the trials (same splits) they share;
    the p-values of every setting and metric adjusted together (``correction``: ``holm`` or ``none``)."""
    t = trials_frame(run.records)
    have = list(dict.fromkeys(t["method"]))
    for m in (method_a, method_b):
        if m not in have:
            raise CompareError(f"{run.folder.path}: --methods: expected a method of this run "
                               f"({', '.join(have) or 'none has results'}), got {m!r}")
    if method_a == method_b:
        raise CompareError(f"{run.folder.path}: --methods: expected two different methods, got {method_a!r} twice")
    chosen = _metrics_for(metrics, set(t[t.method == method_a].metric), set(t[t.method == method_b].metric),
                          method_a, method_b)
    rows = []
    for s in run.setting_order:
        for metric in chosen:
            trials, a, b = _pairs(t, t, s, metric, method_a, method_b)
            if trials:
                st = paired_stats(a, b)
                rows.append({"setting": s, "a": method_a, "b": method_b, "metric": metric, **asdict(st),
                             "same_splits": True})
    if not rows:
        raise CompareError(f"{run.folder.path}: {method_a} and {method_b} share no trial")
    table, note = _finish(rows, correction, (method_a, method_b))
    return Comparison(table, method_a, method_b, correction=note)


def _p(p: float) -> str:
    return "–" if np.isnan(p) else ("< 0.001" if p < 0.001 else f"{p:.3f}")


def comparison_markdown(c: Comparison, alpha: float = 0.05) -> str:
    """A readable table: rates as percentage points, the interval, both p-values (adjusted as the
    header says), the verdict; where no test applies, why."""
    lines = [f"A = {c.a_label}, B = {c.b_label}. Paired over shared trials: mean of A - B (rates in "
             "percentage points), 95 % t-interval, paired t-test and Wilcoxon signed-rank p-values; "
             f"'better' by the t-test at {alpha:g} in the metric's direction; "
             f"{c.correction or 'no multiple-comparison correction'}.", ""]
    lines += [f"**Warning:** {w}" for w in c.warnings] + ([""] if c.warnings else [])
    lines += ["| setting | A | B | metric | n | mean A | mean B | A - B | 95 % CI | t-test p | Wilcoxon p | better |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in c.table.itertuples(index=False):
        m = r.metric
        if r.test != TESTED:
            ci, t_p, w_p = "–", "no test applies", "no test applies"
        else:
            ci = f"[{fmt_value(m, r.ci_low)}, {fmt_value(m, r.ci_high)}]"
            t_p, w_p = _p(r.t_p_adj), _p(r.wilcoxon_p_adj)
        splits = "" if r.same_splits else " (splits differ)"
        lines.append(f"| {r.setting or '–'} | {r.a} | {r.b} | {m} | {r.n_trials} | {fmt_value(m, r.mean_a)} | "
                     f"{fmt_value(m, r.mean_b)} | {fmt_value(m, r.diff)} | {ci} | {t_p} | {w_p} | "
                     f"{r.better}{splits} |")
    if (c.table["n_trials"] < 2).any():
        lines += ["", "With fewer than two shared trials there is no interval and no test."]
    if (c.table["test"] == "identical differences").any():
        lines += ["", "Where every trial gives the same difference (zero variance) the t-test is undefined and "
                  "the signed-rank test has nothing to rank: no test applies, whatever the difference."]
    return "\n".join(lines)

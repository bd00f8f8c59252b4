"""Per-trial results to tidy tables and to the tables a paper prints (Markdown, LaTeX).

Tidy frames (one row per value, as written to the run folder's CSV files):

* :func:`trials_frame` ``setting, trial, method, metric, value``
* :func:`summary_frame` ``setting, method, metric, mean, std, n_trials``
* :func:`curves_frame` ``setting, trial, method, curve, series, index, value``
* :func:`diagnostics_frame` ``setting, trial, method, task, name, value``

and :func:`with_sweep_columns` adds one typed column per swept key (``protocol.n_test`` holding
the integers 316, 432, ...) after ``setting``. Display tables put metric columns in their natural
order (:func:`ordered_metrics`), rates in %, costs to three significant figures, ``mean ± std``
only when there is more than one trial.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..metrics import is_rate, metric_info
from ..registry import protocols
from ..runfolder import TrialRecord

COST_ORDER = ("train_s", "test_s", "rank_s", "evals", "peak_mb")


def is_cost(metric: str) -> bool:
    info = metric_info(metric)
    return bool(info and info.cost)


def higher_is_better(metric: str) -> bool:
    """The metric's declared direction (an undeclared metric counts as higher-is-better)."""
    info = metric_info(metric)
    return True if info is None else info.higher_is_better


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


# ----------------------------------------------------------------------------- tidy frames
def trials_frame(records: list[TrialRecord]) -> pd.DataFrame:
    """``setting, trial, method, metric, value``: one row per stored metric value."""
    rows = [
        {"setting": r.setting, "trial": r.trial, "method": r.method, "metric": m, "value": v}
        for r in records for m, v in r.metrics.items()
    ]
    return pd.DataFrame(rows, columns=["setting", "trial", "method", "metric", "value"])


def summary_frame(trials: pd.DataFrame, method_order: list[str] | None = None,
                  setting_order: list[str] | None = None) -> pd.DataFrame:
    """Mean, sample standard deviation (ddof=1, as Matlab's std; NaN for one trial) and count,
    settings in the run's own order (a sweep's order, never the text order of its labels)."""
    g = trials.groupby(["setting", "method", "metric"], sort=False)["value"]
    out = g.agg(mean="mean", std=lambda v: float(np.std(v, ddof=1)) if len(v) > 1 else float("nan"),
                n_trials="count").reset_index()
    return in_run_order(out, setting_order, method_order)


def in_run_order(frame: pd.DataFrame, setting_order: list[str] | None, methods: list[str] | None,
                 *more: str) -> pd.DataFrame:
    """Rows of a tidy frame in the run's order: setting (sweep order), method (config order), then
    the columns ``more``; a setting or method outside the order after the others; within those,
    as they came (a stable sort)."""
    if frame.empty:
        return frame

    def rank(column: str, order: list[str] | None) -> pd.Series:
        at = {v: i for i, v in enumerate(order or [])}
        return frame[column].map(at).fillna(len(at))  # a dict maps in one pass, not a call per row

    keys = pd.DataFrame({"s": rank("setting", setting_order), "m": rank("method", methods),
                         **{c: frame[c] for c in more}}, index=frame.index)
    return frame.loc[keys.sort_values(list(keys.columns), kind="stable").index].reset_index(drop=True)


def curves_frame(records: list[TrialRecord]) -> pd.DataFrame:
    """Every stored curve point: ``setting, trial, method, curve, series, index, value``.

    A curve stored as a list (``curves["cmc"]``: the matching rate at rank ``index + 1``) is one
    series named like the curve; a curve stored as a mapping of series (``curves["staged"] =
    {"rank_s": [...], "map@100": [...]}``) gives one series per key, aligned by ``index``.
    """
    cols = ["setting", "trial", "method", "curve", "series", "index", "value"]
    parts = []
    for r in records:
        for curve, data in r.curves.items():
            series = data if isinstance(data, dict) else {curve: data}
            for name, values in series.items():
                v = np.asarray(values, dtype=float).ravel()
                if not len(v):
                    continue
                parts.append(pd.DataFrame({"setting": r.setting, "trial": r.trial, "method": r.method,
                                           "curve": curve, "series": name, "index": np.arange(len(v)),
                                           "value": v}))
    return pd.concat(parts, ignore_index=True)[cols] if parts else pd.DataFrame(columns=cols)


def _flatten(prefix: str, value: Any) -> list[tuple[str, Any]]:
    """``("kernel_weights/gist", 0.4)`` pairs of a nested diagnostic; scalars as they are."""
    if isinstance(value, dict):
        return [kv for k, v in value.items() for kv in _flatten(f"{prefix}/{k}" if prefix else str(k), v)]
    if isinstance(value, (list, tuple)):
        return [kv for i, v in enumerate(value) for kv in _flatten(f"{prefix}/{i}", v)]
    if isinstance(value, (bool, np.bool_)):
        return [(prefix, int(value))]
    return [(prefix, value)]


def record_diagnostics(record: TrialRecord) -> dict[str, dict[str, Any]]:
    """A record's ranker diagnostics as ``{task: {name: value}}`` (task ``""`` for a whole trial).

    Protocols store a ranker's ``diagnostics_`` under ``extra["diagnostics"]``, either for the
    trial (``{"C": 0.1}``) or per task (``{"Male": {"C": 0.1}, ...}``); the per-task form is the
    one whose keys are all tasks of the record's metrics (``pair_acc/Male``) with mapping values.
    """
    diag = record.extra.get("diagnostics") or {}
    if not isinstance(diag, dict) or not diag:
        return {}
    tasks = {m.split("/", 1)[1] for m in record.metrics if "/" in m}
    if tasks and set(diag) <= tasks and all(isinstance(v, dict) for v in diag.values()):
        return {str(t): d for t, d in diag.items()}
    return {"": diag}


def diagnostics_frame(records: list[TrialRecord]) -> pd.DataFrame:
    """What each fitted ranker reported (a chosen ``C``, kernel weights, iterations):
    ``setting, trial, method, task, name, value``; nested values get ``/``-joined names."""
    cols = ["setting", "trial", "method", "task", "name", "value"]
    rows = [(r.setting, r.trial, r.method, task, name, value)
            for r in records for task, d in record_diagnostics(r).items() for name, value in _flatten("", d)]
    return pd.DataFrame(rows, columns=cols)


def with_sweep_columns(frame: pd.DataFrame, values: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """``frame`` with one column per swept key path, typed as recorded in splits.json, after ``setting``.

    ``values`` maps each setting label to its ``{key path: value}`` (``RunData.setting_values``);
    a run without a sweep comes back unchanged.
    """
    keys = list(dict.fromkeys(k for v in values.values() for k in v))
    if not keys or "setting" not in frame.columns:
        return frame
    out = frame.copy()
    at = out.columns.get_loc("setting") + 1
    for i, key in enumerate(keys):
        col = key if key not in out.columns else f"sweep:{key}"
        typed = pd.Series([values.get(s, {}).get(key) for s in out["setting"]], index=out.index)
        out.insert(at + i, col, typed.infer_objects())
    return out


# ----------------------------------------------------------------------------- display
def short_names(keys, sep: str = ".") -> dict[str, str]:
    """Each swept key by the fewest of its last parts that tell it from the others' (``K`` for
    ``rankers.*.K``; ``A.C`` and ``B.C`` for ``rankers.A.C`` beside ``rankers.B.C``)."""
    keys = list(dict.fromkeys(keys))
    parts = {k: [p for p in k.split(".") if p != "*"] or [k] for k in keys}
    out = {}
    for k in keys:
        n = 1
        while n < len(parts[k]) and any(parts[o][-n:] == parts[k][-n:] for o in keys if o != k):
            n += 1
        out[k] = sep.join(parts[k][-n:])
    return out


def shown_value(v: Any) -> str:
    """A value as short as tells it apart: ``0.1``, ``1e-05``; ``0.1000001`` whole, not ``0.1``."""
    return (f"{v:g}" if float(f"{v:g}") == v else repr(v)) if isinstance(v, float) else str(v)


def setting_title(label: str, values: dict[str, Any] | None) -> str:
    """``K = 4, n_per_label = 10`` from a setting's typed values (the label when none are known);
    keys that share a last part by more of theirs (``A.C = 0.1, B.C = 100``)."""
    if not values:
        return label
    names = short_names(values)
    return ", ".join(f"{names[k]} = {shown_value(v)}" for k, v in values.items())


def _digits(metric: str, value: float) -> int:
    if is_rate(metric):
        return 2
    if is_cost(metric):  # seconds and megabytes: three significant figures are plenty
        a = abs(value)
        return 0 if a >= 100 else 1 if a >= 10 else 2 if a >= 0.1 else 3
    return 4


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, (float, np.floating)) and np.isnan(x))


def fmt_value(metric: str, mean: float | None, std: float | None = None, pm: str = " ± ") -> str:
    """A value as tables show it: rates in %, costs to sensible precision, ``± std`` when known."""
    if _missing(mean):
        return "–"
    k = 100.0 if is_rate(metric) else 1.0
    d = _digits(metric, mean * k)
    s = _rounded(k * mean, d)
    if not _missing(std):
        s += f"{pm}{_rounded(k * std, d)}"
    return s


def _rounded(v: float, d: int) -> str:
    """``v`` to ``d`` decimals, a half rounded up (away from zero) as a reader rounds: a mean such as
    54.375 % that a float holds as 54.37499... is 54.38 whichever way it was summed."""
    from decimal import ROUND_HALF_UP, Decimal

    if not np.isfinite(v):
        return f"{v:.{d}f}"
    return str(Decimal(repr(round(float(v), 9))).quantize(Decimal(1).scaleb(-d), rounding=ROUND_HALF_UP))


def ordered_metrics(metrics: list[str]) -> list[str]:
    """Quality metrics first (``cmc@1, 5, 10, 20`` in numeric order), then costs in a fixed order."""
    def key(m: str):
        base = m.split("/")[0]
        info = metric_info(base)
        if info and info.cost:
            return (2, COST_ORDER.index(base) if base in COST_ORDER else 99, "", 0, m)
        if "@" in base and base.split("@")[1].isdigit():
            fam, k = base.split("@")
            return (0, fam, "", int(k), m)
        return (1, base, "", 0, m)
    return sorted(metrics, key=key)


@dataclass
class Block:
    """One printed table: methods down, ``columns`` across, from ``sub`` (summary rows)."""

    setting: str
    heading: str
    columns: list[str]       # metric names
    headers: list[str]       # what the header row shows (task names for per-task tables)
    methods: list[str]
    sub: pd.DataFrame
    n_trials: int
    #: the run's methods with no result at this setting (an interrupted run, failed jobs)
    absent: tuple[str, ...] = ()

    def __post_init__(self):
        # every cell and column best looked up in dicts: a table of a few hundred cells is drawn
        # three times per report (Markdown, LaTeX, HTML), and a filter of ``sub`` per cell cost 1.5 ms
        self._cells: dict[tuple[str, str], tuple[float, float]] = {}
        self._means: dict[str, list[float]] = {}
        for method, metric, mean, std in zip(self.sub["method"], self.sub["metric"], self.sub["mean"], self.sub["std"]):
            self._cells.setdefault((method, metric), (float(mean), float(std)))
            if not np.isnan(mean):
                self._means.setdefault(metric, []).append(float(mean))

    def fewer(self) -> list[str]:
        """Each method whose numbers average fewer trials than the block's count (a run not
        finished, a failed job), and each of its columns that averages fewer still (a concept a
        trial could not evaluate)."""
        fewer = []
        shown = self.sub[self.sub["metric"].isin(self.columns)]
        for method, rows in shown.groupby("method", sort=False):
            most = int(rows["n_trials"].max())
            fewer += [f"{method}: {most}"] if most < self.n_trials else []
            fewer += [f"{method} {metric}: {int(n)}" for metric, n in zip(rows["metric"], rows["n_trials"]) if n < most]
        return fewer + [f"{method}: 0" for method in self.absent]

    def trials_said(self) -> str:
        """How many trials the numbers average: one count, then those that are fewer (:meth:`fewer`)."""
        fewer = self.fewer()
        return f"{self.n_trials} trial(s)" + (f" ({', '.join(fewer)})" if fewer else "")

    def cell(self, method: str, metric: str) -> tuple[float | None, float | None]:
        return self._cells.get((method, metric), (None, None))

    def best(self, metric: str) -> float | None:
        """The best mean of a column in the metric's declared direction."""
        vals = self._means.get(metric)
        if not vals:
            return None
        return max(vals) if higher_is_better(metric) else min(vals)

    def is_best(self, metric: str, mean: float | None) -> bool:
        """Whether ``mean`` is the best of its quality column among several methods (what a table
        marks; costs are not marked)."""
        best = self.best(metric)
        return (mean is not None and best is not None and not is_cost(metric) and len(self.methods) > 1
                and bool(np.isclose(mean, best)))


def summary_blocks(summary: pd.DataFrame, methods: list[str],
                   values: dict[str, dict[str, Any]] | None = None) -> list[Block]:
    """The tables of a summary: per setting, the plain metrics, then one table per per-task family."""
    out = []
    for setting, sub in summary.groupby("setting", sort=False):
        present = [m for m in methods if m in set(sub["method"])] + \
                  [m for m in dict.fromkeys(sub["method"]) if m not in methods]
        metrics = list(dict.fromkeys(sub["metric"]))
        plain = ordered_metrics([m for m in metrics if "/" not in m])
        n = int(sub["n_trials"].max())
        title = setting_title(setting, (values or {}).get(setting))
        absent = tuple(m for m in methods if m not in present)
        out.append(Block(setting, title, plain, plain, present, sub, n, absent))
        for fam in dict.fromkeys(m.split("/")[0] for m in metrics if "/" in m):
            tasks = [m for m in metrics if m.startswith(fam + "/")]
            heading = f"{fam} per task" + (f" ({title})" if title else "")
            out.append(Block(setting, heading, tasks, [t.split("/", 1)[1] for t in tasks], present, sub, n, absent))
    return out


def sweep_block(summary: pd.DataFrame, methods: list[str], values: dict[str, dict[str, Any]],
                metric: str) -> tuple[list[str], list[list[Any]], list[str], list[str], list[list[tuple]]] | None:
    """A sweep as a paper tabulates it: one row per swept value (typed, in numeric order), one
    column per method, cells ``metric`` mean ± std. Returns (key headers, rows of key values,
    row setting labels, the methods with a value, per row each method's (mean, std), (None, None)
    where it has none), or None for a run without a sweep."""
    labels = [s for s in dict.fromkeys(summary["setting"]) if s and values.get(s)]
    if len(labels) < 2:
        return None
    keys = list(dict.fromkeys(k for s in labels for k in values[s]))

    def order(s):
        return tuple((0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v))
                     for v in (values[s].get(k) for k in keys))
    labels.sort(key=order)
    idx = summary[summary["metric"] == metric].set_index(["setting", "method"])
    present = [m for m in methods if any((s, m) in idx.index for s in labels)]
    cells = [[tuple(idx.loc[(s, m), ["mean", "std"]].astype(float)) if (s, m) in idx.index else (None, None)
              for m in present] for s in labels]
    names = short_names(keys)
    return [names[k] for k in keys], [[values[s].get(k) for k in keys] for s in labels], labels, present, cells


def markdown_table(b: Block) -> str:
    """One block as a Markdown table (a missing value as ``–``)."""
    lines = ["| method | " + " | ".join(b.headers) + " |", "|---" * (len(b.columns) + 1) + "|"]
    for meth in b.methods:
        lines.append(f"| {meth} | " + " | ".join(fmt_value(m, *b.cell(meth, m)) for m in b.columns) + " |")
    return "\n".join(lines)


def _sweep_markdown(summary, methods, values, metric) -> list[str]:
    sw = sweep_block(summary, methods, values or {}, metric) if metric else None
    if sw is None:
        return []
    keys, rows, _, present, cells = sw
    out = [f"## {metric} across the sweep", "",
           "| " + " | ".join(keys + present) + " |", "|---" * (len(keys) + len(present)) + "|"]
    for kv, row in zip(rows, cells):
        out.append("| " + " | ".join([str(v) for v in kv] + [fmt_value(metric, *c) for c in row]) + " |")
    return out + [""]


def summary_markdown(summary: pd.DataFrame, title: str, methods: list[str], setting_order: list[str] | None = None,
                     description: str = "", status: list[str] | None = None,
                     values: dict[str, dict[str, Any]] | None = None, headline: str | None = None) -> str:
    """Headline metric across a sweep, then per setting the plain metrics and per-task tables;
    rates in %, mean ± std over trials (no ± for a single trial)."""
    out = [f"# {title}", ""]
    if description:
        out += [description.strip(), ""]
    for line in status or []:
        out += [line, ""]
    out += ["Mean ± standard deviation over trials; rates in %, times in seconds, memory in MB.", ""]
    out += _sweep_markdown(summary, methods, values, headline)
    for b in summary_blocks(summary, methods, values):
        if b.heading:
            out += [f"{'##' if b.columns == b.headers else '###'} {b.heading}", ""]
        if b.columns == b.headers or b.fewer():   # a per-task table, under its setting's count, when fewer
            out += [f"{b.trials_said()}.", ""]
        out += [markdown_table(b), ""]
    return "\n".join(out)


# ----------------------------------------------------------------------------- LaTeX
_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
        "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "±": r"$\pm$"}


def tex_escape(text: str) -> str:
    return "".join(_TEX.get(c, c) for c in str(text))


def _tex_header(metric: str, shown: str) -> str:
    unit = "\\%" if is_rate(metric) else (metric_info(metric).unit if metric_info(metric) else "")
    return tex_escape(shown) + (f" ({unit})" if unit else "")


def latex_table(b: Block, caption: str = "", label: str = "") -> str:
    """One block as a booktabs table; the best mean of each quality column (in the metric's declared
    direction; costs are not marked) in bold.

    ``caption`` is LaTeX as it is (escape plain text with :func:`tex_escape`)."""
    lines = [r"\begin{table}[t]", r"\centering", r"\small",
             r"\begin{tabular}{l" + "r" * len(b.columns) + "}", r"\toprule",
             "Method & " + " & ".join(_tex_header(m, h) for m, h in zip(b.columns, b.headers)) + r" \\",
             r"\midrule"]
    for meth in b.methods:
        cells = []
        for m in b.columns:
            mean, std = b.cell(meth, m)
            text = fmt_value(m, mean, std, pm=r" $\pm$ ")
            if b.is_best(m, mean):
                head, _, tail = text.partition(" ")
                text = rf"\textbf{{{head}}}" + (f" {tail}" if tail else "")
            cells.append(text.replace("–", "--"))
        lines.append(tex_escape(meth) + " & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if caption:
        lines.append(r"\caption{" + caption + "}")
    if label:
        lines.append(r"\label{" + label + "}")
    lines.append(r"\end{table}")
    return "\n".join(lines)


def summary_latex(summary: pd.DataFrame, title: str, methods: list[str],
                  values: dict[str, dict[str, Any]] | None = None) -> str:
    """Every table of a summary as LaTeX (``\\usepackage{booktabs}``); captions say what the
    numbers are (mean ± std over how many trials, units)."""
    out = [f"% rankbench summary of {title}; needs \\usepackage{{booktabs}}", ""]
    slug = "".join(c if c.isalnum() else "-" for c in title).strip("-").lower()
    for i, b in enumerate(summary_blocks(summary, methods, values)):
        what = (f"mean $\\pm$ standard deviation over {tex_escape(b.trials_said())}" if b.n_trials > 1
                else "one trial")
        cap = tex_escape(title + (f", {b.heading}" if b.heading else "")) + f": {what}; best in bold."
        out += [latex_table(b, cap, f"tab:{slug}-{i + 1}"), ""]
    return "\n".join(out)

"""Grade a run against published numbers: OK within the tolerance, OKISH within 1.5x, else FAIL;
every grade and what it means is :class:`Grade`, the one legend.

A known gap (``known_gap: <reason>``) turns only a FAIL into GAP; within 1.5x its tolerance the
entry is graded like any other. When the standard error of our mean (``std / sqrt(n)`` over the
run's trials; with one trial the entry's published ``std``, when the config gives it) exceeds the
tolerance, a number that would be OK or OKISH is INCONCLUSIVE, and a miss keeps its grade with the
standard error said. A run with fewer trials than the paper averaged (the entry's ``trials``) says
so in the reason ("over 3 of the paper's 50 trials").
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, NotRequired, TypedDict

import numpy as np
import pandas as pd

from ..config import ExpectedCfg
from ..metrics import is_rate
from .tables import fmt_value


class Grade(StrEnum):
    """Every grade a published number or a claim can get, in the order summaries count them, each
    with what it means (``Grade.OKISH.meaning``): the one legend of ``check --help``, every report
    and the documentation. A ``str``, so written files hold the bare name (``"NOT RUN"``)."""

    OK = ("OK", "a number within its tolerance of the published one; a claim whose paired difference has "
                "the claimed sign with a 95 % interval clear of zero (or of its margin)")
    OKISH = ("OKISH", "a number beyond its tolerance but within 1.5x (passes)")
    TREND = ("TREND", "a claim of the right sign that is not significant (or rests on one trial): never OK")
    INCONCLUSIVE = ("INCONCLUSIVE", "the standard error of our mean exceeds the tolerance: the check cannot tell "
                                    "(passes)")
    GAP = ("GAP", "a documented, understood mismatch: a FAIL (for a claim also a TREND) whose config gives "
                  "a known_gap (its reason is given)")
    VOID = ("VOID", "the baseline measured worse than the paper's own: not a fair test of the claim")
    FAIL = ("FAIL", "beyond 1.5x the tolerance, or a claim of the wrong sign, a tie or short of its margin")
    FAILED = ("FAILED", "the method's jobs failed (its ranker raised, or returned what the protocol cannot score)")
    MISSING = ("MISSING", "something the run lacks")
    PUBLISHED = ("PUBLISHED", "a published row of a method we do not run")
    NOT_RUN = ("NOT RUN", "a method of the config this run left out (--methods)")

    def __new__(cls, value: str, meaning: str):
        member = str.__new__(cls, value)
        member._value_, member.meaning = value, meaning
        return member

    @property
    def fails(self) -> bool:
        """Whether this grade fails ``rankbench check`` (FAIL, FAILED, MISSING)."""
        return self in (Grade.FAIL, Grade.FAILED, Grade.MISSING)


#: a published number graded (:func:`grade_rows`), as ``check``, the reports and results.json read it;
#: ``reason`` says why it got its grade in one phrase, ``failed`` why its jobs failed (FAILED only)
GradedNumber = TypedDict("GradedNumber", {
    "method": str, "metric": str, "setting": str, "published": float, "tolerance": float, "source": str,
    "note": str, "ours": float | None, "diff": float | None, "n_trials": int | None, "std": float | None,
    "se": float | None, "known_gap": str | None, "grade": Grade, "reason": str, "failed": NotRequired[str],
    "missing": NotRequired[str]})


def grade_rows(summary: pd.DataFrame, expected: list[ExpectedCfg],
               methods: list[str] | None = None,
               failed: dict[tuple[str, str], str] | None = None) -> list[GradedNumber]:
    """One graded row per expected number (see the module docstring); MISSING where the run has
    no value for a method it was meant to run (an incomplete run); NOT RUN for a method outside
    ``methods``, the rankers the run computes (``--methods``); FAILED for a (setting, method) with
    failed jobs (``failed`` maps it to why, :meth:`rankbench.report.build.RunData.failures`), even
    where other trials finished: a mean over the trials that survived is not the method's number.
    """
    idx = summary.set_index(["setting", "method", "metric"])
    settings = [s for s in dict.fromkeys(summary["setting"]) if s]
    rows = []
    for e in expected:
        setting = e.setting or ""
        row = {"method": e.method, "metric": e.metric, "setting": setting, "published": e.value,
               "tolerance": e.tolerance, "source": e.source, "note": e.note, "ours": None, "diff": None,
               "n_trials": None, "std": None, "se": None, "known_gap": e.known_gap or None}
        key = (setting, e.method, e.metric)
        if e.published_only:
            row["grade"] = Grade.PUBLISHED
        elif methods is not None and e.method not in methods:
            row["grade"] = Grade.NOT_RUN
        elif failed and (setting, e.method) in failed:
            row.update(grade=Grade.FAILED, failed=failed[(setting, e.method)])
        elif key not in idx.index:
            row["grade"] = Grade.MISSING
            if settings and setting not in settings:   # a number that names no setting of this sweep
                row["missing"] = (f"names {f'setting {setting!r}' if setting else 'no setting'}; this run's settings "
                                  f"are {', '.join(settings)}: give the entry one of them as setting:")
        else:
            hit = idx.loc[key]
            n, std = int(hit["n_trials"]), float(hit["std"])
            ours = float(hit["mean"])
            se = std / np.sqrt(n) if n > 1 else e.std
            row.update(ours=ours, diff=ours - e.value, n_trials=n, std=std if n > 1 else None, se=se)
            row["grade"] = _grade(abs(row["diff"]), e.tolerance, se, bool(e.known_gap))
        row["reason"] = _reason(row, e)
        rows.append(row)
    return rows


def _grade(off: float, tol: float, se: float | None, known_gap: bool) -> Grade:
    """OK / OKISH / INCONCLUSIVE / FAIL / GAP of a number ``off`` from the published one."""
    grade = Grade.OK if off <= tol + 1e-12 else Grade.OKISH if off <= 1.5 * tol + 1e-12 else Grade.FAIL
    if grade != Grade.FAIL and se is not None and se > tol:
        return Grade.INCONCLUSIVE
    return Grade.GAP if grade == Grade.FAIL and known_gap else grade


#: why a row that has no number of ours got its grade
_NO_NUMBER = {Grade.PUBLISHED: "published only: a method this run does not include",
              Grade.MISSING: "not measured in this run",
              Grade.NOT_RUN: "not run: this run computes only some of the config's rankers (--methods)"}


def _reason(row: GradedNumber, e: ExpectedCfg) -> str:
    """Why a row got its grade, in one phrase (the documented reason for a GAP), with how many
    trials it rests on when that is fewer than the paper's."""
    m, g = row["metric"], row["grade"]
    if g in _NO_NUMBER:
        return row.get("missing") or _NO_NUMBER[g]
    if g == Grade.FAILED:
        return row["failed"]
    unit = " points" if is_rate(m) else ""
    tol = fmt_value(m, row["tolerance"]) + unit
    off = fmt_value(m, abs(row["diff"])) + unit
    if g != Grade.OK and off == tol:   # a gap that rounds to the tolerance (0.00 beyond 0.00): its digits
        off = f"{abs(row['diff']) * (100 if is_rate(m) else 1):.2g}{unit}"
    se = row["se"]
    se_text = (f"standard error {fmt_value(m, se)}{unit} exceeds the tolerance {tol}"
               + ("" if row["n_trials"] > 1 else " (one trial; the published spread)"))
    why = f"off by {off}" + {Grade.OK: f", within the tolerance {tol}",
                             Grade.OKISH: f", beyond the tolerance {tol} but within 1.5x",
                             Grade.INCONCLUSIVE: f", but the {se_text}: this check cannot tell",
                             Grade.GAP: f"; known gap: {e.known_gap}",
                             Grade.FAIL: f", beyond 1.5x the tolerance {tol}"}[g]
    if se is not None and se > row["tolerance"] and g in (Grade.FAIL, Grade.GAP):
        why += f" (the {se_text})"
    n, paper = row["n_trials"], e.trials
    if paper and n < int(paper):
        why += f"; over {n} of the paper's {paper} trials"
    elif paper and n > int(paper):   # the mean of every trial of the run, not of its first few
        why += f"; over {n} trials, the paper's over {paper}"
    elif n == 1 and se is None:
        why += "; one trial: its spread is unknown"
    return why


#: a per-task metric family with at least this many graded tasks is shown as a method x task matrix
MATRIX_TASKS = 4


def task_of(row: dict[str, Any]) -> str | None:
    """The task of a per-task metric (``pair_acc/Male`` -> ``Male``), else None."""
    return row["metric"].split("/", 1)[1] if "/" in row["metric"] else None


def task_matrices(items: list, row=lambda item: item, key=lambda item: ()) -> tuple[list[list], list]:
    """Split graded items into matrices and the rest: the items of one per-task metric family at one
    setting (and one ``key``, e.g. the run) with at least :data:`MATRIX_TASKS` tasks form a matrix
    (a list, in the items' order); every other item stays in the rest. ``row`` reads an item's
    graded row (items may carry more, e.g. the run)."""
    groups: dict[tuple, list] = {}
    for it in items:
        r = row(it)
        if task_of(r) is not None:
            groups.setdefault((key(it), r["setting"], r["metric"].split("/", 1)[0]), []).append(it)
    matrices = [g for g in groups.values() if len({task_of(row(it)) for it in g}) >= MATRIX_TASKS]
    taken = {id(it) for g in matrices for it in g}
    return matrices, [it for it in items if id(it) not in taken]


def matrix_markdown(rows: list[GradedNumber]) -> str:
    """One per-task family's grades as a method x task table (cells: ``ours / published GRADE``),
    with the reason of every cell that is not OK listed below."""
    family = rows[0]["metric"].split("/", 1)[0]
    tasks = list(dict.fromkeys(task_of(r) for r in rows))
    at = {(r["method"], task_of(r)): r for r in rows}
    lines = [f"{family} per task" + (f" ({rows[0]['setting']})" if rows[0]["setting"] else "")
             + ": ours / published and the grade.", "",
             "| method | " + " | ".join(tasks) + " |", "|---" * (len(tasks) + 1) + "|"]
    notes = []
    for meth in dict.fromkeys(r["method"] for r in rows):
        cells = []
        for t in tasks:
            r = at.get((meth, t))
            if r is None:
                cells.append("–")
                continue
            ours = fmt_value(r["metric"], r["ours"]) if r["ours"] is not None else "–"
            grade = "" if r["grade"] == Grade.PUBLISHED else f" {r['grade']}"     # a row we do not run: "– / 95.24"
            cells.append(f"{ours} / {fmt_value(r['metric'], r['published'])}{grade}")
            if r["grade"] not in (Grade.OK, Grade.PUBLISHED):
                notes.append(f"- {meth}, {t}: {r['grade']}, {r['reason']}")
        lines.append(f"| {meth} | " + " | ".join(cells) + " |")
    return "\n".join(lines + ([""] + notes if notes else []))


def check_markdown(rows: list[GradedNumber]) -> str:
    """The graded numbers in Markdown: per-task families with many tasks as method x task matrices
    (:func:`matrix_markdown`), the other numbers as one table with ours (and its trials), the
    published number, the grade and why."""
    matrices, rows = task_matrices(rows)
    out = [matrix_markdown(m) for m in matrices]
    if rows:
        out.append(_table_markdown(rows))
    return "\n\n".join(out)


def _table_markdown(rows: list[GradedNumber]) -> str:
    lines = ["| setting | method | metric | ours | trials | published | diff | tolerance | grade | why | source | note |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        m = r["metric"]
        ours = fmt_value(m, r["ours"], r.get("std")) if r["ours"] is not None else "–"
        diff = fmt_value(m, r["diff"]) if r["diff"] is not None else "–"
        lines.append(f"| {r['setting'] or '–'} | {r['method']} | {m} | {ours} | {r['n_trials'] or '–'} | "
                     f"{fmt_value(m, r['published'])} | {diff} | ±{fmt_value(m, r['tolerance'])} | {r['grade']} | "
                     f"{r['reason']} | {r['source']} | {r['note']} |")
    return "\n".join(lines)


def legend() -> str:
    """Every grade and what it means, in one paragraph."""
    return "; ".join(f"{g} = {g.meaning}" for g in Grade) + "."


def any_fail(rows: list[dict[str, Any]]) -> bool:
    """Whether a row's grade fails ``rankbench check`` (:attr:`Grade.fails`)."""
    return any(Grade(r["grade"]).fails for r in rows)


def grade_counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    """How many rows got each grade, in :class:`Grade` order (grades nobody got left out)."""
    found = [r["grade"] for r in rows]
    return {g.value: found.count(g) for g in Grade if g in found}


def counts_line(rows: list[dict[str, Any]], what: str) -> str:
    """``6 published numbers: 4 OK, 1 INCONCLUSIVE, 1 GAP`` for ``what = "published number"``
    (empty for no rows)."""
    if not rows:
        return ""
    counts = grade_counts(rows)
    return f"{len(rows)} {what}{'s' if len(rows) != 1 else ''}: " + ", ".join(f"{v} {k}" for k, v in counts.items())


def totals_line(numbers: list[dict[str, Any]], claims: list[dict[str, Any]]) -> str:
    """``Totals: 6 published numbers: 4 OK, 2 GAP; 2 claims: 1 OK, 1 TREND.``"""
    counted = "; ".join(x for x in (counts_line(numbers, "published number"), counts_line(claims, "claim")) if x)
    return f"Totals: {counted or 'nothing graded'}."

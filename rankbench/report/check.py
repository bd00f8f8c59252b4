"""Grade a run against published numbers: OK within the tolerance, OKISH within 1.5x, else FAIL.

OKISH passes ``rankbench check`` (it is counted and shown in every summary, so the effective band
of a passing number is 1.5x its stated tolerance); MISSING (a number the run should have but does
not, e.g. an incomplete run) fails it.

An expected entry may carry ``known_gap: <reason>``: a documented, understood mismatch. Beyond
1.5x its tolerance it is graded GAP instead of FAIL, shown with its reason in every table, and does
not fail ``rankbench check``; within tolerance it is graded OK like any other number.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..metrics import is_rate
from .tables import fmt_value


def _note(row: dict, text: str) -> None:
    row["note"] = (row["note"] + " " if row["note"] else "") + text


def grade_rows(summary: pd.DataFrame, expected: list[dict[str, Any]],
               methods: list[str] | None = None) -> list[dict[str, Any]]:
    """One graded row per expected number (see the module docstring); MISSING where the run has
    no value for a method it was meant to run (an incomplete run); NOT RUN for a method outside
    ``methods``, the rankers the run computes (``--methods``)."""
    idx = summary.set_index(["setting", "method", "metric"])
    rows = []
    for e in expected:
        setting = e.get("setting") or ""
        row = {"method": e["method"], "metric": e["metric"], "setting": setting,
               "published": e["value"], "tolerance": e["tolerance"], "source": e.get("source", ""),
               "note": e.get("note", ""), "ours": None, "diff": None, "n_trials": None,
               "known_gap": e.get("known_gap")}
        key = (setting, e["method"], e["metric"])
        if e.get("published_only"):
            row["grade"] = "PUBLISHED"
        elif methods is not None and e["method"] not in methods:
            row["grade"] = "NOT RUN"
        elif key not in idx.index:
            row["grade"] = "MISSING"
            _note(row, "(not measured in this run)")
        else:
            ours = float(idx.loc[key]["mean"])
            row["n_trials"] = n = int(idx.loc[key]["n_trials"])
            if e.get("trials") and n < int(e["trials"]):
                _note(row, f"(over {n} trial(s); the published number is over {e['trials']})")
            diff = ours - e["value"]
            row.update(ours=ours, diff=diff)
            tol = e["tolerance"]
            row["grade"] = "OK" if abs(diff) <= tol + 1e-12 else "OKISH" if abs(diff) <= 1.5 * tol + 1e-12 else "FAIL"
            if row["grade"] == "FAIL" and e.get("known_gap"):
                row["grade"] = "GAP"
                _note(row, f"known gap: {e['known_gap']}")
        row["reason"] = _reason(row, e)
        rows.append(row)
    return rows


def _reason(row: dict[str, Any], e: dict[str, Any]) -> str:
    """Why a row got its grade, in one phrase (the documented reason for a GAP)."""
    m, g = row["metric"], row["grade"]
    unit = " points" if is_rate(m) else ""
    tol = fmt_value(m, row["tolerance"]) + unit
    if g == "PUBLISHED":
        return "published only: a method this run does not include"
    if g == "MISSING":
        return "not measured in this run"
    if g == "NOT RUN":
        return "not run: this run computes only some of the config's rankers (--methods)"
    off = fmt_value(m, abs(row["diff"])) + unit
    if g == "OK":
        return f"off by {off}, within the tolerance {tol}"
    if g == "OKISH":
        return f"off by {off}, beyond the tolerance {tol} but within 1.5x"
    if g == "GAP":
        return f"off by {off}; known gap: {e['known_gap']}"
    return f"off by {off}, beyond 1.5x the tolerance {tol}"


def check_markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| setting | method | metric | ours | published | diff | tolerance | grade | source | note |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        m = r["metric"]
        ours = fmt_value(m, r["ours"]) if r["ours"] is not None else "–"
        diff = fmt_value(m, r["diff"]) if r["diff"] is not None else "–"
        lines.append(f"| {r['setting'] or '–'} | {r['method']} | {m} | {ours} | {fmt_value(m, r['published'])} | "
                     f"{diff} | ±{fmt_value(m, r['tolerance'])} | {r['grade']} | {r['source']} | {r['note']} |")
    return "\n".join(lines)


def any_fail(rows: list[dict[str, Any]]) -> bool:
    """FAIL and MISSING fail ``rankbench check``; OK, OKISH, GAP, PUBLISHED and NOT RUN do not."""
    return any(r["grade"] in ("FAIL", "MISSING") for r in rows)


def grade_counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in rows:
        out[r["grade"]] = out.get(r["grade"], 0) + 1
    return out



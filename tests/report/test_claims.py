"""Relative claims graded from a run's summary and curves, with the figures that decided them."""

import pandas as pd
import pytest

from rankbench.report.claims import grade_claims, mean_curve


def summary(rows):
    return pd.DataFrame(rows, columns=["setting", "method", "metric", "mean", "std", "n_trials"])


S = summary([
    ("k=0", "A", "error_rate", 0.20, 0.01, 3), ("k=0", "B", "error_rate", 0.21, 0.01, 3),
    ("k=20", "A", "error_rate", 0.05, 0.01, 3), ("k=20", "B", "error_rate", 0.12, 0.01, 3),
])
ORDER = ["k=0", "k=20"]


def test_better_follows_the_metrics_direction():
    ok, = grade_claims([{"kind": "better", "method": "A", "than": "B", "metric": "error_rate"}], S, [], ORDER)
    assert ok["grade"] == "OK" and ok["measured"].startswith("2 of 2 settings")
    no, = grade_claims([{"kind": "better", "method": "B", "than": "A", "metric": "error_rate"}], S, [], ORDER)
    assert no["grade"] == "FAIL" and "0 of 2" in no["measured"]
    margin, = grade_claims([{"kind": "better", "method": "A", "than": "B", "metric": "error_rate", "by": 0.05}],
                           S, [], ORDER)
    assert margin["grade"] == "FAIL" and "1 of 2" in margin["measured"]  # 0.01 at k=0 is not 0.05


def test_improves_between_settings_and_known_gap():
    ok, = grade_claims([{"kind": "improves", "method": "A", "metric": "error_rate", "from_": "k=0", "to": "k=20",
                         "by": 0.1}], S, [], ORDER)
    assert ok["grade"] == "OK" and "20.00 -> 5.00" in ok["measured"]
    gap, = grade_claims([{"kind": "improves", "method": "B", "metric": "error_rate", "from_": "k=0", "to": "k=20",
                          "by": 0.16, "known_gap": "stand-in data"}], S, [], ORDER)
    assert gap["grade"] == "GAP" and "known gap: stand-in data" in gap["note"]


def rec(method, xs, ys, trial=0):
    return {"setting": "", "trial": trial, "method": method, "metrics": {},
            "curves": {"staged": {"rank_s": xs, "map@100": ys}}}


def test_mean_curve_interpolates_trials_on_a_common_grid():
    recs = [rec("A", [0, 2], [0.0, 1.0], 0), rec("A", [0, 1, 2], [0.0, 0.0, 1.0], 1)]
    x, y = mean_curve(recs, "A", "staged", "rank_s", "map@100")
    assert list(x) == [0, 1, 2] and list(y) == pytest.approx([0.0, 0.25, 1.0])


def test_dominates_and_speedup_on_curves():
    recs = [rec("IRB", [0.0, 1.0, 2.0, 10.0], [0.0, 0.30, 0.40, 0.45]),
            rec("RB", [0.0, 3.0, 6.0, 9.0], [0.0, 0.20, 0.30, 0.40])]
    dom, = grade_claims([{"kind": "dominates", "method": "IRB", "than": "RB", "curve": "staged", "x": "rank_s",
                          "y": "map@100"}], summary([]), recs, [""])
    assert dom["grade"] == "OK"
    rev, = grade_claims([{"kind": "dominates", "method": "RB", "than": "IRB", "curve": "staged", "x": "rank_s",
                          "y": "map@100"}], summary([]), recs, [""])
    assert rev["grade"] == "FAIL"
    # RB's best 0.40 at 9 s; IRB reaches 0.40 at 2 s: 4.5x
    fast, = grade_claims([{"kind": "speedup", "method": "IRB", "than": "RB", "curve": "staged", "x": "rank_s",
                           "y": "map@100", "at_least": 3}], summary([]), recs, [""])
    assert fast["grade"] == "OK" and fast["measured"].startswith("4.50x")
    slow, = grade_claims([{"kind": "speedup", "method": "IRB", "than": "RB", "curve": "staged", "x": "rank_s",
                           "y": "map@100", "at_least": 5}], summary([]), recs, [""])
    assert slow["grade"] == "FAIL"


def test_a_claim_on_something_not_measured_is_missing():
    row, = grade_claims([{"kind": "speedup", "method": "A", "than": "B", "curve": "staged", "x": "rank_s",
                          "y": "map@100", "at_least": 2}], S, [], ORDER)
    assert row["grade"] == "MISSING" and "not stored" in row["measured"]

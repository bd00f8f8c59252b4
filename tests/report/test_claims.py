"""Relative claims graded with paired statistics, every grade and its boundaries; the oracle for
the statistics is scipy.stats applied directly to the pairs."""

import numpy as np
import pytest
from scipy import stats
from scipy.integrate import trapezoid

from rankbench.config import ClaimCfg
from rankbench.report.claims import SIGN_TEST_PAIRS, grade_claims, judge, mean_curve
from rankbench.report.compare import paired_stats
from rankbench.runfolder import TrialSplit
from toydata import record


def records(values: dict, metric: str = "error_rate") -> list:
    """Trial records from ``{(setting, method): [value per trial]}`` (a value may be a dict of
    per-task values, stored as ``metric/<task>`` with the plain metric their mean)."""
    out = []
    for (setting, method), vals in values.items():
        for t, v in enumerate(vals):
            metrics = {metric: float(np.mean(list(v.values())))} | {f"{metric}/{k}": x for k, x in v.items()} \
                if isinstance(v, dict) else {metric: v}
            out.append(record(setting, t, method, metrics))
    return out


def grade(claim: dict, recs: list, order=("",), **kw) -> dict:
    row, = grade_claims([ClaimCfg.model_validate(claim)], recs, list(order), **kw)
    return row


def better(**kw) -> dict:
    return {"kind": "better", "method": "A", "than": "B", "metric": "error_rate", **kw}


def t_interval(d):
    ci = stats.ttest_1samp(d, 0.0).confidence_interval(0.95)
    return ci.low, ci.high


B = np.array([0.30, 0.25, 0.35, 0.28, 0.33, 0.31])


# ----------------------------------------------------------------------------- better
def test_a_significant_gain_is_ok_and_the_interval_is_scipys():
    a = B - np.array([0.05, 0.06, 0.04, 0.05, 0.07, 0.05])         # A lower error in every trial
    row = grade(better(), records({("", "A"): a, ("", "B"): B}))
    lo, hi = t_interval(a - B)
    assert row["grade"] == "OK"
    assert f"[{100 * lo:+.2f}, {100 * hi:+.2f}]".replace("+-", "-") in row["measured"]
    assert "over 6 trials" in row["measured"]


def test_a_tie_is_never_ok():
    row = grade(better(), records({("", "A"): [0.1467] * 3, ("", "B"): [0.1467] * 3}))
    assert row["grade"] == "FAIL" and "14.67 vs 14.67" in row["measured"] and "a tie" in row["measured"]


def test_a_gain_far_inside_the_spread_is_a_trend_not_ok():
    # the "negative constraints help" at 20.10 vs 20.48 with sd 8-10 over 3 trials
    a, b = np.array([0.12, 0.29, 0.193]), np.array([0.10, 0.31, 0.2044])
    row = grade(better(), records({("", "A"): a, ("", "B"): b}))
    assert a.mean() < b.mean()
    assert row["grade"] == "TREND" and "not significant" in row["measured"]


def test_the_wrong_sign_fails_and_a_known_gap_turns_fail_and_trend_into_gap():
    wrong = records({("", "A"): B + 0.05, ("", "B"): B})
    assert grade(better(), wrong)["grade"] == "FAIL"
    gap = grade(better(known_gap="stand-in data"), wrong)
    assert gap["grade"] == "GAP" and "known gap: stand-in data" in gap["note"]
    trend = records({("", "A"): [0.12, 0.29, 0.193], ("", "B"): [0.10, 0.31, 0.2044]})
    assert grade(better(known_gap="x"), trend)["grade"] == "GAP"


def test_the_metrics_direction_decides_the_claimed_sign():
    up = B + np.array([0.05, 0.06, 0.04, 0.05, 0.07, 0.05])
    assert grade({**better(), "metric": "cmc@1"}, records({("", "A"): up, ("", "B"): B}, "cmc@1"))["grade"] == "OK"
    assert grade(better(), records({("", "A"): up, ("", "B"): B}))["grade"] == "FAIL"


@pytest.mark.parametrize("shift, expected", [(+1e-6, "OK"), (-1e-6, "TREND")])
def test_ok_begins_where_the_interval_clears_the_margin(shift, expected):
    by = 0.02
    gain = np.array([0.03, 0.05, 0.02, 0.06, 0.04])                 # B - A, the claimed direction
    lo, _ = t_interval(gain)
    gain = gain + (by - lo) + shift                                   # lower bound now by + shift
    row = grade(better(by=by), records({("", "A"): B[:5] - gain, ("", "B"): B[:5]}))
    assert row["grade"] == expected


def test_a_mean_short_of_the_margin_fails():
    gain = np.array([0.010, 0.012, 0.011, 0.009])
    row = grade(better(by=0.02), records({("", "A"): B[:4] - gain, ("", "B"): B[:4]}))
    assert row["grade"] == "FAIL" and "short of the margin" in row["measured"]


def test_one_trial_cannot_be_significant():
    row = grade(better(), records({("", "A"): [0.10], ("", "B"): [0.30]}))
    assert row["grade"] == "TREND" and "1 trial: no test possible" in row["measured"]
    assert grade(better(), records({("", "A"): [0.30], ("", "B"): [0.10]}))["grade"] == "FAIL"


def test_identical_differences_need_the_sign_tests_six_trials():
    assert stats.binomtest(SIGN_TEST_PAIRS, SIGN_TEST_PAIRS).pvalue < 0.05
    assert stats.binomtest(SIGN_TEST_PAIRS - 1, SIGN_TEST_PAIRS - 1).pvalue >= 0.05
    for n, expected in ((SIGN_TEST_PAIRS - 1, "TREND"), (SIGN_TEST_PAIRS, "OK")):
        row = grade(better(), records({("", "A"): B[:n] - 0.02, ("", "B"): B[:n]}))
        assert row["grade"] == expected and "identical differences" in row["measured"]


def test_trials_that_repeat_a_split_and_its_numbers_count_once():
    """The dataset's own split (a protocol that draws nothing) gives every trial the same rows; a
    deterministic method then gives every trial one number. Before: six copies of one result were
    graded OK by the sign test (p = 2^-5); they are one pair, and one pair is a TREND."""
    n = SIGN_TEST_PAIRS
    rec = records({("", "A"): [0.10] * n, ("", "B"): [0.30] * n})
    fixed = {"": {t: TrialSplit.drawn({"train": [0, 1], "test": [2, 3]}, trial=t, seed=t) for t in range(n)}}
    row = grade(better(), rec, splits=fixed)
    assert row["grade"] == "TREND" and f"over 1 trial ({n - 1} more repeat a trial's split and numbers)" \
        in row["measured"], row["measured"]
    drawn = {"": {t: TrialSplit.drawn({"train": [t], "test": [9]}, trial=t, seed=t) for t in range(n)}}
    assert grade(better(), rec, splits=drawn)["grade"] == "OK"     # other rows: other evidence
    varied = records({("", "A"): [0.10 + 0.001 * t for t in range(n)], ("", "B"): [0.30] * n})
    assert "repeat" not in grade(better(), varied, splits=fixed)["measured"]   # a seeded method's spread
    gain = records({("k=0", "A"): [0.30] * n, ("k=5", "A"): [0.10] * n})
    row = grade({"kind": "improves", "method": "A", "metric": "error_rate", "from_": "k=0", "to": "k=5"}, gain,
                ("k=0", "k=5"), splits={"k=0": fixed[""], "k=5": fixed[""]})
    assert row["grade"] == "TREND" and f"({n - 1} more repeat a trial's split and numbers)" in row["measured"]


def test_judge_covers_every_outcome_from_paired_stats():
    assert judge(paired_stats([1, 1, 2], [0, 0, 2.5]), True).grade == "TREND"      # right sign, wide interval
    assert judge(paired_stats([1.0, 2.1, 3.0], [0, 1, 2]), True).grade == "OK"
    assert judge(paired_stats([1.0, 2.1, 3.0], [0, 1, 2]), False).grade == "FAIL"  # lower is better: wrong sign
    assert judge(paired_stats([1.0], [0.0]), True).why == "1 trial: no test possible"


def test_several_settings_take_the_worst_grade():
    rec = records({("k=4", "A"): B - 0.05, ("k=4", "B"): B,                       # OK
                   ("k=8", "A"): [0.12, 0.29, 0.193, 0.2, 0.3, 0.3],             # TREND
                   ("k=8", "B"): [0.10, 0.31, 0.2044, 0.21, 0.29, 0.305]})
    row = grade(better(), rec, ("k=4", "k=8"), values={"k=4": {"protocol.k": 4}, "k=8": {"protocol.k": 8}})
    assert row["grade"] == "TREND" and row["measured"].startswith("OK at 1, TREND at 1 of 2 settings")
    assert "k = 4: " in row["measured"]
    only = grade(better(settings=["k=4"]), rec, ("k=4", "k=8"))
    assert only["grade"] == "OK"


def test_a_collapsed_baseline_voids_the_claim_but_a_fail_stays_a_fail():
    rec = records({("", "A"): B - 0.05, ("", "B"): B + 0.30})                       # B at ~60 % error
    row = grade(better(baseline_limit=0.25), rec)
    assert row["grade"] == "VOID" and "is worse than the paper's own baseline (<= 25.00)" in row["measured"]
    assert grade(better(baseline_limit=0.70), rec)["grade"] == "OK"
    worse_still = records({("", "A"): B + 0.40, ("", "B"): B + 0.30})
    assert grade(better(baseline_limit=0.25), worse_still)["grade"] == "VOID"   # no fair test either way
    rec2 = records({("k=4", "A"): B + 0.05, ("k=4", "B"): B, ("k=8", "A"): B - 0.05, ("k=8", "B"): B + 0.30})
    assert grade(better(baseline_limit=0.40), rec2, ("k=4", "k=8"))["grade"] == "FAIL"
    rec3 = records({("k=4", "A"): [0.1, 0.3, 0.2], ("k=4", "B"): [0.12, 0.28, 0.21],
                    ("k=8", "A"): B - 0.05, ("k=8", "B"): B + 0.30})
    assert grade(better(baseline_limit=0.40), rec3, ("k=4", "k=8"))["grade"] == "VOID"


def test_a_baseline_limit_can_be_a_value_the_run_measures():
    """The limit as the labelled-data baseline the compared method starts from (KLR at K = 0): a
    constraint method worse than using no constraints at all is no fair baseline."""
    klr = [0.27, 0.29, 0.26]
    rec = records({("k=0", "KLR"): klr, ("k=8", "A"): [0.10, 0.12, 0.11], ("k=8", "B"): [0.62, 0.60, 0.65],
                   ("k=8", "KLR"): klr})
    ref = {"method": "KLR", "metric": "error_rate", "setting": "k=0"}
    row = grade(better(baseline_limit=ref, settings=["k=8"]), rec, ("k=0", "k=8"),
                values={"k=0": {"protocol.k": 0}, "k=8": {"protocol.k": 8}})
    assert row["grade"] == "VOID"
    assert f"(<= {100 * np.mean(klr):.2f}, KLR's error_rate at k = 0)" in row["measured"]
    fair = records({("k=0", "KLR"): klr, ("k=8", "A"): [0.10, 0.12, 0.11], ("k=8", "B"): [0.20, 0.21, 0.19]})
    assert grade(better(baseline_limit=ref, settings=["k=8"]), fair, ("k=0", "k=8"))["grade"] == "OK"
    nothing = records({("k=8", "A"): [0.1, 0.1, 0.1], ("k=8", "B"): [0.2, 0.2, 0.2]})
    assert grade(better(baseline_limit=ref, settings=["k=8"]), nothing, ("k=0", "k=8"))["grade"] == "MISSING"


def test_missing_when_the_run_lacks_a_side():
    row = grade(better(), records({("", "A"): B}))
    assert row["grade"] == "MISSING" and "of B not measured" in row["measured"]


def test_tasks_pair_every_trial_and_task_so_one_trial_can_be_significant():
    tasks_a = {f"c{i}": 0.2 + 0.01 * i for i in range(12)}
    tasks_b = {f"c{i}": 0.25 + 0.01 * i + 0.003 * (i % 3) for i in range(12)}
    rec = records({("", "A"): [tasks_a], ("", "B"): [tasks_b]}, "ap")
    claim = {"kind": "better", "method": "A", "than": "B", "metric": "ap", "unit": "tasks"}
    row = grade(claim, rec)
    d = np.array([tasks_a[k] - tasks_b[k] for k in tasks_a])
    assert row["grade"] == "FAIL"                       # ap: higher is better, A is lower
    back = grade({**claim, "method": "B", "than": "A"}, rec)
    lo, hi = t_interval(-d)
    assert back["grade"] == "OK" and "over 12 trial x task pairs" in back["measured"]
    assert f"[+{100 * lo:.2f}, +{100 * hi:.2f}]" in back["measured"]
    assert grade({**claim, "unit": "trials"}, rec)["grade"] == "FAIL"
    mean_name = grade({**claim, "metric": "map"}, rec)              # the mean's name has no per-task values
    assert mean_name["grade"] == "MISSING" and "per-task values in this run: ap/<task>" in mean_name["measured"]
    assert grade({**claim, "method": "B", "than": "A", "unit": "trials"}, rec)["grade"] == "TREND"


# ----------------------------------------------------------------------------- improves
def test_improves_across_methods_and_metrics_pairs_by_trial():
    rec = records({("k=0", "KLR"): [0.30, 0.25, 0.28, 0.27]}, "vote_error_rate") + \
        records({("k=20", "PKLR"): [0.14, 0.10, 0.15, 0.12]})
    claim = {"kind": "improves", "method": "PKLR", "metric": "error_rate", "from_": "k=0", "to": "k=20",
             "from_method": "KLR", "from_metric": "vote_error_rate", "by": 0.08}
    row = grade(claim, rec, ("k=0", "k=20"))
    lo, hi = t_interval(np.array([0.14, 0.10, 0.15, 0.12]) - np.array([0.30, 0.25, 0.28, 0.27]))
    assert row["grade"] == ("OK" if -hi > 0.08 else "TREND")
    assert row["measured"].startswith("27.50 -> 12.75") and "needs a gain above 8.00" in row["measured"]
    assert "KLR's vote_error_rate at k=0" in row["claim"]


def test_improves_pairs_only_trials_whose_rows_agree():
    rec = records({("k=0", "A"): [0.30, 0.25, 0.28], ("k=20", "A"): [0.10, 0.12, 0.50]})
    claim = {"kind": "improves", "method": "A", "metric": "error_rate", "from_": "k=0", "to": "k=20"}
    same = {t: TrialSplit.drawn({"train": [1, 2], "test": [3], "constraints": [[t]]}, trial=t) for t in range(3)}
    moved = {**same, 2: TrialSplit.drawn({"train": [1, 3], "test": [2]}, trial=2)}
    row = grade(claim, rec, ("k=0", "k=20"), splits={"k=0": same, "k=20": moved})
    assert "trial(s) 2 left out: their train / test rows differ" in row["measured"]
    assert "over 2 trials" in row["measured"] and "-> 11.00" in row["measured"]
    # the constraints differ between the settings, the rows do not: every trial is paired
    assert "over 3 trials" in grade(claim, rec, ("k=0", "k=20"), splits={"k=0": same, "k=20": same})["measured"]


def test_improves_without_a_shared_split_is_a_trend_at_best_and_fails_on_the_means():
    """No trial shares its rows between the settings: no paired test, so the right sign is a TREND
    at best, and the wrong sign or a mean short of the margin fails (it was TREND whatever the
    means said); sides that share no trial are MISSING, as for better."""
    moved = {t: TrialSplit.drawn({"train": [1, 2], "test": [3]}, trial=t) for t in range(3)}
    other = {t: TrialSplit.drawn({"train": [1, 3], "test": [2]}, trial=t) for t in range(3)}
    claim = {"kind": "improves", "method": "A", "metric": "error_rate", "from_": "k=0", "to": "k=20"}
    for to, by, grade_, why in (([0.10, 0.12, 0.11], 0.0, "TREND", None), ([0.40, 0.42, 0.41], 0.0, "FAIL", "the wrong sign"),
                                ([0.20, 0.22, 0.21], 0.10, "FAIL", "short of the margin")):
        rec = records({("k=0", "A"): [0.30, 0.25, 0.28], ("k=20", "A"): to})
        row = grade({**claim, "by": by}, rec, ("k=0", "k=20"), splits={"k=0": moved, "k=20": other})
        assert row["grade"] == grade_, row
        assert row["measured"].startswith(f"27.67 -> {100 * np.mean(to):.2f} (means; no trial shares its train / test "
                                          "rows between the two settings: no paired test possible")
        assert (f"the means show {why}" in row["measured"]) if why else "means show" not in row["measured"]
    rec = records({("k=0", "A"): [0.30, 0.25]}) + [r for r in records({("k=20", "A"): [0, 0, 0.1, 0.1]}) if r.trial >= 2]
    row = grade(claim, rec, ("k=0", "k=20"))
    assert row["grade"] == "MISSING" and "share no trial" in row["measured"]


def test_improves_voids_on_a_collapsed_starting_point():
    rec = records({("k=0", "A"): [0.60, 0.62, 0.61], ("k=20", "A"): [0.10, 0.12, 0.11]})
    claim = {"kind": "improves", "method": "A", "metric": "error_rate", "from_": "k=0", "to": "k=20",
             "baseline_limit": 0.25}
    assert grade(claim, rec, ("k=0", "k=20"))["grade"] == "VOID"


# ----------------------------------------------------------------------------- curves
def rec(method, xs, ys, trial=0):
    return record("", trial, method, curves={"staged": {"rank_s": list(xs), "map@100": list(ys)}})


CURVE = {"curve": "staged", "x": "rank_s", "y": "map@100", "than": "RB", "method": "IRB"}


def test_mean_curve_interpolates_trials_on_a_common_grid():
    recs = [rec("A", [0, 2], [0.0, 1.0], 0), rec("A", [0, 1, 2], [0.0, 0.0, 1.0], 1)]
    x, y = mean_curve(recs, "A", "staged", "rank_s", "map@100")
    assert list(x) == [0, 1, 2] and list(y) == pytest.approx([0.0, 0.25, 1.0])


def noisy_pair(offsets, n=6):
    """IRB = RB + offset(trial) on a shared x grid, RB's level different per trial."""
    xs = np.linspace(0, 10, 11)
    out = []
    for t in range(n):
        base = 0.3 + 0.04 * t + 0.02 * np.sqrt(xs)
        out += [rec("RB", xs, base, t), rec("IRB", xs, base + offsets[t], t)]
    return out


def test_dominates_is_the_paired_mean_gap_over_the_grid():
    offs = [0.02, 0.03, 0.01, 0.025, 0.015, 0.02]
    row = grade({"kind": "dominates", **CURVE}, noisy_pair(offs))
    lo, hi = t_interval(np.array(offs))
    assert row["grade"] == "OK" and f"[+{100 * lo:.2f}, +{100 * hi:.2f}]" in row["measured"]
    assert "11 of 11 rank_s points at or above" in row["measured"]
    tie = grade({"kind": "dominates", **CURVE}, noisy_pair([0.0] * 6))
    assert tie["grade"] == "FAIL" and "a tie" in tie["measured"]
    mixed = grade({"kind": "dominates", **CURVE}, noisy_pair([0.04, -0.03, 0.02, -0.02, 0.05, -0.01]))
    assert mixed["grade"] == "TREND"


def test_dominates_fails_where_the_other_curve_is_significantly_above_at_some_points():
    xs = np.linspace(0, 10, 11)
    recs = []
    for t in range(5):
        base = 0.3 + 0.03 * t + 0.0 * xs
        bump = np.where(xs >= 8, -0.02 - 0.002 * t, 0.05 + 0.004 * t)   # above, then clearly below
        recs += [rec("RB", xs, base, t), rec("IRB", xs, base + bump, t)]
    row = grade({"kind": "dominates", **CURVE}, recs)
    assert row["grade"] == "FAIL" and "RB significantly above at 3 point(s), from rank_s = 8" in row["measured"]
    assert "8 of 11 rank_s points at or above" in row["measured"]


def test_dominates_area_matches_trapezoid_and_the_span_decides_the_range():
    # IRB stops at x = 4 at its final 0.5; RB climbs on to 0.6 at x = 10
    recs = [rec("IRB", [0, 2, 4], [0.1, 0.4, 0.5], t) for t in range(2)] + \
        [rec("RB", [0, 5, 10], [0.1 + 0.01 * t, 0.35, 0.6], t) for t in range(2)]
    overlap = grade({"kind": "dominates", **CURVE}, recs)
    union = grade({"kind": "dominates", **CURVE, "span": "union"}, recs)
    assert "over rank_s 0 to 4 " in overlap["measured"] and "over rank_s 0 to 10 " in union["measured"]
    grid = np.array([0, 2, 4, 5, 10.0])
    gaps = [np.interp(grid, [0, 2, 4], [0.1, 0.4, 0.5]) - np.interp(grid, [0, 5, 10], [0.1 + 0.01 * t, 0.35, 0.6])
            for t in range(2)]
    mean_gap = np.mean([trapezoid(g, grid) / 10 for g in gaps])
    assert f"mean gap {100 * mean_gap:+.2f}".replace("+-", "-") in union["measured"]
    assert overlap["grade"] == "OK"   # IRB above RB up to x = 4; beyond, RB's climb decides the union


def test_one_curve_trial_is_at_best_a_trend():
    recs = [rec("IRB", [0.0, 1.0, 2.0, 10.0], [0.0, 0.30, 0.40, 0.45]),
            rec("RB", [0.0, 3.0, 6.0, 9.0], [0.0, 0.20, 0.30, 0.40])]
    row = grade({"kind": "dominates", **CURVE}, recs)
    assert row["grade"] == "TREND" and "1 trial: no test possible" in row["measured"]
    assert grade({"kind": "dominates", **CURVE, "method": "RB", "than": "IRB"}, recs)["grade"] == "FAIL"


def speed_pair(speedups):
    """RB reaches its best 0.5 at x = 9; IRB reaches it at 9 / speedup, per trial."""
    out = []
    for t, s in enumerate(speedups):
        out += [rec("RB", [0, 3, 9], [0.0, 0.3, 0.5], t), rec("IRB", [0, 9 / s, 20], [0.0, 0.5, 0.5], t)]
    return out


def test_speedup_is_the_geometric_mean_ratio_with_its_interval():
    ratios = np.array([4.5, 5.0, 4.0, 6.0])
    row = grade({"kind": "speedup", **CURVE, "at_least": 3}, speed_pair(ratios))
    lo, hi = t_interval(np.log(ratios))
    assert row["grade"] == "OK"
    assert row["measured"].startswith(f"{np.exp(np.log(ratios).mean()):.2f}x [{np.exp(lo):.2f}, {np.exp(hi):.2f}]")
    assert grade({"kind": "speedup", **CURVE, "at_least": 4.6}, speed_pair(ratios))["grade"] == "TREND"  # 4.82x
    assert grade({"kind": "speedup", **CURVE, "at_least": 5}, speed_pair(ratios))["grade"] == "FAIL"
    one = grade({"kind": "speedup", **CURVE, "at_least": 3}, speed_pair([4.5]))
    assert one["grade"] == "TREND" and one["measured"].startswith("4.50x (1 trial;")


def test_speedup_level_and_a_method_that_never_reaches_the_target():
    recs = []
    for t in range(6):
        recs += [rec("RB", [0, 5, 10], [0.0, 0.45, 0.5], t), rec("IRB", [0, 1, 4], [0.0, 0.46, 0.47], t)]
    full = grade({"kind": "speedup", **CURVE, "at_least": 3}, recs)
    assert full["grade"] == "FAIL" and "never reaches RB's best map@100 (50.00) in 6 of 6 trials" in full["measured"]
    # 90 % of RB's best is 0.45: RB reaches it at 5, IRB at 1 -> 5x in each of 6 trials (sign test)
    ninety = grade({"kind": "speedup", **CURVE, "at_least": 3, "level": 0.9}, recs)
    assert ninety["grade"] == "OK" and ninety["measured"].startswith("5.00x") and "90% of RB's best" in ninety["measured"]
    gap = grade({"kind": "speedup", **CURVE, "at_least": 3, "known_gap": "pruned"}, recs)
    assert gap["grade"] == "GAP"


def test_speedup_at_x_zero_is_a_tie_and_an_unreachable_own_target_is_missing():
    """Both reaching the target at x = 0 was a ratio of 0 (log -inf, 'the wrong sign'); a than
    that cannot reach level x its own best (a negative best) was a TypeError."""
    recs = []
    for t in range(5):   # five trials 3.3x faster, one where both start at the target
        recs += [rec("RB", [0, 3, 10], [0.0, 0.3, 0.5], t), rec("IRB", [0, 3, 10 / 3.3], [0.0, 0.3, 0.5], t)]
    recs += [rec("RB", [0, 3, 10], [0.5, 0.5, 0.5], 5), rec("IRB", [0, 3, 10], [0.5, 0.5, 0.5], 5)]
    row = grade({"kind": "speedup", **CURVE, "at_least": 1.5}, recs)
    logs = np.log([3.3] * 5 + [1.0])
    lo, _ = t_interval(logs)
    assert row["measured"].startswith(f"{np.exp(logs.mean()):.2f}x") and row["grade"] == ("OK" if lo > np.log(1.5)
                                                                                       else "TREND")
    negative = [rec("RB", [0, 3, 10], [-0.5, -0.3, -0.2], t) for t in range(2)] + \
        [rec("IRB", [0, 3, 10], [-0.5, -0.2, -0.1], t) for t in range(2)]
    row = grade({"kind": "speedup", **CURVE, "at_least": 1.5, "level": 0.9}, negative)
    assert row["grade"] == "MISSING" and "RB never reaches 90% of RB's best map@100" in row["measured"]


def test_curve_claims_void_when_the_baselines_curve_ends_too_low():
    row = grade({"kind": "speedup", **CURVE, "at_least": 3, "baseline_limit": 0.6}, speed_pair([4.5, 5, 4, 6]))
    assert row["grade"] == "VOID" and "RB's final map@100 50.00 is worse than the paper's own baseline" in row["measured"]
    slow = grade({"kind": "speedup", **CURVE, "at_least": 9, "baseline_limit": 0.6}, speed_pair([4.5, 5, 4, 6]))
    assert slow["grade"] == "VOID"
    assert grade({"kind": "dominates", **CURVE, "baseline_limit": 0.6}, speed_pair([4.5, 5, 4, 6]))["grade"] == "VOID"
    assert grade({"kind": "dominates", **CURVE, "baseline_limit": 0.4}, speed_pair([4.5, 5, 4, 6]))["grade"] == "OK"


def test_a_claim_on_a_curve_not_stored_is_missing():
    row = grade({"kind": "speedup", **CURVE, "at_least": 2}, records({("", "A"): B}))
    assert row["grade"] == "MISSING" and "not stored as series 'rank_s' and 'map@100'" in row["measured"]
    # stored at a sweep's settings, and the claim names none: the settings it could name
    swept = [r.model_copy(update={"setting": "k=5"}) for r in speed_pair([4.5, 5])]
    row = grade({"kind": "dominates", **CURVE}, swept, ("k=5",))
    assert row["grade"] == "MISSING" and row["measured"].endswith(
        "at no setting; this run's settings are k=5: give the claim one of them as setting:")


def test_dominates_tolerance_forgives_small_dips_only_and_never_a_tie():
    xs = np.linspace(0, 10, 11)
    recs = []
    for t in range(6):
        base = 0.3 + 0.03 * t + 0.0 * xs
        dip = np.where(xs >= 8, -0.01, 0.05 + 0.004 * t)          # the same small dip in every trial
        recs += [rec("RB", xs, base, t), rec("IRB", xs, base + dip, t)]
    assert grade({"kind": "dominates", **CURVE}, recs)["grade"] == "FAIL"      # 6 trials agree: significant
    assert grade({"kind": "dominates", **CURVE, "by": 0.02}, recs)["grade"] == "OK"
    # over 3 trials the same dip is not yet significant (the sign test needs 6)
    assert grade({"kind": "dominates", **CURVE}, recs[:6])["grade"] == "OK"
    same = [rec(m, xs, 0.3 + 0.0 * xs, t) for t in range(6) for m in ("RB", "IRB")]
    assert grade({"kind": "dominates", **CURVE, "by": 0.02}, same)["grade"] == "FAIL"

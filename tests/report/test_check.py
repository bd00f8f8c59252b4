"""Published numbers graded: every grade, its boundaries, the trial count and the standard error."""

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankbench.config import ExpectedCfg
from rankbench.report.check import Grade, any_fail, legend, check_markdown, counts_line, grade_counts, grade_rows


def summary(mean, std=0.001, n=10, method="A", metric="cmc@1", setting=""):
    return pd.DataFrame([(setting, method, metric, mean, std if n > 1 else np.nan, n)],
                        columns=["setting", "method", "metric", "mean", "std", "n_trials"])


def one(s, **entry) -> dict:
    row, = grade_rows(s, [ExpectedCfg(method="A", metric="cmc@1", value=0.50, tolerance=0.02, **entry)])
    return row


@pytest.mark.parametrize("ours, grade", [
    (0.52, "OK"), (0.48, "OK"),                  # exactly at the tolerance: OK
    (0.5201, "OKISH"), (0.53, "OKISH"),          # beyond it, up to 1.5x
    (0.5301, "FAIL"), (0.40, "FAIL"),            # beyond 1.5x
])
def test_grade_boundaries(ours, grade):
    row = one(summary(ours))
    assert row["grade"] == grade and row["diff"] == pytest.approx(ours - 0.50)


def test_reasons_say_why():
    assert one(summary(0.51))["reason"] == "off by 1.00 points, within the tolerance 2.00 points"
    assert "beyond the tolerance 2.00 points but within 1.5x" in one(summary(0.525))["reason"]
    assert "beyond 1.5x the tolerance" in one(summary(0.60))["reason"]
    # before: 'off by 0.00 points, beyond 1.5x the tolerance 0.00 points'
    row, = grade_rows(summary(0.5000001), [ExpectedCfg(method="A", metric="cmc@1", value=0.5, tolerance=0)])
    assert row["grade"] == "FAIL" and row["reason"].startswith("off by 1e-05 points, beyond 1.5x the tolerance 0.00")


def test_a_known_gap_turns_a_fail_into_gap_only():
    gap = one(summary(0.60), known_gap="our features differ")
    assert gap["grade"] == "GAP" and gap["reason"].endswith("known gap: our features differ")
    assert one(summary(0.51), known_gap="x")["grade"] == "OK"
    assert one(summary(0.525), known_gap="x")["grade"] == "OKISH"


def test_missing_and_published_only():
    assert one(summary(0.5, method="B"))["reason"] == "not measured in this run"
    # a sweep's number that names no setting, or another: the settings it could name
    swept = pd.concat([summary(0.5, setting="n=5"), summary(0.6, setting="n=8")])
    for entry, names in (({}, "names no setting"), ({"setting": "n=7"}, "names setting 'n=7'")):
        row = one(swept, **entry)
        assert row["grade"] == "MISSING" and row["reason"] == (f"{names}; this run's settings are n=5, n=8: give "
                                                               "the entry one of them as setting:")
    row, = grade_rows(summary(0.5), [ExpectedCfg(method="P", metric="cmc@1", value=0.3, tolerance=0.1,
                                                 published_only=True)])
    assert row["grade"] == "PUBLISHED" and row["ours"] is None


def test_fewer_trials_than_the_paper_are_said_in_the_reason():
    row = one(summary(0.51, n=3, std=0.01), trials=50)
    assert row["grade"] == "OK" and row["reason"].endswith("over 3 of the paper's 50 trials")
    assert "paper's" not in one(summary(0.51, n=50, std=0.01), trials=50)["reason"]
    # before: more trials than the paper's were graded without a word (ours is the mean of all 4)
    assert one(summary(0.51, n=4, std=0.01), trials=2)["reason"].endswith("; over 4 trials, the paper's over 2")


@pytest.mark.parametrize("std, n, grade", [
    (0.02 * np.sqrt(3) - 1e-6, 3, "OK"),         # standard error just inside the tolerance
    (0.02 * np.sqrt(3) + 1e-6, 3, "INCONCLUSIVE"),
    (0.10, 100, "OK"),                           # the same spread over enough trials
])
def test_a_standard_error_beyond_the_tolerance_is_inconclusive(std, n, grade):
    row = one(summary(0.51, std=std, n=n))
    assert row["se"] == pytest.approx(std / np.sqrt(n)) and row["grade"] == grade
    if grade == "INCONCLUSIVE":
        assert "standard error 2.00 points exceeds the tolerance 2.00 points: this check cannot tell" in row["reason"]


def test_noise_does_not_hide_a_miss_but_is_said():
    row = one(summary(0.60, std=0.2, n=3))
    assert row["grade"] == "FAIL" and "(the standard error 11.55 points exceeds the tolerance" in row["reason"]


def test_one_trial_uses_the_published_spread_when_the_config_gives_it():
    assert one(summary(0.51, n=1), std=0.05)["grade"] == "INCONCLUSIVE"
    assert "one trial; the published spread" in one(summary(0.51, n=1), std=0.05)["reason"]
    assert one(summary(0.51, n=1), std=0.01)["grade"] == "OK"
    plain = one(summary(0.51, n=1))
    assert plain["grade"] == "OK" and plain["reason"].endswith("one trial: its spread is unknown")


def test_every_grade_has_its_meaning_and_only_fail_failed_missing_fail_check():
    assert [g for g in Grade if g.fails] == ["FAIL", "FAILED", "MISSING"]
    assert Grade("NOT RUN") is Grade.NOT_RUN and json.dumps([Grade.NOT_RUN]) == '["NOT RUN"]' and f"{Grade.OK}" == "OK"
    text = legend()
    assert all(g.meaning and f"{g} = {g.meaning}" in text for g in Grade)


@pytest.mark.parametrize("doc", ["README.md", "DEVELOPING.md"])
def test_the_documents_point_to_the_legend_instead_of_restating_it(doc):
    """A legend written by hand goes stale: no table row starts with a grade, and no paragraph names
    most grades (a verdict rule may name a few)."""
    text = (Path(__file__).resolve().parents[2] / doc).read_text(encoding="utf-8")
    names = "|".join(re.escape(g) for g in Grade)
    for block in re.split(r"\n\s*\n", text):
        for part in block.splitlines() if block.lstrip().startswith("|") else [block]:
            assert not re.match(rf"\|\s*({names})\s*\|", part), part
            named = {g for g in Grade if re.search(rf"(?<![\w-]){re.escape(g)}(?![\w-])", part)}
            assert len(named) < 6, part


def test_only_fail_and_missing_fail_check_and_counts_keep_the_grade_order():
    rows = [{"grade": g} for g in ("GAP", "OK", "TREND", "INCONCLUSIVE", "OK", "VOID", "OKISH", "PUBLISHED")]
    assert not any_fail(rows)
    assert any_fail(rows + [{"grade": "FAIL"}]) and any_fail(rows + [{"grade": "MISSING"}])
    assert list(grade_counts(rows)) == ["OK", "OKISH", "TREND", "INCONCLUSIVE", "GAP", "VOID", "PUBLISHED"]
    assert counts_line(rows[:1], "claim") == "1 claim: 1 GAP"
    assert counts_line(rows, "claim") == "8 claims: 2 OK, 1 OKISH, 1 TREND, 1 INCONCLUSIVE, 1 GAP, 1 VOID, 1 PUBLISHED"
    assert counts_line([], "claim") == ""


def test_markdown_carries_the_trials_and_the_reason():
    md = check_markdown([one(summary(0.51, n=3, std=0.01), trials=50)])
    assert "| 51.00 ± 1.00 | 3 | 50.00 |" in md and "over 3 of the paper's 50 trials" in md


def test_many_per_task_numbers_print_as_a_method_by_task_matrix():
    tasks = ["natural", "open", "perspective", "size"]
    s = pd.DataFrame([("", m, f"pair_acc/{t}", 0.80 + 0.01 * i, 0.01, 3) for m in ("A", "B") for i, t in enumerate(tasks)]
                     + [("", "A", "pair_acc", 0.8, 0.01, 3)],
                     columns=["setting", "method", "metric", "mean", "std", "n_trials"])
    entries = [ExpectedCfg(method=m, metric=f"pair_acc/{t}", value=0.80, tolerance=0.02) for m in ("A", "B")
               for t in tasks] + [ExpectedCfg(method="A", metric="pair_acc", value=0.8, tolerance=0.02)]
    md = check_markdown(grade_rows(s, entries))
    assert "| method | natural | open | perspective | size |" in md
    assert "| A | 80.00 / 80.00 OK | 81.00 / 80.00 OK | 82.00 / 80.00 OK | 83.00 / 80.00 OKISH |" in md
    assert "- B, size: OKISH, off by 3.00 points" in md
    assert md.count("| A | pair_acc | 80.00 ± 1.00 |") == 1          # the plain mean in the table below
    three = check_markdown(grade_rows(s, [e for e in entries if not e.metric.endswith("size")]))
    assert "| method | natural" not in three                          # 3 tasks: one table as before


def test_a_report_refuses_a_hand_broken_published_entry_in_one_line(runs, tmp_path):
    """A run's own published numbers are checked where they are read, as `check` checks them: a
    negative tolerance written into config.yaml by hand is one line naming the file and field."""
    import shutil

    import yaml

    from rankbench.errors import ConfigError
    from rankbench.report.build import build_report

    run = shutil.copytree(runs["a"], tmp_path / "a")
    config = yaml.safe_load((run / "config.yaml").read_text())
    config["expected"][0]["tolerance"] = -0.1
    (run / "config.yaml").write_text(yaml.safe_dump(config))
    with pytest.raises(ConfigError) as err:
        build_report(run, plots=False)
    message = str(err.value)
    assert "\n" not in message and "config.yaml" in message and "expected" in message and "tolerance" in message

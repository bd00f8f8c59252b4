"""Paired comparisons of runs and of methods, checked against independent computations."""

import itertools

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

from rankbench import app
from rankbench.cli import main
from rankbench.errors import RankbenchError
from rankbench.report.compare import paired_stats


def exact_wilcoxon_p(d):
    """Two-sided exact signed-rank p-value by enumerating every sign pattern (no ties, no zeros)."""
    ranks = stats.rankdata(np.abs(d))
    w = ranks[d > 0].sum()
    dist = np.array([sum(r for r, s in zip(ranks, signs) if s) for signs in itertools.product([0, 1], repeat=len(d))])
    return min(1.0, 2 * min((dist <= w).mean(), (dist >= w).mean()))


def test_paired_stats_match_a_one_sample_t_interval_and_the_exact_signed_rank_test():
    rng = np.random.default_rng(0)
    a = rng.normal(0.5, 0.1, 9)
    b = a - rng.normal(0.03, 0.02, 9) + rng.normal(0, 1e-3, 9)
    st = paired_stats(a, b)
    one = stats.ttest_1samp(a - b, 0.0)
    ci = one.confidence_interval(0.95)
    assert st.n_trials == 9 and st.diff == pytest.approx(np.mean(a - b))
    assert (st.ci_low, st.ci_high) == pytest.approx((ci.low, ci.high))
    assert st.t_p == pytest.approx(one.pvalue)
    assert st.wilcoxon_p == pytest.approx(exact_wilcoxon_p(a - b))


def test_paired_stats_edge_cases_say_that_no_test_applies():
    same = paired_stats([0.1, 0.2, 0.3], [0.1, 0.2, 0.3])
    assert same.diff == 0 and same.test == "identical differences"
    assert np.isnan(same.t_p) and np.isnan(same.wilcoxon_p) and np.isnan(same.ci_low)
    # a constant non-zero difference has no spread either: no p-value (scipy's t-test would divide by zero)
    shifted = paired_stats([0.3, 0.5, 0.7], [0.2, 0.4, 0.6])
    assert shifted.diff == pytest.approx(0.1) and shifted.test == "identical differences"
    assert shifted.sd == 0 and np.isnan(shifted.t_p)
    one = paired_stats([0.4], [0.3])
    assert one.diff == pytest.approx(0.1) and np.isnan(one.ci_low) and np.isnan(one.t_p)
    assert one.test == "1 trial"
    assert paired_stats([0.2, 0.5], [0.1, 0.3]).test == "t"


def holm_by_definition(p):
    """Holm's adjusted p-values written out from the definition: the k-th smallest of m becomes
    max_{j <= k} min(1, (m - j + 1) p_(j))."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 0.0
    for k, i in enumerate(order):
        running = max(running, min(1.0, (m - k) * p[i]))
        out[i] = running
    return out


def test_holm_matches_its_definition_and_leaves_non_tests_alone():
    from rankbench.report.compare import holm

    rng = np.random.default_rng(3)
    for _ in range(20):
        p = list(rng.uniform(0, 0.2, rng.integers(1, 9)))
        assert holm(p) == pytest.approx(holm_by_definition(p))
    got = holm([0.01, np.nan, 0.04, 0.03])
    assert np.isnan(got[1]) and got[[0, 2, 3]] == pytest.approx(holm_by_definition([0.01, 0.04, 0.03]))


def trials_of(run, method, metric):
    t, _ = app.load_results(run)
    return t[(t.method == method) & (t.metric == metric)].set_index("trial")["value"]


def test_two_runs_with_the_same_seed_are_paired_on_the_same_splits(runs, tmp_path):
    csv = tmp_path / "c.csv"
    res = app.compare(runs["a"], runs["b"], metrics=["cmc@1", "nauc"], csv=csv)
    assert not res.warnings
    t = res.table
    # methods in both runs only (Euclidean is only in a), trials both ran (a has 3, b has 4)
    assert set(t["a"]) == {"L1 (A)", "Bhattacharyya (A)"} and set(t["metric"]) == {"cmc@1", "nauc"}
    assert (t["n_trials"] == 3).all() and t["same_splits"].all()
    # same config, same seed, deterministic rankers: every difference is zero, and no test applies
    assert np.allclose(t["diff"], 0) and (t["better"] == "no test applies (identical differences)").all()
    assert t["t_p"].isna().all() and (t["test"] == "identical differences").all()
    md = res.to_markdown()
    assert "no test applies" in md and "zero variance" in md and "< 0.001" not in md
    assert "no test applies to any row" in md and "(one test)" not in md      # no test was made
    back = pd.read_csv(csv)
    assert list(back.columns[:4]) == ["setting", "a", "b", "metric"] and len(back) == 4
    assert back["mean_a"].max() <= 1.0   # fractions in the CSV, as in the run folders


def test_runs_with_other_splits_are_compared_with_a_warning(runs):
    res = app.compare(runs["a"], runs["c"], metrics=["cmc@1"])
    assert len(res.warnings) == 1 and "trial(s) 0, 1, 2 differ" in res.warnings[0]
    assert not res.table["same_splits"].any()
    row = res.table[res.table.a == "L1 (A)"].iloc[0]
    a, c = trials_of(runs["a"], "L1", "cmc@1"), trials_of(runs["c"], "L1", "cmc@1")
    assert row["diff"] == pytest.approx((a - c).mean())
    assert "(splits differ)" in res.to_markdown() and "**Warning:**" in res.to_markdown()


def test_what_check_says_first_about_a_run_compare_says_too(runs, tmp_path):
    # an incomplete run was compared over the trials left, without a word
    import shutil

    run = shutil.copytree(runs["a"], tmp_path / "a")
    sorted((run / "trials").glob("*.json"))[0].unlink()
    res = app.compare(run, methods=("Bhattacharyya", "L1"))
    assert res.warnings[0] == f"{run}: Incomplete run: 8 of 9 results (continue it with `--resume {run}`)."
    assert not app.compare(runs["a"], methods=("Bhattacharyya", "L1")).warnings


def test_two_methods_of_one_run(runs):
    res = app.compare(runs["a"], methods=("Bhattacharyya", "L1"))
    assert list(res.table["metric"]) == ["cmc@1", "cmc@5", "cmc@10", "map", "nauc"]     # quality metrics, natural order
    row = res.table[res.table.metric == "nauc"].iloc[0]
    x, y = trials_of(runs["a"], "Bhattacharyya", "nauc"), trials_of(runs["a"], "L1", "nauc")
    assert row["diff"] == pytest.approx((x - y).mean())
    assert row["t_p"] == pytest.approx(stats.ttest_rel(x, y).pvalue)
    # four metrics at once: the p-values are adjusted together, and the verdict uses the adjusted one
    raw = [stats.ttest_rel(trials_of(runs["a"], "Bhattacharyya", m), trials_of(runs["a"], "L1", m)).pvalue
           if (trials_of(runs["a"], "Bhattacharyya", m) - trials_of(runs["a"], "L1", m)).std() > 0 else np.nan
           for m in res.table["metric"]]
    tested = [p for p in raw if not np.isnan(p)]
    assert res.table["t_p_adj"].dropna().to_numpy() == pytest.approx(holm_by_definition(tested))
    adj = row["t_p_adj"]
    expect = "no significant difference" if adj >= 0.05 else ("Bhattacharyya" if row["diff"] > 0 else "L1")
    assert row["better"] == expect
    md = res.to_markdown()
    assert "| Bhattacharyya | L1 | nauc | 3 |" in md and "95 % CI" in md
    assert f"adjusted by Holm's method over the {len(tested)} tests of this table; each row's 95 % interval is its own, " \
           "not adjusted" in md   # before: silent, beside adjusted p-values a row's interval can contradict
    plain = app.compare(runs["a"], methods=("Bhattacharyya", "L1"), correction="none")
    assert plain.table["t_p_adj"].equals(plain.table["t_p"]) and "no multiple-comparison correction" in plain.to_markdown()
    single = app.compare(runs["a"], methods=("Bhattacharyya", "L1"), metrics=["nauc"])
    assert "no multiple-comparison correction (one test)" in single.to_markdown()


def test_lower_is_better_metrics_decide_the_better_side_the_other_way():
    from rankbench.report.compare import _better

    st = {"diff": -0.2, "t_p": 0.001}
    assert _better("mae", st, "A", "B") == "A" and _better("cmc@1", st, "A", "B") == "B"


def one_line(res, *needles):
    assert res.exit_code != 0 and "Traceback" not in res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rankbench: error:"), res.output
    for n in needles:
        assert n in lines[0], lines[0]


def test_compare_command_and_its_one_line_errors(runs, tmp_path):
    cli = CliRunner()

    def run(*args):
        return cli.invoke(main, ["compare", *map(str, args)], catch_exceptions=False)

    ok = run(runs["a"], "--methods", "Bhattacharyya", "L1", "--metric", "cmc@1", "--csv", tmp_path / "x.csv")
    assert ok.exit_code == 0 and "| Bhattacharyya | L1 | cmc@1 |" in ok.output and (tmp_path / "x.csv").is_file()
    warned = run(runs["a"], runs["c"], "--metric", "cmc@1")
    assert warned.exit_code == 0 and "warning: the splits of trial(s)" in warned.output
    one_line(run(runs["a"]), "expected a second run or --methods X Y")
    one_line(run(runs["a"], "--methods", "L1", "Ghost"), "--methods", "got 'Ghost'", "Bhattacharyya")
    one_line(run(runs["a"], "--methods", "L1", "L1"), "two different methods")
    one_line(run(runs["a"], "--methods", "L1", "Euclidean", "--metric", "cmc@3"), "--metric", "got 'cmc@3'", "cmc@1")
    one_line(run(runs["a"], runs["b"], "--methods", "L1", "Euclidean"), "--methods", "expected one run")
    one_line(run(runs["a"], runs["sweep"]), "no setting in common")
    one_line(run(runs["a"], runs["b"], runs["c"]), "expected one or two run folders")
    one_line(run(tmp_path / "nope"), "no such run folder")
    one_line(run(runs["a"], "--methods", "L1"), "--methods")


def test_compare_refuses_runs_without_shared_methods(runs, tmp_path):
    import shutil

    from rankbench.runfolder import RunFolder

    other = tmp_path / "other"
    shutil.copytree(runs["b"], other)
    folder = RunFolder(other)
    records, _ = folder.read_trials()
    cfg = folder.read_config()
    cfg["rankers"] = [{**r, "name": "X" + r["name"]} for r in cfg["rankers"]]
    folder.write_config(cfg)
    shutil.rmtree(folder.trials_dir)
    for rec in records:  # the same results under other method names
        folder.write_trial(rec.model_copy(update={"method": "X" + rec.method}))
    with pytest.raises(RankbenchError, match="no method in common"):
        app.compare(runs["a"], other)


def _on_other_data(run, path, setting_update=None, dataset_update=None):
    """A copy of ``run`` whose recorded data differ: its splits' setting fields and / or its
    config's dataset entry changed."""
    import shutil

    from rankbench.runfolder import RunFolder

    shutil.copytree(run, path)
    folder = RunFolder(path)
    if setting_update:
        splits = folder.read_splits()
        settings = [s.model_copy(update=setting_update) for s in splits.settings]
        folder.write_splits(splits.model_copy(update={"settings": settings}))
    if dataset_update:
        cfg = folder.read_config()
        cfg["dataset"] = {**cfg["dataset"], **dataset_update}
        folder.write_config(cfg)
    return path


@pytest.mark.parametrize("setting_update, dataset_update, said", [
    ({"dataset_fingerprint": "0123456789abcdef"}, None, "fingerprint"),
    ({"n_items": 10_000}, None, "vs 10000 items"),
    ({"dataset_fingerprint": None}, {"n_people": 41}, "n_people"),
], ids=["other content", "other size", "other loader options, no fingerprint"])
def test_compare_refuses_runs_on_other_data(runs, tmp_path, setting_update, dataset_update, said):
    other = _on_other_data(runs["b"], tmp_path / "other", setting_update, dataset_update)
    if dataset_update:  # without fingerprints on both sides, the configs' datasets decide
        _on_other_data(runs["a"], tmp_path / "a", {"dataset_fingerprint": None})
        a = tmp_path / "a"
    else:
        a = runs["a"]
    with pytest.raises(RankbenchError) as err:
        app.compare(a, other)
    msg = str(err.value)
    assert said in msg and str(other) in msg and str(a) in msg and "same items" in msg
    assert "\n" not in msg


def test_compare_takes_the_same_data_from_another_folder(runs, tmp_path):
    # only where the data live differs: the same items, so the runs are paired
    same = _on_other_data(runs["b"], tmp_path / "same", dataset_update={"root": "elsewhere"})
    assert app.compare(runs["a"], same, metrics=["cmc@1"]).table["same_splits"].all()


def test_runs_on_other_data_are_told_apart_by_size_fingerprint_labels_or_loader():
    from types import SimpleNamespace as NS

    from rankbench.report.compare import dataset_difference

    def run(n=10, fp="f", content="c", dataset=None):
        return NS(settings=[NS(label="", n_items=n, dataset_fingerprint=fp, data_content=content)],
                  config={"dataset": dataset or {"name": "t"}})

    assert dataset_difference(run(), run(), "") is None
    assert dataset_difference(run(), run(n=11), "") == "10 vs 11 items"
    assert dataset_difference(run(), run(fp="g"), "") == "dataset content fingerprint f vs g"
    # re-judged keyframes keep their fingerprint (it keys the features), not their labels
    assert "labels" in dataset_difference(run(), run(content="d"), "")
    assert dataset_difference(run(content=None), run(content="d"), "") is None   # a run made before: not said
    assert dataset_difference(run(fp=None), run(fp=None, dataset={"name": "u"}), "") == \
        "dataset {'name': 't'} vs {'name': 'u'}"

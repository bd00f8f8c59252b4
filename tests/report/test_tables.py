"""Tables as a paper prints them, and the tidy CSV frames behind them."""

import json

import numpy as np
import pandas as pd
import pytest

from rankbench import app
from toydata import record

from rankbench.report.tables import (
    Block,
    curves_frame,
    diagnostics_frame,
    fmt_value,
    in_run_order,
    latex_table,
    ordered_metrics,
    summary_blocks,
    summary_latex,
    summary_markdown,
    sweep_block,
    with_sweep_columns,
)


def rec(setting="", trial=0, method="A", metrics=None, curves=None, diagnostics=None):
    return record(setting, trial, method, metrics, curves, {"diagnostics": diagnostics or {}})


def summary(rows):
    return pd.DataFrame(rows, columns=["setting", "method", "metric", "mean", "std", "n_trials"])


def test_metric_columns_in_natural_order():
    got = ordered_metrics(["peak_mb", "cmc@20", "nauc", "cmc@5", "train_s", "cmc@1", "cmc@10", "test_s"])
    assert got == ["cmc@1", "cmc@5", "cmc@10", "cmc@20", "nauc", "train_s", "test_s", "peak_mb"]
    assert ordered_metrics(["map@500", "map", "ap@100", "map@100"]) == ["ap@100", "map@100", "map@500", "map"]


def test_values_rates_in_percent_costs_to_three_figures_no_pm_for_one_trial():
    assert fmt_value("cmc@1", 0.1627, 0.021) == "16.27 ± 2.10"
    assert fmt_value("cmc@1", 0.1627, float("nan")) == "16.27"          # one trial: no ± at all
    assert fmt_value("map", 0.4567) == "45.67"                           # MAP in % like every rate
    assert fmt_value("train_s", 123.456, 1.2) == "123 ± 1"
    assert fmt_value("train_s", 0.01234) == "0.012"
    assert fmt_value("mae", 0.34728, 0.0792) == "0.3473 ± 0.0792"
    assert fmt_value("mae", None) == "–"


def test_curves_frame_keeps_every_point_of_list_and_mapping_curves():
    recs = [rec(trial=0, curves={"cmc": [0.1, 0.5, 1.0]}),
            rec(trial=1, method="B", curves={"staged": {"rank_s": [0.0, 2.0], "map@100": [0.1, 0.3]}})]
    f = curves_frame(recs)
    assert list(f.columns) == ["setting", "trial", "method", "curve", "series", "index", "value"]
    cmc = f[f.curve == "cmc"]
    assert cmc["series"].unique().tolist() == ["cmc"] and cmc["index"].tolist() == [0, 1, 2]
    assert cmc["value"].tolist() == [0.1, 0.5, 1.0]
    staged = f[f.curve == "staged"].set_index(["series", "index"])["value"]
    assert staged[("rank_s", 1)] == 2.0 and staged[("map@100", 1)] == 0.3
    assert curves_frame([rec()]).empty


def test_diagnostics_frame_per_trial_per_task_and_nested():
    whole = rec(method="PRSVM", metrics={"cmc@1": 0.1}, diagnostics={"C": 0.5, "stop": "converged"})
    per_task = rec(method="MKL", metrics={"pair_acc": 0.8, "pair_acc/Male": 0.8, "pair_acc/Young": 0.7},
                   diagnostics={"Male": {"C": 1.0, "kernel_weights": {"gist": 0.7, "lbp": 0.3}},
                                "Young": {"C": 10.0}})
    # a whole-trial diagnostic whose values happen to be mappings is not mistaken for tasks
    views = rec(method="V", metrics={"mae": 0.3}, diagnostics={"kernel_weights": {"a": 1.0}})
    f = diagnostics_frame([whole, per_task, views])
    assert list(f.columns) == ["setting", "trial", "method", "task", "name", "value"]
    got = {(r.method, r.task, r.name): r.value for r in f.itertuples()}
    assert got[("PRSVM", "", "C")] == 0.5 and got[("PRSVM", "", "stop")] == "converged"
    assert got[("MKL", "Male", "C")] == 1.0 and got[("MKL", "Young", "C")] == 10.0
    assert got[("MKL", "Male", "kernel_weights/gist")] == 0.7
    assert got[("V", "", "kernel_weights/a")] == 1.0


def test_sweep_columns_are_typed_and_sort_numerically():
    s = summary([("n=15", "A", "mae", 0.1, 0.0, 2), ("n=10", "A", "mae", 0.2, 0.0, 2),
                 ("n=120", "A", "mae", 0.3, 0.0, 2)])
    values = {"n=15": {"protocol.n": 15}, "n=10": {"protocol.n": 10}, "n=120": {"protocol.n": 120}}
    typed = with_sweep_columns(s, values)
    assert list(typed.columns[:2]) == ["setting", "protocol.n"]
    assert typed["protocol.n"].dtype.kind == "i"
    assert typed.sort_values("protocol.n")["protocol.n"].tolist() == [10, 15, 120]   # not "10" < "120" < "15"
    keys, rows, labels, *_ = sweep_block(s, ["A"], values, "mae")
    assert keys == ["n"] and rows == [[10], [15], [120]] and labels == ["n=10", "n=15", "n=120"]
    assert with_sweep_columns(s, {"": {}}) is s


def test_latex_booktabs_bold_best_in_the_metrics_direction_and_escaped():
    s = summary([("", "L1_norm", "cmc@1", 0.10, 0.01, 3), ("", "PRSVM", "cmc@1", 0.16, 0.02, 3),
                 ("", "L1_norm", "mae", 0.30, 0.01, 3), ("", "PRSVM", "mae", 0.40, 0.02, 3)])
    b, = summary_blocks(s, ["L1_norm", "PRSVM"])
    tex = latex_table(b)
    for needle in (r"\toprule", r"\midrule", r"\bottomrule", r"L1\_norm", r"cmc@1 (\%)",
                   r"\textbf{16.00} $\pm$ 2.00", r"\textbf{0.3000} $\pm$ 0.0100", r"10.00 $\pm$ 1.00"):
        assert needle in tex, needle
    one = summary([("", "A", "cmc@1", 0.5, float("nan"), 1)])
    assert r"\pm" not in summary_latex(one, "t", ["A"]).split(r"\midrule")[1].split(r"\bottomrule")[0]


def test_a_method_with_fewer_trials_is_said_beside_the_count():
    # an interrupted run: the header said "30 trial(s)" above a method that had 3
    s = summary([("", "L1", "cmc@1", 0.10, 0.01, 30), ("", "Bhat", "cmc@1", 0.16, 0.02, 3)])
    b, = summary_blocks(s, ["L1", "Bhat"])
    assert b.trials_said() == "30 trial(s) (Bhat: 3)"
    assert "30 trial(s) (Bhat: 3)." in summary_markdown(s, "t", ["L1", "Bhat"])
    assert "standard deviation over 30 trial(s) (Bhat: 3); best in bold" in summary_latex(s, "t", ["L1", "Bhat"])
    same, = summary_blocks(summary([("", "L1", "cmc@1", 0.1, 0.0, 3), ("", "Bhat", "cmc@1", 0.2, 0.0, 3)]), ["L1"])
    assert same.trials_said() == "3 trial(s)"
    # a column one trial could not give: said per method and metric
    s = summary([("", "L1", "cmc@1", 0.1, 0.0, 5), ("", "L1", "cmc@5", 0.3, 0.0, 4), ("", "Bhat", "cmc@1", 0.2, 0.0, 5),
                 ("", "Bhat", "cmc@5", 0.4, 0.0, 5), ("", "Bhat", "ap/car", 0.4, 0.0, 3)])
    plain, per_task = summary_blocks(s, ["L1", "Bhat"])
    assert plain.trials_said() == "5 trial(s) (L1 cmc@5: 4)"
    assert per_task.trials_said() == "5 trial(s) (Bhat: 3)"
    # before: the per-task table's count was said nowhere in Markdown, and HTML headed it "5 trials"
    md = summary_markdown(s, "t", ["L1", "Bhat"])
    assert md.index("5 trial(s) (Bhat: 3).") > md.index("### ap per task")
    same_tasks = summary([("", "L1", "cmc@1", 0.1, 0.0, 5), ("", "L1", "ap/car", 0.4, 0.0, 5)])
    assert "5 trial(s)." not in summary_markdown(same_tasks, "t", ["L1"]).split("### ap per task")[1]
    # a method of the run with no result at this setting (an interrupted run) is said too
    only, = summary_blocks(summary([("", "L1", "cmc@1", 0.1, 0.0, 5)]), ["L1", "LDMLR"])
    assert only.trials_said() == "5 trial(s) (LDMLR: 0)"


def test_block_for_each_setting_and_task_family():
    s = summary([("", "A", "pair_acc", 0.8, 0.0, 2), ("", "A", "pair_acc/Male", 0.9, 0.0, 2),
                 ("", "A", "pair_acc/Young", 0.7, 0.0, 2), ("", "A", "train_s", 1.0, 0.0, 2)])
    main, tasks = summary_blocks(s, ["A"])
    assert main.columns == ["pair_acc", "train_s"] and tasks.headers == ["Male", "Young"]
    assert isinstance(tasks, Block) and tasks.best("pair_acc/Male") == 0.9


def test_block_cells_and_column_bests_are_those_a_filter_of_the_summary_finds():
    rng = np.random.default_rng(0)
    rows = [("", m, metric, float("nan") if (m, metric) == ("B", "cmc@1") else float(rng.random()), float(rng.random()), 3)
            for m in ("A", "B", "C") for metric in ("cmc@1", "mae", "train_s", "map")
            if (m, metric) != ("C", "mae")]                      # one cell missing, one mean NaN
    rows = [r if r[2] != "map" else r[:3] + (float("nan"),) + r[4:] for r in rows]   # a column of NaN means
    s = summary(rows)
    b, = summary_blocks(s, ["A", "B", "C"])
    higher = {"cmc@1": True, "map": True, "mae": False, "train_s": False}
    for metric in b.columns:
        means = s.loc[s.metric == metric, "mean"].dropna()
        assert b.best(metric) == (None if means.empty else (means.max() if higher[metric] else means.min()))
        for m in ("A", "B", "C", "not a method"):
            hit = s[(s.method == m) & (s.metric == metric)]
            want = (None, None) if hit.empty else (hit["mean"].iloc[0], hit["std"].iloc[0])
            np.testing.assert_equal(b.cell(m, metric), want)
    assert b.is_best("mae", s.loc[s.metric == "mae", "mean"].min()) and not b.is_best("train_s", b.best("train_s"))


def test_in_run_order_sorts_by_the_run_order_then_keeps_rows_as_they_came():
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"setting": rng.choice(["s2", "s1", "other", ""], 60), "method": rng.choice(["B", "A", "X"], 60),
                          "trial": rng.integers(0, 3, 60), "value": np.arange(60.0)})
    settings, methods = ["s1", "s2", ""], ["A", "B"]
    pos = lambda order, v: order.index(v) if v in order else len(order)
    want = sorted(range(60), key=lambda i: (pos(settings, frame.setting[i]), pos(methods, frame.method[i]), frame.trial[i]))
    got = in_run_order(frame, settings, methods, "trial")
    assert got["value"].tolist() == frame["value"][want].tolist()


def test_run_folder_csvs_and_load_results_carry_typed_sweep_values(runs):
    out = runs["sweep"]
    s = pd.read_csv(out / "summary.csv", keep_default_na=False)
    assert list(s.columns[:2]) == ["setting", "protocol.n_test"] and s["protocol.n_test"].dtype.kind == "i"
    trials, summ = app.load_results(out)
    assert trials["protocol.n_test"].dtype.kind == "i" and summ["protocol.n_test"].dtype.kind == "i"
    assert sorted(summ["protocol.n_test"].unique()) == [10, 12, 15]
    # the Markdown tabulates the sweep by value, in numeric order
    md = (out / "summary.md").read_text()
    sweep = md.split("across the sweep")[1].split("\n## ")[0]
    assert [line.split("|")[1].strip() for line in sweep.splitlines() if line.startswith("| 1")] == ["10", "12", "15"]
    curves = pd.read_csv(out / "curves.csv", keep_default_na=False)
    assert set(curves["curve"]) == {"cmc"} and curves["protocol.n_test"].dtype.kind == "i"
    # every stored curve point is in curves.csv
    rec = json.loads(next((out / "trials").glob("*.json")).read_text())
    mine = curves[(curves.setting == rec["setting"]) & (curves.trial == rec["trial"]) & (curves.method == rec["method"])]
    assert np.allclose(mine.sort_values("index")["value"], rec["curves"]["cmc"])


def test_one_trial_run_shows_no_pm(runs):
    md = (runs["one"] / "summary.md").read_text()
    table = md.split("1 trial(s).")[1].split("\n\n")[1]
    assert "±" not in table and "| L1 |" in table
    tex = (runs["one"] / "summary.tex").read_text()
    assert r"\pm" not in tex.split(r"\midrule")[1] and "one trial" in tex


@pytest.mark.parametrize("latex", [False, True])
def test_report_command_prints_markdown_or_latex(runs, latex):
    from click.testing import CliRunner

    from rankbench.cli import main

    args = ["report", str(runs["one"]), "--no-plots"] + (["--latex"] if latex else [])
    res = CliRunner().invoke(main, args, catch_exceptions=False)
    assert res.exit_code == 0
    assert (r"\begin{tabular}" in res.output) == latex and ("| method |" in res.output) != latex


def test_a_half_is_rounded_up_whatever_the_float_holds():
    """54.375 % held as 0.54374999... was shown 54.37 in one file and 54.38 in another (a mean
    summed another way); a reader rounds a half up."""
    for held in (0.5437499999999999, 0.5437500000000001):
        assert fmt_value("cmc@10", held) == "54.38"
    assert fmt_value("mae", 0.7587499999999999) == fmt_value("mae", 0.75875) == "0.7588"
    assert fmt_value("cmc@1", 0.1234, 0.0) == "12.34 ± 0.00" and fmt_value("mae", -0.00005) == "-0.0001"

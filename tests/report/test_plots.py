"""Figures as a paper prints them (rankbench.report.plots.kinds): checked on the figure objects.
The style and files: test_plots_style.py; the layout check: test_plots_layout.py; which figures a
run gets: test_plots_choice.py; drawing a report's figures: test_plots_draw.py."""

import matplotlib
import numpy as np
import pandas as pd
import pytest

from toydata import record

from rankbench.report.plots.choice import drawn_curves, sweep_groups
from rankbench.report.plots.kinds import bar_figure, cmc_figure, curve_figure, sweep_figure, task_figure

matplotlib.use("Agg")


@pytest.fixture(autouse=True)
def _close_figures():
    """Figures a test draws without saving are closed after it (pyplot keeps them otherwise)."""
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def summary(rows):
    return pd.DataFrame(rows, columns=["setting", "method", "metric", "mean", "std", "n_trials"])


def cmc_records(method, curves, setting=""):
    return [record(setting, t, method, curves={"cmc": c}) for t, c in enumerate(curves)]


def legend_outside(fig, ax):
    """The legend's box lies beside the axes' box: it cannot cover data."""
    fig.canvas.draw()
    leg = ax.get_legend().get_window_extent()
    axes = ax.get_window_extent()
    return leg.x0 >= axes.x1 - 1


CURVE = np.linspace(0.1, 1.0, 60)
EXPECTED = [
    {"method": "PRSVM", "metric": "cmc@1", "value": 0.16},
    {"method": "PRSVM", "metric": "cmc@10", "value": 0.53},
    {"method": "PRSVM", "metric": "cmc@50", "value": 0.99},          # beyond the axis: not drawn
    {"method": "PRDC", "metric": "cmc@1", "value": 0.15, "published_only": True},   # not in the run
    {"method": "L1", "metric": "cmc@1", "value": 0.05, "setting": "other"},          # another setting
]


def test_cmc_band_markers_axis_and_published_points_per_method():
    recs = cmc_records("PRSVM", [CURVE, np.minimum(CURVE + 0.05, 1)]) + cmc_records("L1", [CURVE * 0.5])
    fig = cmc_figure(recs, ["PRSVM", "L1"], "", "CMC: viper, n_test = 316, 2 trials", max_rank=20,
                     marked=[1, 5, 10, 20, 50], expected=EXPECTED)
    ax = fig.axes[0]
    assert ax.get_title(loc="left") == "CMC\nviper, n_test = 316, 2 trials"          # what, then on what
    assert ax.get_xlim() == (1, 20) and ax.get_ylim() == (0, 100)
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    prsvm = next(ln for lab, ln in lines.items() if lab.startswith("PRSVM ("))
    assert len(prsvm.get_xdata()) == 20 and prsvm.get_markevery() == [0, 4, 9, 19]
    assert prsvm.get_clip_on() is False                                 # the curve at 100 % is not cut
    bands = [c for c in ax.collections if isinstance(c, matplotlib.collections.PolyCollection)]
    assert len(bands) == 1                                               # two trials: a band; one trial: none
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["PRSVM (12.5% at rank 1)", "PRSVM, published", "L1 (5.0% at rank 1)"]
    pub = next(c for c in ax.collections if c.get_label() == "PRSVM, published")
    assert sorted(map(tuple, pub.get_offsets())) == [(1.0, 16.0), (10.0, 53.0)]
    assert np.allclose(pub.get_edgecolor()[0][:3], prsvm.get_color()[:3])   # in the method's colour
    assert legend_outside(fig, ax)


def test_bars_start_at_zero_in_percent_with_published_diamonds():
    s = summary([("", "A", "map", 0.41, 0.02, 3), ("", "B", "map", 0.45, 0.03, 3)])
    fig = bar_figure(s, ["A", "B"], "map", "", "MAP", [{"method": "B", "metric": "map", "value": 0.5}])
    ax = fig.axes[0]
    assert ax.get_ylim()[0] == 0 and ax.get_ylabel() == "Mean average precision (%)"
    assert [round(p.get_height(), 6) for p in ax.patches] == [41.0, 45.0]
    pub = next(c for c in ax.collections if c.get_label() == "published")
    assert pub.get_offsets().tolist() == [[1.0, 50.0]]
    assert legend_outside(fig, ax)


def test_task_bars_from_zero_even_when_every_value_is_high():
    s = summary([("", m, f"pair_acc/{t}", v, 0.01, 2) for m in ("A", "B") for t, v in (("Male", 0.9), ("Young", 0.85))])
    ax = task_figure(s, ["A", "B"], "pair_acc", "", "t", []).axes[0]
    assert ax.get_ylim() == (0, 100)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["Male", "Young"]


def test_several_task_families_are_rows_of_one_figure_over_the_same_tasks():
    # AP at two depths and ranking time per concept: a row each, every row's bars those of the
    # figure of its family alone, the task names under the last row only
    rows = [("", m, f"{f}/{t}", v + (0.1 if m == "B" else 0.0), 0.01, 2) for m in ("A", "B")
            for f, scale in (("ap@100", 0.5), ("ap", 0.7), ("rank_s", 0.02)) for t, v in (("sky", scale), ("car", scale / 2))]
    s = summary(rows)
    fig = task_figure(s, ["A", "B"], ["ap@100", "ap", "rank_s"], "", "t", [])
    assert len(fig.axes) == 3 and fig.axes[0].get_legend() is not None
    for ax, fam in zip(fig.axes, ["ap@100", "ap", "rank_s"]):
        alone = task_figure(s, ["A", "B"], fam, "", "t", []).axes[0]
        assert ax.get_ylabel() == alone.get_ylabel() and ax.get_ylim() == alone.get_ylim()
        assert [b.get_height() for b in ax.patches] == [b.get_height() for b in alone.patches]
    assert [t.get_text() for t in fig.axes[-1].get_xticklabels()] == ["sky", "car"]
    assert not any(t.get_visible() and t.get_text() for t in fig.axes[0].get_xticklabels())
    from rankbench.report.plots.layout import layout_problems

    assert layout_problems(fig) == []


def test_integer_sweep_has_integer_ticks_at_the_swept_values_in_value_order():
    values = {"K=6": {"rankers.*.K": 6}, "K=4": {"rankers.*.K": 4}, "K=5": {"rankers.*.K": 5}}
    s = summary([(lab, "A", "mae", 0.3 + v["rankers.*.K"] / 100, 0.01, 3) for lab, v in values.items()])
    (key, rest, points), = sweep_groups(s, values)
    assert key == "rankers.*.K" and rest == {}
    fig = sweep_figure(s, ["A"], "mae", key, points, "mae against K", [])
    ax = fig.axes[0]
    assert list(ax.get_xticks()) == [4, 5, 6] and ax.get_xlabel() == "K"
    line = ax.get_lines()[0]
    assert list(line.get_xdata()) == [4, 5, 6] and np.allclose(line.get_ydata(), [0.34, 0.35, 0.36])


def test_a_sweep_over_decades_is_drawn_on_a_log_axis_with_methods_dodged_by_a_factor():
    lams = [1e3, 1e4, 1e5, 1e6, 1e7]
    rows = [(f"lam={v:g}", m, "map", 0.9 - i / 100, 0.01, 3) for i, v in enumerate(lams) for m in ("A", "B")]
    points = [(f"lam={v:g}", v) for v in lams]
    ax = sweep_figure(summary(rows), ["A", "B"], "map", "rankers.*.lam", points, "t", []).axes[0]
    assert ax.get_xscale() == "log"
    a, b = (np.asarray(c.lines[0].get_xdata(), float) for c in ax.containers[:2])
    assert np.allclose(b / a, b[0] / a[0]) and 1 < b[0] / a[0] < 1.2      # the same small factor at every x
    assert np.allclose(np.sqrt(a * b), lams)                              # centred on the swept values
    ax = sweep_figure(summary(rows[:4]), ["A", "B"], "map", "rankers.*.lam", points[:2], "t", []).axes[0]
    assert ax.get_xscale() == "linear"                                    # one decade: linear


def test_two_key_sweep_gives_a_figure_per_value_of_the_other_key():
    values = {f"n={n},K={k}": {"protocol.n": n, "rankers.*.K": k} for n in (10, 20) for k in (4, 5)}
    s = summary([(lab, "A", "mae", 0.3, 0.0, 1) for lab in values])
    groups = sweep_groups(s, values)
    assert {(key, tuple(rest.items())) for key, rest, _ in groups} == {
        ("protocol.n", (("rankers.*.K", 4),)), ("protocol.n", (("rankers.*.K", 5),)),
        ("rankers.*.K", (("protocol.n", 10),)), ("rankers.*.K", (("protocol.n", 20),))}


def test_a_family_of_curves_is_drawn_once_as_its_aggregate_or_else_its_members_mean():
    # two members on different x points: per trial, each interpolated on the union, then averaged
    a = {"rank_s": [1.0, 3.0], "ap": [0.2, 0.6], "evals": [1.0, 2.0]}
    b = {"rank_s": [2.0, 4.0], "ap": [0.4, 0.8], "evals": [1.0, 3.0]}
    recs = [record("", t, "IRB", curves={"staged/a": a, "staged/b": b}) for t in range(2)]
    assert drawn_curves(recs, "") == {"staged": (["staged/a", "staged/b"], "rank_s", ["ap"])}  # evals: a cost
    line = curve_figure(recs, ["IRB"], ["staged/a", "staged/b"], "rank_s", "ap", "", "t").axes[0].get_lines()[0]
    oracle = [np.mean([np.interp(x, a["rank_s"], a["ap"]), np.interp(x, b["rank_s"], b["ap"])]) * 100
              for x in (1.0, 2.0, 3.0, 4.0)]
    assert list(line.get_xdata()) == [1.0, 2.0, 3.0, 4.0] and np.allclose(line.get_ydata(), oracle)
    aggregate = {"rank_s": [1.0, 4.0], "map": [0.3, 0.7]}   # the protocol's own aggregate stands for them
    recs = [record("", 0, "IRB", curves={"staged/a": a, "staged/b": b, "staged": aggregate, "loss": aggregate})]
    assert drawn_curves(recs, "") == {"staged": (["staged"], "rank_s", ["map"]), "loss": (["loss"], "rank_s", ["map"])}


def test_a_members_mean_is_drawn_at_a_bounded_number_of_points():
    from rankbench.report.plots.kinds import MEMBER_MEAN_POINTS

    rng = np.random.default_rng(0)
    curves = {f"staged/{k}": {"rank_s": np.sort(rng.random(400)).tolist(), "ap": rng.random(400).tolist()}
              for k in range(5)}
    line = curve_figure([record("", 0, "IRB", curves=curves)], ["IRB"], list(curves), "rank_s", "ap", "", "t") \
        .axes[0].get_lines()[0]
    assert len(line.get_xdata()) <= MEMBER_MEAN_POINTS


def test_stored_curve_mapping_drawn_as_metric_against_cost():
    recs = [record("", t, "IRB", curves={"staged": {"rank_s": [0.0, 1.0, 2.0], "map@100": [0.1, 0.3, 0.4]}})
            for t in range(2)]
    ax = curve_figure(recs, ["IRB"], "staged", "rank_s", "map@100", "", "t").axes[0]
    line = ax.get_lines()[0]
    assert list(line.get_xdata()) == [0.0, 1.0, 2.0] and np.allclose(line.get_ydata(), [10, 30, 40])
    assert ax.get_ylabel() == "Mean average precision at depth 100 (%)" and ax.get_xlabel() == "Ranking time (s)"
    assert ax.get_ylim() == (0, pytest.approx(44.0)) and ax.get_xlim() == (0, pytest.approx(2.2))   # room at the top


def test_a_curves_several_series_are_panels_of_one_figure():
    # MAP at three depths against the same cost: one figure, a panel per series, each the same line
    # as the one-series figure draws, the shared words in the title and the legend beside the last
    staged = {"evals": [0.0, 1.0, 2.0], "map": [0.2, 0.5, 0.6], "map@100": [0.1, 0.3, 0.4], "map@500": [0.1, 0.4, 0.5]}
    recs = [record("", t, "IRB", curves={"staged": staged}) for t in range(2)]
    ys = ["map@100", "map@500", "map"]
    fig = curve_figure(recs, ["IRB"], "staged", "evals", ys, "", "t")
    assert len(fig.axes) == 3 and fig.axes[-1].get_legend() is not None and fig.axes[0].get_legend() is None
    for ax, y in zip(fig.axes, ys):
        alone = curve_figure(recs, ["IRB"], "staged", "evals", y, "", "t").axes[0]
        assert ax.get_ylabel() == alone.get_ylabel() and ax.get_xlabel() == alone.get_xlabel()
        assert np.array_equal(ax.get_lines()[0].get_ydata(), alone.get_lines()[0].get_ydata())
    from rankbench.report.plots.choice import _shared_words
    from rankbench.report.plots.layout import layout_problems

    assert layout_problems(fig) == []

    assert _shared_words(["Mean average precision at depth 100", "Mean average precision"]) == "Mean average precision"
    assert _shared_words(["Loss", "Error rate"]) == "Loss and error rate"


def test_no_per_task_figure_when_bars_would_be_too_thin_to_read():
    from rankbench.report.plots.kinds import MAX_TASKS

    s = summary([("", "A", f"ap@100/c{i}", 0.5, 0.0, 1) for i in range(MAX_TASKS + 1)])
    assert task_figure(s, ["A"], "ap@100", "", "t", []) is None
    assert task_figure(s.iloc[:MAX_TASKS], ["A"], "ap@100", "", "t", []) is not None


def test_every_figure_has_the_house_height_and_grows_only_in_width():
    from rankbench.report.plots.style import FIG_H, FIG_W

    s = summary([("", m, f"pair_acc/t{k}", 0.8, 0.01, 2) for m in "AB" for k in range(40)]
                + [("", m, "map", 0.4, 0.01, 2) for m in "AB"])
    recs = [record("", 0, "A", curves={"cmc": list(CURVE), "staged": {"rank_s": [0.0, 1.0], "map@100": [0.1, 0.3]}})]
    figs = [cmc_figure(recs, ["A"], "", "t", max_rank=20), bar_figure(s, ["A", "B"], "map", "", "t", []),
            task_figure(s, ["A", "B"], "pair_acc", "", "t", []), curve_figure(recs, ["A"], "staged", "rank_s", "map@100", "", "t")]
    sizes = [tuple(f.get_size_inches()) for f in figs]
    assert all(h == FIG_H for _, h in sizes)
    assert sizes[0] == sizes[1] == sizes[3] == (FIG_W, FIG_H)
    assert sizes[2][0] == 2 * FIG_W                       # 80 bars: wider, capped at twice the width


# ----------------------------------------------------------------------------- what a reader sees
LONG = ["Ensemble RankSVM (ELF strips)", "PRSVM", "RankBoost on ELF", "L1-norm", "Bhattacharyya", "Mine, v2"]


def test_every_kind_of_figure_reads_without_cut_off_text_or_overlaps():
    """Each figure kind, with long method names, many tasks and a long context, passes the layout
    check (matplotlib's renderer extents of every title, label, tick label and the legend)."""
    from rankbench.report.plots.kinds import kernel_weight_figure, time_figure
    from rankbench.report.plots.layout import layout_problems

    where = "a_dataset_with_a_long_name, Test people = 316, Training people = 316, 10 trials, mean ± 1 std"
    rng = np.random.default_rng(0)
    attributes = [f"attribute {a}" for a in range(11)]
    recs = [record("", t, m, metrics={f"pair_acc/{a}": 0.8 for a in attributes},
                   curves={"cmc": list(np.minimum(CURVE + 0.02 * j, 1)),
                           "staged": {"rank_s": list(np.cumsum(rng.random(8))), "map@100": list(rng.random(8))}},
                   extra={"diagnostics": {a: {"kernel_weights": {"gist": 0.6, "colour": 0.3, "lbp": 0.1}}
                                          for a in attributes}})
            for j, m in enumerate(LONG) for t in range(3)]
    s = summary([("", m, metric, 0.4 + 0.01 * j, 0.02, 3) for j, m in enumerate(LONG)
                 for metric in ("map", "test_s")]
                + [("", m, f"pair_acc/{name}", 0.8, 0.01, 3) for m in LONG[:3]
                   for name in ("Masculine-looking", "White", "Young", "Smiling", "Chubby", "Visible forehead",
                                "Bushy eyebrows", "Narrow eyes", "Pointy nose", "Big lips", "Round face")])
    values = {f"n={n}": {"protocol.n_constraints": n} for n in (0, 4, 8, 12, 16, 20)}
    sw = summary([(lab, m, "error_rate", 0.2, 0.05, 3) for lab in values for m in LONG])
    (key, _, points), = sweep_groups(sw, values)
    figures = {
        "cmc": cmc_figure(recs, LONG, "", f"CMC: {where}", max_rank=50, marked=[1, 5, 10, 20]),
        "bar": bar_figure(s, LONG, "map", "", f"Mean average precision: {where}",
                          [{"method": "PRSVM", "metric": "map", "value": 0.5}]),
        "task": task_figure(s, LONG, "pair_acc", "", f"Pair accuracy per task: {where}", []),
        "sweep": sweep_figure(sw, LONG, "error_rate", key, points, f"Error rate against constraints: {where}", [],
                              protocol="classification"),
        "time": time_figure(s, LONG, "map", "", f"Mean average precision against scoring time: {where}"),
        "curve": curve_figure(recs, LONG, "staged", "rank_s", "map@100", "", f"MAP@100 against ranking time: {where}"),
        "weights": kernel_weight_figure(recs, LONG[0], "", f"{LONG[0]}'s learned weights: {where}"),
    }
    import matplotlib.pyplot as plt

    assert figures["sweep"].axes[0].get_xlabel() == "Constraints"
    assert figures["task"].axes[0].get_ylabel() == "Pair accuracy (%)"
    for kind, fig in figures.items():
        assert fig is not None, kind
        problems = layout_problems(fig)
        plt.close(fig)
        assert problems == [], (kind, problems)


def test_series_at_the_same_values_stay_visible_and_their_error_bars_apart():
    values = {f"n={n}": {"protocol.n_test": n} for n in (10, 20, 30)}
    s = summary([(lab, m, "cmc@1", 0.3, 0.05, 3) for lab in values for m in ("A", "B", "C")])
    (key, _, points), = sweep_groups(s, values)
    ax = sweep_figure(s, ["A", "B", "C"], "cmc@1", key, points, "t", [], protocol="reid").axes[0]
    lines = [c.lines[0] for c in ax.containers if c.get_label() in ("A", "B", "C")]
    xs = np.array([ln.get_xdata() for ln in lines], float)
    assert (np.diff(xs, axis=0) > 0).all() and np.allclose(xs.mean(axis=0), [10, 20, 30])   # dodged, centred
    assert np.abs(xs - [10, 20, 30]).max() < 10 / 3                                            # within a third of a gap
    assert len({str(ln.get_linestyle()) for ln in lines}) == 3 and ax.get_xlabel() == "Test people"


def test_a_staged_curve_draws_the_band_its_title_promises():
    def recs(n):
        return [record("", t, "IRB", curves={"staged": {"rank_s": [0.0, 1.0, 2.0], "map@100": [0.1 + 0.05 * t, 0.3, 0.4]}})
                for t in range(n)]

    bands = [len([c for c in curve_figure(recs(n), ["IRB"], "staged", "rank_s", "map@100", "", "t").axes[0].collections
                  if isinstance(c, matplotlib.collections.PolyCollection)]) for n in (1, 3)]
    assert bands == [0, 1]


def test_the_ours_swatch_shows_each_bars_colour():
    s = summary([("", m, "map", 0.4, 0.02, 3) for m in ("A", "B", "C")])
    ax = bar_figure(s, ["A", "B", "C"], "map", "", "t", []).axes[0]
    legend = ax.get_legend()
    swatch = {tuple(np.round(r.get_facecolor(), 3)) for r in legend.findobj(matplotlib.patches.Rectangle)
              if r is not legend.legendPatch and r.get_width() < 20}
    bars = {tuple(np.round(p.get_facecolor(), 3)) for p in ax.patches}
    assert len(bars) == 3 and bars <= swatch

"""Figures as a paper prints them: checked on the figure objects and on the written files."""

import re
import struct

import matplotlib
import numpy as np
import pandas as pd
import pytest

from rankbench.report.plots import (
    bar_figure,
    cmc_figure,
    context,
    curve_figure,
    save,
    setting_slug,
    sweep_figure,
    sweep_groups,
    task_figure,
)

matplotlib.use("Agg")


def summary(rows):
    return pd.DataFrame(rows, columns=["setting", "method", "metric", "mean", "std", "n_trials"])


def cmc_records(method, curves, setting=""):
    return [{"setting": setting, "trial": t, "method": method, "metrics": {}, "curves": {"cmc": c}}
            for t, c in enumerate(curves)]


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
    assert ax.get_title() == "CMC: viper, n_test = 316, 2 trials"
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
    assert ax.get_ylim()[0] == 0 and ax.get_ylabel() == "map (%)"
    assert [round(p.get_height(), 6) for p in ax.patches] == [41.0, 45.0]
    pub = next(c for c in ax.collections if c.get_label() == "published")
    assert pub.get_offsets().tolist() == [[1.0, 50.0]]
    assert legend_outside(fig, ax)


def test_task_bars_from_zero_even_when_every_value_is_high():
    s = summary([("", m, f"pair_acc/{t}", v, 0.01, 2) for m in ("A", "B") for t, v in (("Male", 0.9), ("Young", 0.85))])
    ax = task_figure(s, ["A", "B"], "pair_acc", "", "t", []).axes[0]
    assert ax.get_ylim() == (0, 100)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["Male", "Young"]


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


def test_two_key_sweep_gives_a_figure_per_value_of_the_other_key():
    values = {f"n={n},K={k}": {"protocol.n": n, "rankers.*.K": k} for n in (10, 20) for k in (4, 5)}
    s = summary([(lab, "A", "mae", 0.3, 0.0, 1) for lab in values])
    groups = sweep_groups(s, values)
    assert {(key, tuple(rest.items())) for key, rest, _ in groups} == {
        ("protocol.n", (("rankers.*.K", 4),)), ("protocol.n", (("rankers.*.K", 5),)),
        ("rankers.*.K", (("protocol.n", 10),)), ("rankers.*.K", (("protocol.n", 20),))}


def test_stored_curve_mapping_drawn_as_metric_against_cost():
    recs = [{"setting": "", "trial": t, "method": "IRB", "metrics": {},
             "curves": {"staged": {"rank_s": [0.0, 1.0, 2.0], "map@100": [0.1, 0.3, 0.4]}}} for t in range(2)]
    ax = curve_figure(recs, ["IRB"], "staged", "rank_s", "map@100", "", "t").axes[0]
    line = ax.get_lines()[0]
    assert list(line.get_xdata()) == [0.0, 1.0, 2.0] and np.allclose(line.get_ydata(), [10, 30, 40])
    assert ax.get_ylabel() == "map@100 (%)" and ax.get_xlabel() == "Ranking time (s)"
    assert ax.get_ylim() == (0, pytest.approx(44.0)) and ax.get_xlim() == (0, pytest.approx(2.2))   # room at the top


def test_titles_and_file_names_say_what_and_on_what():
    cfg = {"dataset": {"name": "viper"}, "protocol": {"name": "reid", "n_test": 316, "gallery": "cam", "seed": 3}}
    assert context(cfg, "", None, 5) == "viper, n_test = 316, 5 trials, mean ± 1 std"
    assert context(cfg, "protocol.n_test=432", {"protocol.n_test": 432}, 1) == "viper, n_test = 432, 1 trial"
    assert setting_slug("rankers.*.K=4", {"rankers.*.K": 4}) == "K-4"


def _png_dpi(data: bytes) -> float:
    i = data.index(b"pHYs")
    ppm_x, _, unit = struct.unpack(">IIB", data[i + 4:i + 13])
    assert unit == 1
    return ppm_x * 0.0254


def test_files_png_300_dpi_and_svg_with_editable_text(tmp_path):
    s = summary([("", "A", "cmc@1", 0.41, 0.02, 3)])
    files = save(bar_figure(s, ["A"], "cmc@1", "", "title here", []), tmp_path, "cmc1", "caption")
    png, svg = (f.path for f in files)
    assert png.name == "cmc1.png" and svg.name == "cmc1.svg"
    assert _png_dpi(png.read_bytes()) == pytest.approx(300, abs=0.5)
    text = svg.read_text()
    assert re.search(r"<text[^>]*>title here</text>", text)               # text, not glyph outlines
    assert matplotlib.rcParams["svg.fonttype"] == "path"                  # the caller's settings untouched


def test_run_folder_figures_have_readable_names(runs):
    names = sorted(p.name for p in (runs["a"] / "plots").iterdir())
    assert names == ["cmc.png", "cmc.svg"]
    names = sorted(p.name for p in (runs["sweep"] / "plots").iterdir())
    assert "cmc1_vs_n_test.png" in names and "cmc_n_test-10.png" in names


def test_report_ends_the_cmc_axis_at_a_chosen_rank_in_a_file_of_its_own(runs):
    from rankbench import app

    plots = runs["one"] / "plots"
    app.report(runs["one"])
    standard = (plots / "cmc.png").read_bytes()
    built = app.report(runs["one"], max_rank=5)
    captions = {p.name: p.caption for p in built["plots"]}
    assert "up to rank 5;" in captions["cmc_rank5.png"] and "cmc_rank5.svg" in captions
    assert "up to rank 10;" in captions["cmc.png"]   # largest tabulated: the standard figure is unchanged
    assert (plots / "cmc.png").read_bytes() == standard
    app.report(runs["one"], max_rank=3)
    app.report(runs["one"])   # figures asked for by their rank are kept by later reports
    assert {"cmc_rank5.png", "cmc_rank3.png", "cmc.png"} <= {p.name for p in plots.iterdir()}
    for p in plots.glob("cmc_rank*"):  # the run is shared with other tests
        p.unlink()


def test_no_per_task_figure_when_bars_would_be_too_thin_to_read():
    from rankbench.report.plots import MAX_TASKS

    s = summary([("", "A", f"ap@100/c{i}", 0.5, 0.0, 1) for i in range(MAX_TASKS + 1)])
    assert task_figure(s, ["A"], "ap@100", "", "t", []) is None
    assert task_figure(s.iloc[:MAX_TASKS], ["A"], "ap@100", "", "t", []) is not None


def test_every_figure_has_the_house_height_and_grows_only_in_width():
    from rankbench.report.plots import FIG_H, FIG_W

    s = summary([("", m, f"pair_acc/t{k}", 0.8, 0.01, 2) for m in "AB" for k in range(40)]
                + [("", m, "map", 0.4, 0.01, 2) for m in "AB"])
    recs = [{"setting": "", "trial": 0, "method": "A", "metrics": {},
             "curves": {"cmc": list(CURVE), "staged": {"rank_s": [0.0, 1.0], "map@100": [0.1, 0.3]}}}]
    figs = [cmc_figure(recs, ["A"], "", "t", max_rank=20), bar_figure(s, ["A", "B"], "map", "", "t", []),
            task_figure(s, ["A", "B"], "pair_acc", "", "t", []), curve_figure(recs, ["A"], "staged", "rank_s", "map@100", "", "t")]
    sizes = [tuple(f.get_size_inches()) for f in figs]
    assert all(h == FIG_H for _, h in sizes)
    assert sizes[0] == sizes[1] == sizes[3] == (FIG_W, FIG_H)
    assert sizes[2][0] == 2 * FIG_W                       # 80 bars: wider, capped at twice the width


def test_a_figure_redrawn_from_the_same_numbers_is_the_same_svg(tmp_path):
    s = summary([("", "A", "cmc@1", 0.41, 0.02, 3)])
    one = save(bar_figure(s, ["A"], "cmc@1", "", "t", []), tmp_path / "1", "x")[1].path.read_bytes()
    two = save(bar_figure(s, ["A"], "cmc@1", "", "t", []), tmp_path / "2", "x")[1].path.read_bytes()
    assert one == two

"""rankbench.report.plots.layout: what a reader would see wrong in a figure, found on figures
built by hand to have (or not have) each problem."""

import matplotlib
import pytest

from rankbench.report.plots.layout import layout_problems

matplotlib.use("Agg")


@pytest.fixture
def plt():
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")


def test_the_layout_check_finds_cut_off_text_overlapping_labels_and_a_legend_over_the_plot(plt):
    fig, ax = plt.subplots(figsize=(3, 2), layout="none")
    ax.set_title("a title far too long to fit into a figure three inches wide, so it is cut off")
    ax.set_xticks(range(8), [f"long tick label {i}" for i in range(8)])
    ax.plot([0, 7], [0, 1], label="a line")
    ax.legend(loc="center")
    found = layout_problems(fig)
    plt.close(fig)
    assert any("title" in p and "cut off" in p for p in found)
    assert any("x tick label" in p and "runs into" in p for p in found)
    assert "the legend covers the plot" in found


def test_a_plain_figure_has_no_problem(plt):
    fig, ax = plt.subplots(figsize=(6, 4), layout="constrained")
    ax.plot([0, 1, 2], [0, 1, 4], label="a line")
    ax.set(title="squares", xlabel="x", ylabel="x squared")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1))
    assert layout_problems(fig) == []


def test_a_label_placed_over_the_title_is_found(plt):
    fig, ax = plt.subplots(figsize=(6, 4), layout="constrained")
    ax.set_title("the title")
    ax.set_xlabel("the x label")
    fig.canvas.draw()
    ax.xaxis.set_label_coords(0.5, 1.02)   # moved by hand to where the title is
    found = layout_problems(fig)
    assert found == ["title 'the title' overlaps x label 'the x label'"]

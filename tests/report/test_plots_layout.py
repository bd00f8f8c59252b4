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

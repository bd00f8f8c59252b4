"""rankbench.report.plots.style: the files a figure is written as (PNG at 300 dpi, SVG with text,
PDF, the same bytes for the same figure), a user's style file checked where it enters, the figure
size and one style per method."""

import re
import struct

import matplotlib
import pandas as pd
import pytest

from rankbench.errors import ConfigError
from rankbench.report.plots.kinds import bar_figure
from rankbench.report.plots.style import FIG_H, FIG_W, figsize, in_style, method_styles, save, style_file

matplotlib.use("Agg")


def summary(rows):
    return pd.DataFrame(rows, columns=["setting", "method", "metric", "mean", "std", "n_trials"])


def _png_dpi(data: bytes) -> float:
    i = data.index(b"pHYs")
    ppm_x, _, unit = struct.unpack(">IIB", data[i + 4:i + 13])
    assert unit == 1
    return ppm_x * 0.0254


def test_files_png_300_dpi_and_svg_with_editable_text(tmp_path):
    s = summary([("", "A", "cmc@1", 0.41, 0.02, 3)])
    png, svg, pdf = save(bar_figure(s, ["A"], "cmc@1", "", "title here", []), tmp_path, "cmc1")
    assert png.name == "cmc1.png" and svg.name == "cmc1.svg" and pdf.name == "cmc1.pdf"
    assert pdf.read_bytes().startswith(b"%PDF") and b"CreationDate" not in pdf.read_bytes()
    assert _png_dpi(png.read_bytes()) == pytest.approx(300, abs=0.5)
    text = svg.read_text()
    assert re.search(r"<text[^>]*>title here</text>", text)               # text, not glyph outlines
    assert matplotlib.rcParams["svg.fonttype"] == "path"                  # the caller's settings untouched


def test_a_figure_redrawn_from_the_same_numbers_is_the_same_svg(tmp_path):
    s = summary([("", "A", "cmc@1", 0.41, 0.02, 3)])
    one = save(bar_figure(s, ["A"], "cmc@1", "", "t", []), tmp_path / "1", "x")[1].read_bytes()
    two = save(bar_figure(s, ["A"], "cmc@1", "", "t", []), tmp_path / "2", "x")[1].read_bytes()
    assert one == two


def test_a_style_file_is_checked_where_it_enters(tmp_path):
    with pytest.raises(ConfigError, match=r"^--style .*nope.mplstyle: expected a matplotlib style file "
                                          r"\(.mplstyle\), got no such file$"):
        style_file(tmp_path / "nope.mplstyle")
    with pytest.raises(ConfigError, match="got a folder$"):
        style_file(tmp_path)
    bad = tmp_path / "bad.mplstyle"
    bad.write_bytes(b"\xff\xfe lines.linewidth: \x00\x81")
    with pytest.raises(ConfigError, match="not a readable matplotlib style file"):
        style_file(bad)
    good = tmp_path / "good.mplstyle"
    good.write_text("lines.linewidth: 3\n")
    assert style_file(good) == good


def test_a_figure_grows_in_width_for_its_categories_up_to_twice_the_house_width():
    with in_style():
        assert figsize() == (FIG_W, FIG_H)
        assert figsize(categories=10, per_category=0.5, fixed=2.0) == (7.0, FIG_H)   # 2 + 10 x 0.5
        assert figsize(categories=100, per_category=0.5) == (2 * FIG_W, FIG_H)


def test_each_method_has_its_own_colour_marker_and_line_style():
    styles = method_styles([f"m{i}" for i in range(6)])
    assert list(styles) == [f"m{i}" for i in range(6)]
    for key in ("color", "marker", "linestyle"):
        values = [repr(s[key]) for s in styles.values()]
        assert len(set(values)) == 6, key
    assert method_styles(["a", "b"])["b"] == styles["m1"]     # by position: the same in every figure

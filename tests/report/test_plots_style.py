"""rankbench.report.plots.style: the files a figure is written as (PNG at 300 dpi, SVG with text,
PDF, the same bytes for the same figure), a user's style file checked where it enters, the figure
size and one style per method."""

import re
import struct

import matplotlib
import pandas as pd
import pytest

from rankbench.report.plots.kinds import bar_figure
from rankbench.report.plots.style import save

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

"""The OSR loader."""


import numpy as np
import pytest

from rankbench.errors import DataError
from rankbench.registry import datasets


def write_jpg(path, seed):
    import cv2

    img = np.random.default_rng(seed).integers(0, 255, size=(40, 40, 3), dtype=np.uint8)
    cv2.imwrite(str(path), img)


def make_osr(root, csv=None, extra=None):
    (root / "images").mkdir(parents=True)
    for c in ("coast", "forest", "street"):
        for i in range(5):
            write_jpg(root / "images" / f"{c}_img{i}.jpg", i)
    if extra:
        write_jpg(root / "images" / extra, 99)
    (root / "relative_ordering.csv").write_text(csv or "# strengths\nattribute,coast,forest,street\n"
                                                "natural,3,3,1\nopen,3,1,2\n")
    return root


def test_osr_loader_and_errors(tmp_path):
    d = datasets.build("osr", {"root": str(make_osr(tmp_path / "osr")), "check_images": False}).load()
    assert len(d) == 15 and set(d.items.category) == {"coast", "forest", "street"}
    assert "train" not in d.items.columns
    assert d.info["strength"].loc["street", "open"] == 2
    assert len(datasets.build("osr", {"root": str(tmp_path / "osr"), "n_per_category": 2, "check_images": False}).load()) == 6
    with pytest.raises(DataError, match="no known category prefix"):
        datasets.build("osr", {"root": str(make_osr(tmp_path / "o2", extra="desert_x.jpg"))}).load()
    with pytest.raises(DataError, match="attribute 'natural', category 'coast': expected a finite strength, got 'high'"):
        datasets.build("osr", {"root": str(make_osr(tmp_path / "o3", csv="attribute,coast\nnatural,high\n"))}).load()
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="relative_ordering.csv"):
        datasets.build("osr", {"root": str(tmp_path / "empty")}).load()
    with pytest.raises(DataError, match=r"dataset osr: image .*coast_img0.jpg is 40x40 pixels, expected 256x256"):
        datasets.build("osr", {"root": str(tmp_path / "osr")}).load()


def test_names_are_kept_as_written_and_a_ragged_file_is_one_line(tmp_path):
    # pandas read the category NA as a missing value (a traceback later) and the attribute 007 as 7
    root = make_osr(tmp_path / "osr", csv="attribute,coast,forest,street\nNA,3,2,1\n007,1,2,3\n")
    strength = datasets.build("osr", {"root": str(root), "check_images": False}).load().info["strength"]
    assert list(strength.columns) == ["NA", "007"] and list(strength.index) == ["coast", "forest", "street"]
    for i, (csv, message) in enumerate([("attribute,coast,forest,street\nnatural,3,2,1,4\n", "cannot be parsed as CSV"),
                                        ("attribute,coast,forest,street,\nnatural,3,2,1,\n",
                                         "header column 5 names no category")]):
        with pytest.raises(DataError, match=message) as err:
            datasets.build("osr", {"root": str(make_osr(tmp_path / f"bad{i}", csv=csv)), "check_images": False}).load()
        assert "\n" not in str(err.value)


@pytest.mark.parametrize("csv, message", [
    ("attribute,coast,forest,street, coast\nnatural,3,3,1,1\nopen,3,1,2,2\n", "category 'coast' has two columns; expected one column per category"),
    ("attribute,coast,forest,street\nnatural,3,3,1\nnatural,3,1,2\n", "attribute 'natural' has two rows; expected one row per attribute"),
    # an attribute nothing can be learnt from: every category equal, or a strength missing
    ("attribute,coast,forest,street\nnatural,3,3,1\nopen,2,2,2\n", "attribute 'open' gives every category the same strength"),
    ("attribute,coast,forest,street\nnatural,3,,1\nopen,1,2,3\n", "attribute 'natural', category 'forest': expected a finite strength, got nothing"),
])
def test_a_strength_named_twice_or_useless_is_refused(tmp_path, csv, message):
    with pytest.raises(DataError, match=rf"relative_ordering.csv: {message}"):
        datasets.build("osr", {"root": str(make_osr(tmp_path / "osr", csv=csv)), "check_images": False}).load()


def test_one_image_saved_twice_is_refused_where_the_data_enters(tmp_path):
    """coast_img0.jpg and coast_img0.png were two items of one id (both sides of a split)."""
    from rankbench.datasets.base import load

    root = make_osr(tmp_path / "osr", extra="coast_img0.png")
    with pytest.raises(DataError, match=r"dataset osr: item id 'coast_img0' names 2 items \(rows 0 and 1: "
                                        r".*coast_img0.jpg and .*coast_img0.png\); expected one item per id"):
        load(datasets.build("osr", {"root": str(root), "check_images": False}))

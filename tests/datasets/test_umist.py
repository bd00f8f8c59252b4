"""The UMIST loader and PGM reader."""


import numpy as np
import pytest
from toydata import write_pgm

from rankbench.datasets.umist import UMIST, read_pgm
from rankbench.errors import ConfigError, DataError


def test_umist_loads_layout_and_labels(umist_root):
    ds = UMIST(root=str(umist_root), labels={"1a": 0, "1b": 2}).load()
    assert len(ds) == 5 and list(ds.items["subject"]) == ["1a"] * 2 + ["1b"] * 3
    assert ds.arrays["images"].shape == (5, 112, 92)
    assert list(ds.items["label"]) == [0, 0, 2, 2, 2]
    assert ds.image(3).shape == (112, 92) and ds.image(3)[0, 0] == 1
    csv = UMIST(root=str(umist_root), labels="labels.csv").load()  # relative to the dataset folder
    assert list(csv.items["label"]) == [0, 0, 2, 2, 2]
    assert "label" not in UMIST(root=str(umist_root)).load().items.columns


def test_umist_errors(umist_root):
    with pytest.raises(DataError, match="1c"):
        UMIST(root=str(umist_root), labels={"1a": 0, "1b": 2, "1c": 1}).load()
    with pytest.raises(ConfigError, match="1b"):
        UMIST(root=str(umist_root), labels={"1a": 0}).load()
    with pytest.raises(ConfigError, match="not found"):
        UMIST(root=str(umist_root), labels="nope.csv").load()
    write_pgm(umist_root / "umist_cropped" / "1a" / "face" / "1a009.pgm", h=100)
    with pytest.raises(DataError, match="1a009.pgm.*expected 92x112"):
        UMIST(root=str(umist_root)).load()
    (umist_root / "umist_cropped" / "1a" / "face" / "1a009.pgm").unlink()
    (umist_root / "umist_cropped" / "1a" / "face" / "1a010.jpg").write_bytes(b"\xff\xd8")
    with pytest.raises(DataError, match="1a010.jpg is not a .pgm"):
        UMIST(root=str(umist_root)).load()
    (umist_root / "empty").mkdir()
    with pytest.raises(DataError, match="umist_cropped"):
        UMIST(root=str(umist_root / "empty")).load()


def test_umist_authors_labels_need_the_575_images(umist_root):
    with pytest.raises(DataError, match="575 images"):
        UMIST(root=str(umist_root), labels="authors").load()


def test_read_pgm_rejects_non_pgm(tmp_path):
    p = tmp_path / "x.pgm"
    p.write_bytes(b"P6\n2 2\n255\n" + bytes(12))
    with pytest.raises(DataError, match="not a binary PGM"):
        read_pgm(p)
    p.write_bytes(b"P5\n92 112\n255\n" + bytes(10))
    with pytest.raises(DataError, match="truncated"):
        read_pgm(p)
    for maxval, message in ((0, "PGM maxval 0; expected an 8-bit image"), (65535, "PGM maxval 65535")):
        p.write_bytes(b"P5\n2 1\n%d\n" % maxval + bytes(2))
        with pytest.raises(DataError, match=message):
            read_pgm(p)
    p.write_bytes(b"P5\n2 1\n15\n" + bytes([3, 16]))
    with pytest.raises(DataError, match="a pixel of 16 above the PGM's maxval 15"):
        read_pgm(p)


def test_read_pgm_scales_grey_levels_to_0_255(tmp_path):
    """A legal 4-bit PGM (maxval 15) is as bright as its 8-bit twin (Pillow decodes it so too)."""
    from PIL import Image

    p = tmp_path / "x.pgm"
    p.write_bytes(b"P5\n4 1\n15\n" + bytes([0, 1, 7, 15]))
    assert read_pgm(p).tolist() == [[0, 17, 119, 255]] == np.asarray(Image.open(p)).tolist()


@pytest.mark.parametrize("body, message", [
    ("subject,label\n1a,0\n1b,one\n", r"labels.csv: column 'label', row 2: expected a finite number, got 'one'"),
    ("subject,label\n1a,0\n1b,\n", r"labels.csv: column 'label', row 2: expected a finite number, got ''"),
    ("subject,label\n1a,0\n1b,inf\n", r"labels.csv: column 'label', row 2: expected a finite number, got 'inf'"),
    ("subject,label\n1a,0\n1b,2\n1a,1\n", r"labels.csv: column 'subject', row 3: subject '1a' is labelled twice"),
    ("subject,label\n1a,0\n1b,2,x\n", r"labels.csv: not a readable CSV table"),
    ("", r"labels.csv: not a readable CSV table"),
])
def test_a_labels_file_mistake_is_one_line_naming_the_file(umist_root, body, message):
    (umist_root / "labels.csv").write_text(body)
    with pytest.raises(DataError, match=message):
        UMIST(root=str(umist_root), labels="labels.csv", label_column="label").load()


def test_a_labels_mapping_must_give_finite_numbers(umist_root):
    with pytest.raises(ConfigError, match="subject '1b': expected a finite number, got nan"):
        UMIST(root=str(umist_root), labels={"1a": 0, "1b": float("nan")}).load()

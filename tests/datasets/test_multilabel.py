"""Tests."""


import numpy as np
import pytest

from rankbench.datasets._arff import read_arff
from rankbench.datasets.multilabel import MulanLoader, read_mulan_labels
from rankbench.errors import DataError
from rankbench.registry import datasets

HEADER = """% a comment
@RELATION tiny

@attribute f1 numeric
@attribute 'f two' REAL
@attribute colour {red,green,blue}
@attribute L1 {0,1}
@attribute L2 {0,1}
"""
XML = """<?xml version="1.0" encoding="utf-8"?>
<labels xmlns="http://mulan.sourceforge.net/labels">
<label name="L1"></label>
<label name="L2"></label>
</labels>"""


def write(path, text):
    path.write_text(text)
    return path


class Tiny(MulanLoader):
    """A two-label MULAN set for tests."""

    registry_name = "tiny"
    folder = "tiny"
    xml = "tiny.xml"
    train_file = "tiny-train.arff"
    test_file = "tiny-test.arff"
    layout = "tiny/{tiny-train.arff, tiny-test.arff} + tiny.xml"


def make_tiny(root):
    root.mkdir()
    write(root / "tiny.xml", XML)
    write(root / "tiny-train.arff", HEADER + "@data\n1,2,red,1,0\n3,4,blue,0,1\n5,6,green,1,1\n")
    write(root / "tiny-test.arff", HEADER + "@data\n{0 7,3 1}\n")
    return root


def test_dense_arff(tmp_path):
    f = write(tmp_path / "d.arff", HEADER + "@data\n1.5,2,green,0,1\n% mid comment\n\n-3,?,'blue',1,1\n")
    a = read_arff(f)
    assert a.relation == "tiny" and a.names == ["f1", "f two", "colour", "L1", "L2"]
    assert a.nominal[2] == ["red", "green", "blue"] and a.nominal[0] is None
    assert np.allclose(a.data[0], [1.5, 2, 1, 0, 1])
    assert a.data[1, 0] == -3 and np.isnan(a.data[1, 1]) and a.data[1, 2] == 2
    assert list(a.columns(["L2", "f1"])) == [4, 0]


def test_sparse_arff_omitted_entries_are_zero(tmp_path):
    f = write(tmp_path / "s.arff", HEADER + "@data\n{0 1.5,2 blue,4 1}\n{}\n{3 1}, {2.0}\n")
    a = read_arff(f)
    assert np.allclose(a.data, [[1.5, 0, 2, 0, 1], [0, 0, 0, 0, 0], [0, 0, 0, 1, 0]])


def test_sparse_and_dense_agree(tmp_path):
    rng = np.random.default_rng(0)
    M = (rng.random((20, 6)) < 0.3) * rng.integers(1, 9, (20, 6))
    head = "@relation r\n" + "".join(f"@attribute a{j} numeric\n" for j in range(6)) + "@data\n"
    dense = head + "".join(",".join(map(str, row)) + "\n" for row in M)
    sparse = head + "".join("{" + ",".join(f"{j} {v}" for j, v in enumerate(row) if v) + "}\n" for row in M)
    assert np.array_equal(read_arff(write(tmp_path / "a.arff", dense)).data, M)
    assert np.array_equal(read_arff(write(tmp_path / "b.arff", sparse)).data, M)


@pytest.mark.parametrize("body, match", [
    ("1,2,red,0\n", "row has 4 values"),
    ("{9 1}\n", "out of range"),
    ("{1 2\n", "closing"),
    ("1,2,purple,0,1\n", "nominal"),
    ("x,2,red,0,1\n", "not numeric"),
])
def test_malformed_rows_name_file_and_line(tmp_path, body, match):
    f = write(tmp_path / "bad.arff", HEADER + "@data\n" + body)
    with pytest.raises(DataError, match=match) as e:
        read_arff(f)
    assert "bad.arff:10" in str(e.value)


def test_malformed_files(tmp_path):
    with pytest.raises(DataError, match="not found"):
        read_arff(tmp_path / "none.arff")
    with pytest.raises(DataError, match="no @data"):
        read_arff(write(tmp_path / "t.arff", HEADER))
    with pytest.raises(DataError, match="unsupported type"):
        read_arff(write(tmp_path / "u.arff", "@relation r\n@attribute s string\n@data\n"))


def test_mulan_loader(tmp_path):
    ds = Tiny(root=str(make_tiny(tmp_path / "tiny"))).load()
    assert ds.info["concepts"] == ["L1", "L2"]
    assert ds.items.train.tolist() == [True, True, True, False] and ds.items.id.is_unique
    assert ds.arrays["feat"].shape == (4, 3) and ds.arrays["feat"][3, 0] == 7
    assert ds.arrays["relevance"].tolist() == [[1, 0], [0, 1], [1, 1], [1, 0]]
    assert ds.fingerprint


def test_labels_declared_one_zero_are_read_by_value_and_each_label_once(tmp_path):
    """@attribute L1 {1,0} is valid ARFF: its "1" was read as its position, 0 (every label
    upside down, at exit 0); a label listed twice in the XML was scored twice."""
    root = make_tiny(tmp_path / "tiny")
    flipped = HEADER.replace("@attribute L1 {0,1}", "@attribute L1 {1,0}")
    write(root / "tiny-train.arff", flipped + "@data\n1,2,red,1,0\n3,4,blue,0,1\n5,6,green,1,1\n")
    write(root / "tiny-test.arff", flipped + "@data\n{0 7,4 1}\n")   # L1 omitted: its first value, "1"
    ds = Tiny(root=str(root)).load()
    assert ds.arrays["relevance"].tolist() == [[1, 0], [0, 1], [1, 1], [1, 1]]
    write(root / "tiny.xml", XML.replace('<label name="L2"></label>', '<label name="L2"></label><label name="L1"/>'))
    with pytest.raises(DataError, match=r"tiny.xml: label 'L1' is listed twice; expected each label once"):
        Tiny(root=str(root)).load()


def test_mulan_loader_errors_name_file_and_layout(tmp_path):
    root = make_tiny(tmp_path / "tiny")
    (root / "tiny-test.arff").unlink()
    with pytest.raises(DataError, match=r"tiny-test.arff not found; expected layout: tiny/"):
        Tiny(root=str(root)).load()
    write(root / "tiny-test.arff", HEADER + "@data\n1,2,red,0,1\n")
    write(root / "tiny.xml", XML.replace("L2", "Sky"))
    with pytest.raises(DataError, match=r"tiny-train.arff.*'Sky'"):
        Tiny(root=str(root)).load()
    write(root / "tiny.xml", "<labels>")
    with pytest.raises(DataError, match="tiny.xml"):
        Tiny(root=str(root)).load()
    write(root / "tiny.xml", XML)
    write(root / "tiny-test.arff", HEADER + "@data\n1,2,red\n")
    with pytest.raises(DataError, match=r"tiny-test.arff:10: row has 3 values.*expected layout: tiny/"):
        Tiny(root=str(root)).load()
    with pytest.raises(DataError, match="folder .* not found"):
        Tiny(root=str(tmp_path / "absent")).load()


def test_registered_loaders_report_missing_folder(tmp_path):
    for name in ("mulan_scene", "corel5k"):
        with pytest.raises(DataError, match="expected layout"):
            datasets.build(name, {}).load(str(tmp_path))


@pytest.mark.realdata
def test_mulan_scene_real(shared_data):
    ds = datasets.build("mulan_scene", {}).load(str(shared_data))
    assert len(ds) == 2407 and ds.items.train.sum() == 1211
    assert ds.arrays["feat"].shape == (2407, 294)
    assert 0 <= ds.arrays["feat"].min() and ds.arrays["feat"].max() <= 1
    assert ds.info["concepts"] == read_mulan_labels(shared_data / "mulan-scene" / "scene.xml")
    R = ds.arrays["relevance"]
    train = ds.items.train.to_numpy()
    # positives per concept, from the folder's MANIFEST.txt
    assert R[train].sum(0).tolist() == [227, 165, 197, 196, 277, 224]
    assert R[~train].sum(0).tolist() == [200, 199, 200, 237, 256, 207]


@pytest.mark.realdata
def test_corel5k_real(shared_data):
    ds = datasets.build("corel5k", {}).load(str(shared_data))
    assert len(ds) == 5000 and ds.items.train.sum() == 4500
    assert ds.arrays["feat"].shape == (5000, 499) and ds.arrays["relevance"].shape == (5000, 374)
    R = ds.arrays["relevance"]
    pos = dict(zip(ds.info["concepts"], R.sum(0).tolist()))
    assert pos["water"] == 1120 and pos["sky"] == 988 and pos["boats"] == 170
    assert R.sum(1).mean() == pytest.approx(3.52, abs=0.01)
    assert ds.arrays["feat"].sum(1).mean() == pytest.approx(8.3, abs=0.1)
    train = ds.items.train.to_numpy()
    assert (R[train].sum(0) == 0).sum() == 3 and (R[~train].sum(0) == 0).sum() == 111

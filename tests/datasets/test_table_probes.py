"""What users bring to the table loader, checked where it enters: a generated sweep of bad tables,
feature files, images and file names, one row per case, each one line naming the file."""

import os
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from toydata import people

from rankbench.errors import ConfigError, DataError
from rankbench.registry import datasets


def load(data_root, **params):
    return datasets.build("table", params, "dataset").load(str(data_root))


def png_header(width: int, height: int) -> bytes:
    """A PNG that claims ``width x height`` pixels (a decompression bomb's header) and holds none."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b"")


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "cache"))
    d = tmp_path / "data" / "mine"
    d.mkdir(parents=True)
    people(d / "crops")
    np.save(d / "six.npy", np.arange(12.0).reshape(6, 2))
    return tmp_path / "data"


def write(path: Path, data) -> None:
    if isinstance(data, str):
        path.write_text(data)
    elif isinstance(data, bytes):
        path.write_bytes(data)
    else:
        np.save(path, data)
        if path.suffix != ".npy":   # np.save appends .npy; keep the name the case gives
            os.replace(str(path) + ".npy", path)


def npz_as_npy(path: Path) -> None:
    np.savez(path.with_suffix(".npz"), a=np.zeros((3, 2)))
    os.replace(path.with_suffix(".npz"), path)


# (id, files {name: content or a function of the path}, loader parameters, error type, expected words)
CASES = [
    ("npy more rows than the table", {"t.csv": "id,label\na,1\nb,2\n"}, {"features": "six.npy"}, DataError,
     ["six.npy", "t.csv", "(2 rows", "got 6 rows"]),
    ("npy fewer rows than the table", {"t.csv": "id,label\n" + "".join(f"r{i},{i}\n" for i in range(8))},
     {"features": "six.npy"}, DataError, ["six.npy", "(8 rows", "got 6 rows"]),
    ("npy complex", {"t.csv": "id,label\na,1\nb,2\n", "f.npy": np.array([[1 + 2j], [3 + 0j]])},
     {"features": "f.npy"}, DataError, ["f.npy", "complex", "expected real numbers"]),
    ("npy of booleans", {"t.csv": "id,label\na,1\nb,2\n", "f.npy": np.array([[True], [False]])},
     {"features": "f.npy"}, DataError, ["f.npy", "booleans"]),
    ("npy of text", {"t.csv": "id,label\na,1\nb,2\n", "f.npy": np.array([["x"], ["y"]])},
     {"features": "f.npy"}, DataError, ["f.npy", "expected real numbers"]),
    ("npy one-dimensional", {"t.csv": "id,label\na,1\nb,2\n", "f.npy": np.array([1.0, 2.0])},
     {"features": "f.npy"}, DataError, ["f.npy", "shape (2,)"]),
    ("npy with NaN", {"t.csv": "id,label\na,1\nb,2\n", "f.npy": np.array([[1.0], [np.nan]])},
     {"features": "f.npy"}, DataError, ["f.npy", "finite", "row 1", "item 2"]),
    ("npy with inf", {"t.csv": "id,label\na,1\nb,2\n", "f.npy": np.array([[np.inf], [1.0]])},
     {"features": "f.npy"}, DataError, ["f.npy", "finite", "row 0"]),
    ("npy of no columns", {"t.csv": "id,label\na,1\nb,2\n", "f.npy": np.zeros((2, 0))}, {"features": "f.npy"},
     DataError, ["f.npy", "shape (2, 0)"]),
    ("npz named npy", {"t.csv": "id,label\na,1\nb,2\n", "f.npy": npz_as_npy}, {"features": "f.npy"}, DataError,
     ["f.npy", ".npz archive", "numpy.save"]),
    ("npy truncated", {"t.csv": "id,label\na,1\nb,2\n", "f.npy": b"\x93NUMPY\x01\x00"}, {"features": "f.npy"},
     DataError, ["f.npy", "not a .npy array"]),
    ("npy that is text", {"t.csv": "id,label\na,1\nb,2\n", "f.npy": "1,2\n3,4\n"}, {"features": "f.npy"}, DataError,
     ["f.npy", "not a .npy array"]),
    ("column mapped onto an existing column", {"t.csv": "id,identity,pid\na,1,2\nb,2,1\n"},
     {"columns": {"identity": "pid"}}, DataError, ["t.csv", "columns: identity", "'pid'", "replace"]),
    ("one column mapped twice", {"t.csv": "id,pid\na,1\nb,2\n"}, {"columns": {"identity": "pid", "subject": "pid"}},
     ConfigError, ["dataset.columns", "t.csv", "'pid'", "'identity'", "'subject'"]),
    ("image listed twice", {"t.csv": "path,identity\ncrops/0000_a.png,1\ncrops/./0000_a.png,2\n"}, {}, DataError,
     ["t.csv", "column 'path', row 2", "row 1's too"]),
    ("column twice in the header", {"t.csv": "id,label,label\na,1,5\n"}, {}, DataError,
     ["t.csv", "column 'label' appears twice"]),
    ("infinite label", {"t.csv": "id,label\na,1\nb,-inf\n"}, {}, DataError,
     ["t.csv", "column 'label', row 2", "a finite number", "'-inf'"]),
    ("label beyond float", {"t.csv": "id,label\na,1e999\n"}, {}, DataError, ["column 'label', row 1", "finite"]),
    ("frame beyond exact integers", {"t.csv": "id,track,frame\na,1,1e20\nb,1,2\n"}, {}, DataError,
     ["column 'frame', row 1", "an integer", "'1e20'"]),
    ("strength missing", {"t.csv": "id,category\na,x\n", "s.csv": "attribute,x,y\nnat,1,\n"},
     {"strengths": "s.csv"}, DataError, ["s.csv", "attribute 'nat', category 'y'", "finite strength", "got nothing"]),
    ("strength infinite", {"t.csv": "id,category\na,x\n", "s.csv": "attribute,x,y\nnat,1,inf\n"},
     {"strengths": "s.csv"}, DataError, ["s.csv", "finite strength", "inf"]),
    ("attribute twice", {"t.csv": "id,category\na,x\n", "s.csv": "attribute,x,y\nnat,1,2\nnat,2,1\n"},
     {"strengths": "s.csv"}, DataError, ["s.csv", "attribute 'nat' has two rows"]),
    ("decompression bomb", {"t.csv": "path,identity\nbomb.png,1\n", "bomb.png": png_header(20000, 20000)},
     {"check_images": True}, DataError, ["bomb.png", "decompression bomb", "89,478,485"]),
    ("decompression bomb just over", {"t.csv": "path,identity\nbomb.png,1\n", "bomb.png": png_header(9500, 9500)},
     {"check_images": True}, DataError, ["bomb.png", "9500x9500"]),
]


@pytest.mark.parametrize("case, files, params, error, words", CASES, ids=[c[0] for c in CASES])
def test_each_bad_input_is_one_line_naming_the_file(root, case, files, params, error, words):
    d = root / "mine"
    for name, content in files.items():
        content(d / name) if callable(content) else write(d / name, content)
    with pytest.raises(error) as err:
        load(root, file="mine/t.csv", **params)
    msg = str(err.value)
    assert "\n" not in msg and all(w in msg for w in words), msg


def test_good_inputs_next_to_the_bad_ones_load(root):
    d = root / "mine"
    (d / "t.csv").write_text("id,label,row\na,1,5\nb,2,0\n")   # a row column may pick from a longer file
    assert load(root, file="mine/t.csv", features="six.npy").arrays["feat"].tolist() == [[10.0, 11.0], [0.0, 1.0]]
    (d / "t.csv").write_text("id,identity,pid\na,1,x\nb,2,y\n")  # a mapping swapping two names
    ds = load(root, file="mine/t.csv", columns={"identity": "pid", "pid": "identity"})
    assert ds.items["identity"].tolist() == ["x", "y"]
    (d / "t.csv").write_text("path,identity\ncrops/0000_a.png,1\n")
    (d / "big.png").write_bytes(png_header(9000, 9000))     # under the limit: not refused for its size
    assert load(root, file="mine/t.csv", check_images=True).image(0).shape == (16, 8, 3)


def test_a_file_name_that_is_not_utf8_is_one_line(root):
    folder = root / "market"
    people(folder, n=3)
    os.rename(folder / "0001_a.png", os.path.join(os.fsencode(folder), b"0001_c1_\xe9.png"))
    for p in folder.iterdir():   # market1501 names: <identity>_c<cam>
        if p.name[5] in "ab":
            p.rename(folder / f"{p.name[:4]}_c{'12'['ab'.index(p.name[5])]}.png")
    with pytest.raises(DataError) as err:
        load(root, root="market", pattern="market1501")
    msg = str(err.value)
    assert "0001_c1_\\xe9.png" in msg and "not UTF-8" in msg and "\n" not in msg

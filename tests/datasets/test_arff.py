"""The ARFF reader (datasets/_arff.py) on its own: dense files against scipy's reader, sparse rows
against the dense file they stand for, and each refusal one line naming the file and line."""

import numpy as np
import pytest
from scipy.io import arff as scipy_arff

from rankbench.datasets._arff import read_arff
from rankbench.errors import DataError

HEADER = """% a comment
@relation 'tiny set'
@attribute x numeric
@attribute 'y z' real
@attribute cls {neg,pos}
@attribute n integer
"""


def write(tmp_path, text, name="t.arff"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_dense_file_reads_as_scipy_reads_it(tmp_path):
    rng = np.random.default_rng(0)
    rows = [f"{a:.6g},{b:.6g},{c},{n}" for a, b, c, n in
            zip(rng.normal(size=6), rng.normal(size=6), rng.choice(["neg", "pos"], 6), rng.integers(0, 9, 6))]
    rows[2] = "?," + rows[2].split(",", 1)[1]
    path = write(tmp_path, HEADER + "@data\n" + "\n".join(rows) + "\n")
    got = read_arff(path)
    data, meta = scipy_arff.loadarff(path)
    assert got.relation == "tiny set"
    assert got.names == list(meta.names()) == ["x", "y z", "cls", "n"]
    assert got.nominal == [None, None, ["neg", "pos"], None]
    for k, name in enumerate(meta.names()):
        col = data[name]
        want = (col == b"pos").astype(float) if col.dtype.kind == "S" else col.astype(float)
        np.testing.assert_array_equal(got.data[:, k], want)
    assert np.isnan(got.data[2, 0])


def test_sparse_rows_read_as_the_dense_rows_they_stand_for(tmp_path):
    head = "@relation s\n@attribute a numeric\n@attribute b {0,1}\n@attribute c {x,y,z}\n@attribute d numeric\n@data\n"
    sparse = write(tmp_path, head + "{0 2.5, 2 z}\n{}\n{1 1, 3 -4}\n{3 ?}, {3}\n", "s.arff")
    dense = write(tmp_path, head + "2.5,0,z,0\n0,0,x,0\n0,1,x,-4\n0,0,x,?\n", "d.arff")
    a, b = read_arff(sparse).data, read_arff(dense).data
    np.testing.assert_array_equal(a, b)
    assert a.tolist()[0] == [2.5, 0.0, 2.0, 0.0]


def test_quoted_nominal_values_with_commas(tmp_path):
    path = write(tmp_path, "@relation q\n@attribute c {'a,b',\"c d\"}\n@data\n'a,b'\n\"c d\"\n")
    got = read_arff(path)
    assert got.nominal == [["a,b", "c d"]] and got.data[:, 0].tolist() == [0.0, 1.0]


def test_columns_finds_attributes_by_name(tmp_path):
    got = read_arff(write(tmp_path, HEADER + "@data\n"))
    assert got.data.shape == (0, 4)
    assert got.columns(["n", "x"]).tolist() == [3, 0]
    with pytest.raises(DataError, match=r"^attribute 'w' not in the ARFF header \(4 attributes\)$"):
        got.columns(["x", "w"])


@pytest.mark.parametrize("text, line, words", [
    (HEADER + "@data\n1,2,pos\n", 8, "row has 3 values, the header declares 4 attributes"),
    (HEADER + "@data\n1,2,maybe,3\n", 8, "value 'maybe' is not one of the declared nominal values"),
    (HEADER + "@data\n1,two,pos,3\n", 8, "value 'two' is not numeric"),
    (HEADER + "@data\n{0 1, 4 2}\n", 8, "sparse index 4 out of range 0..3"),
    (HEADER + "@data\n{0 1, 1}\n", 8, "sparse entry '1' is not 'index value'"),
    (HEADER + "@data\n{a 1}\n", 8, "sparse index 'a' is not an integer"),
    (HEADER + "@data\n{0 1, 0 2}\n", 8, "sparse index 0 is given twice"),
    (HEADER + "@data\n{0 1, 1 2\n", 8, "sparse row without closing '}'"),
    ("@relation r\n@attribute d date\n@data\n", 2, "attribute 'd' has unsupported type 'date'"),
    ("@relation r\n@attribute\n@data\n", 2, "malformed @attribute line"),
    ("@relation r\n@attribute c {a,b\n@data\n", 2, "nominal type must be '{v1,v2,...}'"),
    ("@relation r\n@data\n", 2, "@data before any @attribute"),
    ("@relation r\nhello\n", 2, "unexpected header line 'hello'"),
    ("@relation r\n@attribute a numeric\n@attribute a {0,1}\n@data\n", 3, "attribute 'a' is declared twice"),
])
def test_refusals_name_the_file_and_line(tmp_path, text, line, words):
    path = write(tmp_path, text)
    with pytest.raises(DataError) as info:
        read_arff(path)
    msg = str(info.value)
    assert msg.startswith(f"{path}:{line}: ") and words in msg and "\n" not in msg


def test_missing_file_and_missing_data_section(tmp_path):
    with pytest.raises(DataError, match="not found"):
        read_arff(tmp_path / "none.arff")
    with pytest.raises(DataError, match="has no @data section"):
        read_arff(write(tmp_path, HEADER))


def test_a_byte_order_mark_is_read_past(tmp_path):
    """Files saved by some editors start with a BOM: '\\ufeff@relation' was an unexpected header line."""
    plain = read_arff(write(tmp_path, HEADER + "@data\n1,2,pos,3\n"))
    bom = tmp_path / "bom.arff"
    bom.write_bytes(b"\xef\xbb\xbf" + (HEADER + "@data\n1,2,pos,3\n").encode())
    got = read_arff(bom)
    assert got.names == plain.names and np.array_equal(got.data, plain.data)

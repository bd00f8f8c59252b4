"""UMIST / FG-NET / synthetic ordinal loaders, raw features and the ordinal protocol."""

import numpy as np
import pytest

from rankbench.datasets.fgnet import FGNET, read_pts
from rankbench.datasets.synthetic_ordinal import SyntheticOrdinal
from rankbench.datasets.umist import UMIST, read_pgm
from rankbench.errors import ConfigError, DataError
from rankbench.features.raw import Array, Pixels
from rankbench.protocols.base import Meter
from rankbench.protocols.ordinal import Ordinal
from rankbench.rankers.cmds_dml import CMDSDML
from rankbench.rankers.template import Euclidean


# ------------------------------------------------------------------ fixtures in the real layouts
def _write_pgm(path, h=112, w=92, value=7, comment=False):
    header = b"P5\n" + (b"# made by a test\n" if comment else b"") + f"{w} {h}\n255\n".encode()
    path.write_bytes(header + np.full(h * w, value, np.uint8).tobytes())


@pytest.fixture
def umist_root(tmp_path):
    for subj, n in (("1a", 2), ("1b", 3)):
        face = tmp_path / "umist_cropped" / subj / "face"
        face.mkdir(parents=True)
        for i in range(n):
            _write_pgm(face / f"{subj}{i:03d}.pgm", value=i, comment=(i == 1))
    (tmp_path / "umist_cropped" / "license.html").write_text("licence")
    (tmp_path / "labels.csv").write_text("# derived\nsubject,paper_label\n1a,0\n1b,2\n")
    return tmp_path


def _write_pts(path, n=68, shift=0.0):
    pts = "\n".join(f"{i + shift:.2f} {2 * i + shift:.2f}" for i in range(n))
    path.write_text(f"version: 1\nn_points: {n}\n{{\n{pts}\n}}\n")


@pytest.fixture
def fgnet_root(tmp_path):
    (tmp_path / "points").mkdir()
    for stem in ("001a01", "001a05", "002a05", "003a09", "003a10a", "004a10b"):
        _write_pts(tmp_path / "points" / f"{stem}.pts", shift=int(stem[:3]))
    return tmp_path


# ------------------------------------------------------------------ UMIST
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
    _write_pgm(umist_root / "umist_cropped" / "1a" / "face" / "1a009.pgm", h=100)
    with pytest.raises(DataError, match="1a009.pgm.*expected 92x112"):
        UMIST(root=str(umist_root)).load()
    (umist_root / "umist_cropped" / "1a" / "face" / "1a009.pgm").unlink()
    (umist_root / "umist_cropped" / "1a" / "face" / "1a010.jpg").write_bytes(b"\xff\xd8")
    with pytest.raises(DataError, match="1a010.jpg is not a .pgm"):
        UMIST(root=str(umist_root)).load()
    (umist_root / "empty").mkdir()
    with pytest.raises(DataError, match="umist_cropped"):
        UMIST(root=str(umist_root / "empty")).load()


def test_read_pgm_rejects_non_pgm(tmp_path):
    p = tmp_path / "x.pgm"
    p.write_bytes(b"P6\n2 2\n255\n" + bytes(12))
    with pytest.raises(DataError, match="not a binary PGM"):
        read_pgm(p)
    p.write_bytes(b"P5\n92 112\n255\n" + bytes(10))
    with pytest.raises(DataError, match="truncated"):
        read_pgm(p)


# ------------------------------------------------------------------ FG-NET
def test_fgnet_ages_relabel_and_landmarks(fgnet_root):
    ds = FGNET(root=str(fgnet_root), ages=[5, 10], relabel=[1, 2]).load()
    assert list(ds.items["id"]) == ["001a05", "002a05", "003a10a", "004a10b"]
    assert list(ds.items["label"]) == [1, 1, 2, 2] and list(ds.items["subject"]) == ["001", "002", "003", "004"]
    L = ds.arrays["landmarks"]
    assert L.shape == (4, 136) and L[0, :4].tolist() == [1.0, 1.0, 2.0, 3.0]  # x1, y1, x2, y2
    assert list(FGNET(root=str(fgnet_root), ages=[1], relabel={1: 7}).load().items["label"]) == [7]
    assert len(FGNET(root=str(fgnet_root)).load()) == 6


def test_fgnet_errors(fgnet_root):
    with pytest.raises(DataError, match="no images of age 19"):
        FGNET(root=str(fgnet_root), ages=[5, 19]).load()
    with pytest.raises(ConfigError, match="same length"):
        FGNET(root=str(fgnet_root), ages=[5, 9], relabel=[1]).load()
    with pytest.raises(DataError, match="images"):
        FGNET(root=str(fgnet_root), images=True).load()
    _write_pts(fgnet_root / "points" / "005a05.pts", n=60)
    with pytest.raises(DataError, match="005a05.pts: 60 points"):
        FGNET(root=str(fgnet_root)).load()


def test_fgnet_image_pairing_is_case_insensitive(fgnet_root):
    (fgnet_root / "images").mkdir()
    for stem in ("001A05", "002A05"):
        (fgnet_root / "images" / f"{stem}.JPG").write_bytes(b"")
    ds = FGNET(root=str(fgnet_root), ages=[5], images=True).load()
    assert [p.split("/")[-1] for p in ds.items["path"]] == ["001A05.JPG", "002A05.JPG"]
    with pytest.raises(DataError, match="003a09"):
        FGNET(root=str(fgnet_root), ages=[9], images=True).load()


def test_read_pts_malformed(tmp_path):
    p = tmp_path / "a.pts"
    p.write_text("hello")
    with pytest.raises(DataError, match="not a landmark file"):
        read_pts(p)


# ------------------------------------------------------------------ features
def test_pixels_and_array_features(umist_root, fgnet_root):
    ds = UMIST(root=str(umist_root)).load()
    F = Pixels().extract(ds)
    assert F.shape == (5, 10304) and F[3].max() == 1
    assert Pixels(scale=0.5).transform_image(np.full((2, 2), 4, np.uint8)).tolist() == [2.0] * 4
    fg = FGNET(root=str(fgnet_root)).load()
    A = Array(key="landmarks", scale=0.5).extract(fg)
    np.testing.assert_allclose(A, fg.arrays["landmarks"] * 0.5)
    assert not Array.cacheable
    with pytest.raises(DataError, match="no array 'feat'"):
        Array().extract(fg)


# ------------------------------------------------------------------ synthetic + protocol
def test_synthetic_ordinal_is_seeded():
    a = SyntheticOrdinal(n_labels=3, n_per_label=5, random_state=1).load()
    b = SyntheticOrdinal(n_labels=3, n_per_label=5, random_state=1).load()
    assert a.arrays["feat"].shape == (15, 23)
    np.testing.assert_array_equal(a.arrays["feat"], b.arrays["feat"])
    assert a.fingerprint == b.fingerprint
    assert a.fingerprint != SyntheticOrdinal(n_labels=3, n_per_label=5, random_state=2).load().fingerprint


def test_ordinal_split_is_stratified_and_seeded():
    ds = SyntheticOrdinal(n_labels=4, n_per_label=12).load()
    p = Ordinal(n_per_label=5)
    p.check_dataset(ds)
    s1 = p.split(ds, np.random.default_rng(3))
    s2 = p.split(ds, np.random.default_rng(3))
    assert s1 == s2
    y = ds.column("label")
    assert np.bincount(y[s1["train"]].astype(int)).tolist() == [5] * 4
    assert sorted(s1["train"] + s1["test"]) == list(range(len(ds)))


def test_ordinal_checks():
    ds = SyntheticOrdinal(n_labels=3, n_per_label=6).load()
    with pytest.raises(ConfigError, match="n_per_label"):
        Ordinal(n_per_label=6).check_dataset(ds)
    with pytest.raises(DataError, match="'grade'"):
        Ordinal(label_column="grade").check_dataset(ds)


def test_ordinal_evaluate_scores_mae_and_times():
    ds = SyntheticOrdinal(n_labels=4, n_per_label=40).load()
    X = ds.arrays["feat"]
    p = Ordinal(n_per_label=10, k=5)
    res_e, res_c = [], []
    for t in range(3):
        split = p.split(ds, np.random.default_rng(t))
        meter = Meter(measure_memory=False)
        res_e.append(p.evaluate(Euclidean, X, ds, split, meter).metrics["mae"])
        assert meter.train_s >= 0 and meter.test_s > 0
        res_c.append(p.evaluate(lambda: CMDSDML(gamma=0.5, max_iter=300), X, ds, split, Meter()).metrics["mae"])
    assert 0 <= np.mean(res_c) < np.mean(res_e)

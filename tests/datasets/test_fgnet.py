"""The FG-NET loader and landmark reader."""


import numpy as np
import pytest
from toydata import write_pts

from rankbench.datasets.fgnet import FGNET, read_pts
from rankbench.errors import ConfigError, DataError


def test_fgnet_ages_relabel_and_landmarks(fgnet_root):
    ds = FGNET(root=str(fgnet_root), ages=[5, 10], relabel=[1, 2]).load()
    assert list(ds.items["id"]) == ["001a05", "002a05", "003a10a", "004a10b"]
    assert list(ds.items["label"]) == [1, 1, 2, 2] and list(ds.items["subject"]) == ["001", "002", "003", "004"]
    L = ds.arrays["landmarks"]
    assert L.shape == (4, 136) and L[0, :4].tolist() == [1.0, 1.0, 2.0, 3.0]  # x1, y1, x2, y2
    assert list(FGNET(root=str(fgnet_root), ages=[1], relabel={1: 7}).load().items["label"]) == [7]
    assert len(FGNET(root=str(fgnet_root)).load()) == 6


def test_fgnet_unlabelled_keeps_other_ages_without_a_label(fgnet_root):
    ds = FGNET(root=str(fgnet_root), ages=[5, 10], relabel=[1, 2], unlabelled=True).load()
    assert len(ds) == 6 and ds.arrays["landmarks"].shape == (6, 136)
    labels = dict(zip(ds.items["id"], ds.items["label"]))
    assert labels["001a05"] == 1 and labels["003a10a"] == 2
    assert np.isnan(labels["001a01"]) and np.isnan(labels["003a09"])


def test_fgnet_errors(fgnet_root):
    with pytest.raises(DataError, match="no images of age 19"):
        FGNET(root=str(fgnet_root), ages=[5, 19]).load()
    with pytest.raises(ConfigError, match="same length"):
        FGNET(root=str(fgnet_root), ages=[5, 9], relabel=[1]).load()
    with pytest.raises(DataError, match="images"):
        FGNET(root=str(fgnet_root), images=True).load()
    write_pts(fgnet_root / "points" / "005a05.pts", n=60)
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


def test_a_folder_named_like_a_landmark_file_is_one_line(tmp_path):
    from rankbench.datasets.fgnet import read_pts

    (tmp_path / "003a09.pts").mkdir()
    with pytest.raises(DataError, match=r"003a09.pts: named like a landmark file but is not a file"):
        read_pts(tmp_path / "003a09.pts")

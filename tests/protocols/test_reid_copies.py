"""Copies of images in re-id data: an image shared by two people, or by a person's probe and
gallery camera, is refused at plan time; copies within one person's images are counted and never
a probe of their own gallery copy."""

import warnings
from pathlib import Path

import cv2
import numpy as np
import pandas as pd
import pytest
from toydata import people
import yaml

from rankbench import app
from rankbench.errors import ConfigError, DataError, RankbenchError
from rankbench.registry import datasets, protocols


def load(data_root, **params):
    return datasets.build("table", params, "dataset").load(str(data_root))


def reid_table(root: Path, copies: dict, n: int = 6) -> None:
    d = root / "reid"
    people(d, n=n, copies=copies)
    rows = [(f"{p:04d}_{c}.png", f"{p:04d}", c) for p in range(n) for c in "ab"]
    pd.DataFrame(rows, columns=["path", "identity", "cam"]).to_csv(d / "t.csv", index=False)


def checked(root: Path, **protocol):
    ds = load(root, file="reid/t.csv")
    proto = protocols.build("reid", {"n_test": 3, **protocol}, "protocol")
    proto.check_dataset(ds)
    return ds, proto


@pytest.mark.parametrize("copies, protocol, words", [
    ({"0001_a.png": "0000_a.png"}, {"probe_cam": "a", "gallery_cam": "b"}, ["identities, '0000' and '0001'"]),
    ({"0003_b.png": "0002_a.png"}, {"gallery": "one_random"}, ["identities, '0002' and '0003'"]),
    ({"0002_b.png": "0002_a.png"}, {"probe_cam": "a", "gallery_cam": "b"}, ["probe and the gallery camera",
                                                                              "'0002'"]),
], ids=["two people, cam", "two people, one_random", "a person's probe and gallery"])
def test_an_image_shared_by_two_people_or_two_roles_is_refused(tmp_path, copies, protocol, words):
    reid_table(tmp_path, copies)
    with pytest.raises(DataError) as err:
        checked(tmp_path, **protocol)
    msg = str(err.value)
    assert "same image" in msg and all(w in msg for w in words) and "t.csv" in msg and "\n" not in msg


def test_a_fixed_split_making_a_probe_its_own_gallery_copy_is_refused(tmp_path):
    # the warning promises copies are never a probe of their own copy; a split file must keep it
    reid_table(tmp_path, {"0002_b.png": "0002_a.png"})
    names = lambda people, cam: [f"{p:04d}_{cam}" for p in people]  # noqa: E731
    trial = {"train": names([0, 1], "a") + names([0, 1], "b"), "probe": names([2, 3], "a"),
             "gallery": names([2, 3], "b")}
    (tmp_path / "reid" / "s.yaml").write_text(yaml.safe_dump({"trials": [trial]}))
    with pytest.warns(UserWarning, match="repeat another image"), pytest.raises(ConfigError) as err:
        checked(tmp_path, split_file="s.yaml")
    assert ("trials[0].probe: item '0002_a' is the same image as gallery item '0002_b'" in str(err.value)
            and "s.yaml" in str(err.value))


def test_copies_within_a_person_are_counted_and_never_probe_their_gallery_copy(tmp_path):
    # person 0002 has three images, two of them byte-identical (as CAVIAR4REID's 0029_002 / 003)
    reid_table(tmp_path, {})
    d = tmp_path / "reid"
    (d / "0002_c.png").write_bytes((d / "0002_a.png").read_bytes())
    (d / "0005_c.png").write_bytes((d / "0005_a.png").read_bytes())  # 0005: two images, one of them twice
    (d / "0005_b.png").write_bytes((d / "0005_a.png").read_bytes())  # ... now all three the same: no probe
    t = pd.read_csv(d / "t.csv", dtype=str)
    t = pd.concat([t, pd.DataFrame([("0002_c.png", "0002", "a"), ("0005_c.png", "0005", "a")], columns=t.columns)])
    t.to_csv(d / "t.csv", index=False)
    with pytest.warns(UserWarning, match=r"3 image\(s\) repeat another image of the same person"):
        ds, proto = checked(tmp_path, gallery="one_random")
    blobs = [Path(p).read_bytes() for p in ds.items["path"]]
    ids = ds.items["identity"].to_numpy()
    assert "0005" not in proto._eligible(ds)             # every image of 0005 is the same one
    seen_copy_in_gallery = False
    for seed in range(40):
        s = proto.split(ds, np.random.default_rng(seed))
        for g in s["gallery"]:
            mine = [p for p in s["probe"] if ids[p] == ids[g]]
            assert mine and all(blobs[p] != blobs[g] for p in mine)   # a probe is never its gallery's copy
            seen_copy_in_gallery |= ids[g] == "0002" and blobs[g] == blobs[int(np.flatnonzero(ids == "0002")[0])]
    assert seen_copy_in_gallery   # the case the rule is about was drawn
    # under the cam protocol, 0005's copy in camera b is its probe's own image: refused
    with pytest.raises(DataError, match="probe and the gallery camera of identity '0005'"):
        checked(tmp_path, probe_cam="a", gallery_cam="b")
    # a copy within one camera: counted, kept
    cv2.imwrite(str(d / "0005_b.png"), np.zeros((16, 8, 3), np.uint8))
    with pytest.warns(UserWarning, match=r"2 image\(s\) repeat another image"):
        checked(tmp_path, probe_cam="a", gallery_cam="b")


def test_a_split_is_unchanged_without_copies(tmp_path):
    """Data without copies draw exactly the splits they drew before copies were looked for."""
    reid_table(tmp_path, {})
    ds, proto = checked(tmp_path, gallery="one_random")
    rng = np.random.default_rng(7)
    ids = ds.column("identity")
    people_ = np.unique(ids)
    perm = rng.permutation(len(people_))
    want_probe, want_gal = [], []
    for p in people_[perm[:3]]:
        rows = rng.permutation(np.flatnonzero(ids == p))
        want_gal.append(rows[0])
        want_probe.extend(rows[1:])
    s = proto.split(ds, np.random.default_rng(7))
    assert s["gallery"] == sorted(int(g) for g in want_gal) and s["probe"] == sorted(int(p) for p in want_probe)


def test_copies_across_people_stop_validate_before_any_folder(tmp_path):
    reid_table(tmp_path, {"0001_b.png": "0000_b.png"})
    cfg = {"name": "x", "dataset": {"name": "table", "file": "reid/t.csv"},
           "features": [{"name": "c", "extractor": "color_strips", "bins": 4}],
           "protocol": {"name": "reid", "n_test": 3}, "trials": 1, "rankers": [{"name": "L1", "ranker": "l1"}]}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    with pytest.raises(RankbenchError, match="two identities"):
        app.validate(path, data_root=str(tmp_path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RankbenchError, match="two identities"):
            app.run(path, out=tmp_path / "run", options=app.EngineOptions(data_root=str(tmp_path), progress=False))
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("cams", [False, True], ids=["no cameras", "cameras it does not use"])
def test_a_fixed_split_never_reads_the_cameras(tmp_path, cams):
    """A fixed split forms probe and gallery itself: the cameras take no part, so a table without a
    ``cam`` column is checked, and a copy across cameras is a copy within one person, kept."""
    reid_table(tmp_path, {"0001_b.png": "0001_a.png"})
    d = tmp_path / "reid"
    t = pd.read_csv(d / "t.csv", dtype=str)
    t["subset"] = ["train" if int(i) < 2 else ("probe" if c == "a" else "gallery") for i, c in zip(t.identity, t.cam)]
    (t if cams else t.drop(columns="cam")).to_csv(d / "t.csv", index=False)
    with pytest.warns(UserWarning, match=r"1 image\(s\) repeat another image of the same person"):
        ds, proto = checked(tmp_path, split_column="subset")
    s = proto.split(ds, np.random.default_rng(0))
    assert s["train"] == [0, 1, 2, 3] and s["probe"] == [4, 6, 8, 10] and s["gallery"] == [5, 7, 9, 11]

"""The CAVIAR4REID loader: generated folders in the release's layout, and the real set's camera
reading checked on its files (skipped when the real data is absent)."""

import cv2
import numpy as np
import pytest
from conftest import shared_dataset

from rankbench.datasets.caviar4reid import CAVIAR4REID
from rankbench.errors import DataError
from rankbench.registry import datasets, protocols


def make_caviar(root, both=(1, 2, 3), one=(4,), sizes=((90, 40), (50, 22))):
    """PPPP_NNN.jpg: 20 images of the people in ``both`` (camera 1 crops sized ``sizes[0]``, camera
    2 ``sizes[1]``), 10 of the people in ``one``."""
    folder = root / "caviar4reid" / "images"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for p in both + one:
        for n in range(1, 21 if p in both else 11):
            h, w = sizes[0] if n <= 10 else sizes[1]
            assert cv2.imwrite(str(folder / f"{p:04d}_{n:03d}.jpg"), rng.integers(0, 256, (h, w, 3), dtype=np.uint8))
    return folder


def test_items_cameras_and_resized_images(tmp_path):
    make_caviar(tmp_path)
    ds = datasets.build("caviar4reid", {}, "dataset").load(str(tmp_path))
    assert len(ds) == 3 * 20 + 10 and list(ds.items.columns) == ["id", "identity", "cam", "index", "path"]
    assert ds.items["id"].iat[0] == "0001_001" and ds.items["identity"].iat[0] == "0001"
    per = ds.items.groupby(["identity", "cam"]).size().to_dict()
    assert per == {("0001", "1"): 10, ("0001", "2"): 10, ("0002", "1"): 10, ("0002", "2"): 10,
                   ("0003", "1"): 10, ("0003", "2"): 10, ("0004", "1"): 10}
    assert (ds.items["cam"] == np.where(ds.items["index"] <= 10, "1", "2")).all()
    assert ds.image(0).shape == (128, 64, 3) and ds.image(15).shape == (128, 64, 3)
    assert CAVIAR4REID(size=None).load(str(tmp_path)).image(15).shape == (50, 22, 3)


def test_the_one_camera_people_are_gallery_distractors(tmp_path):
    make_caviar(tmp_path, both=tuple(range(1, 9)), one=(9, 10))
    ds = CAVIAR4REID().load(str(tmp_path))
    proto = protocols.build("reid", {"n_test": 4, "probe_cam": "2", "gallery_cam": "1", "distractors": "unpaired",
                                     "probe_shots": 1, "gallery_shots": 1}, "protocol")
    proto.check_dataset(ds)
    sp = proto.split(ds, np.random.default_rng(0))
    ids = ds.column("identity")
    assert len(sp["probe"]) == 4 and len(sp["gallery"]) == 4 + 2
    assert {"0009", "0010"} <= set(ids[sp["gallery"]]) and not {"0009", "0010"} & set(ids[sp["train"]])


@pytest.mark.parametrize("name, message", [("0001_021.jpg", r"image number 21 .* outside 001-020"),
                                           ("person1.jpg", r"unexpected file name .*person1.jpg")])
def test_bad_file_names_are_one_line(tmp_path, name, message):
    folder = make_caviar(tmp_path)
    cv2.imwrite(str(folder / name), np.zeros((10, 5, 3), np.uint8))
    with pytest.raises(DataError, match=message) as err:
        CAVIAR4REID().load(str(tmp_path))
    assert "\n" not in str(err.value)


def test_a_broken_link_is_one_line_naming_it(tmp_path):
    folder = make_caviar(tmp_path)
    (folder / "0004_003.jpg").unlink()
    (folder / "0004_003.jpg").symlink_to("/nonexistent/0004_003.jpg")
    with pytest.raises(DataError) as err:
        CAVIAR4REID().load(str(tmp_path))
    assert str(err.value).startswith(f"dataset caviar4reid: {folder / '0004_003.jpg'} is a symbolic link to "
                                     "/nonexistent/0004_003.jpg, which does not exist; expected layout:")
    assert "\n" not in str(err.value)


def test_a_missing_folder_names_the_layout(tmp_path):
    with pytest.raises(DataError, match=r"folder .*caviar4reid not found .*expected layout: caviar4reid/images/"):
        CAVIAR4REID().load(str(tmp_path))
    (tmp_path / "caviar4reid").mkdir()
    with pytest.raises(DataError, match=r"folder .*caviar4reid/images not found; expected layout: caviar4reid/images/"):
        CAVIAR4REID().load(str(tmp_path))


@pytest.mark.realdata
def test_the_real_set_and_its_camera_reading():
    """72 people, 50 in both cameras and 22 in one, 10 images per person and camera (MANIFEST.txt);
    the two blocks of a person's numbers are two cameras: the crops of 001-010 are the larger ones
    for nearly every two-camera person (the reading the loader documents)."""
    root = shared_dataset("caviar4reid")
    ds = CAVIAR4REID(check_images=False).load(str(root.parent))
    items = ds.items
    assert len(ds) == 1220 and items["identity"].nunique() == 72
    cams = items.groupby("identity")["cam"].nunique()
    assert (cams == 2).sum() == 50 and (cams == 1).sum() == 22
    assert set(items.groupby(["identity", "cam"]).size()) == {10}
    heights = np.array([cv2.imread(p).shape[0] for p in items["path"]])
    block = items.assign(h=heights).groupby(["identity", "cam"])["h"].mean().unstack()
    both = block.dropna()
    assert (both["1"] > both["2"]).sum() >= 45 and both["1"].mean() > 1.5 * both["2"].mean()

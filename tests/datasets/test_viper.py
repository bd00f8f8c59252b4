"""The VIPeR loader: real layout, data root, and one-line errors."""


import cv2
import numpy as np
import pytest

from rankbench.datasets.viper import VIPeR
from rankbench.errors import DataError


def _write(path, h, w, seed):
    rng = np.random.default_rng(seed)
    img = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    assert cv2.imwrite(str(path), img)


def make_viper(root, people=(0, 5, 17), angles=(0, 90)):
    for i, p in enumerate(people):
        _write(root / "cam_a" / f"{p:03d}_{angles[0]}.bmp", 128, 48, i)
        _write(root / "cam_b" / f"{p:03d}_{angles[1]}.bmp", 128, 48, 100 + i)
    return root


def test_viper_loads_real_layout(tmp_path):
    ds = VIPeR(root=make_viper(tmp_path / "viper")).load()
    assert len(ds) == 6
    assert list(ds.items.columns) == ["id", "identity", "cam", "angle", "path"]
    assert list(ds.items["cam"]) == ["a"] * 3 + ["b"] * 3
    assert list(ds.items["identity"][:3]) == ["000", "005", "017"]
    assert set(ds.items["angle"]) == {0, 90}
    assert ds.image(0).shape == (128, 48, 3)


def test_viper_data_root_and_missing_camera(tmp_path):
    make_viper(tmp_path / "viper")
    assert len(VIPeR().load(str(tmp_path))) == 6
    for f in (tmp_path / "viper" / "cam_b").iterdir():
        f.unlink()
    (tmp_path / "viper" / "cam_b").rmdir()
    with pytest.raises(DataError, match="cam_b"):
        VIPeR().load(str(tmp_path))


def test_viper_person_in_one_camera_only(tmp_path):
    root = make_viper(tmp_path / "viper")
    _write(root / "cam_a" / "042_45.bmp", 128, 48, 7)
    with pytest.raises(DataError, match="person 042 appears only in cam_a"):
        VIPeR(root=root).load()


def test_viper_images_in_a_camera_sub_folder_are_refused(tmp_path):
    root = make_viper(tmp_path / "viper")
    _write(root / "cam_a" / "extra" / "042_45.bmp", 128, 48, 7)
    with pytest.raises(DataError, match=r"dataset viper: the sub-folder .*extra holds 1 image"):
        VIPeR(root=root).load()


def test_viper_unreadable_image(tmp_path):
    root = make_viper(tmp_path / "viper")
    (root / "cam_b" / "005_90.bmp").write_bytes(b"not a bitmap")
    with pytest.raises(DataError, match="005_90.bmp"):
        VIPeR(root=root).load()


def test_viper_missing_folder(tmp_path):
    with pytest.raises(DataError, match="expected layout"):
        VIPeR().load(str(tmp_path))


def test_viper_broken_link(tmp_path):
    """A link to a missing image is an error naming the link and its target, not one person fewer."""
    root = make_viper(tmp_path / "viper")
    (root / "cam_b" / "005_90.bmp").unlink()
    (root / "cam_b" / "005_90.bmp").symlink_to("../../moved/005_90.bmp")
    with pytest.raises(DataError) as err:
        VIPeR(root=root).load()
    assert str(err.value).startswith(f"dataset viper: {root / 'cam_b' / '005_90.bmp'} is a symbolic link to "
                                     f"{root / 'cam_b' / '../../moved/005_90.bmp'}, which does not exist; "
                                     "expected layout: viper/cam_a/")

"""The i-LIDS loader on generated folders in the public layouts."""


import warnings

import cv2
import numpy as np
import pytest

from rankbench.datasets.base import read_image
from rankbench.datasets.ilids import ILIDS
from rankbench.errors import DataError


def _write(path, h, w, seed):
    rng = np.random.default_rng(seed)
    img = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    assert cv2.imwrite(str(path), img)


def make_ilids(folder, counts=(4, 2, 3, 1), underscore=True):
    sizes = [(76, 30), (304, 130), (160, 64), (128, 50)]
    for p, n in enumerate(counts, start=1):
        for s in range(n):
            name = f"{p:04d}_{s + 1:03d}.jpg" if underscore else f"{p:04d}{s + 1:03d}.jpg"
            h, w = sizes[(p + s) % len(sizes)]
            _write(folder / name, h, w, 10 * p + s)
    return folder


@pytest.mark.parametrize("sub,underscore", [("", True), ("images", False), ("Persons", True)])
def test_ilids_layouts_resize_and_singletons(tmp_path, sub, underscore):
    root = tmp_path / "ilids"
    make_ilids(root / sub if sub else root, underscore=underscore)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = ILIDS().load(str(tmp_path))
    assert any("0004" in str(w.message) for w in caught)  # the single-image person is reported
    assert ds.info["left_out"] == ["0004"]
    assert len(ds) == 9 and set(ds.items["identity"]) == {"0001", "0002", "0003"}
    assert "cam" not in ds.items.columns
    for i in range(len(ds)):
        assert ds.image(i).shape == (128, 64, 3)
    with pytest.warns(UserWarning):
        assert ILIDS(size=(64, 32)).load(str(tmp_path)).image(0).shape == (64, 32, 3)
    with pytest.warns(UserWarning):   # size: null, as listed, was a TypeError traceback
        kept = ILIDS(size=None).load(str(tmp_path))
    assert kept.info["size"] is None and kept.image(0).shape == read_image(kept.items["path"].iat[0]).shape


def test_ilids_errors(tmp_path):
    root = tmp_path / "ilids"
    root.mkdir()
    with pytest.raises(DataError, match="no JPEG"):
        ILIDS().load(str(tmp_path))
    make_ilids(root)
    (root / "person_one.jpg").write_bytes(b"x")
    with pytest.raises(DataError, match="person_one.jpg"):
        ILIDS().load(str(tmp_path))
    (root / "person_one.jpg").unlink()
    (root / "0002_001.jpg").write_bytes(b"\xff\xd8 truncated")
    with pytest.raises(DataError, match="0002_001.jpg"), pytest.warns(UserWarning):
        ILIDS().load(str(tmp_path))


@pytest.mark.parametrize("sub", ["images", "Persons"])
def test_ilids_images_in_two_places_are_an_error(tmp_path, sub):
    """Stray copies at the top level beside the full set in images/ (or Persons/): which set is
    meant is not guessed."""
    root = tmp_path / "ilids"
    make_ilids(root / sub)
    make_ilids(root, counts=(2,))
    with pytest.raises(DataError) as err:
        ILIDS().load(str(tmp_path))
    msg = str(err.value)
    assert "\n" not in msg and f"JPEG images in {root} and {root / sub}; expected them in one of these places" in msg


def test_ilids_hidden_files_are_not_a_second_place(tmp_path):
    root = tmp_path / "ilids"
    make_ilids(root / "images", counts=(2, 2))
    (root / "._0001_001.jpg").write_bytes(b"AppleDouble")   # what macOS leaves beside a copied file
    assert len(ILIDS().load(str(tmp_path))) == 4


def test_ilids_broken_link_is_an_error(tmp_path):
    folder = make_ilids(tmp_path / "ilids" / "images")
    (folder / "0001_005.jpg").symlink_to(tmp_path / "elsewhere" / "0001_005.jpg")
    with pytest.raises(DataError) as err, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ILIDS().load(str(tmp_path))
    assert str(err.value).startswith(f"dataset ilids: {folder / '0001_005.jpg'} is a symbolic link to "
                                     f"{tmp_path / 'elsewhere' / '0001_005.jpg'}, which does not exist")

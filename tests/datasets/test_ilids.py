"""The i-LIDS loader on generated folders in the public layouts."""


import warnings

import cv2
import numpy as np
import pytest

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

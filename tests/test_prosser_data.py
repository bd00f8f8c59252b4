"""Prosser et al. data: VIPeR and i-LIDS loaders on generated fixtures in the real layouts, ELF features."""

import warnings

import cv2
import numpy as np
import pytest

from rankbench.datasets.ilids import ILIDS
from rankbench.datasets.viper import VIPeR
from rankbench.errors import DataError
from rankbench.features.elf import ELFStrips, gabor_kernel, schmid_kernel


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


def test_viper_unreadable_image(tmp_path):
    root = make_viper(tmp_path / "viper")
    (root / "cam_b" / "005_90.bmp").write_bytes(b"not a bitmap")
    with pytest.raises(DataError, match="005_90.bmp"):
        VIPeR(root=root).load()


def test_viper_missing_folder(tmp_path):
    with pytest.raises(DataError, match="expected layout"):
        VIPeR().load(str(tmp_path))


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


# --------------------------------------------------------------------------- features
def test_elf_shape_layout_and_normalisation():
    rng = np.random.default_rng(0)
    imgs = [rng.integers(0, 256, (128, 48, 3), dtype=np.uint8) for _ in range(3)]
    ext = ELFStrips()
    F = ext.transform_batch(imgs)
    assert F.shape == (3, 2784) and ext.n_channels == 29
    H = F.reshape(3, 29, 6, 16)
    np.testing.assert_allclose(H.sum(-1), 1.0, atol=1e-5)  # each (channel, strip) histogram
    # one image alone gives the same vector as inside a batch (no leakage across the mosaic)
    np.testing.assert_allclose(ext.transform_image(imgs[1]), F[1], atol=1e-6)


def test_elf_colour_histogram_of_a_flat_image():
    img = np.zeros((128, 48, 3), np.uint8)
    img[..., 0] = 255  # pure red
    H = ELFStrips().transform_image(img).reshape(29, 6, 16)
    assert H[0, :, 15].min() == 1.0 and H[1, :, 0].min() == 1.0  # R in the top bin, G at 0
    # flat luminance: zero-mean filters respond 0 everywhere -> all mass in one bin
    assert np.allclose(H[8:].max(-1), 1.0)


def test_elf_strips_follow_the_rows():
    img = np.zeros((128, 48, 3), np.uint8)
    img[64:] = 255  # bottom half white
    H = ELFStrips(gabor_bank=(), schmid_bank=()).transform_image(img).reshape(8, 6, 16)
    assert H[0, 0, 0] == 1.0 and H[0, 5, 15] == 1.0


def test_elf_kernels_zero_mean_and_resize():
    for k in [gabor_kernel(0.3, 0, 4, 2), gabor_kernel(0.4, np.pi / 2, 8, 1), schmid_kernel(10, 4)]:
        assert abs(k.sum()) < 1e-5 and np.isclose(np.abs(k).sum(), 1, atol=1e-5)
    rng = np.random.default_rng(1)
    small = rng.integers(0, 256, (76, 30, 3), dtype=np.uint8)
    assert ELFStrips(size=(128, 64)).transform_image(small).shape == (2784,)
    for bad in [dict(normalize="bogus"), dict(filter_range="bogus")]:
        with pytest.raises(ValueError):
            ELFStrips(**bad).transform_image(small)


@pytest.mark.realdata
def test_real_viper(shared_data):
    if not (shared_data / "viper").is_dir():
        pytest.skip("no viper folder")
    ds = VIPeR(check_images=False).load(str(shared_data))
    assert len(ds) == 1264
    assert ds.items["identity"].nunique() == 632
    assert (ds.items.groupby("identity")["cam"].nunique() == 2).all()
    F = ELFStrips().extract(ds.subset(np.arange(0, 1264, 158)))
    assert F.shape == (8, 2784) and np.isfinite(F).all()

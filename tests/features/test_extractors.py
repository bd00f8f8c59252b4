"""Image extractors: shapes, normalisation, input checks."""


import numpy as np
import pytest

from keyframe_images import NAMES, rand_img
from rankbench.datasets.base import Dataset
from rankbench.errors import ConfigError
from rankbench.params import check_params
from rankbench.registry import datasets, features


@pytest.fixture(scope="module")
def synth():
    return datasets.build("synthetic_attributes", {"n_categories": 3, "n_per_category": 4}).load()


@pytest.mark.parametrize("name,dim", [("gist", 512), ("hog", 1764), ("lbp", 3776),
                                      ("gabor_energy", 384), ("lab_hist", 256)])
def test_extractor_shapes(synth, name, dim):
    X = features.build(name, {}).extract(synth)
    assert X.shape == (len(synth), dim) and np.isfinite(X).all()


def test_histograms_are_normalised(synth):
    H = features.build("lab_hist", {"bins": [2, 4, 4]}).extract(synth)
    np.testing.assert_allclose(H.sum(axis=1), 1.0)
    L = features.build("lbp", {"grid": 2, "power": 1.0}).extract(synth)
    np.testing.assert_allclose(L.reshape(len(synth), 4, 59).sum(axis=2), 1.0)


def test_lab_hist_per_channel_against_numpy_histograms():
    import cv2

    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, (16, 12, 3), dtype=np.uint8)
    H = features.build("lab_hist", {"bins": 10, "joint": False}).transform_image(img)
    lab = cv2.cvtColor(img, cv2.COLOR_RGB2LAB).reshape(-1, 3)
    # v * 10 // 256 puts v in bin k for 25.6 k <= v < 25.6 (k + 1): numpy's bins on [0, 256)
    ref = np.concatenate([np.histogram(lab[:, c], bins=10, range=(0, 256))[0] for c in range(3)]) / (3 * 16 * 12)
    np.testing.assert_allclose(H, ref)
    assert H.shape == (30,) and H.sum() == pytest.approx(1.0)


def test_lab_hist_refuses_grey():
    from rankbench.errors import DataError

    with pytest.raises(DataError, match="colour"):
        features.build("lab_hist", {}).transform_image(np.zeros((8, 8), np.uint8))


# --------------------------------------------------------------------------- the five keyframe extractors
DIMS = {"color_histogram": 72, "color_correlogram": 128, "color_moments": 9, "wavelet_texture": 9,
        "edge_histogram": 5}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("grid", [1, 2, 3, 5])
def test_any_size_grey_or_colour_deterministic(name, grid):
    e = features.build(name, {"grid": grid})
    for img in (rand_img(37, 61, seed=10), rand_img(9, 4, seed=11, channels=0), rand_img(1, 1, seed=12),
                rand_img(20, 20, seed=13, channels=4)):
        v = e.transform_image(img)
        assert v.dtype == np.float32 and v.shape == (DIMS[name] * grid * grid,) and np.isfinite(v).all()
        np.testing.assert_array_equal(v, features.build(name, {"grid": grid}).transform_image(img.copy()))


def test_extract_on_a_dataset_is_cacheable():
    import pandas as pd

    imgs = np.stack([rand_img(24, 32, seed=s) for s in range(5)])
    ds = Dataset(name="t", items=pd.DataFrame({"id": list("abcde")}), arrays={"images": imgs}, fingerprint="x")
    for name in NAMES:
        e = features.build(name, {"grid": 2})
        X = e.extract(ds)
        assert X.shape == (5, DIMS[name] * 4) and X.dtype == np.float32
        key = e.cache_key()
        assert key["extractor"] == name and key["params"]["grid"] == 2


@pytest.mark.parametrize("name, bad", [
    ("color_histogram", {"grid": 0}), ("color_histogram", {"space": "lab"}),
    ("color_histogram", {"bins": [8, 3]}), ("color_correlogram", {"distances": []}),
    ("color_correlogram", {"distances": [0, 1]}), ("color_moments", {"space": "xyz"}),
    ("wavelet_texture", {"levels": 0}), ("edge_histogram", {"threshold": -1.0}),
    ("edge_histogram", {"grid": "2"}),
])
def test_declared_parameter_constraints(name, bad):
    cls = features.get(name)
    with pytest.raises(ConfigError, match=f"features.{list(bad)[0]}: expected"):
        check_params(cls, bad, "features")
    check_params(cls, {}, "features")  # the defaults are valid


def test_init_only_stores_parameters():
    from sklearn.base import clone

    for name in NAMES:
        e = features.build(name, {"grid": 3})
        assert clone(e).get_params() == e.get_params()

"""Image extractors: shapes, normalisation, input checks."""


import numpy as np
import pytest

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

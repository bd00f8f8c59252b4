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


def test_lab_hist_refuses_grey():
    from rankbench.errors import DataError

    with pytest.raises(DataError, match="colour"):
        features.build("lab_hist", {}).transform_image(np.zeros((8, 8), np.uint8))

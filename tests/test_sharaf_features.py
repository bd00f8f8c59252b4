"""Sharaf et al. feature extractors (GIST, HoG, LBP, Gabor energy, LAB histogram) and real-data
checks: loaders on ../shared/datasets and our GIST against the GIST shipped in pubfig_data.mat."""

import numpy as np
import pytest

from rankbench.datasets.base import Dataset
from rankbench.features.gist import Gist, block_means, gabor_transfer
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


def test_gist_batch_equals_single_images(synth):
    g = Gist()
    imgs = [synth.image(i) for i in range(3)]
    np.testing.assert_allclose(g.transform_batch(imgs), np.stack([g.transform_image(im) for im in imgs]),
                               rtol=1e-5, atol=1e-7)


def test_gist_bank_and_pooling():
    G = gabor_transfer(64, (8, 8, 8, 8))
    assert G.shape == (32, 64, 64) and G.max() <= 1.0 and G[:, 0, 0].max() < 0.05  # (almost) no DC response
    x = np.arange(16.0).reshape(4, 4)
    np.testing.assert_allclose(block_means(x, 2), [[2.5, 4.5], [10.5, 12.5]])


def test_gist_responds_to_orientation():
    """A horizontal grating excites other filters than a vertical one."""
    yy, xx = np.mgrid[0:128, 0:128]
    h = (127 + 100 * np.sin(2 * np.pi * yy / 8)).astype(np.uint8)
    v = (127 + 100 * np.sin(2 * np.pi * xx / 8)).astype(np.uint8)
    gh, gv = Gist().transform_batch([h, v]).reshape(2, 32, 16).mean(axis=2)
    assert np.argmax(gh) != np.argmax(gv)


def test_lab_hist_refuses_grey():
    from rankbench.errors import DataError

    with pytest.raises(DataError, match="colour"):
        features.build("lab_hist", {}).transform_image(np.zeros((8, 8), np.uint8))


# ----------------------------------------------------------------------------- real data
@pytest.mark.realdata
def test_real_pubfig_and_osr_load(shared_data):
    if not (shared_data / "pubfig").is_dir() or not (shared_data / "osr").is_dir():
        pytest.skip("pubfig/ or osr/ missing from the shared datasets")
    pub = datasets.build("pubfig", {}).load(str(shared_data))
    assert len(pub) == 772 and pub.items.train.sum() == 241 and len(pub.info["attributes"]) == 11
    osr = datasets.build("osr", {}).load(str(shared_data))
    assert len(osr) == 2688 and osr.info["strength"].shape == (8, 6)


@pytest.mark.realdata
def test_real_gist_matches_pubfig_reference(shared_data):
    """Per-image correlation of our GIST with pubfig_data.mat feat[:, :512] (measured 0.998 mean
    over all 772 images with the defaults; LMgist's 256 px / 32 px-padding settings give 0.85)."""
    if not (shared_data / "pubfig").is_dir():
        pytest.skip("pubfig/ missing from the shared datasets")
    pub = datasets.build("pubfig", {}).load(str(shared_data))
    sub: Dataset = pub.subset(np.arange(0, len(pub), 16))  # 49 images keep the test quick
    ours = Gist().extract(sub)
    ref = sub.arrays["gist_ref"]
    r = np.array([np.corrcoef(a, b)[0, 1] for a, b in zip(ours, ref)])
    print(f"GIST per-image correlation: mean {r.mean():.4f}, min {r.min():.4f}")
    assert r.mean() > 0.99 and r.min() > 0.95

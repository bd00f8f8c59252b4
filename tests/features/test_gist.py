"""GIST: batches, filter bank, orientation response."""


import numpy as np
import pytest

from rankbench.features._imgutil import block_means
from rankbench.features.gist import Gist, gabor_transfer
from rankbench.registry import datasets


@pytest.fixture(scope="module")
def synth():
    return datasets.build("synthetic_attributes", {"n_categories": 3, "n_per_category": 4}).load()


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

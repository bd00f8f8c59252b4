"""The L*a*b* colour histogram (features/lab_hist.py) against numpy's histograms of OpenCV's L*a*b*."""

import cv2
import numpy as np
import pytest

from rankbench.errors import DataError
from rankbench.registry import features


def lab(img):
    return cv2.cvtColor(img, cv2.COLOR_RGB2LAB).reshape(-1, 3)


def test_joint_histogram_is_numpys_histogramdd():
    img = np.random.default_rng(0).integers(0, 256, size=(9, 7, 3), dtype=np.uint8)
    got = features.get("lab_hist")(bins=(2, 3, 4), joint=True).transform_image(img)
    want, _ = np.histogramdd(lab(img), bins=(2, 3, 4), range=[(0, 256)] * 3)
    np.testing.assert_allclose(got, want.ravel() / want.sum())


def test_per_channel_histograms_each_sum_to_a_third():
    img = np.random.default_rng(1).integers(0, 256, size=(6, 8, 3), dtype=np.uint8)
    got = features.get("lab_hist")(bins=10, joint=False).transform_image(img)
    L = lab(img)
    want = np.concatenate([np.histogram(L[:, c], bins=10, range=(0, 256))[0] for c in range(3)]) / (3 * len(L))
    assert got.shape == (30,)
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(got.reshape(3, 10).sum(axis=1), 1 / 3)


def test_resized_first_when_asked():
    img = np.random.default_rng(2).integers(0, 256, size=(20, 12, 3), dtype=np.uint8)
    small = cv2.resize(img, (4, 4), interpolation=cv2.INTER_AREA)
    got = features.get("lab_hist")(bins=(4, 8, 8), image_size=4).transform_image(img)
    want, _ = np.histogramdd(lab(small), bins=(4, 8, 8), range=[(0, 256)] * 3)
    np.testing.assert_allclose(got, want.ravel() / 16)


@pytest.mark.parametrize("shape", [(5, 5), (5, 5, 1)])
def test_grey_images_are_refused(shape):
    with pytest.raises(DataError, match="^lab_hist needs colour \\(RGB\\) images, got a grey image$"):
        features.get("lab_hist")().transform_image(np.zeros(shape, np.uint8))

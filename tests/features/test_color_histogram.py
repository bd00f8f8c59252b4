"""color_histogram against np.histogramdd and cv2.calcHist on tiny images."""

import numpy as np
import pytest

from keyframe_images import NAMES, cells, rand_img
from rankbench.registry import features


@pytest.mark.parametrize("grid", [1, 2, 3])
def test_color_histogram_rgb_matches_histogramdd(grid):
    img = rand_img(13, 11, seed=1)
    bins = (4, 3, 2)
    got = features.build("color_histogram", {"space": "rgb", "bins": bins, "grid": grid}).transform_image(img)
    want = []
    for sy, sx in cells(13, 11, grid):
        px = img[sy, sx].reshape(-1, 3).astype(float)
        h, _ = np.histogramdd(px, bins=bins, range=[(0, 256)] * 3)
        want.append(h.ravel() / len(px))
    np.testing.assert_allclose(got, np.concatenate(want), atol=1e-7)


def test_color_histogram_hsv_matches_cv2_calchist():
    import cv2

    img = rand_img(20, 17, seed=2)
    got = features.build("color_histogram", {"bins": (8, 3, 3)}).transform_image(img)
    hsv = cv2.cvtColor(img, cv2.COLOR_RGB2HSV_FULL)
    h = cv2.calcHist([hsv], [0, 1, 2], None, [8, 3, 3], [0, 256, 0, 256, 0, 256]).ravel()
    np.testing.assert_allclose(got, h / h.sum(), atol=1e-7)


def test_grey_image_falls_in_the_zero_saturation_bins():
    grey = rand_img(16, 16, seed=3, channels=0)
    H = features.build("color_histogram", {"bins": (8, 3, 3)}).transform_image(grey).reshape(8, 3, 3)
    assert H[0, 0].sum() == pytest.approx(1.0) and H[1:].sum() == 0 and H[0, 1:].sum() == 0
    # grey = the same image with R = G = B, for every colour extractor
    rgb = np.repeat(grey[:, :, None], 3, axis=2)
    for name in NAMES:
        e = features.build(name, {"grid": 2})
        np.testing.assert_array_equal(e.transform_image(grey), e.transform_image(rgb))

"""Uniform LBP histograms: per-cell counts of scikit-image's codes, counted cell by cell."""

import numpy as np
import pytest
from skimage.feature import local_binary_pattern

from rankbench.features.lbp import LBP


@pytest.mark.parametrize("method, n_codes", [("nri_uniform", 59), ("uniform", 10)])
def test_grid_histograms_equal_a_cell_by_cell_count(method, n_codes):
    img = np.random.default_rng(1).integers(0, 256, size=(48, 48), dtype=np.uint8)
    ours = LBP(image_size=48, P=8, R=1.0, method=method, grid=3, power=1.0).transform_image(img)
    codes = local_binary_pattern(img, 8, 1.0, method=method).astype(int)
    ref = []
    for cy in range(3):
        for cx in range(3):
            cell = codes[16 * cy:16 * (cy + 1), 16 * cx:16 * (cx + 1)]
            h = np.array([(cell == c).sum() for c in range(n_codes)], float)
            ref.append(h / h.sum())
    np.testing.assert_allclose(ours, np.concatenate(ref), atol=1e-12)
    sqrt = LBP(image_size=48, method=method, grid=3, power=0.5).transform_image(img)
    np.testing.assert_allclose(sqrt, np.sqrt(np.concatenate(ref)), atol=1e-12)



@pytest.mark.parametrize("level", [0, 1, 97, 200, 254, 255])
def test_a_flat_image_gives_the_flat_images_patterns_whatever_its_grey_level(level):
    """A 40 x 30 flat image resized to 64 is the 64 x 64 flat image: the same histograms as
    scikit-image's codes of that. Grey levels truncated after the resize (199.99999 -> 199) drew
    false patterns in 3 % of the pixels."""
    ours = LBP(image_size=64, grid=1, power=1.0).transform_image(np.full((40, 30, 3), level, np.uint8))
    codes = local_binary_pattern(np.full((64, 64), level, np.uint8), 8, 1.0, method="nri_uniform").astype(int)
    np.testing.assert_array_equal(ours, np.bincount(codes.ravel(), minlength=59) / codes.size)

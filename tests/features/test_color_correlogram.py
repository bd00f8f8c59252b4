"""color_correlogram against a brute-force loop over pixel pairs."""

import numpy as np
import pytest

from keyframe_images import cells, rand_img
from rankbench.features.color_correlogram import autocorrelogram
from rankbench.registry import features


def brute_correlogram(codes, n, distances, grid):
    h, w = codes.shape
    cell_of = {}
    for c, (sy, sx) in enumerate(cells(h, w, grid)):
        for y in range(sy.start, sy.stop):
            for x in range(sx.start, sx.stop):
                cell_of[y, x] = c
    out = np.zeros((grid * grid, len(distances), n))
    for j, k in enumerate(distances):
        match = np.zeros((grid * grid, n))
        total = np.zeros((grid * grid, n))
        for y in range(h):
            for x in range(w):
                c = codes[y, x]
                for y2 in range(h):
                    for x2 in range(w):
                        if max(abs(y2 - y), abs(x2 - x)) == k:
                            total[cell_of[y, x], c] += 1
                            match[cell_of[y, x], c] += codes[y2, x2] == c
        out[:, j] = np.divide(match, total, out=np.zeros_like(match), where=total > 0)
    return out


@pytest.mark.parametrize("grid", [1, 2])
def test_autocorrelogram_matches_brute_force(grid):
    codes = np.random.default_rng(4).integers(0, 3, size=(9, 7))
    codes[:3, :3] = 1  # a patch, so that some probabilities are large
    got = autocorrelogram(codes, 4, (1, 2, 3, 9), grid)  # colour 3 absent; distance 9 leaves no pair
    np.testing.assert_allclose(got, brute_correlogram(codes, 4, (1, 2, 3, 9), grid), atol=1e-12)
    assert got[:, :, 3].max() == 0 and got[:, 3].max() == 0


def test_color_correlogram_extractor_uses_the_histogram_colours():
    img = rand_img(12, 10, seed=5) // 128 * 255  # 8 pure colours
    e = features.build("color_correlogram", {"space": "rgb", "bins": (2, 2, 2), "distances": (1, 3), "grid": 2})
    codes = (img[..., 0] // 128 * 2 + img[..., 1] // 128) * 2 + img[..., 2] // 128
    np.testing.assert_allclose(e.transform_image(img), brute_correlogram(codes, 8, (1, 3), 2).ravel(), atol=1e-6)


def test_uniform_image_correlogram_is_one_for_its_colour():
    img = np.full((10, 10, 3), 200, np.uint8)
    v = features.build("color_correlogram", {"space": "rgb", "bins": (2, 2, 2)}).transform_image(img)
    assert v.reshape(4, 8)[:, 7].tolist() == [1, 1, 1, 1] and v.reshape(4, 8)[:, :7].max() == 0

"""wavelet_texture: an explicit Haar matrix and a hand-computed 4x4 example."""

import numpy as np
import pytest

from keyframe_images import cells, rand_img
from rankbench.features.wavelet_texture import haar_bands
from rankbench.registry import features


def test_haar_hand_computed_4x4():
    x = np.array([[1, 3, 0, 0],
                  [5, 7, 0, 4],
                  [2, 2, 8, 8],
                  [2, 2, 8, 8]], dtype=float)
    (H1, V1, D1), (H2, V2, D2) = haar_bands(x, 2)
    # top-left block 1 3 / 5 7: H = (1+3-5-7)/2 = -4, V = (1-3+5-7)/2 = -2, D = (1-3-5+7)/2 = 0
    np.testing.assert_allclose(H1, [[-4, -2], [0, 0]])
    np.testing.assert_allclose(V1, [[-2, -2], [0, 0]])
    np.testing.assert_allclose(D1, [[0, 2], [0, 0]])
    # level-1 approximation: [[8, 2], [4, 16]] -> H = (8+2-4-16)/2 = -5, V = (8-2+4-16)/2 = -3, D = 9
    np.testing.assert_allclose([H2[0, 0], V2[0, 0], D2[0, 0]], [-5, -3, 9])


def haar_matrix(n):
    H = np.zeros((n, n))
    for i in range(n // 2):
        H[i, 2 * i:2 * i + 2] = [1, 1]
        H[n // 2 + i, 2 * i:2 * i + 2] = [1, -1]
    return H / np.sqrt(2)


def test_haar_matches_the_separable_matrix_transform():
    x = np.random.default_rng(7).random((16, 8))
    ll = x
    for H, V, D in haar_bands(x, 3):
        h, w = ll.shape
        Y = haar_matrix(h) @ ll @ haar_matrix(w).T
        np.testing.assert_allclose(H, Y[h // 2:, :w // 2], atol=1e-12)  # high along y, low along x
        np.testing.assert_allclose(V, Y[:h // 2, w // 2:], atol=1e-12)
        np.testing.assert_allclose(D, Y[h // 2:, w // 2:], atol=1e-12)
        ll = Y[:h // 2, :w // 2]


def test_wavelet_texture_energies_per_cell():
    grey = rand_img(32, 24, seed=8, channels=0)
    got = features.build("wavelet_texture", {"levels": 2, "grid": 2}).transform_image(grey).reshape(4, 2, 3)
    bands = haar_bands(grey / 255.0, 2)
    for lev, trio in enumerate(bands):
        for b, band in enumerate(trio):
            for c, (sy, sx) in enumerate(cells(*band.shape, 2)):
                assert got[c, lev, b] == pytest.approx(np.sqrt(np.mean(band[sy, sx] ** 2)), rel=1e-5)


def test_wavelet_texture_sees_orientation():
    yy, xx = np.mgrid[0:64, 0:64]
    stripes_h = ((yy // 1) % 2 * 255).astype(np.uint8)  # alternate rows: horizontal structure
    v = features.build("wavelet_texture", {"levels": 1}).transform_image(stripes_h)
    assert v[0] > 0.4 and v[1] == 0 and v[2] == 0

"""The one pixel histogram (rankbench/features/_histogram.py) against independent oracles:
np.histogram / cv2.calcHist per cell, rational arithmetic for the bins, explicit cell cuts."""

from fractions import Fraction

import numpy as np
import pytest

from rankbench.errors import DataError
from rankbench.features._histogram import (
    as_rgb,
    bin_index,
    cell_index,
    colour_histogram,
    histograms,
    joint_code,
)


def test_integer_bins_are_the_exact_floor_for_every_8_bit_value():
    v = np.arange(256)
    for hi in (180, 256):
        for bins in (1, 7, 16, 32, 108, 180, 216, 256):
            vv = v[v < hi]
            want = [min(int(Fraction(int(x) * bins, hi)), bins - 1) for x in vv]  # floor of the exact ratio
            assert bin_index(vv.astype(np.uint8), bins, 0, hi).tolist() == want, (hi, bins)


def test_real_values_are_binned_between_lo_and_hi_and_clipped():
    x = np.array([-3.0, 0.0, 0.49, 0.5, 2.6, 4.99, 5.0, 40.0], np.float32)
    assert bin_index(x, 10, 0.0, 5.0).tolist() == [0, 0, 0, 1, 5, 9, 9, 9]
    assert bin_index(x, 4, -5.0, 5.0).tolist() == [0, 2, 2, 2, 3, 3, 3, 3]
    kept = x.copy()
    bin_index(kept, 10, 0.0, 5.0)
    np.testing.assert_array_equal(kept, x)  # not overwritten unless asked


@pytest.mark.parametrize("length, n", [(128, 6), (10, 4), (7, 3), (5, 2), (3, 5)])
def test_cell_cuts(length, n):
    i = np.arange(length)
    floor = [int(np.floor(k * length / n)) for k in range(n + 1)]
    ceil = [-(-k * length // n) for k in range(n + 1)]
    rnd = [int(np.round(k * length / n)) for k in range(n + 1)]   # half to even, as np.round
    for edges, cuts in (("floor", floor), ("ceil", ceil), ("round", rnd)):
        want = np.array([max(c for c in range(n) if cuts[c] <= p) for p in i])
        np.testing.assert_array_equal(cell_index(length, n, edges), want, err_msg=edges)


def test_histograms_count_every_pixel_in_its_cell_and_normalise_as_asked():
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 5, (2, 3, 6, 4))
    cells = np.repeat(np.arange(3), 2)[:, None] * np.ones(4, int)  # three horizontal strips of 2 rows
    raw = histograms(codes, 5, cells, 3, "none")
    for n in range(2):
        for c in range(3):
            for s in range(3):
                want = np.bincount(codes[n, c, 2 * s:2 * s + 2].ravel(), minlength=5)
                np.testing.assert_array_equal(raw[n, c, s], want)
    np.testing.assert_allclose(histograms(codes, 5, cells, 3, "histogram").sum(axis=3), 1.0)
    np.testing.assert_allclose(histograms(codes, 5, cells, 3, "channel").sum(axis=(2, 3)), 1.0)
    np.testing.assert_allclose(histograms(codes, 5, cells, 3, "image").sum(axis=(1, 2, 3)), 1.0)


def test_an_empty_histogram_stays_zero():
    codes = np.zeros((1, 1, 2, 2), int)
    cells = np.zeros((2, 2), int)  # nothing in cell 1
    h = histograms(codes, 3, cells, 2)
    np.testing.assert_array_equal(h[0, 0], [[1, 0, 0], [0, 0, 0]])


def test_per_channel_hsv_histogram_in_strips_matches_cv2_calchist():
    import cv2

    img = np.random.default_rng(1).integers(0, 256, (30, 11, 3), dtype=np.uint8)
    got = colour_histogram(img, "hsv", 9, cells=(3, 1), edges="round")
    hsv = cv2.cvtColor(img, cv2.COLOR_RGB2HSV)
    want = []
    for c, hi in enumerate((180, 256, 256)):
        for s in range(3):
            h = cv2.calcHist([np.ascontiguousarray(hsv[10 * s:10 * s + 10])], [c], None, [9], [0, hi]).ravel()
            want.append(h / h.sum())
    np.testing.assert_allclose(got, np.concatenate(want), atol=1e-15)


def test_joint_histogram_on_a_grid_matches_histogramdd():
    img = np.random.default_rng(2).integers(0, 256, (12, 9, 3), dtype=np.uint8)
    got = colour_histogram(img, "rgb", (2, 3, 4), joint=True, cells=(2, 3)).reshape(6, 24)
    for k, (ys, xs) in enumerate((slice(6 * r, 6 * r + 6), slice(3 * c, 3 * c + 3)) for r in range(2) for c in range(3)):
        px = img[ys, xs].reshape(-1, 3)
        h, _ = np.histogramdd(px, bins=(2, 3, 4), range=[(0, 256)] * 3)
        np.testing.assert_allclose(got[k], h.ravel() / len(px), atol=1e-15)


def test_unequal_per_channel_bins_keep_their_own_sizes():
    img = np.random.default_rng(3).integers(0, 256, (8, 8, 3), dtype=np.uint8)
    got = colour_histogram(img, "rgb", (2, 5, 3), normalize="image")
    want = np.concatenate([np.histogram(img[..., c], bins=b, range=(0, 256))[0] for c, b in enumerate((2, 5, 3))])
    np.testing.assert_allclose(got, want / (3 * 64), atol=1e-15)


def test_joint_code_orders_channels_as_documented():
    q = np.array([[1, 2, 3]])
    code, n = joint_code(q, (2, 3, 4))
    assert code.tolist() == [(1 * 3 + 2) * 4 + 3] and n == 24


def test_grey_images_are_replicated_or_refused():
    grey = np.arange(12, dtype=np.uint8).reshape(3, 4)
    np.testing.assert_array_equal(as_rgb(grey), np.stack([grey] * 3, axis=-1))
    np.testing.assert_array_equal(as_rgb(np.dstack([grey] * 4)), np.stack([grey] * 3, axis=-1))
    np.testing.assert_array_equal(as_rgb(grey.astype(float) + 0.4), np.stack([grey] * 3, axis=-1))
    with pytest.raises(DataError, match="hsv_hist needs colour"):
        as_rgb(grey, grey="refuse", what="hsv_hist")

"""The small image helpers of the extractors (features/_imgutil.py) against PIL and brute force."""

import numpy as np
import pytest
from PIL import Image

from rankbench.features._histogram import cell_index
from rankbench.features._imgutil import block_means, enlarge, grid_edges, prepared, resize, to_grey


def test_to_grey_is_itu_601_luma_as_pil_computes_it():
    rgb = np.random.default_rng(0).integers(0, 256, size=(6, 5, 3), dtype=np.uint8)
    grey = to_grey(rgb)
    assert grey.dtype == np.float64 and grey.shape == (6, 5)
    pil = np.asarray(Image.fromarray(rgb).convert("L"), dtype=float)     # rounded to integers
    assert np.abs(grey - pil).max() <= 0.5 + 1e-9
    rgba = np.dstack([rgb, np.full((6, 5), 7, np.uint8)])
    np.testing.assert_array_equal(to_grey(rgba), grey)                     # a fourth channel ignored
    np.testing.assert_array_equal(to_grey(rgb[..., 0]), rgb[..., 0].astype(float))


def test_resize_keeps_an_image_of_the_size_and_makes_a_square():
    img = np.zeros((4, 4, 3), np.uint8)
    assert resize(img, None) is img and resize(img, 4) is img
    assert resize(np.zeros((9, 5), np.uint8), 3).shape == (3, 3)
    block = np.kron(np.arange(4, dtype=np.uint8).reshape(2, 2) * 10, np.ones((3, 3), np.uint8))
    assert resize(block, 2).tolist() == [[0, 10], [20, 30]]                # area interpolation: block means


@pytest.mark.parametrize("shape, min_side", [((3, 7), 8), ((5, 5), 5), ((1, 2), 3), ((10, 4), 9)])
def test_enlarge_by_the_smallest_integer_factor(shape, min_side):
    img = np.arange(np.prod(shape)).reshape(shape)
    out = enlarge(img, min_side)
    f = next(f for f in range(1, 100) if min(shape) * f >= min_side)
    assert out.shape == (shape[0] * f, shape[1] * f)
    for i, j in np.ndindex(out.shape):
        assert out[i, j] == img[i // f, j // f]


def test_prepared_resizes_then_enlarges():
    img = np.random.default_rng(1).integers(0, 256, size=(12, 8, 3), dtype=np.uint8)
    out = prepared(img, 2, 5)
    np.testing.assert_array_equal(out, enlarge(resize(img, 2), 5))
    assert out.shape == (6, 6, 3)
    assert prepared(img, None, 3) is not None and prepared(img, None, 3).shape == (12, 8, 3)


@pytest.mark.parametrize("length, cells", [(10, 3), (7, 7), (5, 1), (11, 4), (3, 5)])
def test_grid_edges_cut_where_cell_index_puts_each_position(length, cells):
    edges = grid_edges(length, cells)
    assert edges[0] == 0 and edges[-1] == length and len(edges) == cells + 1
    want = [max(k for k in range(cells) if edges[k] <= i) for i in range(length)]
    assert cell_index(length, cells).tolist() == want
    assert edges.tolist() == [int(np.floor(k * length / cells)) for k in range(cells + 1)]


@pytest.mark.parametrize("shape, w", [((9, 7), 3), ((8, 8), 2), ((2, 5, 6), 2), ((5, 5), 1)])
def test_block_means_is_the_mean_of_each_block(shape, w):
    x = np.random.default_rng(2).normal(size=shape)
    H, W = shape[-2:]
    ry = [int(np.fix(k * H / w)) for k in range(w + 1)]
    rx = [int(np.fix(k * W / w)) for k in range(w + 1)]
    want = np.empty(shape[:-2] + (w, w))
    for a in range(w):
        for b in range(w):
            want[..., a, b] = x[..., ry[a]:ry[a + 1], rx[b]:rx[b + 1]].mean(axis=(-2, -1))
    np.testing.assert_allclose(block_means(x, w), want, rtol=1e-12)

"""edge_histogram against a per-block MPEG-7 edge loop."""

import numpy as np
import pytest

from keyframe_images import cells, rand_img
from rankbench.registry import features


def direct_ehd(grey, block, threshold, grid):
    ny, nx = grey.shape[0] // block, grey.shape[1] // block
    s = block // 2
    types = np.zeros((ny, nx), int)
    r2 = np.sqrt(2)
    for by in range(ny):
        for bx in range(nx):
            def m(i, j):
                y0, x0 = by * block + i * s, bx * block + j * s
                return grey[y0:y0 + s, x0:x0 + s].mean()
            a0, a1, a2, a3 = m(0, 0), m(0, 1), m(1, 0), m(1, 1)
            resp = [abs(a0 - a1 + a2 - a3), abs(a0 + a1 - a2 - a3), abs(r2 * a0 - r2 * a3),
                    abs(r2 * a1 - r2 * a2), abs(2 * a0 - 2 * a1 - 2 * a2 + 2 * a3)]
            if max(resp) >= threshold:
                types[by, bx] = int(np.argmax(resp)) + 1
    out = []
    for sy, sx in cells(ny, nx, grid):
        t = types[sy, sx].ravel()
        out.append([np.sum(t == k) / t.size for k in range(1, 6)])
    return np.array(out).ravel()


@pytest.mark.parametrize("grid", [1, 2, 3])
def test_edge_histogram_matches_direct_per_block_computation(grid):
    img = rand_img(40, 52, seed=9, channels=0)
    img[:, 26:] = img[:, 26:] // 8  # a dark half: strong vertical edges along the border
    e = features.build("edge_histogram", {"grid": grid, "n_blocks": 120, "threshold": 20.0})
    block = int(np.sqrt(40 * 52 / 120) / 2) * 2  # = 4
    np.testing.assert_allclose(e.transform_image(img), direct_ehd(img.astype(float), block, 20.0, grid), atol=1e-6)


def test_edge_types_of_pure_patterns():
    up = np.zeros((16, 16), np.uint8)
    up[:, 8:] = 255
    e = features.build("edge_histogram", {"grid": 1, "n_blocks": 4})  # 8x8 blocks: 4 blocks
    np.testing.assert_allclose(e.transform_image(up), [0, 0, 0, 0, 0])  # edge on block borders only
    shifted = np.zeros((16, 16), np.uint8)
    shifted[:, 4:12] = 255  # each block's left/right halves differ: vertical edges
    np.testing.assert_allclose(e.transform_image(shifted), [1, 0, 0, 0, 0])
    np.testing.assert_allclose(e.transform_image(shifted.T), [0, 1, 0, 0, 0])

"""Helpers of the low-level keyframe extractors' tests: random images and the documented grid cells,
written out independently of rankbench (floor(linspace) cuts, row-major)."""

import itertools

import numpy as np

#: the five low-level keyframe extractors (Merler et al.), one module each
NAMES = ["color_histogram", "color_correlogram", "color_moments", "wavelet_texture", "edge_histogram"]


def rand_img(h, w, seed=0, channels=3):
    shape = (h, w, channels) if channels else (h, w)
    return np.random.default_rng(seed).integers(0, 256, size=shape, dtype=np.uint8)


def edges(length, cells):
    """The documented cell boundaries, written out independently: floor(linspace)."""
    return [int(np.floor(i * length / cells)) for i in range(cells + 1)]


def cells(h, w, grid):
    ey, ex = edges(h, grid), edges(w, grid)
    for i, j in itertools.product(range(grid), range(grid)):
        yield slice(ey[i], ey[i + 1]), slice(ex[j], ex[j + 1])

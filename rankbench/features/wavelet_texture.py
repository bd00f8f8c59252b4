"""Haar wavelet texture per grid cell: one of Merler et al.'s low-level keyframe features.

Conventions shared with the other four (grid, any image, grey images, float32):
:func:`rankbench.features._imgutil.prepared`.
"""

from __future__ import annotations

from typing import Annotated

import numpy as np
from pydantic import Field

from ..params import PositiveInt
from ..registry import features
from ._imgutil import Grid, block_means, prepared, to_grey
from .base import Extractor


def haar_bands(x: np.ndarray, levels: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Detail sub-bands of an orthonormal multi-level 2-D Haar transform of ``x`` (H, W).

    Per level, on the current approximation cropped to even sides, with a, b / c, d the top-left,
    top-right / bottom-left, bottom-right pixel of each 2x2 block: approximation (a+b+c+d)/2,
    horizontal detail (a+b-c-d)/2 (row differences: horizontal edges), vertical detail
    (a-b+c-d)/2 (column differences) and diagonal detail (a-b-c+d)/2. Returns [(H, V, D)] from the
    finest level to the coarsest.
    """
    out = []
    ll = np.asarray(x, dtype=np.float64)
    for _ in range(int(levels)):
        h, w = ll.shape[0] // 2 * 2, ll.shape[1] // 2 * 2
        a, b = ll[0:h:2, 0:w:2], ll[0:h:2, 1:w:2]
        c, d = ll[1:h:2, 0:w:2], ll[1:h:2, 1:w:2]
        out.append(((a + b - c - d) / 2, (a - b + c - d) / 2, (a - b - c + d) / 2))
        ll = (a + b + c + d) / 2
    return out


@features.register("wavelet_texture")
class WaveletTexture(Extractor):
    """Haar wavelet texture: energy of each detail sub-band of a multi-level 2-D Haar transform, per cell.

    The grey image (luma / 255, in [0, 1]) is decomposed by the orthonormal Haar transform of
    :func:`haar_bands` (numpy only); the energy of a sub-band in a cell is the root mean square of
    its coefficients there (the square root keeps levels on a comparable scale). Cells are cut on
    each sub-band's own coefficient grid. Output ``grid**2 * levels * 3`` dims ordered cell, level
    (finest first), band (horizontal, vertical, diagonal): 9, 36, 81, 225 for 3 levels.

    Parameters
    ----------
    levels : int
        Decomposition levels (default 3: 9 sub-bands).
    grid : int
    image_size : int, optional
    """

    def __init__(self, levels: Annotated[int, Field(ge=1, le=8)] = 3, grid: Grid = 1,
                 image_size: PositiveInt | None = None):
        self.levels = levels
        self.grid = grid
        self.image_size = image_size

    def transform_image(self, img: np.ndarray) -> np.ndarray:
        g, L = int(self.grid), int(self.levels)
        grey = to_grey(prepared(img, self.image_size, g * 2 ** L)) / 255.0
        energy = [np.sqrt(block_means(np.stack(bands) ** 2, g)) for bands in haar_bands(grey, L)]
        return np.stack(energy).transpose(2, 3, 0, 1).ravel().astype(np.float32)  # (g, g, L, 3)

"""Colour auto-correlogram per grid cell: one of Merler et al.'s low-level keyframe features.

Conventions shared with the other four (grid, any image, grey images, float32):
:func:`rankbench.features._imgutil.prepared`; the colour codes are
:mod:`rankbench.features._histogram`'s, as ``color_histogram``'s.
"""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from ..params import PositiveInt
from ..registry import features
from ._histogram import Bins3, cell_map, keyframe_colour_codes
from ._imgutil import Grid
from .base import Extractor


def autocorrelogram(codes: np.ndarray, n_codes: int, distances, grid: int = 1) -> np.ndarray:
    """Colour auto-correlogram (Huang et al., CVPR 1997) of integer colour ``codes`` (H, W).

    ``out[cell, j, c]`` = P(p2 has colour c | p1 has colour c, p1 in the cell, p2 in the image at
    chessboard distance ``distances[j]`` from p1): matching pairs over all pairs whose p2 falls
    inside the image (so borders are not counted as mismatches); 0 where the cell has no pixel of
    colour c. Each unordered pair is compared once and credited to both ends.

    Returns
    -------
    ndarray, shape (grid * grid, len(distances), n_codes)
    """
    h, w = codes.shape
    codes = np.ascontiguousarray(codes, dtype=np.uint8 if n_codes <= 256 else np.int32)
    key = (cell_map(h, w, grid, grid) * n_codes + codes).ravel()
    size = grid * grid * n_codes
    out = np.zeros((len(distances), size))
    for j, k in enumerate(int(d) for d in distances):
        match = np.zeros((h, w), np.int16 if 8 * k < 2 ** 15 else np.int32)
        # half of the ring max(|dy|, |dx|) = k: the other half is the same pairs seen from p2
        ring = [(k, dx) for dx in range(-k, k + 1)] + [(dy, k) for dy in range(-k + 1, k)]
        for dy, dx in ring:
            y0, y1, x0, x1 = max(0, -dy), h - max(0, dy), max(0, -dx), w - max(0, dx)
            if y0 >= y1 or x0 >= x1:
                continue
            p1 = (slice(y0, y1), slice(x0, x1))
            p2 = (slice(y0 + dy, y1 + dy), slice(x0 + dx, x1 + dx))
            eq = codes[p1] == codes[p2]
            match[p1] += eq
            match[p2] += eq
        m = np.bincount(key, weights=match.ravel(), minlength=size)
        v = np.bincount(key, weights=ring_sizes(h, w, k).ravel(), minlength=size)
        out[j] = np.divide(m, v, out=np.zeros(size), where=v > 0)
    return out.reshape(len(out), grid * grid, n_codes).transpose(1, 0, 2)


def ring_sizes(h: int, w: int, k: int) -> np.ndarray:
    """(H, W) number of pixels of the image at chessboard distance exactly k from each pixel: the
    (2k+1)-square minus the (2k-1)-square, each clipped to the image (rows x columns, separable)."""

    def span(n, r):  # pixels within r of each position along a side of length n
        i = np.arange(n)
        return np.minimum(i + r, n - 1) - np.maximum(i - r, 0) + 1

    return np.outer(span(h, k), span(w, k)) - np.outer(span(h, k - 1), span(w, k - 1))


@features.register("color_correlogram")
class ColorCorrelogram(Extractor):
    """Colour auto-correlogram (Huang, Kumar, Mitra, Zhu & Zabih, CVPR 1997) per grid cell.

    For each cell, distance k and quantised colour c: the probability that a pixel at chessboard
    distance k from a pixel of colour c in the cell also has colour c (see :func:`autocorrelogram`;
    the neighbour may lie outside the cell but not outside the image).

    Parameters
    ----------
    space : "hsv" or "rgb"
    bins : 3 ints
        Colour quantisation as in ``color_histogram``; default 8 x 2 x 2 = 32 colours, so that the
        5x5 grid stays at 3200 dims.
    distances : list of int
        Chessboard distances k in pixels (default 1, 3, 5, 7, Huang et al.'s set).
    grid : int
        Cells per side; output ``grid**2 * len(distances) * prod(bins)`` dims, ordered cell,
        distance, colour.
    image_size : int, optional
        Resize to a square first; distances are in pixels of the (resized) image.
    """

    def __init__(self, space: Literal["hsv", "rgb"] = "hsv", bins: Bins3 = (8, 2, 2),
                 distances: Annotated[tuple[PositiveInt, ...], Field(min_length=1)] = (1, 3, 5, 7),
                 grid: Grid = 1, image_size: PositiveInt | None = None):
        self.space = space
        self.bins = bins
        self.distances = distances
        self.grid = grid
        self.image_size = image_size

    def transform_image(self, img: np.ndarray) -> np.ndarray:
        g = int(self.grid)
        codes, n = keyframe_colour_codes(img, self.image_size, g, self.space, self.bins)
        return autocorrelogram(codes, n, self.distances, g).ravel().astype(np.float32)

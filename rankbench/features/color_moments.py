"""Grid colour moments (Stricker & Orengo 1995): one of Merler et al.'s low-level keyframe features.

Conventions shared with the other four (grid, any image, grey images, float32):
:func:`rankbench.features._imgutil.prepared`; colour conversions are
:mod:`rankbench.features._histogram`'s.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from ..params import PositiveInt
from ..registry import features
from ._histogram import KEYFRAME_SPACES, as_rgb, cell_index, convert
from ._imgutil import Grid, block_means, prepared
from .base import Extractor


def grid_moments(x: np.ndarray, grid: int) -> np.ndarray:
    """Mean, standard deviation and cube root of the third central moment of each channel of
    ``x`` (C, H, W) in each cell (Stricker & Orengo 1995) -> (grid, grid, C, 3).

    Deviations are taken from each cell's own mean (two passes), so a constant cell gives exactly
    0 for both higher moments.
    """
    _, h, w = x.shape
    mean = block_means(x, grid)  # (C, g, g)
    dev = x - mean[:, cell_index(h, grid)][:, :, cell_index(w, grid)]
    std = np.sqrt(block_means(dev * dev, grid))
    third = np.cbrt(block_means(dev * dev * dev, grid))
    return np.stack([mean, std, third], axis=-1).transpose(1, 2, 0, 3)


@features.register("color_moments")
class ColorMoments(Extractor):
    """Grid colour moments (Stricker & Orengo 1995): mean, std and third moment per channel per cell.

    Channels are OpenCV's 8-bit conversions divided by 255 (so in [0, 1]). The third moment is
    Stricker & Orengo's ``s = (E[(x - mean)^3])^(1/3)`` (cube root of the third central moment,
    in the units of the mean), not the standardised skewness; the std is the population one
    (ddof = 0). Output ``grid**2 * 3 * 3`` dims ordered cell, channel, (mean, std, third): 9, 36,
    81, 225 (the 5x5 L*a*b* layout of IBM's TRECVID systems; MULAN scene's 294-d feature is the 7x7
    L*u*v* mean / variance variant).

    Parameters
    ----------
    space : "lab", "luv", "hsv", "rgb" or "ycrcb"
        Hue is circular, so moments in "hsv" are only approximate near red.
    grid : int
    image_size : int, optional
    """

    def __init__(self, space: Literal["lab", "luv", "hsv", "rgb", "ycrcb"] = "lab", grid: Grid = 1,
                 image_size: PositiveInt | None = None):
        self.space = space
        self.grid = grid
        self.image_size = image_size

    def transform_image(self, img: np.ndarray) -> np.ndarray:
        g = int(self.grid)
        rgb = as_rgb(prepared(img, self.image_size, g))
        x = convert(rgb, KEYFRAME_SPACES[self.space]).transpose(2, 0, 1).astype(np.float64) / 255.0
        return grid_moments(x, g).ravel().astype(np.float32)

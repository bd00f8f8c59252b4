"""Joint colour histogram per grid cell: one of Merler et al.'s low-level keyframe features.

Conventions shared with the other four (grid, any image, grey images, float32):
:func:`rankbench.features._imgutil.prepared`; the histogram is :mod:`rankbench.features._histogram`'s.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from ..params import PositiveInt
from ..registry import features
from ._histogram import Bins3, grid_histogram, keyframe_colour_codes
from ._imgutil import Grid
from .base import Extractor


@features.register("color_histogram")
class ColorHistogram(Extractor):
    """Joint colour histogram (HSV or RGB, uniform bins per channel) per grid cell, each summing to 1.

    Parameters
    ----------
    space : "hsv" or "rgb"
        HSV is OpenCV's 8-bit conversion with hue over 0..255 (``COLOR_RGB2HSV_FULL``).
    bins : 3 ints
        Bins per channel; a channel value v falls in bin ``v * b // 256`` (as ``cv2.calcHist`` with
        range [0, 256)). Default 8 hues x 3 saturations x 3 values = 72 colours.
    grid : int
        Cells per side (1 = global); output ``grid**2 * prod(bins)`` dims (72, 288, 648, 1800).
    image_size : int, optional
        Resize to a square of this side first (None: as given).

    Grey images fall in the zero-saturation bins of hue 0 (HSV) or on the grey diagonal (RGB).
    """

    def __init__(self, space: Literal["hsv", "rgb"] = "hsv", bins: Bins3 = (8, 3, 3), grid: Grid = 1,
                 image_size: PositiveInt | None = None):
        self.space = space
        self.bins = bins
        self.grid = grid
        self.image_size = image_size

    def transform_image(self, img: np.ndarray) -> np.ndarray:
        g = int(self.grid)
        codes, n = keyframe_colour_codes(img, self.image_size, g, self.space, self.bins)
        return grid_histogram(codes, n, g).astype(np.float32)

"""Colour histograms in horizontal strips: a simple appearance feature for re-identification.

The colour part of the ELF-style features of Gray & Tao (ECCV 2008) and Prosser et al. (BMVC
2010): the image is cut into ``n_strips`` equal horizontal strips and each colour channel is
histogrammed with ``bins`` bins inside each strip; each histogram is L1-normalised, so the feature
is a concatenation of distributions (which the Bhattacharyya ranker expects). The histograms are
:mod:`rankbench.features._histogram`'s: OpenCV's 8-bit conversions (HSV hue over 0..179), strips
cut at the rounded multiples of H / n_strips, grey images replicated to R = G = B.
"""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from ..params import PositiveInt
from ..registry import features
from ._histogram import as_rgb, colour_histogram
from ._imgutil import resize
from .base import Extractor


@features.register("color_strips")
class ColorStrips(Extractor):
    """Per-strip colour histograms (RGB, HSV, YCbCr), each L1-normalised."""

    def __init__(self, spaces: Annotated[tuple[Literal["rgb", "hsv", "ycrcb"], ...], Field(min_length=1)] = ("rgb", "hsv", "ycrcb"),
                 n_strips: PositiveInt = 6, bins: Annotated[int, Field(ge=2, le=256)] = 16,
                 size: tuple[PositiveInt, PositiveInt] | None = (128, 48)):
        self.spaces = spaces
        self.n_strips = n_strips
        self.bins = bins
        self.size = size

    def transform_image(self, img: np.ndarray) -> np.ndarray:
        img = resize(as_rgb(img), self.size)
        return np.concatenate([colour_histogram(img, space, int(self.bins), cells=(int(self.n_strips), 1),
                                                edges="round") for space in self.spaces])

"""CIE L*a*b* colour histogram."""

from __future__ import annotations

from typing import Annotated

import numpy as np
from pydantic import Field

from ..params import PositiveInt
from ..registry import features
from ._histogram import as_rgb, colour_histogram
from ._imgutil import resize
from .base import Extractor

Bins = Annotated[int, Field(ge=1, le=256)]


@features.register("lab_hist")
class LabHistogram(Extractor):
    """L*a*b* colour histogram (``bins`` per channel), joint or one per channel, normalised to sum 1.

    Colour is converted with OpenCV's 8-bit L*a*b* (each channel scaled to 0..255); grey images
    (a plug-in's 2-D arrays) are refused because they have no colour; a grey image file is read as
    RGB with R = G = B (:func:`~rankbench.datasets.base.read_image`), all of it at a = b = 128.
    ``joint``: one histogram over (L, a, b) cells (``b_L * b_a * b_b`` dims); otherwise the three
    channels' histograms side by side (``b_L + b_a + b_b`` dims, each channel's part summing to
    1/3), e.g. 3 x 10 = 30 dims, the size of the colour part of the PubFig relative-attributes release.
    """

    def __init__(self, bins: Bins | tuple[Bins, Bins, Bins] = (4, 8, 8), joint: bool = True,
                 image_size: PositiveInt | None = None):
        self.bins = bins
        self.joint = joint
        self.image_size = image_size

    def transform_image(self, img: np.ndarray) -> np.ndarray:
        rgb = as_rgb(img, grey="refuse", what="lab_hist")
        return colour_histogram(resize(rgb, self.image_size), "lab", self.bins, joint=bool(self.joint),
                                normalize="histogram" if self.joint else "image")

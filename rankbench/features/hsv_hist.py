"""HSV colour histogram: ``bins`` bins per channel, each channel's histogram L1-normalised.

The feature of Yan, Zhang, Yang & Hauptmann's PKLR experiments (CVPR 2004, Section 4.1): "a
histogram of HSV color spaces ... each color channel has a fixed number of 32 bins", 96 values.
Colour is converted with OpenCV's 8-bit HSV (hue 0..179, saturation and value 0..255); the bin of a
value v of a channel with range [0, hi) is floor(v * bins / hi), exactly as ``cv2.calcHist`` with
ranges [0, 180] and [0, 256] bins it (the tests check this; the histograms are
:mod:`rankbench.features._histogram`'s). The three histograms are concatenated in the order H, S,
V, each dividing by the pixel count, so the feature does not depend on the crop size. The paper's
silhouettes had their background removed; crops here include it.
"""

from __future__ import annotations

from typing import Annotated

import numpy as np
from pydantic import Field

from ..registry import features
from ._histogram import as_rgb, colour_histogram
from .base import Extractor


@features.register("hsv_hist")
class HSVHistogram(Extractor):
    """HSV colour histogram, 32 bins per channel (96-d), each channel L1-normalised (Yan et al.).

    Grey images (a plug-in's 2-D arrays) are refused; a grey image file is read as RGB with
    R = G = B (:func:`~rankbench.datasets.base.read_image`), all of it at hue 0 and saturation 0.
    """

    def __init__(self, bins: Annotated[int, Field(ge=2, le=180)] = 32):
        self.bins = bins

    def transform_image(self, img: np.ndarray) -> np.ndarray:
        return colour_histogram(as_rgb(img, grey="refuse", what="hsv_hist"), "hsv", int(self.bins))

"""HSV colour histogram: ``bins`` bins per channel, each channel's histogram L1-normalised.

The feature of Yan, Zhang, Yang & Hauptmann's PKLR experiments (CVPR 2004, Section 4.1): "a
histogram of HSV color spaces ... each color channel has a fixed number of 32 bins", 96 values.
Colour is converted with OpenCV's 8-bit HSV (hue 0..179, saturation and value 0..255); the bin of a
value v of a channel with range [0, hi) is floor(v * bins / hi), exactly as ``cv2.calcHist`` with
ranges [0, 180] and [0, 256] bins it (the tests check this). The three histograms are concatenated
in the order H, S, V, each dividing by the pixel count, so the feature does not depend on the crop
size. The paper's silhouettes had their background removed; crops here include it.
"""

from __future__ import annotations

from typing import Annotated

import numpy as np
from pydantic import Field

from ..errors import DataError
from ..registry import features
from .base import Extractor

_RANGES = (180, 256, 256)  # OpenCV 8-bit HSV: H in 0..179, S and V in 0..255


def hsv_histogram(img: np.ndarray, bins: int = 32) -> np.ndarray:
    """(3 * bins,) per-channel L1-normalised H, S, V histograms of an RGB uint8 image."""
    import cv2

    hsv = cv2.cvtColor(np.ascontiguousarray(img[..., :3], dtype=np.uint8), cv2.COLOR_RGB2HSV)
    pix = hsv.reshape(-1, 3).astype(np.int64)
    out = []
    for c, hi in enumerate(_RANGES):
        h = np.bincount(pix[:, c] * bins // hi, minlength=bins).astype(np.float64)
        out.append(h / max(h.sum(), 1.0))
    return np.concatenate(out)


@features.register("hsv_hist")
class HSVHistogram(Extractor):
    """HSV colour histogram, 32 bins per channel (96-d), each channel L1-normalised (Yan et al.)."""

    def __init__(self, bins: Annotated[int, Field(ge=2, le=180)] = 32):
        self.bins = bins

    def transform_image(self, img: np.ndarray) -> np.ndarray:
        if img.ndim != 3 or img.shape[2] < 3:
            raise DataError("hsv_hist needs colour (RGB) images, got a grey image")
        return hsv_histogram(img, int(self.bins))

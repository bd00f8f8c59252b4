"""CIE L*a*b* colour histogram."""

from __future__ import annotations

from typing import Annotated

import numpy as np
from pydantic import Field

from ..errors import DataError
from ..params import PositiveInt
from ..registry import features
from .base import Extractor

Bins = Annotated[int, Field(ge=1, le=256)]


@features.register("lab_hist")
class LabHistogram(Extractor):
    """L*a*b* colour histogram (``bins`` per channel), joint or one per channel, normalised to sum 1.

    Colour is converted with OpenCV's 8-bit L*a*b* (each channel scaled to 0..255); grey images
    are refused because they have no colour. ``joint``: one histogram over (L, a, b) cells
    (``b_L * b_a * b_b`` dims); otherwise the three channels' histograms side by side
    (``b_L + b_a + b_b`` dims, each channel's part summing to 1/3), e.g. 3 x 10 = 30 dims, the size
    of the colour part of the PubFig relative-attributes release.
    """

    def __init__(self, bins: Bins | tuple[Bins, Bins, Bins] = (4, 8, 8), joint: bool = True,
                 image_size: PositiveInt | None = None):
        self.bins = bins
        self.joint = joint
        self.image_size = image_size

    def transform_image(self, img: np.ndarray) -> np.ndarray:
        import cv2

        from ._imgutil import joint_codes, resize

        if img.ndim != 3 or img.shape[2] < 3:
            raise DataError("lab_hist needs colour (RGB) images, got a grey image")
        lab = cv2.cvtColor(np.ascontiguousarray(resize(img[..., :3], self.image_size)), cv2.COLOR_RGB2LAB)
        if self.joint:
            code, n_codes = joint_codes(lab.reshape(-1, 3), self.bins)
            hist = np.bincount(code, minlength=n_codes).astype(np.float64)
            return hist / max(hist.sum(), 1.0)
        b = np.broadcast_to(np.asarray(self.bins, dtype=np.int64).reshape(-1), (3,))
        pix = lab.reshape(-1, 3).astype(np.int64)
        parts = [np.bincount(pix[:, c] * b[c] // 256, minlength=b[c]).astype(np.float64) for c in range(3)]
        return np.concatenate(parts) / max(3.0 * len(pix), 1.0)

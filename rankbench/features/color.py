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
    """Joint L*a*b* colour histogram (``bins`` per channel), normalised to sum 1.

    Colour is converted with OpenCV's 8-bit L*a*b* (each channel scaled to 0..255); grey images
    are refused because they have no colour.
    """

    def __init__(self, bins: Bins | tuple[Bins, Bins, Bins] = (4, 8, 8), image_size: PositiveInt | None = None):
        self.bins = bins
        self.image_size = image_size

    def transform_image(self, img: np.ndarray) -> np.ndarray:
        import cv2

        from ._imgutil import joint_codes, resize

        if img.ndim != 3 or img.shape[2] < 3:
            raise DataError("lab_hist needs colour (RGB) images, got a grey image")
        lab = cv2.cvtColor(np.ascontiguousarray(resize(img[..., :3], self.image_size)), cv2.COLOR_RGB2LAB)
        code, n_codes = joint_codes(lab.reshape(-1, 3), self.bins)
        hist = np.bincount(code, minlength=n_codes).astype(np.float64)
        return hist / max(hist.sum(), 1.0)

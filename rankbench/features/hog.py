"""Histogram of oriented gradients (Dalal & Triggs 2005) via scikit-image."""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from ..params import PositiveInt
from ..registry import features
from ._imgutil import resize, to_grey
from .base import Extractor


@features.register("hog")
class HoG(Extractor):
    """HoG of the grey image resized to ``image_size`` (skimage.feature.hog; L2-Hys blocks).

    Defaults give 8x8 cells of 16 px on 128 px, 2x2-cell blocks, 9 orientations: 1764-d. A resize
    that is not a whole-number shrink holds the grey values to four decimals, so that a flat area
    has no gradient (and no histogram) after it.
    """

    def __init__(self, image_size: Annotated[int, Field(ge=8)] = 128, orientations: PositiveInt = 9,
                 pixels_per_cell: PositiveInt = 16, cells_per_block: PositiveInt = 2,
                 block_norm: Literal["L1", "L1-sqrt", "L2", "L2-Hys"] = "L2-Hys"):
        self.image_size = image_size
        self.orientations = orientations
        self.pixels_per_cell = pixels_per_cell
        self.cells_per_block = cells_per_block
        self.block_norm = block_norm

    def transform_image(self, img: np.ndarray) -> np.ndarray:
        from skimage.feature import hog

        grey = to_grey(img)
        g = resize(grey, self.image_size)
        h, w = grey.shape
        if h % g.shape[0] or w % g.shape[1]:
            # not a whole-number shrink: OpenCV's float32 weights leave 254.99999 of a flat 255, and
            # each block's normalisation blew that noise up to full-weight histograms; luma is in
            # steps of 0.001, so four decimals hold every value and drop the noise
            g = np.round(g, 4)
        ppc, cpb = int(self.pixels_per_cell), int(self.cells_per_block)
        return hog(g, orientations=int(self.orientations), pixels_per_cell=(ppc, ppc),
                   cells_per_block=(cpb, cpb), block_norm=self.block_norm, feature_vector=True)

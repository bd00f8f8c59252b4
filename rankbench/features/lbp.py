"""Uniform local binary pattern histograms over a grid (Ojala, Pietikainen & Maenpaa 2002)."""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from ..params import PositiveFloat, PositiveInt
from ..registry import features
from ._histogram import grid_histogram
from ._imgutil import resize, to_grey
from .base import Extractor


@features.register("lbp")
class LBP(Extractor):
    """Uniform LBP (P neighbours, radius R) histograms on a grid x grid layout, each cell normalised.

    ``method="nri_uniform"`` (default) keeps the P(P-1)+3 = 59 non-rotation-invariant uniform codes
    for P = 8; ``"uniform"`` the P+2 rotation-invariant ones. 8x8 grid x 59 = 3776-d by default.
    ``power`` raises the normalised histograms element-wise (0.5 = square root, the Hellinger
    map, so a linear kernel on them acts as the Bhattacharyya kernel); on PubFig it lifts linear
    RankSVM accuracy from 82.5% to 83.9% (8x8 grid; 77.6% with a 4x4 grid). Codes are scikit-image's
    ``local_binary_pattern``, which counts a neighbour outside the image as 0: the border pixels'
    codes depend on how bright they are (a black image and a white one differ in the border cells).
    """

    def __init__(self, image_size: Annotated[int, Field(ge=8)] = 128, P: Annotated[int, Field(ge=4, le=24)] = 8,
                 R: PositiveFloat = 1.0, method: Literal["nri_uniform", "uniform"] = "nri_uniform",
                 grid: PositiveInt = 8, power: PositiveFloat = 0.5):
        self.image_size = image_size
        self.P = P
        self.R = R
        self.method = method
        self.grid = grid
        self.power = power

    def transform_image(self, img: np.ndarray) -> np.ndarray:
        from skimage.feature import local_binary_pattern

        # rounded: a resize leaves 199.99999 of a flat 200, and truncating it drew false patterns
        g = np.clip(np.rint(resize(to_grey(img), self.image_size)), 0, 255).astype(np.uint8)
        P = int(self.P)
        codes = local_binary_pattern(g, P, float(self.R), method=self.method).astype(np.int64)
        n_codes = P * (P - 1) + 3 if self.method == "nri_uniform" else P + 2
        return grid_histogram(codes, n_codes, int(self.grid)) ** float(self.power)

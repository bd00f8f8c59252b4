"""Uniform local binary pattern histograms over a grid (Ojala, Pietikainen & Maenpaa 2002)."""

from __future__ import annotations

import numpy as np

from ..registry import features
from ._imgutil import grid_histograms, resize, to_grey
from .base import Extractor


@features.register("lbp")
class LBP(Extractor):
    """Uniform LBP (P neighbours, radius R) histograms on a grid x grid layout, each cell normalised.

    ``method="nri_uniform"`` (default) keeps the P(P-1)+3 = 59 non-rotation-invariant uniform codes
    for P = 8; ``"uniform"`` the P+2 rotation-invariant ones. 4x4 grid x 59 = 944-d by default.
    """

    def __init__(self, image_size=128, P=8, R=1.0, method="nri_uniform", grid=4):
        self.image_size = image_size
        self.P = P
        self.R = R
        self.method = method
        self.grid = grid

    def transform_image(self, img: np.ndarray) -> np.ndarray:
        from skimage.feature import local_binary_pattern

        g = resize(to_grey(img), self.image_size).astype(np.uint8)
        P = int(self.P)
        codes = local_binary_pattern(g, P, float(self.R), method=self.method).astype(np.int64)
        n_codes = P * (P - 1) + 3 if self.method == "nri_uniform" else P + 2
        return grid_histograms(codes, n_codes, int(self.grid))

"""Colour histograms in horizontal strips: a simple appearance feature for re-identification.

The colour part of the ELF-style features of Gray & Tao (ECCV 2008) and Prosser et al. (BMVC
2010): the image is cut into ``n_strips`` equal horizontal strips and each colour channel is
histogrammed with ``bins`` bins inside each strip; each histogram is L1-normalised, so the feature
is a concatenation of distributions (which the Bhattacharyya ranker expects).
"""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from ..params import PositiveInt
from ..registry import features
from .base import Extractor

_SPACES = ("rgb", "hsv", "ycrcb")


def channels(img: np.ndarray, spaces: tuple[str, ...]) -> list[np.ndarray]:
    """The requested colour channels of an RGB uint8 image, each scaled to [0, 1)."""
    import cv2

    out = []
    for space in spaces:
        if space == "rgb":
            conv = img
            scale = [256.0] * 3
        elif space == "hsv":
            conv = cv2.cvtColor(img, cv2.COLOR_RGB2HSV)
            scale = [180.0, 256.0, 256.0]  # OpenCV's 8-bit hue runs 0..179
        elif space == "ycrcb":
            conv = cv2.cvtColor(img, cv2.COLOR_RGB2YCrCb)
            scale = [256.0] * 3
        else:
            raise ValueError(f"unknown colour space {space!r}; expected one of {_SPACES}")
        out.extend(conv[..., c].astype(np.float32) / scale[c] for c in range(3))
    return out


def strip_histograms(chans: list[np.ndarray], n_strips: int, bins: int) -> np.ndarray:
    """(n_channels * n_strips * bins,) L1-normalised histograms of [0,1) channels per strip."""
    H = chans[0].shape[0]
    edges = np.linspace(0, H, n_strips + 1).round().astype(int)
    feats = []
    for ch in chans:
        q = np.clip((ch * bins).astype(np.int64), 0, bins - 1)
        for s in range(n_strips):
            h = np.bincount(q[edges[s]:edges[s + 1]].ravel(), minlength=bins).astype(np.float64)
            feats.append(h / max(h.sum(), 1.0))
    return np.concatenate(feats)


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
        import cv2

        if img.ndim == 2:
            img = np.repeat(img[..., None], 3, axis=2)
        if self.size is not None and img.shape[:2] != tuple(self.size):
            img = cv2.resize(img, (self.size[1], self.size[0]), interpolation=cv2.INTER_AREA)
        return strip_histograms(channels(img, tuple(self.spaces)), self.n_strips, self.bins)

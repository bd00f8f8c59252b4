"""Small image helpers shared by the extractors (grey conversion, resizing, enlarging, grid cells and means).

The pixel histograms (colour spaces, bins, cells, normalisation) are in :mod:`._histogram`.
"""

from __future__ import annotations

from typing import Annotated

import numpy as np
from pydantic import Field


def to_grey(img: np.ndarray) -> np.ndarray:
    """uint8 RGB or grey -> float64 grey in [0, 255] (ITU-R 601 luma, as cv2/skimage)."""
    img = np.asarray(img)
    if img.ndim == 3:
        img = img[..., :3].astype(np.float64) @ np.array([0.299, 0.587, 0.114])
    return img.astype(np.float64)


def resize(img: np.ndarray, size: int | tuple[int, int] | None) -> np.ndarray:
    """Resize to ``size`` = (height, width), an int meaning a square (area interpolation); None
    keeps the image as it is."""
    h, w = (size, size) if isinstance(size, (int, np.integer)) else size or img.shape[:2]
    if img.shape[:2] == (h, w):
        return img
    import cv2

    return cv2.resize(img, (int(w), int(h)), interpolation=cv2.INTER_AREA)


def enlarge(img: np.ndarray, min_side: int) -> np.ndarray:
    """Replicate pixels by the smallest integer factor that makes both sides >= ``min_side``."""
    short = min(img.shape[:2])
    if short >= min_side:
        return img
    f = -(-int(min_side) // max(short, 1))
    return np.repeat(np.repeat(img, f, axis=0), f, axis=1)


def prepared(img: np.ndarray, image_size: int | None, min_side: int) -> np.ndarray:
    """An image resized to a square of ``image_size`` (None: as given), then enlarged so that each
    side holds at least ``min_side`` pixels (:func:`enlarge`).

    This is the input handling of Merler et al.'s five low-level keyframe extractors
    (``color_histogram``, ``color_correlogram``, ``color_moments``, ``wavelet_texture``,
    ``edge_histogram``, one module each), whose shared conventions are: ``grid`` 1 = the whole
    image, g = a g x g layout of cells (cut at :func:`grid_edges`, the cells of
    :func:`block_means`) whose per-cell vectors are concatenated row-major; input uint8 RGB (a
    fourth channel ignored) or grey of any size (other dtypes rounded and clipped to 0..255);
    ``image_size`` (default None = as given) resizes to a square first (area interpolation); an
    image too small for its grid (fewer pixels, wavelet coefficients or edge blocks than cells
    along a side) is enlarged by an integer pixel-replication factor; the colour features treat a
    grey image as R = G = B (in HSV hue 0 and saturation 0, in L*a*b* / L*u*v* / YCrCb constant
    chroma), the others use luma (ITU-R 601); output 1-D float32, computed vectorised over pixels.
    Five extractors x four grids (1, 2, 3, 5) give a collection 20 feature types, each registered
    and cached separately (the grid is a parameter, so it keys the cache).
    """
    img = np.asarray(img)
    if image_size is not None:
        img = resize(np.ascontiguousarray(img), int(image_size))
    return enlarge(img, min_side)


def grid_edges(length: int, cells: int) -> np.ndarray:
    return np.linspace(0, length, cells + 1).astype(int)


def block_means(x: np.ndarray, w: int) -> np.ndarray:
    """Means over a w x w grid of blocks of (..., H, W) -> (..., w, w) (edges as fix(linspace))."""
    ry = np.fix(np.linspace(0, x.shape[-2], w + 1)).astype(int)
    rx = np.fix(np.linspace(0, x.shape[-1], w + 1)).astype(int)
    # reduceat sums consecutive slices; dividing by the block sizes gives the means
    s = np.add.reduceat(np.add.reduceat(x, ry[:-1], axis=-2), rx[:-1], axis=-1)
    return s / np.outer(np.diff(ry), np.diff(rx))


#: grid cells per side of a grid parameter (1 = the whole image)
Grid = Annotated[int, Field(ge=1, le=32)]

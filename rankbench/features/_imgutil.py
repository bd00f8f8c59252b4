"""Small image helpers shared by the sharaf extractors (grey conversion, resizing, grid pooling)."""

from __future__ import annotations

import numpy as np


def to_grey(img: np.ndarray) -> np.ndarray:
    """uint8 RGB or grey -> float64 grey in [0, 255] (ITU-R 601 luma, as cv2/skimage)."""
    img = np.asarray(img)
    if img.ndim == 3:
        img = img[..., :3].astype(np.float64) @ np.array([0.299, 0.587, 0.114])
    return img.astype(np.float64)


def resize(img: np.ndarray, size: int | None) -> np.ndarray:
    """Resize to size x size (area interpolation); None keeps the image as it is."""
    if size is None or img.shape[:2] == (size, size):
        return img
    import cv2

    return cv2.resize(img, (int(size), int(size)), interpolation=cv2.INTER_AREA)


def grid_edges(length: int, cells: int) -> np.ndarray:
    return np.linspace(0, length, cells + 1).astype(int)


def grid_histograms(codes: np.ndarray, n_codes: int, grid: int) -> np.ndarray:
    """Normalised histograms of integer ``codes`` (H, W) over a grid x grid layout -> 1-D.

    One bincount over (cell, code) instead of a loop over cells.
    """
    h, w = codes.shape
    cy = np.searchsorted(grid_edges(h, grid)[1:-1], np.arange(h), side="right")
    cx = np.searchsorted(grid_edges(w, grid)[1:-1], np.arange(w), side="right")
    cell = cy[:, None] * grid + cx[None, :]
    hist = np.bincount((cell * n_codes + codes).ravel(), minlength=grid * grid * n_codes)
    hist = hist.reshape(grid * grid, n_codes).astype(np.float64)
    return (hist / np.maximum(hist.sum(axis=1, keepdims=True), 1)).ravel()

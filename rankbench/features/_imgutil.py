"""Small image helpers shared by the extractors (grey conversion, resizing, grid pooling, colour codes)."""

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


def grid_index(length: int, cells: int) -> np.ndarray:
    """Cell number (0..cells-1) of each of ``length`` pixel rows (or columns), cut at :func:`grid_edges`."""
    return np.searchsorted(grid_edges(length, cells)[1:-1], np.arange(length), side="right")


def joint_codes(channels: np.ndarray, bins) -> tuple[np.ndarray, int]:
    """Joint colour code of each pixel of a uint8 (..., 3) array, ``bins`` uniform bins per channel.

    Channel value v falls in bin ``v * b // 256``; the code is ``(q0 * b1 + q1) * b2 + q2``.
    ``bins`` is one number (the same for every channel) or three. Returns (codes, number of codes).
    """
    b = np.asarray(bins, dtype=np.int64).reshape(-1)
    if b.size == 1:
        b = np.repeat(b, 3)
    q = (np.asarray(channels)[..., :3].astype(np.int64) * b) // 256  # bin index per channel
    return (q[..., 0] * b[1] + q[..., 1]) * b[2] + q[..., 2], int(b.prod())


def grid_histograms(codes: np.ndarray, n_codes: int, grid: int) -> np.ndarray:
    """Normalised histograms of integer ``codes`` (H, W) over a grid x grid layout -> 1-D.

    One bincount over (cell, code) instead of a loop over cells.
    """
    h, w = codes.shape
    cell = grid_index(h, grid)[:, None] * grid + grid_index(w, grid)[None, :]
    hist = np.bincount((cell * n_codes + codes).ravel(), minlength=grid * grid * n_codes)
    hist = hist.reshape(grid * grid, n_codes).astype(np.float64)
    return (hist / np.maximum(hist.sum(axis=1, keepdims=True), 1)).ravel()

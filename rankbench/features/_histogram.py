"""THE pixel histogram of the extractors: colour spaces, binning, cells and normalisation.

Every extractor that histograms pixel values goes through this module (``color_strips``,
``hsv_hist``, ``lab_hist``, ``color_histogram``, ``color_correlogram``'s colour codes,
``elf_strips`` and through it ``elf_regions``; ``lbp`` and ``edge_histogram`` histogram their own
codes with :func:`grid_histogram`). What differed between them is now a parameter:

* **space** (:data:`SPACES`): OpenCV's 8-bit conversions of RGB. Each channel's values lie in
  ``[0, hi)``: 256 for every channel except the hue of ``"hsv"``, which OpenCV keeps in 0..179
  (``hi`` = 180); ``"hsv_full"`` spreads the hue over 0..255.
* **grey images** (:func:`as_rgb`): replicated to R = G = B (``"replicate"``: hue 0 and saturation
  0 in HSV, constant chroma in L*a*b* / YCrCb) or refused with a DataError (``"refuse"``).
* **bins** (:func:`bin_index`): uniform, exact in integers for 8-bit channels (as ``cv2.calcHist``),
  in float32 for real-valued channels (filter responses); per channel, or joint
  (:func:`joint_code`).
* **cells**: a rows x cols layout (strips are ``(n, 1)``, a grid ``(g, g)``), cut where
  :func:`cell_index` says.
* **normalisation** (:func:`histograms`): per (channel, cell) histogram, per channel, per image or
  none; an empty histogram stays 0.

Layout of a feature vector: channel-major, then cell (row-major), then bin.
"""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from ..errors import DataError
from ._imgutil import grid_edges, prepared

#: colour space -> (OpenCV conversion from RGB or None, channel names, upper end of each channel's range)
SPACES: dict[str, tuple[str | None, tuple[str, str, str], tuple[int, int, int]]] = {
    "rgb": (None, ("R", "G", "B"), (256, 256, 256)),
    "hsv": ("COLOR_RGB2HSV", ("H", "S", "V"), (180, 256, 256)),          # OpenCV's 8-bit hue: 0..179
    "hsv_full": ("COLOR_RGB2HSV_FULL", ("H", "S", "V"), (256, 256, 256)),
    "lab": ("COLOR_RGB2LAB", ("L", "a", "b"), (256, 256, 256)),
    "luv": ("COLOR_RGB2LUV", ("L", "u", "v"), (256, 256, 256)),
    "ycrcb": ("COLOR_RGB2YCrCb", ("Y", "Cr", "Cb"), (256, 256, 256)),
}
#: uniform bins of one 8-bit colour channel, and one number per channel
ChannelBins = Annotated[int, Field(ge=1, le=256)]
Bins3 = tuple[ChannelBins, ChannelBins, ChannelBins]
Normalize = Literal["histogram", "channel", "image", "none"]
Edges = Literal["floor", "round", "ceil"]


# ----------------------------------------------------------------------------- colour
def as_rgb(img: np.ndarray, grey: Literal["replicate", "refuse"] = "replicate", what: str = "") -> np.ndarray:
    """uint8 (H, W, 3): RGB as given (a fourth channel dropped; other dtypes rounded and clipped to
    0..255), or a grey image replicated (R = G = B), or refused (``grey="refuse"``: a DataError
    naming ``what``)."""
    img = np.asarray(img)
    if grey == "refuse" and (img.ndim != 3 or img.shape[2] < 3):
        raise DataError(f"{what} needs colour (RGB) images, got a grey image")
    if img.dtype != np.uint8:
        img = np.clip(np.rint(img), 0, 255).astype(np.uint8)
    if img.ndim == 2:
        return np.repeat(img[:, :, None], 3, axis=2)
    if img.shape[2] == 1:
        return np.repeat(img, 3, axis=2)
    return img[:, :, :3]


def convert(rgb: np.ndarray, space: str) -> np.ndarray:
    """uint8 RGB (H, W, 3) -> uint8 (H, W, 3) in ``space`` (one of :data:`SPACES`)."""
    code = SPACES[space][0]
    if code is None:
        return rgb
    import cv2

    return cv2.cvtColor(np.ascontiguousarray(rgb), getattr(cv2, code))


def channel_ranges(space: str) -> np.ndarray:
    """The upper end ``hi`` of each channel's 8-bit range ``[0, hi)`` in ``space``."""
    return np.asarray(SPACES[space][2], dtype=np.int64)


#: the ``space`` parameter of Merler et al.'s keyframe colour features -> a space here (their HSV
#: spreads the hue over 0..255)
KEYFRAME_SPACES = {"hsv": "hsv_full", "rgb": "rgb", "lab": "lab", "luv": "luv", "ycrcb": "ycrcb"}


def keyframe_colour_codes(img: np.ndarray, image_size: int | None, grid: int, space: str, bins) -> tuple[np.ndarray, int]:
    """(joint colour code of every pixel, number of codes) of a keyframe colour feature's image,
    prepared as :func:`rankbench.features._imgutil.prepared` says."""
    return colour_codes(as_rgb(prepared(img, image_size, grid)), KEYFRAME_SPACES[space], bins)


# ----------------------------------------------------------------------------- bins and cells
def bin_index(values: np.ndarray, bins, lo=0, hi=256, overwrite: bool = False) -> np.ndarray:
    """Bin of each value: ``floor((v - lo) * bins / (hi - lo))`` clipped to ``0 .. bins - 1``.

    Integer ``values`` (8-bit channels) are binned exactly in integers; real values in float32
    (``(v - lo) * float32(bins / (hi - lo))``, clipped to ``[0, bins - 0.5]``, then truncated).
    ``bins``, ``lo`` and ``hi`` broadcast against ``values`` (e.g. one per channel of the last
    axis). ``overwrite``: a float32 ``values`` array is used as the work space (saves a copy of a
    large batch; its content is then lost).
    """
    values = np.asarray(values)
    if np.issubdtype(values.dtype, np.integer):
        b, lo_, hi_ = (np.asarray(x, dtype=np.int64) for x in (bins, lo, hi))
        return np.clip((values.astype(np.int64) - lo_) * b // (hi_ - lo_), 0, b - 1)
    x = values if overwrite and values.dtype == np.float32 else values.astype(np.float32)
    lo_, hi_ = np.asarray(lo, dtype=np.float32), np.asarray(hi, dtype=np.float32)
    x -= lo_
    x *= np.asarray(bins, dtype=np.float32) / (hi_ - lo_)
    np.clip(x, 0, np.asarray(bins, dtype=np.float32) - 0.5, out=x)
    return x.astype(np.intp)  # bincount is several times slower on int32


def joint_code(q: np.ndarray, bins) -> tuple[np.ndarray, int]:
    """Joint code ``(q0 * b1 + q1) * b2 + q2`` of per-channel bins ``q`` (..., 3), and the number of codes."""
    b = np.broadcast_to(np.asarray(bins, dtype=np.int64).reshape(-1), (3,))
    return (q[..., 0] * b[1] + q[..., 1]) * b[2] + q[..., 2], int(b.prod())


def colour_codes(rgb: np.ndarray, space: str, bins) -> tuple[np.ndarray, int]:
    """Joint colour code of every pixel of a uint8 RGB image in ``space``, ``bins`` per channel
    (one number or three), and the number of codes."""
    q = bin_index(convert(rgb, space), np.asarray(bins, dtype=np.int64).reshape(-1), 0, channel_ranges(space))
    return joint_code(q, bins)


def cell_index(length: int, n: int, edges: Edges = "floor") -> np.ndarray:
    """Cell (0..n-1) of each of ``length`` positions along one side cut into ``n`` cells.

    The cut between cells k - 1 and k lies at ``k * length / n`` rounded down (``"floor"``, as
    ``np.linspace(...).astype(int)``), rounded half to even (``"round"``), or rounded up
    (``"ceil"``: position i in cell ``i * n // length``).
    """
    if edges == "ceil":
        return np.arange(length) * n // length
    cuts = grid_edges(length, n) if edges == "floor" else np.linspace(0, length, n + 1).round().astype(int)
    return np.searchsorted(cuts[1:-1], np.arange(length), side="right")


def cell_map(h: int, w: int, rows: int, cols: int, edges: Edges = "floor") -> np.ndarray:
    """(H, W) cell number of every pixel over a rows x cols layout, row-major."""
    return cell_index(h, rows, edges)[:, None] * cols + cell_index(w, cols, edges)[None, :]


# ----------------------------------------------------------------------------- histograms
def histograms(codes: np.ndarray, n_codes: int, cells: np.ndarray, n_cells: int,
               normalize: Normalize = "histogram", overwrite: bool = False) -> np.ndarray:
    """Histograms of integer ``codes`` (n, C, H, W) (n images, C channels) in every cell of ``cells``.

    Parameters
    ----------
    codes : int array (n, C, H, W), each in ``0 .. n_codes - 1``.
    n_codes : bins per histogram.
    cells : (H, W) cell of every pixel (:func:`cell_map`), in ``0 .. n_cells - 1``.
    n_cells : number of cells.
    normalize : "histogram" (each (image, channel, cell) histogram sums to 1), "channel" (each
        channel's cells together), "image" (each image's whole vector) or "none" (counts).
    overwrite : an intp ``codes`` array is used as the work space (saves a copy; its content is
        then lost).

    Returns
    -------
    float64 (n, C, n_cells, n_codes); an empty histogram stays 0. One bincount for the batch.
    """
    n, C = codes.shape[:2]
    idx = codes if overwrite and codes.dtype == np.intp else codes.astype(np.intp)
    idx += (np.arange(C)[:, None, None] * n_cells + cells) * n_codes
    idx += (np.arange(n) * (C * n_cells * n_codes))[:, None, None, None]
    h = np.bincount(idx.ravel(), minlength=n * C * n_cells * n_codes).reshape(n, C, n_cells, n_codes)
    h = h.astype(np.float64)
    axes = {"histogram": (3,), "channel": (2, 3), "image": (1, 2, 3), "none": None}[normalize]
    if axes is not None:
        h /= np.maximum(h.sum(axis=axes, keepdims=True), 1)
    return h


def grid_histogram(codes: np.ndarray, n_codes: int, grid: int) -> np.ndarray:
    """Normalised histograms of integer ``codes`` (H, W) over a grid x grid layout -> 1-D float64
    (cell-major, each cell summing to 1)."""
    h, w = codes.shape
    return histograms(codes[None, None], n_codes, cell_map(h, w, grid, grid), grid * grid).ravel()


def colour_histogram(rgb: np.ndarray, space: str, bins, joint: bool = False, cells: tuple[int, int] = (1, 1),
                     edges: Edges = "floor", normalize: Normalize = "histogram") -> np.ndarray:
    """One uint8 RGB image's colour histogram in ``space`` -> 1-D float64.

    ``bins`` per channel (one number or three); ``joint``: one histogram of the joint colour code
    per cell, else each channel's histogram per cell (channel-major, then cell, then bin; with
    unequal bins each channel keeps its own). ``cells``: (rows, cols) cut by ``edges``;
    ``normalize`` as in :func:`histograms`.
    """
    h, w = rgb.shape[:2]
    b = np.broadcast_to(np.asarray(bins, dtype=np.int64).reshape(-1), (3,))
    q = bin_index(convert(rgb, space), b, 0, channel_ranges(space))
    where = cell_map(h, w, *cells, edges)
    n_cells = cells[0] * cells[1]
    if joint:
        code, n_codes = joint_code(q, b)
        return histograms(code[None, None], n_codes, where, n_cells, normalize).ravel()
    # every channel over max(bins) bins: a channel's bins past its own count stay empty and are dropped
    hist = histograms(q.transpose(2, 0, 1)[None], int(b.max()), where, n_cells, normalize)[0]
    return np.concatenate([hist[c, :, :b[c]].ravel() for c in range(3)])

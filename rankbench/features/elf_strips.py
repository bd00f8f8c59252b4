"""The 2784-d colour + texture strip histogram of Prosser et al. (BMVC 2010, Sec. 3), after Gray & Tao's ELF.

8 colour channels (R, G, B, H, S, Y, Cb, Cr) and 21 texture filters on the luminance (8 Gabor,
13 Schmid), each histogrammed with 16 bins in 6 equal horizontal strips: 29 x 6 x 16 = 2784 dims.

Layout of the vector: channel-major, then strip (top to bottom), then bin, i.e. dimension
``(c * n_strips + s) * n_bins + b``; so every ``n_bins`` consecutive dims are one (channel,
strip) histogram, which the ELF AdaBoost ranker uses as its weak-learner unit.

Choices the paper leaves open are parameters (defaults in brackets):

* ``gabor_bank`` [``DEFAULT_GABOR``]: (gamma, theta, lambda, sigma^2) tuples. The paper's list is
  garbled (7 tuples, one twice); we use the 8-tuple bank common to public ELF re-implementations
  with the two disputed entries taken as (0.4, 0, 8, 2) and (0.3, pi/2, 4, 2).
  Kernel: exp(-(x'^2 + gamma^2 y'^2) / (2 sigma^2)) cos(2 pi x' / lambda), x' along theta.
* ``schmid_bank`` [the paper's 13 (tau, sigma)]: F = F0 + cos(pi tau r / sigma) exp(-r^2/(2 sigma^2)).
* ``support`` [3]: kernel half-size = ceil(support * sigma / min(gamma, 1)) (Gabor) or
  ceil(support * sigma) (Schmid). Every kernel is made zero-mean (F0) and L1-normalised.
* ``response`` ["abs"]: histogram the magnitude (``"abs"``) or the signed (``"signed"``) response.
* ``filter_range`` ["fixed"], ``filter_scale`` [0.05]: bins of a filter response span
  ``[0, 255 * filter_scale]`` (``"fixed"``; signed responses: symmetric; larger values go to
  the last bin) or each image's own min..max (``"image"``, contrast invariant). With the
  L1-normalised kernels, a small scale keeps the informative low responses apart; 0.05 was
  chosen on splits no config grades (configs/prosser/selection/viper_p316_filter_scale.yaml).
  Colour channels always span their full 8-bit range.
* ``normalize`` ["strip"]: each (channel, strip) histogram sums to 1 (``"strip"``), each channel's
  six strips together (``"channel"``), the whole vector (``"l1"``) or raw pixel counts (``"none"``).
* ``size`` [None]: resize every image to (height, width) first; None keeps the loader's size.
"""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from ..params import PositiveFloat, PositiveInt
from ..registry import features
from ._histogram import bin_index, cell_map, convert, histograms
from ._imgutil import resize
from .base import Extractor

DEFAULT_GABOR = (
    (0.3, 0.0, 4, 2), (0.3, 0.0, 8, 2), (0.4, 0.0, 4, 1), (0.4, 0.0, 8, 2),
    (0.3, np.pi / 2, 4, 2), (0.3, np.pi / 2, 8, 2), (0.4, np.pi / 2, 4, 1), (0.4, np.pi / 2, 8, 2),
)
DEFAULT_SCHMID = ((2, 1), (4, 1), (4, 2), (6, 1), (6, 2), (6, 3), (8, 1), (8, 2), (8, 3),
                  (10, 1), (10, 2), (10, 3), (10, 4))
COLOURS = ("R", "G", "B", "H", "S", "Y", "Cb", "Cr")
Colour = Literal["R", "G", "B", "H", "S", "Y", "Cb", "Cr"]


def gabor_kernel(gamma, theta, lam, sigma2, support=3.0) -> np.ndarray:
    """Zero-mean, L1-normalised even Gabor kernel (Fogel & Sagi)."""
    sigma = np.sqrt(sigma2)
    h = int(np.ceil(support * sigma / min(gamma, 1.0)))
    y, x = np.mgrid[-h:h + 1, -h:h + 1].astype(float)
    xr = x * np.cos(theta) + y * np.sin(theta)
    yr = -x * np.sin(theta) + y * np.cos(theta)
    k = np.exp(-(xr ** 2 + gamma ** 2 * yr ** 2) / (2 * sigma2)) * np.cos(2 * np.pi * xr / lam)
    return _normalise(k)


def schmid_kernel(tau, sigma, support=3.0) -> np.ndarray:
    """Zero-mean, L1-normalised rotation-invariant Schmid kernel."""
    h = int(np.ceil(support * sigma))
    y, x = np.mgrid[-h:h + 1, -h:h + 1].astype(float)
    r = np.hypot(x, y)
    return _normalise(np.cos(np.pi * tau * r / sigma) * np.exp(-r ** 2 / (2 * sigma ** 2)))


def _normalise(k):
    k = k - k.mean()  # F0: a flat region gives no response
    return (k / np.abs(k).sum()).astype(np.float32)


@features.register("elf_strips")
class ELFStrips(Extractor):
    """Prosser et al.'s 2784-d strip histograms: 8 colours + 8 Gabor + 13 Schmid, 16 bins, 6 strips."""

    def __init__(self, n_strips: PositiveInt = 6, n_bins: Annotated[int, Field(ge=2, le=256)] = 16,
                 colours: tuple[Colour, ...] = COLOURS,
                 gabor_bank: tuple[tuple[PositiveFloat, float, PositiveFloat, PositiveFloat], ...] = DEFAULT_GABOR,
                 schmid_bank: tuple[tuple[PositiveFloat, PositiveFloat], ...] = DEFAULT_SCHMID,
                 support: PositiveFloat = 3.0, response: Literal["abs", "signed"] = "abs",
                 filter_range: Literal["fixed", "image"] = "fixed", filter_scale: PositiveFloat = 0.05,
                 normalize: Literal["strip", "channel", "l1", "none"] = "strip",
                 size: tuple[PositiveInt, PositiveInt] | None = None, chunk: PositiveInt = 128):
        self.n_strips = n_strips
        self.n_bins = n_bins
        self.colours = colours
        self.gabor_bank = gabor_bank
        self.schmid_bank = schmid_bank
        self.support = support
        self.response = response
        self.filter_range = filter_range
        self.filter_scale = filter_scale
        self.normalize = normalize
        self.size = size
        self.chunk = chunk

    @property
    def n_channels(self) -> int:
        return len(self.colours) + len(self.gabor_bank) + len(self.schmid_bank)

    def kernels(self) -> list[np.ndarray]:
        return ([gabor_kernel(*g, support=self.support) for g in self.gabor_bank]
                + [schmid_kernel(*s, support=self.support) for s in self.schmid_bank])

    execution_params = ("chunk",)

    def _batch(self) -> int:
        return int(self.chunk)

    # ------------------------------------------------------------------ batch computation
    def transform_batch(self, imgs: list[np.ndarray]) -> np.ndarray:
        """Features of RGB (or grey) uint8 images; images of equal size are filtered as one mosaic."""
        imgs = [np.ascontiguousarray(resize(np.dstack([im] * 3) if im.ndim == 2 else im, self.size), dtype=np.uint8)
                for im in imgs]  # grey as R = G = B
        shapes = {im.shape for im in imgs}
        if len(shapes) > 1:
            return np.vstack([self.transform_batch([im]) for im in imgs])
        batch = np.stack(imgs)  # (n, H, W, 3)
        chans = self._channels(batch)  # (n, C, H, W) float32
        lo, hi = self._ranges(chans)
        return self._histograms(chans, lo, hi)

    def _channels(self, batch: np.ndarray) -> np.ndarray:
        import cv2

        n, H, W, _ = batch.shape
        tall = batch.reshape(n * H, W, 3)  # pointwise conversions run once on a mosaic
        hsv = convert(tall, "hsv_full").reshape(n, H, W, 3)
        ycc = convert(tall, "ycrcb").reshape(n, H, W, 3)
        table = {"R": batch[..., 0], "G": batch[..., 1], "B": batch[..., 2], "H": hsv[..., 0],
                 "S": hsv[..., 1], "V": hsv[..., 2], "Y": ycc[..., 0], "Cr": ycc[..., 1], "Cb": ycc[..., 2]}
        out = np.empty((n, self.n_channels, H, W), dtype=np.float32)
        for i, c in enumerate(self.colours):
            out[:, i] = table[c]
        kernels = self.kernels()
        if kernels:
            # pad each image by reflection (filter2D's default border) and filter one tall mosaic
            p = max(k.shape[0] // 2 for k in kernels)
            lum = np.pad(ycc[..., 0].astype(np.float32), ((0, 0), (p, p), (p, p)), mode="reflect")
            mosaic = lum.reshape(n * (H + 2 * p), W + 2 * p)
            for j, k in enumerate(kernels):
                r = cv2.filter2D(mosaic, cv2.CV_32F, k).reshape(n, H + 2 * p, W + 2 * p)[:, p:p + H, p:p + W]
                out[:, len(self.colours) + j] = np.abs(r) if self.response == "abs" else r
        return out

    def _ranges(self, chans):
        n, C = chans.shape[:2]
        nc = len(self.colours)
        lo = np.zeros((n, C), np.float32)
        hi = np.full((n, C), 256.0, np.float32)  # colour channels: their whole 8-bit range
        if C > nc:
            f = chans[:, nc:]
            if self.filter_range == "image":
                lo[:, nc:] = f.min(axis=(2, 3))
                hi[:, nc:] = f.max(axis=(2, 3))
            elif self.filter_range == "fixed":
                b = 255.0 * self.filter_scale
                lo[:, nc:] = 0.0 if self.response == "abs" else -b
                hi[:, nc:] = b
            else:
                raise ValueError(f"filter_range must be 'image' or 'fixed', not {self.filter_range!r}")
        hi = np.maximum(hi, lo + 1e-6)
        return lo, hi

    def _histograms(self, chans, lo, hi):
        """The (channel, strip) histograms of a batch's channels, binned between ``lo`` and ``hi``
        (per image and channel): :mod:`rankbench.features._histogram` on the whole batch at once."""
        n, C, H, W = chans.shape
        if self.normalize not in _NORMALIZE:
            raise ValueError(f"normalize must be strip, channel, l1 or none, not {self.normalize!r}")
        # in place on the float32 channels: bin = floor((v - lo) / (hi - lo) * nb), clipped
        idx = bin_index(chans, int(self.n_bins), lo[:, :, None, None], hi[:, :, None, None], overwrite=True)
        strips = cell_map(H, W, int(self.n_strips), 1, edges="ceil")  # row i in strip i * n_strips // H
        h = histograms(idx, int(self.n_bins), strips, int(self.n_strips), _NORMALIZE[self.normalize], overwrite=True)
        return h.astype(np.float32).reshape(n, -1)


#: this extractor's ``normalize`` -> the histogram module's
_NORMALIZE = {"strip": "histogram", "channel": "channel", "l1": "image", "none": "none"}

"""Gabor filter-bank energy over a grid (Manjunath & Ma 1996), batched in the frequency domain."""

from __future__ import annotations

from typing import Annotated

import numpy as np
from pydantic import Field

from ..params import PositiveInt
from ..registry import features
from ._imgutil import block_means, resize, to_grey
from .base import Extractor


def manjunath_bank(n: int, n_scales: int, n_orientations: int, ul: float = 0.05, uh: float = 0.4) -> np.ndarray:
    """Frequency responses (S*K, n, n) of Manjunath & Ma's Gabor bank (their eqs. 1-3), each of
    peak 1.

    Centre frequencies ``U_s = uh / a^(S-1-s)``, ``a = (uh/ul)^(1/(S-1))``; radial and tangential
    bandwidths chosen so neighbouring filters touch at half maximum. Only the positive-frequency
    lobe is kept, so the filtered image is complex and its magnitude is the local energy. Their
    eq. 3 also scales filter m by ``a^-m`` in space (a peak of ``a^(S-1-s)`` here), so that every
    filter has the same energy; this bank leaves that factor out, so a scale's features are theirs
    divided by that constant (8, 4, 2, 1 from the lowest frequency with the defaults): the same to
    a learner that scales each column, not to one that does not.
    """
    a = (uh / ul) ** (1.0 / max(n_scales - 1, 1))
    su = (a - 1) * uh / ((a + 1) * np.sqrt(2 * np.log(2)))
    f = np.fft.fftfreq(n)
    fy, fx = np.meshgrid(f, f, indexing="ij")
    bank = []
    for s in range(n_scales):
        U = uh / a ** (n_scales - 1 - s)
        su_s = su / a ** (n_scales - 1 - s)
        sv_s = np.tan(np.pi / (2 * n_orientations)) * (U - 2 * np.log(2) * su_s ** 2 / U) \
            / np.sqrt(2 * np.log(2) - (2 * np.log(2)) ** 2 * su_s ** 2 / U ** 2)
        for k in range(n_orientations):
            th = np.pi * k / n_orientations
            u = fx * np.cos(th) + fy * np.sin(th)
            v = -fx * np.sin(th) + fy * np.cos(th)
            bank.append(np.exp(-0.5 * ((u - U) ** 2 / su_s ** 2 + v ** 2 / sv_s ** 2)))
    return np.stack(bank)


@features.register("gabor_energy")
class GaborEnergy(Extractor):
    """Mean Gabor magnitude (``n_scales`` x ``n_orientations`` filters) over a grid x grid layout.

    Grey image resized to ``image_size``, mean removed; defaults 4 scales x 6 orientations x 4x4
    grid = 384-d. Images are filtered in batches with one FFT each.
    """

    def __init__(self, image_size: Annotated[int, Field(ge=8)] = 128, n_scales: PositiveInt = 4,
                 n_orientations: PositiveInt = 6, grid: PositiveInt = 4, batch_size: PositiveInt = 32):
        self.image_size = image_size
        self.n_scales = n_scales
        self.n_orientations = n_orientations
        self.grid = grid
        self.batch_size = batch_size

    execution_params = ("batch_size",)

    def transform_batch(self, imgs) -> np.ndarray:
        from scipy import fft

        x = np.stack([resize(to_grey(im), self.image_size) for im in imgs]).astype(np.float64)
        x -= x.mean(axis=(1, 2), keepdims=True)
        F = fft.fft2(x, workers=1)
        bank = manjunath_bank(x.shape[-1], int(self.n_scales), int(self.n_orientations))
        out = [block_means(np.abs(fft.ifft2(F * g, workers=1)), int(self.grid)) for g in bank]
        return np.stack(out, axis=1).reshape(len(imgs), -1)

"""Localized ELF features: channel histograms over a pool of horizontal regions (Gray & Tao, ECCV 2008).

Gray & Tao's "ensemble of localized features" boosts over features that are each *one channel's
histogram inside one horizontal region* of the pedestrian image; the boosting chooses the channel,
the region (its vertical position and height) and a distance threshold. Prosser et al. (BMVC 2010)
fixed the regions to 6 equal strips for their shared 2784-d feature; this extractor gives the ELF
ranker the larger pool of candidate regions instead.

Channels and binning are those of :class:`~rankbench.features.elf_strips.ELFStrips` (8 colours, 8 Gabor,
13 Schmid; same kernels, ranges and 16 bins), which this module reuses: the image is cut into
``n_cells`` equal horizontal cells, ELFStrips gives the raw per-cell counts, and each region's
histogram is a sum of consecutive cells (a difference of cumulative sums), then L1-normalised.

Region pool: for every height ``h`` in ``heights`` (in cells), regions start at cells
``0, s, 2s, ...`` with stride ``s = max(1, ceil(h * stride))`` as long as they fit; the last
start ``n_cells - h`` is always included so the bottom of the image is covered. With the defaults
(12 cells of ~10.7 rows of a 128-row VIPeR image; heights 1, 2, 3, 4, 6 cells; stride half a
height) the pool has 12 + 11 + 6 + 5 + 3 = 37 regions, so 29 x 37 = 1073 histograms.

Layout of the vector: channel-major, then region (in :meth:`ELFRegions.regions` order), then bin,
i.e. dimension ``(c * n_regions + r) * n_bins + b``; every ``n_bins`` consecutive dims are one
(channel, region) histogram, the ELF AdaBoost ranker's weak-learner unit.
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from ..errors import ParameterError
from ..params import PositiveFloat, PositiveInt
from ..registry import features
from .base import Extractor
from .elf_strips import COLOURS, DEFAULT_GABOR, DEFAULT_SCHMID, Colour, ELFStrips


def region_pool(n_cells: int, heights, stride: float = 0.5) -> list[tuple[int, int]]:
    """(first cell, height) of every candidate region, in order of height then position.

    Parameters
    ----------
    n_cells : number of equal horizontal cells the image is cut into.
    heights : region heights in cells (each in 1..n_cells).
    stride : step between starts as a fraction of the height (at least one cell).

    Returns
    -------
    list of (start, height), without duplicates.
    """
    out = []
    for h in heights:
        h = int(h)
        if not 1 <= h <= n_cells:
            raise ParameterError(f"elf_regions.heights: region height {h} must lie in 1..n_cells={n_cells}")
        step = max(1, math.ceil(h * stride))
        starts = list(range(0, n_cells - h + 1, step))
        if starts[-1] != n_cells - h:
            starts.append(n_cells - h)
        out += [(s, h) for s in starts if (s, h) not in out]
    return out


@features.register("elf_regions")
class ELFRegions(Extractor):
    """Gray & Tao's localized features: ELF channels histogrammed over many horizontal regions.

    Parameters
    ----------
    n_cells : equal horizontal cells; regions are runs of consecutive cells.
    heights : region heights in cells.
    stride : step between region starts as a fraction of their height.
    n_bins, colours, gabor_bank, schmid_bank, support, response, filter_range, filter_scale,
    size, chunk : as in :class:`~rankbench.features.elf_strips.ELFStrips`.

    Notes
    -----
    Each (channel, region) histogram is L1-normalised (sums to 1; an empty one stays 0).
    Gray & Tao, "Viewpoint invariant pedestrian recognition with an ensemble of localized
    features", ECCV 2008, Sec. 3-4.
    """

    execution_params = ("chunk",)

    def __init__(self, n_cells: PositiveInt = 12,
                 heights: Annotated[tuple[PositiveInt, ...], Field(min_length=1)] = (1, 2, 3, 4, 6),
                 stride: Annotated[float, Field(gt=0, le=1)] = 0.5, n_bins: Annotated[int, Field(ge=2, le=256)] = 16,
                 colours: tuple[Colour, ...] = COLOURS,
                 gabor_bank: tuple[tuple[PositiveFloat, float, PositiveFloat, PositiveFloat], ...] = DEFAULT_GABOR,
                 schmid_bank: tuple[tuple[PositiveFloat, PositiveFloat], ...] = DEFAULT_SCHMID,
                 support: PositiveFloat = 3.0, response: Literal["abs", "signed"] = "abs",
                 filter_range: Literal["fixed", "image"] = "fixed", filter_scale: PositiveFloat = 0.05,
                 size: tuple[PositiveInt, PositiveInt] | None = None, chunk: PositiveInt = 128):
        self.n_cells = n_cells
        self.heights = heights
        self.stride = stride
        self.n_bins = n_bins
        self.colours = colours
        self.gabor_bank = gabor_bank
        self.schmid_bank = schmid_bank
        self.support = support
        self.response = response
        self.filter_range = filter_range
        self.filter_scale = filter_scale
        self.size = size
        self.chunk = chunk

    def regions(self) -> list[tuple[int, int]]:
        """The region pool as (first cell, height in cells)."""
        return region_pool(int(self.n_cells), self.heights, self.stride)

    def _cells(self) -> ELFStrips:
        """The ELFStrips extractor giving raw per-cell counts of the same channels."""
        return ELFStrips(n_strips=int(self.n_cells), n_bins=self.n_bins, colours=self.colours,
                         gabor_bank=self.gabor_bank, schmid_bank=self.schmid_bank,
                         support=self.support, response=self.response,
                         filter_range=self.filter_range, filter_scale=self.filter_scale,
                         normalize="none", size=self.size, chunk=self.chunk)

    def from_cells(self, counts: np.ndarray) -> np.ndarray:
        """Region histograms from per-cell counts.

        Parameters
        ----------
        counts : (n, C * n_cells * n_bins) raw counts, ELFStrips layout with ``normalize="none"``.

        Returns
        -------
        (n, C * n_regions * n_bins) float32, each histogram summing to 1 (or 0 if empty).
        """
        nc, nb = int(self.n_cells), int(self.n_bins)
        cnt = np.asarray(counts, dtype=np.float32).reshape(len(counts), -1, nc, nb)
        cum = np.concatenate([np.zeros_like(cnt[:, :, :1]), np.cumsum(cnt, axis=2)], axis=2)
        reg = self.regions()
        start = np.array([s for s, _ in reg])
        stop = np.array([s + h for s, h in reg])
        h = cum[:, :, stop] - cum[:, :, start]          # (n, C, R, nb)
        h /= np.maximum(h.sum(3, keepdims=True), 1e-12)
        return h.reshape(len(h), -1).astype(np.float32)

    def transform_image(self, img: np.ndarray) -> np.ndarray:
        return self.from_cells(self._cells().transform_image(img)[None])[0]

    def extract(self, dataset, n_jobs=1, progress=False) -> np.ndarray:
        """All images: batched per-cell counts from ELFStrips, then the region sums."""
        return self.from_cells(self._cells().extract(dataset, n_jobs=n_jobs, progress=progress))

"""A user's feature extractor outside any package (loaded by file path in the tests): the mean
colour of each image, after waiting at a ``gate`` file (at most 10 minutes), so that a test can
kill a run while it extracts features."""

import time
from pathlib import Path

import numpy as np

from rankbench.features.base import Extractor


class GatedMeanColour(Extractor):
    """Mean colour per channel, once the gate file exists."""

    cacheable = False

    def __init__(self, gate: str | None = None):
        self.gate = gate

    def transform_batch(self, imgs):
        deadline = time.monotonic() + 600
        while self.gate is not None and not Path(self.gate).exists():
            if time.monotonic() > deadline:
                raise TimeoutError(f"gate {self.gate} never opened")
            time.sleep(0.02)
        return np.stack([np.asarray(im, float).reshape(-1, np.asarray(im).shape[-1]).mean(0) for im in imgs])

"""Raw features: the pixels of an image, or an array shipped with the dataset.

``pixels`` is Yu & Li's UMIST feature (the 112 x 92 = 10304 grey values, unscaled); ``array`` passes
on a named array of ``dataset.arrays`` such as FG-NET's 136 landmark coordinates.
"""

from __future__ import annotations

import numpy as np

from ..datasets.base import Dataset
from ..errors import DataError
from ..params import PositiveFloat
from ..registry import features
from .base import Extractor


@features.register("pixels")
class Pixels(Extractor):
    """Raw pixel vector of each image (row-major, grey or RGB as the dataset gives it), times ``scale``."""

    def __init__(self, scale: PositiveFloat = 1.0):
        self.scale = scale

    def transform_image(self, img: np.ndarray) -> np.ndarray:
        return np.asarray(img, dtype=np.float32).ravel() * np.float32(self.scale)

    def extract(self, dataset: Dataset, n_jobs: int = 1, progress: bool = False) -> np.ndarray:
        if "images" in dataset.arrays and dataset.image_reader is None:
            # in-memory images (e.g. UMIST): one reshape instead of a loop
            imgs = dataset.arrays["images"]
            return imgs.reshape(len(imgs), -1).astype(np.float32) * np.float32(self.scale)
        return super().extract(dataset, n_jobs=n_jobs, progress=progress)


@features.register("array")
class Array(Extractor):
    """A named array shipped with the dataset (e.g. ``landmarks``), flattened per item, times ``scale``.

    ``scale`` changes units only (e.g. FG-NET landmark pixels -> units of ~ the image size); it
    matters to learners whose step sizes are absolute, such as cMDS-DML's Armijo ``gamma``.
    """

    cacheable = False

    def __init__(self, key: str = "feat", scale: PositiveFloat = 1.0):
        # `key`, not `name`: a feature set's `name` in the config is its own label
        self.key = key
        self.scale = scale

    def extract(self, dataset: Dataset, n_jobs: int = 1, progress: bool = False) -> np.ndarray:
        if self.key not in dataset.arrays:
            raise DataError(f"features array: dataset {dataset.name!r} ships no array {self.key!r} "
                            f"(it has: {', '.join(dataset.arrays) or 'none'})")
        a = np.asarray(dataset.arrays[self.key], dtype=float)
        return a.reshape(len(a), -1) * float(self.scale)

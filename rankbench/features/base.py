"""Base class of feature extractors.

An extractor is registered in :data:`rankbench.registry.features`; its ``__init__`` only stores
parameters (scikit-learn style, so ``get_params`` works and keys the on-disk cache). It either
overrides :meth:`Extractor.transform_image` (one image -> 1-D vector; the base class loops over the
dataset with a progress bar and can run in parallel) or overrides :meth:`Extractor.extract` to work
on the whole dataset at once (e.g. features shipped with the data).

Bump ``version`` when an extractor's output changes for the same parameters, so stale cache
entries are not reused.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator

from ..datasets.base import Dataset


class Extractor(BaseEstimator):
    """Abstract feature extractor (see module docstring)."""

    version = 1
    #: Extractors that read ``dataset.arrays`` rather than images set this False: they are cheap
    #: and are not cached.
    cacheable = True

    def transform_image(self, img: np.ndarray) -> np.ndarray:
        """One image -> 1-D feature vector; subclasses override this or :meth:`extract`."""
        raise TypeError(f"{type(self).__name__} defines neither transform_image nor extract")

    def extract(self, dataset: Dataset, n_jobs: int = 1, progress: bool = False) -> np.ndarray:
        """Features of every item, shape (n_items, n_dims), float32 or float64."""
        from ..engine.progress import progress_bar

        n = len(dataset)
        if n_jobs == 1 or n < 64:
            rows = [self.transform_image(dataset.image(i))
                    for i in progress_bar(range(n), desc=f"features {self.registry_name}", enabled=progress)]
        else:
            from joblib import Parallel, delayed

            chunks = np.array_split(np.arange(n), n_jobs * 4)
            parts = Parallel(n_jobs=n_jobs)(
                delayed(_extract_chunk)(self, dataset, c) for c in chunks
            )
            rows = [r for part in parts for r in part]
        return np.vstack(rows)

    def cache_key(self) -> dict:
        return {"extractor": self.registry_name, "version": self.version, "params": self.get_params()}


def _extract_chunk(extractor: Extractor, dataset: Dataset, idx: np.ndarray) -> list[np.ndarray]:
    return [extractor.transform_image(dataset.image(int(i))) for i in idx]

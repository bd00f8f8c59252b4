"""Base class of feature extractors.

An extractor is registered in :data:`rankbench.registry.features`; its ``__init__`` only stores
parameters (scikit-learn style, so ``get_params`` works and keys the on-disk cache), each annotated
with its constraint (:mod:`rankbench.params`). It overrides :meth:`Extractor.transform_image`
(one image -> 1-D vector) or :meth:`Extractor.transform_batch` (a list of images -> one row
each, for extractors that share work across images, e.g. FFTs), or :meth:`Extractor.extract` to
work on the whole dataset at once (features shipped with the data). The base class feeds the
images in batches, in parallel worker processes when asked, and reports progress.

The disk cache keys an extractor's features by its parameters and its code
(:meth:`Extractor.cache_key`), so an edited extractor never reuses old entries; list parameters
that change only how the work is done (batch sizes) in ``execution_params`` so they do not key
the cache.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator

from ..datasets.base import Dataset
from ..errors import DataError
from ..utils.diskcache import code_fingerprint
from ..utils.progress import Progress


class Extractor(BaseEstimator):
    """Abstract feature extractor (see module docstring)."""

    #: Extractors that read ``dataset.arrays`` rather than images set this False: they are cheap
    #: and are not cached.
    cacheable = True
    #: parameters that do not change the features (left out of the cache key)
    execution_params: tuple[str, ...] = ()
    #: images per batch when the extractor has no ``batch_size`` parameter
    default_batch = 64

    def transform_image(self, img: np.ndarray) -> np.ndarray:
        """One image -> 1-D feature vector; subclasses override this or :meth:`transform_batch`."""
        if type(self).transform_batch is Extractor.transform_batch:
            raise TypeError(f"{type(self).__name__} defines neither transform_image, transform_batch nor extract")
        return self.transform_batch([img])[0]

    def transform_batch(self, imgs: list[np.ndarray]) -> np.ndarray:
        """A list of images -> (len(imgs), n_dims)."""
        rows = [np.asarray(self.transform_image(im)).ravel() for im in imgs]
        sizes = [r.size for r in rows]
        if len(set(sizes)) > 1:
            raise _Ragged(next(k for k, n in enumerate(sizes) if n != sizes[0]), sizes)
        return np.vstack(rows)

    def _batch(self) -> int:
        return int(getattr(self, "batch_size", None) or self.default_batch)

    def extract(self, dataset: Dataset, n_jobs: int = 1, progress: bool = False) -> np.ndarray:
        """Features of every item, shape (n_items, n_dims), float32 or float64."""
        n, size = len(dataset), self._batch()
        chunks = [np.arange(s, min(s + size, n)) for s in range(0, n, size)]
        parts = []
        with Progress(n, f"features {self.registry_name}", progress, min_interval=30) as bar:
            if n_jobs == 1 or len(chunks) == 1:
                done = (_extract_chunk(self, dataset, c) for c in chunks)
            else:
                from joblib import Parallel, delayed

                done = Parallel(n_jobs=n_jobs, return_as="generator")(
                    delayed(_extract_chunk)(self, dataset, c) for c in chunks)
            for c, part in zip(chunks, done):   # in order, as each chunk is done
                if parts and part.shape[1] != parts[0].shape[1]:
                    raise _unequal(self, dataset, 0, int(c[0]), parts[0].shape[1], part.shape[1])
                parts.append(part)
                bar.step(len(c))
        return np.vstack(parts)

    def n_features(self, dataset: Dataset) -> int | None:
        """The length of an item's feature vector without extracting every item (for the plan's
        checks of parameters bounded by the data): the features of the first item; None when
        the extractor works on the whole dataset at once (its own :meth:`extract`) and does not
        say."""
        if type(self).extract is not Extractor.extract or not len(dataset):
            return None
        return int(np.asarray(self.transform_batch([dataset.image(0)])).reshape(1, -1).shape[1])

    def cache_key(self) -> dict:
        """What keys the features besides the dataset: registry name, parameters (but
        ``execution_params``) and :func:`rankbench.utils.diskcache.code_fingerprint` (``code``:
        None when the source cannot be read, and then nothing is cached)."""
        params = {k: v for k, v in self.get_params().items() if k not in self.execution_params}
        return {"extractor": self.registry_name, "code": code_fingerprint(type(self)), "params": params}


def _extract_chunk(extractor: Extractor, dataset: Dataset, idx: np.ndarray) -> np.ndarray:
    try:
        return extractor.transform_batch([dataset.image(int(i)) for i in idx])
    except _Ragged as exc:
        raise _unequal(extractor, dataset, int(idx[0]), int(idx[exc.k]), exc.sizes[0], exc.sizes[exc.k]) from None


class _Ragged(ValueError):
    """Images of one batch gave vectors of different lengths (``k``: the first unlike the first)."""

    def __init__(self, k: int, sizes: list[int]):
        super().__init__(f"feature vectors of lengths {sorted(set(sizes))}")
        self.k, self.sizes = k, sizes


def _unequal(extractor: Extractor, dataset: Dataset, first: int, row: int, n_first: int, n_row: int) -> DataError:
    """Two items whose features differ in length (images of different sizes, for ``pixels``)."""
    def item(i: int) -> str:
        path = dataset.items["path"].iat[i] if "path" in dataset.items.columns else None
        return f"item {dataset.items['id'].iat[i]!r}" + (f" ({path})" if path is not None else "")

    shape = (lambda i: "x".join(map(str, np.asarray(dataset.image(i)).shape[:2])))
    return DataError(f"dataset {dataset.name!r}, extractor {extractor.registry_name}: {item(row)} gives {n_row} "
                     f"values, {item(first)} gives {n_first} (images of {shape(row)} and {shape(first)} pixels); "
                     "expected one length for every item: give the images one size")

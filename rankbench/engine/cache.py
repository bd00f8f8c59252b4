"""The engine's features, kept in the disk cache (:mod:`rankbench.utils.diskcache`, kind ``features``).

An entry is keyed by the dataset's content (its files' fingerprint), the extractor's registry
name, its parameters (but its ``execution_params``) and its code (:meth:`Extractor.cache_key`), so
changing any of them computes afresh and a second run with the same ones loads instantly.
Processes asking for the same features wait for the first to compute them. Features enter a run
only as real, finite numbers small enough for every squared distance between two items to be
finite (:func:`checked_features`): a NaN, an infinity or a value of 1e300 is one line naming the
extractor, the dataset and the first item, never a distance of infinity that k-NN then sorts.
"""

from __future__ import annotations

import re
import time

import numpy as np

from ..datasets.base import Dataset
from ..errors import DataError
from ..features.base import Extractor
from ..utils.diskcache import cached, digest

#: the largest squared norm a row may have: then |x - y|^2 <= 2 |x|^2 + 2 |y|^2 is finite
_MAX_SQUARED_NORM = np.finfo(float).max / 4
#: below this, every value's square underflows (to a subnormal, then 0): all squared distances tie
_MIN_LARGEST_VALUE = np.sqrt(np.finfo(float).tiny)


def feature_key(dataset: Dataset, extractor: Extractor) -> str | None:
    """The cache key of the extractor's features of the dataset (None: not cacheable, as its
    code cannot be read)."""
    key = extractor.cache_key()
    if key["code"] is None:
        return None
    slug = re.sub(r"[^A-Za-z0-9_.-]", "_", str(extractor.registry_name))[-40:]
    return f"{slug}-{digest(dataset.fingerprint, key)}"


def get_features(dataset: Dataset, extractor: Extractor, n_jobs: int = 1, progress: bool = False,
                 use_cache: bool = True, info: dict | None = None) -> np.ndarray:
    """The extractor's features for every item, from the cache when possible.

    ``info``, when given, is filled with ``cached`` (whether they came from the cache) and
    ``extract_seconds`` (the time the extraction took, this time or when the entry was made; it
    is stored with the entry).
    """
    info = {} if info is None else info

    def extract() -> dict:
        t0 = time.perf_counter()
        X = np.asarray(extractor.extract(dataset, n_jobs=n_jobs, progress=progress))
        return {"X": X, "extract_seconds": round(time.perf_counter() - t0, 3)}

    key = feature_key(dataset, extractor) if extractor.cacheable and dataset.fingerprint else None
    entry, hit = cached("features", key or "", extract, enabled=use_cache and key is not None)
    info.update(cached=hit, extract_seconds=entry["extract_seconds"])
    return checked_features(entry["X"], extractor, dataset)


def checked_features(X, extractor: Extractor, dataset: Dataset) -> np.ndarray:
    """``X`` when it is one row of real numbers per item, each finite and every squared distance
    between two rows finite, and not all below the scale whose squares underflow; otherwise a
    DataError naming the extractor, the dataset and the first bad item."""
    where = f"features of extractor {extractor.registry_name!r} on dataset {dataset.name!r}"
    X = np.asarray(X)
    if X.dtype.kind not in "biuf" or X.ndim < 1 or len(X) != len(dataset) or (len(X) and not X[:1].size):
        raise DataError(f"{where}: expected real numbers, one row per item ({len(dataset)} rows), got shape "
                        f"{X.shape} of {X.dtype}")
    flat = X.reshape(len(X), -1).astype(float, copy=False)
    with np.errstate(over="ignore", invalid="ignore"):
        sq = np.einsum("ij,ij->i", flat, flat)
    bad = ~np.isfinite(flat).all(axis=1)
    big = ~bad & ~(sq <= _MAX_SQUARED_NORM)
    for rows, what in ((bad, "NaN or infinite values"),
                       (big, f"values up to {np.abs(flat[big]).max() if big.any() else 0:.3g}, whose squared "
                             "distances overflow to infinity (rescale them)")):
        if rows.any():
            i = int(np.flatnonzero(rows)[0])
            ident = f" (id {dataset.items['id'].iat[i]!r})" if "id" in dataset.items.columns else ""
            raise DataError(f"{where}: item {i + 1}{ident}: expected finite features, got {what}; "
                            f"{int(rows.sum())} such item(s)")
    top = max(float(flat.max()), -float(flat.min())) if flat.size else 0.0   # |x|'s largest, with no copy of X
    if 0 < top < _MIN_LARGEST_VALUE:
        raise DataError(f"{where}: expected features on a scale whose squares are numbers, got values at most "
                        f"{top:.3g}: every squared distance underflows to 0 and every ranking ties (rescale them)")
    return X

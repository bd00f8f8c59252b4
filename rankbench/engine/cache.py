"""The engine's features, kept in the disk cache (:mod:`rankbench.utils.diskcache`, kind ``features``).

An entry is keyed by the dataset's content (its files' fingerprint), the extractor's registry
name, its parameters (but its ``execution_params``) and its code (:meth:`Extractor.cache_key`), so
changing any of them computes afresh and a second run with the same ones loads instantly.
Processes asking for the same features wait for the first to compute them.
"""

from __future__ import annotations

import re
import time

import numpy as np

from ..datasets.base import Dataset
from ..features.base import Extractor
from ..utils.diskcache import cache_dir, cached, digest

__all__ = ["cache_dir", "feature_key", "get_features"]


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
    return entry["X"]

"""On-disk feature cache keyed by dataset content and extractor parameters.

The cache folder is ``$RANKBENCH_CACHE`` or ``~/.cache/rankbench``; entries are ``.npy`` files
named by a digest of (dataset fingerprint, extractor name, version, parameters), so changing any
parameter computes afresh and a second run with the same ones loads instantly. A corrupt entry is
recomputed, never trusted; an unwritable cache only costs time.
"""

from __future__ import annotations

import hashlib
import json
import re

import numpy as np

from ..datasets.base import Dataset
from ..features.base import Extractor
from ..utils.diskcache import cache_dir
from ..utils.fileio import atomic_save_npy

__all__ = ["cache_dir", "feature_key", "get_features"]


def feature_key(dataset: Dataset, extractor: Extractor) -> str:
    blob = json.dumps({"dataset": dataset.fingerprint, **extractor.cache_key()}, sort_keys=True, default=str)
    return hashlib.sha1(blob.encode()).hexdigest()[:20]


def get_features(dataset: Dataset, extractor: Extractor, n_jobs: int = 1, progress: bool = False,
                 use_cache: bool = True) -> np.ndarray:
    """The extractor's features for every item, from the cache when possible."""
    if not (use_cache and extractor.cacheable and dataset.fingerprint):
        return np.asarray(extractor.extract(dataset, n_jobs=n_jobs, progress=progress))
    slug = re.sub(r"[^A-Za-z0-9_.-]", "_", str(extractor.registry_name))[-40:]
    path = cache_dir() / "features" / f"{slug}-{feature_key(dataset, extractor)}.npy"
    if path.is_file():
        try:
            return np.load(path, allow_pickle=False)
        except (ValueError, OSError, EOFError):
            path.unlink(missing_ok=True)
    X = np.asarray(extractor.extract(dataset, n_jobs=n_jobs, progress=progress))
    try:
        atomic_save_npy(path, X)
    except OSError:
        pass
    return X

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
import time

import numpy as np

from ..datasets.base import Dataset
from ..features.base import Extractor
from ..utils.diskcache import cache_dir
from ..utils.fileio import atomic_save_npy, atomic_write_json

__all__ = ["cache_dir", "feature_key", "get_features"]


def feature_key(dataset: Dataset, extractor: Extractor) -> str:
    blob = json.dumps({"dataset": dataset.fingerprint, **extractor.cache_key()}, sort_keys=True, default=str)
    return hashlib.sha1(blob.encode()).hexdigest()[:20]


def get_features(dataset: Dataset, extractor: Extractor, n_jobs: int = 1, progress: bool = False,
                 use_cache: bool = True, info: dict | None = None) -> np.ndarray:
    """The extractor's features for every item, from the cache when possible.

    ``info``, when given, is filled with ``cached`` (whether they came from the cache) and
    ``extract_seconds`` (the time the extraction took, this time or when the entry was made; a
    small ``.json`` beside each cache entry keeps it).
    """
    info = {} if info is None else info
    if not (use_cache and extractor.cacheable and dataset.fingerprint):
        t0 = time.perf_counter()
        X = np.asarray(extractor.extract(dataset, n_jobs=n_jobs, progress=progress))
        info.update(cached=False, extract_seconds=round(time.perf_counter() - t0, 3))
        return X
    slug = re.sub(r"[^A-Za-z0-9_.-]", "_", str(extractor.registry_name))[-40:]
    path = cache_dir() / "features" / f"{slug}-{feature_key(dataset, extractor)}.npy"
    side = path.with_suffix(".json")
    if path.is_file():
        try:
            X = np.load(path, allow_pickle=False)
            try:
                info.update(cached=True, extract_seconds=json.loads(side.read_text()).get("extract_seconds"))
            except (OSError, ValueError, AttributeError):
                info.update(cached=True, extract_seconds=None)
            return X
        except (ValueError, OSError, EOFError):
            path.unlink(missing_ok=True)
    t0 = time.perf_counter()
    X = np.asarray(extractor.extract(dataset, n_jobs=n_jobs, progress=progress))
    info.update(cached=False, extract_seconds=round(time.perf_counter() - t0, 3))
    try:
        atomic_save_npy(path, X)
        atomic_write_json(side, {"extract_seconds": info["extract_seconds"], "shape": list(X.shape)})
    except OSError:
        pass
    return X

"""Input checks of the pairwise rankers (the ``PairwiseRanker`` capability's ``fit``)."""

from __future__ import annotations

import numpy as np


def check_pairs(pairs, sign, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    """``(pairs, sign)`` as int arrays, or ValueError naming what is wrong."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    sign = np.asarray(sign, dtype=np.int64).ravel()
    if len(sign) != len(pairs):
        raise ValueError(f"pairs ({len(pairs)}) and sign ({len(sign)}) differ in length")
    if len(pairs) and (pairs.min() < 0 or pairs.max() >= n_items):
        raise ValueError(f"pair indices must lie in [0, {n_items})")
    if not np.isin(sign, (-1, 0, 1)).all():
        raise ValueError("sign must be +1, -1 (ordered) or 0 (similar)")
    if not (sign != 0).any():
        raise ValueError("at least one ordered pair (sign != 0) is needed")
    return pairs, sign


def as_grid(value) -> list:
    """A parameter given as one value or a list of candidates, as a list."""
    return list(value) if isinstance(value, (list, tuple, np.ndarray)) else [value]

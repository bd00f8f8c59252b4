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


def check_constraints(constraints, n_rows: int) -> np.ndarray:
    """``constraints`` as an (c, 3) int array (i, j, same) of rows < ``n_rows``, same in {0, 1}."""
    if constraints is None:
        return np.zeros((0, 3), dtype=np.intp)
    C = np.asarray(constraints)
    if C.size == 0:
        return np.zeros((0, 3), dtype=np.intp)
    if C.ndim != 2 or C.shape[1] != 3:
        raise ValueError(f"constraints must be an (c, 3) array of (i, j, same), got shape {C.shape}")
    if not np.issubdtype(C.dtype, np.integer):
        if not np.all(np.equal(np.mod(C, 1), 0)):
            raise ValueError("constraints must hold integers (row indices and same = 0 / 1)")
        C = C.astype(np.intp)
    if C[:, :2].min() < 0 or C[:, :2].max() >= n_rows:
        raise ValueError(f"constraint row indices must lie in 0..{n_rows - 1} (the rows of X)")
    if not np.isin(C[:, 2], (0, 1)).all():
        raise ValueError("the third column of constraints (same) must be 1 (same object) or 0 (different)")
    return C.astype(np.intp)

"""Target neighbours of ordinal metric learners (Yu & Li eq. (2); Li et al. 2015)."""

from __future__ import annotations

import numpy as np


def target_neighbours(X: np.ndarray, y: np.ndarray, K: int) -> np.ndarray:
    """(P, 2) index pairs ``(i, j)``: ``j`` is one of the ``K`` nearest same-label points of ``i``
    (eq. (2)); fewer when a label has at most ``K`` items. Ties go to the lower index."""
    from scipy.spatial.distance import cdist

    D = cdist(X, X, "sqeuclidean")
    same = np.asarray(y)[:, None] == np.asarray(y)[None, :]
    np.fill_diagonal(same, False)
    D = np.where(same, D, np.inf)
    k = min(int(K), len(X) - 1)
    nn = np.argsort(D, axis=1, kind="stable")[:, :k]
    i = np.repeat(np.arange(len(X)), k)
    j = nn.ravel()
    keep = np.isfinite(D[i, j])
    return np.column_stack([i[keep], j[keep]])

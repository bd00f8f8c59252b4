"""Target neighbours of ordinal metric learners (Yu & Li eq. (2); Li et al. 2015)."""

from __future__ import annotations

import numpy as np

from ...errors import InputError


def ordinal_labels(y, who: str) -> np.ndarray:
    """``y`` as finite numbers holding at least two labels: one label (or a NaN, an unlabelled
    row the protocol leaves out) gives no ordering to learn, and every distance would be 0."""
    try:
        y = np.asarray(y, float)
    except (TypeError, ValueError):
        raise InputError(f"{who}.fit: y holds labels that are not numbers; expected ordinal labels "
                         "(numbers whose order is the ordering)") from None
    if not np.isfinite(y).all():
        raise InputError(f"{who}.fit: y holds {int((~np.isfinite(y)).sum())} non-finite label(s); "
                         "expected a finite ordinal label on every row")
    if len(np.unique(y)) < 2:
        raise InputError(f"{who}.fit: y holds one class (label {y[0]:g}); expected at least two ordinal labels")
    return y


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

"""Choosing hyper-parameters of the ranking SVMs on training data only."""

from __future__ import annotations

from typing import Callable

import numpy as np

from ...metrics import match_ranks
from ...utils.progress import tick


def cv_pair_accuracy(fit_score: Callable, pairs: np.ndarray, sign: np.ndarray, grid: list[dict],
                     n_folds: int, rng: np.random.Generator, unit: str = "items") -> tuple[dict, list[float]]:
    """The grid point with the best mean held-out pair accuracy (ties: first in grid).

    ``unit="items"``: the training *items* are split into ``n_folds`` folds; fold k trains on the
    pairs whose two items are both outside fold k and is scored on the ordered pairs inside fold
    k. ``unit="pairs"``: the training *pairs* are split into folds (a RankSVM's training examples,
    one reading of "10-fold cross-validation" in Sharaf et al.); this leaks, as a held-out pair
    shares its images with training pairs, which rewards memorising images (larger C).
    ``fit_score(params, pair_mask) -> item scores``.
    """
    if unit == "pairs":
        pair_fold = rng.permutation(len(pairs)) % n_folds
        pf = np.column_stack([pair_fold, pair_fold])
    else:
        n_items = int(pairs.max()) + 1
        item_fold = rng.permutation(n_items) % n_folds
        pf = item_fold[pairs]
    scores = []
    for i, params in enumerate(grid):
        tick("cv point", i + 1, len(grid))
        accs = []
        for k in range(n_folds):
            tick("cv fold", k + 1, n_folds)
            train = (pf[:, 0] != k) & (pf[:, 1] != k)
            test = (pf[:, 0] == k) & (pf[:, 1] == k) & (sign != 0)
            if not test.any() or not (train & (sign != 0)).any():
                continue
            f = fit_score(params, train)
            d = (f[pairs[test, 0]] - f[pairs[test, 1]]) * sign[test]
            accs.append(np.mean(d > 0))
        scores.append(float(np.mean(accs)) if accs else float("nan"))
    best = int(np.nanargmax(scores)) if not np.isnan(scores).all() else 0
    return grid[best], scores


def validation_cmc(S: np.ndarray, y: np.ndarray, cams, max_rank: int) -> float:
    """Mean matching rate over ranks 1..max_rank of every image as a probe against the others.

    ``S`` is the (m, m) similarity of the validation images with each other. Candidates of a probe
    are the images of the other camera(s) (every other image without cameras); probes with no
    true or no wrong candidate are left out. Ranks as :func:`rankbench.metrics.match_ranks`.
    """
    y = np.asarray(y)
    cand = ~np.eye(len(y), dtype=bool)
    if cams is not None:
        cams = np.asarray(cams)
        cand &= cams[:, None] != cams[None, :]
    same = (y[:, None] == y[None, :]) & cand
    ok = same.any(1) & (cand & ~same).any(1)
    if not ok.any():
        return 0.0
    ranks = match_ranks(S[ok], y[ok], y, candidates=cand[ok])
    return float(np.mean([(ranks <= r).mean() for r in range(1, max_rank + 1)]))

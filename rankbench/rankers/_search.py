"""Hyper-parameters chosen on training data only: the rankers' one search convention.

A searched hyper-parameter is declared as one value or a list of candidates
(:data:`rankbench.params.PositiveFloatGrid` for a positive float; ``C: [0.01, 0.1, 1]`` in a
config): one value is used as it is, a list of more than one is chosen by the ranker's inner
cross-validation on its training rows, and the chosen value is reported in ``diagnostics_``.
Several searched parameters make the product grid (:func:`grid_points`).

The ranker makes the folds (over items, people, pairs, stratified by label: what its data
allow) and scores every candidate on every fold, which lets a fold share work between candidates
(warm starts along the grid, one descent recorded at several iteration caps); :func:`choose`
takes that table and picks one rule for all: the best mean over the folds that scored a candidate,
ties to the first in the grid. Scores for rankers' common cases are here too
(:func:`cv_pair_accuracy`, :func:`validation_cmc`).
"""

from __future__ import annotations

import itertools
from typing import Callable

import numpy as np

from ..metrics import cmc_curve
from ..utils.progress import tick


def as_grid(value) -> list:
    """A parameter given as one value or a list of candidates, as a list."""
    return list(value) if isinstance(value, (list, tuple, np.ndarray)) else [value]


def grid_points(**grids) -> list[dict]:
    """Every combination of the candidates of each named parameter, the last name varying fastest:
    ``grid_points(C=[1, 10], gamma=0.5)`` is ``[{"C": 1, "gamma": 0.5}, {"C": 10, "gamma": 0.5}]``."""
    names = list(grids)
    return [dict(zip(names, values)) for values in itertools.product(*(as_grid(grids[n]) for n in names))]


def choose(scores, minimise: bool = False) -> tuple[int, np.ndarray]:
    """The chosen candidate of a cross-validation: ``(index, mean score of each candidate)``.

    ``scores`` is (folds, candidates), NaN where a fold did not score a candidate (a fold without
    held-out pairs, a grid scan stopped early). A candidate's mean is over the folds that scored
    it (NaN when none did); the best mean wins (the largest, or the smallest with ``minimise``),
    ties to the first candidate, and the first when no candidate has a score.
    """
    S = np.asarray(scores, dtype=float).reshape(-1, np.shape(scores)[-1])
    mean = np.array([np.mean(col[~np.isnan(col)]) if (~np.isnan(col)).any() else np.nan for col in S.T])
    if np.isnan(mean).all():
        return 0, mean
    return int(np.nanargmin(mean) if minimise else np.nanargmax(mean)), mean


def cv_pair_accuracy(fit_score: Callable, pairs: np.ndarray, sign: np.ndarray, grid: list[dict],
                     n_folds: int, rng: np.random.Generator, unit: str = "items") -> tuple[dict, list[float]]:
    """The grid point with the best mean held-out pair accuracy (:func:`choose`) and every point's mean.

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
    scores = np.full((n_folds, len(grid)), np.nan)
    for i, params in enumerate(grid):
        tick("cv point", i + 1, len(grid))
        for k in range(n_folds):
            tick("cv fold", k + 1, n_folds)
            train = (pf[:, 0] != k) & (pf[:, 1] != k)
            test = (pf[:, 0] == k) & (pf[:, 1] == k) & (sign != 0)
            if not test.any() or not (train & (sign != 0)).any():
                continue
            f = fit_score(params, train)
            d = (f[pairs[test, 0]] - f[pairs[test, 1]]) * sign[test]
            scores[k, i] = np.mean(d > 0)
    best, mean = choose(scores)
    return grid[best], mean.tolist()


def validation_cmc(S: np.ndarray, y: np.ndarray, cams, max_rank: int) -> float:
    """Mean matching rate over ranks 1..max_rank of every image as a probe against the others.

    ``S`` is the (m, m) similarity of the validation images with each other. Candidates of a probe
    are the images of the other camera(s) (every other image without cameras); probes with no
    true or no wrong candidate are left out, and NaN is returned when none is left (a fold of one
    person: it scores no candidate, as :func:`choose` reads NaN). Ranks as
    :func:`rankbench.metrics.cmc_curve` counts them (ties at their expected value).
    """
    y = np.asarray(y)
    cand = ~np.eye(len(y), dtype=bool)
    if cams is not None:
        cams = np.asarray(cams)
        cand &= cams[:, None] != cams[None, :]
    same = (y[:, None] == y[None, :]) & cand
    ok = same.any(1) & (cand & ~same).any(1)
    if not ok.any():
        return float("nan")
    curve = cmc_curve(S[ok], y[ok], y, candidates=cand[ok])
    return float(np.mean([curve[min(r, len(curve)) - 1] for r in range(1, max_rank + 1)]))

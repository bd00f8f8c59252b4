"""Shared input handling of the rankers that boost over base-model outputs (Merler et al.).

Two readings of the weak rankers' range (``weak_range``), both in the paper:

``"symmetric"`` (the paper's experiments, the default)
    h = o, the base-model output itself: "In all the experiments, the outputs of above models is
    normalized to the range [-1,1]" (Sec. 5.1), and Sec. 3: "weak ranking features can take any
    real values in the range [-1, 1]".
``"unit"`` (Figures 2 and 3)
    h = (o + 1) / 2 in [0, 1], the range the algorithm outlines print.

The readings rank differently. RankBoost's alpha = 1/2 ln((1 + r) / (1 - r)) (Sec. 3) comes from
the linear bound 2 e^{-a x} <= (1 + x) e^{-a} + (1 - x) e^{a}, which holds for pair differences
x = h(x0) - h(x1) in [-1, 1], i.e. for h in [0, 1], and gives |r| < 1. With h in [-1, 1], x lies
in [-2, 2] and r = sum_pairs C (h(x0) - h(x1)) can reach |r| >= 1 when a base model separates the
boosting rows well: alpha is then undefined. The boosters keep |r| at ``R_MAX`` in that case and
*report* it (``diagnostics_["bound_violations"]``: rounds whose chosen |r| reached 1, and
``max_abs_r``; one :class:`BoundWarning` per fit), never silently. For Imbalanced RankBoost the
readings also differ in what pruning means: with h in [0, 1] every increment alpha h of a surviving
item is >= 0, so an item left below a threshold stays below every survivor for good; with h in
[-1, 1] survivors can also fall below it.
"""

from __future__ import annotations

import math
import warnings
from typing import Literal

import numpy as np

from ...errors import InputError
from .._validation import checked_input
from ..base import LazyColumns, as_columns

#: |r| is kept below 1 so that alpha stays finite when one model separates the training rows
R_MAX = 1.0 - 1e-10

WeakRange = Literal["symmetric", "unit"]


class BoundWarning(UserWarning):
    """RankBoost's linear bound (|r| < 1) does not hold for a chosen weak ranker."""


def to_weak(o: np.ndarray, weak_range: str) -> np.ndarray:
    """Weak-ranker values h from base-model outputs ``o`` in [-1, 1] (module docstring)."""
    return o if weak_range == "symmetric" else (o + 1.0) / 2.0


def training_outputs(ranker, H, y, weak_range: str = "symmetric") -> tuple[np.ndarray, np.ndarray]:
    """(h as an (n, K) float array, s = +1 relevant / -1 not) from the outputs ``H`` in [-1, 1] that
    ``ranker.fit`` was given (checked by :func:`~rankbench.rankers._validation.checked_input`, which
    sets ``n_features_in_``; a LazyColumns is evaluated here)."""
    H = checked_input(ranker, H, "fit", y=y)
    y = np.asarray(y).ravel()
    who = f"{type(ranker).__name__}.fit"
    if H.min() < -1 - 1e-9 or H.max() > 1 + 1e-9:
        raise InputError(f"{who}: base-model outputs must be in [-1, 1], got values in "
                         f"[{H.min():.3g}, {H.max():.3g}] (it boosts base models: use protocol "
                         "stacked_retrieval)")
    pos = y > 0
    if pos.all() or not pos.any():
        raise InputError(f"{who}: needs relevant and irrelevant training rows, got {int(pos.sum())} relevant "
                         f"of {len(y)} (one class only)")
    return to_weak(np.clip(H, -1.0, 1.0), weak_range), np.where(pos, 1.0, -1.0)


def scoring_columns(ranker, X, method: str) -> LazyColumns:
    """The base-model outputs a booster scores, checked (a LazyColumns for its shape only: its
    columns are checked as they are computed) and as :class:`~rankbench.rankers.base.LazyColumns`."""
    cols = as_columns(checked_input(ranker, X, method, lazy_ok=True))
    cols.read_by = f"{type(ranker).__name__}.{method}"
    return cols


def staged_scores(cols: LazyColumns, models, alphas, thresholds=None, weak_range: str = "symmetric"):
    """f_t = f_{t-1} + alpha_t h_t on the items with f_{t-1} >= theta_t, after each round t (a generator
    of one array, updated in place); RankBoost without ``thresholds``, Imbalanced RankBoost (eq. 4) with them.

    ``thresholds`` must not decrease, as Imbalanced RankBoost learns them (theta_0 is not applied:
    round 0 scores every item). An item below theta_t is not updated, so it stays below every later
    threshold: the items still ranked only shrink, and a model's outputs are needed exactly on the
    items still ranked at its first round, a superset of those still ranked at its later rounds.
    So the rounds run in blocks that start where a model is used for the first time: a block
    evaluates that model once, as one batch over the items still ranked (``cols`` counts every
    evaluation), reads the outputs of its other models on those items once, and then each of its
    rounds is a few array operations on them (compare with theta_t, add alpha_t h_t where the
    item is still ranked): the same additions in the same order as one round at a time over the
    whole collection, without a look-up of the model's outputs per round.
    """
    models = np.asarray(models, dtype=int)
    alphas = np.asarray(alphas, dtype=float)
    T, n = len(models), cols.shape[0]
    theta = None if thresholds is None else np.r_[-np.inf, np.asarray(thresholds, dtype=float)[1:]]
    first = np.zeros(T + 1, dtype=bool)
    first[np.unique(models, return_index=True)[1]] = True
    first[T] = True
    f = np.zeros(n)
    act = np.arange(n)
    t = 0
    while t < T:
        if theta is not None:
            act = act[f[act] >= theta[t]]
        end = t + 1 + int(np.argmax(first[t + 1:]))                  # the next first use, or T
        used, pos = np.unique(models[t:end], return_inverse=True)
        H = to_weak(np.stack([cols.column(j, act) for j in used]), weak_range)   # (models, items still ranked)
        whole = len(act) == n                                          # every item: f itself is updated
        fa = f if whole else f[act]
        alive = np.ones(len(act), dtype=bool)
        above = np.empty(len(act), dtype=bool)
        step = np.empty(len(act))
        everyone = True                                                # no item has stopped in this block
        for l, p in zip(range(t, end), pos):
            if theta is not None and l > t:
                np.greater_equal(fa, theta[l], out=above)
                if not (everyone and above.all()):
                    everyone = False
                    alive &= above
            np.multiply(H[p], alphas[l], out=step)
            np.add(fa, step, out=fa, where=True if everyone else alive)
            if not whole:
                f[act] = fa
            yield f
        act = act[alive]
        t = end


def side_weights(f: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, float]:
    """RankBoost's factorised pair distribution (Freund et al. 2003, Sec. 3.2; Merler eq. 13).

    v(x) = exp(-f(x)) / Z+ for relevant x, exp(f(x)) / Z- for irrelevant x, so that each side
    sums to 1 and D(x0, x1) = v(x0) v(x1); returns (v, log Z) with Z = Z+ Z- =
    sum over (relevant, irrelevant) pairs of exp(f(irrelevant) - f(relevant)), the current loss.
    """
    e = -s * f  # exponent: -f for relevant, +f for irrelevant
    v = np.empty_like(f)
    log_z = 0.0
    for side in (s > 0, s < 0):
        m = e[side].max()
        w = np.exp(e[side] - m)
        tot = w.sum()
        v[side] = w / tot
        log_z += m + np.log(tot)
    return v, log_z


def clip_r(r: float) -> float:
    """r kept within [-R_MAX, R_MAX] (a scalar: no array round trip, once per round)."""
    return min(max(float(r), -R_MAX), R_MAX)


def alpha_of(r: float) -> float:
    """alpha = 1/2 ln((1 + r) / (1 - r)) (Merler eqs. 2 and 11)."""
    r = clip_r(r)
    return 0.5 * math.log((1.0 + r) / (1.0 - r))


class BoundLog:
    """Counts the rounds whose chosen |r| reached 1 (the bound behind alpha fails there)."""

    def __init__(self) -> None:
        self.violations = 0
        self.max_abs_r = 0.0

    def see(self, r: float) -> None:
        a = abs(float(r))
        self.max_abs_r = max(self.max_abs_r, a)
        self.violations += a >= R_MAX

    def report(self, who: str, weak_range: str) -> dict[str, float]:
        """Diagnostics entries; one warning per fit when the bound failed."""
        if self.violations:
            warnings.warn(f"{who}: |r| reached 1 in some rounds (weak_range {weak_range!r}): the linear bound "
                          "behind alpha = 1/2 ln((1 + r) / (1 - r)) does not hold there, |r| was held at 1 - 1e-10 "
                          "(diagnostics: bound_violations, max_abs_r)", BoundWarning, stacklevel=3)
        return {"bound_violations": int(self.violations), "max_abs_r": float(self.max_abs_r)}

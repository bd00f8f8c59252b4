"""Shared input handling of the rankers that boost over base-model outputs (Merler et al.).

The base models' outputs are normalised to [-1, 1] (Sec. 5.1); RankBoost's bound behind
alpha = 1/2 ln((1 + r) / (1 - r)) (Sec. 3, the inequality 2 e^{-a x} <= (1 + x) e^{-a} + (1 - x) e^{a})
holds for x = h(x1) - h(x0) in [-1, 1], i.e. for weak rankers h in [0, 1], which is the range
Figures 2 and 3 state. The boosters therefore use h = (o + 1) / 2 of each output o.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import InputError
from ..base import LazyColumns

#: |r| is kept below 1 so that alpha stays finite when one model separates the training rows
R_MAX = 1.0 - 1e-10


def training_outputs(H, y, who: str) -> tuple[np.ndarray, np.ndarray]:
    """(h in [0, 1] as (n, K) float array, s = +1 relevant / -1 not) from outputs in [-1, 1]."""
    H = np.asarray(H, dtype=float)  # a LazyColumns evaluates every output here
    y = np.asarray(y).ravel()
    if H.ndim != 2 or len(H) != len(y):
        raise InputError(f"{who}: expected base-model outputs of shape ({len(y)}, n_models), got {H.shape}")
    if not np.isfinite(H).all() or H.min() < -1 - 1e-9 or H.max() > 1 + 1e-9:
        raise InputError(f"{who}: base-model outputs must be finite and in [-1, 1], got values in "
                         f"[{np.nanmin(H):.3g}, {np.nanmax(H):.3g}] (it boosts base models: use protocol "
                         "stacked_retrieval)")
    pos = y > 0
    if pos.all() or not pos.any():
        raise InputError(f"{who}: needs relevant and irrelevant training rows, got {int(pos.sum())} relevant "
                         f"of {len(y)}")
    return (np.clip(H, -1.0, 1.0) + 1.0) / 2.0, np.where(pos, 1.0, -1.0)


def weak(cols: LazyColumns, j: int, rows=None) -> np.ndarray:
    """h = (o + 1) / 2 of model j's outputs o on ``rows``."""
    return (cols.column(j, rows) + 1.0) / 2.0


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

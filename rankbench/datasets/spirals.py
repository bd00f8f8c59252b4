"""The two-spirals toy set of Yan, Zhang, Yang & Hauptmann (PKLR, Section 2.3, Figure 3).

The paper gives only the counts (201 positive, 199 negative points) and a picture of two
interleaved spirals; the geometry here is ours: two Archimedean spirals r = theta, the negative
one rotated by pi, so neighbouring arms of opposite classes are pi apart - about one kernel width
for the paper's RBF rho = 0.08 (exp(-0.08 d^2) = 1/e at d = 3.5), which is what makes labels alone
too few to follow the tails. With the defaults (two turns, noise sd 0.3) KLR trained on 40 points
per class errs on about 10% of the rest, mostly on the outer tails, as in the paper's Figure 3(b).
"""

from __future__ import annotations

from typing import Annotated

import numpy as np
import pandas as pd
from pydantic import Field

from ..errors import ConfigError
from ..params import NonNegativeFloat, NonNegativeInt, PositiveFloat
from ..registry import datasets
from .base import Dataset, Loader, fingerprint_arrays


def spiral_arm(n: int, turns: float, start: float) -> np.ndarray:
    """``n`` points on r = theta from angle ``start`` over ``turns`` turns, evenly spaced in arc length.

    The arc length of r = theta grows like theta^2 / 2, so equal arc steps are equal steps in
    theta^2 (otherwise the centre would be crowded and the tails sparse).
    """
    end = start + 2 * np.pi * turns
    theta = np.sqrt(np.linspace(start**2, end**2, n))
    return np.column_stack([theta * np.cos(theta), theta * np.sin(theta)])


@datasets.register("two_spirals")
class TwoSpirals(Loader):
    """Two interleaved spirals (Yan et al. PKLR toy set): 201 positive, 199 negative 2-D points."""

    def __init__(self, n_positive: Annotated[int, Field(ge=2)] = 201, n_negative: Annotated[int, Field(ge=2)] = 199,
                 turns: PositiveFloat = 2.0, start: NonNegativeFloat = np.pi / 2, noise: NonNegativeFloat = 0.3,
                 random_state: NonNegativeInt = 0):
        self.n_positive = n_positive
        self.n_negative = n_negative
        self.turns = turns
        self.start = start
        self.noise = noise
        self.random_state = random_state

    def load(self, data_root=None) -> Dataset:
        if min(self.n_positive, self.n_negative) < 2 or self.turns <= 0 or self.noise < 0:
            raise ConfigError("dataset two_spirals: n_positive, n_negative must be >= 2, turns > 0, noise >= 0")
        rng = np.random.default_rng(self.random_state)
        pos = spiral_arm(self.n_positive, self.turns, float(self.start))
        neg = -spiral_arm(self.n_negative, self.turns, float(self.start))  # rotated by pi
        points = np.vstack([pos, neg]) + self.noise * rng.standard_normal((self.n_positive + self.n_negative, 2))
        label = np.r_[np.ones(self.n_positive, int), np.zeros(self.n_negative, int)]
        items = pd.DataFrame({"id": [f"{'pos' if y else 'neg'}{i:03d}" for i, y in
                                     enumerate(label)], "label": label})
        # "feat" too: the generic feature name, which the `array` extractor reads by default
        return Dataset(name="two_spirals", items=items, arrays={"points": points, "feat": points},
                       info={"classes": [0, 1]},
                       fingerprint=fingerprint_arrays(points, label))

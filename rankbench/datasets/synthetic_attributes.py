"""A generated relative-attributes set: categories with latent attribute strengths, seeded, small.

No download. Each category gets an integer strength per attribute (the category-level ordering of
Parikh & Grauman's PubFig/OSR supervision). Every item is a small RGB image whose look follows its
category's strengths plus per-item noise: attribute 0 sets brightness, attribute 1 the contrast
of oriented stripes (texture / edges), attribute 2 the redness; further attributes mix the three.
``arrays["feat"]`` holds a noisy linear view of the strengths for runs without image features.
"""

from __future__ import annotations

from typing import Annotated

import numpy as np
import pandas as pd
from pydantic import Field

from ..params import NonNegativeFloat, NonNegativeInt, PositiveInt
from ..registry import datasets
from .base import Dataset, Loader, fingerprint_arrays


@datasets.register("synthetic_attributes")
class SyntheticAttributes(Loader):
    """Generated relative attributes (images + arrays["feat"]): categories ordered per attribute.

    Parameters
    ----------
    n_categories, n_per_category : int
        Categories and items per category.
    n_attributes : int
        Attributes (names ``attr0`` ...); strengths are integers 1..n_levels per category.
    n_levels : int
        Distinct strength levels (ties between categories give "similar" pairs).
    n_train_per_category : int
        Items per category marked ``train`` (the official split; the rest are test items).
    image_size : int
        Side of the generated square RGB images.
    noise : float
        Per-item noise relative to one strength level.
    n_feat : int
        Dimensions of ``arrays["feat"]``.
    random_state : int
    """

    def __init__(self, n_categories: Annotated[int, Field(ge=2)] = 5, n_per_category: Annotated[int, Field(ge=2)] = 20,
                 n_attributes: PositiveInt = 3, n_levels: Annotated[int, Field(ge=2)] = 4,
                 n_train_per_category: PositiveInt = 8, image_size: Annotated[int, Field(ge=8)] = 32,
                 noise: NonNegativeFloat = 0.4, n_feat: PositiveInt = 16, random_state: NonNegativeInt = 0):
        self.n_categories = n_categories
        self.n_per_category = n_per_category
        self.n_attributes = n_attributes
        self.n_levels = n_levels
        self.n_train_per_category = n_train_per_category
        self.image_size = image_size
        self.noise = noise
        self.n_feat = n_feat
        self.random_state = random_state

    def load(self, data_root=None) -> Dataset:
        rng = np.random.default_rng(self.random_state)
        c, m, a = int(self.n_categories), int(self.n_per_category), int(self.n_attributes)
        levels = rng.integers(1, int(self.n_levels) + 1, size=(c, a)).astype(float)
        cat = np.repeat(np.arange(c), m)
        # latent per-item strength: the category's level plus noise, scaled to [0, 1]
        latent = (levels[cat] - 1 + rng.normal(scale=self.noise, size=(c * m, a))) / max(self.n_levels - 1, 1)
        mix = np.eye(3, a) if a <= 3 else np.hstack([np.eye(3), rng.dirichlet(np.ones(3), size=a - 3).T])
        look = np.clip(latent @ mix.T, -0.2, 1.2)  # (items, 3): brightness, stripes, redness
        images = self._render(look, rng)
        feat = latent @ rng.normal(size=(a, self.n_feat)) + rng.normal(scale=0.3, size=(c * m, self.n_feat))
        names = [f"cat{k}" for k in range(c)]
        attrs = [f"attr{k}" for k in range(a)]
        train = np.tile(np.arange(m) < int(self.n_train_per_category), c)   # each category's first items
        items = pd.DataFrame({
            "id": [f"{names[k]}_{i}" for k, i in zip(cat, np.tile(np.arange(m), c))],
            "category": [names[k] for k in cat],
            "train": train,
        })
        return Dataset(
            name="synthetic_attributes",
            items=items,
            arrays={"images": images, "feat": feat},
            info={"attributes": attrs, "strength": pd.DataFrame(levels, index=names, columns=attrs)},
            fingerprint=fingerprint_arrays(images, feat, extra="synthetic_attributes"),
        )

    def _render(self, look: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """(items, 3) look parameters -> (items, s, s, 3) uint8 images, all at once."""
        s = int(self.image_size)
        n = len(look)
        yy, xx = np.mgrid[0:s, 0:s] / s
        theta = rng.uniform(0, np.pi, size=n)[:, None, None]
        stripes = np.sin(2 * np.pi * 4 * (xx * np.cos(theta) + yy * np.sin(theta)))
        grey = 0.25 + 0.5 * look[:, 0, None, None] + 0.25 * look[:, 1, None, None] * stripes
        grey = grey + rng.normal(scale=0.03, size=(n, s, s))
        red = 0.5 * look[:, 2, None, None]
        rgb = np.stack([grey + red, grey - 0.5 * red, grey - 0.5 * red], axis=-1)
        return (np.clip(rgb, 0, 1) * 255).astype(np.uint8)

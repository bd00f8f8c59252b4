"""A generated ordinal dataset: labels 0..m-1 along a few informative directions, plus nuisance.

No download. Each item's label ``r`` moves it along ``n_informative`` random directions (a point
per label on a curve, so the ordinal structure is not a single line), with within-label noise;
``n_nuisance`` further dimensions carry larger label-free variation (like pose or lighting in
faces), so Euclidean k-NN is mediocre and a learned metric helps. Rows are grouped by label.
"""

from __future__ import annotations

from typing import Annotated

import numpy as np
import pandas as pd
from pydantic import Field

from ..params import NonNegativeFloat, NonNegativeInt, PositiveInt
from ..registry import datasets
from .base import Dataset, Loader, fingerprint_arrays


@datasets.register("synthetic_ordinal")
class SyntheticOrdinal(Loader):
    """Generated ordinal data (features in arrays["feat"]): informative directions plus nuisance dims.

    Parameters
    ----------
    n_labels, n_per_label : int
        Labels 0..n_labels-1, each with n_per_label items.
    n_informative, n_nuisance : int
        Dimensions that carry the label and dimensions of label-free variation.
    noise : float
        Within-label spread on the informative dimensions (the label step is 1).
    nuisance_scale : float
        Spread of the nuisance dimensions.
    random_state : int
    """

    def __init__(self, n_labels: Annotated[int, Field(ge=2)] = 4, n_per_label: Annotated[int, Field(ge=2)] = 40,
                 n_informative: PositiveInt = 3, n_nuisance: NonNegativeInt = 20, noise: NonNegativeFloat = 0.4,
                 nuisance_scale: NonNegativeFloat = 2.0, random_state: NonNegativeInt = 0):
        self.n_labels = n_labels
        self.n_per_label = n_per_label
        self.n_informative = n_informative
        self.n_nuisance = n_nuisance
        self.noise = noise
        self.nuisance_scale = nuisance_scale
        self.random_state = random_state

    def load(self, data_root=None) -> Dataset:
        rng = np.random.default_rng(self.random_state)
        m, n = int(self.n_labels), int(self.n_per_label)
        r = np.repeat(np.arange(m), n)
        t = r / max(m - 1, 1)
        # label centres on a gently bent curve through the informative space
        basis = np.linalg.qr(rng.normal(size=(self.n_informative, self.n_informative)))[0]
        centres = np.outer(r, basis[0])
        if self.n_informative > 1:
            centres += 0.5 * (m - 1) * np.outer(t * (1 - t), basis[1])
        inform = centres + rng.normal(scale=self.noise, size=(len(r), self.n_informative))
        nuisance = rng.normal(scale=self.nuisance_scale, size=(len(r), self.n_nuisance))
        # mix the two blocks by a random rotation so no single input column is informative alone
        Q = np.linalg.qr(rng.normal(size=(self.n_informative + self.n_nuisance,) * 2))[0]
        feat = np.hstack([inform, nuisance]) @ Q.T
        items = pd.DataFrame({"id": [f"s{i:04d}" for i in range(len(r))], "label": r.astype(float)})
        return Dataset(name="synthetic_ordinal", items=items, arrays={"feat": feat},
                       info={"generator": self.get_params()},
                       fingerprint=fingerprint_arrays(feat, extra="synthetic_ordinal"))

"""A user's components of every kind in one file outside any package (loaded by file path in the
tests): each a small variant of a built-in one, so a run on them is quick and its numbers can be
compared with the built-in run's. A test names one of them by path and keeps the built-in rest.

A test may copy this file with ``ONLY_IN_PID`` set to its own process id: importing the copy in
any other process (a worker) then fails, as a user's module that imports only where the run
started."""

import dataclasses
import os

import numpy as np
from scipy.spatial.distance import cdist
from sklearn.base import BaseEstimator
from sklearn.preprocessing import StandardScaler

from rankbench.datasets.synthetic_reid import SyntheticReId
from rankbench.features.base import Extractor
from rankbench.protocols.reid import ReIdentification
from rankbench.rankers.base import PairScorer

ONLY_IN_PID = None
if ONLY_IN_PID is not None and ONLY_IN_PID != os.getpid():
    raise ImportError(f"this module imports only in process {ONLY_IN_PID}")


class People(SyntheticReId):
    """synthetic_reid, as a user's loader whose images are read through its own reader (sent to
    the processes that extract features)."""

    def load(self, data_root=None):
        ds = super().load(data_root)
        images = ds.arrays.pop("images")
        return dataclasses.replace(ds, image_reader=_Reader(images))


class _Reader:
    def __init__(self, images):
        self.images = images

    def __call__(self, i):
        return self.images[i]


class MeanColour(Extractor):
    """Mean colour of each of ``n_strips`` horizontal strips, 8 images per batch (so that a run
    with --jobs 2 extracts in worker processes)."""

    batch_size = 8

    def __init__(self, n_strips: int = 4):
        self.n_strips = n_strips

    def transform_image(self, img):
        strips = np.array_split(np.asarray(img, float), self.n_strips, axis=0)
        return np.concatenate([s.reshape(-1, s.shape[-1]).mean(0) for s in strips])


class ReId(ReIdentification):
    """reid, as a user's protocol."""


class L1(PairScorer, BaseEstimator):
    """L1 matching, as a user's ranker."""

    def fit(self, X, y, cams=None):
        self.n_features_in_ = np.asarray(X).shape[1]
        return self

    def similarity(self, Q, G):
        return -cdist(Q, G, "cityblock")


class Standardize(StandardScaler):
    """standardize, as a user's preprocessor."""

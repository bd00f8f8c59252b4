"""Raw features: the pixels of an image, or an array shipped with the dataset.

``pixels`` is Yu & Li's UMIST feature (the 112 x 92 = 10304 grey values, unscaled); ``array`` passes
on a named array of ``dataset.arrays`` such as FG-NET's 136 landmark coordinates.

Both take two options of the authors' published preprocessing (github.com/mengzhicao0414/ImageRanking,
``UMISTdata.csv`` / ``FGNETdata.csv``), explicit because they differ from the paper's text:

* ``transductive_pca: d`` projects every item on the first d principal components of *all* items
  of the dataset (centred, not scaled), test images included: unsupervised (no label is used) but
  transductive. The authors' UMIST data is exactly the pixels so projected (d = 150 of all 575
  images), their FG-NET data the unit-norm landmarks projected on a PCA of all 1002 images (d = 80).
  A ranker's ``preprocess: [pca]`` is the inductive alternative, fitted on the training rows only.
* ``unit_norm`` (``array``) divides each item's vector by its Euclidean norm (the authors' FG-NET
  landmarks).
"""

from __future__ import annotations

import numpy as np

from ..datasets.base import Dataset
from ..errors import DataError
from ..params import PositiveFloat, PositiveInt
from ..preprocess.pca import PCA
from ..registry import features
from .base import Extractor


def transductive_pca(X: np.ndarray, n_components: int) -> np.ndarray:
    """Scores of the rows of ``X`` on the first ``n_components`` principal components of ``X`` itself
    (:class:`rankbench.preprocess.pca.PCA` fitted on every row: centred, not scaled, signs fixed,
    zero-variance directions dropped)."""
    return PCA(int(n_components)).fit(X).transform(X)


@features.register("pixels")
class Pixels(Extractor):
    """Raw pixel vector of each image (row-major, grey or RGB as the dataset gives it), times ``scale``.

    ``transductive_pca``: project on a PCA of all the dataset's images (see the module docstring).
    """

    def __init__(self, scale: PositiveFloat = 1.0, transductive_pca: PositiveInt | None = None):
        self.scale = scale
        self.transductive_pca = transductive_pca

    def transform_image(self, img: np.ndarray) -> np.ndarray:
        return np.asarray(img, dtype=np.float32).ravel() * np.float32(self.scale)

    def extract(self, dataset: Dataset, n_jobs: int = 1, progress: bool = False) -> np.ndarray:
        if "images" in dataset.arrays and dataset.image_reader is None:
            # in-memory images (e.g. UMIST): one reshape instead of a loop
            imgs = dataset.arrays["images"]
            X = imgs.reshape(len(imgs), -1).astype(np.float32) * np.float32(self.scale)
        else:
            X = super().extract(dataset, n_jobs=n_jobs, progress=progress)
        return X if self.transductive_pca is None else transductive_pca(X, self.transductive_pca)

    def n_features(self, dataset: Dataset) -> int | None:
        """Pixels of the first image (at most ``transductive_pca`` components of them)."""
        img = dataset.arrays["images"][0] if "images" in dataset.arrays and dataset.image_reader is None \
            else dataset.image(0)
        return _at_most(int(np.asarray(img).size), self.transductive_pca, len(dataset))


def _at_most(d: int, n_components: int | None, n_items: int) -> int:
    """The dimension of features of ``d`` values after an optional PCA of ``n_items`` items."""
    return d if n_components is None else min(d, int(n_components), n_items)


@features.register("array")
class Array(Extractor):
    """A named array shipped with the dataset (e.g. ``landmarks``), flattened per item, times ``scale``.

    ``scale`` changes units only (e.g. FG-NET landmark pixels -> units of ~ the image size); it
    matters to learners whose step sizes are absolute, such as cMDS-DML's Armijo ``gamma``.
    ``unit_norm`` divides each item's vector by its norm (before ``scale``), ``transductive_pca``
    then projects on a PCA of all items (see the module docstring).
    """

    cacheable = False

    def __init__(self, key: str = "feat", scale: PositiveFloat = 1.0, unit_norm: bool = False,
                 transductive_pca: PositiveInt | None = None):
        # `key`, not `name`: a feature set's `name` in the config is its own label
        self.key = key
        self.scale = scale
        self.unit_norm = unit_norm
        self.transductive_pca = transductive_pca

    def extract(self, dataset: Dataset, n_jobs: int = 1, progress: bool = False) -> np.ndarray:
        if self.key not in dataset.arrays:
            raise DataError(f"features array: dataset {dataset.name!r} ships no array {self.key!r} "
                            f"(it has: {', '.join(dataset.arrays) or 'none'})")
        a = np.asarray(dataset.arrays[self.key], dtype=float)
        a = a.reshape(len(a), -1)
        if self.unit_norm:
            norms = np.linalg.norm(a, axis=1, keepdims=True)
            if (norms == 0).any():
                raise DataError(f"features array: unit_norm: item {int(np.flatnonzero(norms == 0)[0])} "
                                f"of dataset {dataset.name!r} has an all-zero {self.key!r} vector")
            a = a / norms
        a = a * float(self.scale)
        return a if self.transductive_pca is None else transductive_pca(a, self.transductive_pca)

    def n_features(self, dataset: Dataset) -> int | None:
        """The array's values per item (at most ``transductive_pca`` components of them)."""
        a = dataset.arrays.get(self.key)
        if a is None or not len(a):
            return None   # extract names the missing array
        return _at_most(int(np.prod(np.shape(a)[1:], dtype=int)), self.transductive_pca, len(a))

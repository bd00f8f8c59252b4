"""The extractor base class (features/base.py) on its own: batches, worker processes, the feature
length without extracting, and what keys the cache."""

import numpy as np
import pandas as pd
import pytest

from rankbench.datasets.base import Dataset
from rankbench.features.base import Extractor


class Sums(Extractor):
    """Per image: its sum and its first pixel (one image at a time)."""

    registry_name = "sums"
    default_batch = 3

    def __init__(self, scale: float = 1.0, batch_size: int | None = None):
        self.scale = scale
        self.batch_size = batch_size

    execution_params = ("batch_size",)

    def transform_image(self, img):
        return [self.scale * img.sum(), img.flat[0]]


class Means(Extractor):
    """Row means of a batch (a whole batch at a time)."""

    registry_name = "means"

    def transform_batch(self, imgs):
        return np.stack([im.mean(axis=1) for im in imgs])


class Shipped(Extractor):
    registry_name = "shipped"
    cacheable = False

    def extract(self, dataset, n_jobs=1, progress=False):
        return dataset.arrays["feat"]


class Neither(Extractor):
    registry_name = "neither"


def toy(n=7):
    imgs = np.random.default_rng(0).integers(0, 9, size=(n, 4, 2)).astype(np.uint8)
    return Dataset(name="toy", items=pd.DataFrame({"id": [str(i) for i in range(n)]}),
                   arrays={"images": imgs, "feat": np.ones((n, 5))})


@pytest.mark.parametrize("batch_size", [None, 1, 2, 100])
def test_extract_is_each_image_in_order_whatever_the_batches(batch_size):
    d = toy()
    want = np.array([[2.0 * im.sum(), im.flat[0]] for im in d.arrays["images"]])
    np.testing.assert_array_equal(Sums(scale=2.0, batch_size=batch_size).extract(d), want)


def test_extract_in_worker_processes_gives_the_same_rows():
    d = toy(8)
    np.testing.assert_array_equal(Sums().extract(d, n_jobs=2), Sums().extract(d))


def test_one_method_each_way_round():
    d = toy(4)
    img = d.arrays["images"][2]
    np.testing.assert_array_equal(Means().transform_image(img), img.mean(axis=1))
    np.testing.assert_array_equal(Means().extract(d), d.arrays["images"].mean(axis=2))
    np.testing.assert_array_equal(Sums().transform_batch([img, img]), [[img.sum(), img.flat[0]]] * 2)
    with pytest.raises(TypeError, match="Neither defines neither transform_image, transform_batch nor extract"):
        Neither().transform_image(img)


def test_n_features_from_the_first_item_only():
    seen = []

    class Counting(Means):
        def transform_batch(self, imgs):
            seen.append(len(imgs))
            return super().transform_batch(imgs)

    assert Counting().n_features(toy(5)) == 4 and seen == [1]
    assert Sums().n_features(toy(3)) == 2
    assert Shipped().n_features(toy(3)) is None
    assert Sums().n_features(toy(0)) is None


def test_cache_key_holds_the_parameters_that_change_the_features():
    a = Sums(scale=2.0, batch_size=4).cache_key()
    assert a["extractor"] == "sums" and a["params"] == {"scale": 2.0}
    assert a == Sums(scale=2.0, batch_size=16).cache_key()
    assert a != Sums(scale=3.0).cache_key()
    assert isinstance(a["code"], str) and a["code"]


@pytest.mark.parametrize("jobs, batch", [(1, 64), (1, 2), (2, 2)])
def test_items_of_unequal_feature_length_are_named(jobs, batch, monkeypatch):
    """pixels on images of different sizes: the two items and their sizes, within a batch or across
    batches, never numpy's concatenation message."""
    from rankbench.errors import DataError
    from rankbench.features.raw import Pixels

    images = [np.zeros((4, 3), np.uint8)] * 3 + [np.zeros((5, 3), np.uint8)]
    ds = Dataset("d", pd.DataFrame({"id": ["a", "b", "c", "odd"]}), image_reader=lambda i: images[i])
    monkeypatch.setattr(Pixels, "default_batch", batch)
    with pytest.raises(DataError, match=r"dataset 'd', extractor pixels: item 'odd' gives 15 values, item "
                                        r"'(a|c)' gives 12 \(images of 5x3 and 4x3 pixels\); expected one length"):
        Pixels().extract(ds, n_jobs=jobs)

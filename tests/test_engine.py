"""Engine pieces: registry look-ups, the feature cache, preprocessing inside the training split."""

import numpy as np
import pytest

from rankbench.datasets.base import Dataset
from rankbench.engine.cache import get_features
from rankbench.engine.pipeline import Preprocessed
from rankbench.engine.runner import trial_seed
from rankbench.engine.store import atomic_write_text
from rankbench.errors import ConfigError
from rankbench.features.base import Extractor
from rankbench.preprocess.steps import PCA
from rankbench.rankers.base import capabilities, fit_accepts
from rankbench.rankers.template import Euclidean
from rankbench.registry import rankers


def test_unknown_name_lists_valid_ones():
    with pytest.raises(ConfigError) as exc:
        rankers.get("nope", "rankers.X.ranker")
    assert "rankers.X.ranker: unknown ranker 'nope'; valid rankers:" in str(exc.value)
    assert "l1" in str(exc.value)


class Counting(Extractor):
    calls = 0

    def __init__(self, scale=1.0):
        self.scale = scale

    def transform_image(self, img):
        Counting.calls += 1
        return img.reshape(-1).astype(float) * self.scale


Counting.registry_name = "counting"


def test_feature_cache_reuses_and_is_keyed_by_params(tmp_path, monkeypatch):
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path))
    import pandas as pd

    imgs = np.arange(5 * 4 * 4 * 3, dtype=np.uint8).reshape(5, 4, 4, 3)
    ds = Dataset("toy", pd.DataFrame({"id": list("abcde")}), arrays={"images": imgs}, fingerprint="f1")
    Counting.calls = 0
    a = get_features(ds, Counting())
    assert Counting.calls == 5
    b = get_features(ds, Counting())
    assert Counting.calls == 5 and np.array_equal(a, b)
    c = get_features(ds, Counting(scale=2.0))
    assert Counting.calls == 10 and np.allclose(c, 2 * a)
    ds.fingerprint = "f2"  # other content: computed afresh
    get_features(ds, Counting())
    assert Counting.calls == 15


def test_corrupt_cache_entry_is_recomputed(tmp_path, monkeypatch):
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path))
    import pandas as pd

    ds = Dataset("toy", pd.DataFrame({"id": ["a"]}), arrays={"images": np.ones((1, 2, 2, 3), np.uint8)},
                 fingerprint="x")
    get_features(ds, Counting())
    for p in (tmp_path / "features").glob("*.npy"):
        p.write_bytes(b"garbage")
    Counting.calls = 0
    assert get_features(ds, Counting()).shape == (1, 12) and Counting.calls == 1


def test_preprocessing_is_fitted_on_training_rows_only():
    rng = np.random.default_rng(0)
    train, test = rng.normal(size=(20, 6)), rng.normal(loc=100, size=(5, 6))
    pipe = Preprocessed([PCA(n_components=3)], Euclidean()).fit(train, np.arange(20))
    ref = PCA(n_components=3).fit(train)
    assert np.allclose(pipe.steps[0].mean_, train.mean(axis=0))
    assert np.allclose(pipe.transform(test), ref.transform(test))
    assert capabilities(pipe) == capabilities(Euclidean())
    assert not fit_accepts(pipe, "constraints") and fit_accepts(pipe, "cams")


def test_pca_matches_sklearn_subspace():
    from sklearn.decomposition import PCA as SkPCA

    X = np.random.default_rng(1).normal(size=(30, 50))
    ours = PCA(n_components=5).fit(X).transform(X)
    ref = SkPCA(n_components=5).fit(X).transform(X)
    assert np.allclose(np.abs(ours), np.abs(ref), atol=1e-8)


def test_trial_seeds_are_distinct_and_stable():
    seeds = [trial_seed(0, t) for t in range(50)]
    assert len(set(seeds)) == 50 and seeds == [trial_seed(0, t) for t in range(50)]
    assert trial_seed(1, 0) != trial_seed(0, 0)


def test_atomic_write_leaves_no_partial_file(tmp_path, monkeypatch):
    target = tmp_path / "x.txt"
    atomic_write_text(target, "old")
    import os

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        atomic_write_text(target, "new")
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["x.txt"]

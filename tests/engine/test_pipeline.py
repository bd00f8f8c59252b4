"""Preprocessing inside the training split: scikit-learn's Pipeline, fitted on training rows only."""

import numpy as np
import pytest
from sklearn.base import clone

from rankbench.engine.pipeline import RankerPipeline
from rankbench.preprocess.pca import PCA
from rankbench.preprocess.scalers import Standardize
from rankbench.rankers.base import capabilities, diagnostics, fit_accepts
from rankbench.rankers.baselines.template import Euclidean


def test_steps_are_fitted_on_training_rows_only():
    rng = np.random.default_rng(0)
    train, test = rng.normal(size=(20, 6)), rng.normal(loc=100, size=(5, 6))
    pipe = RankerPipeline([("pca", PCA(n_components=3)), ("ranker", Euclidean())]).fit(train, np.arange(20))
    ref = PCA(n_components=3).fit(train)
    assert np.allclose(pipe.named_steps["pca"].mean_, train.mean(axis=0))
    assert np.allclose(pipe.transform(test), ref.transform(test))
    assert np.allclose(pipe.similarity(test, test), Euclidean().fit(ref.transform(train)).similarity(
        ref.transform(test), ref.transform(test)))


def test_wrapper_reports_the_rankers_capabilities():
    pipe = RankerPipeline([("z", Standardize()), ("ranker", Euclidean())])
    assert capabilities(pipe) == capabilities(Euclidean()) == {"metric", "pair_scorer"}
    assert not fit_accepts(pipe, "constraints") and fit_accepts(pipe, "cams")
    assert diagnostics(pipe) == {}
    assert isinstance(clone(pipe), RankerPipeline)


def test_pca_matches_sklearn_subspace():
    from sklearn.decomposition import PCA as SkPCA

    X = np.random.default_rng(1).normal(size=(30, 50))
    ours = PCA(n_components=5).fit(X).transform(X)
    ref = SkPCA(n_components=5).fit(X).transform(X)
    assert np.allclose(np.abs(ours), np.abs(ref), atol=1e-8)


@pytest.mark.parametrize("shape", [(30, 50), (50, 30)])
def test_pca_signs_are_fixed_by_the_largest_loading(shape):
    from sklearn.decomposition import PCA as SkPCA

    X = np.random.default_rng(3).normal(size=shape)
    ours = PCA(n_components=4).fit(X)
    ref = SkPCA(n_components=4).fit(X).components_
    ref = ref * np.sign(ref[np.arange(4), np.abs(ref).argmax(axis=1)])[:, None]
    np.testing.assert_allclose(ours.components_, ref, atol=1e-8)


def test_pca_clips_to_the_directions_with_variance():
    X = np.random.default_rng(2).normal(size=(10, 200))
    assert PCA(n_components=150).fit(X).components_.shape == (9, 200)  # centring removes one


def test_a_constrained_fit_fits_the_steps_on_the_labelled_rows_only():
    """Classification with constraints hands fit the labelled rows and the unlabelled (test) rows
    its constraints name, with y = -1: the scaler must see the labelled rows alone."""
    from sklearn.preprocessing import StandardScaler

    class Constrained(Euclidean):
        def fit(self, X, y, constraints=None):
            self.seen_ = np.asarray(X)
            return super().fit(X, y)

    rng = np.random.default_rng(4)
    X = np.r_[rng.normal(size=(12, 3)), rng.normal(loc=50, size=(4, 3))]
    y = np.r_[np.arange(12) % 3, [-1] * 4]
    pipe = RankerPipeline([("z", Standardize()), ("ranker", Constrained())])
    pipe.fit(X, y, constraints=np.array([[12, 13, 1]]))
    oracle = StandardScaler().fit(X[:12])
    np.testing.assert_allclose(pipe.named_steps["ranker"].seen_, oracle.transform(X), atol=1e-12)
    pipe.fit(X, y)      # without constraints every row passed is a training row
    np.testing.assert_allclose(pipe.named_steps["ranker"].seen_, StandardScaler().fit_transform(X), atol=1e-12)


def test_a_step_that_makes_non_finite_values_is_named():
    """Before: minmax to [0, 1e308] overflowed, and the ranker was blamed ('X has 40 non-finite values
    ... expected finite features'), though the features it was run on were finite."""
    from rankbench.errors import RankerFault
    from rankbench.preprocess.scalers import MinMax

    X = 1e-3 * np.random.default_rng(2).normal(size=(20, 2))   # a range of 1e-2: its scale overflows
    pipe = RankerPipeline([("minmax", MinMax(feature_range=(0, 1e308))), ("ranker", Euclidean())])
    with pytest.raises(RankerFault, match=r"^preprocess step 'minmax' returned \d+ non-finite value\(s\) from finite"):
        pipe.fit(X, np.arange(20))
    pipe = RankerPipeline([("minmax", MinMax()), ("ranker", Euclidean())]).fit(X, np.arange(20))
    pipe.named_steps["minmax"].scale_ = pipe.named_steps["minmax"].scale_ * 1e308   # as if it overflowed at scoring
    with pytest.raises(RankerFault, match="preprocess step 'minmax'"):
        pipe.similarity(X, X)

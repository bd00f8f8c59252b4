"""The PCA preprocessing step (preprocess/pca.py) on its own, against scikit-learn's PCA and an
SVD: the same subspace and variances, only directions that carry variance, a fixed sign."""

import numpy as np
import pytest
from sklearn.decomposition import PCA as SkPCA
from sklearn.exceptions import NotFittedError

from rankbench.preprocess.pca import PCA


def same_up_to_sign(A, B):
    """Columns of A equal B's, each up to its sign."""
    signs = np.sign(np.sum(A * B, axis=0))
    np.testing.assert_allclose(A * signs, B, atol=1e-8)


@pytest.mark.parametrize("shape, k", [((40, 6), 4), ((8, 30), 5)])   # the SVD route and the Gram route
def test_projection_and_variances_match_scikit_learn(shape, k):
    rng = np.random.default_rng(0)
    X = rng.normal(size=shape) * np.linspace(3, 0.5, shape[1]) + 2.0
    Y = rng.normal(size=(5, shape[1]))
    ours, theirs = PCA(n_components=k).fit(X), SkPCA(n_components=k, svd_solver="full").fit(X)
    np.testing.assert_allclose(ours.explained_variance_, theirs.explained_variance_, rtol=1e-9)
    same_up_to_sign(ours.transform(Y), theirs.transform(Y))
    same_up_to_sign(ours.transform(X), theirs.transform(X))


def test_each_component_has_its_largest_loading_positive():
    rng = np.random.default_rng(1)
    for shape in ((30, 5), (6, 20)):
        C = PCA(n_components=3).fit(rng.normal(size=shape)).components_
        assert (C[np.arange(len(C)), np.abs(C).argmax(axis=1)] > 0).all()
        np.testing.assert_allclose(C @ C.T, np.eye(len(C)), atol=1e-10)


def test_fewer_rows_than_components_keeps_the_n_minus_1_that_carry_variance():
    X = np.random.default_rng(2).normal(size=(5, 40))
    p = PCA(n_components=50).fit(X)
    assert p.components_.shape == (4, 40) and p.transform(X).shape == (5, 4)
    assert np.linalg.matrix_rank(X - X.mean(0)) == 4


@pytest.mark.parametrize("n_rows", [12, 3])   # more rows than columns (SVD route) and fewer (Gram route)
def test_directions_of_zero_variance_are_dropped(n_rows):
    rng = np.random.default_rng(3)
    A = rng.normal(size=(n_rows, 2))
    X = np.column_stack([A, A.sum(axis=1), A[:, 0] - A[:, 1], np.ones(n_rows)])   # rank 2 around the mean
    p = PCA(n_components=5).fit(X)
    rank = np.linalg.matrix_rank(X - X.mean(0))
    assert len(p.components_) == rank == 2
    assert (p.explained_variance_ > 1e-6).all()


def test_whitened_training_rows_have_unit_variance():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(50, 4)) @ rng.normal(size=(4, 4))
    Z = PCA(n_components=3, whiten=True).fit(X).transform(X)
    np.testing.assert_allclose(Z.var(axis=0, ddof=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(np.corrcoef(Z.T), np.eye(3), atol=1e-8)



def test_a_direction_on_a_tiny_scale_is_kept_and_whitened_as_scikit_learn_does():
    """A feature in nano-units (1e-9 of the others): its variance is 1e-18 of the first, above the
    SVD's rounding. Before, it was dropped (the test compared variances, not singular values, to
    the rounding) and whitening added 1e-12 to each variance, so a whitened run scored at chance
    where scikit-learn's projection separates the people."""
    rng = np.random.default_rng(6)
    people = np.repeat(rng.normal(size=20), 2)
    X = np.column_stack([1e-9 * (people + 0.1 * rng.normal(size=40)), rng.normal(size=40)])
    Y = np.column_stack([1e-9 * rng.normal(size=5), rng.normal(size=5)])
    for whiten in (False, True):
        ours = PCA(n_components=2, whiten=whiten).fit(X)
        theirs = SkPCA(n_components=2, whiten=whiten, svd_solver="full").fit(X)
        assert len(ours.components_) == 2
        np.testing.assert_allclose(ours.explained_variance_, theirs.explained_variance_, rtol=1e-6)
        for Z in (X, Y):
            a, b = ours.transform(Z), theirs.transform(Z)
            np.testing.assert_allclose(a * np.sign(np.sum(a * b, axis=0)), b, rtol=1e-6, atol=1e-20)

def test_transform_before_fit_is_refused():
    with pytest.raises(NotFittedError):
        PCA().transform(np.ones((2, 3)))


@pytest.mark.parametrize("shape", [(6, 3), (3, 6)])      # both routes: never an empty or garbled result
def test_non_finite_rows_and_another_width_are_refused(shape):
    X = np.random.default_rng(5).normal(size=shape)
    p = PCA(n_components=2).fit(X)
    assert p.n_features_in_ == shape[1]
    with pytest.raises(ValueError, match="X has 4 features, but PCA is expecting"):
        p.transform(np.ones((1, 4)))
    X[1, 2] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        PCA(n_components=2).fit(X)
    with pytest.raises(ValueError, match="Input X contains infinity"):
        p.transform(np.where(np.isnan(X), np.inf, X))

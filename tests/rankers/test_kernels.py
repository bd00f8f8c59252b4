"""The shared kernels against scikit-learn's own."""

import numpy as np
import pytest
from sklearn.metrics.pairwise import chi2_kernel
from sklearn.metrics.pairwise import rbf_kernel as sk_rbf

from rankbench.errors import DataError
from rankbench.rankers._kernels import base_kernel, chi2_distance, kernel_scale, rbf_kernel


def hist(n, d, seed):
    H = np.random.default_rng(seed).random((n, d))
    return H / H.sum(1, keepdims=True)


def test_exponential_chi2_equals_scikit_learns_chi2_kernel():
    X, Y = hist(12, 8, 0), hist(7, 8, 1)
    scale = kernel_scale("chi2", X)
    for gamma in (0.5, 2.0):
        np.testing.assert_allclose(base_kernel("chi2", X, Y, gamma, scale), chi2_kernel(X, Y, gamma=gamma / scale),
                                   rtol=1e-12)


def test_chi2_scale_is_the_mean_off_diagonal_distance():
    X = hist(10, 5, 2)
    D = np.array([[np.sum((a - b) ** 2 / (a + b)) for b in X] for a in X])
    assert kernel_scale("chi2", X) == pytest.approx(D.sum() / (10 * 9))
    np.testing.assert_allclose(chi2_distance(X, X), D, atol=1e-12)


def test_linear_and_rbf_kernels():
    X, Y = np.random.default_rng(3).normal(size=(9, 4)), np.random.default_rng(4).normal(size=(5, 4))
    s = kernel_scale("linear", X)
    assert s == pytest.approx(np.mean(np.sum(X * X, 1)))
    np.testing.assert_allclose(base_kernel("linear", X, Y, 1.0, s), X @ Y.T / s)
    np.testing.assert_allclose(rbf_kernel(X, Y, 0.08), sk_rbf(X, Y, gamma=0.08), rtol=1e-12)


def test_chi2_refuses_negative_features():
    with pytest.raises(DataError, match="non-negative"):
        chi2_distance(-np.ones((2, 3)), np.ones((2, 3)))

"""RCA (Bar-Hillel et al. 2005) from positive constraints, and the rca_klr baseline of Yan et al."""

import numpy as np
import pytest

from rankbench.errors import ConfigError
from rankbench.params import check_params
from rankbench.rankers.logistic.klr import KernelLogisticRegression
from rankbench.rankers.metric_learning.rca import RCA, RCAKLR, chunklet_covariance, chunklets
from rankbench.registry import rankers


def test_chunklets_are_connected_components_of_positive_constraints():
    C = np.array([[5, 1, 1], [1, 3, 1], [7, 8, 1], [2, 4, 0], [8, 9, 1], [0, 6, 0]])
    ch = chunklets(10, C)
    # {1, 3, 5} (a chain), {7, 8, 9}; rows 0, 2, 4, 6 only in negative constraints
    assert ch.tolist() == [-1, 0, -1, 0, -1, 0, -1, 1, 1, 1]
    assert (chunklets(4, None) == -1).all() and (chunklets(4, np.zeros((0, 3), int)) == -1).all()
    assert chunklets(3, [[2, 1, 1]]).tolist() == [-1, 0, 0]
    with pytest.raises(ValueError, match="row indices"):
        chunklets(3, [[0, 3, 1]])


def test_closed_form_on_a_tiny_problem():
    # chunklets {(0,0), (2,2)} and {(5,5), (5,7), (5,6)}: centred (-1,-1), (1,1) and (0,-1), (0,1), (0,0)
    X = np.array([[0.0, 0], [2, 2], [5, 5], [5, 7], [9, 9], [5, 6]])
    C = np.array([[0, 1, 1], [2, 3, 1], [3, 5, 1], [4, 0, 0]])
    cov = np.array([[2.0, 2.0], [2.0, 4.0]]) / 5  # (1/N) sum (x - m)(x - m)^T, N = 5 points
    assert np.allclose(chunklet_covariance(X, chunklets(6, C)), cov)
    rca = RCA(eps=0.0).fit(X, constraints=C)
    W = rca.components_
    assert rca.n_chunklets_ == 2 and np.allclose(rca.covariance_, cov)
    assert np.allclose(W, W.T) and np.allclose(W @ W, np.linalg.inv(cov))  # W = C^(-1/2)
    assert np.allclose(W @ cov @ W.T, np.eye(2))  # whitens the chunklet scatter
    assert np.allclose(rca.transform(X), X @ W.T)
    # eps: C + eps tr(C)/d I;  normalize: the same metric scaled to |W| = 1
    ridge = RCA(eps=0.5).fit(X, constraints=C).components_
    assert np.allclose(ridge @ ridge, np.linalg.inv(cov + 0.5 * np.trace(cov) / 2 * np.eye(2)))
    unit = RCA(eps=0.0, normalize=True).fit(X, constraints=C).components_
    assert np.linalg.det(unit) == pytest.approx(1.0)
    assert np.allclose(unit, W / np.sqrt(np.linalg.det(W @ W)) ** 0.5)


def test_no_positive_constraint_is_the_identity_and_rca_klr_is_klr():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = (X[:, 0] > 0).astype(int)
    rca = RCA().fit(X, constraints=[[0, 1, 0]])
    assert rca.n_chunklets_ == 0 and np.array_equal(rca.components_, np.eye(2))
    both = RCAKLR(rho=0.5, rho_scale="absolute").fit(X, y, constraints=None)
    klr = KernelLogisticRegression(rho=0.5, rho_scale="absolute").fit(X, y)
    assert np.allclose(both.decision_function(X), klr.decision_function(X))


def test_rca_klr_fits_klr_on_transformed_labelled_rows():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(26, 3)) * [1.0, 5.0, 0.2]
    y = np.r_[(X[:20, 0] > 0).astype(int), -np.ones(6, int)]
    C = np.array([[20, 21, 1], [22, 23, 1], [23, 24, 1], [25, 0, 0]])
    m = rankers.build("rca_klr", {"rho": 0.3, "rho_scale": "absolute"}).fit(X, y, constraints=C)
    W = RCA(normalize=True).fit(X, constraints=C).components_
    ref = KernelLogisticRegression(rho=0.3, rho_scale="absolute").fit(X[:20] @ W.T, y[:20])
    assert np.allclose(m.decision_function(X), ref.decision_function(X @ W.T))
    assert list(m.classes_) == [0, 1] and set(m.predict(X)) <= {0, 1}


def test_parameters_are_declared():
    with pytest.raises(ConfigError, match="eps"):
        check_params(RCAKLR, {"eps": -1.0}, "ranker rca_klr")
    with pytest.raises(ConfigError, match="normalize"):
        check_params(RCAKLR, {"normalize": "yes"}, "ranker rca_klr")

"""The ranking-SVM primal's products (ranksvm/_oracles.py) against the explicit matrices they avoid
forming: the pair matrix of Sharaf et al. eq. 6, its Gram matrix in both routes, a kernel's factor."""

import numpy as np
import pytest
import scipy.sparse as sp

from rankbench.rankers.ranksvm._oracles import DenseOracle, PairMatrixOracle, kernel_factor, pair_matrix


def test_pair_matrix_by_hand():
    pairs = np.array([[0, 2], [3, 1], [1, 0]])
    A = pair_matrix(pairs, np.array([1, -1, 0]), 4).toarray()
    assert A.tolist() == [[1, 0, -1, 0], [0, 1, 0, -1], [-1, 1, 0, 0]]


def products(o, M, rng):
    v, t = rng.normal(size=M.shape[1]), rng.normal(size=M.shape[0])
    act = (rng.random(M.shape[0]) > 0.4).astype(float)
    np.testing.assert_allclose(o.z(v), M @ v, atol=1e-12)
    np.testing.assert_allclose(o.rmat(t), M.T @ t, atol=1e-12)
    g, zv = o.hvp(v, act)
    np.testing.assert_allclose(g, M.T @ (act * (M @ v)), atol=1e-12)
    np.testing.assert_allclose(zv, M @ v, atol=1e-12)
    return act


def test_pair_oracle_gram_in_the_pair_route_and_the_general_route():
    """pair_matrix gives two entries a row (the pair route); A_general has a row of three."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 3))
    pairs = np.array([[0, 1], [2, 5], [4, 3], [1, 2], [5, 0]])
    A_pairs = pair_matrix(pairs, np.array([1, -1, 1, 0, 1]), 6)
    A_general = sp.csr_matrix(np.array([[1.0, -1, 0, 0, 0, 0], [0, 0, 2, 0, 0, -1], [1, 1, 0, -1, 0, 0]]))
    for A in (A_pairs, A_general):
        M = -(A.toarray() @ X)
        o = PairMatrixOracle(A, X)
        act = products(o, M, rng)
        np.testing.assert_allclose(o.gram(act), M.T @ np.diag(act) @ M, atol=1e-12)


def test_dense_oracle_products_and_its_passes():
    rng = np.random.default_rng(1)
    M = rng.normal(size=(7, 4))
    o = DenseOracle(M)
    products(o, M, rng)
    assert o.n_passes == 4 and (o.d, o.n_rows) == (4, 7)
    low = DenseOracle(M.astype(np.float32))            # the paper's single-precision matrix
    v = rng.normal(size=4)
    np.testing.assert_allclose(low.rmat(np.ones(7)), M.sum(axis=0), rtol=1e-5)
    assert low.hvp(v, np.ones(7))[0].dtype == np.float64


@pytest.mark.parametrize("rank", [5, 3, 1])
def test_kernel_factor_reproduces_a_psd_kernel_with_its_rank(rank):
    rng = np.random.default_rng(rank)
    B = rng.normal(size=(5, rank))
    K = B @ B.T
    Phi = kernel_factor(K)
    assert Phi.shape == (5, np.linalg.matrix_rank(K))
    np.testing.assert_allclose(Phi @ Phi.T, K, atol=1e-10)


def test_kernel_factor_keeps_the_positive_part_of_an_indefinite_kernel():
    Q = np.linalg.qr(np.random.default_rng(4).normal(size=(4, 4)))[0]
    K = Q @ np.diag([3.0, 1.0, 0.0, -2.0]) @ Q.T
    Phi = kernel_factor(K)
    assert Phi.shape == (4, 2)
    np.testing.assert_allclose(Phi @ Phi.T, Q[:, :2] @ np.diag([3.0, 1.0]) @ Q[:, :2].T, atol=1e-10)
    assert kernel_factor(np.zeros((3, 3))).shape == (3, 0)

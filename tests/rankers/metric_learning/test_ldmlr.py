"""LDMLR (Li et al. 2015): weights, gradient, PSD projection."""


import numpy as np
import pytest
from toydata import three_level_ordinal

from rankbench.rankers.metric_learning import cmds_dml as C
from rankbench.rankers.metric_learning import ldmlr as LD


def test_ordinal_weights_eq3():
    W = LD.ordinal_weights(np.array([1, 1, 2, 4]), p=2)
    assert W[0, 1] == 0 and W[0, 2] == 4 and W[0, 3] == 16 and W[2, 3] == 9


def test_ldmlr_gradient_matches_finite_differences():
    X, y = three_level_ordinal(d=5)
    X = X - X.mean(0)
    W = LD.ordinal_weights(y, 1.0)
    M = 2 * X.T @ (np.diag(W.sum(1)) - W) @ X
    # <A, M> is the weighted sum of squared distances
    A = np.cov(np.random.default_rng(2).normal(size=(5, 20)))
    direct = sum(W[i, j] * (X[i] - X[j]) @ A @ (X[i] - X[j]) for i in range(len(X)) for j in range(len(X)))
    assert (A * M).sum() == pytest.approx(direct, rel=1e-10)
    pairs = C.target_neighbours(X, y, 2)
    V = X[pairs[:, 0]] - X[pairs[:, 1]]
    v2 = (V**2).sum(1)
    G = LD.h_gradient(A, M, V, v2, 0.3)
    h = 1e-6
    for idx in [(0, 0), (1, 3), (4, 2)]:
        E = np.zeros_like(A)
        E[idx] = h
        num = (LD.h_objective(A + E, M, V, v2, 0.3) - LD.h_objective(A - E, M, V, v2, 0.3)) / (2 * h)
        assert G[idx] == pytest.approx(num, rel=1e-5, abs=1e-6)


def test_psd_projection():
    B = np.diag([2.0, -1.0, 0.5])
    np.testing.assert_allclose(LD.psd_project(B), np.diag([2.0, 0.0, 0.5]))


def test_ldmlr_fit_is_psd_and_distances_match_A():
    X, y = three_level_ordinal()
    m = LD.LDMLR(K=3, T_max=20).fit(X, y)
    assert np.linalg.eigvalsh(m.A_).min() > -1e-9
    Z = m.transform(X[:4])
    Xs = (X[:4] - m.mean_) / m.scale_
    d = Xs[0] - Xs[1]
    assert ((Z[0] - Z[1]) ** 2).sum() == pytest.approx(d @ m.A_ @ d, rel=1e-8)
    # a vanishing step leaves the identity metric
    m0 = LD.LDMLR(K=3, T_max=5, step=1e-12).fit(X, y)
    np.testing.assert_allclose(m0.A_, np.eye(X.shape[1]), atol=1e-8)


def _naive_authors_ldmlr(X, y, K, step, mu, p, T, tol):
    """LDMLR.m / dev.m / PSD.m of the published code, written with explicit loops over pairs."""
    n, d = X.shape
    pairs = C.target_neighbours(X, y, K)
    A = np.zeros((d, d))
    h_prev = None
    for t in range(T):
        G = np.zeros((d, d))
        for i in range(n):
            for j in range(n):
                if y[i] != y[j]:
                    v = X[i] - X[j]
                    G -= (abs(y[i] - y[j]) + 1) ** p * np.outer(v, v)
        for i, j in pairs:
            v = X[i] - X[j]
            G += 2 * mu * (v @ A @ v - v @ v) * np.outer(v, v)
        A = A - step * G
        lam, U = np.linalg.eigh((A + A.T) / 2)
        A = U @ np.diag(np.maximum(lam, 0)) @ U.T
        h = sum(-(abs(y[i] - y[j]) + 1) ** p * (X[i] - X[j]) @ A @ (X[i] - X[j])
                for i in range(n) for j in range(n) if y[i] != y[j])
        h += mu * sum(((X[i] - X[j]) @ A @ (X[i] - X[j]) - (X[i] - X[j]) @ (X[i] - X[j])) ** 2 for i, j in pairs)
        if h_prev is not None and abs(h - h_prev) < tol * abs(h_prev):
            return A, t + 1
        h_prev = h
    return A, T


def test_authors_settings_equal_the_published_loop():
    X, y = three_level_ordinal(n_per=5, d=4)
    X = X - X.mean(0)
    kw = dict(K=2, mu=0.5, p=0.5, T_max=25)
    m = LD.LDMLR(**kw, step=1e-3, step_rule="fixed", init="zero", tol=1e-3, normalize=False).fit(X, y)
    A, n_iter = _naive_authors_ldmlr(X, y, 2, 1e-3, 0.5, 0.5, 25, 1e-3)
    assert m.n_iter_ == n_iter == 25 and m.diagnostics_ == {"K": 2, "n_iter": 25, "status": "max_iter"}
    np.testing.assert_allclose(m.A_, A, rtol=1e-8, atol=1e-12)
    early = LD.LDMLR(**kw, step=1e-3, step_rule="fixed", init="zero", tol=5e-2, normalize=False).fit(X, y)
    A, n_iter = _naive_authors_ldmlr(X, y, 2, 1e-3, 0.5, 0.5, 25, 5e-2)
    assert early.n_iter_ == n_iter < 25 and early.diagnostics_["status"] == "converged" and early.result_.success
    np.testing.assert_allclose(early.A_, A, rtol=1e-8, atol=1e-12)
    with pytest.raises(ValueError, match="needs a number"):
        LD.LDMLR(step_rule="fixed").fit(X, y)


def test_identical_target_neighbours_are_one_line_not_a_division_by_zero():
    # features equal within each label (one-hot of the label): ZeroDivisionError in every job
    from rankbench.errors import InputError

    y = np.repeat(np.arange(3.0), 5)
    X = np.eye(3)[y.astype(int)]
    with pytest.raises(InputError, match="each of the 30 target-neighbour pairs has identical features"):
        LD.LDMLR(K=2).fit(X, y)
    assert np.isfinite(LD.LDMLR(K=2, step_rule="fixed", step=1e-3, T_max=3).fit(X, y).transform(X)).all()

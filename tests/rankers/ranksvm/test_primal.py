"""The one ranking-SVM primal solver and its oracles, against explicit matrices and a generic minimiser."""


import numpy as np
import pytest
from scipy.optimize import minimize
from toydata import two_camera_people

from rankbench.rankers._pair_grid import build_pair_grid as build_pairs
from rankbench.rankers.ranksvm._oracles import DenseOracle, PairMatrixOracle, TripleStreamOracle, pair_matrix
from rankbench.rankers.ranksvm._primal import solve, solve_gram
from rankbench.utils import jit

needs_numba = pytest.mark.skipif(not jit.AVAILABLE, reason="numba is not installed")


def brute_triples(X, y, cams):
    """Rows |x_i - x_n| - |x_i - x_p| of every (query, true match, wrong match), by loops."""
    rows = []
    for i in range(len(y)):
        cand = [j for j in range(len(y)) if j != i and (cams is None or cams[j] != cams[i])]
        for p in [j for j in cand if y[j] == y[i]]:
            for n in [j for j in cand if y[j] != y[i]]:
                rows.append(np.abs(X[i] - X[n]) - np.abs(X[i] - X[p]))
    return np.array(rows)


@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=needs_numba)])
@pytest.mark.parametrize("n_jobs", [1, 3])
@pytest.mark.parametrize("multi", [False, True])
def test_stream_products_match_explicit_triples(multi, n_jobs, compiled):
    rng = np.random.default_rng(1)
    if multi:  # no cameras, three images per person: several true matches per query
        y = np.repeat(np.arange(5), 3)
        X, cams = rng.random((15, 6)), None
    else:
        X, y, cams = two_camera_people(8, 6)
    P = build_pairs(X, y, cams, block=3, n_jobs=n_jobs)
    A = P.materialize(np.float64)
    B = brute_triples(X, y, cams)
    assert A.shape == B.shape == (P.n_triples(), 6)
    # the same set of triples (order may differ)
    np.testing.assert_allclose(np.sort(A, axis=0), np.sort(B, axis=0), atol=1e-6)
    o = TripleStreamOracle(P)
    v, t = rng.standard_normal(6), rng.standard_normal(len(A))
    act = (rng.random(len(A)) > 0.4).astype(float)
    with jit.use_compiled(compiled):
        zv, rt, (h, z) = o.z(v), o.rmat(t), o.hvp(v, act)
    np.testing.assert_allclose(zv, A @ v, atol=1e-5)
    np.testing.assert_allclose(rt, A.T @ t, atol=1e-4)
    np.testing.assert_allclose(h, A.T @ (act * (A @ v)), atol=1e-4)
    np.testing.assert_allclose(z, A @ v, atol=1e-5)


@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
def test_newton_solution_is_the_optimum_of_eq4(C):
    X, y, cams = two_camera_people()
    A = brute_triples(X, y, cams)
    f = lambda w: 0.5 * w @ w + C * np.sum(np.maximum(0, 1 + A @ w) ** 2)
    g = lambda w: w + 2 * C * A.T @ np.maximum(0, 1 + A @ w)
    ref = minimize(f, np.zeros(A.shape[1]), jac=g, method="L-BFGS-B",
                   options=dict(gtol=1e-12, ftol=1e-15, maxiter=20000)).x
    w = solve(TripleStreamOracle(build_pairs(X, y, cams)), C, tol=1e-7, max_newton=60, max_cg=100).x
    assert np.linalg.norm(g(w)) <= 1e-4 * max(1.0, np.linalg.norm(g(np.zeros_like(w))))
    np.testing.assert_allclose(w, ref, atol=1e-4 * max(1, np.abs(ref).max()))
    assert f(w) <= f(ref) + 1e-6 * abs(f(ref))


def items_and_pairs(n=40, d=6, seed=0, similar_share=0.3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    P = rng.integers(0, n, size=(300, 2))
    P = P[P[:, 0] != P[:, 1]]
    sign = np.where(rng.random(len(P)) < similar_share, 0, 1)
    return X, P, sign


def brute_pair_objective(X, P, sign, C):
    """0.5 w'w + C [sum_ordered max(0, 1 - w'(x_i - x_j))^2 + sum_similar (w'(x_i - x_j))^2], by rows."""
    D = X[P[:, 0]] - X[P[:, 1]]
    ordered = sign != 0

    def f(w):
        m = D @ w
        return 0.5 * w @ w + C * (np.sum(np.maximum(0, 1 - m[ordered]) ** 2) + np.sum(m[~ordered] ** 2))

    def g(w):
        m = D @ w
        r = np.where(ordered, -np.maximum(0, 1 - m), m)
        return w + 2 * C * D.T @ r

    return f, g


@pytest.mark.parametrize("direct_max", [0, 2000])  # conjugate gradient, then exact Newton steps
def test_pair_matrix_oracle_with_similar_pairs_is_the_optimum(direct_max):
    X, P, sign = items_and_pairs()
    f, g = brute_pair_objective(X, P, sign, C=0.7)
    ref = minimize(f, np.zeros(X.shape[1]), jac=g, method="L-BFGS-B",
                   options=dict(gtol=1e-12, ftol=1e-15, maxiter=20000)).x
    oracle = PairMatrixOracle(pair_matrix(P, sign, len(X)), X)
    sol = solve(oracle, 0.7, similar=sign == 0, tol=1e-10, max_newton=50, max_cg=50, direct_max=direct_max)
    np.testing.assert_allclose(sol.x, ref, atol=1e-6)
    assert sol.fun == pytest.approx(f(ref), rel=1e-9)


def test_pair_matrix_oracle_products_equal_the_explicit_matrix():
    X, P, sign = items_and_pairs(seed=1)
    M = -(X[P[:, 0]] - X[P[:, 1]])
    o = PairMatrixOracle(pair_matrix(P, sign, len(X)), X)
    rng = np.random.default_rng(2)
    v, t = rng.normal(size=X.shape[1]), rng.normal(size=len(P))
    act = (rng.random(len(P)) > 0.5).astype(float)
    np.testing.assert_allclose(o.z(v), M @ v)
    np.testing.assert_allclose(o.rmat(t), M.T @ t)
    np.testing.assert_allclose(o.hvp(v, act)[0], M.T @ (act * (M @ v)))
    np.testing.assert_allclose(o.gram(act), M.T @ (act[:, None] * M))
    dense = DenseOracle(M)
    np.testing.assert_allclose(solve(dense, 2.0, tol=1e-10, max_cg=20).x, solve(o, 2.0, tol=1e-10).x, atol=1e-8)


def test_gram_route_equals_the_primal_with_features():
    """Kernel RankSVM with the linear kernel is linear RankSVM: same scores, same objective."""
    X, P, sign = items_and_pairs(n=30, d=5, seed=3)
    A = pair_matrix(P, sign, len(X))
    w = solve(PairMatrixOracle(A, X), 1.3, similar=sign == 0, tol=1e-12, max_newton=60).x
    b, sol = solve_gram(X @ X.T, A, 1.3, similar=sign == 0, tol=1e-12)
    np.testing.assert_allclose(X @ X.T @ b, X @ w, atol=1e-7)
    f, _ = brute_pair_objective(X, P, sign, C=1.3)
    assert sol.fun == pytest.approx(f(w), rel=1e-9)

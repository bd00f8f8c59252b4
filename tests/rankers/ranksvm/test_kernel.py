"""Kernel RankSVM: the linear kernel equals linear RankSVM; dual coefficients; chi-square kernel."""


import numpy as np
import pytest
from toydata import toy_ranking_pairs

from rankbench.rankers.ranksvm._oracles import pair_matrix
from rankbench.rankers.ranksvm._primal import solve_gram
from rankbench.rankers.ranksvm.kernel import KernelRankSVM
from rankbench.rankers.ranksvm.linear import RankSVM


def test_kernel_linear_equals_linear_ranksvm():
    X, P, s, _ = toy_ranking_pairs()
    lin = RankSVM(C=1.0, tol=1e-10).fit(X, P, s)
    ker = KernelRankSVM(kernel="linear", C=1.0, normalize=False).fit(X, P, s)
    Xt = np.random.default_rng(5).normal(size=(30, X.shape[1]))
    np.testing.assert_allclose(ker.decision_function(Xt), lin.decision_function(Xt), atol=1e-5)
    assert ker.objective_ == pytest.approx(lin.objective_, rel=1e-7)


def test_kernel_solver_dual_coefficients_match_stationarity():
    """At the optimum of min 0.5 b'Kb + C sum loss(A K b), b = -C A' loss'(A K b) (K nonsingular)."""
    X, P, s, _ = toy_ranking_pairs()
    K = X @ X.T + 1e-3 * np.eye(len(X))
    A = pair_matrix(P, s, len(X))
    b, _ = solve_gram(K, A, 1.0, similar=s == 0, tol=1e-12)
    m = A @ (K @ b)
    dloss = np.where(s != 0, -2 * np.maximum(0, 1 - m), 2 * m)
    np.testing.assert_allclose(b, -1.0 * A.T @ dloss, atol=1e-6)


def test_chi2_kernel_ranks_histograms():
    rng = np.random.default_rng(1)
    t = rng.uniform(size=80)
    H = np.column_stack([t, 1 - t, 0.1 * rng.uniform(size=80)])
    P = np.array([(i, j) for i in range(80) for j in range(80) if t[i] > t[j] + 0.05])[:1500]
    m = KernelRankSVM(kernel="chi2", C=1.0, gamma=1.0).fit(H, P, np.ones(len(P), int))
    f = m.decision_function(H)
    assert np.corrcoef(f, t)[0, 1] > 0.95

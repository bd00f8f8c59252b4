"""Kernel RankSVM: the linear kernel equals linear RankSVM; dual coefficients; chi-square kernel."""


import numpy as np
import pytest
from toydata import toy_ranking_pairs

from rankbench.rankers.ranksvm._oracles import pair_matrix
from rankbench.rankers.ranksvm._primal import solve_gram
from rankbench.rankers.ranksvm.kernel import KernelRankSVM
from rankbench.rankers.ranksvm.linear import RankSVM
from rankbench.rankers.ranksvm.rankmkl import RankMKL


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


@pytest.mark.parametrize("make,solves", [
    # 2 gammas x 2 C x 3 folds + the final fit: 13 solves over 2 kernels
    (lambda: KernelRankSVM(kernel="chi2", C=[0.1, 1.0], gamma=[0.5, 2.0], cv=3, random_state=0), 13),
    (lambda: KernelRankSVM(kernel="linear", C=[0.1, 1.0, 10.0], cv=3, random_state=0), 10),
    (lambda: RankSVM(C=[0.1, 1.0], cv=3, random_state=0), 7),      # d > n: solved over X X'
    # the CV's 12 solves over uniform combinations (2 kernels); the final MKL fit factors its own
    (lambda: RankMKL(C=[0.1, 1.0], gamma=[0.5, 2.0], cv=3, kernels={"a": "chi2"}, random_state=0), 12),
], ids=["chi2", "linear", "ranksvm-row-space", "rankmkl"])
def test_cross_validation_factors_each_kernel_once_and_fits_the_same_model(make, solves, monkeypatch):
    """The kernel's factor is computed once per gamma (not per fold and C), and the fit scores as
    one whose every solve factors its kernel afresh, to the bit."""
    import rankbench.rankers.ranksvm as family
    from rankbench.rankers.ranksvm import _oracles, _primal

    rng = np.random.default_rng(2)
    t = rng.uniform(size=40)
    X = np.abs(np.column_stack([t, 1 - t, rng.uniform(size=(40, 60))]))  # d > n, histogram-like
    P = np.array([(i, j) for i in range(40) for j in range(40) if t[i] > t[j] + 0.1])[:300]
    s = np.ones(len(P), int)
    X_in = {"a": X[:, :30], "b": X[:, 30:]} if isinstance(make(), RankMKL) else X
    calls = []
    real = _oracles.kernel_factor
    counted = lambda K, *a: calls.append(1) or real(K, *a)
    for mod in (_oracles, family.kernel, family.linear, family.rankmkl):
        if hasattr(mod, "kernel_factor"):
            monkeypatch.setattr(mod, "kernel_factor", counted)
    cached = make().fit(X_in, P, s)
    n_cached = len(calls)
    solve = _primal.solve_gram
    afresh_solve = lambda *a, Phi=None, **k: solve(*a, **k)   # drops the caller's factor
    for mod in (family.kernel, family.linear, family.rankmkl):
        monkeypatch.setattr(mod, "solve_gram", afresh_solve)
    afresh = make().fit(X_in, P, s)
    # afresh: the same factors as cached (still computed, then ignored), plus one per solve
    assert len(calls) - 2 * n_cached == solves
    np.testing.assert_array_equal(cached.decision_function(X_in), afresh.decision_function(X_in))
    assert cached.C_ == afresh.C_

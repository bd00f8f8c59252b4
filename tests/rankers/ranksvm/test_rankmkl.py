"""RankMKL: GMKL gradient by finite differences, learned weights, fast scoring."""


import numpy as np
import pytest
from toydata import toy_ranking_pairs

from rankbench.rankers.ranksvm._oracles import pair_matrix
from rankbench.rankers.ranksvm._primal import solve_gram
from rankbench.rankers.ranksvm.kernel import KernelRankSVM
from rankbench.rankers.ranksvm.rankmkl import RankMKL


def test_mkl_gradient_matches_finite_differences():
    """dT/dd_k = lam d_k - 0.5 b' K_k b (Danskin; Sharaf et al. eq. 8-9)."""
    X, P, s, _ = toy_ranking_pairs(n=40)
    Ks = np.stack([X[:, :4] @ X[:, :4].T, X[:, 4:] @ X[:, 4:].T]) + 1e-6 * np.eye(40)
    A = pair_matrix(P, s, 40)
    lam, C = 0.5, 1.0

    def T(d):
        b, sol = solve_gram(np.tensordot(d, Ks, axes=1), A, C, similar=s == 0, tol=1e-14)
        return sol.fun + 0.5 * lam * d @ d, b

    d = np.array([0.7, 1.3])
    T0, b = T(d)
    grad = lam * d - 0.5 * np.einsum("i,kij,j->k", b, Ks, b)
    eps = 1e-5
    fd = [(T(d + eps * e)[0] - T(d - eps * e)[0]) / (2 * eps) for e in np.eye(2)]
    np.testing.assert_allclose(grad, fd, rtol=1e-4)


def test_mkl_weights_favour_the_informative_view():
    rng = np.random.default_rng(0)
    n = 120
    good = rng.normal(size=(n, 5))
    y = good @ rng.normal(size=5)
    noise = rng.normal(size=(n, 40))
    hist = rng.uniform(size=(n, 12))
    P = rng.integers(0, n, size=(2000, 2))
    P = P[y[P[:, 0]] > y[P[:, 1]]]
    views = {"good": good, "noise": noise, "hist": hist}
    m = RankMKL(kernels={"hist": "chi2"}, C=1.0, random_state=0).fit(views, P, np.ones(len(P), int))
    w = m.kernel_weights_
    assert min(w.values()) >= 0
    assert w["good"] > 2 * max(w["noise"], w["hist"])
    f = m.decision_function(views)
    assert np.mean(f[P[:, 0]] > f[P[:, 1]]) > 0.97
    hist_obj = m.objective_history_
    assert all(b <= a + 1e-9 for a, b in zip(hist_obj, hist_obj[1:]))  # monotone descent


def test_mkl_rejects_unknown_view_and_bad_options():
    X, P, s, _ = toy_ranking_pairs()
    with pytest.raises(ValueError, match="kernels names view 'gist'"):
        RankMKL(kernels={"gist": "chi2"}).fit({"a": X}, P, s)
    with pytest.raises(ValueError, match="rankmkl.kernels: expected a mapping"):
        RankMKL(kernels={"a": "rbf"}).fit({"a": X}, P, s)


def test_mkl_fast_scoring_equals_the_kernel_expansion():
    rng = np.random.default_rng(2)
    views = {"a": rng.normal(size=(50, 6)), "h": rng.uniform(size=(50, 9))}
    X, P, s, _ = toy_ranking_pairs(n=50)
    m = RankMKL(kernels={"h": "chi2"}, C=1.0).fit(views, P, s)
    new = {"a": rng.normal(size=(20, 6)), "h": rng.uniform(size=(20, 9))}
    Ks = m._grams(new, m.X_fit_, m.gamma_) / m.kernel_divisors_[:, None, None]
    np.testing.assert_allclose(m.decision_function(new), np.tensordot(m.d_, Ks, axes=1) @ m.dual_coef_,
                               rtol=1e-10, atol=1e-10)
    k = KernelRankSVM(kernel="linear", C=1.0).fit(views["a"], P, s)
    np.testing.assert_allclose(k.decision_function(new["a"]),
                               k._gram(new["a"], k.X_fit_, 1.0) @ k.dual_coef_, atol=1e-10)


def test_lam_must_be_positive():
    from rankbench.errors import ParameterError
    from rankbench.params import check_params

    with pytest.raises(ParameterError, match=r"rankers.M.lam: expected a number > 0, got 0"):
        check_params(RankMKL, {"lam": 0}, "rankers.M")

def test_a_line_search_that_gives_up_keeps_the_last_weights_and_says_so():
    """With a loose inner solve no projected step may decrease T: the search's last trial (T up)
    was taken as the next iterate and reported converged."""
    from rankbench.rankers.ranksvm._oracles import pair_matrix
    from rankbench.rankers.ranksvm.rankmkl import gmkl
    from rankbench.utils.optim import LINE_SEARCH

    rng = np.random.default_rng(0)
    Xs = [rng.random((25, k)) for k in (3, 5, 4)]
    Ks = np.stack([x @ x.T for x in Xs])
    Ks /= np.einsum("kii->k", Ks)[:, None, None] / 25
    s = Xs[0].sum(1)
    P = np.array([rng.choice(25, 2, replace=False) for _ in range(80)])
    sign = np.sign(s[P[:, 0]] - s[P[:, 1]]).astype(int)
    r = gmkl(Ks, pair_matrix(P, sign, 25), sign == 0, 1.0, 0.01, 50, 1e-9, 1e-1)
    assert r.status == LINE_SEARCH and (np.diff(r.history) <= 0).all()

"""Linear RankSVM: optimal against a brute-force minimiser, pair signs, CV, views, input checks."""


import numpy as np
import pytest
from scipy.optimize import minimize
from toydata import toy_ranking_pairs

from rankbench.rankers.base import capabilities
from rankbench.rankers.ranksvm.kernel import KernelRankSVM
from rankbench.rankers.ranksvm.linear import RankSVM
from rankbench.registry import rankers


def brute_objective(w, X, P, s, C):
    """The primal objective written out over explicit pair differences (fine for tiny data)."""
    m = (X[P[:, 0]] - X[P[:, 1]]) @ w
    r = np.where(s != 0, np.maximum(0, 1 - m), -m)
    return 0.5 * w @ w + C * r @ r


def test_registered():
    for name in ("ranksvm", "kernel_ranksvm", "rankmkl"):
        assert "pairwise" in capabilities(rankers.get(name))


@pytest.mark.parametrize("C", [0.1, 3.0])
def test_ranksvm_is_optimal_vs_brute_force(C):
    X, P, s, _ = toy_ranking_pairs()
    r = RankSVM(C=C, tol=1e-10).fit(X, P, s)
    ref = minimize(brute_objective, np.zeros(X.shape[1]), args=(X, P, s, C), method="BFGS",
                   options={"gtol": 1e-10, "maxiter": 10000})
    assert r.objective_ == pytest.approx(ref.fun, rel=1e-7)
    np.testing.assert_allclose(r.coef_, ref.x, atol=1e-4)
    assert brute_objective(r.coef_, X, P, s, C) == pytest.approx(r.objective_, rel=1e-10)


def test_ranksvm_sign_minus_one_flips_pairs():
    X, P, s, _ = toy_ranking_pairs(similar=False)
    a = RankSVM(C=1.0).fit(X, P, s)
    b = RankSVM(C=1.0).fit(X, P[:, ::-1], -s)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-8)


def test_cv_picks_from_grid_and_is_seeded():
    X, P, s, _ = toy_ranking_pairs()
    a = RankSVM(C=[0.001, 1.0], cv=3, random_state=0).fit(X, P, s)
    b = RankSVM(C=[0.001, 1.0], cv=3, random_state=0).fit(X, P, s)
    assert a.C_ in (0.001, 1.0) and a.cv_scores_ == b.cv_scores_
    k = KernelRankSVM(kernel="chi2", C=[0.1, 1.0], gamma=[0.5, 2.0], cv=3, random_state=0).fit(np.abs(X), P, s)
    assert len(k.cv_scores_) == 4 and k.gamma_ in (0.5, 2.0)


def test_cv_over_pairs_scores_held_out_pairs_by_brute_force():
    X, P, s, _ = toy_ranking_pairs()
    grid = [0.001, 1.0]
    r = RankSVM(C=grid, cv=3, cv_unit="pairs", random_state=4).fit(X, P, s)
    fold = np.random.default_rng(4).permutation(len(P)) % 3  # the folds the ranker draws
    expect = []
    for C in grid:
        accs = []
        for k in range(3):
            w = RankSVM(C=C).fit(X, P[fold != k], s[fold != k]).coef_
            held = (fold == k) & (s != 0)
            accs.append(np.mean((X[P[held, 0]] - X[P[held, 1]]) @ w > 0))
        expect.append(np.mean(accs))
    np.testing.assert_allclose(r.cv_scores_, expect)
    assert r.C_ == grid[int(np.argmax(expect))]


def test_ranksvm_views_scale_each_set_to_unit_range():
    X, P, s, _ = toy_ranking_pairs()
    views = {"a": X[:, :4] * 100 + 7, "b": X[:, 4:]}
    r = RankSVM(C=1.0).fit(views, P, s)
    lo, hi = r.view_ranges_["a"]
    assert lo == pytest.approx(views["a"].min()) and hi == pytest.approx(views["a"].max())
    Z = np.hstack([(views[k] - views[k].min()) / np.ptp(views[k]) for k in "ab"])
    np.testing.assert_allclose(r.decision_function(views), RankSVM(C=1.0).fit(Z, P, s).decision_function(Z))


def test_bad_pairs_are_refused():
    X, P, s, _ = toy_ranking_pairs()
    with pytest.raises(ValueError, match="ordered pair"):
        RankSVM().fit(X, P, np.zeros(len(P), int))
    with pytest.raises(ValueError, match="lie in"):
        RankSVM().fit(X, P + 1000, s)


def test_ranksvm_more_dims_than_items_is_still_optimal():
    """With d > n the solver works in the row space of X; the optimum must not change."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(15, 40))
    y = X[:, 0]
    P = np.array([(i, j) for i in range(15) for j in range(15) if y[i] > y[j]])
    s = np.ones(len(P), int)
    r = RankSVM(C=0.5, tol=1e-10).fit(X, P, s)
    ref = minimize(brute_objective, np.zeros(40), args=(X, P, s, 0.5), method="BFGS",
                   options={"gtol": 1e-10, "maxiter": 10000})
    assert r.objective_ == pytest.approx(ref.fun, rel=1e-7)
    np.testing.assert_allclose(r.coef_, ref.x, atol=1e-4)

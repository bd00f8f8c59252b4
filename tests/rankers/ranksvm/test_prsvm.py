"""PRSVM (Prosser et al. eq. 4): streaming equals materialised, sign convention, C by cross-validation."""


import numpy as np
import pytest
from toydata import two_camera_people

from rankbench.metrics import cmc_curve
from rankbench.rankers._pair_grid import weighted_l1
from rankbench.rankers.ranksvm.prsvm import PRSVM
from rankbench.utils import jit


def test_prsvm_streaming_equals_materialised_and_sign():
    X, y, cams = two_camera_people(15, 9, noise=0.2, seed=3)
    a = PRSVM(C=0.5, tol=1e-8, max_newton=50, max_cg=100).fit(X, y, cams)
    b = PRSVM(C=0.5, tol=1e-8, max_newton=50, max_cg=100, materialize=True).fit(X, y, cams)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-5)
    assert a.n_triples_ == 2 * 15 * 14
    # larger similarity = better: the true matches of the training set come first
    pa, pb = cams == "a", cams == "b"
    S = a.similarity(X[pa], X[pb])
    by_hand = [[sum(a.coef_[k] * abs(q[k] - g[k]) for k in range(9)) for g in X[pb]] for q in X[pa]]
    np.testing.assert_allclose(S, by_hand, rtol=1e-5)  # scored in single precision
    assert cmc_curve(S, y[pa], y[pb])[0] == 1.0
    assert (a.coef_ < 0).mean() > 0.5  # differences lower the score


def test_prsvm_minimises_eq_4_over_every_triple():
    """Independent of the solver and its oracles: eq. 4 written over the explicit triples and
    minimised by scipy (L-BFGS, exact gradient of the squared hinge)."""
    from scipy.optimize import minimize

    X, y, cams = two_camera_people(8, 5, noise=0.3, seed=1)
    C = 0.3
    rows = [np.abs(X[i] - X[p]) - np.abs(X[i] - X[n]) for i in range(16) for p in range(16) for n in range(16)
            if cams[p] != cams[i] and cams[n] != cams[i] and y[p] == y[i] and y[n] != y[i]]
    D = np.array(rows)  # w^T D_s should be >= 1: the true match scores higher by the margin

    def f(w):
        r = np.maximum(0.0, 1.0 - D @ w)
        return 0.5 * w @ w + C * r @ r, w - 2 * C * D.T @ r

    ref = minimize(f, np.zeros(5), jac=True, method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 1e-15}).x
    w = PRSVM(C=C, tol=1e-10, max_newton=50, max_cg=100).fit(X, y, cams).coef_
    np.testing.assert_allclose(w, ref, atol=1e-6)


def test_prsvm_cross_validates_C_from_the_grid():
    X, y, cams = two_camera_people(20, 6, noise=0.5, seed=4)
    r = PRSVM(C=[0.001, 0.1, 10.0], cv=2, cv_patience=5, random_state=0).fit(X, y, cams)
    assert r.C_ in (0.001, 0.1, 10.0)
    assert set(r.cv_scores_) == {0.001, 0.1, 10.0}
    assert r.cv_scores_[r.C_] == max(r.cv_scores_.values())
    # without cameras every other image is a candidate
    r2 = PRSVM(C=1.0).fit(X, y)
    assert r2.n_triples_ == 40 * 38


def test_folds_side_by_side_choose_the_same_C_and_model():
    X, y, cams = two_camera_people(24, 6, noise=0.5, seed=5)
    kw = dict(C=[0.001, 0.01, 0.1, 10.0], cv=3, cv_patience=2, random_state=1)
    one = PRSVM(n_jobs=1, **kw).fit(X, y, cams)
    par = PRSVM(n_jobs=3, **kw).fit(X, y, cams)  # three folds on three threads
    assert one.C_ == par.C_ and one.cv_scores_ == par.cv_scores_
    np.testing.assert_allclose(one.coef_, par.coef_, rtol=1e-6)  # the final fit's pass, shared by 3 threads
    two = PRSVM(n_jobs=2, **kw).fit(X, y, cams)  # two folds side by side, then the third on both threads
    assert two.cv_scores_ == one.cv_scores_


def test_the_chosen_C_is_the_one_separate_fits_on_the_same_folds_choose():
    """Brute force: each C fitted afresh (no warm start) on each fold's training people, scored by
    ranking the held-out images of one camera against the other's by hand."""
    X, y, cams = two_camera_people(24, 6, noise=0.8, seed=10)
    grid = [0.0001, 0.01, 1.0, 100.0]
    kw = dict(tol=1e-10, max_newton=100, max_cg=200)
    r = PRSVM(C=grid, cv=3, cv_patience=len(grid), cv_rank=3, random_state=2, **kw).fit(X, y, cams)
    folds = np.array_split(np.random.default_rng(2).permutation(np.unique(y)), 3)
    mean = []
    for C in grid:
        per_fold = []
        for held in folds:
            val = np.isin(y, held)
            w = PRSVM(C=C, **kw).fit(X[~val], y[~val], cams[~val]).coef_
            Xv, yv, cv = X[val], y[val], cams[val]
            ranks = []
            for i in range(len(Xv)):
                other = np.flatnonzero(cv != cv[i])
                score = np.abs(Xv[other] - Xv[i]) @ w
                ranks.append(1 + np.sum(score > score[yv[other] == yv[i]][0]))
            per_fold.append(np.mean([np.mean(np.asarray(ranks) <= k) for k in (1, 2, 3)]))
        mean.append(np.mean(per_fold))
    np.testing.assert_allclose([r.cv_scores_[C] for C in grid], mean, atol=1e-9)
    assert r.C_ == grid[int(np.argmax(mean))] == 1.0  # not the first: the choice is tested


@pytest.mark.skipif(not jit.AVAILABLE, reason="numba is not installed")
def test_compiled_passes_fit_the_numpy_model():
    """The compiled passes sum in another order than BLAS: the same C and the same w to float32 rounding."""
    X, y, cams = two_camera_people(30, 40, noise=0.5, seed=2)
    kw = dict(C=[0.001, 0.01, 0.1, 10.0], cv=2, random_state=0)
    with jit.use_compiled(True):
        a = PRSVM(**kw).fit(X, y, cams)
    with jit.use_compiled(False):
        b = PRSVM(**kw).fit(X, y, cams)
    assert a.C_ == b.C_
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-4, atol=1e-6 * np.abs(b.coef_).max())


@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=pytest.mark.skipif(not jit.AVAILABLE, reason="numba"))])
@pytest.mark.parametrize("k", [None, 1, 2, 5])
def test_weighted_l1_is_the_weighted_sum_of_absolute_differences(compiled, k):
    rng = np.random.default_rng(3)
    Q, G = rng.random((7, 100)), rng.random((130, 100))  # more columns than one tile
    w = rng.standard_normal(100) if k is None else rng.standard_normal((100, k))
    with jit.use_compiled(compiled):
        got = weighted_l1(Q, G, w)
    want = np.einsum("qgd,d...->qg...", np.abs(Q[:, None] - G[None]), w)  # by definition, float64
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)

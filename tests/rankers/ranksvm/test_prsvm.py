"""PRSVM (Prosser et al. eq. 4): streaming equals materialised, sign convention, C by cross-validation."""


import numpy as np
from toydata import two_camera_people

from rankbench.metrics import cmc_curve
from rankbench.rankers._pair_grid import weighted_l1
from rankbench.rankers.ranksvm.prsvm import PRSVM


def test_prsvm_streaming_equals_materialised_and_sign():
    X, y, cams = two_camera_people(15, 9, noise=0.2, seed=3)
    a = PRSVM(C=0.5, tol=1e-8, max_newton=50, max_cg=100).fit(X, y, cams)
    b = PRSVM(C=0.5, tol=1e-8, max_newton=50, max_cg=100, materialize=True).fit(X, y, cams)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-5)
    assert a.n_triples_ == 2 * 15 * 14
    # larger similarity = better: the true matches of the training set come first
    pa, pb = cams == "a", cams == "b"
    S = a.similarity(X[pa], X[pb])
    np.testing.assert_allclose(S, weighted_l1(X[pa], X[pb], a.coef_))
    np.testing.assert_allclose(S[0, 1], a.coef_ @ np.abs(X[pa][0] - X[pb][1]), rtol=1e-5)
    assert cmc_curve(S, y[pa], y[pb])[0] == 1.0
    assert (a.coef_ < 0).mean() > 0.5  # differences lower the score


def test_prsvm_cross_validates_C_from_the_grid():
    X, y, cams = two_camera_people(20, 6, noise=0.5, seed=4)
    r = PRSVM(C_grid=(0.001, 0.1, 10.0), cv=2, cv_patience=5, random_state=0).fit(X, y, cams)
    assert r.C_ in (0.001, 0.1, 10.0)
    assert set(r.cv_scores_) == {0.001, 0.1, 10.0}
    assert r.cv_scores_[r.C_] == max(r.cv_scores_.values())
    # without cameras every other image is a candidate
    r2 = PRSVM(C=1.0).fit(X, y)
    assert r2.n_triples_ == 40 * 38


def test_folds_side_by_side_choose_the_same_C_and_model():
    X, y, cams = two_camera_people(24, 6, noise=0.5, seed=5)
    kw = dict(C_grid=(0.001, 0.01, 0.1, 10.0), cv=3, cv_patience=2, random_state=1)
    one = PRSVM(n_jobs=1, **kw).fit(X, y, cams)
    par = PRSVM(n_jobs=3, **kw).fit(X, y, cams)  # three folds on three threads
    assert one.C_ == par.C_ and one.cv_scores_ == par.cv_scores_
    np.testing.assert_allclose(one.coef_, par.coef_, rtol=1e-6)  # the final fit's pass, shared by 3 threads
    two = PRSVM(n_jobs=2, **kw).fit(X, y, cams)  # two threads for three folds
    assert two.cv_scores_ == one.cv_scores_

"""PKLR (Yan et al. 2004, Eqs. 5-11): objective, derivatives, Newton vs trust region, special cases."""

import numpy as np
import pytest
from scipy.optimize import approx_fprime, minimize

from rankbench.errors import ConfigError
from rankbench.params import check_params
from rankbench.protocols.base import Meter
from rankbench.rankers.logistic._dual_logistic import (
    gradient,
    hessian,
    label_terms,
    newton,
    objective,
    ovr_decode,
    pair_terms,
    rbf_kernel,
)
from rankbench.rankers.logistic.klr import KernelLogisticRegression
from rankbench.rankers.logistic.pklr import PKLR
from rankbench.records import TrialSplit
from rankbench.registry import datasets, protocols, rankers


def problem(seed=0, n_lab=12, n_unl=8, one_vs_all=False, mu=1.0):
    """A small binary problem: labelled rows, unlabelled rows, constraints of both kinds."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_lab + n_unl, 2))
    y = np.where(X[:n_lab, 0] + 0.5 * rng.normal(size=n_lab) > 0, 1.0, -1.0)
    C = np.array([[0, n_lab, 1], [n_lab + 1, n_lab + 2, 1], [n_lab + 3, 1, 0], [n_lab + 4, n_lab + 5, 0],
                  [n_lab + 6, n_lab + 7, 1]])
    terms = label_terms(np.arange(n_lab), y) + pair_terms(C[:, 0], C[:, 1], C[:, 2], mu, one_vs_all)
    return X, y, C, terms


def brute_objective(alpha, b, K, y, C, lam, mu, one_vs_all):
    """Eq. 5 / Eq. 11 written term by term, independently of LossTerms."""
    f = K @ alpha + b
    L = lambda z: np.log1p(np.exp(-z))  # noqa: E731
    total = sum(L(y[i] * f[i]) for i in range(len(y)))
    for i, j, same in C:
        yp = 1 if same else -1
        if one_vs_all and yp < 0:
            total += mu * L(-f[i] - f[j])
        else:
            total += mu * (np.log1p(np.exp(f[i] - yp * f[j])) + np.log1p(np.exp(yp * f[j] - f[i])))
    return total + lam * alpha @ K @ alpha


# ------------------------------------------------------------------------------ objective and derivatives
@pytest.mark.parametrize("one_vs_all", [False, True])
def test_objective_is_eq5_and_eq11_term_by_term(one_vs_all):
    X, y, C, terms = problem(one_vs_all=one_vs_all, mu=0.7)
    K = rbf_kernel(X, X, 0.5)
    a = np.random.default_rng(1).normal(size=len(X))
    assert objective(a, 0.3, K, terms, 0.01) == pytest.approx(
        brute_objective(a, 0.3, K, y, C, 0.01, 0.7, one_vs_all), rel=1e-12)


@pytest.mark.parametrize("one_vs_all", [False, True])
def test_gradient_and_hessian_match_finite_differences(one_vs_all):
    X, y, C, terms = problem(one_vs_all=one_vs_all)
    K, lam = rbf_kernel(X, X, 0.5), 0.05
    z0 = np.random.default_rng(2).normal(size=len(X) + 1)
    R = lambda z: objective(z[:-1], z[-1], K, terms, lam)  # noqa: E731
    g = gradient(z0[:-1], z0[-1], K, terms, lam)
    assert np.allclose(g, approx_fprime(z0, R, 1e-6), atol=1e-5)
    H = hessian(z0[:-1], z0[-1], K, terms, lam)
    eps = 1e-6
    grad = lambda z: gradient(z[:-1], z[-1], K, terms, lam)  # noqa: E731
    H_fd = np.array([(grad(z0 + eps * e) - grad(z0 - eps * e)) / (2 * eps) for e in np.eye(len(z0))])
    assert np.allclose(H, H_fd, atol=1e-6)
    assert np.allclose(H, H.T)


@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("one_vs_all", [False, True])
def test_newton_optimum_equals_scipy_trust_region(fit_intercept, one_vs_all):
    X, y, C, terms = problem(seed=3, one_vs_all=one_vs_all)
    K, lam = rbf_kernel(X, X, 0.5), 0.01
    # a tight tolerance: the default (1e-10 of R) stops one quadratic step short, where f may still
    # move by ~1e-4 along directions of curvature ~lambda
    res = newton(K, terms, lam, fit_intercept, tol=1e-15)
    alpha, b = res.x, res.intercept
    m = len(X)

    def split(z):
        return z[:m], (z[m] if fit_intercept else 0.0)

    def fun(z):
        return objective(*split(z), K, terms, lam)

    def jac(z):
        g = gradient(*split(z), K, terms, lam)
        return g if fit_intercept else g[:m]

    def hess(z):
        H = hessian(*split(z), K, terms, lam)
        return H if fit_intercept else H[:m, :m]

    ref = minimize(fun, np.zeros(m + fit_intercept), jac=jac, hess=hess, method="trust-exact",
                   options={"gtol": 1e-8})
    assert ref.success
    assert objective(alpha, b, K, terms, lam) == pytest.approx(ref.fun, abs=1e-12)
    assert np.abs(jac(np.r_[alpha, [b] if fit_intercept else []])).max() < 1e-8
    a_ref, b_ref = split(ref.x)
    # alpha itself is ill-determined when K is near-singular; f on the basis is not
    assert np.abs(K @ alpha + b - (K @ a_ref + b_ref)).max() < 1e-7


# ------------------------------------------------------------------------------ estimator
def test_parameters_are_declared_and_checked():
    with pytest.raises(ConfigError, match="rho"):
        check_params(PKLR, {"rho": -1.0}, "ranker pklr")
    with pytest.raises(ConfigError, match="kernel"):
        check_params(PKLR, {"kernel": "poly"}, "ranker pklr")
    with pytest.raises(ConfigError, match="mu"):
        PKLR(mu=-1).fit(np.eye(2), [0, 1])
    m = rankers.build("pklr", {})
    # the paper's settings: lambda, mu; rho chosen by cross-validation on the training rows (Sec. 4.3)
    assert (m.lam, m.mu, m.rho_scale) == (0.001, 1.0, "median") and isinstance(m.rho, tuple) and len(m.rho) > 1


def test_not_fitted_and_bad_constraints():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        PKLR().predict(np.zeros((2, 2)))
    X = np.random.default_rng(0).normal(size=(6, 2))
    y = np.array([0, 1, 0, 1, -1, -1])
    for C, match in [(np.array([[0, 6, 1]]), "row indices"), (np.array([[0, 1, 2]]), "same"),
                     (np.array([0, 1, 1]), r"\(c, 3\)")]:
        with pytest.raises(ValueError, match=match):
            PKLR().fit(X, y, constraints=C)
    with pytest.raises(ValueError, match="two classes"):
        PKLR().fit(X, np.array([0, 0, 0, 0, -1, -1]))


@pytest.mark.parametrize("labels", [np.array([0, 1]), np.array([0, 1, 2])])
def test_without_constraints_pklr_is_klr(labels):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(45, 2)) + np.repeat(rng.normal(0, 3, (3, 2)), 15, 0)
    y = np.repeat(np.arange(3), 15)
    keep = np.isin(y, labels)
    X, y = X[keep], y[keep]
    klr = KernelLogisticRegression(rho=0.5, rho_scale="absolute", lam=0.01).fit(X, y)
    for C in (None, np.zeros((0, 3), int)):
        pk = PKLR(rho=0.5, rho_scale="absolute", lam=0.01).fit(X, y, constraints=C)
        assert np.array_equal(pk.decision_function(X), klr.decision_function(X))
    # mu = 0 ignores the constraints' losses; their ends only join the basis with zero weight
    Xu = np.vstack([X, rng.normal(size=(2, 2))])
    pk0 = PKLR(rho=0.5, rho_scale="absolute", lam=0.01, mu=0.0).fit(Xu, np.r_[y, -1, -1], constraints=[[len(y), len(y) + 1, 1]])
    assert np.allclose(pk0.decision_function(X), klr.decision_function(X), atol=1e-8)


def test_unlabelled_rows_outside_constraints_are_ignored():
    X, y, C, _ = problem()
    yy = np.r_[(y > 0).astype(int), -np.ones(8, int)]
    ref = PKLR(rho=0.5, rho_scale="absolute").fit(X, yy, constraints=C)
    Xe = np.vstack([X, np.full((3, 2), 9.0)])
    more = PKLR(rho=0.5, rho_scale="absolute").fit(Xe, np.r_[yy, -1, -1, -1], constraints=C)
    assert len(more.X_fit_) == len(ref.X_fit_) == len(X)
    assert np.allclose(more.decision_function(X), ref.decision_function(X))


def test_constraints_pull_pairs_together_and_apart():
    """A same pair straddling the boundary moves to one side; a different pair on one side splits."""
    X = np.array([[-2.0, 0], [2.0, 0], [-0.3, 0], [0.3, 0], [0.6, 1.0], [1.2, 1.0]])
    y = np.array([0, 1, -1, -1, -1, -1])
    base = PKLR(rho=0.5, rho_scale="absolute").fit(X[:2], y[:2]).decision_function(X)
    same = PKLR(rho=0.5, rho_scale="absolute", mu=5).fit(X[:4], y[:4], constraints=[[2, 3, 1]]).decision_function(X)
    assert abs(same[2] - same[3]) < abs(base[2] - base[3])
    diff = PKLR(rho=0.5, rho_scale="absolute", mu=5).fit(X, y, constraints=[[4, 5, 0]]).decision_function(X)
    assert base[4] > 0 and base[5] > 0
    assert abs(diff[4] + diff[5]) < abs(base[4] + base[5])


def test_linear_kernel_is_eq4_logistic_regression_on_pseudo_labelled_differences():
    """Eq. 4 with mu = 1: labelled rows plus x_c1 - y'_c x_c2 labelled +1 and -1 (test-only oracle)."""
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 3))
    y = np.r_[(X[:30] @ [1.0, -1.0, 0.5] + 0.3 * rng.normal(size=30) > 0).astype(int), -np.ones(10, int)]
    C = np.array([[30, 31, 1], [32, 33, 0], [34, 35, 1], [36, 2, 0], [37, 38, 1], [39, 5, 1]])
    lam = 0.05
    pk = PKLR(kernel="linear", lam=lam, tol=1e-14).fit(X, y, constraints=C)
    w = pk.dual_coef_[0] @ pk.X_fit_  # f(x) = sum_j alpha_j xbar_j^T x = w^T x
    yp = np.where(C[:, 2] == 1, 1.0, -1.0)
    diffs = X[C[:, 0]] - yp[:, None] * X[C[:, 1]]
    Xa = np.vstack([X[:30], diffs, diffs])
    ya = np.r_[y[:30], np.ones(len(C), int), np.zeros(len(C), int)]
    # sum_i log(1 + e^{-y w^T x}) + lam ||w||^2  <=>  scikit-learn's C = 1 / (2 lam)
    ref = LogisticRegression(C=1 / (2 * lam), fit_intercept=False, tol=1e-12, max_iter=10000).fit(Xa, ya)
    assert np.allclose(w, ref.coef_[0], atol=1e-6)
    assert np.allclose(pk.decision_function(X), X @ ref.coef_[0], atol=1e-5)


# ------------------------------------------------------------------------------ multi-class
def test_multiclass_uses_eq11_for_negative_constraints_and_loss_decoding():
    rng = np.random.default_rng(6)
    centres = np.array([[0.0, 0], [4, 0], [0, 4]])
    X = np.vstack([centres[np.repeat(np.arange(3), 5)] + 0.5 * rng.normal(size=(15, 2)),
                   centres[[0, 1, 2, 0]] + 0.5 * rng.normal(size=(4, 2))])
    y = np.r_[np.repeat(np.arange(3), 5), -np.ones(4, int)]
    C = np.array([[15, 18, 1], [15, 16, 0], [16, 17, 0]])
    m = PKLR(rho=0.3, rho_scale="absolute", lam=0.01).fit(X, y, constraints=C)
    assert m.dual_coef_.shape == (3, 19) and m.n_constraints_ == 3
    # each one-against-all problem is Newton on labels + Eq. 5 positive + Eq. 11 negative terms
    K = rbf_kernel(X, X, 0.3)
    for s in range(3):
        terms = label_terms(np.arange(15), np.where(y[:15] == s, 1.0, -1.0)) + pair_terms(
            C[:, 0], C[:, 1], C[:, 2], 1.0, one_vs_all=True)
        assert len(terms) == 15 + 2 + 2  # a positive constraint: two terms, a negative one: one
        a = newton(K, terms, 0.01).x
        assert np.allclose(a, m.dual_coef_[s])
    F = m.decision_function(X)
    M = 2 * np.eye(3) - 1
    loss = np.log1p(np.exp(-(F[:, None, :] * M[None]))).sum(-1)
    assert (ovr_decode(F) == loss.argmin(1)).all()
    assert (ovr_decode(F) == F.argmax(1)).all()  # L(f) - L(-f) = -f: loss decoding is argmax here
    assert (m.predict(X[:15]) == y[:15]).all()


def test_use_negative_false_is_pklr_with_the_positive_constraints_only():
    """Figure 6b/d's middle curve: the negative constraints are dropped, positive ones kept."""
    rng = np.random.default_rng(7)
    X = np.vstack([np.repeat([[0.0, 0], [3, 0], [0, 3]], 4, 0) + 0.4 * rng.normal(size=(12, 2)),
                   rng.normal(1, 1.5, (6, 2))])
    y = np.r_[np.repeat(np.arange(3), 4), -np.ones(6, int)]
    C = np.array([[12, 13, 1], [12, 14, 0], [15, 16, 0], [16, 17, 1], [13, 0, 0]])
    pos = C[C[:, 2] == 1]
    dropped = PKLR(use_negative=False).fit(X, y, constraints=C)
    ref = PKLR().fit(X, y, constraints=pos)
    assert dropped.n_constraints_ == 2 and len(dropped.X_fit_) == len(ref.X_fit_) == 16  # rows 14, 15 left out
    assert np.allclose(dropped.decision_function(X), ref.decision_function(X))
    assert not np.allclose(PKLR().fit(X, y, constraints=C).decision_function(X), ref.decision_function(X))


def test_classes_can_be_any_labels_but_minus_one():
    X = np.array([[0.0], [0.2], [3.0], [3.2], [1.0]])
    m = PKLR(rho=1.0, rho_scale="absolute").fit(X, np.array([7, 7, 9, 9, -1]), constraints=[[4, 0, 1]])
    assert list(m.classes_) == [7, 9] and set(m.predict(X)) <= {7, 9}


# ------------------------------------------------------------------------------ the paper's spirals
@pytest.mark.parametrize("reading", [{"rho": 0.08, "rho_scale": "absolute"}, {}], ids=["rho 0.08", "rho by CV"])
def test_spirals_pklr_beats_klr_and_rca_klr_with_four_same_pairs(reading):
    """Section 2.3 / Figure 3: 40 labelled points per class, 4 positive constraints among the
    unlabelled points (drawn at random here; the paper's were placed by hand).

    Measured over seeds 0-9 (error %, mean), with the paper's literal rho = 0.08: KLR 11.3, RCA+KLR
    18.4, PKLR 9.8 (PKLR better than KLR in 8 seeds, worse in 2); with rho chosen by
    cross-validation on the labelled points (the default; it picks 0.16-0.20): KLR 9.3, RCA+KLR
    16.4, PKLR 8.3 (PKLR better than KLR in 7 seeds, equal in 1, worse in 2). The gain is real but
    small, not the paper's "much better boundary", so only the means and the count of seeds where
    PKLR is not worse are asserted; RCA+KLR is worse than KLR here, where the paper has it slightly
    better.
    """
    ds = datasets.build("two_spirals", {}).load()
    X = ds.arrays["points"]
    p = protocols.build("classification", {"n_train_per_class": 40, "n_constraints": 4,
                                           "constraint_type": "same"})
    p.check_dataset(ds)
    errs = {"kernel_logreg": [], "rca_klr": [], "pklr": []}
    for seed in range(10):
        sp = p.split(ds, np.random.default_rng(seed))
        for name in errs:
            res = p.evaluate(lambda: rankers.build(name, reading), X, ds, TrialSplit.drawn(sp),
                             Meter(measure_memory=False))
            errs[name].append(res.metrics["error_rate"])
            assert res.extra["constraints_used"] == (name != "kernel_logreg")
    e = {k: np.array(v) for k, v in errs.items()}
    assert e["pklr"].mean() < e["kernel_logreg"].mean()
    assert (e["pklr"] <= e["kernel_logreg"]).sum() >= 8
    assert (e["pklr"] <= e["rca_klr"]).all() and e["pklr"].mean() < e["rca_klr"].mean()

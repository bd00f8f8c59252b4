"""Kernel logistic regression (Yan et al.'s baseline)."""


import numpy as np
import pytest
from protocol_helpers import evaluate_with
from scipy.optimize import minimize
from toydata import labelled_blobs

from rankbench.rankers.logistic.klr import klr_newton, klr_objective, rbf_kernel
from rankbench.registry import datasets, protocols, rankers


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_klr_newton_matches_scipy_minimiser(fit_intercept):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(25, 2))
    y = np.where(X[:, 0] - X[:, 1] + 0.7 * rng.normal(size=25) > 0, 1.0, -1.0)
    K, lam = rbf_kernel(X, X, 0.5), 0.05
    res = klr_newton(K, y, lam, fit_intercept)
    alpha, b = res.x, res.intercept
    assert res.success and res.status == 0 and res.nit >= 1

    def obj(z):  # independent of the Newton code: objective only, numerical gradients
        return klr_objective(z[:25], z[25] if fit_intercept else 0.0, K, y, lam)

    ref = minimize(obj, np.zeros(26), method="BFGS", options={"gtol": 1e-9})
    assert klr_objective(alpha, b, K, y, lam) <= ref.fun + 1e-7
    f_ref = K @ ref.x[:25] + (ref.x[25] if fit_intercept else 0.0)
    assert np.abs(K @ alpha + b - f_ref).max() < 1e-3


def test_rbf_kernel_definition():
    A, B = np.array([[0.0, 0.0], [1.0, 2.0]]), np.array([[1.0, 0.0]])
    assert np.allclose(rbf_kernel(A, B, 0.08).ravel(), np.exp(-0.08 * np.array([1.0, 4.0])))


def test_klr_multiclass_decoding_and_shapes():
    X, ds = labelled_blobs()
    y = ds.items.label.to_numpy()
    m = rankers.build("kernel_logreg", {"rho": 0.5, "rho_scale": "absolute", "lam": 0.01})
    assert m.fit(X, y) is m
    F = m.decision_function(X)
    assert F.shape == (90, 3) and list(m.classes_) == [5, 15, 25]
    # loss-based decoding, brute force: argmin_r sum_s log(1 + exp(-m_rs f_s))
    M = 2 * np.eye(3) - 1
    loss = np.log1p(np.exp(-(F[:, None, :] * M[None]))).sum(-1)
    assert (m.predict(X) == m.classes_[loss.argmin(1)]).all()
    assert np.mean(m.predict(X) == y) > 0.9
    binary = rankers.build("kernel_logreg", {}).fit(X[:60], y[:60])
    assert binary.decision_function(X).shape == (90,)
    assert set(binary.predict(X)) <= {5, 15}


def test_decoding_losses_are_the_loss_of_every_class_by_brute_force():
    """The capability the video protocol's selector uses (Yan et al. Eq. 12): per class r,
    sum_s log(1 + exp(-m_rs f_s(x))), by loops; two classes: one output, code [[-1], [+1]]."""
    X, ds = labelled_blobs()
    y = ds.items.label.to_numpy()
    for rows, n_classes in ((slice(None), 3), (slice(0, 60), 2)):
        for name in ("kernel_logreg", "pklr"):
            m = rankers.build(name, {"rho": 0.5, "rho_scale": "absolute", "lam": 0.01}).fit(X[rows], y[rows])
            F = m.decision_function(X).reshape(len(X), -1)
            code = np.array([[-1.0], [1.0]]) if n_classes == 2 else 2 * np.eye(3) - 1
            hand = np.array([[sum(np.log(1 + np.exp(-code[r, s] * F[i, s])) for s in range(code.shape[1]))
                              for r in range(n_classes)] for i in range(len(X))])
            losses = m.decoding_losses(X)
            assert losses.shape == (90, n_classes)
            assert np.allclose(losses, hand, rtol=1e-12, atol=1e-12)
            if n_classes > 2:  # the decoded class is the class of least loss
                assert (m.predict(X) == m.classes_[hand.argmin(1)]).all()


def test_klr_bends_round_the_spirals_where_a_line_cannot():
    ds = datasets.build("two_spirals", {}).load()
    X = ds.arrays["points"]
    p = protocols.build("classification", {"n_train_per_class": 40, "n_constraints": 4, "constraint_type": "same"})
    errs = {}
    for name in ("kernel_logreg", "logistic"):
        _, res = evaluate_with(rankers.build(name, {}), p, X, ds, seed=0)
        errs[name] = res.metrics["error_rate"]
    assert errs["kernel_logreg"] < 0.25 < errs["logistic"]

"""Kernel logistic regression (KLR), the labelled-data baseline of Yan et al.'s PKLR paper.

Yan, Zhang, Yang & Hauptmann, "A Discriminative Learning Framework with Pairwise Constraints for
Video Object Classification": with no pairwise constraints, their Eq. (8) is

    R(alpha, b) = sum_i log(1 + exp(-y_i f_i)) + lambda * alpha^T K alpha,   f = K alpha (+ b),

with the RBF kernel K(x, x') = exp(-rho ||x - x'||^2) over the training rows (representer
theorem, Eq. 7), minimised by Newton's method (Eqs. 9-10). The paper's f has no bias; an
unpenalised intercept is available with ``fit_intercept=True``. Multi-class problems are one
binary KLR per class (one-vs-all) decoded by the loss-based rule of Section 3,
y = argmin_r sum_s L(m_rs f_s(x)) with L(z) = log(1 + exp(-z)) and m_rs = +1 if r = s else -1.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_array, check_is_fitted, check_X_y

from ...params import NonNegativeFloat, PositiveFloat, PositiveInt
from ...registry import rankers
from ..base import Classifier, ItemScorer


def rbf_kernel(A: np.ndarray, B: np.ndarray, rho: float) -> np.ndarray:
    """K[i, j] = exp(-rho ||A_i - B_j||^2)."""
    sq = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * A @ B.T
    return np.exp(-rho * np.maximum(sq, 0.0))


def klr_objective(alpha: np.ndarray, b: float, K: np.ndarray, y: np.ndarray, lam: float) -> float:
    """R(alpha, b) of Eq. (8) without constraint terms; ``y`` in {-1, +1}."""
    Ka = K @ alpha
    return float(np.logaddexp(0.0, -y * (Ka + b)).sum() + lam * alpha @ Ka)


def klr_newton(K: np.ndarray, y: np.ndarray, lam: float, fit_intercept: bool = False,
               max_iter: int = 100, tol: float = 1e-10) -> tuple[np.ndarray, float, int]:
    """Minimise R(alpha, b) by damped Newton steps.

    The gradient is g = [K (r + 2 lam alpha); 1^T r] with r = -y * sigmoid(-y f), and the Hessian
    H = [[K W K + 2 lam K, K W 1], [1^T W K, 1^T W 1]] with W = diag(p (1 - p)) (Eqs. 9-10). Both
    carry a factor K in the alpha block, so a Newton step d solves the better-conditioned
    (n+1)-system [[W K + 2 lam I, W 1], [1^T W K, 1^T W 1]] d = [r + 2 lam alpha; 1^T r] instead
    (K may be singular; W K + 2 lam I is not). A backtracking (Armijo) line search keeps every
    step a descent step, which pure Newton does not guarantee on near-separable data.

    Returns
    -------
    alpha : (n,) representer coefficients; b : intercept (0 unless ``fit_intercept``); n_iter
    """
    n = len(y)
    alpha, b = np.zeros(n), 0.0
    obj = klr_objective(alpha, b, K, y, lam)
    it = 0
    for it in range(1, max_iter + 1):
        f = K @ alpha + b
        p = 0.5 * (1.0 + np.tanh(-0.5 * y * f))  # sigmoid(-y f), overflow-free
        r = -y * p
        w = p * (1.0 - p)
        v = r + 2.0 * lam * alpha
        if fit_intercept:
            A = np.empty((n + 1, n + 1))
            A[:n, :n] = w[:, None] * K
            A[:n, :n].flat[:: n + 1] += 2.0 * lam
            A[:n, n] = w
            A[n, :n] = w @ K
            A[n, n] = w.sum() + 1e-12  # keeps the system solvable when every w is ~0
            rhs = np.append(v, r.sum())
        else:
            A = w[:, None] * K
            A.flat[:: n + 1] += 2.0 * lam
            rhs = v
        d = np.linalg.solve(A, rhs)
        da, db = (d[:n], d[n]) if fit_intercept else (d, 0.0)
        decrement = float(K @ v @ da + r.sum() * db)  # g^T d >= 0: the Newton decrement squared
        if decrement <= tol * max(1.0, abs(obj)):
            break
        step = 1.0
        while True:
            new = klr_objective(alpha - step * da, b - step * db, K, y, lam)
            if new <= obj - 1e-4 * step * decrement or step < 1e-10:
                break
            step *= 0.5
        alpha, b = alpha - step * da, b - step * db
        converged = obj - new <= tol * max(1.0, abs(obj))
        obj = new
        if converged:
            break
    return alpha, float(b), it


@rankers.register("kernel_logreg")
class KernelLogisticRegression(Classifier, ItemScorer, BaseEstimator):
    """Kernel logistic regression, RBF kernel, Newton's method (Yan et al.'s KLR baseline).

    Parameters
    ----------
    rho : float
        RBF width, K(x, x') = exp(-rho ||x - x'||^2); the paper uses 0.08.
    lam : float
        Weight of the RKHS penalty lambda ||f||^2 = lambda alpha^T K alpha; the paper uses 0.001.
    fit_intercept : bool
        Add an unpenalised bias b to f (the paper's f has none).
    max_iter, tol : Newton iterations and relative stopping tolerance on the decrease.

    Attributes
    ----------
    classes_ : labels; X_fit_ : training rows; dual_coef_ : (n_problems, n_train);
    intercept_ : (n_problems,); n_iter_ : Newton iterations per problem. A binary problem is
    one KLR with classes_[1] as the positive class; more classes, one per class (one-vs-all).
    """

    def __init__(self, rho: PositiveFloat = 0.08, lam: NonNegativeFloat = 1e-3, fit_intercept: bool = False,
                 max_iter: PositiveInt = 100, tol: PositiveFloat = 1e-10):
        self.rho = rho
        self.lam = lam
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol

    def fit(self, X, y):
        X, y = check_X_y(X, y, dtype=np.float64)
        self.classes_ = np.unique(y)
        if len(self.classes_) < 2:
            raise ValueError("kernel_logreg needs at least two classes in the training labels")
        self.X_fit_ = X
        K = rbf_kernel(X, X, self.rho)
        targets = self.classes_[1:] if len(self.classes_) == 2 else self.classes_
        coefs, bias, iters = [], [], []
        for c in targets:
            a, b, it = klr_newton(K, np.where(y == c, 1.0, -1.0), self.lam, self.fit_intercept,
                                  self.max_iter, self.tol)
            coefs.append(a)
            bias.append(b)
            iters.append(it)
        self.dual_coef_ = np.array(coefs)
        self.intercept_ = np.array(bias)
        self.n_iter_ = np.array(iters)
        return self

    def decision_function(self, X) -> np.ndarray:
        """f(x) = sum_j alpha_j K(x, x_j) + b: shape (n,) for two classes, else (n, n_classes)."""
        check_is_fitted(self, "dual_coef_")
        X = check_array(X, dtype=np.float64)
        F = rbf_kernel(X, self.X_fit_, self.rho) @ self.dual_coef_.T + self.intercept_
        return F[:, 0] if len(self.classes_) == 2 else F

    def predict(self, X) -> np.ndarray:
        F = self.decision_function(X)
        if F.ndim == 1:
            return self.classes_[(F > 0).astype(int)]
        # loss-based one-vs-all decoding: sum_s L(m_rs f_s) = sum_s L(-f_s) - L(-f_r) + L(f_r)
        neg = np.logaddexp(0.0, F)  # L(-f) = log(1 + e^f)
        loss = neg.sum(1, keepdims=True) - neg + np.logaddexp(0.0, -F)
        return self.classes_[np.argmin(loss, axis=1)]

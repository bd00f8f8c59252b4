"""Kernel logistic regression (KLR), the labelled-data baseline of Yan et al.'s PKLR paper.

Yan, Zhang, Yang & Hauptmann, "A Discriminative Learning Framework with Pairwise Constraints for
Video Object Classification": with no pairwise constraints, their Eq. (8) is

    R(alpha, b) = sum_i log(1 + exp(-y_i f_i)) + lambda * alpha^T K alpha,   f = K alpha (+ b),

with the RBF kernel K(x, x') = exp(-rho ||x - x'||^2) over the training rows (representer
theorem, Eq. 7), minimised by Newton's method (Eqs. 9-10). The paper's f has no bias; an
unpenalised intercept is available with ``fit_intercept=True``. Multi-class problems are one
binary KLR per class (one-vs-all) decoded by the loss-based rule of Section 3,
y = argmin_r sum_s L(m_rs f_s(x)) with L(z) = log(1 + exp(-z)) and m_rs = +1 if r = s else -1.

KLR is PKLR (:mod:`rankbench.rankers.pklr`) without constraints: both use the one Newton solver
of :mod:`rankbench.rankers._dual_logistic`.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import OptimizeResult
from sklearn.base import BaseEstimator

from typing import Literal

from ...params import PositiveFloat, PositiveFloatGrid, PositiveInt
from ...errors import InputError
from ...registry import rankers
from ...utils.optim import stop_diagnostics
from .._validation import checked_input
from ..base import Classifier, ItemScorer
from ._dual_logistic import (RHO_GRID, KernelExpansion, fit_problems, label_terms, newton, objective, rbf_kernel,
                             resolve_rho)

__all__ = ["KernelLogisticRegression", "klr_newton", "klr_objective", "rbf_kernel"]


def klr_objective(alpha: np.ndarray, b: float, K: np.ndarray, y: np.ndarray, lam: float) -> float:
    """R(alpha, b) of Eq. (8) without constraint terms; ``y`` in {-1, +1}."""
    return objective(alpha, b, K, label_terms(np.arange(len(y)), y), lam)


def klr_newton(K: np.ndarray, y: np.ndarray, lam: float, fit_intercept: bool = False,
               max_iter: int = 100, tol: float = 1e-10) -> OptimizeResult:
    """Minimise R(alpha, b) by damped Newton steps: PKLR's solver with labelled terms only
    (:func:`rankbench.rankers._dual_logistic.newton`).

    With labels only, the gradient is g = [K (r + 2 lam alpha); 1^T r] with r = -y * sigmoid(-y f),
    and the Hessian H = [[K W K + 2 lam K, K W 1], [1^T W K, 1^T W 1]] with W = diag(p (1 - p))
    (Eqs. 9-10). Both carry a factor K in the alpha block, so a Newton step d solves the
    better-conditioned (n+1)-system [[W K + 2 lam I, W 1], [1^T W K, 1^T W 1]] d = [r + 2 lam alpha; 1^T r]
    instead (K may be singular; W K + 2 lam I is not). A backtracking (Armijo) line search keeps
    every step a descent step, which pure Newton does not guarantee on near-separable data.

    Returns
    -------
    :func:`~rankbench.utils.optim.solver_result`: ``x`` = alpha (n,) representer coefficients,
    ``intercept`` = b (0 unless ``fit_intercept``), ``nit``, ``status``.
    """
    return newton(K, label_terms(np.arange(len(y)), y), lam, fit_intercept, max_iter, tol)


@rankers.register("kernel_logreg")
class KernelLogisticRegression(KernelExpansion, Classifier, ItemScorer, BaseEstimator):
    """Kernel logistic regression, RBF kernel, Newton's method (Yan et al.'s KLR baseline).

    Parameters
    ----------
    rho : float or list of float
        RBF width, K(x, x') = exp(-rho ||x - x'||^2), or candidates chosen by cross-validation on
        the training rows (:func:`~rankbench.rankers.logistic._dual_logistic.choose_rho`: held-out
        accuracy, whole ``groups`` held out). Yan et al. chose theirs so, "by maximizing the
        accuracy with cross-validation in the training set" (Sec. 4.3), and got 0.08 on their
        features, whose scale the paper does not state. Default: the candidates of
        :data:`~rankbench.rankers.logistic._dual_logistic.RHO_GRID` in units of the median heuristic.
    rho_scale : "absolute" or "median"
        ``median``: each rho multiplies 1 / median ||x_i - x_j||^2 of the training rows, so that
        rho = 1 is a kernel of normal contrast (exp(-1) at the median distance) in any units;
        ``absolute``: rho as given (the paper's literal 0.08).
    lam : float
        Weight of the RKHS penalty lambda ||f||^2 = lambda alpha^T K alpha, > 0 (as PKLR's: at 0,
        separable data have no minimiser and Newton stops anywhere); the paper uses 0.001.
    fit_intercept : bool
        Add an unpenalised bias b to f (the paper's f has none).
    max_iter, tol : Newton iterations and relative stopping tolerance on the decrease.

    Attributes
    ----------
    rho_ : the RBF width used; classes_ : labels; X_fit_ : training rows; dual_coef_ : (n_problems, n_train);
    intercept_ : (n_problems,); n_iter_ : Newton iterations per problem. A binary problem is
    one KLR with classes_[1] as the positive class; more classes, one per class (one-vs-all).
    """

    def __init__(self, rho: PositiveFloatGrid = RHO_GRID, rho_scale: Literal["absolute", "median"] = "median",
                 lam: PositiveFloat = 1e-3, fit_intercept: bool = False, max_iter: PositiveInt = 100,
                 tol: PositiveFloat = 1e-10):
        self.rho = rho
        self.rho_scale = rho_scale
        self.lam = lam
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol

    def _gram(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        return rbf_kernel(A, B, self.rho_)

    def fit(self, X, y, groups=None):
        """Fit on rows ``X`` with labels ``y``; ``groups`` (one id per row, e.g. its tracking
        sequence) keeps near-duplicates on one side of the cross-validation that chooses rho."""
        X = checked_input(self, X, "fit", y=y)
        y = np.asarray(y).ravel()
        self.classes_, codes = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise InputError(f"KernelLogisticRegression.fit: y holds one class ({self.classes_[0]!r}); expected "
                             "at least two classes in the training labels")
        self.rho_, self.diagnostics_ = resolve_rho(self.rho, self.rho_scale, X, codes, len(self.classes_), groups,
                                                   self.lam, self.fit_intercept, self.max_iter, self.tol)
        self.X_fit_ = X
        self.dual_coef_, self.intercept_, self.results_ = fit_problems(
            self._gram(X, X), np.arange(len(y)), codes, len(self.classes_), None, self.lam, 0.0,
            self.fit_intercept, self.max_iter, self.tol)
        self.n_iter_ = np.array([r.nit for r in self.results_])
        self.diagnostics_.update(stop_diagnostics(*self.results_))
        return self

"""Pairwise kernel logistic regression (PKLR): classification from labels plus pairwise constraints.

Yan, Zhang, Yang & Hauptmann, "A Discriminative Learning Framework with Pairwise Constraints for
Video Object Classification" (CVPR 2004), Sections 2-3. Besides labelled points (x_i, y_i) the
learner gets constraints (x_i1, x_i2, y'_i): y'_i = +1 if the two show the same object, -1 if not.
It minimises (Eq. 5 with Omega(||f||) = ||f||^2, Eq. 6)

    sum_i log(1 + exp(-y_i f(x_i)))
      + mu sum_c [log(1 + exp(f(x_c1) - y'_c f(x_c2))) + log(1 + exp(y'_c f(x_c2) - f(x_c1)))]
      + lambda ||f||^2

over f(x) = sum_j alpha_j K(x, xbar_j) (Eq. 7), the xbar_j being the labelled points and both ends
of every constraint, with the RBF kernel K(x, x') = exp(-rho ||x - x'||^2); in the dual
coefficients that is Eq. 8, R(alpha) = ... + lambda alpha^T K alpha, minimised by Newton's method
(Eqs. 9-10) with a backtracking line search (the paper used a trust-region reflective Newton; the
optimum is the same, the objective being convex). The solver, shared with KLR, and the gradient
and Hessian as used are in :mod:`rankbench.rankers._dual_logistic`.

The constraint loss is even in d = f(x_c1) - y'_c f(x_c2): it is smallest (2 log 2, not 0) at d = 0
and pulls a same-object pair to equal outputs and a different-object pair to opposite ones.

Multi-class (Section 3): one binary problem per class (one-against-all). A positive constraint
holds in every binary problem (same object, same class) and keeps the loss above. A negative one
("different objects") does not mean "different sides" of a one-against-all problem - both may be
negatives - so it only penalises both being positive: mu L(-f_c1 - f_c2) with L(z) = log(1 + e^-z)
(Eq. 11; the paper's printed Eq. 11 repeats L(f_c1 - f_c2) for the positive constraints where the
symmetric pair L(f_c1 - f_c2) + L(f_c2 - f_c1) of Eq. 5 is meant). With exactly two classes there
is one problem (classes_[1] positive) and "different objects" means "different classes", so every
constraint keeps the symmetric loss of Eq. 5. Labels are decoded by the loss-based rule
y = argmin_r sum_s L(m_rs f_s(x)), m_rs = +1 if r = s else -1 (Allwein et al.).

The linear special case (Eq. 4, ``kernel="linear"``, f(x) = w^T x) equals L2-regularised logistic
regression on the labelled points plus, per constraint, the pseudo-labelled difference
x_c1 - y'_c x_c2 once with label +1 and once with -1 (for mu = 1), which the tests check.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from sklearn.base import BaseEstimator

from ...params import NonNegativeFloat, PositiveFloat, PositiveFloatGrid, PositiveInt
from ...errors import InputError
from ...registry import rankers
from ...utils.optim import stop_diagnostics
from .._kernels import rbf_kernel
from .._validation import check_constraints, checked_input
from ..base import Classifier, ItemScorer
from ._dual_logistic import RHO_GRID, KernelExpansion, fit_problems, resolve_rho


@rankers.register("pklr")
class PKLR(KernelExpansion, Classifier, ItemScorer, BaseEstimator):
    """Pairwise kernel logistic regression: labels plus same / different pairwise constraints (Yan et al.).

    Parameters
    ----------
    rho, rho_scale
        RBF width K(x, x') = exp(-rho ||x - x'||^2), as for ``kernel_logreg``: a value or
        candidates chosen by KLR's cross-validation on the *labelled* rows (Yan et al. chose one rho
        so and used it "in all of our experiments", PKLR included), ``rho_scale`` absolute or in
        units of the median heuristic.
    lam : float
        lambda, weight of the RKHS penalty lambda ||f||^2 = lambda alpha^T K alpha; the paper uses 0.001.
    mu : float
        Weight of the constraint losses (Eq. 2); the paper uses 1. With 0 PKLR is KLR.
    kernel : "rbf" or "linear"
        ``linear`` gives the primal special case of Eq. 4 (f(x) = w^T x, w = sum_j alpha_j xbar_j).
    use_negative : bool
        Use the negative ("different objects") constraints; ``False`` drops them, leaving PKLR with
        positive constraints only (the middle curve of the paper's Figure 6b/d).
    fit_intercept : bool
        Add an unpenalised bias b to f (the paper's f has none).
    max_iter, tol
        Newton steps per binary problem and relative stopping tolerance.

    Attributes
    ----------
    rho_ : the RBF width used; classes_ : labels of the labelled rows; X_fit_ : (m', d) the basis xbar (labelled rows and
    constraint ends, in the order of X); dual_coef_ : (n_problems, m'); intercept_ :
    (n_problems,); n_iter_ : Newton steps per problem; n_constraints_ : constraints used.
    """

    def __init__(self, rho: PositiveFloatGrid = RHO_GRID, rho_scale: Literal["absolute", "median"] = "median",
                 lam: PositiveFloat = 1e-3, mu: NonNegativeFloat = 1.0, kernel: Literal["rbf", "linear"] = "rbf",
                 use_negative: bool = True, fit_intercept: bool = False, max_iter: PositiveInt = 100,
                 tol: PositiveFloat = 1e-10):
        self.rho = rho
        self.rho_scale = rho_scale
        self.lam = lam
        self.mu = mu
        self.kernel = kernel
        self.use_negative = use_negative
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol

    def _gram(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        return A @ B.T if self.kernel == "linear" else rbf_kernel(A, B, self.rho_)

    def fit(self, X, y, constraints=None, groups=None):
        """Fit on labelled rows and constraints.

        Parameters
        ----------
        X : (n, d) array
            Labelled rows and unlabelled rows that occur in constraints, in any order.
        y : (n,) array
            Class labels (the classification protocol passes codes 0..K-1); -1 marks an unlabelled
            row (scikit-learn's convention). Unlabelled rows in no constraint are ignored.
        constraints : (c, 3) int array, optional
            ``(i, j, same)``: rows i and j of X show the same object (1) or different ones (0);
            the latter are ignored when ``use_negative`` is False.
        groups : (n,) array, optional
            A group id per row (e.g. its tracking sequence): the cross-validation that chooses rho
            holds out whole groups of labelled rows.

        Returns
        -------
        self
        """
        X = checked_input(self, X, "fit", y=y)
        y = np.asarray(y).ravel()
        C = check_constraints(constraints, len(X))
        if not self.use_negative:
            C = C[C[:, 2] == 1]
        labelled = y != -1
        self.classes_, codes = np.unique(y[labelled], return_inverse=True)
        if len(self.classes_) < 2:
            raise InputError(f"PKLR.fit: the labelled rows hold {len(self.classes_)} class(es) (one class or none); "
                             "expected at least two classes (y = -1 marks an unlabelled row)")
        g = None if groups is None else np.asarray(groups).ravel()[labelled]
        self.rho_, info = (1.0, {}) if self.kernel == "linear" else resolve_rho(
            self.rho, self.rho_scale, X[labelled], codes, len(self.classes_), g, self.lam, self.fit_intercept,
            self.max_iter, self.tol)
        used = labelled.copy()
        used[C[:, :2].ravel()] = True
        basis = np.flatnonzero(used)
        pos = np.full(len(X), -1)
        pos[basis] = np.arange(len(basis))
        Cb = np.column_stack([pos[C[:, 0]], pos[C[:, 1]], C[:, 2]]) if len(C) else C
        self.X_fit_ = X[basis]
        self.dual_coef_, self.intercept_, self.results_ = fit_problems(
            self._gram(self.X_fit_, self.X_fit_), pos[labelled], codes, len(self.classes_), Cb,
            self.lam, self.mu, self.fit_intercept, self.max_iter, self.tol)
        self.n_iter_ = np.array([r.nit for r in self.results_])
        self.n_constraints_ = len(C)
        self.diagnostics_ = {**info, **stop_diagnostics(*self.results_)}
        return self

"""Linear RankSVM in the primal (squared hinge, Newton; Sharaf et al. BMVC 2015 eq. 1)."""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from pydantic import Field
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ...params import PositiveFloat, PositiveFloatGrid, PositiveInt, Seed
from ...registry import rankers
from ...utils.optim import stop_diagnostics
from ...utils.threads import one_blas_thread
from .._search import as_grid, cv_pair_accuracy
from .._validation import check_pairs, checked_input
from ..base import PairwiseRanker
from ._oracles import PairMatrixOracle, kernel_factor, pair_matrix
from ._primal import solve, solve_gram


def row_space(X) -> tuple[np.ndarray, np.ndarray] | None:
    """(X X', its factor) when X has more dimensions than items (:func:`fit_linear` then solves
    there), else None: computed once for the many pair sets of a cross-validation."""
    if X.shape[1] <= X.shape[0]:
        return None
    K = X @ X.T
    return K, kernel_factor(K)


def fit_linear(X, pairs, sign, C, tol, max_iter, gram=None):
    """Solve the primal for w; with more dimensions than items, in the row space of X.

    The optimal w lies in the row space of X (the gradient w + X'(...) never leaves it), so with
    d > n the same primal is solved over a factor of the Gram matrix X X' (kernel RankSVM with the
    linear kernel) and w = X' b: identical optimum at n instead of d dimensions. ``gram``: X's
    :func:`row_space` when the caller has it.
    """
    A = pair_matrix(pairs, sign, len(X))
    n, d = X.shape
    if d > n:
        K, Phi = gram if gram is not None else row_space(X)
        b, sol = solve_gram(K, A, C, similar=sign == 0, tol=tol, max_newton=max_iter, Phi=Phi)
        return X.T @ b, sol
    sol = solve(PairMatrixOracle(A, X), C, similar=sign == 0, tol=tol, max_newton=max_iter, max_cg=d)
    return sol.x, sol


@rankers.register("ranksvm")
class RankSVM(PairwiseRanker, BaseEstimator):
    """Linear RankSVM (primal squared hinge, Newton; Sharaf et al. BMVC 2015 eq. 1).

    Minimises ``0.5 ||w||^2 + C * sum_ordered max(0, 1 - w'(x_i - x_j))^2
    + C * sum_similar (w'(x_i - x_j))^2`` (eq. 1 with the L2 loss the paper mentions, plus
    Parikh & Grauman's similar-pair term, ICCV 2011 eq. 4) by Newton's method in the primal
    (Chapelle 2007; :mod:`._primal`). Gradients and Hessian-vector products go through the sparse pair
    matrix A (eq. 6) as ``X' A' (...)``, so the p x d pair-difference matrix is never formed.

    Given a dict of feature views (config ``combine: views``), the views are concatenated after
    scaling each *set* to [0, 1] with its minimum and maximum over the training rows (one affine
    map per set, not per column): the paper's "Feature Concatenation" baseline (Sec. 4.2). The
    shift cancels in pair differences; the scale sets each set's weight.

    Parameters
    ----------
    C : float or list of float
        Loss weight. A list is searched by ``cv``-fold cross-validation on the training pairs
        (held-out ordered-pair accuracy, as the paper's 10-fold CV); the choice is ``C_``.
    cv : int
        Folds for choosing C when a list is given.
    cv_unit : {"items", "pairs"}
        What the folds split: training items (no leak, the default) or training pairs (see
        :func:`rankbench.rankers._search.cv_pair_accuracy`).
    tol : float
        Relative gradient-norm tolerance of the Newton solver.
    max_iter : int
        Maximum Newton iterations.
    random_state : int or None
        Seeds the assignment of items (or pairs, with ``cv_unit="pairs"``) to CV folds.

    Attributes
    ----------
    coef_ : (d,) array, the ranking function is ``X @ coef_`` (X: the scaled concatenation for views).
    view_ranges_ : dict view -> (min, max) on the training rows, when fitted on views.
    C_ : chosen C;  cv_scores_ : CV accuracy per grid value;  n_iter_ : Newton iterations;
    diagnostics_ : ``{"C": C_}``.
    """

    accepts_views = True

    def __init__(self, C: PositiveFloatGrid = 1.0,
                 cv: Annotated[int, Field(ge=2)] = 5,
                 cv_unit: Literal["items", "pairs"] = "items", tol: PositiveFloat = 1e-6, max_iter: PositiveInt = 50,
                 random_state: Seed = None):
        self.C = C
        self.cv = cv
        self.cv_unit = cv_unit
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state

    def _matrix(self, X, method):
        """X checked (:func:`~rankbench.rankers._validation.checked_input`); views scaled and joined."""
        X = checked_input(self, X, method, min_rows=2 if method == "fit" else 1)
        if not isinstance(X, dict):
            return X
        if method == "fit":
            self.view_ranges_ = {k: (float(np.min(v)), float(np.max(v))) for k, v in X.items()}
        return np.hstack([(X[k] - lo) / (hi - lo if hi > lo else 1.0) for k, (lo, hi) in self.view_ranges_.items()])

    @one_blas_thread  # measured: see rankbench/utils/threads.py
    def fit(self, X, pairs, sign):
        X = self._matrix(X, "fit")
        pairs, sign = check_pairs(pairs, sign, len(X), f"{type(self).__name__}.fit")
        grid = as_grid(self.C)
        gram = row_space(X)
        self.cv_scores_ = None
        if len(grid) > 1:
            rng = np.random.default_rng(self.random_state)

            def fit_score(params, mask):
                w, _ = fit_linear(X, pairs[mask], sign[mask], params["C"], self.tol, self.max_iter, gram)
                return X @ w

            best, self.cv_scores_ = cv_pair_accuracy(fit_score, pairs, sign, [{"C": c} for c in grid],
                                                     int(self.cv), rng, self.cv_unit)
            self.C_ = best["C"]
        else:
            self.C_ = float(grid[0])
        self.coef_, sol = fit_linear(X, pairs, sign, self.C_, self.tol, self.max_iter, gram)
        self.n_iter_ = sol.nit
        self.objective_ = sol.fun
        self.result_ = sol
        self.diagnostics_ = {"C": self.C_, **stop_diagnostics(sol)}
        return self

    def decision_function(self, X):
        check_is_fitted(self, "coef_")
        return self._matrix(X, "decision_function") @ self.coef_

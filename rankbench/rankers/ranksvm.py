"""Linear RankSVM in the primal (squared hinge, truncated Newton with CG)."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator

from ..registry import rankers
from ._ranking_pairs import (as_grid, check_pairs, cv_pair_accuracy, linear_objective, newton_cg,
                             pair_matrix)
from .base import PairwiseRanker


def fit_linear(X, pairs, sign, C, tol, max_iter):
    """Newton-CG on the primal; with more dimensions than items, in the row space of X.

    The optimal w lies in the row space of X (the gradient w + X'(...) never leaves it), so with
    X = U S V' (thin SVD, rank <= n, from the eigenvectors of X X') we solve the same primal over z with data U S and return
    w = V z: identical optimum, each Hessian-vector product costs n*r instead of n*d.
    """
    from threadpoolctl import threadpool_limits

    # small dense products: threads only contend on a shared machine
    with threadpool_limits(limits=1, user_api="blas"):
        return _fit_linear(X, pairs, sign, C, tol, max_iter)


def _fit_linear(X, pairs, sign, C, tol, max_iter):
    A = pair_matrix(pairs, sign, len(X))
    n, d = X.shape
    if d > n:
        # thin SVD through the n x n Gram matrix (much cheaper than an SVD of X when d >> n)
        ev, U = np.linalg.eigh(X @ X.T)
        keep = ev > ev.max() * 1e-12
        S, U = np.sqrt(ev[keep]), U[:, keep]
        z, info = newton_cg(linear_objective(U * S, A, sign != 0, C), np.zeros(len(S)), tol=tol,
                            max_iter=max_iter)
        return X.T @ (U @ (z / S)), info
    return newton_cg(linear_objective(X, A, sign != 0, C), np.zeros(d), tol=tol, max_iter=max_iter)


@rankers.register("ranksvm")
class RankSVM(PairwiseRanker, BaseEstimator):
    """Linear RankSVM (primal squared hinge, Newton-CG; Sharaf et al. BMVC 2015 eq. 1).

    Minimises ``0.5 ||w||^2 + C * sum_ordered max(0, 1 - w'(x_i - x_j))^2
    + C * sum_similar (w'(x_i - x_j))^2`` (eq. 1 with the L2 loss the paper mentions, plus
    Parikh & Grauman's similar-pair term, ICCV 2011 eq. 4) by truncated Newton with conjugate
    gradient (Chapelle 2007). Gradients and Hessian-vector products go through the sparse pair
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
    tol : float
        Relative gradient-norm tolerance of the Newton solver.
    max_iter : int
        Maximum Newton iterations.
    random_state : int or None
        Seeds the assignment of pairs to CV folds.

    Attributes
    ----------
    coef_ : (d,) array, the ranking function is ``X @ coef_`` (X: the scaled concatenation for views).
    view_ranges_ : dict view -> (min, max) on the training rows, when fitted on views.
    C_ : chosen C;  cv_scores_ : CV accuracy per grid value;  n_iter_ : Newton iterations.
    """

    accepts_views = True

    def __init__(self, C=1.0, cv=5, tol=1e-6, max_iter=50, random_state=None):
        self.C = C
        self.cv = cv
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state

    def _matrix(self, X, fitting=False):
        if not isinstance(X, dict):
            return np.asarray(X, dtype=float)
        if fitting:
            self.view_ranges_ = {k: (float(np.min(v)), float(np.max(v))) for k, v in X.items()}
        blocks = []
        for k, (lo, hi) in self.view_ranges_.items():
            if k not in X:
                raise ValueError(f"view {k!r} missing from X (fitted on {', '.join(self.view_ranges_)})")
            v = np.asarray(X[k], dtype=float).reshape(len(X[k]), -1)
            blocks.append((v - lo) / (hi - lo if hi > lo else 1.0))
        return np.hstack(blocks)

    def fit(self, X, pairs, sign):
        X = self._matrix(X, fitting=True)
        pairs, sign = check_pairs(pairs, sign, len(X))
        grid = as_grid(self.C)
        self.cv_scores_ = None
        if len(grid) > 1:
            rng = np.random.default_rng(self.random_state)

            def fit_score(params, mask):
                w, _ = fit_linear(X, pairs[mask], sign[mask], params["C"], self.tol, self.max_iter)
                return X @ w

            best, self.cv_scores_ = cv_pair_accuracy(fit_score, pairs, sign, [{"C": c} for c in grid],
                                                     int(self.cv), rng)
            self.C_ = best["C"]
        else:
            self.C_ = float(grid[0])
        self.coef_, info = fit_linear(X, pairs, sign, self.C_, self.tol, self.max_iter)
        self.n_iter_ = info["n_iter"]
        self.objective_ = info["obj"]
        return self

    def decision_function(self, X):
        return self._matrix(X) @ self.coef_

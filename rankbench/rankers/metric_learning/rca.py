"""Relevant Component Analysis (RCA) from positive constraints, and RCA followed by KLR.

Bar-Hillel, Hertz, Shental & Weinshall, "Learning a Mahalanobis Metric from Equivalence
Constraints", JMLR 6, 2005 (Section 2, Algorithm 1): points joined by positive ("same")
constraints form *chunklets*, the connected components of the constraint graph; with m_j the mean
of chunklet j and N the number of points in chunklets,

    C = (1/N) sum_j sum_{x in chunklet j} (x - m_j)(x - m_j)^T,

and the whitening transform W = C^(-1/2) maps x to W x, so that distances become the Mahalanobis
distance ||x - x'||^2_{C^-1}. Negative constraints are not used. As in Yan et al. (Section 4.3),
eps I is added to C to make it invertible (here eps times the mean eigenvalue tr(C) / d, so that
``eps`` does not depend on the units of the features). RCA is also the solution of
min_B sum ||x - m_j||^2_B subject to |B| >= 1 (Bar-Hillel et al., Section 5), B = |C|^(1/d) C^-1:
the same metric up to a global scale; ``normalize=True`` uses that scale (unit determinant of W),
which keeps the volume of the input space, and with it the meaning of an RBF width rho.

``rca_klr`` is Yan et al.'s baseline (Sections 2.3 and 4.3): RCA on the constraints, then kernel
logistic regression (:class:`~rankbench.rankers.klr.KernelLogisticRegression`) on the transformed
labelled rows. metric-learn's RCA is not used: it does not run on current scikit-learn.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_array, check_is_fitted

from ...params import NonNegativeFloat, PositiveFloat, PositiveInt, validate_estimator
from ...registry import rankers
from .._validation import check_constraints
from ..base import Classifier, ItemScorer


def chunklets(n: int, constraints) -> np.ndarray:
    """Chunklet index of each of ``n`` rows from the positive rows of ``constraints`` (i, j, same).

    Chunklets are the connected components of the graph whose edges are the positive constraints
    (a chain a~b, b~c is one chunklet {a, b, c}); they are numbered 0, 1, ... in the order of
    their smallest row. Rows in no positive constraint get -1.
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    C = check_constraints(constraints, n)
    P = C[C[:, 2] == 1, :2]
    out = np.full(n, -1, dtype=np.intp)
    if len(P) == 0:
        return out
    graph = coo_matrix((np.ones(len(P)), (P[:, 0], P[:, 1])), shape=(n, n))
    _, comp = connected_components(graph, directed=False)
    rows = np.unique(P)
    comps, first = np.unique(comp[rows], return_index=True)  # rows ascend: first = smallest row
    rank = np.empty(len(comps), dtype=np.intp)
    rank[np.argsort(first)] = np.arange(len(comps))
    out[rows] = rank[np.searchsorted(comps, comp[rows])]
    return out


def chunklet_covariance(X: np.ndarray, chunk: np.ndarray) -> np.ndarray:
    """(1/N) sum_j sum_{x in j} (x - m_j)(x - m_j)^T over rows with ``chunk >= 0``."""
    inside = chunk >= 0
    Z = X[inside]
    c = chunk[inside]
    means = np.zeros((c.max() + 1, X.shape[1]))
    np.add.at(means, c, Z)
    means /= np.bincount(c)[:, None]
    R = Z - means[c]
    return R.T @ R / len(Z)


class RCA(TransformerMixin, BaseEstimator):
    """Relevant Component Analysis (Bar-Hillel et al. 2005) from positive pairwise constraints.

    Parameters
    ----------
    eps : float
        Ridge added to the chunklet covariance: C + eps (tr C / d) I (Yan et al.'s eps I).
    normalize : bool
        Scale W to unit determinant (the |B| = 1 form of Bar-Hillel et al., Section 5) instead of
        W = (C + ridge)^(-1/2) itself.

    Attributes
    ----------
    components_ : (d, d) W, symmetric; transform(X) = X W^T. chunklets_ : chunklet index per
    row of the fitted X (-1: in none); n_chunklets_; covariance_ : C before the ridge.
    """

    def __init__(self, eps: NonNegativeFloat = 1e-3, normalize: bool = False):
        self.eps = eps
        self.normalize = normalize

    def fit(self, X, y=None, constraints=None):
        """Learn W from the chunklets of the positive ``constraints`` (an (c, 3) array (i, j, same)).

        ``y`` is ignored. Without a positive constraint there is no chunklet and W = I.
        """
        validate_estimator(self, "rca")
        X = check_array(X, dtype=np.float64)
        d = X.shape[1]
        self.chunklets_ = chunklets(len(X), constraints)
        self.n_chunklets_ = int(self.chunklets_.max() + 1)
        if self.n_chunklets_ == 0:
            self.covariance_ = np.zeros((d, d))
            self.components_ = np.eye(d)
            return self
        C = chunklet_covariance(X, self.chunklets_)
        self.covariance_ = C
        ridge = self.eps * max(np.trace(C) / d, np.finfo(float).tiny)
        evals, evecs = np.linalg.eigh(C + ridge * np.eye(d))
        evals = np.maximum(evals, np.finfo(float).tiny)
        if self.normalize:  # |W| = prod evals^-1/2 -> 1
            evals = evals / np.exp(np.mean(np.log(evals)))
        self.components_ = (evecs / np.sqrt(evals)) @ evecs.T
        return self

    def transform(self, X) -> np.ndarray:
        check_is_fitted(self, "components_")
        return check_array(X, dtype=np.float64) @ self.components_.T


@rankers.register("rca_klr")
class RCAKLR(Classifier, ItemScorer, BaseEstimator):
    """RCA on positive constraints, then kernel logistic regression (Yan et al.'s baseline).

    Parameters
    ----------
    rho, lam, fit_intercept, max_iter, tol
        Those of ``kernel_logreg`` (the paper: rho = 0.08, lambda = 0.001), applied in RCA space.
    eps, normalize
        Those of :class:`RCA`. ``normalize`` (default) keeps the volume of the space, so rho
        keeps its scale; without it W = C^(-1/2) also rescales the space by the chunklet spread.

    Attributes
    ----------
    rca_ : the fitted :class:`RCA`; klr_ : the KernelLogisticRegression fitted on RCA-transformed
    labelled rows; classes_.
    """

    def __init__(self, rho: PositiveFloat = 0.08, lam: PositiveFloat = 1e-3, eps: NonNegativeFloat = 1e-3,
                 normalize: bool = True, fit_intercept: bool = False, max_iter: PositiveInt = 100,
                 tol: PositiveFloat = 1e-10):
        self.rho = rho
        self.lam = lam
        self.eps = eps
        self.normalize = normalize
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol

    def fit(self, X, y, constraints=None):
        """RCA on every row's positive ``constraints`` (i, j, same), KLR on the rows with ``y != -1``."""
        from ..logistic.klr import KernelLogisticRegression

        X = check_array(X, dtype=np.float64)
        y = np.asarray(y).ravel()
        if len(y) != len(X):
            raise ValueError(f"X has {len(X)} rows but y has {len(y)} labels")
        self.rca_ = RCA(eps=self.eps, normalize=self.normalize).fit(X, constraints=constraints)
        labelled = y != -1
        self.klr_ = KernelLogisticRegression(rho=self.rho, lam=self.lam, fit_intercept=self.fit_intercept,
                                             max_iter=self.max_iter, tol=self.tol)
        self.klr_.fit(self.rca_.transform(X[labelled]), y[labelled])
        self.classes_ = self.klr_.classes_
        return self

    def decision_function(self, X) -> np.ndarray:
        check_is_fitted(self, "klr_")
        return self.klr_.decision_function(self.rca_.transform(X))

    def predict(self, X) -> np.ndarray:
        check_is_fitted(self, "klr_")
        return self.klr_.predict(self.rca_.transform(X))

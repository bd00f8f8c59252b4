"""Relevant Component Analysis (RCA) from positive constraints, and RCA followed by KLR.

Bar-Hillel, Hertz, Shental & Weinshall, "Learning a Mahalanobis Metric from Equivalence
Constraints", JMLR 6, 2005 (Section 2, Algorithm 1): points joined by positive ("same")
constraints form *chunklets*, the connected components of the constraint graph; with m_j the mean
of chunklet j and N the number of points in chunklets,

    C = (1/N) sum_j sum_{x in chunklet j} (x - m_j)(x - m_j)^T,

and the whitening transform W = C^(-1/2) maps x to W x, so that distances become the Mahalanobis
distance ||x - x'||^2_{C^-1}. Negative constraints are not used. As in Yan et al. (Section 4.3),
eps I is added to C to make it invertible. RCA is also the solution of min_B sum ||x - m_j||^2_B
subject to |B| >= 1 (Bar-Hillel et al., Section 5), B = |C|^(1/d) C^-1: the same metric up to a
global scale.

Two readings of Yan et al.'s baseline, both parameters:

* literal (``eps_scale: absolute``, ``normalize: false``): W = (C + eps I)^(-1/2) with eps as
  given. Where the features are small (unit-sum histograms: chunklet variances of 1e-5 to 1e-3
  per bin), eps dominates C and W stretches the space by about eps^(-1/2); an RBF width chosen in
  the input space then gives an almost diagonal kernel, and KLR in that space collapses.
* scaled (``eps_scale: trace``, ``normalize: true``, the defaults): eps in units of the mean
  eigenvalue tr(C) / d, so that it does not depend on the features' units, and W scaled to unit
  determinant (the |B| = 1 form), which keeps the volume of the input space and with it the
  meaning of the RBF width.

The paper states neither eps nor a scale. Its Figure 6b has RCA+KLR only a little behind PKLR,
i.e. well below the labelled-data KLR baseline it starts from, which a collapsed kernel cannot
give: the figure is consistent with the scaled reading, not with the literal one on histograms.

``rca_klr`` is Yan et al.'s baseline (Sections 2.3 and 4.3): RCA on the constraints, then kernel
logistic regression (:class:`~rankbench.rankers.klr.KernelLogisticRegression`) on the transformed
labelled rows, with the one RBF width of the experiment ("rho = 0.08 in all of our experiments"):
chosen, when it is a list, by KLR's cross-validation on the labelled rows in the input space.
metric-learn's RCA is not used: it does not run on current scikit-learn.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ...params import NonNegativeFloat, PositiveFloat, PositiveFloatGrid, PositiveInt
from ...errors import InputError
from ...registry import rankers
from .._validation import check_constraints, checked_input
from ..base import Classifier, ItemScorer
from ..logistic._dual_logistic import RHO_GRID


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
        Ridge added to the chunklet covariance (Yan et al.'s eps I).
    eps_scale : "trace" or "absolute"
        ``trace``: C + eps (tr C / d) I; ``absolute``: C + eps I.
    normalize : bool
        Scale W to unit determinant (the |B| = 1 form of Bar-Hillel et al., Section 5) instead of
        W = (C + ridge)^(-1/2) itself.

    Attributes
    ----------
    components_ : (d, d) W, symmetric; transform(X) = X W^T. chunklets_ : chunklet index per
    row of the fitted X (-1: in none); n_chunklets_; covariance_ : C before the ridge.
    """

    def __init__(self, eps: NonNegativeFloat = 1e-3, eps_scale: Literal["trace", "absolute"] = "trace",
                 normalize: bool = False):
        self.eps = eps
        self.eps_scale = eps_scale
        self.normalize = normalize

    def fit(self, X, y=None, constraints=None):
        """Learn W from the chunklets of the positive ``constraints`` (an (c, 3) array (i, j, same)).

        ``y`` is ignored. Without a positive constraint there is no chunklet and W = I.
        """
        X = checked_input(self, X, "fit")
        d = X.shape[1]
        self.chunklets_ = chunklets(len(X), constraints)
        self.n_chunklets_ = int(self.chunklets_.max() + 1)
        if self.n_chunklets_ == 0:
            self.covariance_ = np.zeros((d, d))
            self.components_ = np.eye(d)
            return self
        C = chunklet_covariance(X, self.chunklets_)
        self.covariance_ = C
        unit = max(np.trace(C) / d, np.finfo(float).tiny) if self.eps_scale == "trace" else 1.0
        ridge = max(self.eps * unit, np.finfo(float).tiny)
        evals, evecs = np.linalg.eigh(C + ridge * np.eye(d))
        evals = np.maximum(evals, np.finfo(float).tiny)
        if self.normalize:  # |W| = prod evals^-1/2 -> 1
            evals = evals / np.exp(np.mean(np.log(evals)))
        self.components_ = (evecs / np.sqrt(evals)) @ evecs.T
        return self

    def transform(self, X) -> np.ndarray:
        check_is_fitted(self, "components_")
        return checked_input(self, X, "transform") @ self.components_.T


@rankers.register("rca_klr")
class RCAKLR(Classifier, ItemScorer, BaseEstimator):
    """RCA on positive constraints, then kernel logistic regression (Yan et al.'s baseline).

    Parameters
    ----------
    rho, rho_scale, lam, fit_intercept, max_iter, tol
        Those of ``kernel_logreg`` (the paper: lambda = 0.001); rho is resolved on the labelled
        rows in the input space (module docstring) and applied in RCA space.
    eps, eps_scale, normalize
        Those of :class:`RCA`. The defaults are the scaled reading; the literal one is
        ``eps_scale: absolute, normalize: false`` (module docstring).

    Attributes
    ----------
    rca_ : the fitted :class:`RCA`; klr_ : the KernelLogisticRegression fitted on RCA-transformed
    labelled rows; rho_ : the RBF width used; classes_.
    """

    def __init__(self, rho: PositiveFloatGrid = RHO_GRID, rho_scale: Literal["absolute", "median"] = "median",
                 lam: PositiveFloat = 1e-3, eps: NonNegativeFloat = 1e-3,
                 eps_scale: Literal["trace", "absolute"] = "trace", normalize: bool = True,
                 fit_intercept: bool = False, max_iter: PositiveInt = 100, tol: PositiveFloat = 1e-10):
        self.rho = rho
        self.rho_scale = rho_scale
        self.lam = lam
        self.eps = eps
        self.eps_scale = eps_scale
        self.normalize = normalize
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol

    def fit(self, X, y, constraints=None, groups=None):
        """RCA on every row's positive ``constraints`` (i, j, same), KLR on the rows with ``y != -1``
        (``groups``: one id per row, held out whole when rho is cross-validated)."""
        from ..logistic._dual_logistic import resolve_rho
        from ..logistic.klr import KernelLogisticRegression

        X = checked_input(self, X, "fit", y=y)
        y = np.asarray(y).ravel()
        labelled = y != -1
        classes, codes = np.unique(y[labelled], return_inverse=True)
        if len(classes) < 2:
            raise InputError(f"RCAKLR.fit: the labelled rows hold {len(classes)} class(es) (one class or none); "
                             "expected at least two classes (y = -1 marks an unlabelled row)")
        g = None if groups is None else np.asarray(groups).ravel()[labelled]
        self.rho_, info = resolve_rho(self.rho, self.rho_scale, X[labelled], codes, len(classes), g, self.lam,
                                      self.fit_intercept, self.max_iter, self.tol)
        self.rca_ = RCA(eps=self.eps, eps_scale=self.eps_scale, normalize=self.normalize).fit(X, constraints=constraints)
        self.klr_ = KernelLogisticRegression(rho=self.rho_, rho_scale="absolute", lam=self.lam,
                                             fit_intercept=self.fit_intercept, max_iter=self.max_iter, tol=self.tol)
        self.klr_.fit(self.rca_.transform(X[labelled]), y[labelled])
        self.classes_ = self.klr_.classes_
        self.diagnostics_ = {**info, "n_chunklets": self.rca_.n_chunklets_}
        return self

    def decision_function(self, X) -> np.ndarray:
        check_is_fitted(self, "klr_")
        return self.klr_.decision_function(self.rca_.transform(checked_input(self, X, "decision_function")))

    def predict(self, X) -> np.ndarray:
        check_is_fitted(self, "klr_")
        return self.klr_.predict(self.rca_.transform(checked_input(self, X, "predict")))

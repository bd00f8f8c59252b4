"""LDMLR: linear distance metric learning for ranking (Li, Liu, Liu & Lu, IEEE TNNLS 2015).

As reviewed in Yu & Li, Section 2.2: minimise over PSD ``A`` (problem (1))

    h(A) = - sum_{i,j} w_ij d_A^2(x_i, x_j) + mu sum_{eta_ij = 1} (d_A^2(x_i, x_j) - ||x_i - x_j||^2)^2

with ordinal weights (3) ``w_ij = (|r_i - r_j| + 1)^p`` for different labels (0 otherwise) and
target neighbours (2), by projected gradient ``A <- Pi_PSD(A - step * grad h(A))`` for at most
``T_max`` iterations from ``A0``.

The first term is linear in ``A``: ``sum w_ij d_A^2 = <A, M>`` with ``M = 2 X^T (diag(W 1) - W) X``,
computed once (the sum runs over ordered pairs, both (i, j) and (j, i), as in the review's
``sum_{i,j}`` and in the authors' code). ``h`` is unbounded below along PSD directions outside the
span of the target differences, so ``T_max`` (and the step) decide how far ``A`` moves from ``A0``.

Neither Yu & Li nor their review of Li et al. gives p, the step or A0. Yu & Li's published code
(github.com/mengzhicao0414/ImageRanking, ``LDMLR/LDMLR.m``) uses ``p = 0.5``, ``A0 = 0``, a fixed step
(1e-20 on UMIST's PCA scores of raw pixels, 1e-2 on unit-norm FG-NET landmarks) and stops when the
relative change of ``h`` falls below 1e-3 (its loop ``while t < T`` makes at most ``T - 1`` updates):
``init="zero"``, ``step_rule="fixed"``, ``tol=1e-3``, ``normalize=False``.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ...errors import InputError, ParameterError
from ...params import NonNegativeFloat, PositiveFloat, PositiveInt
from ...registry import rankers
from ...utils.optim import CONVERGED, MAX_ITER, solver_result, stop_diagnostics
from ...utils.progress import tick
from ...utils.threads import blas_threads
from .._validation import checked_input
from ..base import MetricLearner
from ._neighbours import ordinal_labels, target_neighbours


def ordinal_weights(r: np.ndarray, p: float) -> np.ndarray:
    """Weights (3): ``(|r_i - r_j| + 1)^p`` for different labels, 0 for equal labels."""
    r = np.asarray(r, float)
    diff = np.abs(r[:, None] - r[None, :])
    return np.where(diff > 0, (diff + 1.0) ** p, 0.0)


def psd_project(A: np.ndarray) -> np.ndarray:
    """Nearest PSD matrix in Frobenius norm: negative eigenvalues set to zero."""
    lam, U = np.linalg.eigh((A + A.T) / 2)
    return (U * np.clip(lam, 0.0, None)) @ U.T


def h_objective(A, M, V, v2, mu):
    """h(A) of (1) with ``<A, M>`` standing for the weighted sum of squared distances."""
    e = ((V @ A) * V).sum(axis=1) - v2
    return -float((A * M).sum()) + mu * float((e**2).sum())


def h_gradient(A, M, V, v2, mu):
    """grad h(A) = -M + 2 mu sum_{eta_ij = 1} (d_A^2 - d_I^2) (x_i - x_j)(x_i - x_j)^T."""
    e = ((V @ A) * V).sum(axis=1) - v2
    return -M + 2.0 * mu * (V.T * e) @ V


@rankers.register("ldmlr")
class LDMLR(BaseEstimator, MetricLearner):
    """LDMLR (Li et al. 2015): ordinally weighted metric learning by projected gradient on the PSD cone.

    Parameters
    ----------
    K : int
        Target neighbours per point (same label).
    mu : float
        Weight of the local-structure term.
    p : float
        Exponent of the ordinal weights (3). Not stated in Yu & Li; default 1 (their code: 0.5).
    T_max : int
        At most this many projected-gradient iterations.
    step : float or "auto"
        Step of the projected gradient, read as ``step_rule`` says. The review writes a unit step,
        which diverges on unnormalised data (the quadratic term's curvature is ~ mu ||x_i - x_j||^4).
    step_rule : {"lipschitz", "fixed"}
        ``lipschitz``: the step is ``step / Lip`` ("auto" = 1), ``Lip = 2 mu lambda_max(G)`` the
        Lipschitz constant of grad h with ``G_pq = ((x_p - x'_p)^T (x_q - x'_q))^2`` over target
        pairs (the standard safe step of projected gradient for a smooth convex objective);
        ``fixed``: ``step`` is the step itself, in the data's units (the authors' code).
    init : {"identity", "zero"}
        ``A0 = I`` (the Euclidean metric) or ``A0 = 0`` (the authors' code).
    tol : float
        Stop once ``|h_t - h_(t-1)| / |h_(t-1)| < tol`` (checked from the second iteration on, as
        the authors' code does with 1e-3); 0 runs all ``T_max`` iterations.
    normalize : bool
        Divide the centred data by the root-mean-square target-neighbour distance before learning.
        The two terms of h scale as x^2 and x^4, so ``mu`` means something only for data of a
        known scale; Li et al.'s ``mu = 1e3`` is taken to be for unit-scale data (our reading:
        the review does not say how the data were scaled). Without it, raw pixels make the
        learned A indistinguishable from I.
    """

    def __init__(self, K: PositiveInt = 5, mu: NonNegativeFloat = 1e3, p: float = 1.0, T_max: PositiveInt = 30,
                 step: PositiveFloat | Literal["auto"] = "auto",
                 step_rule: Literal["lipschitz", "fixed"] = "lipschitz",
                 init: Literal["identity", "zero"] = "identity", tol: NonNegativeFloat = 0.0,
                 normalize: bool = True):
        self.K = K
        self.mu = mu
        self.p = p
        self.T_max = T_max
        self.step = step
        self.step_rule = step_rule
        self.init = init
        self.tol = tol
        self.normalize = normalize

    def fit(self, X, y):
        X = checked_input(self, X, "fit", y=y)
        y = ordinal_labels(y, "LDMLR")
        self.mean_ = X.mean(axis=0)
        Xc = X - self.mean_
        pairs = target_neighbours(Xc, y, self.K)
        self.scale_ = 1.0
        if self.normalize and len(pairs):
            self.scale_ = float(np.sqrt(((Xc[pairs[:, 0]] - Xc[pairs[:, 1]]) ** 2).sum(axis=1).mean())) or 1.0
        Xc = Xc / self.scale_
        W = ordinal_weights(y, self.p)
        # sum_{i,j} w_ij (x_i - x_j)(x_i - x_j)^T = 2 X^T (diag(W 1) - W) X  (W symmetric)
        M = 2.0 * Xc.T @ ((np.diag(W.sum(axis=1)) - W) @ Xc)
        V = Xc[pairs[:, 0]] - Xc[pairs[:, 1]]
        v2 = (V**2).sum(axis=1)
        # eigendecompositions of a few hundred rows: single-threaded BLAS is faster and does not
        # thrash on a busy machine
        if self.step_rule == "fixed" and self.step == "auto":
            raise ParameterError("ldmlr: step_rule 'fixed' needs a number for step (the step itself), "
                                 "not 'auto'")
        with blas_threads(1):
            if self.step_rule == "lipschitz":
                G = (V @ V.T) ** 2
                lip = 2.0 * self.mu * float(np.linalg.eigvalsh(G).max()) if len(V) else 1.0
                if lip <= 0:  # every target neighbour is its point's twin: eq. (7)'s second term is 0
                    raise InputError(f"LDMLR.fit: each of the {len(V)} target-neighbour pairs has identical features "
                                     "(the same-label differences are all 0), so step_rule 'lipschitz' has no step; "
                                     "expected features that vary within a label, or step_rule 'fixed'")
                step = (1.0 if self.step == "auto" else float(self.step)) / lip
            else:
                step = float(self.step)
            A = np.eye(X.shape[1]) if self.init == "identity" else np.zeros((X.shape[1],) * 2)
            h_prev = None
            n_iter = 0
            status, message = MAX_ITER, f"T_max = {self.T_max} iterations taken"
            for t in range(self.T_max):
                tick("iteration", t + 1, self.T_max)
                A = psd_project(A - step * h_gradient(A, M, V, v2, self.mu))
                n_iter += 1
                if self.tol > 0:
                    h = h_objective(A, M, V, v2, self.mu)
                    if h_prev is not None and abs(h - h_prev) < self.tol * abs(h_prev):
                        status, message = CONVERGED, "the relative change of h fell below tol"
                        break
                    h_prev = h
        self.result_ = solver_result(A, h_objective(A, M, V, v2, self.mu), n_iter, status, message)
        self.A_ = A
        self.step_ = step
        self.n_iter_ = n_iter
        self.objective_ = self.result_.fun
        self.diagnostics_ = {"K": int(self.K), **stop_diagnostics(self.result_)}
        lam, U = np.linalg.eigh(A)
        keep = lam > 1e-12 * max(lam.max(), 1e-300)
        # A = L^T L with L = diag(sqrt(lam)) U^T over the positive eigenvalues
        self.L_ = (U[:, keep] * np.sqrt(lam[keep])).T
        return self

    def transform(self, X):
        """``L (x - mean)`` with ``A = L^T L``, so Euclidean distances are d_A."""
        check_is_fitted(self, "L_")
        return ((checked_input(self, X, "transform") - self.mean_) / self.scale_) @ self.L_.T

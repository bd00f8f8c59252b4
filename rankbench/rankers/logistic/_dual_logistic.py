"""Logistic losses of a kernel expansion, and the one Newton solver that minimises them.

Shared by kernel logistic regression (``kernel_logreg``, :mod:`rankbench.rankers.klr`) and
pairwise kernel logistic regression (``pklr``, :mod:`rankbench.rankers.pklr`) of Yan, Zhang, Yang
& Hauptmann, "A Discriminative Learning Framework with Pairwise Constraints for Video Object
Classification" (CVPR 2004). Both minimise, over the dual coefficients ``alpha`` of
f(x) = sum_j alpha_j K(x, xbar_j) (+ b) on m' basis points xbar (representer theorem, Eq. 7),

    R(alpha, b) = sum_t c_t L(z_t) + lambda alpha^T K alpha,     L(z) = log(1 + exp(-z)),

where every loss term t looks at f on at most two basis points, z_t = s_t f(xbar_i) + u_t f(xbar_j):

* a labelled point (Eq. 1 / 5, first sum): z = y_i f(x_i), c = 1;
* a pairwise constraint (x_i1, x_i2, y'_i) (Eq. 3 / 5): two terms z = f(x_i1) - y'_i f(x_i2) and
  z = y'_i f(x_i2) - f(x_i1), each with c = mu;
* a negative constraint of a one-against-all problem (Eq. 11): one term z = -f(x_i1) - f(x_i2),
  c = mu (only "both positive" is penalised).

With f = K alpha + b on the basis and D the (T, m') matrix of the terms' signs (z = D f), the
gradient and Hessian (Eqs. 9-10, re-derived: as printed, both write lambda K for the penalty's
2 lambda K, Eq. 9 uses p where the pairwise terms need p', and Eq. 10's pairwise block reads
K'_p^T W' K_p for K'_p^T W' K'_p; the tests check these against finite differences) are

    dR/dalpha = K (D^T r + 2 lambda alpha),               r_t = -c_t sigmoid(-z_t) = c_t L'(z_t)
    dR/db     = 1^T D^T r
    d2R/dalpha2 = K M K + 2 lambda K,   M = D^T W D,      W = diag(c_t sigmoid(z_t) sigmoid(-z_t))
    d2R/dalpha db = K M 1,              d2R/db2 = 1^T M 1.

Every alpha-row carries a factor K, so the Newton step solves the (m' + 1)-system
[[M K + 2 lambda I, M 1], [1^T M K, 1^T M 1]] d = [D^T r + 2 lambda alpha; 1^T D^T r] instead:
the same step whenever K is invertible, and a valid Newton step (H d = g) when it is not, with a
matrix that is never singular (the eigenvalues of M K are those of K^1/2 M K^1/2 >= 0, so those of
M K + 2 lambda I are >= 2 lambda). Forming M K costs O(T m') through the sparse D, the solve
O(m'^3). A backtracking (Armijo) line search keeps every step a descent step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import OptimizeResult

from ...utils.optim import CONVERGED, MAX_ITER, backtrack, solver_result
from ..base import LossDecoder, ovr_decoding_losses
from ...utils.threads import blas_threads
from .._kernels import rbf_kernel  # noqa: F401  (the kernel of these models, re-exported)


def sigmoid(z: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-z)), overflow-free."""
    return 0.5 * (1.0 + np.tanh(0.5 * z))


# ----------------------------------------------------------------------------- loss terms
@dataclass(frozen=True)
class LossTerms:
    """Terms c_t L(s_t f[i_t] + u_t f[j_t]) over basis points (``u = 0`` for one-point terms)."""

    i: np.ndarray
    j: np.ndarray
    s: np.ndarray
    u: np.ndarray
    c: np.ndarray

    def __len__(self) -> int:
        return len(self.i)

    def margins(self, f: np.ndarray) -> np.ndarray:
        """z_t for values ``f`` of the function on the basis."""
        return self.s * f[self.i] + self.u * f[self.j]

    def matrix(self, m: int):
        """D as a sparse (T, m) matrix, z = D f."""
        from scipy.sparse import csr_matrix

        T = len(self)
        return csr_matrix((np.r_[self.s, self.u], (np.r_[np.arange(T), np.arange(T)], np.r_[self.i, self.j])),
                          shape=(T, m))

    def __add__(self, other: "LossTerms") -> "LossTerms":
        return LossTerms(*(np.concatenate([a, b]) for a, b in
                           zip((self.i, self.j, self.s, self.u, self.c),
                               (other.i, other.j, other.s, other.u, other.c))))


def label_terms(rows: np.ndarray, y: np.ndarray) -> LossTerms:
    """L(y_i f(x_i)) for basis rows ``rows`` with labels ``y`` in {-1, +1} (Eq. 5, first sum)."""
    rows = np.asarray(rows, dtype=np.intp)
    y = np.asarray(y, dtype=np.float64)
    return LossTerms(rows, rows, y, np.zeros(len(rows)), np.ones(len(rows)))


def pair_terms(i1: np.ndarray, i2: np.ndarray, same: np.ndarray, mu: float,
               one_vs_all: bool = False) -> LossTerms:
    """Constraint terms between basis rows ``i1`` and ``i2``; ``same`` is 1 (y' = +1) or 0 (y' = -1).

    Every constraint gives mu [L(f1 - y' f2) + L(y' f2 - f1)] (Eq. 5), except the negative ones of
    a one-against-all problem (``one_vs_all``), which give mu L(-f1 - f2) only (Eq. 11).
    """
    i1, i2 = np.asarray(i1, dtype=np.intp), np.asarray(i2, dtype=np.intp)
    yp = np.where(np.asarray(same) != 0, 1.0, -1.0)
    both = ~(one_vs_all & (yp < 0))  # constraints with the two-sided, symmetric loss
    neg = ~both
    ones = np.ones(int(both.sum()))
    symmetric = LossTerms(np.r_[i1[both], i1[both]], np.r_[i2[both], i2[both]],
                          np.r_[ones, -ones], np.r_[-yp[both], yp[both]], np.full(2 * len(ones), float(mu)))
    k = int(neg.sum())
    one_sided = LossTerms(i1[neg], i2[neg], -np.ones(k), -np.ones(k), np.full(k, float(mu)))
    return symmetric + one_sided


# ----------------------------------------------------------------------------- R, gradient, Hessian
def objective(alpha: np.ndarray, b: float, K: np.ndarray, terms: LossTerms, lam: float) -> float:
    """R(alpha, b) = sum_t c_t log(1 + exp(-z_t)) + lambda alpha^T K alpha (Eq. 8)."""
    Ka = K @ alpha
    z = terms.margins(Ka + b)
    return float(terms.c @ np.logaddexp(0.0, -z) + lam * alpha @ Ka)


def _scatter(terms: LossTerms, v: np.ndarray, m: int) -> np.ndarray:
    """D^T v."""
    return (np.bincount(terms.i, terms.s * v, minlength=m) + np.bincount(terms.j, terms.u * v, minlength=m))


def gradient(alpha: np.ndarray, b: float, K: np.ndarray, terms: LossTerms, lam: float) -> np.ndarray:
    """[dR/dalpha; dR/db] (Eq. 9), length m' + 1 (the last entry is the intercept's)."""
    m = len(alpha)
    z = terms.margins(K @ alpha + b)
    g_f = _scatter(terms, -terms.c * sigmoid(-z), m)
    return np.append(K @ (g_f + 2.0 * lam * alpha), g_f.sum())


def hessian(alpha: np.ndarray, b: float, K: np.ndarray, terms: LossTerms, lam: float) -> np.ndarray:
    """The (m' + 1, m' + 1) Hessian of R in (alpha, b) (Eq. 10), for tests and the trust-region oracle."""
    m = len(alpha)
    z = terms.margins(K @ alpha + b)
    D = terms.matrix(m)
    w = terms.c * sigmoid(z) * sigmoid(-z)
    M = (D.T @ D.multiply(w[:, None])).toarray()  # D^T W D
    H = np.empty((m + 1, m + 1))
    H[:m, :m] = K @ M @ K + 2.0 * lam * K
    H[:m, m] = H[m, :m] = K @ M.sum(1)
    H[m, m] = M.sum()
    return H


# ----------------------------------------------------------------------------- Newton
def newton(K: np.ndarray, terms: LossTerms, lam: float, fit_intercept: bool = False,
           max_iter: int = 100, tol: float = 1e-10) -> OptimizeResult:
    """Minimise R(alpha, b) (module docstring) by damped Newton steps in the dual coefficients.

    Stops when the Newton decrement g^T d, or the decrease of a step, falls below
    ``tol * max(1, |R|)`` (status converged), or after ``max_iter`` steps (status max_iter).

    Returns
    -------
    :func:`~rankbench.utils.optim.solver_result`: ``x`` = alpha (m',) dual coefficients, ``fun`` = R,
    ``nit`` (the iteration that stopped), ``status``, ``message`` and ``intercept`` (b, 0 unless
    ``fit_intercept``).
    """
    m = K.shape[0]
    D = terms.matrix(m)
    DT = D.T.tocsr()
    alpha, b = np.zeros(m), 0.0
    obj = objective(alpha, b, K, terms, lam)
    DK = D @ K  # (T, m'): z = DK alpha + b D 1
    d1 = np.asarray(D.sum(axis=1)).ravel()
    it = 0
    status, message = MAX_ITER, f"max_iter = {max_iter} Newton steps taken"
    for it in range(1, max_iter + 1):
        z = DK @ alpha + b * d1
        p = sigmoid(-z)
        w = terms.c * p * (1.0 - p)
        g_f = DT @ (-terms.c * p)
        v = g_f + 2.0 * lam * alpha
        A = DT @ (w[:, None] * DK)  # M K
        A.flat[:: m + 1] += 2.0 * lam
        if fit_intercept:
            Mw1 = DT @ (w * d1)  # M 1
            A = np.block([[A, Mw1[:, None]], [Mw1 @ K, np.array([[Mw1.sum() + 1e-12]])]])
            rhs = np.append(v, g_f.sum())  # 1e-12 keeps the system solvable when every w is ~0
        else:
            rhs = v
        d = np.linalg.solve(A, rhs)
        da, db = (d[:m], d[m]) if fit_intercept else (d, 0.0)
        decrement = float(K @ v @ da + g_f.sum() * db)  # g^T d >= 0: the Newton decrement squared
        if decrement <= tol * max(1.0, abs(obj)):
            status, message = CONVERGED, "the Newton decrement fell below tol"
            break
        step, new, *_ = backtrack(lambda t: (objective(alpha - t * da, b - t * db, K, terms, lam), None),
                                 lambda value, _, t: value <= obj - 1e-4 * t * decrement)
        alpha, b = alpha - step * da, b - step * db
        converged = obj - new <= tol * max(1.0, abs(obj))
        obj = new
        if converged:
            status, message = CONVERGED, "the decrease of a step fell below tol"
            break
    return solver_result(alpha, obj, it, status, message, intercept=float(b))


# ----------------------------------------------------------------------------- classifiers
def fit_problems(K: np.ndarray, labelled: np.ndarray, codes: np.ndarray, n_classes: int,
                 constraints: np.ndarray | None, lam: float, mu: float, fit_intercept: bool,
                 max_iter: int, tol: float) -> tuple[np.ndarray, np.ndarray, list[OptimizeResult]]:
    """One Newton fit per binary problem over the basis of Gram matrix ``K``.

    ``labelled`` are basis rows with class index ``codes`` (0..n_classes-1); ``constraints`` an
    (c, 3) array (i, j, same) of basis rows. Two classes: one problem, class 1 positive, every
    constraint with the symmetric loss of Eq. 5. More: one problem per class (one-against-all),
    positive constraints as in Eq. 5, negative ones with the "both positive" loss of Eq. 11.

    Returns dual_coef (n_problems, m'), intercept (n_problems,) and each problem's :func:`newton` result.
    """
    

    targets = [1] if n_classes == 2 else list(range(n_classes))
    C = np.zeros((0, 3), dtype=np.intp) if constraints is None else np.asarray(constraints).reshape(-1, 3)
    pairs = pair_terms(C[:, 0], C[:, 1], C[:, 2], mu, one_vs_all=n_classes > 2)
    coefs, bias, results = [], [], []
    # solves of a few hundred rows are slower multi-threaded on a shared machine (0.05 s single-
    # threaded, 0.2-1.4 s with two threads for 6 problems of 253 rows)
    with blas_threads(1 if K.shape[0] < 2000 else None):
        for t in targets:
            terms = label_terms(labelled, np.where(codes == t, 1.0, -1.0))
            if len(C) and mu > 0:
                terms = terms + pairs
            res = newton(K, terms, lam, fit_intercept, max_iter, tol)
            coefs.append(res.x)
            bias.append(res.intercept)
            results.append(res)
    return np.array(coefs), np.array(bias), results


def ovr_decode(F: np.ndarray) -> np.ndarray:
    """Loss-based decoding of one-against-all outputs (Section 3, Allwein et al.): the index
    argmin_r sum_s L(m_rs f_s) of :func:`~rankbench.rankers.base.ovr_decoding_losses`. Since
    L(f) - L(-f) = -f, for the one-against-all code and the logistic loss this is argmax_r f_r.
    """
    return np.argmin(ovr_decoding_losses(F), axis=1)


class KernelExpansion(LossDecoder):
    """``decision_function``, ``predict`` and ``decoding_losses`` of a fitted expansion
    f_s(x) = sum_j alpha_sj K(x, xbar_j) + b_s.

    Needs ``classes_``, ``X_fit_`` (the basis xbar), ``dual_coef_`` (n_problems, m'),
    ``intercept_`` and a ``_gram(A, B)`` method. Two classes: one problem, classes_[1] positive,
    ``decision_function`` of shape (n,); more: one per class, shape (n, n_classes), decoded by
    :func:`ovr_decode`.
    """

    def decision_function(self, X) -> np.ndarray:
        """f(x) = sum_j alpha_j K(x, xbar_j) + b: shape (n,) for two classes, else (n, n_classes)."""
        from sklearn.utils.validation import check_is_fitted

        from .._validation import checked_input

        check_is_fitted(self, "dual_coef_")
        X = checked_input(self, X, "decision_function")
        F = self._gram(X, self.X_fit_) @ self.dual_coef_.T + self.intercept_
        return F[:, 0] if len(self.classes_) == 2 else F

    def predict(self, X) -> np.ndarray:
        """Class labels: the sign of f for two classes, else loss-based decoding (Section 3)."""
        F = self.decision_function(X)
        if F.ndim == 1:
            return self.classes_[(F > 0).astype(int)]
        return self.classes_[ovr_decode(F)]


# ----------------------------------------------------------------------------- the kernel width
#: default candidates of the RBF width, as multiples of the median heuristic (rho_scale "median")
RHO_GRID = (0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0)


def median_rho(X: np.ndarray) -> float:
    """1 / median ||x_i - x_j||^2 over the distinct pairs of rows (the median heuristic).

    exp(-rho d^2) is then exp(-1) at the median distance: a kernel of normal contrast whatever
    the features' units. Pairs of identical rows are left out; with no distinct pair, 1.
    """
    X = np.asarray(X, dtype=float)
    sq = (X * X).sum(1)
    D = np.maximum(sq[:, None] + sq[None, :] - 2.0 * X @ X.T, 0.0)[np.triu_indices(len(X), 1)]
    D = D[D > 1e-12 * max(float(D.max(initial=0.0)), 1e-300)]
    return 1.0 / float(np.median(D)) if len(D) else 1.0


def cv_folds(codes: np.ndarray, groups: np.ndarray | None, max_folds: int = 5) -> np.ndarray:
    """Fold index of each row for cross-validation on labelled rows, or all -1 when impossible.

    With ``groups`` (e.g. tracking sequences, whose images are near-duplicates) whole groups are
    held out: each class's groups, in order of their ids, go to folds 0, 1, ..., F-1, 0, ...; F is
    the fewest groups of a class (at most ``max_folds``), so every fold holds out a group of every
    class and trains on the others (a group with rows of two classes stays in the fold its first
    class gave it). Without, the same with single rows. Deterministic.
    """
    codes = np.asarray(codes)
    units = np.arange(len(codes)) if groups is None else np.asarray(groups)
    fold = np.full(len(codes), -1)
    per_class = [np.unique(units[codes == c]) for c in np.unique(codes)]
    n_folds = min(max_folds, min(len(u) for u in per_class))
    if n_folds < 2:
        return fold
    of_group: dict = {}   # a group holding rows of two classes keeps the fold its first class gave it
    for u in per_class:
        k = 0
        for g in u:
            if g not in of_group:
                of_group[g], k = k % n_folds, k + 1
    return np.array([of_group[g] for g in units])


def choose_rho(X: np.ndarray, codes: np.ndarray, n_classes: int, groups: np.ndarray | None,
               candidates: list[float], lam: float, fit_intercept: bool, max_iter: int,
               tol: float) -> tuple[float, list[tuple[float, float]]]:
    """The RBF width with the best held-out accuracy of KLR on labelled rows (Yan et al. Sec. 4.3).

    Yan et al. chose rho "by maximizing the accuracy with cross-validation in the training set".
    Folds by :func:`cv_folds`; each candidate's score is (mean held-out accuracy, mean held-out
    decoding loss sum_s L(m_ys f_s) of the true class y, the loss of Section 3's decoding). The best accuracy wins; ties in
    accuracy - common, since a few held-out groups allow few distinct accuracies - go to the
    smaller loss, then to the first candidate. Returns (rho, [(accuracy, loss) per candidate]);
    with one candidate, that one and no scores; with too few groups to hold one out (a class with
    a single group), the candidate nearest (on a log scale) to the median heuristic
    :func:`median_rho`, and no scores.
    """
    fold = cv_folds(codes, groups)
    if len(candidates) == 1:
        return float(candidates[0]), []
    if fold.max() < 1:
        near = np.argmin(np.abs(np.log(np.asarray(candidates, float)) - np.log(median_rho(X))))
        return float(candidates[int(near)]), []
    scores = []
    sq = (X * X).sum(1)
    D2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * X @ X.T, 0.0)
    for rho in candidates:
        K = np.exp(-float(rho) * D2)
        acc, loss = [], []
        for k in range(fold.max() + 1):
            tr, te = np.flatnonzero(fold != k), np.flatnonzero(fold == k)
            coef, bias, _ = fit_problems(K[np.ix_(tr, tr)], np.arange(len(tr)), codes[tr], n_classes, None, lam,
                                         0.0, fit_intercept, max_iter, tol)
            F = K[np.ix_(te, tr)] @ coef.T + bias
            losses = ovr_decoding_losses(F[:, 0] if n_classes == 2 else F)
            pred = (F[:, 0] > 0).astype(int) if n_classes == 2 else losses.argmin(1)
            lossv = losses[np.arange(len(te)), codes[te]]
            acc.append(float(np.mean(pred == codes[te])))
            loss.append(float(np.mean(lossv)))
        scores.append((float(np.mean(acc)), float(np.mean(loss))))
    best = min(range(len(candidates)), key=lambda i: (-scores[i][0], scores[i][1], i))
    return float(candidates[best]), scores


def resolve_rho(rho, rho_scale: str, X: np.ndarray, codes: np.ndarray, n_classes: int, groups,
                lam: float, fit_intercept: bool, max_iter: int, tol: float) -> tuple[float, dict]:
    """The RBF width a fit uses, and what to report of its choice (``diagnostics_``).

    ``rho`` is a value or a list of candidates (chosen by :func:`choose_rho` on the labelled rows
    ``X``); with ``rho_scale: "median"`` every value multiplies :func:`median_rho` of ``X``.
    """
    unit = median_rho(X) if rho_scale == "median" else 1.0
    cands = [float(r) * unit for r in (rho if isinstance(rho, (list, tuple, np.ndarray)) else [rho])]
    chosen, scores = choose_rho(X, codes, n_classes, groups, cands, lam, fit_intercept, max_iter, tol)
    info: dict = {"rho": chosen}
    if rho_scale == "median":
        info["rho_median"] = unit
    if scores:
        info["cv_accuracy"] = max(s[0] for s in scores)
    elif len(cands) > 1:  # no fold could hold out a group of every class
        info["rho_by"] = "median heuristic (too few groups to cross-validate)"
    return chosen, info

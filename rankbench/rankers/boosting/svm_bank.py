"""The base models of Imbalanced RankBoost: RBF-SVMs on balanced bags, one feature type each.

Merler, Yan & Smith, "Imbalanced RankBoost for Efficiently Ranking Large-Scale Image/Video
Collections", Sec. 5.1: "SVMs with RBF kernel on a number of bags of training data, [...]
parameters automatically selected through a 3-fold cross-validation. Each bag [...] randomly
sampled with a balanced number of positive and negative samples, where the maximum sizes are
fixed to 800 examples. [...] each bag is generated from 1 out of 100 types of low-level visual
features [...] 2 weak models for each feature type [...] normalized to the range [-1, 1]."
"""

from __future__ import annotations

from typing import Annotated

import numpy as np
from pydantic import Field
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ...errors import InputError
from ...params import PositiveFloatGrid, PositiveInt, Seed
from ...registry import rankers
from ...utils.progress import tick
from .._search import choose, grid_points
from .._validation import checked_input, checked_matrix, checked_rows
from ..base import ItemScorer, ModelBank


def sq_dists(A: np.ndarray, B: np.ndarray, b_sq: np.ndarray | None = None) -> np.ndarray:
    """Squared Euclidean distances (len(A), len(B)) by one matrix product, clipped at 0."""
    a_sq = np.einsum("ij,ij->i", A, A)
    b_sq = np.einsum("ij,ij->i", B, B) if b_sq is None else b_sq
    D = A @ B.T
    D *= -2.0
    D += a_sq[:, None]
    D += b_sq[None, :]
    return np.maximum(D, 0.0, out=D)


@rankers.register("svm_bank")
class SVMBank(ModelBank, ItemScorer, BaseEstimator):
    """RBF-SVM bank on balanced bags, one feature type per bag (Merler et al. Sec. 5.1); scores by their mean.

    For every view (feature type) and each of ``bags_per_type`` bags: ``k = min(#relevant,
    #irrelevant, max_bag / 2)`` relevant and ``k`` irrelevant training rows drawn without
    replacement; C and gamma chosen by ``cv``-fold stratified cross-validation on the bag
    (mean ROC AUC of the held-out folds, ties to the first grid point; :mod:`rankbench.rankers._search`)
    over the candidates of ``C`` x ``gamma``, where gamma is given as a multiple of scikit-learn's
    ``"scale"``, 1 / (d Var(bag)); then an SVC (libsvm through scikit-learn) on the whole bag. Each model's
    output is its decision value divided by the largest absolute decision value on its own bag
    and clipped to [-1, 1] (the paper normalises "to the range [-1, 1]" without saying how).

    :meth:`model_output` evaluates one model on chosen rows in blocks of ``block`` rows: the RBF
    exponents to every support vector by one matrix product (:func:`_expansion`), then exp and a
    product with the dual coefficients (the same function as ``SVC.decision_function``, without libsvm's
    row-by-row loop), in single precision (outputs agree with the double-precision RBF expansion
    to 1e-5, tested; about twice the throughput of double precision). As an :class:`ItemScorer` the bank scores by the mean of its outputs.

    Parameters
    ----------
    bags_per_type : bags (models) per feature type (paper: 2).
    max_bag : largest bag (paper: 800), half relevant, half not.
    C : SVM cost, or candidates chosen per bag by the cross-validation.
    gamma : RBF width as a multiple of 1 / (d Var(bag)), or candidates chosen with C.
    cv : folds of the cross-validation (paper: 3; fewer when a bag has fewer relevant rows).
    block : rows per block when evaluating a model.
    random_state : seeds the bags and the folds.
    """

    accepts_views = True

    def __init__(self, bags_per_type: PositiveInt = 2, max_bag: Annotated[int, Field(ge=4)] = 800,
                 C: PositiveFloatGrid = (1.0, 10.0), gamma: PositiveFloatGrid = (0.5, 2.0),
                 cv: Annotated[int, Field(ge=2)] = 3, block: PositiveInt = 4096, random_state: Seed = None):
        self.bags_per_type = bags_per_type
        self.max_bag = max_bag
        self.C = C
        self.gamma = gamma
        self.cv = cv
        self.block = block
        self.random_state = random_state

    # ------------------------------------------------------------------ fit
    def fit(self, X, y):
        """Train ``bags_per_type`` SVMs per view on balanced bags of the rows of ``X`` (labels 0/1)."""
        views = _views(checked_input(self, X, "fit", y=y))
        y = np.asarray(y, dtype=float).ravel()  # relevant when > 0: a graded 0.5 is not cut to 0
        pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y <= 0)
        if len(pos) < 2 or len(neg) < 2:
            raise InputError(f"SVMBank.fit: needs at least 2 relevant and 2 irrelevant training rows, got "
                             f"{len(pos)} and {len(neg)}{' (one class only)' if not len(pos) or not len(neg) else ''}")
        rng = np.random.default_rng(self.random_state)
        k = min(len(pos), len(neg), int(self.max_bag) // 2)
        self.views_, self.support_, self.coef_, self.intercept_ = [], [], [], []
        self.gamma_, self.scale_, self.C_, self.bags_ = [], [], [], []
        n_models = len(views) * int(self.bags_per_type)
        for name, V in views.items():
            for _ in range(int(self.bags_per_type)):
                tick("model", len(self.views_) + 1, n_models)
                bag = np.concatenate([rng.choice(pos, k, replace=False), rng.choice(neg, k, replace=False)])
                Xb = np.asarray(V[bag], dtype=float)
                yb = np.r_[np.ones(k, int), np.zeros(k, int)]
                sv, coef, b, g, C, scale = self._fit_bag(Xb, yb, rng)
                self.views_.append(name)
                self.bags_.append(bag)
                self.support_.append(sv)
                self.coef_.append(coef)
                self.intercept_.append(b)
                self.gamma_.append(g)
                self.C_.append(C)
                self.scale_.append(scale)
        self.view_names_ = list(views)
        self.n_models_ = len(self.views_)
        self.intercept_ = np.asarray(self.intercept_)
        self.gamma_ = np.asarray(self.gamma_)
        self.scale_ = np.asarray(self.scale_)
        self.C_ = np.asarray(self.C_)
        n_sv = np.array([len(s) for s in self.support_])
        self.diagnostics_ = {"n_models": self.n_models_, "bag_size": 2 * k, "mean_support_vectors": float(n_sv.mean()),
                             "max_support_vectors": int(n_sv.max())}
        return self

    def _fit_bag(self, Xb, yb, rng):
        """(support vectors, dual coefficients, intercept, gamma, C, output scale) of one bag."""
        D2 = sq_dists(Xb, Xb)
        var = float(Xb.var())
        unit = 1.0 / (Xb.shape[1] * var) if var > 0 else 1.0
        grid = [(p["C"], p["gamma"] * unit) for p in grid_points(gamma=self.gamma, C=self.C)]
        best = grid[0]
        if len(grid) > 1:
            everything = np.arange(len(yb))
            folds = [(np.setdiff1d(everything, te), te)
                     for te in _stratified_folds(yb, min(int(self.cv), int(yb.sum())), rng)]
            scores = np.zeros((len(folds), len(grid)))
            gammas = sorted({g for _, g in grid})
            for n_g, g in enumerate(gammas):
                tick("gamma", n_g + 1, len(gammas))
                K = np.exp(-g * D2)
                for i, (C, gg) in enumerate(grid):
                    if gg != g:
                        continue
                    for f, (tr, te) in enumerate(folds):
                        sv, coef, b = fit_svc(K[np.ix_(tr, tr)], yb[tr], C)
                        scores[f, i] = auc(K[np.ix_(te, tr[sv])] @ coef + b, yb[te])
            best = grid[choose(scores)[0]]
        C, g = best
        K = np.exp(-g * D2)
        sv_idx, coef, b = fit_svc(K, yb, C)
        dec = K[:, sv_idx] @ coef + b
        scale = float(np.abs(dec).max()) or 1.0
        return Xb[sv_idx].astype(np.float32), coef.astype(np.float32), b, float(g), float(C), scale

    # ------------------------------------------------------------------ outputs
    def model_output(self, X, j: int, rows=None) -> np.ndarray:
        """Output of model ``j`` on ``rows`` of ``X`` (default all rows), in [-1, 1]."""
        check_is_fitted(self, "n_models_")
        V = self._view(X, j)
        rows = np.arange(len(V)) if rows is None else np.asarray(rows, dtype=np.intp)
        if self.__dict__.get("_expansions") is None:  # built on first use, not pickled
            self._expansions = [_expansion(sv, g) for sv, g in zip(self.support_, self.gamma_)]
        centre, S_aug = self._expansions[j]
        coef, b, scale = self.coef_[j], self.intercept_[j], self.scale_[j]
        g = np.float32(self.gamma_[j])
        out = np.empty(len(rows))
        step = int(self.block)
        for s in range(0, len(rows), step):
            Z = checked_rows(np.asarray(V[rows[s:s + step]], dtype=np.float32), self._who, self._arg(j)) - centre
            Z_aug = np.concatenate([Z, np.ones((len(Z), 1), np.float32),
                                    (-g * np.einsum("ij,ij->i", Z, Z))[:, None]], axis=1)
            E = Z_aug @ S_aug.T                 # -gamma ||z - s||^2 in one product
            np.exp(E, out=E)
            out[s:s + step] = E @ coef
        out += b
        out /= scale
        return np.clip(out, -1.0, 1.0, out=out)

    _who = "SVMBank.model_output"

    def _arg(self, j: int) -> str:
        return "X" if self.views_in_ is None else f"X[{self.views_[j]!r}]"

    def _view(self, X, j: int) -> np.ndarray:
        """The view model ``j`` reads, checked where it is cheap: its kind, shape and width here,
        the values of the rows it evaluates as it reads them (it is called block by block)."""
        arg = self._arg(j)
        if self.views_in_ is None and isinstance(X, dict):
            raise InputError(f"{self._who}: X is a dict of views, but SVMBank was fitted on one matrix")
        if self.views_in_ is not None:
            if not isinstance(X, dict):
                raise InputError(f"{self._who}: X is one matrix, but SVMBank was fitted on the views "
                                 f"{', '.join(map(str, self.views_in_))} (give a dict of them)")
            if self.views_[j] not in X:
                raise InputError(f"{self._who}: view {self.views_[j]!r} missing from X (has: {', '.join(map(str, X))})")
            X = X[self.views_[j]]
        V = np.asarray(X)
        width = self.support_[j].shape[1]
        if V.ndim != 2 or V.dtype.kind not in "biuf" or V.size == 0:
            checked_matrix(V, self._who, arg)  # says what is wrong (one line)
        if V.shape[1] != width:
            raise InputError(f"{self._who}: {arg} has {V.shape[1]} features, but SVMBank is expecting {width} "
                             "features as input (the width it was fitted on)")
        return V

    def __getstate__(self):
        """Pickled without the evaluation matrices (rebuilt from the support vectors on first use),
        which would double the size of a cached bank."""
        state = super().__getstate__()
        state.pop("_expansions", None)
        return state

    def outputs(self, X) -> np.ndarray:
        """(n, n_models) outputs of every model on every row."""
        check_is_fitted(self, "n_models_")
        X = checked_input(self, X, "outputs")
        n = len(next(iter(_views(X).values())))
        return np.stack([self.model_output(X, j, np.arange(n)) for j in range(self.n_models_)], axis=1)

    def decision_function(self, X) -> np.ndarray:
        """Mean output of the bank's models."""
        return self.outputs(X).mean(axis=1)


def _expansion(sv: np.ndarray, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """(centre, [2 gamma (s - c), -gamma ||s - c||^2, 1] per support vector s), single precision.

    With a row [z - c, 1, -gamma ||z - c||^2], one matrix product gives
    -gamma ||z - s||^2 = 2 gamma (z - c).(s - c) - gamma ||s - c||^2 - gamma ||z - c||^2 for every
    (row, support vector) pair: the RBF exponent without separate passes for the norms.
    Centring on the support vectors' mean keeps the terms small, so the cancellation in single
    precision stays near 1e-6 (tested against scikit-learn's rbf_kernel).
    """
    centre = sv.mean(axis=0, dtype=np.float64).astype(np.float32)
    S = sv - centre
    g = np.float32(gamma)
    S_aug = np.concatenate([2 * g * S, (-g * np.einsum("ij,ij->i", S, S))[:, None],
                            np.ones((len(S), 1), np.float32)], axis=1)
    return centre, np.ascontiguousarray(S_aug)


def fit_svc(K: np.ndarray, y: np.ndarray, C: float) -> tuple[np.ndarray, np.ndarray, float]:
    """A C-SVM on a precomputed kernel by libsvm: (support rows, dual coefficients, intercept) with
    decision K(x, support) @ coef + intercept, positive for class 1 (as ``SVC.decision_function``).

    Calls scikit-learn's libsvm binding directly: on bags of tens of rows ``SVC.fit``'s input
    validation costs 50x the solve (4 ms against 0.09 ms measured), and the bank fits 13 SVMs per
    model. Falls back to ``SVC`` if the binding is not as expected; the two agree (tested).
    """
    global _RAW_LIBSVM
    if _RAW_LIBSVM:
        try:
            from sklearn.svm import _libsvm

            _libsvm.set_verbosity_wrap(0)
            out = _libsvm.fit(np.ascontiguousarray(K, dtype=np.float64), np.asarray(y, dtype=np.float64),
                              svm_type=0, kernel="precomputed", C=float(C), cache_size=200)
            support, coef, intercept = out[0], out[3], out[4]
            return np.asarray(support, dtype=np.intp), -np.asarray(coef[0], dtype=float), -float(intercept[0])
        except Exception:  # pragma: no cover - a scikit-learn whose private binding changed
            _RAW_LIBSVM = False
    from sklearn.svm import SVC

    svc = SVC(C=float(C), kernel="precomputed").fit(K, y)
    return svc.support_.astype(np.intp), svc.dual_coef_[0].astype(float), float(svc.intercept_[0])


_RAW_LIBSVM = True


def _stratified_folds(y: np.ndarray, n_folds: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Held-out row sets of ``n_folds`` folds, each class dealt round-robin after a shuffle."""
    fold = np.empty(len(y), dtype=int)
    for cls in (0, 1):
        idx = rng.permutation(np.flatnonzero(y == cls))
        fold[idx] = np.arange(len(idx)) % n_folds
    return [np.flatnonzero(fold == k) for k in range(n_folds)]


def auc(scores: np.ndarray, y: np.ndarray) -> float:
    """ROC AUC over all (relevant, irrelevant) pairs, ties counting 1/2, as ``sklearn.metrics.roc_auc_score``
    (held-out folds of a bag have at most a few hundred rows, so the pair grid is small)."""
    p, n = scores[y > 0][:, None], scores[y <= 0][None, :]
    return float((p > n).mean() + 0.5 * (p == n).mean())


def _views(X) -> dict[str, np.ndarray]:
    """A dict of views as given, or one matrix as the single view ``"X"``."""
    if isinstance(X, dict):
        if not X:
            raise InputError("svm_bank: no feature views given")
        return X
    return {"X": np.asarray(X)}

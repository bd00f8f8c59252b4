"""RankBoost in its bipartite form over real-valued base models (Merler et al. Sec. 3, eqs. 1-3)."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ...params import NonNegativeFloat, PositiveInt
from ...registry import rankers
from ...utils.progress import tick
from ..base import ModelBooster
from ._stacked import (BoundLog, WeakRange, alpha_of, clip_r, scoring_columns, side_weights, staged_scores,
                       training_outputs)


@rankers.register("bipartite_rankboost")
class BipartiteRankBoost(ModelBooster, BaseEstimator):
    """Bipartite RankBoost over base-model outputs (Freund et al. 2003; Merler et al. eqs. 1-3), staged.

    Relevant rows should rank above irrelevant ones. The pair distribution
    C_t(x0, x1) = exp(f(x1) - f(x0)) / Z_t (x0 relevant, x1 not; eq. 1) factorises as
    v(x0) v(x1) (Freund et al., Sec. 3.2), so each round costs O(N K) for N rows and K models:
    r_k = sum_x s(x) v(x) h_k(x) (s = +1 relevant, -1 not) is eq. 3's weighted ordering rate
    sum C (h(x0) - h(x1)) in the orientation where r > 0 orders pairs correctly (the printed
    eq. 3 writes h(x1) - h(x0) with x1 irrelevant, a sign slip: with it, eq. 2's alpha would
    weight a model by how badly it orders). Each round picks the model with the largest |r|
    (the smallest bound L'_t = Z_t sqrt(1 - r^2), eq. 12 with lambda = 0), sets
    alpha = 1/2 ln((1 + r) / (1 - r)) (eq. 2) and updates f <- f + alpha h; a model may be chosen
    again in a later round. The weak rankers h are the outputs in [-1, 1] (``weak_range:
    symmetric``, Sec. 5.1) or (o + 1) / 2 in [0, 1] (``unit``, Figure 2); see
    :mod:`rankbench.rankers.boosting._stacked` for what differs and for the bound's condition |r| < 1.

    Stopping: after ``n_rounds`` rounds, or earlier when the bound of a round changes by less
    than ``tol`` of the previous one, |L'_t - L'_{t-1}| < tol L'_{t-1} (the rule of Merler et
    al.'s Figure 3, step (c), with a relative epsilon so that it does not depend on the number of
    pairs; 0 runs every round). The round that meets it is not added.

    Ranking evaluates every chosen model on every item (Merler et al. Fig. 5, red line); outputs
    already computed for a model chosen twice are reused.

    Parameters
    ----------
    n_rounds : largest number of boosting rounds T.
    tol : relative convergence tolerance on L' (0: run ``n_rounds`` rounds).
    weak_range : "symmetric" (h = o in [-1, 1], the paper's experiments) or "unit" (h = (o + 1) / 2).
    """

    def __init__(self, n_rounds: PositiveInt = 100, tol: NonNegativeFloat = 0.0,
                 weak_range: WeakRange = "symmetric"):
        self.n_rounds = n_rounds
        self.tol = tol
        self.weak_range = weak_range

    def fit(self, X, y):
        """Boost on the base-model outputs ``X`` (n, K) in [-1, 1] of rows labelled ``y`` (1 relevant)."""
        h, s = training_outputs(self, X, y, self.weak_range)
        f = np.zeros(len(h))
        models, alphas, bounds, losses = [], [], [], []
        bound_log = BoundLog()
        v, log_z = side_weights(f, s)
        for t in range(int(self.n_rounds)):
            tick("round", t + 1, int(self.n_rounds))
            r_all = (s * v) @ h
            k = int(np.argmax(np.abs(r_all)))
            r = float(r_all[k])
            if abs(r) < 1e-12:
                break
            bound = float(np.exp(log_z)) * np.sqrt(1.0 - clip_r(r) ** 2)
            if self.tol > 0 and bounds and abs(bound - bounds[-1]) < float(self.tol) * bounds[-1]:
                break
            bound_log.see(r)
            a = alpha_of(r)
            f += a * h[:, k]
            models.append(k)
            alphas.append(a)
            bounds.append(bound)
            v, log_z = side_weights(f, s)
            losses.append(float(np.exp(log_z)))
        self.models_ = np.asarray(models, dtype=int)
        self.alphas_ = np.asarray(alphas)
        self.loss_bound_ = np.asarray(bounds)
        self.loss_ = np.asarray(losses)
        self.diagnostics_ = {"rounds": len(models), "distinct_models": int(len(np.unique(self.models_))),
                             **bound_log.report("bipartite_rankboost", self.weak_range)}
        return self

    def staged_decision_function(self, X):
        """Scores after each round t = 1..T: f_t = sum_{q <= t} alpha_q h_q (a generator)."""
        return (f.copy() for f in self._stages(X, "staged_decision_function"))

    def decision_function(self, X):
        """F(x) = sum_t alpha_t h_t(x)."""
        check_is_fitted(self, "alphas_")
        cols = scoring_columns(self, X, "decision_function")
        f = np.zeros(cols.shape[0])
        for f in staged_scores(cols, self.models_, self.alphas_, weak_range=self.weak_range):
            pass
        return f

    def _stages(self, X, method: str):
        """f_t after each round, in place (:func:`~rankbench.rankers.boosting._stacked.staged_scores`)."""
        check_is_fitted(self, "alphas_")
        return staged_scores(scoring_columns(self, X, method), self.models_, self.alphas_,
                             weak_range=self.weak_range)

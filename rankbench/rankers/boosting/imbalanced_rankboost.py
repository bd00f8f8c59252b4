"""Imbalanced RankBoost (Merler, Yan & Smith; Sec. 4, Figure 3, eqs. 4-17)."""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ...errors import InputError
from ...params import NonNegativeFloat, PositiveInt
from ...registry import rankers
from ...utils.progress import tick
from ..base import ModelBooster
from ._stacked import (R_MAX, BoundLog, WeakRange, alpha_of, clip_r, scoring_columns, side_weights,
                       staged_scores, training_outputs)

Regularizer = Literal["squared_step", "exp_step", "squared_gap"]


def round_penalty(kind: str, theta: float | np.ndarray, prev: float, gap_from: float) -> float | np.ndarray:
    """The term eq. 8's regulariser adds for a new threshold ``theta`` after ``prev``.

    ``squared_step``: (theta_t - theta_{t-1})^2; ``exp_step``: exp(theta_t - theta_{t-1});
    ``squared_gap``: (theta_t - m_t)^2 with m_t = min {f_{t-1}(x) : f_{t-1}(x) > theta_{t-1}}
    (eq. 8's third line, whose printed minimum lost its argument f_{l-1}(x)).
    """
    if kind == "squared_step":  # theta: a float or an array of candidate thresholds
        return (theta - prev) ** 2
    if kind == "exp_step":
        return np.exp(theta - prev)
    return (theta - gap_from) ** 2


@rankers.register("imbalanced_rankboost")
class ImbalancedRankBoost(ModelBooster, BaseEstimator):
    """Imbalanced RankBoost: RankBoost with learned non-decreasing cut-off thresholds (Merler et al. Sec. 4), staged.

    Ranking function (eq. 4): F(x) = sum_t alpha_t h_t(x) I[f_{t-1}(x) >= theta_t] with
    theta_t >= theta_{t-1}: model t is evaluated only on items whose current score reaches
    theta_t, so low-ranked items stop costing base-model evaluations (Fig. 5).

    Training (Figure 3) on the boosting rows, with weak rankers h = o, the outputs in [-1, 1]
    (``weak_range: symmetric``, Sec. 5.1, the paper's experiments), or h = (o + 1) / 2 in [0, 1]
    (``unit``, Figure 3); :mod:`rankbench.rankers.boosting._stacked` says what differs and when
    the bound behind alpha fails (|r| >= 1: reported in ``diagnostics_["bound_violations"]``):

    * round 0 is RankBoost's (the model with the largest |r|, alpha_0 by eq. 11);
      theta_0 = min_x f_0(x) (= alpha_0 min h_0 for alpha_0 >= 0: every item counts);
    * round t >= 1 jointly chooses the model k and the threshold theta minimising
      L'_t = Z_t sqrt(1 - r^2) + lambda Omega(theta) (eq. 12, Fig. 4's loss matrix), with
      Z_t = sum over (relevant x0, irrelevant x1) of exp(f(x1) - f(x0)) the current loss,
      r = sum_n s(x_n) v(x_n) h_k(x_n) I[f_{t-1}(x_n) >= theta] (eqs. 13-14; s = +1 for
      relevant items so that r > 0 orders pairs correctly, the orientation of eq. 11's alpha;
      the printed eq. 15 has the signs swapped), and theta among theta_{t-1} and the current
      scores f_{t-1}(x) >= theta_{t-1} (Sec. 4.2's reduction of R to F). One sort of the
      active items by f_{t-1} (descending) and a cumulative sum down the sorted rows give
      r for every (threshold, model) at once (eq. 16's running sum for all K models);
      thresholds whose penalty alone rules them out are never sorted or summed (``_choose``),
      so a round costs one product over the active rows plus O(M log M + M K) for the M rows
      left in the search (``diagnostics_["searched_fraction"]``);
    * alpha_t by eq. 11 from the chosen r; stop when |L'_t - L'_{t-1}| < tol |L'_{t-1}|
      (Figure 3 step (c); the paper's epsilon is unstated, here relative so that it does
      not depend on the number of pairs) or after ``n_rounds`` rounds. With ``exp_step`` a
      round that keeps its threshold still adds lambda e^0 = lambda to lambda Omega (eq. 8 as
      printed), so L' grows by about lambda a round: where lambda Omega dominates L', the test
      stops after about 1 / tol rounds whatever the loss does (measured: 1,001-1,002 rounds at
      tol 1e-3 for every lambda from 1e3 to 1e7 on 6,000 generated keyframes), and a lambda
      close to one round's loss decrease can stop it after a few rounds (3 of 20 concepts at
      lambda = 1e3, stopped after 4-5 rounds); Fig. 9's exp_step row shows that rule, as printed;
    * Omega (eq. 8) is the sum over rounds of ``regularizer``'s term (:func:`round_penalty`).

    Units of lambda. Omega is in squared score units (thresholds are values of f = sum alpha h,
    whose scale depends on ``weak_range``: h in [-1, 1] doubles every r of the first round and so
    changes every alpha), and L' in units of the loss Z_t. ``lam_scale: "pairs"`` uses Z_t as
    the paper does, a *sum* over relevant x irrelevant boosting pairs, so the same lambda weighs
    the thresholds differently on collections of different sizes (the paper's lambda = 1e5 at its
    10,469 boosting keyframes with irrelevant:relevant 49.47, where Z_0 ~ 2.1e6 pairs);
    ``"mean"`` divides Z_t by the number of pairs, so lambda is per pair and does not depend on
    the collection's size (the paper's setting is lambda ~ 1e5 / 2.1e6 = 0.047 per pair). Neither
    removes the dependence on the score scale: sweep lambda over decades on new data.

    Parameters
    ----------
    n_rounds : largest number of rounds T (round 0 included).
    regularizer : "squared_step" (the paper's default), "exp_step" or "squared_gap" (eq. 8).
    lam : regularisation factor lambda (paper: 1e5 with "squared_step", ``lam_scale: pairs``).
    lam_scale : "pairs" (the paper's loss scale) or "mean" (loss per pair).
    tol : relative convergence tolerance on L' (0: run ``n_rounds`` rounds).
    weak_range : "symmetric" (h = o in [-1, 1], the paper's experiments) or "unit" (h = (o + 1) / 2).
    """

    def __init__(self, n_rounds: PositiveInt = 100, regularizer: Regularizer = "squared_step",
                 lam: NonNegativeFloat = 1e5, lam_scale: Literal["pairs", "mean"] = "pairs",
                 tol: NonNegativeFloat = 1e-6, weak_range: WeakRange = "symmetric"):
        self.n_rounds = n_rounds
        self.regularizer = regularizer
        self.lam = lam
        self.lam_scale = lam_scale
        self.tol = tol
        self.weak_range = weak_range

    def fit(self, X, y):
        """Learn models, weights and thresholds from outputs ``X`` (n, K) in [-1, 1] and labels ``y``."""
        h, s = training_outputs(self, X, y, self.weak_range)
        bound_log = BoundLog()
        n_pairs = float((s > 0).sum()) * float((s < 0).sum())
        lam = float(self.lam) * (n_pairs if self.lam_scale == "mean" else 1.0)
        f = np.zeros(len(h))
        v, log_z = side_weights(f, s)
        r_all = (s * v) @ h
        k = int(np.argmax(np.abs(r_all)))
        bound_log.see(r_all[k])
        r = clip_r(r_all[k])
        a = alpha_of(r)
        loss_bound = np.exp(log_z) * np.sqrt(1 - r * r)
        f = a * h[:, k]
        theta = float(f.min())
        models, alphas, thetas, bounds, active = [k], [a], [theta], [loss_bound], [len(f)]
        omega, searched = 0.0, []
        for t in range(1, int(self.n_rounds)):
            tick("round", t + 1, int(self.n_rounds))
            k, theta_new, r, bound, pen, share = self._choose(h, s, f, theta, omega, lam)
            searched.append(share)
            if abs(r) < 1e-12:
                break
            if self.tol > 0 and abs(bound - loss_bound) < float(self.tol) * abs(loss_bound):
                break
            bound_log.see(r)
            a = alpha_of(r)
            on = f >= theta_new
            f[on] += a * h[on, k]
            omega += pen
            theta, loss_bound = theta_new, bound
            models.append(k)
            alphas.append(a)
            thetas.append(theta)
            bounds.append(bound)
            active.append(int(on.sum()))
        self.models_ = np.asarray(models, dtype=int)
        self.alphas_ = np.asarray(alphas)
        self.thresholds_ = np.asarray(thetas)
        self.loss_bound_ = np.asarray(bounds)
        self.n_active_ = np.asarray(active)
        self.diagnostics_ = {"rounds": len(models), "distinct_models": int(len(np.unique(self.models_))),
                             "final_active_fraction": active[-1] / len(f),
                             # share of the active rows each round's threshold search sorted and summed
                             "searched_fraction": float(np.mean(searched)) if searched else 0.0,
                             **bound_log.report("imbalanced_rankboost", self.weak_range)}
        return self

    def _choose(self, h, s, f, theta, omega, lam):
        """(model, threshold, r, L', regulariser term, share of the active rows searched) of round t.

        The pair minimises L' over the round's loss matrix.

        Pruned, exactly: keeping theta_{t-1} costs one product over the active rows (r of every
        model at once) and gives L'_0. A threshold f_j can only win if even the best possible
        r leaves room for its penalty, Z sqrt(1 - R_MAX^2) + lambda (Omega + pen(f_j)) <= L'_0;
        only the active rows at or below the highest such f_j are sorted and summed, as the
        running sum r(f_j) = r(rows above them) + cumsum down them. With a regulariser that
        holds the thresholds, a round costs about RankBoost's one product; with lambda = 0
        every row is searched.
        """
        v, log_z = side_weights(f, s)
        z = math.exp(log_z)
        w = s * v
        on = f >= theta
        act = np.flatnonzero(on)
        # r of every model with theta_{t-1} kept; copying the active rows of h pays only when few are
        r_keep = np.where(on, w, 0.0) @ h if 3 * len(act) >= len(f) else w[act] @ h[act]
        gap_from = theta
        if self.regularizer == "squared_gap":
            above = f[f > theta]
            gap_from = float(above.min()) if len(above) else theta
        k0 = int(np.argmax(np.abs(r_keep)))
        pen0 = float(round_penalty(self.regularizer, theta, theta, gap_from))
        L0 = z * math.sqrt(1.0 - min(float(r_keep[k0]) ** 2, R_MAX * R_MAX)) + lam * (omega + pen0)
        fa = f[act]
        floor = z * math.sqrt(1.0 - R_MAX * R_MAX) + lam * (omega + round_penalty(self.regularizer, fa, theta,
                                                                                  gap_from))
        live = floor <= L0
        if not live.any():
            return k0, theta, float(r_keep[k0]), L0, pen0, 0.0
        tail = act[fa <= fa[live].max()]
        order = tail[np.argsort(-f[tail], kind="stable")]
        fs = f[order]
        R = h[order]
        R *= w[order, None]
        np.cumsum(R, axis=0, out=R)                       # eq. 16 for all K models at once
        R += r_keep - R[-1]                               # plus the rows above the tail
        r_hi, r_lo = R.max(axis=1), R.min(axis=1)         # the best |r| of each row, without a copy
        r_row = np.where(r_hi >= -r_lo, r_hi, r_lo)
        last = np.empty(len(fs), dtype=bool)              # last row of each tied score
        np.less(fs[1:], fs[:-1], out=last[:-1])
        last[-1] = True
        ends = np.flatnonzero(last)
        cand = fs[ends]
        pen = round_penalty(self.regularizer, cand, theta, gap_from)
        r2 = np.minimum(r_row[ends] ** 2, R_MAX * R_MAX)
        L = z * np.sqrt(1.0 - r2) + lam * (omega + pen)
        g = int(np.argmin(L))
        if not L[g] < L0:                                 # ties keep theta_{t-1}, as the full search does
            return k0, theta, float(r_keep[k0]), L0, pen0, len(order) / len(act)
        k = int(np.argmax(np.abs(R[ends[g]])))
        return k, float(cand[g]), float(R[ends[g], k]), float(L[g]), float(pen[g]), len(order) / len(act)

    def staged_decision_function(self, X):
        """Scores after each round (a generator): model t is evaluated only where f_{t-1} >= theta_t."""
        return (f.copy() for f in self._stages(X, "staged_decision_function"))

    def decision_function(self, X):
        """F(x) of eq. 4."""
        f = None
        for f in self._stages(X, "decision_function"):
            pass
        return f

    def _stages(self, X, method: str):
        """f_t after each round, in place (:func:`~rankbench.rankers.boosting._stacked.staged_scores`)."""
        check_is_fitted(self, "alphas_")
        cols = scoring_columns(self, X, method)
        if np.any(np.diff(self.thresholds_) < 0):
            raise InputError("imbalanced_rankboost: thresholds_ must not decrease (eq. 4); this model's do")
        return staged_scores(cols, self.models_, self.alphas_, self.thresholds_, self.weak_range)

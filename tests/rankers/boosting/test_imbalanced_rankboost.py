"""Imbalanced RankBoost: the sorted running-sum search of (model, threshold) against a brute-force
search over every pair of them with r summed over the explicit pair list (Merler et al. eqs. 6-17)."""

import numpy as np
import pytest
from toydata import bipartite_scores

from rankbench.errors import InputError
from rankbench.rankers.base import LazyColumns
from rankbench.rankers.boosting.bipartite_rankboost import BipartiteRankBoost
from rankbench.rankers.boosting.imbalanced_rankboost import ImbalancedRankBoost


def problem(n=30, K=5, seed=0):
    return bipartite_scores(n, K, seed, positive_rate=0.3, spread=0.6, lift=0.5)


def brute_force_irb(O, y, T, reg, lam, weak_range="symmetric"):
    """Figure 3 with every (threshold, model) of the loss matrix computed directly over all pairs."""
    h = O if weak_range == "symmetric" else (O + 1) / 2
    P, N = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    p, q = np.repeat(P, len(N)), np.tile(N, len(P))

    def dist(f):
        w = np.exp(f[q] - f[p])
        return w / w.sum(), w.sum()

    D, Z = dist(np.zeros(len(y)))
    r = D @ (h[p] - h[q])
    k = int(np.argmax(np.abs(r)))
    a = 0.5 * np.log((1 + r[k]) / (1 - r[k]))
    f = a * h[:, k]
    theta, omega = f.min(), 0.0
    models, alphas, thetas = [k], [a], [theta]
    for _ in range(1, T):
        D, Z = dist(f)
        above = f[f > theta]
        m = above.min() if len(above) else theta
        best = None
        for th in [theta] + sorted(set(f[f >= theta])):  # |r| held below 1 as the ranker does
            on = (f >= th).astype(float)
            pen = {"squared_step": (th - theta) ** 2, "exp_step": np.exp(th - theta),
                   "squared_gap": (th - m) ** 2}[reg]
            for kk in range(h.shape[1]):
                rr = np.clip(D @ (h[p, kk] * on[p] - h[q, kk] * on[q]), -1 + 1e-10, 1 - 1e-10)
                L = Z * np.sqrt(1 - rr ** 2) + lam * (omega + pen)
                if best is None or L < best[0] - 1e-12:
                    best = (L, kk, th, rr, pen)
        L, kk, th, rr, pen = best
        a = 0.5 * np.log((1 + rr) / (1 - rr))
        on = f >= th
        f[on] += a * h[on, kk]
        omega += pen
        theta = th
        models.append(kk)
        alphas.append(a)
        thetas.append(th)
    return np.array(models), np.array(alphas), np.array(thetas)


@pytest.mark.parametrize("weak_range", ["symmetric", "unit"])
@pytest.mark.parametrize("reg", ["squared_step", "exp_step", "squared_gap"])
@pytest.mark.parametrize("lam", [0.0, 0.5, 5.0, 50.0, 500.0])  # 50 and 500 prune the search
@pytest.mark.parametrize("seed", [0, 1])
def test_running_sum_search_equals_brute_force(reg, lam, seed, weak_range):
    O, y = problem(seed=seed)
    irb = ImbalancedRankBoost(n_rounds=8, regularizer=reg, lam=lam, tol=0, weak_range=weak_range).fit(O, y)
    models, alphas, thetas = brute_force_irb(O, y, 8, reg, lam, weak_range)
    assert irb.models_.tolist() == models.tolist()
    assert irb.thresholds_ == pytest.approx(thetas, abs=1e-12)
    assert irb.alphas_ == pytest.approx(alphas, rel=1e-8)
    assert np.all(np.diff(irb.thresholds_) >= 0)  # non-decreasing (eq. 4)


def test_search_is_pruned_only_where_penalties_rule_thresholds_out():
    O, y = problem(seed=0)
    fraction = {lam: ImbalancedRankBoost(n_rounds=8, lam=lam, tol=0).fit(O, y).diagnostics_["searched_fraction"]
                for lam in (0.0, 500.0, 1e9)}
    assert fraction[0.0] == 1.0 and fraction[500.0] < 0.5 and fraction[1e9] < 0.2


def test_thresholds_move_without_regulariser_and_stay_with_a_large_one():
    O, y = problem(n=60, seed=3)
    free = ImbalancedRankBoost(n_rounds=15, lam=0.0, tol=0).fit(O, y)
    held = ImbalancedRankBoost(n_rounds=15, lam=1e9, tol=0, weak_range="unit").fit(O, y)
    assert free.thresholds_[-1] > free.thresholds_[0] and free.n_active_[-1] < 60
    assert np.all(held.thresholds_ == held.thresholds_[0])
    # with thresholds that never cut, Imbalanced RankBoost is RankBoost (same models and weights)
    rb = BipartiteRankBoost(n_rounds=15, weak_range="unit").fit(O, y)
    assert held.models_.tolist() == rb.models_.tolist() and held.alphas_ == pytest.approx(rb.alphas_)


def test_lambda_per_pair_equals_lambda_times_pairs():
    O, y = problem(n=50, seed=4)
    n_pairs = y.sum() * (len(y) - y.sum())
    a = ImbalancedRankBoost(n_rounds=10, lam=0.01, lam_scale="mean", tol=0).fit(O, y)
    b = ImbalancedRankBoost(n_rounds=10, lam=0.01 * n_pairs, tol=0).fit(O, y)
    assert a.models_.tolist() == b.models_.tolist() and a.thresholds_ == pytest.approx(b.thresholds_)


def test_ranking_applies_each_model_only_above_its_threshold_and_counts_evaluations():
    O, y = problem(n=80, seed=5)
    irb = ImbalancedRankBoost(n_rounds=12, lam=0.0, tol=0).fit(O[:40], y[:40])
    test = O[40:]
    cols = LazyColumns.of_array(test)
    stages = list(irb.staged_decision_function(cols))
    # eq. 4 directly, with the set of (item, model) pairs it needs
    f = irb.alphas_[0] * test[:, irb.models_[0]]          # h = o (weak_range symmetric)
    needed = {(i, irb.models_[0]) for i in range(len(test))}
    assert np.allclose(stages[0], f)
    for t in range(1, len(irb.models_)):
        on = f >= irb.thresholds_[t]
        f = f + on * irb.alphas_[t] * test[:, irb.models_[t]]
        needed |= {(i, irb.models_[t]) for i in np.flatnonzero(on)}
        assert np.allclose(stages[t], f)
    assert cols.n_evals == len(needed) < len(test) * len(irb.models_)
    assert np.allclose(irb.decision_function(test), f)


def test_convergence_test_on_the_bound_stops_early():
    O, y = problem(n=60, seed=6)
    assert len(ImbalancedRankBoost(n_rounds=300, tol=1e-2, lam=0.1).fit(O, y).models_) < 300


@pytest.mark.parametrize("weak_range", ["symmetric", "unit"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_staged_scores_equal_every_model_evaluated_then_eq4_item_by_item(seed, weak_range):
    """The oracle evaluates every model on every item, then applies eq. 4 one item and one round at a
    time; the ranker must give the same scores to the bit, evaluating each model once, as one batch
    over exactly the items eq. 4 applies it to."""
    O, y = bipartite_scores(160, 8, seed, positive_rate=0.3, spread=0.6, lift=0.5)
    irb = ImbalancedRankBoost(n_rounds=40, lam=0.0, tol=0, weak_range=weak_range).fit(O[:60], y[:60])
    test = O[60:]
    h = test if weak_range == "symmetric" else (test + 1.0) / 2.0
    expected, needed = np.zeros((len(irb.models_), len(test))), set()
    for i in range(len(test)):
        f = 0.0
        for t, (k, a, theta) in enumerate(zip(irb.models_, irb.alphas_, irb.thresholds_)):
            if t == 0 or f >= theta:
                f += a * float(h[i, k])
                needed.add((i, int(k)))
            expected[t, i] = f
    assert len(test) < len(needed) < 0.9 * test.size       # the thresholds leave evaluations out
    batches = []

    def evaluate(k, rows):
        batches.append((int(k), np.asarray(rows).copy()))
        return test[rows, k]

    cols = LazyColumns(evaluate, test.shape)
    stages = np.array(list(irb.staged_decision_function(cols)))
    assert np.array_equal(stages, expected)
    assert sorted(k for k, _ in batches) == sorted(set(irb.models_.tolist()))   # one batch per model
    assert {(int(i), k) for k, rows in batches for i in rows} == needed
    assert all(np.all(np.diff(rows) > 0) for _, rows in batches)
    assert np.array_equal(irb.decision_function(test), expected[-1])


def test_thresholds_that_decrease_are_refused_at_scoring():
    O, y = problem(seed=7)
    irb = ImbalancedRankBoost(n_rounds=6, lam=0.0, tol=0).fit(O, y)
    irb.thresholds_ = irb.thresholds_[::-1].copy()
    with pytest.raises(InputError, match="must not decrease"):
        irb.decision_function(O)

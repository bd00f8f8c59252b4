"""Bipartite RankBoost: the factorised r and distribution update against RankBoost over the
explicit list of (relevant, irrelevant) pairs (Freund et al. 2003, Fig. 2)."""

import numpy as np
import pytest
from toydata import bipartite_scores

from rankbench.errors import InputError
from rankbench.rankers.base import LazyColumns
from rankbench.rankers.boosting.bipartite_rankboost import BipartiteRankBoost


def problem(n=40, K=6, seed=0):
    return bipartite_scores(n, K, seed, positive_rate=0.25, spread=0.5, lift=0.4)


def pairwise_rankboost(O, y, T, weak_range="symmetric"):
    """RankBoost on the explicit pair list: D over pairs, r = sum D (h(x0) - h(x1)), x0 relevant."""
    h = O if weak_range == "symmetric" else (O + 1) / 2
    P, N = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    p, q = np.repeat(P, len(N)), np.tile(N, len(P))
    D = np.full(len(p), 1.0 / len(p))
    models, alphas, loss = [], [], []
    f = np.zeros(len(y))
    for _ in range(T):
        r = D @ (h[p] - h[q])
        k = int(np.argmax(np.abs(r)))
        a = 0.5 * np.log((1 + r[k]) / (1 - r[k]))
        D = D * np.exp(-a * (h[p, k] - h[q, k]))
        D /= D.sum()
        f += a * h[:, k]
        models.append(k)
        alphas.append(a)
        loss.append(np.exp(f[q] - f[p]).sum())
    return np.array(models), np.array(alphas), np.array(loss)


@pytest.mark.parametrize("weak_range", ["symmetric", "unit"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_factorised_rounds_equal_rankboost_over_the_pair_list(seed, weak_range):
    O, y = problem(seed=seed)
    rb = BipartiteRankBoost(n_rounds=12, weak_range=weak_range).fit(O, y)
    models, alphas, loss = pairwise_rankboost(O, y, 12, weak_range)
    assert rb.models_.tolist() == models.tolist()
    assert rb.alphas_ == pytest.approx(alphas, rel=1e-9)
    assert rb.loss_ == pytest.approx(loss, rel=1e-9)
    assert np.all(np.diff(rb.loss_) <= 1e-9)  # RankBoost's loss never rises


def test_staged_scores_and_lazy_evaluations():
    O, y = problem()
    rb = BipartiteRankBoost(n_rounds=10).fit(O, y)
    cols = LazyColumns.of_array(O)
    stages = list(rb.staged_decision_function(cols))
    assert len(stages) == 10
    direct = np.cumsum(rb.alphas_[None, :] * O[:, rb.models_], axis=1)  # h = o (weak_range symmetric)
    assert np.allclose(np.array(stages).T, direct)
    assert np.allclose(rb.decision_function(O), direct[:, -1])
    # every chosen model on every item once, a model chosen twice is not evaluated again
    assert cols.n_evals == len(O) * len(np.unique(rb.models_))


def test_tolerance_stops_early_and_inputs_are_checked():
    O, y = problem()
    assert len(BipartiteRankBoost(n_rounds=200, tol=1e-3).fit(O, y).models_) < 200
    with pytest.raises(InputError, match=r"in \[-1, 1\]"):
        BipartiteRankBoost().fit(O * 3, y)
    with pytest.raises(InputError, match="relevant and irrelevant"):
        BipartiteRankBoost().fit(O, np.zeros(len(y)))


def test_the_two_readings_differ_and_a_failed_bound_is_reported():
    """h in [-1, 1] doubles every pair difference: strong models reach |r| >= 1, which is reported."""
    O, y = problem()
    unit = BipartiteRankBoost(n_rounds=1, weak_range="unit").fit(O, y)   # round 1: uniform pair weights
    assert unit.diagnostics_["bound_violations"] == 0 and unit.diagnostics_["max_abs_r"] < 1
    sym = BipartiteRankBoost(n_rounds=1).fit(O, y)
    assert sym.models_.tolist() == unit.models_.tolist()
    assert sym.diagnostics_["max_abs_r"] == pytest.approx(2 * unit.diagnostics_["max_abs_r"], rel=1e-12)
    yy = np.r_[np.ones(10), np.zeros(30)].astype(int)   # a model that separates the rows completely
    sep = np.where(yy[:, None] == 1, 0.9, -0.9) * np.ones((40, 3))
    with pytest.warns(UserWarning, match="bound"):
        rb = BipartiteRankBoost(n_rounds=3).fit(sep, yy)
    assert rb.diagnostics_["bound_violations"] >= 1 and rb.diagnostics_["max_abs_r"] >= 1

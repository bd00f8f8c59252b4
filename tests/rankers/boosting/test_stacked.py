"""The shared machinery of the boosters over base-model outputs (boosting/_stacked.py), against
brute force: one round at a time over every item, every pair of the factorised distribution."""

import itertools
import math
import warnings

import numpy as np
import pytest
from scipy.special import logsumexp

from rankbench.errors import InputError
from rankbench.rankers.base import LazyColumns
from rankbench.rankers.boosting._stacked import (R_MAX, BoundLog, BoundWarning, alpha_of, side_weights,
                                                 staged_scores, to_weak, training_outputs)


class Booster:
    """A stand-in ranker: the checks read only its class name and set n_features_in_."""


def test_weak_ranges_of_the_paper():
    o = np.array([-1.0, 0.0, 0.5, 1.0])
    assert to_weak(o, "symmetric") is o
    np.testing.assert_allclose(to_weak(o, "unit"), [0.0, 0.5, 0.75, 1.0])


def test_training_outputs_gives_h_and_the_signs():
    r = Booster()
    H = np.array([[-1.0, 0.2], [1.0, -0.4], [0.0, 1.0]])
    h, s = training_outputs(r, H, [1, 0, 3], "unit")
    np.testing.assert_allclose(h, (H + 1) / 2)
    assert s.tolist() == [1.0, -1.0, 1.0] and r.n_features_in_ == 2


def test_training_outputs_refuses_outputs_outside_the_range_and_one_class():
    with pytest.raises(InputError, match=r"^Booster.fit: base-model outputs must be in \[-1, 1\], got values "
                                         r"in \[0, 1.5\]"):
        training_outputs(Booster(), np.array([[0.0], [1.5]]), [1, 0])
    with pytest.raises(InputError, match="got 2 relevant of 2 \\(one class only\\)"):
        training_outputs(Booster(), np.zeros((2, 1)), [1, 1])
    with pytest.raises(InputError, match="y has 3 entries for 2 rows"):
        training_outputs(Booster(), np.zeros((2, 1)), [1, 0, 1])


def test_side_weights_is_the_factorised_pair_distribution():
    rng = np.random.default_rng(1)
    f = rng.normal(scale=3, size=9)
    s = np.array([1, -1, 1, 1, -1, -1, 1, -1, -1.0])
    v, log_z = side_weights(f, s)
    rel, irr = np.flatnonzero(s > 0), np.flatnonzero(s < 0)
    pair_loss = np.array([f[j] - f[i] for i, j in itertools.product(rel, irr)])
    assert log_z == pytest.approx(logsumexp(pair_loss), rel=1e-12)
    D = np.exp(pair_loss - logsumexp(pair_loss))                  # D(x0, x1) over every pair
    np.testing.assert_allclose(np.outer(v[rel], v[irr]).ravel(), D, rtol=1e-10)
    assert v[rel].sum() == pytest.approx(1) and v[irr].sum() == pytest.approx(1)


def test_side_weights_stays_finite_for_large_scores():
    v, log_z = side_weights(np.array([-800.0, 800.0, 0.0]), np.array([1.0, -1.0, -1.0]))
    assert np.isfinite(v).all() and log_z == pytest.approx(1600 + math.log1p(math.exp(-800)))


def test_alpha_is_the_inverse_hyperbolic_tangent_and_stays_finite():
    for r in (-0.9, -0.1, 0.0, 0.3, 0.99):
        assert alpha_of(r) == pytest.approx(math.atanh(r), rel=1e-12, abs=1e-15)
    assert alpha_of(1.0) == pytest.approx(math.atanh(R_MAX)) and math.isfinite(alpha_of(5.0))
    assert alpha_of(-5.0) == -alpha_of(5.0)


def brute_staged(H, models, alphas, thresholds, weak_range):
    """One round at a time over every item."""
    h = to_weak(H, weak_range)
    f = np.zeros(len(H))
    still = np.ones(len(H), bool)                 # an item below a threshold stops for good
    out = []
    for t, (m, a) in enumerate(zip(models, alphas)):
        if thresholds is not None and t > 0:
            still = still & (f >= thresholds[t])
        f = f + np.where(still, a * h[:, m], 0.0)
        out.append(f.copy())
    return out


@pytest.mark.parametrize("weak_range", ["symmetric", "unit"])
@pytest.mark.parametrize("pruned", [False, True])
def test_staged_scores_match_one_round_at_a_time(weak_range, pruned):
    rng = np.random.default_rng(7)
    n, K, T = 30, 4, 9
    H = rng.uniform(-1, 1, size=(n, K))
    models = rng.integers(0, K, size=T)
    alphas = rng.uniform(0.1, 1.0, size=T)
    thresholds = np.sort(rng.uniform(-0.5, 1.0, size=T)) if pruned else None
    want = brute_staged(H, models, alphas, thresholds, weak_range)
    cols = LazyColumns.of_array(H)
    got = [f.copy() for f in staged_scores(cols, models, alphas, thresholds, weak_range)]
    assert len(got) == T
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=0, atol=1e-12)
    # a model is evaluated only on the items still ranked at its first round
    first = {}
    still = np.ones(n, bool)
    for t, m in enumerate(models.tolist()):
        if pruned and t > 0:
            still = still & (want[t - 1] >= thresholds[t])
        first.setdefault(m, int(still.sum()))
    assert cols.n_evals == sum(first.values())
    if pruned:
        assert cols.n_evals < n * len(first)


def test_bound_log_counts_rounds_at_the_bound_and_warns_once():
    log = BoundLog()
    for r in (0.2, -0.5, 1.0, -1.3):
        log.see(r)
    with pytest.warns(BoundWarning, match="Merge.fit: |r| reached 1") as caught:
        out = log.report("Merge.fit", "symmetric")
    assert len(caught) == 1
    assert out == {"bound_violations": 2, "max_abs_r": 1.3}
    quiet = BoundLog()
    quiet.see(0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert quiet.report("Merge.fit", "unit") == {"bound_violations": 0, "max_abs_r": 0.5}

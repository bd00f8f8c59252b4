"""The gradient-boosting peers: scores from their dumped trees equal the libraries' own predict."""

import numpy as np
import pytest

from rankbench.rankers.base import LazyColumns


def problem(n=400, K=8, seed=0):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.1).astype(int)
    O = np.clip(rng.normal(size=(n, K)) * 0.5 + 0.6 * y[:, None] * rng.random(K), -1, 1)
    return O, y


@pytest.mark.parametrize("leaves", [2, 4])
def test_lightgbm_staged_scores_equal_its_predict(leaves):
    pytest.importorskip("lightgbm", reason="the optional peer LightGBM is not installed (rankbench[peers])")
    from rankbench.rankers.boosting.lgbm_lambdarank import LGBMLambdaRank

    O, y = problem()
    m = LGBMLambdaRank(n_estimators=30, num_leaves=leaves, random_state=0).fit(O[:250], y[:250])
    test = O[250:]
    cols = LazyColumns.of_array(test)
    stages = list(m.staged_decision_function(cols))
    assert len(stages) == len(m.trees_) and np.allclose(stages[-1], m.booster_.predict(test), atol=1e-9)
    assert np.allclose(stages[4], m.booster_.predict(test, num_iteration=5), atol=1e-9)
    if leaves == 2:  # stumps read each used model on every row, nothing else
        assert cols.n_evals == len(test) * m.diagnostics_["distinct_models"]


@pytest.mark.parametrize("depth", [1, 2])
def test_xgboost_staged_margins_equal_its_predict(depth):
    xgb = pytest.importorskip("xgboost", reason="the optional peer xgboost is not installed (rankbench[peers])")
    from rankbench.rankers.boosting.xgb_pairwise import XGBPairwise

    O, y = problem(seed=1)
    m = XGBPairwise(n_estimators=20, max_depth=depth).fit(O[:250], y[:250])
    test = O[250:]
    stages = list(m.staged_decision_function(test))
    ref = m.booster_.predict(xgb.DMatrix(test), output_margin=True)
    assert len(stages) == 20 and np.allclose(stages[-1], ref, atol=1e-5)


def test_lightgbm_queries_above_its_limit_are_split_evenly():
    pytest.importorskip("lightgbm", reason="the optional peer LightGBM is not installed (rankbench[peers])")
    from rankbench.rankers.boosting.lgbm_lambdarank import _queries

    y = (np.arange(25000) % 50 == 0).astype(int)
    order, groups = _queries(y, 0)
    assert groups == [8334, 8333, 8333] and sorted(order.tolist()) == list(range(25000))
    ys = np.split(y[order], np.cumsum(groups)[:-1])
    assert [int(g.sum()) for g in ys] == [167, 167, 166]
    assert _queries(y[:900], 0)[1] == [900]


def test_lgbm_seed_deals_the_queries_beyond_lightgbms_limit():
    """LightGBM's lambdarank takes at most 10,000 rows per query: beyond that the rows are dealt
    into random queries (relevant rows evenly), which is where ``random_state`` enters."""
    pytest.importorskip("lightgbm", reason="the optional peer LightGBM is not installed (rankbench[peers])")
    from rankbench.rankers.boosting.lgbm_lambdarank import MAX_QUERY, LGBMLambdaRank

    rng = np.random.default_rng(0)
    n = MAX_QUERY + 2001
    y = (rng.random(n) < 0.05).astype(int)
    O = np.clip(rng.normal(size=(n, 4)) * 0.5 + 0.5 * y[:, None], -1, 1)
    fits = [LGBMLambdaRank(n_estimators=5, num_leaves=4, random_state=s).fit(O, y).decision_function(O)
            for s in (0, 0, 1)]
    np.testing.assert_array_equal(fits[0], fits[1])
    assert not np.array_equal(fits[0], fits[2])

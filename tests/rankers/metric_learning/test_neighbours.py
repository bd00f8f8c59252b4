"""Target neighbours of the ordinal metric learners (metric_learning/_neighbours.py, Yu & Li eq. (2))
against a brute-force search, and the labels they accept."""

import numpy as np
import pytest

from rankbench.errors import InputError
from rankbench.rankers.metric_learning._neighbours import target_neighbours
from rankbench.rankers.metric_learning.cmds_dml import CMDSDML
from rankbench.rankers.metric_learning.ldmlr import LDMLR


def brute(X, y, K):
    """For each i, its K nearest other points of the same label (ties to the lower index)."""
    out = []
    for i in range(len(X)):
        same = [j for j in range(len(X)) if j != i and y[j] == y[i]]
        same.sort(key=lambda j: (float(np.sum((X[i] - X[j]) ** 2)), j))
        out += [(i, j) for j in same[:K]]
    return out


@pytest.mark.parametrize("K", [1, 2, 3, 10])
def test_matches_brute_force(K):
    rng = np.random.default_rng(K)
    X = rng.normal(size=(13, 3))
    y = rng.integers(0, 3, size=13)
    assert target_neighbours(X, y, K).tolist() == [list(p) for p in brute(X, y, K)]


def test_ties_go_to_the_lower_index_and_singletons_have_none():
    X = np.array([[0.0], [1.0], [-1.0], [1.0], [5.0]])
    y = np.array([0, 0, 0, 0, 1])
    assert target_neighbours(X, y, 1).tolist() == [[0, 1], [1, 3], [2, 0], [3, 1]]
    assert target_neighbours(X, y, 2).tolist() == [[0, 1], [0, 2], [1, 3], [1, 0], [2, 0], [2, 1], [3, 1], [3, 0]]
    assert target_neighbours(X[:1], y[:1], 3).shape == (0, 2)


def test_ties_among_many_equal_points_go_to_the_lower_indices():
    X = np.zeros((40, 2))
    X[::3] = 1.0                                      # two groups of coincident points, one label
    y = np.zeros(40, dtype=int)
    got = target_neighbours(X, y, 3).reshape(40, 3, 2)[:, :, 1]
    for i in range(40):
        group = [j for j in range(40) if j != i and (j % 3 == 0) == (i % 3 == 0)]
        assert got[i].tolist() == group[:3]


@pytest.mark.parametrize("learner", [CMDSDML(s=2, max_iter=5), LDMLR(T_max=2)])
@pytest.mark.parametrize("y, said", [(np.ones(12), "one class"),
                                     (np.r_[np.arange(6.0), np.full(6, np.nan)], "non-finite"),
                                     (np.array(["young", "old"] * 6), "not numbers")])
def test_ordinal_learners_refuse_labels_without_an_order(learner, y, said):
    # one label (or an unlabelled NaN row) gave a fitted metric at exit 0: every target distance is 0
    X = np.random.default_rng(0).normal(size=(12, 4))
    with pytest.raises(InputError, match=said):
        learner.fit(X, y)

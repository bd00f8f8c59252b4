"""The peers' dumped trees evaluated lazily (boosting/_trees.py), against a row-by-row walk."""

import numpy as np
import pytest

from rankbench.rankers.base import LazyColumns
from rankbench.rankers.boosting._trees import staged_tree_scores, tree_values, used_features


def leaf(v):
    return {"leaf": v}


def split(j, t, left, right, strict=True):
    return {"feature": j, "threshold": t, "strict": strict, "left": left, "right": right}


def walk(node, x, float32=False):
    """One row down one tree, the neutral form's rule read literally."""
    while "leaf" not in node:
        a, t = x[node["feature"]], node["threshold"]
        if float32:
            a, t = np.float32(a), np.float32(t)
        go_left = a < t if node["strict"] else a <= t
        node = node["left"] if go_left else node["right"]
    return node["leaf"]


def random_tree(rng, depth, K):
    if depth == 0 or rng.random() < 0.2:
        return leaf(float(rng.normal()))
    return split(int(rng.integers(K)), float(rng.uniform(-1, 1)), random_tree(rng, depth - 1, K),
                 random_tree(rng, depth - 1, K), strict=bool(rng.random() < 0.5))


def test_staged_scores_match_a_row_by_row_walk():
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(40, 5))
    trees = [random_tree(rng, 3, 5) for _ in range(6)]
    got = list(staged_tree_scores(trees, LazyColumns.of_array(X), init=0.25))
    want = 0.25 + np.cumsum([[walk(t, x) for x in X] for t in trees], axis=0)
    assert len(got) == len(trees)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=0, atol=1e-12)


def test_strict_and_non_strict_splits_differ_only_at_the_threshold():
    X = np.array([[0.5], [0.4], [0.6]])
    for strict, want in ((True, [2.0, 1.0, 2.0]), (False, [1.0, 1.0, 2.0])):
        out = np.zeros(3)
        tree_values(split(0, 0.5, leaf(1.0), leaf(2.0), strict), LazyColumns.of_array(X), np.arange(3), out)
        assert out.tolist() == want


def test_float32_compares_in_single_precision():
    x = 0.1 + 1e-12                      # above 0.1 in double precision, equal to it in single
    tree = split(0, 0.1, leaf(1.0), leaf(2.0), strict=False)
    for float32 in (False, True):
        out = np.zeros(1)
        tree_values(tree, LazyColumns.of_array([[x]]), np.arange(1), out, float32=float32)
        assert out[0] == walk(tree, [x], float32) == (1.0 if float32 else 2.0)


def test_a_split_reads_its_model_only_on_the_rows_that_reach_it():
    X = np.array([[-1.0, 5.0], [1.0, 6.0], [2.0, 7.0], [-3.0, 8.0]])
    tree = split(0, 0.0, leaf(0.0), split(1, 6.5, leaf(1.0), leaf(2.0)))
    cols = LazyColumns.of_array(X)
    out = np.zeros(4)
    tree_values(tree, cols, np.arange(4), out)
    assert out.tolist() == [0.0, 1.0, 2.0, 0.0]
    assert cols.n_evals == 4 + 2            # column 0 on every row, column 1 on the two right of the root
    assert cols.evals_per_row().tolist() == [1, 2, 2, 1]


def test_used_features():
    trees = [leaf(1.0), split(3, 0, leaf(0), split(1, 0, leaf(0), leaf(1))), split(3, 1, leaf(0), leaf(1))]
    assert used_features(trees) == {1, 3}
    assert used_features([]) == set()


@pytest.mark.parametrize("n", [0, 1])
def test_tiny_collections(n):
    cols = LazyColumns.of_array(np.zeros((n, 1)))
    got = list(staged_tree_scores([split(0, 0.0, leaf(1.0), leaf(2.0))], cols))
    assert got[0].tolist() == [2.0] * n

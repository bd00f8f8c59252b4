"""rankbench.rankers._pair_grid: the streamed grid of |x_i - x_j| (Prosser et al. 2010, eqs. 1-5),
checked against brute-force loops over every (query, positive, negative) triple."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from rankbench.errors import InputError
from rankbench.rankers._pair_grid import build_pair_grid, weighted_l1
from rankbench.utils import jit


def _brute_triples(X, y, cams):
    """Every ``|x_q - x_n| - |x_q - x_p|`` by definition: a query q, a positive p (same identity,
    candidate of q) and a negative n (another identity, candidate of q); candidates are the other
    images (of another camera when cameras are given)."""
    X = np.asarray(X, dtype=np.float64)
    out = []
    for q, p, n in itertools.product(range(len(y)), repeat=3):
        cand = lambda j: j != q and (cams is None or cams[j] != cams[q])  # noqa: E731
        if cand(p) and cand(n) and y[p] == y[q] and y[n] != y[q]:
            out.append(np.abs(X[q] - X[n]) - np.abs(X[q] - X[p]))
    return np.array(out)


def _sorted_rows(A):
    return A[np.lexsort(np.round(A, 5).T[::-1])]


def _data(cams_kind, seed=0):
    rng = np.random.default_rng(seed)
    y = np.array([0, 0, 1, 1, 2, 2, 3])
    X = rng.normal(size=(len(y), 3))
    cams = {"none": None, "two": np.array([0, 1, 0, 1, 1, 0, 0]),
            "three": np.array([0, 1, 2, 0, 1, 2, 0])}[cams_kind]
    return X, y, cams


@pytest.mark.parametrize("cams_kind", ["none", "two", "three"])
def test_the_triples_are_every_query_positive_negative_by_brute_force(cams_kind):
    X, y, cams = _data(cams_kind)
    grid = build_pair_grid(X, y, cams, dtype=np.float64)
    want = _brute_triples(X, y, cams)
    assert grid.n_triples() == len(want)
    np.testing.assert_allclose(_sorted_rows(grid.materialize(np.float64)), _sorted_rows(want), atol=1e-12)


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("cams_kind", ["none", "two"])
def test_a_pass_scores_every_grid_entry_and_sums_the_weighted_differences(compiled, cams_kind):
    if compiled and not jit.AVAILABLE:
        pytest.skip("no compiler")
    X, y, cams = _data(cams_kind, seed=1)
    rng = np.random.default_rng(2)
    grid = build_pair_grid(X, y, cams, block=2, dtype=np.float64)
    R, C = X[grid.rows], X[grid.cols]
    V = rng.random((X.shape[1], 2))
    G = rng.normal(size=grid.shape)
    with jit.use_compiled(compiled):
        S, acc = grid.stream(V, coef=lambda sl, S_blk: G[sl])
    for k in range(V.shape[1]):
        np.testing.assert_allclose(S[..., k], cdist(R, C, "minkowski", p=1, w=V[:, k]), rtol=1e-6)
    want = sum(G[a, b] * np.abs(R[a] - C[b]) for a in range(len(R)) for b in range(len(C)))
    np.testing.assert_allclose(acc, want, rtol=1e-6)


@pytest.mark.parametrize("compiled", [True, False])
def test_weighted_l1_is_a_weighted_cityblock_distance(compiled):
    if compiled and not jit.AVAILABLE:
        pytest.skip("no compiler")
    rng = np.random.default_rng(3)
    Q, G, w = rng.normal(size=(4, 5)), rng.normal(size=(6, 5)), rng.random(5)
    with jit.use_compiled(compiled):
        got, got_k = weighted_l1(Q, G, w), weighted_l1(Q, G, np.stack([w, 2 * w], axis=1))
    want = cdist(Q, G, "minkowski", p=1, w=w)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_allclose(got_k[..., 1], 2 * want, rtol=1e-5)


@pytest.mark.parametrize("y, cams", [([0, 1, 2, 3], None),          # no identity seen twice
                                     ([0, 0, 0, 0], None),          # one class: no wrong match
                                     ([0, 0, 1, 1], [0, 0, 1, 1])])  # each pair in one camera
def test_training_data_without_a_usable_query_is_refused_in_one_line(y, cams):
    X = np.zeros((len(y), 2))
    with pytest.raises(InputError) as err:
        build_pair_grid(X, np.array(y), None if cams is None else np.array(cams))
    assert "\n" not in str(err.value) and "true match" in str(err.value)


def _drawn(grid):
    """{query image: (its positives, its drawn negatives)} read off the grid's masks."""
    out = {}
    for side, is_row in grid.sides():
        mine, other = (grid.rows, grid.cols) if is_row else (grid.cols, grid.rows)
        for q in np.flatnonzero(side.valid.any(1)):
            out[int(mine[q])] = (set(other[side.pos[q][side.valid[q]]].tolist()),
                                 set(other[np.flatnonzero(side.neg[q])].tolist()))
    return out


@pytest.mark.parametrize("k", [1, 2, 4, 100])
@pytest.mark.parametrize("cams_kind", ["none", "two", "three", "multishot"])
def test_each_query_keeps_k_of_its_negatives_and_every_positive(cams_kind, k):
    """Counted by brute force: a query's candidates are the other images (of another camera when
    cameras are given); it keeps every positive and min(k, its negatives) negatives."""
    if cams_kind == "multishot":  # three people, two images per person and camera
        y, cams = np.repeat(np.arange(3), 4), np.tile([0, 0, 1, 1], 3)
        X = np.random.default_rng(0).normal(size=(12, 3))
    else:
        X, y, cams = _data(cams_kind)
    grid = build_pair_grid(X, y, cams, negatives_per_query=k, random_state=np.random.RandomState(0))
    drawn = _drawn(grid)
    for q in range(len(y)):
        cand = [j for j in range(len(y)) if j != q and (cams is None or cams[j] != cams[q])]
        pos, neg = {j for j in cand if y[j] == y[q]}, {j for j in cand if y[j] != y[q]}
        if not (pos and neg):
            assert q not in drawn
            continue
        assert drawn[q][0] == pos
        assert drawn[q][1] <= neg and len(drawn[q][1]) == min(k, len(neg))
    if k >= len(y):  # every negative: the grid of every triple
        assert grid.n_triples() == len(_brute_triples(X, y, cams))


def test_the_sample_is_the_seeds_and_uniform_without_replacement():
    y, cams = np.arange(12) // 2, np.tile([0, 1], 6)  # six people, each query has five negatives
    X = np.zeros((12, 1))
    draw = lambda seed: _drawn(build_pair_grid(X, y, cams, negatives_per_query=2,  # noqa: E731
                                               random_state=np.random.RandomState(seed)))
    assert draw(3) == draw(3) and draw(3) != draw(4)
    counts = np.zeros((12, 12))
    for seed in range(400):
        for q, (_, neg) in draw(seed).items():
            counts[q, list(neg)] += 1
    negs = (y[:, None] != y[None, :]) & (cams[:, None] != cams[None, :])
    assert (counts[~negs] == 0).all()
    # each of a query's 5 negatives drawn with probability 2/5 (binomial sd ~10 over 400 draws)
    np.testing.assert_allclose(counts[negs], 160, atol=5 * np.sqrt(400 * 0.4 * 0.6))


def test_sampled_negatives_take_any_random_state_as_scikit_learn_does():
    """None (a fresh draw) was an AttributeError; a seed and a RandomState of it draw the same."""
    from rankbench.rankers._pair_grid import build_pair_grid

    X = np.random.default_rng(0).random((12, 3))
    y, c = np.repeat(np.arange(6), 2), np.tile([0, 1], 6)
    assert build_pair_grid(X, y, c, negatives_per_query=2).n_triples() == 24
    a = build_pair_grid(X, y, c, negatives_per_query=2, random_state=np.random.RandomState(3))
    b = build_pair_grid(X, y, c, negatives_per_query=2, random_state=3)
    assert (a.row_side.neg == b.row_side.neg).all() and (a.col_side.neg == b.col_side.neg).all()

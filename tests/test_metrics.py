"""Metrics against brute-force references written independently of rankbench.metrics."""

import itertools

import numpy as np
import pytest

from rankbench import metrics


def mean_over_orders(scores, value):
    """The oracle of the tie rule: the mean of value(ranking) over every ranking of the items by
    score, descending, with the tied items in each of their orders, all equally likely (every
    permutation, stably sorted by score; small inputs only)."""
    return float(np.mean([value(sorted(perm, key=lambda i: -scores[i]))
                          for perm in itertools.permutations(range(len(scores)))]))


def first_hit_rank(ranking, hit):
    return next(k for k, i in enumerate(ranking, start=1) if hit[i])


def ranked_ap(ranking, hit, depth=None, tp=None):
    hits, acc = 0, 0.0
    for k, i in enumerate(ranking[:depth], start=1):
        if hit[i]:
            hits += 1
            acc += hits / k
    tp = sum(hit) if tp is None else tp
    return acc / tp if tp else 0.0


@pytest.mark.parametrize("seed", range(8))
def test_cmc_is_its_mean_over_every_order_of_tied_items(seed):
    rng = np.random.default_rng(seed)
    n_gallery = int(rng.integers(2, 7))
    g_ids = rng.integers(0, 3, n_gallery)                  # several images of a person: multi-shot
    p_ids = g_ids[rng.integers(0, n_gallery, 6)]
    S = rng.integers(0, 3, size=(6, n_gallery)).astype(float)   # many ties on purpose
    curve = metrics.cmc_curve(S, p_ids, g_ids)
    for r in range(1, n_gallery + 1):
        ref = np.mean([mean_over_orders(s, lambda o: first_hit_rank(o, g_ids == p) <= r)
                       for s, p in zip(S, p_ids)])
        assert curve[r - 1] == pytest.approx(ref, abs=1e-12)
    assert metrics.nauc(curve) == pytest.approx(curve.mean())


def test_cmc_without_ties_is_the_rank_count_to_the_bit():
    rng = np.random.default_rng(0)
    S = rng.normal(size=(40, 30))
    g_ids = np.repeat(np.arange(15), 2)
    p_ids = rng.integers(0, 15, 40)
    ranks = [first_hit_rank(sorted(range(30), key=lambda j: -s[j]), g_ids == p) for s, p in zip(S, p_ids)]
    curve = metrics.cmc_curve(S, p_ids, g_ids)
    assert curve.tolist() == [np.count_nonzero(np.array(ranks) <= r) / 40 for r in range(1, 31)]


def test_cmc_perfect_and_constant_scorers():
    ids = np.arange(10)
    assert metrics.cmc_curve(np.eye(10), ids, ids)[0] == 1.0
    # a constant scorer gets chance: rank r with probability 1 / 10
    curve = metrics.cmc_curve(np.zeros((10, 10)), ids, ids)
    assert curve == pytest.approx(np.arange(1, 11) / 10)


def test_cmc_rejects_probe_without_gallery_match():
    with pytest.raises(ValueError):
        metrics.cmc_curve(np.zeros((2, 2)), np.array([0, 5]), np.array([0, 1]))


def test_reid_ap_per_probe_is_sklearns_over_each_probes_candidates():
    """torchreid's mAP: per probe, AP over its candidate gallery (its own camera's images of its own
    identity left out), checked against scikit-learn's average_precision_score probe by probe."""
    from sklearn.metrics import average_precision_score

    rng = np.random.default_rng(3)
    g_ids, g_cams = rng.integers(0, 8, 60), rng.integers(0, 3, 60)
    p_ids, p_cams = rng.integers(0, 8, 25), rng.integers(0, 3, 25)
    S = rng.normal(size=(25, 60))          # continuous: no ties, where every definition agrees
    cand = ~((p_ids[:, None] == g_ids[None, :]) & (p_cams[:, None] == g_cams[None, :]))
    ok = ((p_ids[:, None] == g_ids[None, :]) & cand).any(axis=1)
    ap = metrics.reid_average_precisions(S[ok], p_ids[ok], g_ids, cand[ok])
    ref = [average_precision_score(g_ids[c] == p, s[c]) for s, p, c in zip(S[ok], p_ids[ok], cand[ok])]
    assert ok.sum() > 15 and np.allclose(ap, ref)
    assert metrics.reid_average_precisions(np.eye(6), np.arange(6), np.arange(6)).tolist() == [1.0] * 6


def test_reid_ap_is_its_mean_over_every_order_of_tied_items():
    rng = np.random.default_rng(4)
    S = rng.integers(0, 3, size=(12, 6)).astype(float)
    g_ids, p_ids = np.repeat(np.arange(3), 2), rng.integers(0, 3, 12)
    for i, ap in enumerate(metrics.reid_average_precisions(S, p_ids, g_ids)):
        ref = mean_over_orders(S[i], lambda o: ranked_ap(o, g_ids == p_ids[i]))
        assert ap == pytest.approx(ref, abs=1e-12)
    assert metrics.reid_average_precisions(np.zeros((3, 3)), np.arange(3), np.arange(3)) == pytest.approx([(1 + 1 / 2 + 1 / 3) / 3] * 3)
    with pytest.raises(ValueError):
        metrics.reid_average_precisions(np.zeros((2, 2)), np.array([0, 5]), np.array([0, 1]))


@pytest.mark.parametrize("seed", range(10))
def test_average_precision_is_its_mean_over_every_order_of_tied_items(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 8))
    scores = rng.integers(0, 3, n).astype(float)
    rel = rng.random(n) < 0.5
    extra = int(rng.integers(0, 2))                       # relevant items never ranked
    tp = int(rel.sum()) + extra
    for depth in (None, 1, 2, 3, 5):
        ref = mean_over_orders(scores, lambda o: ranked_ap(o, rel, depth, tp))
        assert metrics.average_precision(scores, rel, depth, n_relevant=tp) == pytest.approx(ref, abs=1e-12)


def test_average_precision_ties_across_signed_zeros_and_float32():
    """-0.0 and 0.0 are one score, tied (as the oracle's sort sees them), and float32 scores are
    ranked as their float64 values."""
    scores = np.array([0.5, -0.0, 0.0, -0.0, 0.25, 0.0, -1.0])
    rel = np.array([0, 1, 0, 0, 1, 1, 0], bool)
    for depth in (None, 2, 4):
        ref = mean_over_orders(scores, lambda o: ranked_ap(o, rel, depth))
        assert metrics.average_precision(scores, rel, depth) == pytest.approx(ref, abs=1e-12)
    s32 = np.array([0.1, 0.3, 0.3, 0.2], np.float32)
    rel32 = np.array([1, 0, 1, 0], bool)
    ref = mean_over_orders(s32.astype(float), lambda o: ranked_ap(o, rel32))
    assert metrics.average_precision(s32, rel32) == pytest.approx(ref, abs=1e-12)


def test_average_precision_large_ties_against_sampled_orders():
    """Many large tie groups: the exact expectation lies within the sampling error of the mean
    over 4,000 random orders of the tied items."""
    rng = np.random.default_rng(11)
    scores = rng.integers(0, 12, 300).astype(float)
    rel = rng.random(300) < 0.2
    for depth in (None, 40):
        samples = [ranked_ap(sorted(rng.permutation(300), key=lambda i: -scores[i]), rel, depth)
                   for _ in range(4000)]
        got = metrics.average_precision(scores, rel, depth)
        assert abs(got - np.mean(samples)) < 4 * np.std(samples) / np.sqrt(len(samples))


def test_average_precision_no_relevant_is_zero():
    assert metrics.average_precision(np.arange(5.0), np.zeros(5)) == 0.0


def test_knn_regress_and_mae():
    Z_train = np.array([[0.0], [1.0], [2.0], [10.0]])
    y_train = np.array([0, 1, 2, 9])
    pred = metrics.knn_regress(Z_train, y_train, np.array([[0.9], [9.0]]), k=2)
    assert pred.tolist() == [0.5, 5.5]
    assert metrics.mae([1, 2], [1.5, 1.0]) == pytest.approx(0.75)


def test_knn_vote_against_a_counter():
    import collections

    rng = np.random.default_rng(0)
    Z_train, Z_test = rng.normal(size=(30, 2)), rng.normal(size=(20, 2))
    y_train = rng.integers(0, 3, 30).astype(float)
    for k in (1, 4, 5):
        pred = metrics.knn_vote(Z_train, y_train, Z_test, k)
        for z, p in zip(Z_test, pred):
            nn = np.argsort(((Z_train - z) ** 2).sum(1), kind="stable")[:k]
            count = collections.Counter(y_train[nn].tolist())
            best = max(count.values())
            assert p == min(lab for lab, c in count.items() if c == best)  # ties to the smallest
    # a 2-2 tie goes to the smaller label, whatever its distance
    assert metrics.knn_vote(np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([2, 2, 1, 1]),
                            np.array([[0.0]]), 4).tolist() == [1]


def test_grouped_pair_accuracy_equals_listing_every_pair():
    rng = np.random.default_rng(2)
    s = rng.integers(0, 8, 120).astype(float)
    g = rng.integers(0, 5, 120)
    correct = total = 0
    for i, j in itertools.permutations(range(120), 2):
        if g[i] > g[j]:
            total += 1
            correct += 1.0 if s[i] > s[j] else 0.5 if s[i] == s[j] else 0.0
    acc, n = metrics.grouped_pair_accuracy(s, g)
    assert n == total and acc == pytest.approx(correct / total)


def test_error_rate():
    assert metrics.error_rate([0, 1, 1, 0], [0, 1, 0, 0]) == 0.25
    assert metrics.error_rate(["a", "b"], ["a", "a"]) == 0.5      # labels of any kind
    with pytest.raises(ValueError, match="not finite"):
        metrics.error_rate(["a", "b"], ["a", None])              # a missing prediction is no label


# ----------------------------------------------------------------------------- every metric: non-finite, ties
def _calls(bad: float):
    """Every metric called once with one value of its scores / embeddings / predictions set to
    ``bad`` (the rest ordinary): {name: thunk}."""
    S = np.eye(4)
    S[1, 2] = bad
    ids = np.arange(4)
    s = np.array([0.3, bad, 0.1, 0.9])
    Z = np.array([[0.0], [bad], [2.0]])
    return {
        "cmc_curve": lambda: metrics.cmc_curve(S, ids, ids),
        "reid_average_precisions": lambda: metrics.reid_average_precisions(S, ids, ids),
        "average_precision": lambda: metrics.average_precision(s, np.array([1, 0, 0, 1])),
        "average_precisions": lambda: metrics.average_precisions(s, np.array([1, 0, 0, 1]), (2, None)),
        "knn_regress": lambda: metrics.knn_regress(Z, np.array([0.0, 1.0, 2.0]), np.array([[0.5]]), 2),
        "knn_vote": lambda: metrics.knn_vote(np.array([[0.0], [1.0], [2.0]]), np.array([0.0, 1.0, 2.0]), Z, 2),
        "mae": lambda: metrics.mae([1.0, 2.0, 3.0, 4.0], s),
        "grouped_pair_accuracy": lambda: metrics.grouped_pair_accuracy(s, np.array([0, 1, 2, 3])),
        "error_rate": lambda: metrics.error_rate([0, 1, 1, 0], s),
        "vote_error_rate": lambda: metrics.vote_error_rate([0, 1, 1, 0], s, [0, 0, 1, 1]),
    }


METRIC_FUNCTIONS = sorted(_calls(0.0))


def test_every_metric_function_is_in_the_table():
    import inspect

    public = {n for n, f in inspect.getmembers(metrics, inspect.isfunction)
              if f.__module__ == metrics.__name__ and not n.startswith("_")}
    assert public - set(METRIC_FUNCTIONS) == {"finite", "labels", "metric_info", "metric_label", "is_rate", "nauc"}


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("name", METRIC_FUNCTIONS)
def test_every_metric_refuses_non_finite_values(name, bad):
    """A NaN never wins a comparison here: it is an error before any comparison is made."""
    _calls(0.0)[name]()  # the same call with a finite value works
    with pytest.raises(ValueError, match="not finite"):
        _calls(bad)[name]()


def test_a_constant_scorer_gets_chance_in_every_ranking_metric():
    """The tie rule, stated once in rankbench.metrics, in every metric: no metric may give a
    constant scorer more, or less, than chance."""
    ids = np.arange(5)
    assert metrics.cmc_curve(np.zeros((5, 5)), ids, ids) == pytest.approx([0.2, 0.4, 0.6, 0.8, 1.0])
    assert metrics.reid_average_precisions(np.zeros((5, 5)), ids, ids) == pytest.approx([(1 + 1 / 2 + 1 / 3 + 1 / 4 + 1 / 5) / 5] * 5)
    assert metrics.grouped_pair_accuracy(np.ones(4), np.array([0, 1, 2, 3]))[0] == 0.5
    # a 1-1 vote in a group is right with probability 1/2
    assert metrics.vote_error_rate([0, 0, 1, 1], [0, 1, 1, 0], [0, 0, 1, 1]) == 0.5
    # the relevant item's place does not matter: the expected AP of a random order, both ways
    chance = (1 + 1 / 2 + 1 / 3 + 1 / 4) / 4
    assert metrics.average_precision(np.zeros(4), np.array([1, 0, 0, 0])) == pytest.approx(chance)
    assert metrics.average_precision(np.zeros(4), np.array([0, 0, 0, 1])) == pytest.approx(chance)
    # k-NN is a predictor, not a metric: a tie in distance goes to the earlier training row
    assert metrics.knn_regress(np.array([[1.0], [-1.0]]), np.array([0.0, 9.0]), np.array([[0.0]]), 1).tolist() == [0.0]

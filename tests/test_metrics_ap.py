"""rankbench.metrics.average_precision against trec_eval (pytrec_eval) on random runs.

Merler et al.'s AP@d = (1/TP) sum_{k<=d} (TP_k/k) I_k, with TP all relevant items of the
collection, is trec_eval's ``map_cut_d``; at full depth it is ``map``.
"""

import numpy as np
import pytest

from rankbench.metrics import average_precision

pytrec_eval = pytest.importorskip("pytrec_eval")

CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)  # trec_eval's default map_cut cut-offs


def trec(scores, rel, extra_relevant=0):
    """trec_eval's map and map_cut for one query; ``extra_relevant`` relevant docs are never retrieved."""
    docs = [f"d{i:06d}" for i in range(len(scores))]  # zero-padded: string order = index order
    qrel = {d: int(r) for d, r in zip(docs, rel)}
    qrel.update({f"missing{i}": 1 for i in range(extra_relevant)})
    run = {d: float(s) for d, s in zip(docs, scores)}
    ev = pytrec_eval.RelevanceEvaluator({"q": qrel}, {"map", "map_cut"})
    return ev.evaluate({"q": run})["q"]


@pytest.mark.parametrize("seed", range(12))
def test_ap_matches_trec_eval_on_random_runs(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 1500))
    rel = rng.random(n) < rng.uniform(0.01, 0.5)
    rel[rng.integers(n)] = True
    scores = rng.permutation(n) + rng.random(n) * 0.5  # distinct scores
    ref = trec(scores, rel)
    assert average_precision(scores, rel) == pytest.approx(ref["map"], abs=1e-9)
    for d in CUTS:
        assert average_precision(scores, rel, depth=d) == pytest.approx(ref[f"map_cut_{d}"], abs=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_ap_counts_relevant_items_outside_the_ranking(seed):
    rng = np.random.default_rng(100 + seed)
    n = 300
    rel = rng.random(n) < 0.1
    scores = rng.standard_normal(n)
    ref = trec(scores, rel, extra_relevant=7)
    tp = int(rel.sum()) + 7
    assert average_precision(scores, rel, n_relevant=tp) == pytest.approx(ref["map"], abs=1e-9)
    for d in (10, 100, 200):
        assert average_precision(scores, rel, depth=d, n_relevant=tp) == pytest.approx(
            ref[f"map_cut_{d}"], abs=1e-9)


def test_ties_count_at_their_expected_value_not_trec_evals_order():
    """trec_eval breaks ties by document id, descending; rankbench counts a tie at its expected
    value over the tied items' orders (rankbench.metrics' one rule). They agree where no tie
    mixes relevant and other items, and the expected value lies between the best and the worst
    order of the tied items (relevant ones first or last, as trec_eval ranks them when the
    scores say so)."""
    rng = np.random.default_rng(7)
    n = 400
    rel = rng.random(n) < 0.2
    scores = rng.integers(0, 6, n).astype(float)
    ref = trec(scores, rel)
    best, worst = trec(scores + 0.25 * rel, rel), trec(scores - 0.25 * rel, rel)
    for d, key in ((None, "map"), (5, "map_cut_5"), (30, "map_cut_30"), (100, "map_cut_100")):
        got = average_precision(scores, rel, depth=d)
        assert worst[key] - 1e-9 <= got <= best[key] + 1e-9 and worst[key] < best[key]
        assert got != pytest.approx(ref[key], abs=1e-6)
    pure = np.where(rel, 10.0 + rng.integers(0, 3, n), rng.integers(0, 6, n)).astype(float)  # ties never mixed
    assert average_precision(pure, rel) == pytest.approx(trec(pure, rel)["map"], abs=1e-9)


def test_ap_by_hand():
    # ranking: R N R N N R, TP = 3: AP = (1/1 + 2/3 + 3/6) / 3; AP@3 = (1 + 2/3) / 3
    scores = np.array([6, 5, 4, 3, 2, 1.0])
    rel = np.array([1, 0, 1, 0, 0, 1])
    assert average_precision(scores, rel) == pytest.approx((1 + 2 / 3 + 0.5) / 3)
    assert average_precision(scores, rel, depth=3) == pytest.approx((1 + 2 / 3) / 3)
    assert average_precision(scores, rel, depth=100) == pytest.approx(average_precision(scores, rel))


@pytest.mark.parametrize("seed", range(6))
def test_ap_is_the_whole_ranked_list_sum_to_the_last_bit(seed):
    # where no tie mixes relevant and other items, the expected value is the ordinary AP: the
    # definition walks the whole list, ordered here by Python's sort on (score, index)
    # descending, and sums TP_k / k at each relevant k in that order: the same float operations,
    # so the same bits
    rng = np.random.default_rng(200 + seed)
    n = int(rng.integers(1, 3000))
    rel = rng.random(n) < rng.uniform(0.005, 0.6)
    coarse = 2.0 * rng.integers(0, int(rng.integers(1, 9)), n) + ~rel   # odd / even: never a mixed tie
    scores = rng.standard_normal(n) if seed % 2 else coarse
    scores[rel & (rng.random(n) < 0.3)] = 100.0             # saturated outputs tie, relevant ones only
    scores[~rel & (rng.random(n) < 0.3)] = -100.0
    order = sorted(range(n), key=lambda i: (scores[i], i), reverse=True)
    tp = int(rel.sum())
    for depth in (1, 10, 100, 500, None):
        total, hits = 0.0, 0
        for k, i in enumerate(order[:depth], start=1):
            if rel[i]:
                hits += 1
                total += hits / k
        assert average_precision(scores, rel, depth=depth) == (total / tp if tp else 0.0)

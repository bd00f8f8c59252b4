"""The retrieval protocol: splits, AP at depths, concept filters."""


import numpy as np
import pandas as pd
import pytest

from rankbench.datasets.base import Dataset
from rankbench.errors import ConfigError, DataError
from rankbench.metrics import average_precision
from rankbench.records import TrialSplit
from rankbench.registry import protocols, rankers
from rankbench.utils.meter import Meter


def make_dataset(n=400, n_concepts=3, seed=0):
    rng = np.random.default_rng(seed)
    R = (rng.random((n, n_concepts)) < [0.3, 0.15, 0.05][:n_concepts]).astype(np.uint8)
    items = pd.DataFrame({"id": [f"i{k}" for k in range(n)], "train": np.arange(n) < n // 2})
    return Dataset(name="toy", items=items, arrays={"relevance": R},
                   info={"concepts": ["a", "b", "c"][:n_concepts]})


def run(protocol, X, ds, seed=0, ranker="logistic", params=None):
    protocol.check_dataset(ds)
    sp = protocol.split(ds, np.random.default_rng(seed))
    res = protocol.evaluate(lambda: rankers.build(ranker, params or {}), X, ds, TrialSplit.drawn(sp),
                            Meter(measure_memory=False))
    return sp, res


def test_registered_and_needs_item_scorers():
    p = protocols.build("retrieval", {})
    p.check_ranker(rankers.build("logistic", {}), "rankers.x")
    p.check_ranker(rankers.build("kernel_logreg", {}), "rankers.x")


def test_dataset_split_uses_train_column():
    ds = make_dataset()
    sp = protocols.build("retrieval", {"split_by": "dataset"}).split(ds, np.random.default_rng(0))
    assert sp["train"] == list(range(200)) and sp["test"] == list(range(200, 400))


def test_random_split_is_seeded_disjoint_and_complete():
    ds = make_dataset()
    p = protocols.build("retrieval", {"train_fraction": 0.3})
    a = p.split(ds, np.random.default_rng(5))
    b = p.split(ds, np.random.default_rng(5))
    c = p.split(ds, np.random.default_rng(6))
    assert a == b and a != c
    assert len(a["train"]) == 120 and not set(a["train"]) & set(a["test"])
    assert sorted(a["train"] + a["test"]) == list(range(400))


def test_oracle_features_give_perfect_ap_at_every_depth():
    # features = the relevance matrix itself: a linear scorer ranks every relevant item first
    ds = make_dataset()
    X = ds.arrays["relevance"].astype(float)
    sp, res = run(protocols.build("retrieval", {"split_by": "dataset", "depths": [10, 50]}), X, ds)
    R = ds.arrays["relevance"][sp["test"]]
    for k, c in enumerate(ds.info["concepts"]):
        tp = R[:, k].sum()
        assert res.metrics[f"ap/{c}"] == pytest.approx(1.0)
        for d in (10, 50):
            assert res.metrics[f"ap@{d}/{c}"] == pytest.approx(min(d, tp) / tp)
    assert res.metrics["map"] == pytest.approx(1.0)
    assert res.metrics["map@10"] == pytest.approx(np.mean([min(10, t) / t for t in R.sum(0)]))


def test_metrics_equal_average_precision_of_the_ranker_scores():
    ds = make_dataset()
    rng = np.random.default_rng(1)
    X = ds.arrays["relevance"] + rng.normal(0, 0.8, ds.arrays["relevance"].shape)
    sp, res = run(protocols.build("retrieval", {"split_by": "dataset"}), X, ds)
    tr, te = np.array(sp["train"]), np.array(sp["test"])
    for k, c in enumerate(ds.info["concepts"]):
        s = rankers.build("logistic", {}).fit(X[tr], ds.arrays["relevance"][tr, k]).decision_function(X[te])
        rel = ds.arrays["relevance"][te, k]
        assert res.metrics[f"ap/{c}"] == pytest.approx(average_precision(s, rel))
        assert res.metrics[f"ap@100/{c}"] == pytest.approx(average_precision(s, rel, depth=100))
    names = set(res.metrics)
    assert {"map", "map@100", "map@500"} <= names
    assert res.metrics["map@500"] == pytest.approx(np.mean([res.metrics[f"ap@500/{c}"] for c in "abc"]))


def test_concept_subset_and_min_positives_filter():
    ds = make_dataset()
    p = protocols.build("retrieval", {"split_by": "dataset", "concepts": ["c", "a"]})
    assert p.split(ds, np.random.default_rng(0))["concepts"] == ["c", "a"]
    n_c = int(ds.arrays["relevance"][:200, 2].sum())
    p = protocols.build("retrieval", {"split_by": "dataset", "min_positives": n_c + 1})
    kept = p.split(ds, np.random.default_rng(0))["concepts"]
    assert "c" not in kept and "a" in kept
    with pytest.raises(DataError, match="no concept"):
        protocols.build("retrieval", {"split_by": "dataset", "min_positives": 10_000}).split(
            ds, np.random.default_rng(0))


def test_a_concept_a_trial_leaves_out_is_named_and_one_no_trial_can_keep_is_refused_when_asked_for():
    ds = make_dataset()
    n_c = int(ds.arrays["relevance"][:200, 2].sum())
    p = protocols.build("retrieval", {"split_by": "dataset", "min_positives": n_c + 1})
    with pytest.warns(UserWarning, match=r"leaves out 1 of 3 concepts \(c\).*MAP averages the other 2"):
        sp = p.split(ds, np.random.default_rng(0))
    # said again while the trial is scored, so that its result records it: it was said only on
    # the terminal, and the run's mean MAP averaged trials over different concepts without a trace
    X = np.random.default_rng(1).normal(size=(len(ds), 3))
    with pytest.warns(UserWarning, match=r"leaves out 1 of 3 concepts \(c\): too few relevant items when its split"):
        p.evaluate(lambda: rankers.build("logistic", {}), X, ds, TrialSplit.drawn(sp), Meter(measure_memory=False))
    R = ds.arrays["relevance"].copy()
    R[:, 1] = 0                                   # concept b: nothing relevant anywhere
    flat = Dataset(name="flat", items=ds.items, arrays={"relevance": R}, info=ds.info)
    with pytest.raises(DataError, match="protocol.concepts: concept 'b' .* has 0 relevant"):
        protocols.build("retrieval", {"concepts": ["a", "b"]}).check_dataset(flat)
    with pytest.warns(UserWarning, match="concept 'b' .* has 0 relevant .* left out of every trial"):
        protocols.build("retrieval", {}).check_dataset(flat)


def test_bad_parameters_and_datasets_are_clear_errors():
    ds = make_dataset()
    with pytest.raises(ConfigError, match="unknown concept 'zebra'"):
        protocols.build("retrieval", {"concepts": ["zebra"]}).check_dataset(ds)
    with pytest.raises(ConfigError, match="split_by"):
        protocols.build("retrieval", {"split_by": "nope"}).check_dataset(ds)
    with pytest.raises(ConfigError, match="train_fraction"):
        protocols.build("retrieval", {"train_fraction": 1.5}).check_dataset(ds)
    no_rel = Dataset(name="flat", items=ds.items, arrays={})
    with pytest.raises(DataError, match="relevance"):
        protocols.build("retrieval", {}).check_dataset(no_rel)
    no_train = Dataset(name="flat", items=ds.items[["id"]], arrays=ds.arrays, info=ds.info)
    with pytest.raises(DataError, match="train"):
        protocols.build("retrieval", {"split_by": "dataset"}).check_dataset(no_train)
    all_train = Dataset(name="flat", items=ds.items.assign(train=True), arrays=ds.arrays, info=ds.info)
    with pytest.raises(DataError, match="column 'train': every row is true; expected training rows"):
        protocols.build("retrieval", {"split_by": "dataset"}).check_dataset(all_train)


@pytest.mark.realdata
def test_scene_retrieval_with_logistic(shared_data):
    from rankbench.registry import datasets

    ds = datasets.build("mulan_scene", {}).load(str(shared_data))
    sp, res = run(protocols.build("retrieval", {"split_by": "dataset"}), ds.arrays["feat"], ds)
    assert sp["concepts"] == ds.info["concepts"]
    # measured 0.747 (MAP) and 0.347 (MAP@100, at most 100/TP ~ 0.5 per concept) with the MULAN split
    assert 0.6 < res.metrics["map"] < 0.9
    assert 0.25 < res.metrics["map@100"] < 0.5


def test_each_concept_is_reported_as_a_step_of_the_job():
    from rankbench.utils.progress import FitReporter, reporting

    ds = make_dataset()
    states = []
    with reporting(FitReporter("job", states.append, interval=0.0)):
        run(protocols.build("retrieval", {}), np.random.default_rng(1).normal(size=(400, 3)), ds)
    assert [s["loops"]["concept"] for s in states[1:]] == [[1, 3], [2, 3], [3, 3]]


@pytest.mark.parametrize("grouped", [False, True])
def test_draw_parts_cuts_rows_or_whole_groups_at_the_fractions(grouped):
    from rankbench.protocols.retrieval import draw_parts

    n = 37
    groups = np.array([f"video{i % 9}" for i in range(n)], dtype=object) if grouped else None
    units = 9 if grouped else n
    seen = set()
    for seed in range(20):
        part = draw_parts(np.random.default_rng(seed), n, (0.5, 0.2), groups)
        key = groups if grouped else np.arange(n)
        per_unit = {u: set(part[key == u]) for u in set(key)}
        assert all(len(p) == 1 for p in per_unit.values())              # a group is never cut
        sizes = np.bincount([p.pop() for p in per_unit.values()], minlength=3)
        assert sizes.tolist() == [round(0.5 * units), round(0.7 * units) - round(0.5 * units),
                                  units - round(0.7 * units)]
        seen.add(tuple(part))
        assert (part == draw_parts(np.random.default_rng(seed), n, (0.5, 0.2), groups)).all()
    assert len(seen) > 10                                                   # the seed decides


def test_draw_parts_draws_the_same_groups_whether_they_are_numbers_or_text():
    """Groups 9, 10, 100 read back as text ('10' sorts before '9'): before, the same seed put
    other groups in each part."""
    from rankbench.protocols.retrieval import draw_parts

    groups = np.array([9, 10, 100, 11, 2] * 4)
    for seed in range(6):
        a = draw_parts(np.random.default_rng(seed), len(groups), (0.5,), groups)
        b = draw_parts(np.random.default_rng(seed), len(groups), (0.5,), groups.astype(str).astype(object))
        assert a.tolist() == b.tolist()

"""The relative-attribute comparison protocol."""


import numpy as np
import pytest

from rankbench.errors import ConfigError, DataError
from rankbench.protocols.comparison import Comparison, training_pairs
from rankbench.records import TrialSplit
from rankbench.registry import datasets
from rankbench.utils.meter import Meter


def test_training_pairs_orientation_and_cap():
    strength = np.array([1, 1, 2, 3, 3])
    pairs, sign = training_pairs(strength, None, True, np.random.default_rng(0))
    assert len(pairs) == 10 and (sign == 0).sum() == 2
    o = sign == 1
    assert (strength[pairs[o, 0]] > strength[pairs[o, 1]]).all()
    assert (strength[pairs[~o, 0]] == strength[pairs[~o, 1]]).all()
    pairs, sign = training_pairs(strength, 4, False, np.random.default_rng(0))
    assert len(pairs) == 4 and (sign == 1).all()


def test_comparison_protocol_on_synthetic():
    from rankbench.rankers.ranksvm.linear import RankSVM

    d = datasets.build("synthetic_attributes", {}).load()
    p = Comparison(n_train_pairs=300)
    split = p.split(d, np.random.default_rng(0))
    assert set(split["train"]) == set(np.flatnonzero(d.items.train))
    meter = Meter(measure_memory=False)
    res = p.evaluate(lambda: RankSVM(C=1.0), d.arrays["feat"], d, TrialSplit.drawn(split), meter)
    attrs = d.info["attributes"]
    assert set(res.metrics) == {"pair_acc", *[f"pair_acc/{a}" for a in attrs]}
    assert res.metrics["pair_acc"] == pytest.approx(np.mean([res.metrics[f"pair_acc/{a}"] for a in attrs]))
    assert res.metrics["pair_acc"] > 0.9 and meter.train_s > 0
    assert all(v <= 300 for v in res.extra["n_train_pairs"].values())
    # the grouped count agrees with listing every test pair
    test = np.asarray(split["test"])
    st = d.info["strength"]["attr0"].reindex(d.column("category")).to_numpy()[test]
    scores = RankSVM().fit(d.arrays["feat"][split["train"]], *training_pairs(
        d.info["strength"]["attr0"].reindex(d.column("category")).to_numpy()[split["train"]], None, True,
        np.random.default_rng(0))).decision_function(d.arrays["feat"][test])
    i, j = np.triu_indices(len(test), 1)
    keep = st[i] != st[j]
    P = np.where((st[i] > st[j])[keep, None], np.column_stack([i, j])[keep], np.column_stack([j, i])[keep])
    from rankbench.metrics import grouped_pair_accuracy

    acc, n = grouped_pair_accuracy(scores, st)
    d = scores[P[:, 0]] - scores[P[:, 1]]   # brute force over the listed pairs, a tie counting one half
    assert n == len(P) and acc == pytest.approx(np.mean((d > 0) + 0.5 * (d == 0)))


def test_comparison_draws_per_category_and_checks():
    d = datasets.build("synthetic_attributes", {}).load()
    d.items["train"] = False
    with pytest.raises(DataError, match="column 'train': no row is true"):
        Comparison().check_dataset(d)
    cats = d.column("category")
    d.items["train"] = cats != cats[0]   # the test images all of one category: no test pair, NaN in every trial
    with pytest.raises(DataError, match="the test images .* all have one strength of attribute 'attr0'"):
        Comparison().check_dataset(d)
    d.items["train"] = cats == cats[0]   # the training images all of one category: no ordered pair to learn
    with pytest.raises(DataError, match="the training images .* all have one strength of attribute 'attr0'"):
        Comparison().check_dataset(d)
    d.items = d.items.drop(columns="train")
    with pytest.raises(ConfigError, match="n_train_per_category"):
        Comparison().check_dataset(d)
    p = Comparison(n_train_per_category=3)
    s1, s2 = p.split(d, np.random.default_rng(1)), p.split(d, np.random.default_rng(1))
    assert s1 == s2
    cats = d.column("category")[s1["train"]]
    assert all((cats == c).sum() == 3 for c in set(cats))
    with pytest.raises(ConfigError, match="unknown attribute 'smile'"):
        Comparison(attributes=["smile"], n_train_per_category=3).check_dataset(d)
    with pytest.raises(DataError, match="cannot draw"):
        Comparison(n_train_per_category=50).split(d, np.random.default_rng(0))


def test_each_attribute_is_reported_as_a_step_of_the_job():
    from rankbench.rankers.ranksvm.linear import RankSVM
    from rankbench.utils.progress import FitReporter, reporting

    d = datasets.build("synthetic_attributes", {}).load()
    p = Comparison(n_train_pairs=100)
    states = []
    with reporting(FitReporter("job", states.append, interval=0.0)):
        p.evaluate(lambda: RankSVM(C=1.0), d.arrays["feat"], d, TrialSplit.drawn(p.split(d, np.random.default_rng(0))),
                   Meter(measure_memory=False))
    n = len(d.info["attributes"])
    assert [s["loops"]["attribute"] for s in states[1:]] == [[i, n] for i in range(1, n + 1)]


def test_each_attribute_gets_its_own_copy_of_the_rows():
    from rankbench.rankers.ranksvm.linear import RankSVM

    class InPlace(RankSVM):  # a ranker that writes to its input
        def fit(self, X, pairs, sign):
            np.tanh(X, out=X)
            return super().fit(X, pairs, sign)

        def decision_function(self, X):
            np.tanh(X, out=X)
            return super().decision_function(X)

    d = datasets.build("synthetic_attributes", {}).load()
    p = Comparison(n_train_pairs=300)
    split = TrialSplit.drawn(p.split(d, np.random.default_rng(0)))
    X = d.arrays["feat"].astype(float)
    got = p.evaluate(lambda: InPlace(C=1.0), X, d, split, Meter(measure_memory=False)).metrics
    # every attribute's ranker saw the rows as given (tanh once), not as the last one left them
    want = p.evaluate(lambda: RankSVM(C=1.0), np.tanh(X), d, split, Meter(measure_memory=False)).metrics
    assert got == pytest.approx(want)


def test_the_record_counts_the_pairs_the_protocol_gave_not_what_a_ranker_left():
    from rankbench.rankers.ranksvm.linear import RankSVM

    class SignWriter(RankSVM):  # a ranker that rewrites sign in place
        def fit(self, X, pairs, sign):
            super().fit(X, pairs, sign)
            sign[:] = 1
            return self

    d = datasets.build("synthetic_attributes", {}).load()
    p = Comparison(n_train_pairs=300)
    split = TrialSplit.drawn(p.split(d, np.random.default_rng(0)))
    extra = lambda ranker: p.evaluate(ranker, d.arrays["feat"], d, split, Meter(measure_memory=False)).extra  # noqa: E731
    honest = extra(lambda: RankSVM(C=1.0))["n_similar_pairs"]
    assert extra(lambda: SignWriter(C=1.0))["n_similar_pairs"] == honest and any(honest.values())


def test_an_attribute_flat_over_the_categories_with_images_is_refused():
    # the strengths file told the categories apart only through one without images: before, every
    # job failed in RankSVM.fit ('at least one ordered pair') and the data was never named
    d = datasets.build("synthetic_attributes", {}).load()
    cats = sorted(set(d.column("category")))
    strength = d.info["strength"].copy()
    strength.loc[cats, "attr0"] = 3.0
    strength.loc["no images"] = 0.0
    d.info = {**d.info, "strength": strength}
    with pytest.raises(DataError, match=r"the images all have one strength of attribute 'attr0' \(3\)"):
        Comparison(n_train_per_category=3).check_dataset(d)

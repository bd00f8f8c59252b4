"""The ordinal protocol: stratified seeded splits, checks, MAE."""


import numpy as np
import pytest

from rankbench.datasets.synthetic_ordinal import SyntheticOrdinal
from rankbench.errors import ConfigError, DataError
from rankbench.protocols.ordinal import Ordinal
from rankbench.rankers.base import MetricLearner
from rankbench.rankers.baselines.template import Euclidean
from rankbench.rankers.metric_learning.cmds_dml import CMDSDML
from rankbench.records import TrialSplit
from rankbench.utils.meter import Meter


def test_ordinal_split_is_stratified_and_seeded():
    ds = SyntheticOrdinal(n_labels=4, n_per_label=12).load()
    p = Ordinal(n_per_label=5)
    p.check_dataset(ds)
    s1 = p.split(ds, np.random.default_rng(3))
    s2 = p.split(ds, np.random.default_rng(3))
    assert s1 == s2
    y = ds.column("label")
    assert np.bincount(y[s1["train"]].astype(int)).tolist() == [5] * 4
    assert sorted(s1["train"] + s1["test"]) == list(range(len(ds)))


def test_ordinal_checks():
    ds = SyntheticOrdinal(n_labels=3, n_per_label=6).load()
    with pytest.raises(ConfigError, match="n_per_label"):
        Ordinal(n_per_label=6).check_dataset(ds)
    with pytest.raises(DataError, match="'grade'"):
        Ordinal(label_column="grade").check_dataset(ds)


def test_a_label_column_of_text_is_one_line_and_its_empty_cells_unlabelled():
    # a label_column other than 'label' reached float() unchecked: a traceback
    ds = SyntheticOrdinal(n_labels=3, n_per_label=6).load()
    ages = ds.items["label"].astype(int).astype(str).to_numpy(dtype=object)
    ages[[2, 9]] = ""
    ds.items["age"] = ages
    Ordinal(n_per_label=3, label_column="age").check_dataset(ds)
    assert np.isnan(Ordinal(label_column="age")._labels(ds)[[2, 9]]).all()
    ages[4] = "young"
    ds.items["age"] = ages
    with pytest.raises(DataError, match=r"column 'age', row 5: expected a finite number \(empty: unlabelled\), got 'young'"):
        Ordinal(n_per_label=3, label_column="age").check_dataset(ds)


def test_a_rankers_k_beyond_the_training_images_is_refused():
    # every test item got the mean of all training labels: MAE 0.5, exit 0
    from rankbench.errors import InputError

    ds = SyntheticOrdinal(n_labels=2, n_per_label=12).load()
    p = Ordinal(n_per_label=3, k="K")
    split = TrialSplit.drawn(p.split(ds, np.random.default_rng(0)))
    with pytest.raises(InputError, match="k: 'K' is the ranker's K = 10, more than the 6 training images"):
        p.evaluate(lambda: CMDSDML(K=10, max_iter=5), ds.arrays["feat"], ds, split, Meter())


def test_ordinal_evaluate_scores_mae():
    ds = SyntheticOrdinal(n_labels=4, n_per_label=40).load()
    X = ds.arrays["feat"]
    p = Ordinal(n_per_label=10, k=5)
    res_e, res_c = [], []
    for t in range(3):
        split = p.split(ds, np.random.default_rng(t))
        meter = Meter(measure_memory=False)
        res_e.append(p.evaluate(Euclidean, X, ds, TrialSplit.drawn(split), meter).metrics["mae"])
        res_c.append(p.evaluate(lambda: CMDSDML(gamma=0.5, max_iter=300), X, ds, TrialSplit.drawn(split),
                                Meter()).metrics["mae"])
    assert 0 <= np.mean(res_c) < np.mean(res_e)


def test_ordinal_vote_with_the_rankers_K_and_unlabelled_items():
    ds = SyntheticOrdinal(n_labels=3, n_per_label=20).load()
    y = ds.items["label"].to_numpy(float)
    ds.items.loc[[0, 25, 59], "label"] = np.nan  # unlabelled items: neither trained nor tested
    p = Ordinal(n_per_label=5, k="K", predict="vote")
    p.check_dataset(ds)
    split = p.split(ds, np.random.default_rng(0))
    assert not {0, 25, 59} & set(split["train"] + split["test"])
    assert len(split["train"]) + len(split["test"]) == 57
    X = ds.arrays["feat"]
    res = p.evaluate(lambda: CMDSDML(K=3, gamma=0.5, max_iter=100), X, ds, TrialSplit.drawn(split), Meter())
    # the same prediction by hand: majority of the K = 3 nearest in the learned space
    from rankbench.metrics import knn_vote, mae
    tr, te = np.array(split["train"]), np.array(split["test"])
    m = CMDSDML(K=3, gamma=0.5, max_iter=100).fit(X[tr], y[tr])
    expect = mae(y[te], knn_vote(m.transform(X[tr]), y[tr], m.transform(X[te]), 3))
    assert res.metrics["mae"] == pytest.approx(expect)
    with pytest.raises(ConfigError, match="has no parameter K"):
        p.check_ranker(Euclidean(), "rankers.E")

    class NoParams(MetricLearner):  # a user's ranker that is no scikit-learn estimator (no get_params)
        fit = transform = None

    with pytest.raises(ConfigError, match="rankers.N: protocol.k: .*'NoParams' has no parameter K"):
        p.check_ranker(NoParams(), "rankers.N")


@pytest.mark.parametrize("k, refused", [(1, False), (6, False), (7, True), (50, True)])
def test_ordinal_refuses_more_neighbours_than_training_images(k, refused):
    # 3 labels x n_per_label 2 = 6 training images; k = 7 would average every training label
    ds = SyntheticOrdinal(n_labels=3, n_per_label=6).load()
    p = Ordinal(n_per_label=2, k=k)
    if not refused:
        p.check_dataset(ds)
        split = p.split(ds, np.random.default_rng(0))
        assert len(split["train"]) == 6
        return
    with pytest.raises(ConfigError, match=rf"protocol.k: expected at most the 6 training images .*got {k}"):
        p.check_dataset(ds)

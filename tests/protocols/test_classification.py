"""The classification protocol with pairwise constraints."""


import numpy as np
import pytest
from protocol_helpers import Recorder, evaluate_with
from toydata import labelled_blobs

from rankbench.errors import ConfigError, RankerFault
from rankbench.protocols.classification import draw_pairs
from rankbench.registry import protocols


class NoConstraints(Recorder):
    def fit(self, X, y):
        return super().fit(X, y)


@pytest.mark.parametrize("kind", ["any", "same", "different"])
def test_draw_pairs_distinct_and_labelled_from_ground_truth(kind):
    labels = np.repeat([3, 7, 9], 10)
    rows = np.arange(0, 30, 2)
    P = draw_pairs(labels, rows, 12, kind, np.random.default_rng(0))
    assert P.shape == (12, 3)
    assert np.isin(P[:, :2], rows).all() and (P[:, 0] != P[:, 1]).all()
    assert len({tuple(sorted(p)) for p in P[:, :2].tolist()}) == 12
    assert (P[:, 2] == (labels[P[:, 0]] == labels[P[:, 1]])).all()
    if kind != "any":
        assert (P[:, 2] == (kind == "same")).all()
    again = draw_pairs(labels, rows, 12, kind, np.random.default_rng(0))
    assert (P == again).all()


def test_draw_pairs_refuses_more_than_exist():
    labels = np.array([0, 0, 1, 1])
    with pytest.raises(ConfigError, match="n_constraints"):
        draw_pairs(labels, np.arange(4), 3, "same", np.random.default_rng(0))


def test_split_per_class_transductive():
    X, ds = labelled_blobs()
    p = protocols.build("classification", {"n_train_per_class": 4, "n_constraints": 6})
    p.check_dataset(ds)
    sp = p.split(ds, np.random.default_rng(1))
    y = ds.items.label.to_numpy()
    assert np.unique(y[sp["train"]], return_counts=True)[1].tolist() == [4, 4, 4]
    assert sorted(sp["train"] + sp["test"]) == list(range(90))
    C = np.array(sp["constraints"])
    assert len(C) == 6 and not np.isin(C[:, :2], sp["train"]).any()
    assert sp == p.split(ds, np.random.default_rng(1))


def test_split_by_dataset_pool_and_test():
    X, ds = labelled_blobs(train_col=True)
    p = protocols.build("classification", {"split_by": "dataset", "train_fraction": 0.5, "n_constraints": 5})
    p.check_dataset(ds)
    sp = p.split(ds, np.random.default_rng(0))
    tr = ds.items.train.to_numpy()
    assert tr[sp["train"]].all() and not tr[sp["test"]].any()
    assert sorted(sp["test"]) == np.flatnonzero(~tr).tolist()
    C = np.array(sp["constraints"])
    assert tr[C[:, :2]].all() and not np.isin(C[:, :2], sp["train"]).any()


@pytest.mark.parametrize("train, message", [
    (False, "column 'train': no row is true; expected training rows"),
    (True, "column 'train': every row is true; expected training rows"),
    ("one class", "fewer than two classes among its training rows"),
])
def test_a_shipped_split_a_ranker_cannot_learn_from_is_refused(train, message):
    # validate's checks, so that run never reaches a ranker that gets no rows or one class
    from rankbench.errors import DataError

    X, ds = labelled_blobs(train_col=True)
    y = ds.items["label"].to_numpy()
    ds.items["train"] = (y == y[0]) if train == "one class" else train
    with pytest.raises(DataError, match=message):
        protocols.build("classification", {"split_by": "dataset"}).check_dataset(ds)


def test_constraint_rows_and_positions_reach_the_ranker():
    X, ds = labelled_blobs()
    p = protocols.build("classification", {"n_train_per_class": 3, "n_constraints": 5})
    rec = Recorder()
    sp, res = evaluate_with(rec, p, X, ds)
    n_lab = len(sp["train"])
    assert (rec.X[:n_lab] == X[sp["train"]]).all()
    assert (rec.y[n_lab:] == -1).all() and set(rec.y[:n_lab]) == {0, 1, 2}  # codes, -1 unlabelled
    C = np.array(sp["constraints"])
    assert (rec.X[rec.constraints[:, 0]] == X[C[:, 0]]).all()
    assert (rec.X[rec.constraints[:, 1]] == X[C[:, 1]]).all()
    assert (rec.constraints[:, 2] == C[:, 2]).all()
    assert res.extra["constraints_used"]
    y = ds.items.label.to_numpy()
    assert res.metrics["error_rate"] == pytest.approx(np.mean(y[sp["test"]] != y.min()))


def test_classifiers_without_constraints_get_labelled_rows_only():
    X, ds = labelled_blobs()
    rec = NoConstraints()
    sp, res = evaluate_with(rec, protocols.build("classification", {"n_train_per_class": 3, "n_constraints": 5}),
                            X, ds)
    assert len(rec.X) == len(sp["train"]) and rec.constraints is None and not res.extra["constraints_used"]



class KeywordsOnly(Recorder):
    def fit(self, X, y, **params):   # takes any keyword and reads none
        return super().fit(X, y)


def test_a_fit_taking_any_keyword_gets_labelled_rows_only():
    """Before: fit(X, y, **params) was sent the constraints, with their unlabelled rows in X at y = -1,
    which such a fit takes for a class; scikit-learn's Pipeline failed every job on the keyword."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from rankbench.engine.estimator import Declared

    X, ds = labelled_blobs()
    p = protocols.build("classification", {"n_train_per_class": 3, "n_constraints": 5})
    rec = KeywordsOnly()
    sp, res = evaluate_with(rec, p, X, ds)
    assert len(rec.X) == len(sp["train"]) and (rec.y >= 0).all() and not res.extra["constraints_used"]
    sp, res = evaluate_with(Declared(make_pipeline(StandardScaler(), LogisticRegression()), "classifier"), p, X, ds)
    y = ds.items.label.to_numpy()
    model = make_pipeline(StandardScaler(), LogisticRegression()).fit(X[sp["train"]], y[sp["train"]])
    assert res.metrics["error_rate"] == pytest.approx(np.mean(model.predict(X[sp["test"]]) != y[sp["test"]]))

def test_bad_parameters_are_config_errors():
    X, ds = labelled_blobs()
    for params, match in [({}, "n_train_per_class or train_fraction"),
                          ({"n_train_per_class": 31}, "only 30"),
                          ({"n_train_per_class": 2, "train_fraction": 0.5}, "not both"),
                          ({"n_train_per_class": 2, "constraint_type": "maybe"}, "constraint_type")]:
        with pytest.raises(ConfigError, match=match):
            protocols.build("classification", params).check_dataset(ds)
    ds.items["label"] = ds.items["label"].map(lambda c: f"class {c}").astype(object)  # text classes: no .item()
    with pytest.raises(ConfigError, match=r"class 'class \d+' has only 30"):
        protocols.build("classification", {"n_train_per_class": 31}).check_dataset(ds)


def test_an_item_without_a_class_is_refused():
    # an empty label cell reads as NaN: np.unique would make each one a class of its own
    from rankbench.errors import DataError

    X, ds = labelled_blobs()
    ds.items["label"] = ds.items["label"].astype(float)
    ds.items.loc[[3, 7], "label"] = np.nan
    with pytest.raises(DataError, match=r"column 'label', row 4: expected a class, got none \(2 such row"):
        protocols.build("classification", {"n_train_per_class": 2}).check_dataset(ds)


@pytest.mark.parametrize("pred, shown", [(0.5, "0.5"), (-1, "-1"), (7, "7")])
def test_a_prediction_that_is_no_class_code_names_the_ranker_fault(pred, shown):
    class Coded(NoConstraints):
        def predict(self, X):
            return np.full(len(X), pred)

    X, ds = labelled_blobs()
    with pytest.raises(RankerFault, match=rf"predict returned {shown} .*expected the class codes fit's y uses, 0\.\.2"):
        evaluate_with(Coded(), protocols.build("classification", {"n_train_per_class": 3}), X, ds)

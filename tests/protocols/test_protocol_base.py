"""What every protocol shares (protocols/base.py) on its own: the check of a ranker's output before a
metric sees it, the ranker's capability check, and rows of a matrix or of views."""

import numpy as np
import pandas as pd
import pytest

from rankbench.errors import ConfigError, RankerFault
from rankbench.protocols.base import Protocol, TrialResult, checked_output, take
from rankbench.rankers.base import ItemScorer


class Scores(ItemScorer):
    registry_name = "scores"

    def fit(self, X, y):
        return self

    def decision_function(self, X):
        return np.zeros(len(X))


class Nothing:
    """Not a ranker of any capability."""


class Task(Protocol):
    registry_name = "task"
    capability = ("item_scorer", "pair_scorer")

    def split(self, dataset, rng):
        return {}

    def evaluate(self, make_ranker, X, dataset, split, meter):
        return TrialResult(metrics={})


def fault(values, shape, what="R.decision_function") -> str:
    with pytest.raises(RankerFault) as info:
        checked_output(values, shape, what)
    msg = str(info.value)
    assert "\n" not in msg
    return msg


def test_checked_output_passes_numbers_of_the_right_shape_as_floats():
    out = checked_output([1, 2, 3], (3,), "R.decision_function")
    assert out.dtype == float and out.tolist() == [1.0, 2.0, 3.0]
    assert checked_output(np.ones((3, 1), np.float32), (3,), "R").shape == (3,)      # a column counts as (n,)
    assert checked_output(np.zeros((2, 5)), (2, None), "R").shape == (2, 5)
    assert checked_output(np.array([True, False]), (2,), "R").tolist() == [1.0, 0.0]
    # pandas objects in position order and masked arrays without a mask are numbers like any other
    assert checked_output(pd.Series([3.0, 1.0]), (2,), "R").tolist() == [3.0, 1.0]
    assert checked_output(pd.DataFrame(np.eye(2)), (2, 2), "R").tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert checked_output(np.ma.masked_array([1.0, 2.0]), (2,), "R").tolist() == [1.0, 2.0]


@pytest.mark.parametrize("values, want", [
    (pd.Series([3.0, 1.0], index=[1, 0]), "returned a pandas Series with its own index, expected a numpy array"),
    (pd.DataFrame(np.eye(2), columns=["b", "a"]), "returned a pandas DataFrame with its own columns"),
    (np.ma.masked_array(np.eye(2), mask=np.eye(2, dtype=bool)), "returned a masked array with 2 masked value(s)"),
])
def test_an_output_whose_labels_would_be_lost_is_refused(values, want):
    # np.asarray would score a shuffled Series by position and a masked value as its filler
    assert want in fault(values, (2,) if values.ndim == 1 else (2, 2))


def test_a_transforms_named_feature_columns_are_kept_its_rows_are_not():
    """scikit-learn's set_output(transform="pandas") names a transform's columns (features, not
    items): fine; its rows still must be the items in order."""
    from sklearn.preprocessing import StandardScaler

    X = np.arange(12.0).reshape(4, 3)
    z = StandardScaler().set_output(transform="pandas").fit_transform(X)
    np.testing.assert_array_equal(checked_output(z, (4, None), "transform", features=True), z.to_numpy())
    with pytest.raises(RankerFault, match="with its own index"):
        checked_output(z.iloc[::-1], (4, None), "transform", features=True)


@pytest.mark.parametrize("values, shape, want", [
    (None, (3,), "R.decision_function returned None, expected an array of shape (3,)"),
    ([[1, 2], [3]], (2, None), "R.decision_function returned list that is no array"),
    (np.array(["a", "b"]), (2,), "R.decision_function returned ndarray of <U1 values, expected numbers"),
    (np.array([1 + 0j, 2]), (2,), "R.decision_function returned ndarray of complex128 values, expected numbers"),
    (np.zeros(4), (3,), "R.decision_function returned shape (4,), expected (3,)"),
    (np.zeros((3, 2)), (3,), "R.decision_function returned shape (3, 2), expected (3,)"),
    (np.zeros((2, 4)), (2, 3), "R.decision_function returned shape (2, 4), expected (2, 3)"),
    (np.zeros(6), (2, None), "R.decision_function returned shape (6,), expected (2, any > 0)"),
    # before: scored, every distance 0 (a k-NN of the first training rows, an all-tied CMC)
    (np.zeros((2, 0)), (2, None), "R.decision_function returned shape (2, 0), expected (2, any > 0)"),
    (np.array([0.0, np.nan, np.inf, 1.0]), (4,), "R.decision_function returned 2 non-finite value(s) (NaN or "
                                                "infinite) of 4"),
])
def test_checked_output_refusals(values, shape, want):
    assert fault(values, shape).startswith(want)


def test_checked_output_counts_non_finite_values_as_numpy_does():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(5, 6))
    A[rng.random(A.shape) < 0.25] = np.nan
    A[rng.random(A.shape) < 0.1] = -np.inf
    bad = int((~np.isfinite(A)).sum())
    assert fault(A, (5, 6)) == f"R.decision_function returned {bad} non-finite value(s) (NaN or infinite) of 30"


def test_check_ranker_names_what_is_needed_and_offered():
    Task().check_ranker(Scores(), "methods[0]")
    with pytest.raises(ConfigError) as info:
        Task().check_ranker(Nothing(), "methods[1]")
    assert str(info.value) == ("methods[1]: ranker 'Nothing' cannot run under protocol 'task' (it needs one of: "
                               "item_scorer, pair_scorer; the ranker offers: nothing)")

    class Strict(Task):
        capability = ("classifier",)

    with pytest.raises(ConfigError, match="the ranker offers: item_scorer\\)$"):
        Strict().check_ranker(Scores(), "methods[0]")


def test_defaults_of_a_protocol():
    t = Task()
    assert t.fit_sizes(None, (7, "the feature length")) == {"n_features": (7, "the feature length")}
    assert t.fixed_trials(None) is None
    assert t.check_dataset(None) is None and t.check_features(["a"]) is None
    assert TrialResult(metrics={"x": 1.0}).curves == {}


def test_take_rows_of_a_matrix_or_of_every_view():
    X = np.arange(12).reshape(4, 3)
    np.testing.assert_array_equal(take(X, [2, 0]), X[[2, 0]])
    views = {"a": X, "b": -X[:, :1]}
    got = take(views, np.array([3, 1]))
    assert set(got) == {"a", "b"}
    np.testing.assert_array_equal(got["a"], X[[3, 1]])
    np.testing.assert_array_equal(got["b"], [[-9], [-3]])


def test_draw_per_class_takes_k_distinct_rows_of_each_class_class_by_class():
    from rankbench.protocols.base import draw_per_class

    labels = np.array(["b", "a", "c", "a", "b", "a", "c", "b", "a", "x"])
    rows = np.flatnonzero(labels != "x")
    seen = set()
    for seed in range(30):
        got = draw_per_class(np.random.default_rng(seed), labels, rows, 2)
        assert len(set(got)) == 6 and set(got) <= set(rows)
        assert labels[got].tolist() == ["a", "a", "b", "b", "c", "c"]
        seen.add(tuple(got))
    assert len(seen) > 5


def test_draw_per_class_draws_the_same_rows_whether_classes_are_numbers_or_their_text():
    """A table of exported features gives class 10 back as '10': before, '10' sorted before '9'
    and the same seed drew other rows (the re-id draw already read labels by number)."""
    from rankbench.protocols.base import by_number, draw_per_class

    y = np.repeat([9, 10, 11, 100], 5)
    rows = np.arange(len(y))
    for seed in range(5):
        as_int = draw_per_class(np.random.default_rng(seed), y, rows, 2)
        as_text = draw_per_class(np.random.default_rng(seed), y.astype(str), rows, 2)
        as_obj = draw_per_class(np.random.default_rng(seed), np.array([str(v) for v in y], dtype=object), rows, 2)
        assert as_int.tolist() == as_text.tolist() == as_obj.tolist()
    padded = np.array(["009", "010", "100"])
    assert by_number(padded).tolist() == ["009", "010", "100"]
    assert by_number(np.array(["10", "9", "a"])).tolist() == ["10", "9", "a"]   # not all numbers: as given
    assert by_number(np.array(["10", "9", "-1"])).tolist() == ["-1", "9", "10"]
    assert by_number(np.array(["10.0", "9.0"])).tolist() == ["9.0", "10.0"]   # whole numbers written as floats
    assert by_number(np.array(["10.5", "9.0"])).tolist() == ["10.5", "9.0"]
    # the classes' codes (what a classifier is fitted on) follow the same order
    from rankbench.protocols.base import label_codes

    y = np.array([10, 9, 100, 9, 10])
    assert label_codes(y).tolist() == label_codes(y.astype(str)).tolist() == [1, 0, 2, 0, 1]
    assert label_codes(np.array(["b", "a", "b"])).tolist() == [1, 0, 1]

"""The rankers' input checks (rankers/_validation.py) on their own: what each accepts, what it
sets, and the one-line InputError of each refusal, against hand-worked cases."""

import numpy as np
import pytest
import scipy.sparse as sp

from rankbench.errors import InputError
from rankbench.rankers._validation import (check_constraints, check_pairs, checked_input, checked_matrix,
                                           checked_rows)
from rankbench.rankers.base import LazyColumns


class Plain:
    """A stand-in ranker: checked_input reads only its class name and attributes."""


class Views:
    accepts_views = True


def refusal(call, *args, **kwargs) -> str:
    with pytest.raises(InputError) as info:
        call(*args, **kwargs)
    msg = str(info.value)
    assert "\n" not in msg
    return msg


def test_checked_matrix_passes_a_finite_float_matrix_through_without_copy():
    X = np.arange(6, dtype=np.float64).reshape(3, 2)
    assert checked_matrix(X, "R.fit") is X
    ints = checked_matrix([[1, 2], [3, 4]], "R.fit")
    assert ints.dtype == np.float64 and ints.tolist() == [[1.0, 2.0], [3.0, 4.0]]


@pytest.mark.parametrize("X, words", [
    (np.array([[1.0, np.nan], [np.inf, 2.0], [0.0, 0.0]]),
     "has 2 non-finite values (NaN or infinite; 1 NaN), the first in row 0"),
    (np.array([[0.0, 1.0], [2.0, -np.inf]]), "has 1 non-finite values (NaN or infinite; 0 NaN), the first in row 1"),
    (np.ones(4), "has shape (4,); expected a 2-D array"),
    (np.ones((2, 2, 2)), "has shape (2, 2, 2); expected a 2-D array"),
    (np.zeros((0, 3)), "is empty: 0 sample(s)"),
    (np.zeros((3, 0)), "is empty: 0 feature(s)"),
    (np.array([[1 + 1j, 2]]), "holds complex numbers"),
    (np.array([["a", "b"]]), "is not numeric"),
    (sp.csr_matrix(np.eye(3)), "is a sparse matrix"),
])
def test_checked_matrix_names_who_the_argument_and_the_problem(X, words):
    msg = refusal(checked_matrix, X, "Ranker.fit", "X")
    assert msg.startswith("Ranker.fit: X ")
    assert words in msg


def test_checked_matrix_counts_non_finite_values_as_numpy_does():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(7, 5))
    bad = rng.random(X.shape) < 0.3
    X[bad] = np.where(rng.random(bad.sum()) < 0.5, np.nan, np.inf)
    first_row = int(np.nonzero(bad.any(axis=1))[0][0])
    msg = refusal(checked_matrix, X, "R.fit")
    assert f"has {int(bad.sum())} non-finite values" in msg
    assert f"; {int(np.isnan(X).sum())} NaN)" in msg
    assert f"the first in row {first_row};" in msg


def test_checked_matrix_refuses_another_width():
    msg = refusal(checked_matrix, np.ones((2, 3)), "Ranker.similarity", "Q", n_features=4, owner="Ranker")
    assert msg == ("Ranker.similarity: Q has 3 features, but Ranker is expecting 4 features as input "
                   "(the width it was fitted on)")


def test_checked_input_sets_the_width_at_fit_and_compares_with_it_after():
    r = Plain()
    checked_input(r, np.ones((3, 4)), "fit")
    assert r.n_features_in_ == 4 and r.views_in_ is None
    checked_input(r, np.ones((1, 4)), "decision_function")
    msg = refusal(checked_input, r, np.ones((2, 5)), "decision_function")
    assert msg.startswith("Plain.decision_function: X has 5 features, but Plain is expecting 4")


def test_checked_input_min_rows_and_one_label_per_row():
    r = Plain()
    msg = refusal(checked_input, r, np.ones((1, 2)), "fit", min_rows=2)
    assert "has 1 sample(s)" in msg and "a minimum of 2 is required" in msg
    msg = refusal(checked_input, r, np.ones((3, 2)), "fit", y=[0, 1])
    assert msg == "Plain.fit: y has 2 entries for 3 rows of X; expected one per row"
    msg = refusal(checked_input, r, np.ones((3, 2)), "fit", cams=[0, 1, 1, 0])
    assert msg.startswith("Plain.fit: cams has 4 entries for 3 rows")
    checked_input(r, np.ones((3, 2)), "fit", y=[0, 1, 1], cams=np.array([[0], [1], [0]]))


def test_views_only_for_rankers_that_take_them():
    msg = refusal(checked_input, Plain(), {"a": np.ones((2, 2))}, "fit")
    assert "is a dict of views (a); expected one 2-D array" in msg


def test_views_widths_are_recorded_and_checked_view_by_view():
    r = Views()
    out = checked_input(r, {"a": np.ones((3, 2)), "b": np.zeros((3, 5))}, "fit")
    assert set(out) == {"a", "b"}
    assert r.views_in_ == {"a": 2, "b": 5} and r.n_features_in_ == 7
    assert "view 'b' missing from X" in refusal(checked_input, r, {"a": np.ones((1, 2))}, "decision_function")
    msg = refusal(checked_input, r, {"a": np.ones((1, 2)), "b": np.ones((1, 4))}, "decision_function")
    assert "X['b'] has 4 features, but Views is expecting 5" in msg
    assert "is one matrix, but Views was fitted on the views a, b" in refusal(
        checked_input, r, np.ones((1, 7)), "decision_function")
    assert "different numbers of rows (a: 3, b: 2)" in refusal(
        checked_input, Views(), {"a": np.ones((3, 2)), "b": np.ones((2, 2))}, "fit")
    assert "empty dict of views" in refusal(checked_input, Views(), {}, "fit")
    fitted_on_matrix = Views()
    checked_input(fitted_on_matrix, np.ones((2, 3)), "fit")
    assert "fitted on one matrix" in refusal(checked_input, fitted_on_matrix, {"a": np.ones((1, 3))},
                                             "decision_function")


def test_a_lazy_matrix_is_checked_for_its_shape_only_when_allowed():
    calls = []
    lazy = LazyColumns(lambda j, rows: calls.append(j) or np.zeros(len(rows)), (4, 3))
    r = Plain()
    r.n_features_in_ = 3
    assert checked_input(r, lazy, "decision_function", lazy_ok=True) is lazy
    assert calls == [] and lazy.n_evals == 0
    r.n_features_in_ = 2
    assert "has 3 features, but Plain is expecting 2" in refusal(
        checked_input, r, lazy, "decision_function", lazy_ok=True)
    r.n_features_in_ = 3
    dense = checked_input(r, lazy, "decision_function")  # not lazy_ok: evaluated to a matrix
    assert isinstance(dense, np.ndarray) and dense.shape == (4, 3) and lazy.n_evals == 12


def test_checked_rows_refuses_a_block_with_nan():
    block = np.ones((3, 2))
    assert checked_rows(block, "R.similarity", "G") is block
    block[2, 1] = np.nan
    assert refusal(checked_rows, block, "R.similarity", "G").startswith(
        "R.similarity: G has 1 non-finite values (NaN or infinite; 1 NaN), the first in row 2")


def test_check_pairs_accepts_and_types_valid_pairs():
    pairs, sign = check_pairs([[0, 1], [2, 1]], [1, 0], n_items=3)
    assert pairs.dtype == np.int64 and pairs.shape == (2, 2) and sign.tolist() == [1, 0]


@pytest.mark.parametrize("pairs, sign, words", [
    ([[0, 1], [1, 2]], [1], "pairs (2) and sign (1) differ in length"),
    ([[0, 3]], [1], "pair indices must lie in [0, 3)"),
    ([[-1, 0]], [1], "pair indices must lie in [0, 3)"),
    ([[0, 1]], [2], "sign must be +1, -1 (ordered) or 0 (similar)"),
    ([[0, 1], [1, 2]], [0, 0], "at least one ordered pair"),
    ([["a", "b"]], [1], "pairs must be an (p, 2) integer array"),
    ([[0, 1, 2]], [1], "pairs must be an (p, 2) integer array"),
    ([[0.5, 1.7]], [1], "pairs must be an (p, 2) integer array"),       # never truncated to (0, 1)
    ([[0, 1]], [0.9], "pairs must be an (p, 2) integer array"),         # never truncated to 0 (similar)
    ([[0, 1]], [np.nan], "pairs must be an (p, 2) integer array"),
])
def test_check_pairs_refusals(pairs, sign, words):
    msg = refusal(check_pairs, pairs, sign, 3, who="R.fit")
    assert msg.startswith("R.fit: ") and words in msg


def test_check_constraints_accepts_integral_floats_and_nothing():
    assert check_constraints(None, 3).shape == (0, 3)
    assert check_constraints([], 3).shape == (0, 3)
    C = check_constraints(np.array([[0.0, 2.0, 1.0]]), 3)
    assert C.dtype == np.intp and C.tolist() == [[0, 2, 1]]
    pairs, sign = check_pairs(np.array([[0.0, 2.0]]), np.array([-1.0]), 3)
    assert pairs.tolist() == [[0, 2]] and sign.tolist() == [-1]


@pytest.mark.parametrize("C, words", [
    ([[0, 1]], "must be an (c, 3) array"),
    ([[0.5, 1, 1]], "must hold integers"),
    ([[0, 3, 1]], "must lie in 0..2"),
    ([[0, 1, 2]], "must be 1 (same object) or 0 (different)"),
    ([[0, np.nan, 1]], "must hold integers"),
    ([["0", "1", "1"]], "must hold integers"),
])
def test_check_constraints_refusals(C, words):
    assert words in refusal(check_constraints, C, 3)

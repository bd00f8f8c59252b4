"""rankbench.params: a component's declared parameter constraints, checked in one place. Checked on
toy classes whose constraints are written out by hand, and on a scikit-learn preprocessor."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest
from pydantic import Field
from sklearn.preprocessing import MinMaxScaler

from rankbench.errors import ConfigError, ParameterError
from rankbench.params import (AtMost, Names, PositiveFloatGrid, PositiveInt, Seed, check_data_bounds, check_params,
                              data_bounds, describe, validate_estimator)


class Toy:
    def __init__(self, n: PositiveInt, kind: Literal["a", "b"] = "a", c: PositiveFloatGrid = 1.0,
                 s: Annotated[PositiveInt, AtMost("n_features")] = 2, random_state: Seed = None,
                 flag: bool = False, spaces: tuple[Literal["rgb", "hsv"], ...] = ("rgb",),
                 names: Names | None = None, one_or_many: str | Names | None = None):
        self.n, self.kind, self.c, self.s, self.names = n, kind, c, s, names
        self.one_or_many = one_or_many
        self.random_state, self.flag, self.spaces = random_state, flag, spaces


class NoParams:
    pass


class Needs:
    requires = {"surely_not_a_module_xyz": "pip install it"}

    def __init__(self, k: int = 1):
        self.k = k


def _line(cls, params) -> str:
    with pytest.raises(ParameterError) as err:
        check_params(cls, params, "rankers.toy")
    assert isinstance(err.value, ConfigError) and isinstance(err.value, ValueError)
    assert "\n" not in str(err.value)
    return str(err.value)


def test_good_values_come_back_as_the_constructor_takes_them():
    out = check_params(Toy, {"n": 3, "c": [0.5, 2.0], "spaces": ["hsv", "rgb"]}, "rankers.toy")
    assert out == {"n": 3, "c": (0.5, 2.0), "spaces": ("hsv", "rgb")}  # config lists become tuples
    assert check_params(NoParams, {}, "x") == {}


@pytest.mark.parametrize("params, line", [
    ({"n": 0}, "rankers.toy.n: expected an integer >= 1, got 0"),
    ({"n": "3"}, "rankers.toy.n: expected an integer >= 1, got '3'"),          # no string coercion
    ({"n": True}, "rankers.toy.n: expected an integer >= 1, got True"),        # a YAML true is no 1
    ({"n": 1, "kind": "c"}, "rankers.toy.kind: expected one of 'a', 'b', got 'c'"),
    ({"n": 1, "c": float("inf")}, "rankers.toy.c: expected a finite number"),
    ({"n": 1, "c": []}, "rankers.toy.c: expected"),
    ({"n": 1, "random_state": -1}, "rankers.toy.random_state: expected an integer >= 0 or null, got -1"),
    ({"n": 1, "spaces": ["lab"]}, "rankers.toy.spaces: expected a list (each one of 'rgb', 'hsv'), got ['lab']"),
    # a concept named twice weighed twice in MAP
    ({"n": 1, "names": ["car", "sky", "car"]}, "rankers.toy.names: expected each name once ('car' is given twice), "
                                               "got ['car', 'sky', 'car']"),
    # in a union the reason was lost: 'expected a string or a list ... or null'
    ({"n": 1, "one_or_many": ["a", "a"]}, "rankers.toy.one_or_many: expected each name once ('a' is given twice)"),
    # a label written as a number (junk: [-1], probe_cam: 1): say how to write it
    ({"n": 1, "names": [-1]}, "rankers.toy.names: expected a list (each a string) with at least 1 item(s) or null, "
                              "got [-1] (a label that is a number is text in quotes: '-1')"),
    ({"n": 1, "m": 2}, "rankers.toy: unknown parameter 'm'; allowed: n, kind, c, s, random_state, flag, spaces, names, "
               "one_or_many"),
    ({}, "rankers.toy: missing required parameter 'n'"),
])
def test_a_bad_value_is_one_line_naming_the_parameter(params, line):
    assert _line(Toy, params).startswith(line)


def test_a_component_without_parameters_and_a_missing_package_say_so():
    assert "(none: this component takes no parameters)" in _line(NoParams, {"k": 1})
    assert _line(Needs, {}) == ("rankers.toy: expected the optional package 'surely_not_a_module_xyz' to be "
                                "installed (pip install it), got none")


def test_a_scikit_learn_class_is_checked_by_its_own_constraints():
    assert check_params(MinMaxScaler, {"feature_range": [0, 2]}, "pre")["feature_range"] == (0, 2)
    with pytest.raises(ParameterError, match=r"^pre\.copy: expected .*got 'yes'$"):
        check_params(MinMaxScaler, {"copy": "yes"}, "pre")


def test_describe_reads_annotations_as_a_reader_would():
    assert describe(Annotated[int, Field(ge=1)] | None) == "an integer >= 1 or null"
    assert describe(Annotated[float, Field(gt=0, lt=1)]) == "a number > 0 and < 1"
    assert describe(tuple[int, str]) == "a list of 2 items (an integer, a string)"
    assert describe(dict[str, float]) == "a mapping of a string to a number"
    assert describe(Annotated[PositiveInt, AtMost("n_samples")]) == "an integer >= 1 and <= the training rows"


def test_data_bounds_are_found_and_checked_against_the_sizes():
    assert data_bounds(Toy) == {"s": "n_features"}
    est = Toy(n=1, s=5)
    check_data_bounds(est, {"n_features": (5, "5 columns")}, "rankers.toy")   # at the bound: fine
    check_data_bounds(est, {"n_features": None}, "rankers.toy")                # unknown yet: left to fit
    with pytest.raises(ParameterError) as err:
        check_data_bounds(est, {"n_features": (4, "4 columns")}, "rankers.toy")
    assert str(err.value) == "rankers.toy.s: expected at most the input dimension 4 (4 columns), got 5"
    with pytest.raises(ValueError, match="AtMost: expected one of n_features, n_samples"):
        AtMost("n_rows")


def test_validate_estimator_checks_an_object_built_in_python():
    validate_estimator(Toy(n=2))
    with pytest.raises(ParameterError, match=r"^Toy\.n: expected an integer >= 1, got 0$"):
        validate_estimator(Toy(n=0))

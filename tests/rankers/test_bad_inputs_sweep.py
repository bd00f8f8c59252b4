"""The generated sweep of bad inputs: every registered ranker x every way its features can be wrong.

Each case must raise rankbench's InputError (a ValueError) naming the ranker (its class) and the
method, as one line, at fit or at the scoring method that got it; never a number. The registry is
enumerated, so a ranker registered tomorrow is swept too (its capability's inputs come from
``ranker_inputs.inputs``, which fails until it knows the capability).
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

from rankbench.errors import InputError
from rankbench.rankers.base import capabilities
from rankbench.registry import rankers

from ranker_inputs import RANKERS, inputs, lazy, make


def _first_view(X, change):
    """``change`` applied to X, or to the first view of a dict of views."""
    if isinstance(X, dict):
        k = next(iter(X))
        return {**X, k: change(np.asarray(X[k]))}
    return change(np.asarray(X))


def _with(value):
    def change(A):
        A = A.astype(object if isinstance(value, str) else float)  # a copy
        A[len(A) // 2, A.shape[1] // 2] = value
        return A
    return change


#: how features go wrong: name -> (what it does to X, words the message must hold)
CORRUPT = {
    "nan": (_with(np.nan), "non-finite"),
    "inf": (_with(np.inf), "non-finite"),
    "-inf": (_with(-np.inf), "non-finite"),
    "empty": (lambda A: A[:0], "empty"),
    "complex": (lambda A: A + 1j, "complex"),
    "1-D": (lambda A: A[:, 0], "2-d"),
    "text": (_with("n/a"), "numeric"),
}
#: ways that only scoring can get wrong
AT_SCORE = {**CORRUPT, "wider": (lambda A: np.hstack([A, A[:, :1]]), "features")}


def _assert_names(exc, name, method):
    msg = str(exc.value)
    cls = type(make(name)).__name__
    assert "\n" not in msg, msg
    assert f"{cls}." in msg, f"the message does not name the ranker ({cls}): {msg}"
    assert isinstance(exc.value, ValueError)
    return msg


@pytest.mark.parametrize("case", list(CORRUPT))
@pytest.mark.parametrize("name", RANKERS)
def test_fit_refuses_bad_features(name, case):
    X, args, kwargs, _ = inputs(name)
    change, words = CORRUPT[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InputError) as exc:
            make(name).fit(_first_view(X, change), *args, **kwargs)
    msg = _assert_names(exc, name, "fit")
    assert ".fit:" in msg and words in msg.lower(), msg


@functools.lru_cache(maxsize=None)
def _fitted(name):
    X, args, kwargs, scorers = inputs(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make(name).fit(X, *args, **kwargs), X, scorers


def _score_cases():
    out = []
    for name in RANKERS:
        for method in inputs(name)[3]:
            out += [(name, method, case) for case in AT_SCORE]
    return out


@pytest.mark.parametrize("name, method, case", _score_cases())
def test_scoring_refuses_bad_features(name, method, case):
    r, X, scorers = _fitted(name)
    change, words = AT_SCORE[case]
    bad = _first_view(X, change)
    if method.endswith("(lazy)") and case in ("1-D", "text", "complex"):
        pytest.skip("base-model outputs behind LazyColumns are floats by construction")
    if method.endswith("(lazy)") and case in ("nan", "inf", "-inf"):  # a whole row: read whichever model is used
        bad = np.array(X, dtype=float)
        bad[len(bad) // 2] = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf}[case]
    with pytest.raises(InputError) as exc:
        scorers[method](r, bad)
    msg = _assert_names(exc, name, method)
    assert words in msg.lower(), msg


@pytest.mark.parametrize("name", RANKERS)
def test_every_fit_sets_n_features_in(name):
    r, X, _ = _fitted(name)
    width = sum(np.shape(v)[1] for v in X.values()) if isinstance(X, dict) else np.shape(X)[1]
    assert r.n_features_in_ == width


@pytest.mark.parametrize("name", [n for n in RANKERS if "model_booster" in capabilities(rankers.get(n))])
def test_boosters_read_lazy_outputs_only_where_they_score(name):
    """A non-finite base-model output is refused where a booster reads it, not evaluated eagerly:
    scoring a LazyColumns of the right width computes only what the model uses."""
    r, X, _ = _fitted(name)
    cols = lazy(X)
    r.decision_function(cols)
    assert cols.n_evals <= X.size
    wide = lazy(np.hstack([X, X[:, :1]]))
    with pytest.raises(InputError, match="features"):
        r.decision_function(wide)
    assert wide.n_evals == 0  # refused on its shape, nothing evaluated


@pytest.mark.parametrize("name", [n for n in RANKERS if "pairwise" in capabilities(rankers.get(n))])
@pytest.mark.parametrize("case", ["out of range", "lengths differ", "bad sign", "no ordered pair"])
def test_pairwise_rankers_refuse_bad_pairs(name, case):
    X, (pairs, sign), kwargs, _ = inputs(name)
    n = len(next(iter(X.values()))) if isinstance(X, dict) else len(X)
    pairs, sign = np.array(pairs), np.array(sign)
    if case == "out of range":
        pairs[0, 0] = n
    elif case == "lengths differ":
        sign = sign[:-1]
    elif case == "bad sign":
        sign[0] = 2
    else:
        sign[:] = 0
    with pytest.raises(InputError) as exc:
        make(name).fit(X, pairs, sign, **kwargs)
    _assert_names(exc, name, "fit")


@pytest.mark.parametrize("name", RANKERS)
@pytest.mark.parametrize("arg", ["y", "cams"])
def test_fit_refuses_labels_of_another_length(name, arg):
    X, args, kwargs, _ = inputs(name)
    if arg == "cams" and "cams" not in kwargs or arg == "y" and "pairwise" in capabilities(rankers.get(name)):
        pytest.skip(f"{name}'s fit takes no {arg}")
    if arg == "y":
        args = (np.asarray(args[0])[:-1], *args[1:])
    else:
        kwargs = {**kwargs, "cams": kwargs["cams"][:-1]}
    with pytest.raises(InputError, match=f"{arg} has"):
        make(name).fit(X, *args, **kwargs)

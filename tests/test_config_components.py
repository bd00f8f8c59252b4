"""A config's components are looked up and their parameters checked once, when it is resolved;
the engine builds them from those checked specs."""

from __future__ import annotations

from collections import Counter

import pytest

from rankbench import params, registry
from rankbench.components import ComponentSpec
from rankbench.config import resolve
from rankbench.errors import ConfigError

CONFIG = {"name": "once", "dataset": {"name": "synthetic_reid", "n_people": 30},
          "features": [{"name": "colour", "extractor": "color_strips", "bins": 4, "n_strips": 2}],
          "protocol": {"name": "reid", "n_test": 10, "ranks": [1, 5]}, "trials": 2, "seed": 1,
          "rankers": [{"name": "L1", "ranker": "l1"},
                      {"name": "Scaled", "ranker": "euclidean", "preprocess": [{"name": "standardize"}]}],
          "sweep": {"protocol.n_test": [8, 10]}}


@pytest.fixture
def checks(monkeypatch):
    """Every parameter check made, by class (the one check function, counted where it is called)."""
    seen: Counter = Counter()
    real = params.check_params

    def counted(cls, values, where):
        seen[cls.__name__] += 1
        return real(cls, values, where)

    monkeypatch.setattr(params, "check_params", counted)
    monkeypatch.setattr(registry, "check_params", counted)
    return seen


def test_resolve_checks_each_component_once_and_keeps_it_checked(checks):
    exp = resolve(CONFIG, "c.yaml")
    # the two settings differ only in the protocol: everything else is checked once, for both
    assert checks == {"SyntheticReId": 1, "ColorStrips": 1, "ReIdentification": 2, "L1Norm": 1, "Euclidean": 1,
                      "Standardize": 1}
    a, b = (s.components for s in exp.settings)
    assert a.protocol.params["n_test"] == 8 and b.protocol.params["n_test"] == 10
    assert a.rankers["L1"] == (ComponentSpec("rankers", "l1", {}), ())
    assert b.rankers["Scaled"][1] == (ComponentSpec("preprocessors", "standardize", {}),)
    assert a.features["colour"] is b.features["colour"]
    assert isinstance(a.features["colour"].params["bins"], int) and a.dataset.params == {"n_people": 30}


def test_a_mistake_shared_by_every_setting_is_said_once():
    bad = {**CONFIG, "rankers": [{"name": "L1", "ranker": "l1"}, {"name": "E", "ranker": "euclidean", "p": 2}]}
    with pytest.raises(ConfigError) as err:
        resolve(bad, "c.yaml")
    assert str(err.value).count("unknown parameter 'p'") == 1, str(err.value)


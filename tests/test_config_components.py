"""A config's components are looked up and their parameters checked once, when it is resolved;
the engine builds them from those checked specs and never checks them again. A Python caller's
values are checked where they enter: an object given to ``app.evaluate``, a ranker it fits."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import yaml

from rankbench import app, components, params, registry
from rankbench.components import ComponentSpec
from rankbench.config import resolve
from rankbench.errors import ConfigError, ParameterError
from rankbench.registry import rankers

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

    for module in (params, registry, components):
        monkeypatch.setattr(module, "check_params", counted)
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


def test_a_run_builds_from_the_checked_specs_and_checks_nothing_again(checks, tmp_path, monkeypatch):
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "once.yaml"
    path.write_text(yaml.safe_dump(CONFIG))
    checks.clear()
    result = app.run(path, out=tmp_path / "run", options=app.EngineOptions(progress=False), plots=False)
    assert result.outcome.n_done == 2 * 2 * 2
    # resolved once (the sweep's two protocols), then planned, run and reported without a check
    assert checks == {"SyntheticReId": 1, "ColorStrips": 1, "ReIdentification": 2, "L1Norm": 1, "Euclidean": 1,
                      "Standardize": 1}


def test_a_mistake_shared_by_every_setting_is_said_once():
    bad = {**CONFIG, "rankers": [{"name": "L1", "ranker": "l1"}, {"name": "E", "ranker": "euclidean", "p": 2}]}
    with pytest.raises(ConfigError) as err:
        resolve(bad, "c.yaml")
    assert str(err.value).count("unknown parameter 'p'") == 1, str(err.value)


def test_an_object_given_to_evaluate_is_checked_where_it_enters(checks, tmp_path, monkeypatch):
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "cache"))
    cfg = {k: v for k, v in CONFIG.items() if k != "sweep"}
    with pytest.raises(ParameterError, match=r"^evaluate: estimator 'PRSVM'.C: expected a number > 0"):
        app.evaluate(rankers.get("prsvm")(C=-1.0), cfg, progress=False)
    assert not (tmp_path / "results").exists()


def test_a_ranker_a_python_caller_fits_is_checked_at_fit_and_the_engine_skips_it(checks):
    X, y = np.random.default_rng(0).random((6, 4)), np.repeat(np.arange(3), 2)
    with pytest.raises(ParameterError, match=r"^prsvm.C: expected a number > 0"):
        rankers.get("prsvm")(C=0.0).fit(X, y)
    from sklearn import config_context

    with config_context(skip_parameter_validation=True):   # as the engine's jobs run
        rankers.get("l1")().fit(X, y)
    assert checks["L1Norm"] == 0 and checks["PRSVM"] == 1

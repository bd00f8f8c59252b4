"""Estimators as users write them: a plain class with just the methods of a capability, under
every registered protocol.

The oracle is the contract table of ``rankbench/rankers/base.py`` written out here (the methods
each capability needs, its ``fit`` arguments, and the capabilities each protocol uses): a plain
class runs under a protocol exactly when it has the methods of one of them; then every job
finishes. Otherwise it is refused before any work (no run folder, no job) with one line naming
the object and what each capability of the protocol needs. A metric learner with only ``fit``
and ``transform`` under ``reid`` ranks by -squared Euclidean distance of its transform, checked
against that computed by hand on the recorded split.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from rankbench import app
from rankbench.errors import ConfigError
from rankbench.registry import protocols

PLUGINS = Path(__file__).resolve().parents[1] / "plugins"
PLUGIN = PLUGINS / "plain.py"
import importlib.util  # noqa: E402

_spec = importlib.util.spec_from_file_location("plain_estimators", PLUGIN)
plain = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(plain)

#: the contract table: capability -> (methods, fit's arguments after X)
CONTRACT = {"pair_scorer": ({"fit", "similarity"}, ("y",)), "metric": ({"fit", "transform"}, ("y",)),
            "item_scorer": ({"fit", "decision_function"}, ("y",)),
            "model_booster": ({"fit", "decision_function"}, ("y",)),
            "pairwise": ({"fit", "decision_function"}, ("pairs", "sign")),
            "classifier": ({"fit", "predict"}, ("y",)), "model_bank": ({"fit", "model_output"}, ("y",))}
#: the capabilities each protocol uses for a compared method
USES = {"reid": ("pair_scorer", "metric"), "ordinal": ("metric",), "comparison": ("pairwise",),
        "retrieval": ("item_scorer",), "stacked_retrieval": ("model_booster", "item_scorer"),
        "classification": ("classifier",), "video_classification": ("classifier",)}

COLLECTION = {"name": "synthetic_collection", "n_items": 1500, "feature_types": [[8, 0.5], [8, 1.0]]}
SETUPS = {
    "reid": {"dataset": {"name": "synthetic_reid", "n_people": 16},
             "features": [{"name": "f", "extractor": "color_strips", "bins": 4, "n_strips": 2}],
             "protocol": {"name": "reid", "n_test": 6, "ranks": [1, 5]}},
    "ordinal": {"dataset": {"name": "synthetic_ordinal", "n_labels": 3, "n_per_label": 8, "n_nuisance": 2},
                "features": [{"name": "f", "extractor": "array", "key": "feat"}],
                "protocol": {"name": "ordinal", "n_per_label": 3, "k": 3}},
    "comparison": {"dataset": {"name": "synthetic_attributes", "n_categories": 3, "n_per_category": 6,
                               "n_attributes": 2, "n_train_per_category": 3},
                   "features": [{"name": "f", "extractor": "array", "key": "feat"}],
                   "protocol": {"name": "comparison", "n_train_pairs": 100}},
    "retrieval": {"dataset": COLLECTION, "features": [{"name": "f", "extractor": "array", "key": "feat/type00"}],
                  "protocol": {"name": "retrieval", "concepts": ["Meeting", "Computer_TV-screen"]}},
    "stacked_retrieval": {"dataset": COLLECTION,
                          "features": [{"name": "a", "extractor": "array", "key": "feat/type00"},
                                       {"name": "b", "extractor": "array", "key": "feat/type01"}],
                          "protocol": {"name": "stacked_retrieval", "concepts": ["Meeting", "Computer_TV-screen"],
                                       "base_models": {"ranker": "svm_bank", "bags_per_type": 1, "max_bag": 60,
                                                       "C": [1.0], "gamma": [1.0]}}},
    "classification": {"dataset": {"name": "two_spirals", "n_positive": 30, "n_negative": 30},
                       "features": [{"name": "f", "extractor": "array"}],
                       "protocol": {"name": "classification", "n_train_per_class": 8}},
    "video_classification": {"dataset": {"name": f"{PLUGINS / 'faulty.py'}:TinyTracks"},
                             "features": [{"name": "f", "extractor": "array", "key": "feat"}],
                             "protocol": {"name": "video_classification"}},
}


def config(protocol: str) -> dict:
    return {"name": f"plain_{protocol}", **SETUPS[protocol], "trials": 2,
            "rankers": [{"name": "Configured", "ranker": "logistic"}]}


def usable(cls: type, protocol: str) -> bool:
    """The oracle: has the class the methods (and fit's arguments) of a capability the protocol uses?"""
    import inspect

    methods = {m for m in vars(cls) if callable(getattr(cls, m)) and not m.startswith("_")}
    for cap in USES[protocol]:
        needed, args = CONTRACT[cap]
        if needed <= methods and tuple(inspect.signature(cls.fit).parameters)[2:2 + len(args)] == args:
            return True
    return False


def test_the_table_here_is_the_protocols_own():
    assert {p: protocols.get(p).capability for p in protocols.names()} == USES


@pytest.fixture
def shared_cache(monkeypatch, tmp_path_factory):
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path_factory.getbasetemp() / "plain-cache"))


@pytest.mark.parametrize("cls", plain.PLAIN, ids=[c.__name__ for c in plain.PLAIN])
@pytest.mark.parametrize("protocol", sorted(USES))
def test_a_plain_class_runs_or_is_refused_before_any_work(shared_cache, tmp_path, protocol, cls):
    out = tmp_path / "run"
    if usable(cls, protocol):
        trials, summary = app.evaluate(cls(), config(protocol), out=out, progress=False)
        headline = protocols.get(protocol).headline
        assert set(trials["method"]) == {cls.__name__} and set(trials["trial"]) == {0, 1}
        assert summary.set_index("metric").loc[headline, "n_trials"] == 2
        return
    with pytest.raises(ConfigError) as err:
        app.evaluate(cls(), config(protocol), out=out, progress=False)
    line = str(err.value)
    assert "\n" not in line and not out.exists()                      # one line, no folder, no job
    assert f"estimator '{cls.__name__}': it cannot run under protocol '{protocol}'" in line
    for cap in USES[protocol]:                                         # what each usable capability needs
        assert f"{cap}: fit(" in line
    assert all(f"{cap}: " not in line for cap in set(CONTRACT) - set(USES[protocol]))


def test_a_metric_learner_under_reid_ranks_by_its_transform(shared_cache, tmp_path):
    """PlainMetric has fit and transform only: its similarity is -||T(q) - T(g)||^2, and the trial's
    CMC@1 is what that similarity gives on the recorded split."""
    out = tmp_path / "run"
    trials, _ = app.evaluate(plain.PlainMetric(), config("reid"), out=out, progress=False)
    from rankbench.config import resolve
    from rankbench.engine.cache import get_features
    from rankbench.engine.plan import load_dataset
    from rankbench.registry import features

    exp = resolve(config("reid"), "reid")
    ds = load_dataset(exp.config, None)
    X = get_features(ds, features.build("color_strips", {"bins": 4, "n_strips": 2}), progress=False)
    ids = ds.column("identity")
    for t in json.loads((out / "splits.json").read_text())["settings"][0]["trials"]:
        m = plain.PlainMetric().fit(X[t["train"]], ids[t["train"]])
        S = -cdist(m.transform(X[t["probe"]]), m.transform(X[t["gallery"]]), "sqeuclidean")
        truth = ids[t["probe"]][:, None] == ids[t["gallery"]][None, :]
        top = S.argmax(1)       # no ties in continuous features
        got = trials[(trials.trial == t["trial"]) & (trials.metric == "cmc@1")]["value"].item()
        assert got == pytest.approx(truth[np.arange(len(top)), top].mean())


@pytest.mark.parametrize("cls, runs, steps", [("PlainMetric", True, []), ("PlainPairScorer", True, []),
                                              ("PlainMetric", True, [{"name": "pca", "n_components": 4}]),
                                              ("PlainClassifier", False, [])])
def test_a_plain_class_by_import_path_on_the_command_line(cli, tmp_path, cls, runs, steps):
    import yaml

    path, out = tmp_path / "c.yaml", tmp_path / "run"
    mine = {"name": "Mine", "ranker": f"{PLUGIN}:{cls}", **({"preprocess": steps} if steps else {})}
    data = {**config("reid"), "rankers": [mine, {"name": "L1", "ranker": "l1"}]}
    path.write_text(yaml.safe_dump(data))
    res = cli("validate", path)
    if runs:
        assert res.exit_code == 0, res.output
        res = cli("run", path, "--out", out, "--no-plots", "-q")
        assert res.exit_code == 0, res.output
        assert "| Mine |" in res.output
        return
    for command in (("validate", path), ("run", path, "--out", out)):
        res = cli(*command)
        lines = res.output.strip().splitlines()
        assert res.exit_code == 1 and len(lines) == 1, res.output
        assert f"rankers.Mine: ranker '{PLUGIN}:{cls}' cannot run under protocol 'reid'" in lines[0]
        assert "pair_scorer: fit(X, y, cams=None), similarity(Q, G) (missing similarity)" in lines[0]
        assert "metric: fit(X, y), transform(X) (missing transform)" in lines[0]
    assert not out.exists()


def test_methods_under_one_bank_of_base_models_name_one_input(tmp_path):
    """stacked_retrieval fits its base models on the methods' feature views once for all of them.
    Before: a method with combine: views beside one with the default concat got a bank of 4
    models where the other got 2, and the two were compared in one table at exit 0."""
    import yaml

    from rankbench import app
    from rankbench.errors import ConfigError

    cfg = config("stacked_retrieval")
    cfg["rankers"] = [{"name": "Views", "ranker": "bipartite_rankboost",
                       "combine": "views", "n_rounds": 3},
                      {"name": "Concat", "ranker": "bipartite_rankboost", "n_rounds": 3}]
    path = tmp_path / "mix.yaml"
    path.write_text(yaml.safe_dump(cfg))
    with pytest.raises(ConfigError, match=r"rankers.Concat: features \['a', 'b'\] with combine 'concat', where "
                                          r"rankers.Views has \['a', 'b'\] with 'views'; protocol 'stacked_retrieval'"):
        app.validate(path)
    cfg["rankers"][1]["combine"] = "views"
    path.write_text(yaml.safe_dump(cfg))
    app.validate(path)

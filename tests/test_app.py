"""app.evaluate: a paper's protocol run on an estimator object, without a config file or a module.

The oracle for "the same protocol": an object evaluated with ``app.evaluate`` gives exactly the
numbers ``app.run`` gives for the same ranker named in the config (same splits, seeds and features).
Objects that declare no capability (plain scikit-learn estimators) are checked against a direct
computation on the recorded splits.
"""

import json

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy.spatial.distance import cdist
from sklearn.base import BaseEstimator
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression
from toydata import write_tracks_table

from rankbench import app
from rankbench.errors import ConfigError
from rankbench.registry import rankers

BANK = {"ranker": "svm_bank", "C": [1.0], "gamma": [1.0], "max_bag": 60}
COLLECTION = {"name": "synthetic_collection", "n_items": 1200, "feature_types": [[8, 0.5], [8, 1.0]],
              "shots_per_video": 50}
#: one small config per protocol (video_classification: on a table, below), and a
#: registered ranker it can run, given once by name (app.run) and once as an object (app.evaluate)
PROTOCOLS = {
    "reid": ({"dataset": {"name": "synthetic_reid", "n_people": 40},
              "features": [{"name": "colour", "extractor": "color_strips", "bins": 8}],
              "protocol": {"name": "reid", "n_test": 15, "ranks": [1, 5]}}, "l1", {}),
    "ordinal": ({"dataset": {"name": "synthetic_ordinal", "n_per_label": 12},
                 "features": [{"name": "x", "extractor": "array", "key": "feat"}],
                 "protocol": {"name": "ordinal", "n_per_label": 5, "k": 3}}, "euclidean", {}),
    "comparison": ({"dataset": {"name": "synthetic_attributes", "n_per_category": 10, "n_train_per_category": 4},
                    "features": [{"name": "x", "extractor": "array", "key": "feat"}],
                    "protocol": {"name": "comparison", "n_train_pairs": 300}}, "ranksvm", {"C": 1.0}),
    "classification": ({"dataset": {"name": "two_spirals", "n_positive": 40, "n_negative": 40},
                        "features": [{"name": "feat", "extractor": "array"}],
                        "protocol": {"name": "classification", "n_train_per_class": 10}}, "logistic", {}),
    "retrieval": ({"dataset": COLLECTION,
                   "features": [{"name": "t0", "extractor": "array", "key": "feat/type00"}],
                   "protocol": {"name": "retrieval", "depths": [50], "min_positives": 3,
                                "concepts": ["Meeting", "Computer_TV-screen", "Car"]}}, "logistic", {}),
    "stacked_retrieval": ({"dataset": COLLECTION,
                           "features": [{"name": "t0", "extractor": "array", "key": "feat/type00"},
                                        {"name": "t1", "extractor": "array", "key": "feat/type01"}],
                           "protocol": {"name": "stacked_retrieval", "base_models": BANK, "depths": [50],
                                        "min_positives": 2, "concepts": ["Meeting", "Computer_TV-screen"]}},
                          "bipartite_rankboost", {"n_rounds": 5}),
}


def config(proto: str, **extra) -> dict:
    cfg, _, _ = PROTOCOLS[proto]
    return {"name": f"byo_{proto}", **cfg, "trials": 2, "seed": 3,
            "rankers": [{"name": "Configured", "ranker": "l1" if proto == "reid" else "euclidean"}], **extra}


def quality(frame: pd.DataFrame) -> pd.DataFrame:
    keep = ~frame["metric"].isin(["train_s", "test_s", "peak_mb", "rank_s"]) & ~frame["metric"].str.startswith("rank_s/")
    return frame[keep].drop(columns="method").sort_values(["trial", "metric"]).reset_index(drop=True)


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "cache"))


@pytest.mark.parametrize("proto", list(PROTOCOLS))
def test_an_object_gets_exactly_the_numbers_of_the_same_ranker_named_in_the_config(proto, tmp_path):
    cfg, name, params = PROTOCOLS[proto]
    data = {**config(proto), "rankers": [{"name": "Named", "ranker": name, **params}]}
    if proto == "stacked_retrieval":
        data["rankers"][0]["combine"] = "views"
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(data))
    ran = app.run(path, out=tmp_path / "run", options=app.EngineOptions(progress=False), plots=False)
    named, _ = app.load_results(ran.folder.path)
    obj = rankers.get(name)(**params)
    trials, summary = app.evaluate(obj, data, progress=False)
    assert set(trials["method"]) == {type(obj).__name__}
    headline = {"reid": "cmc@1", "ordinal": "mae", "comparison": "pair_acc", "classification": "error_rate",
                "retrieval": "map", "stacked_retrieval": "map"}[proto]
    assert headline in set(summary["metric"]) and summary["n_trials"].eq(2).all()
    pd.testing.assert_frame_equal(quality(trials), quality(named))


class Diagonal(BaseEstimator):
    """A ranker that never reads its input: probe i is most like gallery item i."""

    def fit(self, X, y, cams=None):
        return self

    def similarity(self, Q, G):
        return -np.abs(np.arange(len(Q))[:, None] - np.arange(len(G))[None, :]).astype(float)


class ByPosition(BaseEstimator):
    """A classifier that never reads its input: the first half of the rows one class, the rest the other."""

    def fit(self, X, y):
        return self

    def predict(self, X):
        return (np.arange(len(X)) >= len(X) / 2).astype(int)


@pytest.mark.parametrize("proto, blind, metric, chance", [("reid", Diagonal(), "cmc@1", 1 / 15),
                                                           ("classification", ByPosition(), "error_rate", 0.5)])
def test_a_ranker_that_never_reads_its_input_scores_at_chance(proto, blind, metric, chance):
    # in the order the protocols draw them (probe i and gallery i one person; rows grouped by class)
    # these scored 100 % and 0 % error; the held-out rows are handed over in a seeded random order
    _, summary = app.evaluate(blind, config(proto, trials=4), progress=False)
    mean = summary.set_index("metric").loc[metric, "mean"]
    assert abs(mean - chance) < 0.25, mean


def test_video_classification_on_a_table_of_tracks(tmp_path):
    """The seventh protocol, on the table loader's tracks: an object gets the configured ranker's numbers."""
    (tmp_path / "data").mkdir()
    write_tracks_table(tmp_path / "data", np.random.default_rng(0))
    data = {"name": "byo_video", "dataset": {"name": "table", "file": "tracks.csv", "features": "tracks.npy",
                                             "sequence_length": 4},
            "features": [{"name": "x", "extractor": "array", "key": "feat"}],
            "protocol": {"name": "video_classification", "n_constraints": 2, "selector": {"ranker": "logistic"}},
            "trials": 2, "seed": 1, "rankers": [{"name": "Named", "ranker": "logistic"}]}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(data))
    opts = app.EngineOptions(data_root=str(tmp_path / "data"), progress=False)
    named, _ = app.load_results(app.run(path, out=tmp_path / "run", options=opts, plots=False).folder.path)
    trials, _ = app.evaluate(rankers.get("logistic")(), data, data_root=str(tmp_path / "data"), progress=False)
    assert {"error_rate", "vote_error_rate"} <= set(trials["metric"])
    pd.testing.assert_frame_equal(quality(trials), quality(named))


def test_plain_scikit_learn_estimators_run_as_the_capability_the_protocol_asks_for(tmp_path):
    """LogisticRegression declares nothing: under classification it classifies (fit, predict), under
    retrieval it scores (decision_function); PCA is a metric (fit, transform) under ordinal. Each
    checked against the same estimator fitted by hand on the recorded split."""
    from rankbench.metrics import average_precision

    out = tmp_path / "clf"
    trials, _ = app.evaluate(LogisticRegression(C=0.5), config("classification"), out=out, progress=False)
    X, y = _dataset(out)
    for t in json.loads((out / "splits.json").read_text())["settings"][0]["trials"]:
        pred = LogisticRegression(C=0.5).fit(X[t["train"]], y[t["train"]]).predict(X[t["test"]])
        got = trials[(trials.trial == t["trial"]) & (trials.metric == "error_rate")]["value"].item()
        assert got == pytest.approx(np.mean(pred != y[t["test"]]))

    out = tmp_path / "ret"
    trials, _ = app.evaluate(LogisticRegression(), config("retrieval"), out=out, progress=False, name="LR")
    X, R, concepts = _collection(out)
    t = json.loads((out / "splits.json").read_text())["settings"][0]["trials"][0]
    c = t["concepts"][0]
    j = concepts.index(c)
    s = LogisticRegression().fit(X[t["train"]], R[t["train"], j]).decision_function(X[t["test"]])
    got = trials[(trials.trial == 0) & (trials.metric == f"ap/{c}")]["value"].item()
    assert got == pytest.approx(average_precision(s, R[t["test"], j]))

    _, summary = app.evaluate(PCA(n_components=2), config("ordinal"), progress=False)
    assert summary.set_index("metric").loc["mae", "mean"] > 0


def _loaded(run):
    """The dataset a run folder's config names, loaded again."""
    from rankbench.config import load_experiment
    from rankbench.engine.plan import load_dataset

    return load_dataset(load_experiment(run / "config.yaml").config, None)


def _dataset(run):
    ds = _loaded(run)
    return ds.arrays["feat"], np.unique(ds.column("label"), return_inverse=True)[1]


def _collection(run):
    ds = _loaded(run)
    return ds.arrays["feat/type00"], ds.arrays["relevance"], list(ds.info["concepts"])


class NoisyGuess(BaseEstimator):
    """Predicts random labels from its own seed: shows which seed each trial's copy got."""

    def __init__(self, random_state=None):
        self.random_state = random_state

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.random.default_rng(self.random_state).choice(self.classes_, len(X))


def test_each_trial_fits_a_fresh_copy_seeded_from_the_trial_unless_the_user_set_a_seed(tmp_path):
    """random_state None: each trial's copy gets the trial's recorded ranker seed; a seed the user
    set is kept in every trial; the user's own object is never fitted."""
    for given in (None, 7):
        obj = NoisyGuess(random_state=given)
        trials, _ = app.evaluate(obj, config("classification", trials=3), out=tmp_path / str(given), progress=False)
        assert obj.get_params() == {"random_state": given} and not hasattr(obj, "classes_")
        X, y = _dataset(tmp_path / str(given))
        recorded = json.loads((tmp_path / str(given) / "splits.json").read_text())["settings"][0]["trials"]
        for t in recorded:
            seed = t["ranker_seed"] if given is None else given
            pred = NoisyGuess(random_state=seed).fit(None, y).predict(X[t["test"]])
            got = trials[(trials.trial == t["trial"]) & (trials.metric == "error_rate")]["value"].item()
            assert got == pytest.approx(np.mean(pred != y[t["test"]]))
        assert len({t["ranker_seed"] for t in recorded}) == 3


def test_a_kept_run_folder_names_the_object_and_grades_the_configs_rankers_not_run(tmp_path):
    cfg = config("reid", expected=[{"method": "Configured", "metric": "cmc@1", "value": 0.2, "tolerance": 0.1}])

    class Local(BaseEstimator):   # a class of a test function: runs in this process (jobs=1)
        def __init__(self, scale=1.0):
            self.scale = scale

        def fit(self, X, y, cams=None):
            return self

        def similarity(self, Q, G):
            return -cdist(Q, G) * self.scale

    app.evaluate(Local(scale=2.0), cfg, out=tmp_path / "run", progress=False, name="Mine")
    written = yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())
    assert written["methods"] == ["Mine"] and [r["name"] for r in written["rankers"]] == ["Configured", "Mine"]
    assert written["rankers"][1]["scale"] == 2.0 and written["rankers"][1]["ranker"].endswith(":" + Local.__qualname__)
    res = app.check(tmp_path / "run")
    assert [r["grade"] for r in res.rows] == ["NOT RUN"] and not res.failed
    inv = json.loads((tmp_path / "run" / "manifest.json").read_text())["invocation"]
    assert inv["api"] == "rankbench.app.evaluate" and inv["call"].startswith("rankbench.app.evaluate(Local(scale=2.0)")
    assert "an estimator object" in (tmp_path / "run" / "summary.md").read_text()
    with pytest.raises(ConfigError, match="pickles"):
        app.evaluate(Local(), cfg, jobs=2, progress=False)


def test_a_paper_setting_by_name_and_one_line_mistakes():
    assert "prosser/viper_p316" in app.paper_settings() and "examples/spirals_klr" in app.paper_settings()
    with pytest.raises(ConfigError, match="did you mean 'prosser/viper_p316'"):
        app.evaluate(LogisticRegression(), "prosser/viper_p361")
    with pytest.raises(ConfigError, match="'Configured' is a ranker of the config"):
        app.evaluate(LogisticRegression(), config("classification"), name="Configured")
    with pytest.raises(ConfigError, match=r"estimator 'LogisticRegression': it cannot run under protocol 'comparison'.*"
                       r"pairwise: fit\(X, pairs, sign\), decision_function\(X\) \(its fit takes other arguments"):
        app.evaluate(LogisticRegression(), config("comparison"))   # fit(X, y): no pairs, no sign
    with pytest.raises(ConfigError, match="unknown feature set 'gist'"):
        app.evaluate(LogisticRegression(), config("classification"), features="gist")
    # before: ran every job, then refused its own run folder's config.yaml (nothing returned)
    published = config("classification", expected=[{"method": "PRDC", "metric": "error_rate", "value": 0.3,
                                                    "tolerance": 0.1, "published_only": True}])
    with pytest.raises(ConfigError, match="evaluate: name: 'PRDC' is a method the config's published numbers name"):
        app.evaluate(LogisticRegression(), published, name="PRDC")
    # before: AttributeError, TypeError; and a feature set given twice was concatenated twice
    for kwargs, said in (({"sets": {3: 1}}, "sets: expected a mapping of key paths"),
                         ({"data_root": 5}, "data_root: expected a folder path, got 5"),
                         ({"out": 5}, "out: expected a folder path, got 5"),
                         ({"features": ["f", "f"]}, "features: expected each feature set once")):
        with pytest.raises(ConfigError, match=f"evaluate: {said}"):
            app.evaluate(LogisticRegression(), config("classification"), **kwargs)


class LostParameter(BaseEstimator):
    """An L2-like scorer whose get_params forgets p: every trial's copy was built with p = 1."""

    def __init__(self, p=1.0):
        self.p = p

    def get_params(self, deep=True):
        return {}

    def fit(self, X, y):
        return self

    def predict(self, X):
        return np.zeros(len(X), dtype=int)


class BrokenRepr(LostParameter):
    def __repr__(self):
        raise ValueError("no repr")

    def get_params(self, deep=True):
        return {"p": self.p}


def test_an_object_its_copies_would_not_be_or_a_wrong_argument_is_one_line():
    with pytest.raises(ConfigError, match=r"evaluate: estimator 'LostParameter': a copy of it .* has p = 1.0, the "
                                          r"object 2.0; expected get_params to return every __init__ parameter"):
        app.evaluate(LostParameter(p=2.0), config("classification"))
    with pytest.raises(ConfigError, match=r"evaluate: estimator: expected an estimator object \(an instance, e.g. "
                                          r"LogisticRegression\(\)\)"):
        app.evaluate(LogisticRegression, config("classification"))
    with pytest.raises(ConfigError, match="evaluate: estimator: expected an estimator object"):
        app.evaluate(None, config("classification"))
    with pytest.raises(ConfigError, match="evaluate: config: expected a config file's path, a paper's config name "
                                          "or a dict, got list"):
        app.evaluate(LogisticRegression(), [config("classification")])
    trials, _ = app.evaluate(BrokenRepr(), config("classification"), progress=False)   # a __repr__ that fails
    assert len(trials)

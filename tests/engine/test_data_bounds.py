"""Ranker parameters bounded by the data (``params.AtMost``) are checked when a config is planned
(``validate`` and ``run`` alike, before any run folder), against the feature dimension after the
method's preprocessing and the sizes the protocol gives.

The oracle is the fit itself: each case of the sweep is also fitted, through the same pipeline, on
the training rows the protocol draws, and the plan refuses exactly the cases whose fit refuses."""

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from rankbench import app
from rankbench.cli import main
from rankbench.errors import ConfigError, InputError, ParameterError
from rankbench.params import AtMost, check_data_bounds, data_bounds
from rankbench.rankers.metric_learning.cmds_dml import CMDSDML

PLUGIN = '''
from typing import Annotated
import numpy as np
from rankbench.params import AtMost, PositiveInt
from rankbench.rankers.base import MetricLearner


class Prototypes(MetricLearner):
    """Keeps n_prototypes training rows (a ranker of a user's own, bounded by the rows)."""

    def __init__(self, n_prototypes: Annotated[PositiveInt, AtMost("n_samples")] = 2):
        self.n_prototypes = n_prototypes

    def fit(self, X, y):
        if self.n_prototypes > len(X):
            raise ValueError(f"n_prototypes={self.n_prototypes} > {len(X)} rows")
        self.n_features_in_ = X.shape[1]
        return self

    def transform(self, X):
        return np.asarray(X, float)
'''


@pytest.fixture
def data(tmp_path, monkeypatch):
    """4 labels x 5 items with two shipped feature sets: 'a' of 3 columns, 'b' of 20."""
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "cache"))
    rng = np.random.default_rng(0)
    d = tmp_path / "data"
    d.mkdir()
    y = np.repeat(np.arange(4), 5)
    pd.DataFrame({"id": [f"i{i}" for i in range(20)], "label": y}).to_csv(d / "t.csv", index=False)
    np.save(d / "a.npy", y[:, None] + rng.normal(0, 0.3, (20, 3)))
    np.save(d / "b.npy", rng.normal(size=(20, 20)))
    (tmp_path / "prototypes.py").write_text(PLUGIN)
    return tmp_path


def config(root, ranker: dict, features=("a",), n_per_label=2) -> dict:
    return {"name": "bounds",
            "dataset": {"name": "table", "file": "t.csv", "features": {k: f"{k}.npy" for k in ("a", "b")}},
            "features": [{"name": k, "extractor": "array", "key": f"feat/{k}"} for k in ("a", "b")],
            "protocol": {"name": "ordinal", "n_per_label": n_per_label, "k": 1},
            "trials": 1, "rankers": [{"name": "M", "features": list(features), **ranker}]}


PCA = [{"name": "pca", "n_components": 2}]
# (id, ranker entry, feature sets, n_per_label, refused: the words of the one line, or None)
CASES = [
    ("s below d", {"ranker": "cmds_dml", "s": 2}, ("a",), 2, None),
    ("s = d", {"ranker": "cmds_dml", "s": 3}, ("a",), 2, None),
    ("s above d", {"ranker": "cmds_dml", "s": 4}, ("a",), 2, ["rankers.M.s", "input dimension 3", "feature set a: 3",
                                                             "got 4"]),
    ("default s above d", {"ranker": "cmds_dml"}, ("a",), 2, None),   # s = 3 by default
    ("concat adds dims", {"ranker": "cmds_dml", "s": 23}, ("a", "b"), 2, None),
    ("concat still short", {"ranker": "cmds_dml", "s": 24}, ("a", "b"), 2, ["feature set a: 3 + feature set b: 20"]),
    ("pca below s", {"ranker": "cmds_dml", "s": 3, "preprocess": PCA}, ("a",), 2, ["input dimension 2",
                                                                                  "pca keeps n_components = 2"]),
    ("pca fits s", {"ranker": "cmds_dml", "s": 2, "preprocess": PCA}, ("a",), 2, None),
    ("standardize keeps d", {"ranker": "cmds_dml", "s": 3, "preprocess": [{"name": "standardize"}]}, ("a",), 2,
     None),
    ("standardize, s above d", {"ranker": "cmds_dml", "s": 4, "preprocess": [{"name": "standardize"}]}, ("a",), 2,
     ["input dimension 3"]),
    ("pca bounded by the training rows", {"ranker": "cmds_dml", "s": 12, "preprocess": [{"name": "pca",
                                                                                         "n_components": 15}]},
     ("b",), 2, ["input dimension 7", "pca keeps at most one direction fewer than its rows",
                 "protocol.n_per_label = 2 x 4 labels"]),
    ("pca centred on the training rows", {"ranker": "cmds_dml", "s": 8, "preprocess": [{"name": "pca",
                                                                                        "n_components": 15}]},
     ("b",), 2, ["input dimension 7", "got 8"]),
    ("pca within its rows", {"ranker": "cmds_dml", "s": 7, "preprocess": [{"name": "pca", "n_components": 15}]},
     ("b",), 2, None),
    ("user ranker within the rows", {"ranker": "prototypes.py:Prototypes", "n_prototypes": 12}, ("a",), 3, None),
    ("user ranker beyond the rows", {"ranker": "prototypes.py:Prototypes", "n_prototypes": 13}, ("a",), 3,
     ["rankers.M.n_prototypes", "the training rows 12", "got 13"]),
]


@pytest.mark.parametrize("case, ranker, feats, n_per_label, words", CASES, ids=[c[0] for c in CASES])
def test_the_plan_refuses_exactly_what_the_fit_would(data, case, ranker, feats, n_per_label, words, monkeypatch):
    monkeypatch.chdir(data)   # the plug-in's path is relative
    cfg = config(data, ranker, feats, n_per_label)
    path = data / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    # the oracle: the method fitted on the training rows of the protocol's first split
    plan = app.validate(path, data_root=str(data / "data")) if words is None else None
    if words is not None:
        with pytest.raises(ConfigError) as err:
            app.validate(path, data_root=str(data / "data"))
        msg = str(err.value)
        assert "\n" not in msg and str(path) in msg and all(w in msg for w in words), msg
        relaxed = yaml.safe_load(path.read_text())
        relaxed["rankers"][0] = {"name": "M", "ranker": "euclidean"}   # plan the data alone, then fit by hand
        path.write_text(yaml.safe_dump(relaxed))
        plan = app.validate(path, data_root=str(data / "data"))
    sp = plan.settings[0]
    split = sp.protocol.split(sp.dataset, np.random.default_rng(0))
    X = np.hstack([sp.dataset.arrays[f"feat/{k}"] for k in feats])[split["train"]]
    y = sp.dataset.column("label")[split["train"]]
    from rankbench.config import Config, check_components
    from rankbench.engine.plan import _method

    given = Config.model_validate(cfg)   # the ranker as first given (the plan refused it)
    method = _method(given.rankers[0], given, check_components(given, str(path)))
    est = method.make(0)
    target = getattr(est, "fit_target", est)
    if hasattr(target, "max_iter"):
        target.max_iter = 2   # a short descent: only whether the fit starts matters here
    if words is None:
        est.fit(X, y)
    else:
        with pytest.raises((InputError, ValueError)):
            est.fit(X, y)


def test_validate_and_run_say_it_in_one_line_and_leave_no_folder(data, monkeypatch):
    monkeypatch.chdir(data)
    path = data / "c.yaml"
    path.write_text(yaml.safe_dump(config(data, {"ranker": "cmds_dml", "s": 9})))
    cli = CliRunner()
    for args in (["validate", path], ["run", path, "--out", data / "run"]):
        res = cli.invoke(main, [*map(str, args), "--data-root", str(data / "data")], catch_exceptions=False)
        lines = res.output.strip().splitlines()
        assert res.exit_code == 1 and len(lines) == 1 and "Traceback" not in res.output, res.output
        assert lines[0].startswith("rankbench: error:") and "rankers.M.s: expected at most the input dimension 3" \
            in lines[0]
    assert not (data / "run").exists()


def test_an_estimator_object_is_held_to_its_bounds_too(data):
    path = data / "c.yaml"
    path.write_text(yaml.safe_dump(config(data, {"ranker": "euclidean"})))
    with pytest.raises(ConfigError, match="estimator 'CMDSDML'.s: expected at most the input dimension 3"):
        app.evaluate(CMDSDML(s=4), path, data_root=str(data / "data"), features="a", progress=False)


def test_bounds_are_read_from_the_annotations_and_checked_on_the_largest_candidate():
    assert data_bounds(CMDSDML) == {"s": "n_features"}
    check_data_bounds(CMDSDML(s=3), {"n_features": (3, "x")}, "w")                 # at the bound
    check_data_bounds(CMDSDML(s=30), {"n_features": None}, "w")                   # not known: left to fit
    with pytest.raises(ParameterError, match=r"^w\.s: expected at most the input dimension 3 \(x\), got 4$"):
        check_data_bounds(CMDSDML(s=4), {"n_features": (3, "x")}, "w")
    with pytest.raises(ValueError, match="n_features"):
        AtMost("features")


@pytest.mark.parametrize("K", [8, 9])
def test_protocol_k_K_bounds_the_rankers_K_by_the_training_rows(data, monkeypatch, K):
    """Under ``k: K`` the ordinal protocol predicts from the ranker's K neighbours: a K above the
    training rows was accepted by validate, then failed every job. The oracle is the run with the
    plan's check taken away: the job fails exactly when the plan refuses."""
    from rankbench.protocols.ordinal import Ordinal

    cfg = config(data, {"ranker": "ldmlr", "K": K, "T_max": 2})
    cfg["protocol"]["k"] = "K"   # 2 per label x 4 labels = 8 training rows
    path = data / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    cli, root = CliRunner(), ["--data-root", str(data / "data")]
    res = cli.invoke(main, ["validate", str(path), *root])
    if K == 8:
        assert res.exit_code == 0, res.output
    else:
        assert res.exit_code == 1 and len(res.output.strip().splitlines()) == 1, res.output
        assert "rankers.M.K: expected at most the training rows 8 (protocol.n_per_label = 2 x 4 labels), got 9" \
            in res.output
    monkeypatch.setattr(Ordinal, "ranker_bounds", lambda self: {})
    res = cli.invoke(main, ["run", str(path), *root, "--out", str(data / "run"), "-q"])
    assert (res.exit_code == 0) == (K == 8), res.output
    assert (K == 8) != ("more than the 8 training images" in res.output), res.output


def test_every_setting_out_of_range_is_said_at_once(data):
    """Before: validate stopped at the first setting; fixing it showed the next."""
    cfg = config(data, {"ranker": "cmds_dml", "s": 12, "preprocess": [{"name": "pca", "n_components": 15}]}, ("b",))
    cfg["sweep"] = {"protocol.n_per_label": [2, 3, 4]}   # 8, 12 and 16 training rows: PCA keeps 7, 11, 15
    path = data / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    res = CliRunner().invoke(main, ["validate", str(path), "--data-root", str(data / "data")])
    lines = res.output.strip().splitlines()
    assert res.exit_code == 1 and len(lines) == 2, res.output
    assert ["[protocol.n_per_label=2]" in lines[0], "[protocol.n_per_label=3]" in lines[1]] == [True, True], lines
    assert all("rankers.M.s: expected at most the input dimension" in line for line in lines)

"""engine/refit.py: a method refitted on a recorded split is the model its trial scored."""

from __future__ import annotations

import numpy as np
import pytest

from rankbench import app
from rankbench.config import load_experiment
from rankbench.engine.refit import refit
from rankbench.errors import RankbenchError
from rankbench.report.build import load_run

CONFIG = """\
name: refit_me
dataset: {name: synthetic_ordinal, n_labels: 3, n_per_label: 30, n_nuisance: 5}
features: [{name: f, extractor: array}]
protocol: {name: ordinal, n_per_label: 8, k: 3}
trials: 2
seed: 4
sweep:
  protocol.k: [3, 5]
rankers:
  - {name: DML, ranker: cmds_dml, K: 3, s: 2, max_iter: 200, preprocess: [{name: pca, n_components: 6}]}
  - {name: LDMLR, ranker: ldmlr, K: 3, T_max: 5}
"""


#: a metric learner whose map is drawn from its random_state: its trials differ only by their seeds
PROJECTION = """\
import numpy as np
from sklearn.base import BaseEstimator

from rankbench.params import Seed
from rankbench.rankers.base import MetricLearner


class RandomProjection(MetricLearner, BaseEstimator):
    def __init__(self, random_state: Seed = None):
        self.random_state = random_state

    def fit(self, X, y):
        self.L_ = np.random.default_rng(self.random_state).normal(size=(2, X.shape[1]))
        return self

    def transform(self, X):
        return np.asarray(X) @ self.L_.T
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("refit")
    (root / "projection.py").write_text(PROJECTION)
    cfg = root / "refit_me.yaml"
    cfg.write_text(CONFIG + f"  - {{name: Proj, ranker: '{root / 'projection.py'}:RandomProjection'}}\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RANKBENCH_CACHE", str(root / "cache"))
        res = app.run(cfg, out=root / "run", options=app.EngineOptions(progress=False), plots=False)
        yield load_run(res.folder.path), load_experiment(res.folder.path / "config.yaml")


def test_the_refitted_model_scores_what_its_trial_recorded(run):
    """With the trial's split and its ranker seed (Proj's map is drawn from it)."""
    data, experiment = run
    assert {r.method for r in data.records} == {"DML", "LDMLR", "Proj"}
    for r in data.records:
        split = data.splits_of(r.setting)[r.trial]
        again = refit(experiment, None, r.setting, r.method, split)
        assert again.metrics["mae"] == pytest.approx(r.metrics["mae"], abs=1e-12), r.key
        assert again.split is split


def test_the_model_is_fitted_on_the_splits_training_rows(run):
    data, experiment = run
    split = data.splits_of("protocol.k=5")[1]
    other = data.splits_of("protocol.k=5")[0]
    a = refit(experiment, None, "protocol.k=5", "DML", split)
    b = refit(experiment, None, "protocol.k=5", "DML", other)
    assert a.model.steps[0][0].startswith("pca")   # the method's preprocessing comes with it
    X = np.asarray(a.X)[split.train]
    assert not np.allclose(a.model.transform(X), b.model.transform(X))


@pytest.mark.parametrize("setting, method, needle", [
    ("protocol.k=7", "DML", "no setting 'protocol.k=7'"),
    ("protocol.k=3", "LMNN", "no method 'LMNN'"),
])
def test_an_unknown_setting_or_method_is_one_line(run, setting, method, needle):
    data, experiment = run
    with pytest.raises(RankbenchError, match=needle):
        refit(experiment, None, setting, method, data.splits_of("protocol.k=3")[0])

"""An estimator object as a compared method: which capability an undeclared object is taken for,
and the wrapper that runs it (engine/estimator.py)."""

import pickle

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.decomposition import PCA
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.linear_model import LogisticRegression

from rankbench.components import ComponentSpec
from rankbench.engine.estimator import Declared, MethodSpec, duck_capability
from rankbench.rankers.base import capabilities, fit_accepts


class Pairs(BaseEstimator):
    def fit(self, X, pairs, sign):
        self.w_ = np.ones(np.asarray(X).shape[1])
        return self

    def decision_function(self, X):
        return np.asarray(X) @ self.w_


class NeedsMore(BaseEstimator):
    def fit(self, X, y, weights):   # an argument no protocol gives
        return self

    def predict(self, X):
        return np.zeros(len(X))


class Constrained(BaseEstimator):
    def fit(self, X, y, constraints=None):
        self.diagnostics_ = {"n_constraints": 0 if constraints is None else len(constraints)}
        return self

    def predict(self, X):
        return np.zeros(len(X), int)


@pytest.mark.parametrize("obj, wanted, got", [
    (LogisticRegression(), ("classifier",), "classifier"),
    (LogisticRegression(), ("item_scorer",), "item_scorer"),
    (LogisticRegression(), ("pairwise",), None),              # fit(X, y, sample_weight) is not fit(X, pairs, sign)
    (LogisticRegression(), ("pair_scorer", "metric"), None),  # no similarity, no transform
    (PCA(), ("pair_scorer", "metric"), "metric"),             # fit(X, y=None), transform: a metric for re-id
    (Pairs(), ("pairwise",), "pairwise"),
    (NeedsMore(), ("classifier",), None),
    (GradientBoostingClassifier(), ("model_booster", "item_scorer"), "model_booster"),
])
def test_an_undeclared_object_is_taken_for_the_capability_whose_methods_and_fit_it_has(obj, wanted, got):
    assert duck_capability(obj, wanted) == got


def test_the_wrapper_states_the_capability_and_passes_every_call_on():
    m = Declared(Constrained(), "classifier")
    assert capabilities(m) == {"classifier"} and fit_accepts(m, "constraints")
    assert m.fit(np.zeros((3, 2)), np.zeros(3), constraints=np.zeros((4, 3))) is m
    assert m.diagnostics_ == {"n_constraints": 4} and m.predict(np.zeros((2, 2))).tolist() == [0, 0]
    assert not hasattr(m, "staged_decision_function")        # only what the object has
    assert hasattr(Declared(GradientBoostingClassifier(), "model_booster"), "staged_decision_function")
    back = pickle.loads(pickle.dumps(m))
    assert back.estimator.diagnostics_ == {"n_constraints": 4} and back.capability == "classifier"


def test_each_copy_is_fresh_and_seeded_only_where_the_user_left_random_state_none():
    spec = MethodSpec("GB", ComponentSpec.of(GradientBoostingClassifier(n_estimators=3)), ["f"], "concat",
                      capability="model_booster")
    a, b = spec.make(11), spec.make(12)
    assert a.estimator.random_state == 11 and b.estimator.random_state == 12 and a.estimator is not b.estimator
    assert spec.ranker.estimator.random_state is None
    kept = MethodSpec("GB", ComponentSpec.of(GradientBoostingClassifier(random_state=5)), ["f"], "concat").make(11)
    assert kept.random_state == 5 and not isinstance(kept, Declared)


class KissmeLike:
    """A metric learner as metric-learn writes one: fit and transform, nothing else."""

    def fit(self, X, y):
        self.scale_ = 2.0
        return self

    def transform(self, X):
        return np.asarray(X, float) * self.scale_


class NoCams:
    def fit(self, X, y):
        self.fitted_ = True
        return self

    def similarity(self, Q, G):
        return -np.abs(np.asarray(Q)[:, None, 0] - np.asarray(G)[None, :, 0])


def test_the_wrapper_gives_what_the_capability_gives_and_drops_what_fit_does_not_take():
    """A metric learner's similarity is -||T(q) - T(g)||^2 (brute force here); a pair scorer whose
    fit takes no cams is one, and fit gets no cams."""
    Q, G = np.array([[0.0, 1.0], [2.0, 0.0]]), np.array([[1.0, 1.0], [0.0, 0.0], [3.0, 2.0]])
    m = Declared(KissmeLike(), "metric").fit(Q, np.array([0, 1]))
    brute = -np.array([[((2 * q - 2 * g) ** 2).sum() for g in G] for q in Q])
    assert np.array_equal(m.similarity(Q, G), brute)
    assert duck_capability(NoCams(), ("pair_scorer", "metric")) == "pair_scorer"
    p = Declared(NoCams(), "pair_scorer")
    assert p.fit(Q, np.array([0, 1]), cams=np.array(["a", "b"])) is p and p.estimator.fitted_
    assert not hasattr(Declared(KissmeLike(), "classifier"), "similarity")   # only its own capability's


def test_a_config_steps_random_state_left_none_gets_the_trials_seed(tmp_path, monkeypatch):
    """Before: a config's preprocess step was built unseeded, so a random projection in front of a
    ranker gave other numbers on every run (12 of 12 values differed between two --no-cache runs),
    while the Python API's pipeline got the trial's seed; the trial cache then kept one draw."""
    import pandas as pd
    from click.testing import CliRunner

    from rankbench.cli import main

    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "cache"))
    spec = MethodSpec("M", ComponentSpec("rankers", "l1", {}), ["x"], "concat",
                      [ComponentSpec("preprocessors", "sklearn.random_projection:GaussianRandomProjection",
                                     {"n_components": 3}),
                       ComponentSpec("preprocessors", "sklearn.random_projection:SparseRandomProjection",
                                     {"n_components": 3, "random_state": 5})])
    built = spec.make(7)
    assert [s.random_state for _, s in built.steps[:-1]] == [7, 5]   # a seed the config gives stays
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: rp\ndataset: {name: synthetic_reid, n_people: 30}\nfeatures: [{name: hsv, extractor: "
                   "hsv_hist}]\nprotocol: {name: reid, n_test: 10}\ntrials: 2\nrankers:\n  - {name: M, ranker: l1, "
                   "preprocess: [{name: 'sklearn.random_projection:GaussianRandomProjection', n_components: 4}]}\n")
    runs = []
    for out in ("a", "b"):
        res = CliRunner().invoke(main, ["run", str(cfg), "--out", str(tmp_path / out), "--no-cache", "-q",
                                        "--no-plots"])
        assert res.exit_code == 0, res.output
        t = pd.read_csv(tmp_path / out / "trials.csv")
        runs.append(t[~t.metric.isin(["train_s", "test_s", "peak_mb"])].reset_index(drop=True))
    assert runs[0].equals(runs[1])

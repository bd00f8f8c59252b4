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

"""The linear logistic baseline."""


import numpy as np

from rankbench.registry import rankers


def test_logistic_ranker_contract():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4))
    y = (X[:, 0] > 0).astype(int)
    m = rankers.build("logistic", {"class_weight": "balanced", "C": 10.0})
    assert m.fit(X, y) is m
    s = m.decision_function(X)
    assert s.shape == (80,) and np.mean((s > 0) == y) > 0.9
    assert set(m.predict(X)) <= {0, 1}

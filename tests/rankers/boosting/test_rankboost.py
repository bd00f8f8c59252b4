"""RankBoost on absolute-difference vectors."""


import numpy as np

from rankbench.rankers.boosting.rankboost import RankBoost


def test_rankboost_finds_the_informative_dimension():
    rng = np.random.default_rng(6)
    n, d = 20, 5
    y = np.repeat(np.arange(n), 2)
    cams = np.tile([0, 1], n)
    X = rng.random((2 * n, d))
    X[:, 2] = np.arange(n)[y] / n + 0.001 * rng.random(2 * n)  # dim 2 identifies the person
    r = RankBoost(n_rounds=10, n_thresholds=64).fit(X, y, cams)
    assert r.features_[0] == 2 and r.alphas_[0] > 0
    S = r.similarity(X[cams == 0], X[cams == 1])
    assert S.shape == (n, n)
    # true matches get the top score of their row
    assert (np.diag(S) >= S.max(1) - 1e-12).all()

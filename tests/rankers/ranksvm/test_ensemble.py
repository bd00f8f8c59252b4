"""Ensemble RankSVM: the boosting equations 9-11 and the normalised weak rankers."""


import numpy as np
from toydata import two_camera_people

from rankbench.metrics import cmc_curve
from rankbench.rankers.ranksvm.ensemble import EnsembleRankSVM, boost


def test_boost_follows_equations_9_to_11():
    U = np.array([[0.5, -0.1], [0.4, 0.3], [-0.2, 0.2], [0.1, 0.4]])
    alphas, chosen = boost(U, 2)
    # round 1, D uniform: weighted errors (eq. 9) are 1/4 for both; argmin takes the first
    D = np.full(4, 0.25)
    assert chosen[0] == 0
    r = D @ U[:, 0]
    assert np.isclose(alphas[0], 0.5 * np.log((1 + r) / (1 - r)))      # eq. 11
    D = D * np.exp(-alphas[0] * U[:, 0])                                 # eq. 10
    D /= D.sum()
    k = np.argmin(D @ (U <= 0))
    assert chosen[1] == k
    r = D @ U[:, k]
    assert np.isclose(alphas[1], 0.5 * np.log((1 + r) / (1 - r)))


def test_ensemble_normalises_and_combines_weak_rankers():
    X, y, cams = two_camera_people(25, 6, noise=0.3, seed=5)
    e = EnsembleRankSVM(n_groups=5, weak_C=(0.01, 1.0), n_rounds=20, random_state=0).fit(X, y, cams)
    assert e.weak_.shape == (6, 10)  # N = s x n weak rankers
    U = -e._pair_margins(X, y, cams, e.weak_)
    assert np.abs(U).max() <= 0.5 + 1e-5  # normalised by 2 max |w^T (x- - x+)|
    np.testing.assert_allclose(e.coef_, e.weak_[:, e.chosen_] @ e.alphas_)
    pa, pb = cams == "a", cams == "b"
    assert cmc_curve(e.similarity(X[pa], X[pb]), y[pa], y[pb])[0] >= 0.8


def test_boosting_over_the_whole_pair_set_equals_a_loop_over_explicit_triples():
    """Eqs. 9-11 run pair by pair over every (query, true match, wrong match) triple, with margins
    u_sk = w_k^T(|x_i - x_p| - |x_i - x_n|) computed triple by triple, give the ensemble's w."""
    X, y, cams = two_camera_people(10, 5, noise=0.4, seed=2)
    e = EnsembleRankSVM(n_groups=2, weak_C=(0.01, 1.0), n_rounds=8, random_state=1).fit(X, y, cams)
    W = e.weak_  # normalised weak rankers (d, N)
    triples = [(i, p, n) for i in range(len(y)) for p in range(len(y)) for n in range(len(y))
               if cams[p] != cams[i] and cams[n] != cams[i] and y[p] == y[i] and y[n] != y[i]]
    D = np.full(len(triples), 1.0 / len(triples))
    alphas, chosen = [], []
    for _ in range(8):
        u = np.array([[W[:, k] @ (np.abs(X[i] - X[p]) - np.abs(X[i] - X[n])) for k in range(W.shape[1])]
                      for i, p, n in triples])  # u = w^T(x+ - x-): the true match scoring higher is right
        wrong = np.array([sum(D[s] for s in range(len(triples)) if u[s, k] <= 0) for k in range(W.shape[1])])
        k = int(np.argmin(wrong))                                            # eq. 9
        r = float(sum(D[s] * u[s, k] for s in range(len(triples))))         # eq. 11
        if r <= 0:
            break
        a = 0.5 * np.log((1 + r) / (1 - r))
        D = np.array([D[s] * np.exp(-a * u[s, k]) for s in range(len(triples))])  # eq. 10
        D /= D.sum()
        alphas.append(a)
        chosen.append(k)
    assert list(e.chosen_) == chosen
    np.testing.assert_allclose(e.alphas_, alphas, rtol=1e-5)
    np.testing.assert_allclose(e.coef_, W[:, chosen] @ np.array(alphas), rtol=1e-5, atol=1e-9)

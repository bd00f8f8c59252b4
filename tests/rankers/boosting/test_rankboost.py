"""RankBoost on absolute-difference vectors."""


import numpy as np
import pytest

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


def explicit_pairs(X, y, cams, thr):
    """Weak-ranker values on the explicit list of crucial pairs (Freund et al. 2003, Fig. 1):
    (query, true match, wrong match), h(x) = [|x_i - x_j|_f <= thr_fj]; (H1, H0) are (pairs, f, j).
    Differences in float32, as the ranker stores features."""
    X = np.asarray(X, np.float32)
    pairs = []
    for i in range(len(y)):
        cand = [j for j in range(len(y)) if j != i and (cams is None or cams[j] != cams[i])]
        for p in [j for j in cand if y[j] == y[i]]:
            for n in [j for j in cand if y[j] != y[i]]:
                pairs.append((np.abs(X[i] - X[p]), np.abs(X[i] - X[n])))
    H1 = np.array([[[d1[f] <= t for t in thr[f]] for f in range(X.shape[1])] for d1, _ in pairs], float)
    H0 = np.array([[[d0[f] <= t for t in thr[f]] for f in range(X.shape[1])] for _, d0 in pairs], float)
    return H1, H0


def assert_rankboost_rounds(rb, thr, H1, H0):
    """Each round of ``rb`` maximises |r| over the explicit crucial pairs (rows of H1 / H0: the true
    and the wrong match's weak-ranker outputs), from uniform weights, with RankBoost's alpha and
    pair-by-pair update."""
    D = np.full(len(H1), 1.0 / len(H1))  # uniform over the crucial pairs
    for f, t, a in zip(rb.features_, rb.thresholds_, rb.alphas_):
        r = np.einsum("p,pfj->fj", D, H1 - H0)
        j = int(np.flatnonzero(thr[f] == np.float32(t))[0])
        assert abs(r[f, j]) >= np.abs(r).max() - 1e-12
        assert a == pytest.approx(0.5 * np.log((1 + r[f, j]) / (1 - r[f, j])), rel=1e-9)
        D = D * np.exp(a * (H0[:, f, j] - H1[:, f, j]))
        D /= D.sum()


@pytest.mark.parametrize("multi", [False, True])
def test_factorised_update_equals_rankboost_over_explicit_pairs(multi):
    """The bipartite factorisation D(x0, x1) = v(x0) v(x1) per query is RankBoost over every pair:
    each round's choice maximises |r| over the explicit pairs (ties may go either way), its alpha is
    1/2 ln((1 + r) / (1 - r)), and D is updated pair by pair."""
    rng = np.random.default_rng(3)
    if multi:  # no cameras, three images per person: queries with two true matches
        y = np.repeat(np.arange(6), 3)
        X, cams = rng.random((18, 4)), None
    else:
        y = np.repeat(np.arange(8), 2)
        cams = np.tile(np.array(["a", "b"]), 8)
        X = rng.random((8, 4))[y] + 0.4 * rng.random((16, 4))
    rb = RankBoost(n_rounds=5, n_thresholds=6, random_state=0).fit(X, y, cams)
    from rankbench.rankers._pair_grid import build_pair_grid

    thr = rb._thresholds(build_pair_grid(X, y, cams))
    H1, H0 = explicit_pairs(X, y, cams, thr)
    assert_rankboost_rounds(rb, thr, H1, H0)

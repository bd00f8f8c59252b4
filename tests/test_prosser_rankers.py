"""Prosser et al. rankers on tiny synthetic data: PRSVM optimality, streaming == materialised,
Ensemble RankSVM's boosting equations (9-11), RankBoost and ELF AdaBoost on separable toys."""

import numpy as np
import pytest
from scipy.optimize import minimize

from rankbench.metrics import cmc_curve
from rankbench.rankers._pairs import build_pairs, weighted_l1
from rankbench.rankers._rank_newton import DenseOracle, StreamOracle, solve
from rankbench.rankers.elf_adaboost import ELFAdaBoost
from rankbench.rankers.ensemble_ranksvm import EnsembleRankSVM, boost
from rankbench.rankers.prsvm import PRSVM
from rankbench.rankers.rankboost import RankBoost


def two_cam(n=12, d=7, noise=0.3, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(n), 2)
    cams = np.tile(np.array(["a", "b"]), n)
    X = rng.random((n, d))[y] + noise * rng.random((2 * n, d))
    return X, y, cams


def brute_triples(X, y, cams):
    """Rows |x_i - x_n| - |x_i - x_p| of every (query, true match, wrong match), by loops."""
    rows = []
    for i in range(len(y)):
        cand = [j for j in range(len(y)) if j != i and (cams is None or cams[j] != cams[i])]
        for p in [j for j in cand if y[j] == y[i]]:
            for n in [j for j in cand if y[j] != y[i]]:
                rows.append(np.abs(X[i] - X[n]) - np.abs(X[i] - X[p]))
    return np.array(rows)


@pytest.mark.parametrize("multi", [False, True])
def test_stream_products_match_explicit_triples(multi):
    rng = np.random.default_rng(1)
    if multi:  # no cameras, three images per person: several true matches per query
        y = np.repeat(np.arange(5), 3)
        X, cams = rng.random((15, 6)), None
    else:
        X, y, cams = two_cam(8, 6)
    P = build_pairs(X, y, cams, block=3)
    A = P.materialize(np.float64)
    B = brute_triples(X, y, cams)
    assert A.shape == B.shape == (P.n_triples(), 6)
    # the same set of triples (order may differ)
    np.testing.assert_allclose(np.sort(A, axis=0), np.sort(B, axis=0), atol=1e-6)
    o = StreamOracle(P)
    v, t = rng.standard_normal(6), rng.standard_normal(len(A))
    act = (rng.random(len(A)) > 0.4).astype(float)
    np.testing.assert_allclose(o.z(v), A @ v, atol=1e-5)
    np.testing.assert_allclose(o.rmat(t), A.T @ t, atol=1e-4)
    h, z = o.hvp(v, act)
    np.testing.assert_allclose(h, A.T @ (act * (A @ v)), atol=1e-4)
    np.testing.assert_allclose(z, A @ v, atol=1e-5)


@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
def test_newton_solution_is_the_optimum_of_eq4(C):
    X, y, cams = two_cam()
    A = brute_triples(X, y, cams)
    f = lambda w: 0.5 * w @ w + C * np.sum(np.maximum(0, 1 + A @ w) ** 2)
    g = lambda w: w + 2 * C * A.T @ np.maximum(0, 1 + A @ w)
    ref = minimize(f, np.zeros(A.shape[1]), jac=g, method="L-BFGS-B",
                   options=dict(gtol=1e-12, ftol=1e-15, maxiter=20000)).x
    w, _, info = solve(StreamOracle(build_pairs(X, y, cams)), C, tol=1e-7, max_newton=60, max_cg=100)
    assert np.linalg.norm(g(w)) <= 1e-4 * max(1.0, np.linalg.norm(g(np.zeros_like(w))))
    np.testing.assert_allclose(w, ref, atol=1e-4 * max(1, np.abs(ref).max()))
    assert f(w) <= f(ref) + 1e-6 * abs(f(ref))


def test_prsvm_streaming_equals_materialised_and_sign():
    X, y, cams = two_cam(15, 9, noise=0.2, seed=3)
    a = PRSVM(C=0.5, tol=1e-8, max_newton=50, max_cg=100).fit(X, y, cams)
    b = PRSVM(C=0.5, tol=1e-8, max_newton=50, max_cg=100, materialize=True).fit(X, y, cams)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-5)
    assert a.info_["n_triples"] == 2 * 15 * 14
    # larger similarity = better: the true matches of the training set come first
    pa, pb = cams == "a", cams == "b"
    S = a.similarity(X[pa], X[pb])
    np.testing.assert_allclose(S, weighted_l1(X[pa], X[pb], a.coef_))
    np.testing.assert_allclose(S[0, 1], a.coef_ @ np.abs(X[pa][0] - X[pb][1]), rtol=1e-5)
    assert cmc_curve(S, y[pa], y[pb])[0] == 1.0
    assert (a.coef_ < 0).mean() > 0.5  # differences lower the score


def test_prsvm_cross_validates_C_from_the_grid():
    X, y, cams = two_cam(20, 6, noise=0.5, seed=4)
    r = PRSVM(C_grid=(0.001, 0.1, 10.0), cv=2, cv_patience=5, random_state=0).fit(X, y, cams)
    assert r.C_ in (0.001, 0.1, 10.0)
    assert set(r.cv_scores_) == {0.001, 0.1, 10.0}
    assert r.cv_scores_[r.C_] == max(r.cv_scores_.values())
    # without cameras every other image is a candidate
    r2 = PRSVM(C=1.0).fit(X, y)
    assert r2.info_["n_triples"] == 40 * 38


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
    X, y, cams = two_cam(25, 6, noise=0.3, seed=5)
    e = EnsembleRankSVM(n_groups=5, C_grid=(0.01, 1.0), n_rounds=20, random_state=0).fit(X, y, cams)
    assert e.weak_.shape == (6, 10)  # N = s x n weak rankers
    U = -e._pair_margins(X, y, cams, e.weak_)
    assert np.abs(U).max() <= 0.5 + 1e-5  # normalised by 2 max |w^T (x- - x+)|
    np.testing.assert_allclose(e.coef_, e.weak_[:, e.chosen_] @ e.alphas_)
    pa, pb = cams == "a", cams == "b"
    assert cmc_curve(e.similarity(X[pa], X[pb]), y[pa], y[pb])[0] >= 0.8


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


def test_elf_adaboost_picks_the_discriminative_histogram():
    rng = np.random.default_rng(7)
    n, nb, H = 20, 4, 3
    y = np.repeat(np.arange(n), 2)
    cams = np.tile(["a", "b"], n)
    X = rng.random((2 * n, H * nb))
    X[:, nb:2 * nb] = rng.random((n, nb))[y] + 0.01 * rng.random((2 * n, nb))  # histogram 1 is stable
    e = ELFAdaBoost(n_rounds=15, n_bins=nb).fit(X, y, cams)
    assert e.hists_[0] == 1
    S = e.similarity(X[cams == "a"], X[cams == "b"])
    assert cmc_curve(S, y[cams == "a"], y[cams == "b"])[4] >= 0.9
    with pytest.raises(ValueError):
        ELFAdaBoost(n_bins=5).fit(X, y, cams)


@pytest.mark.realdata
def test_real_viper_prsvm_beats_l1(shared_data):
    from rankbench.datasets.viper import VIPeR
    from rankbench.features.elf import ELFStrips
    from rankbench.rankers.template import L1Norm

    if not (shared_data / "viper").is_dir():
        pytest.skip("no viper folder")
    ds = VIPeR(check_images=False).load(str(shared_data))
    people = np.random.default_rng(0).permutation(ds.items["identity"].unique())[:160]
    ds = ds.subset(np.flatnonzero(ds.items["identity"].isin(people)))
    X = ELFStrips().extract(ds)
    y, cams = ds.column("identity"), ds.column("cam")
    train = np.isin(y, people[:60])
    pa, pb = ~train & (cams == "a"), ~train & (cams == "b")
    r = PRSVM(C=0.005).fit(X[train], y[train], cams[train])
    ours = cmc_curve(r.similarity(X[pa], X[pb]), y[pa], y[pb])
    l1 = cmc_curve(L1Norm().fit(X[train]).similarity(X[pa], X[pb]), y[pa], y[pb])
    assert ours[19] > l1[19] + 0.1  # 100 test people: learning the weights pays off clearly

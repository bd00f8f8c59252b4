"""cMDS-DML (Yu & Li): eq. 8, Algorithm 1, Theorem 1, gradient, descent."""


import numpy as np
import pytest
from sklearn.base import clone
from toydata import three_level_ordinal

from rankbench.metrics import knn_regress, mae
from rankbench.rankers.metric_learning import cmds_dml as C
from rankbench.utils import jit


def _pairwise(Y):
    return np.sqrt(((Y[:, None] - Y[None]) ** 2).sum(-1))


def _naive_descent(X, Y, V, v2, s, mu, gamma, rho, sigma, r, iters):
    """Algorithm 2 S4-S6 written directly in d-space, for comparison."""
    L, c = np.eye(s, X.shape[1]), 1.0
    for _ in range(iters):
        gL, gc = C.gradient(L, c, X, Y, V, v2, mu)
        g2 = (gL**2).sum() + gc**2
        f = C.objective(L, c, X, Y, V, v2, mu)
        for m in range(1, r + 1):
            a = gamma * rho**m
            if C.objective(L - a * gL, c - a * gc, X, Y, V, v2, mu) - f <= -sigma * a * g2:
                break
        L, c = L - a * gL, c - a * gc
    return L, c


def test_label_distance_matrix_eq8():
    D = C.label_distance_matrix(np.array([0, 0, 1, 3]), beta=1.0)
    assert D[0, 1] == 0 and D[0, 2] == 4 and D[0, 3] == 16 and D[2, 3] == 9
    np.testing.assert_array_equal(D, D.T)


@pytest.mark.parametrize("labels", [[0, 1, 2], [1, 2, 3, 4, 5], [0, 1, 4]])
def test_direct_and_algorithm1_give_the_same_distances(labels):
    rng = np.random.default_rng(1)
    r = rng.permutation(np.repeat(labels, [3, 5, 4, 2, 6][: len(labels)]).astype(float))
    s = max(3, len(labels) - 1)  # exact when s covers Delta's embedding dimension (see mds_from_labels)
    Yd = C.classical_mds(C.label_distance_matrix(r, 1.0), s)
    Ya = C.mds_from_labels(r, s, 1.0)
    assert Yd.shape == Ya.shape == (len(r), s)
    np.testing.assert_allclose(_pairwise(Yd), _pairwise(Ya), atol=1e-8)
    # both reproduce D exactly (an EDM for beta = 1 >= Theorem 1's bound) and are centred
    np.testing.assert_allclose(_pairwise(Ya) ** 2, C.label_distance_matrix(r, 1.0), atol=1e-8)
    np.testing.assert_allclose(Ya.sum(axis=0), 0, atol=1e-9)
    np.testing.assert_allclose(Yd.sum(axis=0), 0, atol=1e-9)


def test_theorem1_bound():
    assert C.beta_lower_bound([0, 1, 2]) == pytest.approx(0.0, abs=1e-12)  # the paper's mu_0 = 0
    r = np.array([0.0, 1.0, 5.0, 6.0])
    b = C.beta_lower_bound(r)
    for beta in (max(b, 0.0), max(b, 0.0) + 1.0):
        D = C.label_distance_matrix(r, beta)
        J = np.eye(4) - 0.25
        assert np.linalg.eigvalsh(-0.5 * J @ D @ J).min() > -1e-9


def test_target_neighbours_same_label_k_each():
    X, y = three_level_ordinal()
    pairs = C.target_neighbours(X, y, 3)
    assert len(pairs) == 3 * len(X)
    assert (y[pairs[:, 0]] == y[pairs[:, 1]]).all() and (pairs[:, 0] != pairs[:, 1]).all()
    # the chosen ones are the nearest same-label points
    i = 0
    same = np.flatnonzero((y == y[i]) & (np.arange(len(y)) != i))
    d = ((X[same] - X[i]) ** 2).sum(1)
    assert set(pairs[pairs[:, 0] == i, 1]) == set(same[np.argsort(d)[:3]])


def test_gradient_matches_finite_differences():
    X, y = three_level_ordinal(d=6)
    X = X - X.mean(0)
    Y = C.classical_mds(C.label_distance_matrix(y, 1.0), 2)
    pairs = C.target_neighbours(X, y, 2)
    V = X[pairs[:, 0]] - X[pairs[:, 1]]
    v2 = (V**2).sum(1)
    rng = np.random.default_rng(3)
    L, c, mu = rng.normal(size=(2, 6)), 0.7, 0.05  # mu large enough for both terms to matter
    gL, gc = C.gradient(L, c, X, Y, V, v2, mu)
    h = 1e-6
    num = np.zeros_like(L)
    for idx in np.ndindex(L.shape):
        E = np.zeros_like(L)
        E[idx] = h
        num[idx] = (C.objective(L + E, c, X, Y, V, v2, mu) - C.objective(L - E, c, X, Y, V, v2, mu)) / (2 * h)
    np.testing.assert_allclose(gL, num, rtol=1e-5, atol=1e-6)
    num_c = (C.objective(L, c + h, X, Y, V, v2, mu) - C.objective(L, c - h, X, Y, V, v2, mu)) / (2 * h)
    assert gc == pytest.approx(num_c, rel=1e-5)


def test_descent_decreases_objective_and_stops_on_tol():
    X, y = three_level_ordinal()
    m0 = C.CMDSDML(gamma=0.1, max_iter=0).fit(X, y)
    m = C.CMDSDML(gamma=0.1, max_iter=5000, tol=1e-4).fit(X, y)
    assert m.objective_ < m0.objective_
    assert m.result_.success and m.result_.message == "the gradient norm fell to tol" and m.grad_norm_ <= 1e-4
    assert m.diagnostics_["status"] == "converged" and m.diagnostics_["n_iter"] == m.n_iter_ == m.result_.nit
    np.testing.assert_allclose(m0.L_, np.eye(3, X.shape[1]))  # L0 = first s rows of I


def test_line_search_failure_stops_without_diverging():
    X, y = three_level_ordinal()
    m = C.CMDSDML(gamma=1e6, r=3, max_iter=50).fit(X * 100, y)
    assert m.result_.status == 2 and not m.result_.success and m.n_iter_ == 0
    assert m.diagnostics_["status"] == "line_search"
    assert np.isfinite(m.L_).all()


def test_cmds_dml_learns_ordinal_structure():
    rng = np.random.default_rng(0)
    y = np.repeat([0.0, 1.0, 2.0], 30)
    X = np.hstack([y[:, None] + 0.3 * rng.normal(size=(90, 1)), 3.0 * rng.normal(size=(90, 9))])
    tr = np.concatenate([np.flatnonzero(y == v)[:10] for v in (0, 1, 2)])
    te = np.setdiff1d(np.arange(90), tr)
    m = C.CMDSDML(s=2, gamma=0.05, max_iter=500).fit(X[tr], y[tr])
    ours = mae(y[te], knn_regress(m.transform(X[tr]), y[tr], m.transform(X[te]), 5))
    eucl = mae(y[te], knn_regress(X[tr], y[tr], X[te], 5))
    assert ours < eucl
    assert m.transform(X[te]).shape == (len(te), 2)


def test_sklearn_conventions():
    m = C.CMDSDML(s=2, K=4)
    assert clone(m).get_params() == m.get_params()
    assert not hasattr(m, "L_")
    X, y = three_level_ordinal()
    assert m.fit(X, y) is m
    with pytest.raises(ValueError):
        C.CMDSDML(mds="nope").fit(X, y)
    # both S2 routes give the same fit (same distances; MDS sign/rotation may differ, but the
    # Gram route only needs distances through y via the fitting term, so compare embeddings' geometry)
    a = C.CMDSDML(mds="direct", gamma=0.05, max_iter=50).fit(X, y)
    b = C.CMDSDML(mds="labels", gamma=0.05, max_iter=50).fit(X, y)
    np.testing.assert_allclose(_pairwise(a.ideal_points_), _pairwise(b.ideal_points_), atol=1e-8)


def _naive_authors_descent(X, Y, V, v2, s, mu, gamma, rho, sigma, r, iters):
    """The published code's loop (KNN.m + Armijo), written directly in d-space: c_next is the
    exact minimiser over c for the current L; the Armijo step moves L alone with the old c."""
    L, c = np.eye(s, X.shape[1]), 1.0
    for _ in range(iters):
        c_next = float(np.sum((X @ L.T) * Y) / np.sum(Y * Y))
        gL, _ = C.gradient(L, c, X, Y, V, v2, mu)
        g2 = (gL**2).sum()
        f = C.objective(L, c, X, Y, V, v2, mu)
        for m in range(1, r + 1):
            a = gamma * rho**m
            if C.objective(L - a * gL, c, X, Y, V, v2, mu) - f <= -sigma * a * g2:
                break
        L, c = L - a * gL, c_next
    return L, c


@pytest.mark.parametrize(("c_step", "naive", "n_iter"), [
    ("gradient", _naive_descent, 40),          # the Gram-form descent vs plain steepest descent
    ("authors", _naive_authors_descent, 30),       # the authors' c update vs their published loop
])
def test_descent_equals_its_naive_loop(c_step, naive, n_iter):
    X, y = three_level_ordinal(d=15)
    m = C.CMDSDML(s=3, K=3, mu=1e-3, gamma=0.1, max_iter=n_iter, tol=0.0, c_step=c_step).fit(X, y)
    Xc = X - X.mean(0)
    V = Xc[m.target_pairs_[:, 0]] - Xc[m.target_pairs_[:, 1]]
    L, c = naive(Xc, m.ideal_points_, V, (V**2).sum(1), 3, 1e-3, 0.1, 0.5, 0.05, 20, n_iter)
    assert m.n_iter_ == n_iter
    np.testing.assert_allclose(m.L_, L, rtol=1e-7, atol=1e-9)
    assert m.c_ == pytest.approx(c, rel=1e-9)


@pytest.mark.skipif(not jit.AVAILABLE, reason="numba is not installed")
@pytest.mark.parametrize("d", [6, 40])  # X itself as the factor (d <= n), or X Q (d > n)
@pytest.mark.parametrize(("c_step", "ftol", "tol", "cap"), [
    ("gradient", 0.0, 0.0, 520),      # past a chunk boundary (500)
    ("authors", 0.0, 0.0, 300),
    ("gradient", 1e-4, 0.0, 5000),    # stops on ftol
    ("gradient", 0.0, 5e-2, 5000),    # stops on tol
])
def test_compiled_descent_gives_the_numpy_iterates(d, c_step, ftol, tol, cap):
    X, y = three_level_ordinal(d=d)
    Xc = X - X.mean(0)
    m = C.CMDSDML(s=3, K=3, mu=1e-3, gamma=0.1)
    Y = C.align_signs(m.ideal_points(y), Xc[:, :3])
    pairs = C.target_neighbours(Xc, y, 3)
    args = (np.eye(3, d), Xc, Y, pairs, 1e-3, 0.1, 0.5, 0.05, 20, tol, cap, c_step, ftol, (0, 10, 501, 10**6))
    with jit.use_compiled(True):
        res = C.descend(*args)
    with jit.use_compiled(False):
        ref = C.descend(*args)
    assert (res.nit, res.n_trial_steps, res.status, res.message) == (ref.nit, ref.n_trial_steps, ref.status, ref.message)
    assert res.status == (0 if cap == 5000 else 1) and ("ftol" in res.message) == (ftol > 0)
    np.testing.assert_allclose(res.x, ref.x, rtol=1e-10, atol=1e-12)
    # the squared gradient norm as before (near zero after 520 steps: equal to 1e-12 absolute)
    assert res.c == pytest.approx(ref.c, rel=1e-10) and res.grad_norm**2 == pytest.approx(ref.grad_norm**2, rel=1e-8)
    assert res.fun == pytest.approx(ref.fun, rel=1e-10)
    rec, rec_ = res.checkpoints, ref.checkpoints
    assert rec.keys() == rec_.keys()
    for k in rec:
        np.testing.assert_allclose(rec[k][0], rec_[k][0], rtol=1e-10, atol=1e-12)


def test_ftol_stops_on_relative_decrease():
    X, y = three_level_ordinal()
    m = C.CMDSDML(gamma=0.1, max_iter=5000, tol=0.0, ftol=1e-3).fit(X, y)
    assert m.result_.success and "ftol" in m.result_.message and 1 < m.n_iter_ < 5000
    Xc = X - X.mean(0)
    V = Xc[m.target_pairs_[:, 0]] - Xc[m.target_pairs_[:, 1]]
    v2 = (V**2).sum(1)
    # one more iteration than the stop would still have decreased f by less than ftol
    prev = C.CMDSDML(gamma=0.1, max_iter=m.n_iter_ - 1, tol=0.0).fit(X, y)
    f_prev = C.objective(prev.L_, prev.c_, Xc, m.ideal_points_, V, v2, m.mu)
    assert (f_prev - m.objective_) / f_prev < 1e-3


@pytest.mark.parametrize("d", [12, 40])
def test_iteration_cap_by_cross_validation(d):
    from sklearn.decomposition import PCA as SkPCA
    from sklearn.model_selection import StratifiedKFold

    X, y = three_level_ordinal(n_per=10, d=d)
    caps = [5, 40, 200]
    m = C.CMDSDML(gamma=0.1, tol=0.0, max_iter=caps, cv=3, random_state=0).fit(X, y)
    assert m.max_iter_ == caps[int(np.argmin(m.cv_mae_))] and m.n_iter_ == m.max_iter_
    assert m.diagnostics_["max_iter"] == m.max_iter_ and m.diagnostics_["K"] == 5
    # brute force: separate fits with each cap on the same folds; when the 30 rows span the input
    # (d = 12) each fold is first put in its own training rows' principal components
    brute = []
    for cap in caps:
        e = 0.0
        for tr, va in StratifiedKFold(3, shuffle=True, random_state=0).split(X, y):
            Xtr, Xva = X[tr], X[va]
            if d < len(X):
                pca = SkPCA(svd_solver="full").fit(Xtr)
                flip = np.sign(pca.components_[np.arange(d), np.abs(pca.components_).argmax(axis=1)])
                Xtr, Xva = pca.transform(Xtr) * flip, pca.transform(Xva) * flip  # largest loading > 0
            f = C.CMDSDML(gamma=0.1, tol=0.0, max_iter=cap).fit(Xtr, y[tr])
            e += mae(y[va], knn_regress(f.transform(Xtr), y[tr], f.transform(Xva), 5)) / 3
        brute.append(e)
    np.testing.assert_allclose(m.cv_mae_, brute, rtol=1e-6)
    with pytest.raises(ValueError, match="folds need"):
        C.CMDSDML(max_iter=caps, cv=11).fit(X, y)


def test_fit_does_not_depend_on_sign_conventions():
    """Flipping input coordinates that L0 picks (a PCA's arbitrary signs) or the ideal points'
    signs (the eigen-solver's) gives the same distances in the learned space."""
    X, y = three_level_ordinal(d=10)
    ref = C.CMDSDML(gamma=0.1, max_iter=60, tol=0.0).fit(X, y)
    flipped = X * np.array([-1, 1, -1] + [1] * 7)
    m = C.CMDSDML(gamma=0.1, max_iter=60, tol=0.0).fit(flipped, y)
    np.testing.assert_allclose(_pairwise(m.transform(flipped)), _pairwise(ref.transform(X)), rtol=1e-8)
    Y = C.classical_mds(C.label_distance_matrix(y), 3)
    Z0 = (X - X.mean(0))[:, :3]
    A = C.align_signs(Y, Z0)
    np.testing.assert_array_equal(C.align_signs(-Y, Z0), A)
    assert (np.einsum("ik,ik->k", A, Z0) >= 0).all()


def test_the_numpy_loop_converges_only_on_a_small_gradient():
    """Before: the numpy loop's squared gradient norm, summed through the Gram matrix of the items
    and their pair differences, cancelled to a negative number: 'converged' at a gradient of
    2.4e-7 (tol 1e-8), grad_norm_ NaN. The oracle is the gradient of Eq. (10) written out here."""
    rng = np.random.default_rng(4)
    for _ in range(4):   # the fourth of a probe's generated problems
        n, d = int(rng.integers(12, 40)), int(rng.integers(2, 6))
        s = int(rng.integers(1, d + 1))
        y = rng.integers(1, 5, n).astype(float)
        X = rng.normal(size=(n, d))
        X[:, 0] += y
    with jit.use_compiled(False):
        m = C.CMDSDML(s=s, K=3, mu=0.5, max_iter=20000, tol=1e-8).fit(X, y)
    Xc, Y, P = X - X.mean(0), m.ideal_points_, m.target_pairs_
    V = Xc[P[:, 0]] - Xc[P[:, 1]]
    R, LV = Xc @ m.L_.T - m.c_ * Y, V @ m.L_.T
    e = (LV ** 2).sum(1) - (V ** 2).sum(1)
    grad = np.sqrt(((R.T @ Xc + 2 * (LV * e[:, None]).T @ V) ** 2).sum() + (R * Y).sum() ** 2)
    assert np.isfinite(m.grad_norm_)
    assert m.diagnostics_["status"] != "converged" or grad <= 1e-8 * (1 + 1e-6), (m.diagnostics_, grad)

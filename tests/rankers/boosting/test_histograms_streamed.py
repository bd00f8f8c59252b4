"""The boosters' memory bound: beyond ``max_held_pairs`` they hold no code per pair and fit the same models."""

import json
from pathlib import Path

import numpy as np
import pytest
from test_rankboost import assert_rankboost_rounds

from rankbench.rankers.boosting import _histograms
from rankbench.rankers.boosting._histograms import (HistogramUnits, PairedCodes, SortedUnits, grid_codes, grid_hist,
                                                    sorted_cum_hist, threshold_codes, weighted_hist)
from rankbench.rankers.boosting.elf import ELFAdaBoost
from rankbench.rankers.boosting.rankboost import RankBoost
from rankbench.utils import jit

needs_numba = pytest.mark.skipif(not jit.AVAILABLE, reason="numba is not installed")
RECORDED = Path(__file__).parent / "data" / "boosters_recorded.json"


def generated(kind: str):
    """Strip-histogram-like features (non-negative, each block of 8 dims summing to 1, a few shared
    values and exact zeros) of generated people; two cameras, or (multi-shot) several images per
    person and camera, or one camera-less set."""
    rng = np.random.default_rng(11)
    n, shots, cams_of = {"two": (40, 1, "ab"), "multi": (18, 2, "ab"), "nocams": (15, 3, None)}[kind]
    base = rng.gamma(0.6, size=(n, 48))
    y, cams, X = [], [], []
    for p in range(n):
        for cam in (cams_of or "a"):
            for _ in range(shots):
                x = base[p] * rng.uniform(0.5, 1.5, 48) + 0.3 * rng.gamma(0.6, size=48)
                x[rng.random(48) < 0.15] = 0.0
                x = np.round(x.reshape(6, 8) / x.reshape(6, 8).sum(1, keepdims=True) * 64) / 64
                X.append(x.ravel())
                y.append(p)
                cams.append(cam)
    return np.array(X), np.array(y), (None if cams_of is None else np.array(cams))


#: the recorded fits: (data, ranker, parameters)
CASES = {
    "rankboost_two": ("two", "rankboost", dict(n_rounds=40, random_state=0)),
    "rankboost_multi": ("multi", "rankboost", dict(n_rounds=30, n_thresholds=8, random_state=0)),
    "rankboost_nocams": ("nocams", "rankboost", dict(n_rounds=30, random_state=0)),
    "elf_both_two": ("two", "elf", dict(n_rounds=60, n_bins=8, units="both", n_thresholds=32, score="distance")),
    "elf_hist_two": ("two", "elf", dict(n_rounds=60, n_bins=8)),
    "elf_bin_multi": ("multi", "elf", dict(n_rounds=40, n_bins=8, units="bin", n_thresholds=16)),
    "elf_both_nocams": ("nocams", "elf", dict(n_rounds=40, n_bins=8, units="both", n_thresholds=16)),
}


def fit(case, **extra):
    data, ranker, params = CASES[case]
    X, y, cams = generated(data)
    make = RankBoost if ranker == "rankboost" else ELFAdaBoost
    return make(**{**params, **extra}).fit(X, y, cams)


def model(m):
    units = m.features_ if hasattr(m, "features_") else m.hists_
    out = {"units": [int(u) for u in units], "thresholds": [float(t) for t in m.thresholds_],
           "alphas": [float(a) for a in m.alphas_]}
    if hasattr(m, "scales_"):
        out["scales"] = [float(s) for s in m.scales_]
    return out


def assert_same_choices(got, want, rtol):
    assert got["units"] == want["units"]
    np.testing.assert_array_equal(got["thresholds"], want["thresholds"])
    np.testing.assert_allclose(got["alphas"], want["alphas"], rtol=rtol, atol=0)
    assert got.get("scales") == want.get("scales")


@pytest.mark.parametrize("case", sorted(CASES))
def test_held_and_streamed_fits_equal_the_models_recorded_before_streaming(case):
    """The fits recorded by the implementation before streaming existed (every pair's codes held):
    the held fit equals them to the last bit; the streamed one (no code per pair of the
    single-dimension units) chooses the same units and thresholds in every round, with alphas
    within 1e-12 (its sums add in each unit's sorted order, so their last bits differ)."""
    want = json.loads(RECORDED.read_text())[case]
    held, streamed = model(fit(case)), model(fit(case, max_held_pairs=1))
    assert held == want
    assert_same_choices(streamed, want, rtol=1e-12)
    assert len(want["alphas"]) >= 30


@needs_numba
@pytest.mark.parametrize("case", ["rankboost_two", "elf_both_nocams"])
def test_streamed_fit_is_the_same_compiled_numpy_or_threaded(case):
    with jit.use_compiled(False):
        ref = model(fit(case, max_held_pairs=1))
    assert model(fit(case, max_held_pairs=1, n_jobs=3)) == ref


def multishot_two_cameras(n=10, shots=3, d=6, seed=2):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(n), 2 * shots)
    cams = np.tile(np.repeat(["a", "b"], shots), n)
    X = rng.random((n, d))[y] + 0.3 * rng.random((len(y), d))
    return X, y, cams


@pytest.mark.parametrize("held", [True, False])
def test_elf_multishot_first_round_counts_every_positive_and_negative_pair(held):
    """Several images per person and camera: every cross-camera pair of the same person is a
    positive (shots^2 per person), every other one a negative; the first round's error is the
    brute-force count over all of them with half the weight on each side."""
    X, y, cams = multishot_two_cameras()
    e = ELFAdaBoost(n_rounds=1, n_bins=2, units="both", n_thresholds=8,
                    max_held_pairs=10 ** 6 if held else 1).fit(X, y, cams)
    a, b = np.flatnonzero(cams == "a"), np.flatnonzero(cams == "b")
    ia, ib = np.repeat(a, len(b)), np.tile(b, len(a))
    label = np.where(y[ia] == y[ib], 1.0, -1.0)
    assert (label > 0).sum() == 10 * 3 * 3
    w = np.where(label > 0, 0.5 / (label > 0).sum(), 0.5 / (label < 0).sum())
    Xf = X.astype(np.float32)
    dist = e._pair_distances(Xf[ia], Xf[ib])
    H = np.where(dist[:, :, None] <= e.candidate_thresholds_[None], 1.0, -1.0)
    err = np.einsum("p,puj->uj", w, (H != label[:, None, None]).astype(float))
    j = int(np.flatnonzero(e.candidate_thresholds_[e.hists_[0]] == np.float32(e.thresholds_[0]))[0])
    assert err[e.hists_[0], j] <= err.min() + 1e-12
    assert e.alphas_[0] == pytest.approx(0.5 * np.log((1 - err.min()) / err.min()), rel=1e-9)


@pytest.mark.parametrize("held", [True, False])
def test_rankboost_multishot_first_round_is_rankboost_over_every_crucial_pair(held):
    """Several images per person and camera: the crucial pairs are (query, any of its true
    matches in the other camera, any wrong match there); the first round maximises |r| over all."""
    X, y, cams = multishot_two_cameras(n=6, shots=2, d=4)
    rb = RankBoost(n_rounds=1, n_thresholds=6, random_state=0, max_held_pairs=10 ** 6 if held else 1).fit(X, y, cams)
    from rankbench.rankers._pair_grid import build_pair_grid

    thr = rb._thresholds(build_pair_grid(X, y, cams))
    Xf = X.astype(np.float32)
    r = np.zeros_like(thr, dtype=float)
    n = 0
    for i in range(len(y)):
        other = np.flatnonzero(cams != cams[i])
        for p in other[y[other] == y[i]]:
            for q in other[y[other] != y[i]]:
                r += (np.abs(Xf[i] - Xf[p])[:, None] <= thr).astype(float) - (np.abs(Xf[i] - Xf[q])[:, None] <= thr)
                n += 1
    assert n == 24 * 2 * 10  # 24 queries (both cameras), 2 true x 10 wrong matches each
    r /= n
    j = int(np.flatnonzero(thr[rb.features_[0]] == np.float32(rb.thresholds_[0]))[0])
    assert abs(r[rb.features_[0], j]) >= np.abs(r).max() - 1e-12
    assert rb.alphas_[0] == pytest.approx(0.5 * np.log((1 + r[rb.features_[0], j]) / (1 - r[rb.features_[0], j])),
                                          rel=1e-9)


@pytest.mark.parametrize("case", ["rankboost_two", "rankboost_multi", "elf_both_two", "elf_both_nocams"])
def test_drawing_every_negative_fits_the_recorded_models(case):
    """negatives_per_query=None is today's fit to the last bit, and k beyond any query's negatives
    (every one kept) is the same fit."""
    want = json.loads(RECORDED.read_text())[case]
    assert model(fit(case, negatives_per_query=None)) == want
    assert model(fit(case, negatives_per_query=10 ** 6)) == want


@pytest.mark.parametrize("case", ["rankboost_two", "rankboost_multi", "elf_both_two", "elf_bin_multi",
                                  "elf_both_nocams"])
def test_sampled_negatives_fit_the_same_model_held_or_streamed_and_by_seed(case):
    """The sample is drawn where the pairs are defined: the held and the streamed fit see the same
    pairs; the same random_state draws the same sample, another one another."""
    held = model(fit(case, negatives_per_query=3, random_state=1))
    assert_same_choices(model(fit(case, negatives_per_query=3, random_state=1, max_held_pairs=1)), held, rtol=1e-12)
    assert model(fit(case, negatives_per_query=3, random_state=1)) == held
    assert model(fit(case, negatives_per_query=3, random_state=2)) != held


@pytest.mark.parametrize("held", [True, False])
def test_rankboost_with_sampled_negatives_is_rankboost_over_the_drawn_crucial_pairs(held):
    """Several images per person and camera, k = 3: the crucial pairs are (query, each of its true
    matches, each of the 3 wrong matches it drew), read off the grid the same seed draws; each round
    maximises |r| over them, and D is updated pair by pair (Freund et al. 2003, Fig. 1)."""
    from sklearn.utils import check_random_state

    from rankbench.rankers._pair_grid import build_pair_grid

    X, y, cams = multishot_two_cameras(n=6, shots=2, d=4)
    rb = RankBoost(n_rounds=5, n_thresholds=6, random_state=3, negatives_per_query=3,
                   max_held_pairs=10 ** 6 if held else 1).fit(X, y, cams)
    P = build_pair_grid(X, y, cams, negatives_per_query=3, random_state=check_random_state(3))
    thr = rb._thresholds(P)
    Xf = X.astype(np.float32)
    h = lambda i, j: (np.abs(Xf[i] - Xf[j])[:, None] <= thr).astype(float)  # noqa: E731
    H1, H0 = [], []
    for side, is_row in P.sides():
        mine, other = (P.rows, P.cols) if is_row else (P.cols, P.rows)
        for q in range(len(mine)):
            i = mine[q]
            drawn = other[np.flatnonzero(side.neg[q])]
            assert len(drawn) == 3 and (y[drawn] != y[i]).all()
            for p in np.flatnonzero((y == y[i]) & (cams != cams[i])):  # every true match kept
                for n in drawn:
                    H1.append(h(i, p))
                    H0.append(h(i, n))
    H1, H0 = np.array(H1), np.array(H0)
    assert len(H1) == 24 * 2 * 3
    assert_rankboost_rounds(rb, thr, H1, H0)
    assert len(rb.alphas_) == 5


@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=needs_numba)])
def test_sorted_units_give_the_cumulative_histogram_of_every_pair(compiled, monkeypatch):
    """Brute force over the grid's codes (:func:`grid_codes`, itself tested against searchsorted):
    ties at a threshold, equal column values, rows equal to a column or to each other; the bounds and the sums of
    the compiled loops equal the numpy reference's to the last bit, for any number of threads and
    rows in blocks of lanes (four full blocks and a part)."""
    monkeypatch.setattr(_histograms, "LANES", 4)
    rng = np.random.default_rng(5)
    nr, nc, U, k = 19, 23, 7, 9
    R, C = rng.random((nr, U)).astype(np.float32), rng.random((nc, U)).astype(np.float32)
    C[3], C[5, :4], C[6, :4] = R[2], 0.5, 0.5
    R[7], R[8, :3], R[9, :3] = R[2], R[1, :3], 0.5   # rows sharing values (their bounds held once)
    thr = np.sort(np.r_["1", rng.random((U, k - 2)) * 0.6, np.abs(R[1] - C[4])[:, None]], axis=1).astype(np.float32)
    W = rng.standard_normal((nr, nc)) * np.exp(rng.standard_normal((nr, nc)) * 3)
    codes = grid_codes(R, C, thr)
    with jit.use_compiled(compiled):
        units = SortedUnits.of(R, C, thr, n_jobs=2)
        got = sorted_cum_hist(units, W, n_jobs=3)
    want = np.array([[W.ravel()[codes[u] <= j].sum() for j in range(k)] for u in range(U)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(W).sum())
    for u in range(U):
        for j in range(k):
            np.testing.assert_array_equal(units.within(u, j).ravel(), codes[u] <= j)
    assert len(units.bounds) == sum(len(np.unique(R[:, u])) for u in range(U)) < nr * U
    if compiled:
        with jit.use_compiled(False):
            ref = SortedUnits.of(R, C, thr)
            np.testing.assert_array_equal(units.bounds, ref.bounds)
            np.testing.assert_array_equal(got, sorted_cum_hist(ref, W))


@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=needs_numba)])
@pytest.mark.parametrize("n_bins,distance,k", [(16, "l1", 31), (16, "bhattacharyya", 15), (8, "l1", 9),
                                               (12, "bhattacharyya", 20), (5, "l1", 4)])
def test_histogram_units_give_the_histograms_of_every_pairs_codes(compiled, n_bins, distance, k):
    """Every (row, column) pair's code brute force: the unit's distance as ELF's held fit computes
    it (:meth:`ELFAdaBoost._hist_distances`, pair by pair), coded by searchsorted; the histograms
    equal the held codes' (:func:`weighted_hist` of :class:`PairedCodes`, row-major) to the last
    bit, compiled or not, for any number of threads, with an odd number of units, ties at a
    threshold, equal images, empty bins and zero weights; ``within`` is code <= j."""
    rng = np.random.default_rng(7)
    nr, nc, U = 13, 600, 7   # columns beyond one tile of the compiled loop
    R, C = rng.gamma(0.5, size=(nr, U * n_bins)), rng.gamma(0.5, size=(nc, U * n_bins))
    R[rng.random(R.shape) < 0.2], C[3] = 0.0, R[2]
    R, C = R.astype(np.float32), C.astype(np.float32)
    e = ELFAdaBoost(n_bins=n_bins, distance=distance)
    rows, cols = np.repeat(np.arange(nr), nc), np.tile(np.arange(nc), nr)
    D = e._hist_distances(R[rows], C[cols])                                       # (pairs, U) float32
    thr = np.quantile(D, np.linspace(0, 1, k + 2)[1:-1], axis=0).T
    thr[:, 1] = D[5, :]                                                            # a pair exactly at a threshold
    thr = np.sort(thr, axis=1).astype(np.float32)
    codes = np.stack([np.searchsorted(thr[u], D[:, u], side="left") for u in range(U)]).astype(np.uint8)
    W = rng.standard_normal((nr, nc)) * np.exp(rng.standard_normal((nr, nc)) * 3)
    W[rng.random(W.shape) < 0.1] = 0.0
    with jit.use_compiled(compiled):
        units = HistogramUnits.of(R, C, n_bins, thr, distance)
        got = grid_hist(units, W, n_jobs=3)
    np.testing.assert_array_equal(got, weighted_hist(PairedCodes.of(codes, k + 1), W.ravel()))
    np.testing.assert_allclose(got, [np.bincount(codes[u], W.ravel(), minlength=k + 1) for u in range(U)],
                               rtol=1e-12, atol=1e-12 * np.abs(W).sum())
    for u in range(U):
        for j in (0, 1, k // 2, k):
            np.testing.assert_array_equal(units.within(u, j).ravel(), codes[u] <= j)


@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=needs_numba)])
@pytest.mark.parametrize("distance", ["l1", "bhattacharyya"])
def test_histogram_units_code_every_distance_as_the_held_fit_counts(compiled, distance):
    """The streamed histograms code each distance where they compute it; the oracle is the held
    fit's count of the thresholds below it (:func:`threshold_codes`), on distances and thresholds
    that a faster search could get wrong: NaN distances (negative bins under Bhattacharyya),
    infinite ones (float32 overflow under L1), many equal thresholds, 0.0 and -0.0, a subnormal
    one, a span of 60 decades, thresholds a few ulps apart, and NaN or negative ones."""
    rng = np.random.default_rng(3)
    nr, nc, U, b = 9, 530, 8, 16
    R, C = rng.gamma(0.5, size=(nr, U * b)), rng.gamma(0.5, size=(nc, U * b))
    R[0, :b], C[1, :b] = -1.0, 3e37            # a NaN Bhattacharyya distance, an infinite L1 one
    C[2] = R[3]                                 # distance 0
    R, C = R.astype(np.float32), C.astype(np.float32)
    units = HistogramUnits.of(R, C, b, np.zeros((U, 0), np.float32), distance)
    with np.errstate(invalid="ignore", over="ignore"):
        D = np.concatenate([np.stack([units.distances(u, slice(r, r + 1))[0] for u in range(U)], -1)
                            for r in range(nr)])    # (nr * nc, U) row-major, numpy's arithmetic
    k = 20
    thr = np.sort(np.quantile(D[np.isfinite(D).all(1)], np.linspace(0.02, 0.98, k), axis=0).T, axis=1)
    thr = thr.astype(np.float32)
    thr[0, 3:12] = thr[0, 3]                                           # equal thresholds
    thr[1, :4] = [-0.0, 0.0, 0.0, np.float32(1e-44)]                   # zeros and a subnormal
    thr[1] = np.sort(thr[1])
    thr[2] = np.logspace(-30, 30, k, dtype=np.float32)                 # every bucket far apart
    d = np.float32(np.median(D[:, 3]))
    thr[3] = np.sort(d + np.arange(-10, 10).astype(np.float32) * np.spacing(d))  # a few ulps apart
    thr[4, -3:] = np.nan                                               # counted in order
    thr[5] = np.sort(thr[5] - np.float32(thr[5, 10]))                  # negative thresholds
    codes = threshold_codes(D, thr).T
    W = rng.standard_normal((nr, nc))
    with jit.use_compiled(compiled), np.errstate(invalid="ignore", over="ignore"):
        got = grid_hist(HistogramUnits.of(R, C, b, thr, distance), W, n_jobs=2)
    np.testing.assert_array_equal(got, weighted_hist(PairedCodes.of(codes, k + 1), W.ravel()))
    assert np.isnan(D[:, 0]).any() if distance == "bhattacharyya" else np.isinf(D[:, 0]).any()

@pytest.mark.parametrize("distance", ["l1", "bhattacharyya"])
def test_elf_streamed_fit_chooses_as_the_held_one_with_16_bins(distance):
    """ELF's own histograms (16 bins: the compiled loop's path for them), both distances: the
    streamed fit (no code held per pair) chooses the held fit's units and thresholds in every
    round, alphas within 1e-12."""
    rng = np.random.default_rng(4)
    n, d = 30, 5 * 16
    base = rng.gamma(0.6, size=(n, d))
    X = np.concatenate([base + rng.gamma(0.6, size=(n, d)) for _ in "ab"])
    X = np.round(X / X.reshape(2 * n, 5, 16).sum(2).repeat(16, axis=1) * 64) / 64
    y, cams = np.tile(np.arange(n), 2), np.repeat(["a", "b"], n)
    params = dict(n_rounds=30, units="both", n_thresholds=24, distance=distance)
    held = model(ELFAdaBoost(**params).fit(X, y, cams))
    assert_same_choices(model(ELFAdaBoost(**params, max_held_pairs=1).fit(X, y, cams)), held, rtol=1e-12)
    assert len(held["alphas"]) == 30 and min(held["units"][:10]) < 5 <= max(held["units"])


@pytest.mark.realdata
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_real_viper_streamed_fits_choose_as_held_ones(shared_data, seed):
    """VIPeR p = 316 (316 training people, the 2784-d strip feature), the configs' RankBoost and
    ELF: held (the default) and streamed fits choose the same units and thresholds, alphas to 1e-12."""
    from rankbench.datasets.viper import VIPeR
    from rankbench.features.elf_strips import ELFStrips

    if not (shared_data / "viper").is_dir():
        pytest.skip("no viper folder")
    ds = VIPeR(check_images=False).load(str(shared_data))
    y, cams = ds.column("identity"), ds.column("cam")
    train = np.isin(y, np.random.default_rng(seed).permutation(np.unique(y))[316:])
    X = ELFStrips().extract(ds.subset(np.flatnonzero(train)))
    y, cams = y[train], cams[train]
    for make in (lambda **k: RankBoost(random_state=0, **k),
                 lambda **k: ELFAdaBoost(units="both", n_thresholds=32, score="distance", **k)):
        held, streamed = model(make().fit(X, y, cams)), model(make(max_held_pairs=1).fit(X, y, cams))
        assert_same_choices(streamed, held, rtol=1e-12)

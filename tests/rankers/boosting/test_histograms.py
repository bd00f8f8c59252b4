"""Threshold codes and the weighted cumulative histograms of RankBoost and ELF, compiled and numpy."""

import numpy as np
import pytest

from rankbench.rankers.boosting import elf
from rankbench.rankers.boosting._histograms import (
    PairedCodes,
    grid_codes,
    quantiles,
    reweighted_hist,
    threshold_codes,
    weighted_cum_hist,
    weighted_hist,
)
from rankbench.rankers.boosting.elf import ELFAdaBoost
from rankbench.rankers.boosting.rankboost import RankBoost
from rankbench.utils import jit
from rankbench.utils.threads import in_threads

needs_numba = pytest.mark.skipif(not jit.AVAILABLE, reason="numba is not installed")


@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=needs_numba)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_threshold_codes_match_a_searchsorted_per_unit(compiled, dtype):
    rng = np.random.default_rng(3)
    thr = np.sort(rng.random((5, 7)) * 2, axis=1).astype(dtype)
    D = np.concatenate([rng.random((50, 5)) * 3, thr[None, :, 2], np.full((1, 5), 1e9)]).astype(dtype)
    D[7] = np.nextafter(thr[:, 4], np.inf)  # just above a threshold
    with jit.use_compiled(compiled):
        got = threshold_codes(D, thr)
    want = np.stack([np.searchsorted(thr[u], D[:, u], side="left") for u in range(5)], axis=1)
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, want)  # ties go to the threshold itself (d <= theta)
    assert (got[-1] == 7).all()                 # beyond every threshold: the "always +1" code


@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=needs_numba)])
@pytest.mark.parametrize("U,n_codes", [(1, 2), (5, 16), (6, 17), (3, 256)])
def test_paired_codes_give_back_every_unit(compiled, U, n_codes):
    rng = np.random.default_rng(U)
    codes = rng.integers(0, n_codes, (U, 400)).astype(np.uint8)
    codes[:, 0] = n_codes - 1  # the largest code of each unit
    with jit.use_compiled(compiled):
        paired = PairedCodes.of(codes, n_codes, n_jobs=2)
    assert paired.data.shape == ((U + 1) // 2, 400)
    assert paired.data.dtype == (np.uint8 if n_codes <= 16 else np.uint16)
    for u in range(U):
        np.testing.assert_array_equal(paired.unit(u), codes[u])
        np.testing.assert_array_equal(paired.around(u).unit(u % 2), codes[u])
    with pytest.raises(IndexError):
        paired.unit(U)


def test_paired_codes_refuse_a_code_beyond_n_codes():
    with pytest.raises(ValueError, match="not below n_codes=4"):
        PairedCodes.of(np.array([[0, 4]], dtype=np.uint8), 4)


@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=needs_numba)])
@pytest.mark.parametrize("U", [1, 4, 7, 13])
def test_cumulative_histogram_is_the_sum_of_weights_at_or_below_each_code(compiled, U):
    rng = np.random.default_rng(U)
    n, bins = 301, 9
    codes = rng.integers(0, bins, (U, n)).astype(np.uint8)
    w = rng.standard_normal(n)
    with jit.use_compiled(compiled):
        got = weighted_cum_hist(PairedCodes.of(codes, bins), w)
    want = np.array([[w[codes[u] <= j].sum() for j in range(bins)] for u in range(U)])  # brute force
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


@needs_numba
@pytest.mark.parametrize("n_codes", [16, 32])
def test_compiled_histogram_equals_the_numpy_reference_to_the_last_bit(n_codes):
    """The same joint histograms (bincount's order in every bin) and the same marginal sums, for
    any number of threads."""
    rng = np.random.default_rng(0)
    codes = rng.integers(0, n_codes, (11, 5000)).astype(np.uint8)
    codes[3] = n_codes - 1  # one unit in a single bin; a code at the last bin
    w = rng.random(5000) * np.exp(rng.standard_normal(5000) * 5)  # weights of very different sizes
    paired = PairedCodes.of(codes, n_codes)
    with jit.use_compiled(True):
        a = weighted_cum_hist(paired, w)
        a3 = weighted_cum_hist(paired, w, n_jobs=3)
    with jit.use_compiled(False):
        b = weighted_cum_hist(paired, w)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a3, b)
    single = [np.bincount(codes[u], weights=w, minlength=n_codes) for u in range(11)]  # one unit at a time
    with jit.use_compiled(False):
        np.testing.assert_allclose(weighted_hist(paired, w), single, rtol=1e-12, atol=0)


@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=needs_numba)])
@pytest.mark.parametrize("U", [3, 8, 13])
def test_histogram_of_some_rows_is_the_histogram_over_those_rows_to_the_last_bit(compiled, U):
    rng = np.random.default_rng(U)
    codes = rng.integers(0, 12, (U, 700)).astype(np.uint8)
    w = rng.standard_normal(700) * np.exp(rng.standard_normal(700) * 4)
    rows = np.flatnonzero(rng.random(700) < 0.3)
    with jit.use_compiled(compiled):
        got = weighted_hist(PairedCodes.of(codes, 12), w, n_jobs=2, rows=rows)
        want = weighted_hist(PairedCodes.of(codes[:, rows], 12), w[rows])
    np.testing.assert_array_equal(got, want)
    brute = np.stack([np.bincount(codes[u, rows], weights=w[rows], minlength=12) for u in range(U)])
    np.testing.assert_allclose(got, brute, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("share", [0.1, 0.9])
def test_reweighted_histograms_equal_the_histograms_of_the_reweighted_weights(share):
    """Either group re-read (the smaller one), up to rounding."""
    rng = np.random.default_rng(4)
    codes = PairedCodes.of(rng.integers(0, 10, (9, 500)).astype(np.uint8), 10)
    w = rng.standard_normal(500)
    moved = rng.random(500) < share
    got = reweighted_hist(weighted_hist(codes, w), codes, w, moved, 0.7, 2.5)
    want = weighted_hist(codes, w * np.where(moved, 2.5, 0.7))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-13)


@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=needs_numba)])
def test_elf_on_reweighted_histograms_fits_the_model_of_fresh_histograms_every_round(compiled, monkeypatch):
    """ELF re-weights its histograms between fresh ones (_REFRESH rounds apart) and decides near
    ties afresh: the same rounds, thresholds and weights, to the bit, as histograms computed
    afresh every round. Duplicated units and empty bins make exact ties."""
    X, y, cams = _reid_problem(n=30, d=12)
    X[:, 10] = X[:, 2]                       # a unit equal to another: tied in every round
    X[:, 11] = np.round(X[:, 11], 1)         # few distinct values: empty bins
    make = lambda: ELFAdaBoost(n_rounds=60, n_bins=3, units="both", n_thresholds=16, score="distance")
    with jit.use_compiled(compiled):
        monkeypatch.setattr(elf, "_REFRESH", 1)
        fresh = make().fit(X, y, cams)
        monkeypatch.setattr(elf, "_REFRESH", 25)
        reweighted = make().fit(X, y, cams)
        near = []
        monkeypatch.setattr(elf, "_clear_minimum", lambda *a: near.append(1) or False)
        always_afresh = make().fit(X, y, cams)   # every re-weighted choice re-decided: the fresh path
    for attr in ("hists_", "thresholds_", "alphas_", "scales_"):
        np.testing.assert_array_equal(getattr(reweighted, attr), getattr(fresh, attr))
        np.testing.assert_array_equal(getattr(always_afresh, attr), getattr(fresh, attr))
    assert len(fresh.alphas_) == 60 and near


def _reid_problem(n=25, d=9, seed=5):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(n), 2)
    cams = np.tile(["a", "b"], n)
    X = rng.random((2 * n, d))
    X[:, :3] = rng.random((n, 3))[y] + 0.05 * rng.random((2 * n, 3))
    return X, y, cams


@needs_numba
@pytest.mark.parametrize("make", [
    lambda: RankBoost(n_rounds=25, n_thresholds=16, random_state=0),
    lambda: ELFAdaBoost(n_rounds=25, n_bins=3, units="both", n_thresholds=16),
    lambda: ELFAdaBoost(n_rounds=25, n_bins=3, units="hist", n_thresholds=8, negatives_per_query=2, random_state=1),
], ids=["rankboost", "elf", "elf-sampled"])
def test_compiled_and_numpy_boosters_fit_the_same_model(make):
    X, y, cams = _reid_problem()
    with jit.use_compiled(True):
        a = make().fit(X, y, cams)
    with jit.use_compiled(False):
        b = make().fit(X, y, cams)
    for attr in ("features_", "hists_", "thresholds_", "alphas_"):
        if hasattr(a, attr):
            np.testing.assert_array_equal(getattr(a, attr), getattr(b, attr))
    assert len(a.alphas_) == 25


@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=needs_numba)])
def test_grid_codes_are_the_threshold_codes_of_every_difference(compiled):
    rng = np.random.default_rng(7)
    R, C = rng.random((5, 6)).astype(np.float32), rng.random((4, 6)).astype(np.float32)
    thr = np.sort(rng.random((6, 9)), axis=1).astype(np.float32)
    thr[:, 4] = np.abs(R[2] - C[1])
    thr = np.sort(thr, axis=1)  # some differences exactly at a threshold
    with jit.use_compiled(compiled):
        got = grid_codes(R, C, thr, n_jobs=2, block=2)
    D = np.abs(R[:, None, :] - C[None, :, :]).reshape(-1, 6)  # (r, c) row-major
    want = np.stack([np.searchsorted(thr[u], D[:, u], side="left") for u in range(6)])
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("n_jobs", [1, 3])
def test_quantiles_equal_numpys_quantile(axis, n_jobs):
    rng = np.random.default_rng(axis)
    D = (rng.standard_normal((300, 601)) ** 3).astype(np.float32)
    D[:, 5] = 1.0  # a constant unit
    D = D if axis == 1 else np.ascontiguousarray(D.T)
    levels = np.linspace(0, 1, 17)[1:]
    want = np.quantile(D, levels, axis=axis).T
    got = quantiles(D.copy(), levels, axis=axis, n_jobs=n_jobs)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n", [1, 7, 8, 9, 17, 100])
@pytest.mark.parametrize("n_jobs", [1, 2, 5])
def test_in_threads_covers_the_range_in_order(n, n_jobs):
    parts = in_threads(lambda a, b: list(range(a, b)), n, n_jobs, grain=8)
    assert sum(parts, []) == list(range(n))
    assert all(parts)  # no empty range


@needs_numba
@pytest.mark.parametrize("make", [
    lambda j: RankBoost(n_rounds=20, n_thresholds=16, random_state=0, n_jobs=j),
    lambda j: ELFAdaBoost(n_rounds=20, n_bins=3, units="both", n_thresholds=16, n_jobs=j),
], ids=["rankboost", "elf"])
def test_threads_do_not_change_the_fitted_model(make):
    X, y, cams = _reid_problem(n=40, d=30)
    a, b = make(1).fit(X, y, cams), make(3).fit(X, y, cams)
    for attr in ("features_", "hists_", "thresholds_", "alphas_", "scales_"):
        if hasattr(a, attr):
            np.testing.assert_array_equal(getattr(a, attr), getattr(b, attr))


@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=needs_numba)])
def test_rankboost_codes_its_units_in_blocks_without_changing_the_model(compiled, monkeypatch):
    """RankBoost codes and pairs a block of units at a time: blocks of 4 units over 31 (the last
    block odd, the last unit unpaired) fit the model of one block."""
    from rankbench.rankers.boosting import rankboost

    X, y, cams = _reid_problem(n=20, d=31)
    make = lambda: RankBoost(n_rounds=15, n_thresholds=16, random_state=0)
    with jit.use_compiled(compiled):
        one = make().fit(X, y, cams)
        monkeypatch.setattr(rankboost, "_UNITS_PER_BLOCK", 4)
        blocks = make().fit(X, y, cams)
    for attr in ("features_", "thresholds_", "alphas_"):
        np.testing.assert_array_equal(getattr(blocks, attr), getattr(one, attr))
    assert len(set(one.features_ // 4)) > 1  # units of several blocks chosen

"""ELF's AdaBoost over histogram and single-dimension units and its variants."""


import numpy as np
import pytest

from rankbench.errors import ParameterError
from rankbench.features.elf_regions import ELFRegions
from rankbench.metrics import cmc_curve
from rankbench.rankers.boosting.elf import ELFAdaBoost

SMALL = dict(n_cells=4, heights=(1, 2, 4), stride=0.5, n_bins=8,
             gabor_bank=((0.3, 0.0, 4, 2),), schmid_bank=((2, 1),))


def toy(n=20, nb=4, H=3, seed=7):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(n), 2)
    cams = np.tile(["a", "b"], n)
    X = rng.random((2 * n, H * nb))
    X[:, nb:2 * nb] = rng.random((n, nb))[y] + 0.01 * rng.random((2 * n, nb))  # histogram 1 is stable
    return X, y, cams


def rank5(e, X, y, cams):
    S = e.similarity(X[cams == "a"], X[cams == "b"])
    assert S.shape == ((cams == "a").sum(), (cams == "b").sum())
    return cmc_curve(S, y[cams == "a"], y[cams == "b"])[4]


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


def test_sampled_negatives_find_the_stable_histogram():
    X, y, cams = toy()
    e = ELFAdaBoost(n_rounds=15, n_bins=4, negatives_per_query=2, random_state=0).fit(X, y, cams)
    assert e.hists_[0] == 1
    assert len(e.alphas_) == len(e.thresholds_) == len(e.scales_) and (e.alphas_ > 0).all()
    assert rank5(e, X, y, cams) >= 0.9


@pytest.mark.parametrize("units,first", [("bin", range(4, 8)), ("both", [1, *range(3 + 4, 3 + 8)])])
@pytest.mark.parametrize("negatives", [None, 3])
def test_bin_units_pick_a_dimension_of_the_stable_histogram(units, first, negatives):
    X, y, cams = toy()
    e = ELFAdaBoost(n_rounds=20, n_bins=4, units=units, negatives_per_query=negatives, random_state=0).fit(X, y, cams)
    assert e.hists_[0] in list(first)  # unit index: histograms first (for "both"), then dims
    assert rank5(e, X, y, cams) >= 0.9


def test_unit_distances_agree_between_grid_and_pairs():
    X, y, cams = toy()
    e = ELFAdaBoost(n_bins=4, units="both")
    A, B = X[cams == "a"], X[cams == "b"]
    G = e._grid_distances(A, B)
    np.testing.assert_allclose(G[np.arange(len(A)), np.arange(len(A))], e._pair_distances(A, B), rtol=1e-6)
    assert G.shape[2] == 3 + 12


@pytest.mark.parametrize("score", ["margin", "tanh"])
def test_real_valued_scores_keep_the_vote_sign_and_break_ties(score):
    X, y, cams = toy()
    vote = ELFAdaBoost(n_rounds=10, n_bins=4).fit(X, y, cams)
    soft = ELFAdaBoost(n_rounds=10, n_bins=4, score=score).fit(X, y, cams)
    np.testing.assert_array_equal(vote.hists_, soft.hists_)  # training does not depend on the score
    A, B = X[cams == "a"], X[cams == "b"]
    Sv, Ss = vote.similarity(A, B), soft.similarity(A, B)
    assert len(np.unique(Ss)) > len(np.unique(Sv))
    if score == "tanh":  # each term stays within +-alpha and keeps its vote's sign
        assert np.all(np.abs(Ss) <= np.abs(vote.alphas_).sum() + 1e-9)
    assert rank5(soft, X, y, cams) >= 0.9


def test_bad_parameters_raise():
    X, y, cams = toy()
    for kw in ({"units": "pixels"}, {"score": "rank"}, {"negatives_per_query": 0}, {"negatives_per_query": -2},
               {"negatives_per_query": 1.5}):
        with pytest.raises(ParameterError):
            ELFAdaBoost(n_rounds=3, n_bins=4, **kw).fit(X, y, cams)


def test_elf_ranker_boosts_over_region_histograms():
    # two cameras, identity encoded in the colour of the legs (bottom half) only
    rng = np.random.default_rng(1)
    n = 10
    colours = rng.integers(0, 256, (n, 3))
    ex = ELFRegions(**SMALL)
    X, y, cams = [], [], []
    for i in range(n):
        for cam in "ab":
            im = rng.integers(0, 256, (16, 6, 3)).astype(np.uint8)
            im[8:] = np.clip(colours[i] + rng.normal(0, 4, (8, 6, 3)), 0, 255).astype(np.uint8)
            X.append(ex.transform_image(im))
            y.append(i)
            cams.append(cam)
    X, y, cams = np.array(X), np.array(y), np.array(cams)
    e = ELFAdaBoost(n_rounds=20, n_bins=8, n_thresholds=16).fit(X, y, cams)
    assert len(e.alphas_) > 0 and (e.hists_ < X.shape[1] // 8).all()
    # chosen regions lie in the bottom half: region index -> (start, height) -> start >= 2 cells
    R = len(ex.regions())
    first = ex.regions()[int(e.hists_[0]) % R]
    assert first[0] >= 2
    S = e.similarity(X[cams == "a"], X[cams == "b"])
    assert S.shape == (n, n)
    assert (S.argmax(1) == np.arange(n)).mean() >= 0.8


def assert_adaboost_rounds(e, X, ia, ib, label):
    """Each round of ``e`` picks the (unit, threshold) of least weighted error over the pairs
    (ia, ib), counted pair by pair from a balanced start, with AdaBoost's alpha and re-weighting."""
    Xf = X.astype(np.float32)
    dist = e._pair_distances(Xf[ia], Xf[ib])                     # (pairs, units)
    thr = e.candidate_thresholds_
    w = np.where(label > 0, 0.5 / (label > 0).sum(), 0.5 / (label < 0).sum())
    for unit, cut, alpha in zip(e.hists_, e.thresholds_, e.alphas_):
        H = np.where(dist[:, :, None] <= thr[None, :, :], 1.0, -1.0)  # (pairs, units, thresholds)
        err = np.einsum("p,puj->uj", w, (H != label[:, None, None]).astype(float)) / w.sum()
        j = int(np.flatnonzero(thr[unit] == np.float32(cut))[0])
        assert err[unit, j] <= err.min() + 1e-12
        assert alpha == pytest.approx(0.5 * np.log((1 - err[unit, j]) / err[unit, j]), rel=1e-9)
        w = w * np.exp(-alpha * label * H[:, unit, j])
        w /= w.sum()


@pytest.mark.parametrize("units", ["hist", "both"])
def test_weighted_error_equals_a_direct_count_over_every_pair(units):
    """Each round of the full-grid fit picks the (unit, threshold) of least weighted error counted
    pair by pair (Freund & Schapire's AdaBoost, balanced start), and re-weights every pair."""
    X, y, cams = toy(n=12)
    X[:, 4:8] += 0.6 * np.random.default_rng(1).random((24, 4))  # no perfect unit: every error > 0
    e = ELFAdaBoost(n_rounds=6, n_bins=4, n_thresholds=8, units=units).fit(X, y, cams)
    a, b = np.flatnonzero(cams == "a"), np.flatnonzero(cams == "b")
    ia, ib = np.repeat(a, len(b)), np.tile(b, len(a))  # every cross-camera pair
    label = np.where(y[ia] == y[ib], 1.0, -1.0)
    assert_adaboost_rounds(e, X, ia, ib, label)


@pytest.mark.parametrize("held", [True, False])
def test_sampled_fit_is_adaboost_over_the_drawn_pairs(held):
    """With k negatives per query, the fit is AdaBoost (balanced start) over every same-person pair
    and the different-person pairs some query drew (read off the grid the same seed draws), counted
    pair by pair; held and streamed fits alike."""
    from sklearn.utils import check_random_state

    from rankbench.rankers._pair_grid import build_pair_grid

    X, y, cams = toy(n=10)
    X[:, 4:8] += 0.6 * np.random.default_rng(1).random((20, 4))  # no perfect unit: every error > 0
    e = ELFAdaBoost(n_rounds=6, n_bins=4, n_thresholds=8, units="both", negatives_per_query=2, random_state=5,
                    max_held_pairs=10 ** 6 if held else 1).fit(X, y, cams)
    P = build_pair_grid(X, y, cams, negatives_per_query=2, random_state=check_random_state(5))
    drawn = P.row_side.neg | P.col_side.neg.T
    assert (drawn.sum(1) >= 2).all() and (P.row_side.neg.sum(1) == 2).all() and (P.col_side.neg.sum(1) == 2).all()
    same = y[P.rows][:, None] == y[P.cols][None, :]
    ia, ib = np.nonzero(same | drawn)
    ia, ib = P.rows[ia], P.cols[ib]
    label = np.where(y[ia] == y[ib], 1.0, -1.0)
    assert (label > 0).sum() == 10 and 2 * 10 <= (label < 0).sum() <= 4 * 10
    assert_adaboost_rounds(e, X, ia, ib, label)
    assert len(e.alphas_) == 6


def test_distance_score_is_the_weighted_sum_of_chosen_distances():
    X, y, cams = toy()
    e = ELFAdaBoost(n_rounds=8, n_bins=4, units="both", score="distance").fit(X, y, cams)
    A, B = X[cams == "a"], X[cams == "b"]
    expect = np.zeros((len(A), len(B)))
    for u, th, a in zip(e.hists_, e.thresholds_, e.alphas_):
        if not np.isfinite(th):
            continue
        for i in range(len(A)):
            for j in range(len(B)):
                d = np.abs(A[i, u * 4:(u + 1) * 4] - B[j, u * 4:(u + 1) * 4]).sum() if u < 3 \
                    else abs(A[i, u - 3] - B[j, u - 3])
                expect[i, j] -= a * d
    np.testing.assert_allclose(e.similarity(A, B), expect, rtol=1e-5, atol=1e-6)
    assert rank5(e, X, y, cams) >= 0.9


@pytest.mark.parametrize("units", ["hist", "bin", "both"])
@pytest.mark.parametrize("distance", ["l1", "bhattacharyya"])
def test_scoring_reads_only_the_chosen_units_with_the_same_numbers(units, distance):
    """The scores are computed from the chosen units' distances alone: the same bits as every unit's
    distances computed (the oracle: ``_unit_dist`` over each pair) and the chosen ones read."""
    X, y, cams = toy(n=12, nb=4, H=5, seed=3)
    e = ELFAdaBoost(n_rounds=12, n_bins=4, units=units, distance=distance, block=5).fit(X, y, cams)
    Q, G = X[cams == "a"], X[cams == "b"]
    used = np.unique(e.hists_)
    every = np.stack([[e._unit_dist(q, g) for g in G] for q in Q]).astype(np.float32)
    assert np.array_equal(e._grid_distances(Q, G, hists=used), every[..., used])
    assert np.array_equal(e._grid_distances(Q, G), every)
    units_all = np.arange(every.shape[-1])[::-1]      # any order, repeats
    some = e._some_units_dist(Q[:, None], G[None], np.r_[units_all, units_all[:3]])
    assert np.array_equal(some.astype(np.float32), every[..., np.r_[units_all, units_all[:3]]])


@pytest.mark.parametrize("cams, n_pos", [(None, 3 * 12), ("abbc", 3 * 10), ("aabc", 3 * 10)])
def test_the_training_pairs_are_other_camera_pairs_however_many_cameras(cams, n_pos):
    # with three cameras a person's two images in one camera were taken as a positive pair
    from rankbench.rankers._pair_grid import build_pair_grid
    from rankbench.rankers.boosting.elf import _pair_grid

    y = np.repeat(np.arange(3), 4)                       # 3 people, 4 images each
    c = None if cams is None else np.array(list(cams) * 3)
    X = np.random.default_rng(0).random((12, 6))
    same, cand = _pair_grid(build_pair_grid(X, y, c), y, c)
    # brute force: ordered pairs of one person's images, in other cameras where cameras are given
    other = np.ones((12, 12), bool) if c is None else c[:, None] != c[None, :]
    want = (y[:, None] == y[None, :]) & other & ~np.eye(12, dtype=bool)
    assert (same & cand).sum() == want.sum() == n_pos


def test_bhattacharyya_refuses_negative_values_in_fit_and_scoring():
    # they gave NaN distances, coded one way in fit and voted the other way in scoring, at exit 0
    from rankbench.errors import InputError

    y = np.repeat(np.arange(4), 2)
    X = np.random.default_rng(0).random((8, 8))
    shifted = X.copy()
    shifted[3, 5] = -0.5
    with pytest.raises(InputError, match=r"elf: distance='bhattacharyya' needs histograms \(values >= 0\), got -0\.5 "
                                         r"in fit's X"):
        ELFAdaBoost(n_bins=4, distance="bhattacharyya").fit(shifted, y)
    fitted = ELFAdaBoost(n_bins=4, n_rounds=2, distance="bhattacharyya").fit(X, y)
    with pytest.raises(InputError, match="in similarity's G"):
        fitted.similarity(X, X - 1)


def test_scoring_measures_distances_in_the_fits_float32():
    """The fit measures unit distances on the pair grid's float32 rows, and its thresholds are
    quantiles of those distances; scoring measured them in float64, one float32 step away, and 16
    of 3600 training pairs (elf_strips, 60 people) got the opposite vote at a threshold."""
    from rankbench.registry import datasets, features

    ds = datasets.build("synthetic_reid", {"n_people": 60, "random_state": 0}).load()
    X = features.build("elf_strips", {}).extract(ds)
    y, c = ds.items.identity.to_numpy(), (ds.items.cam.to_numpy() == "b").astype(int)
    m = ELFAdaBoost(n_rounds=40).fit(X, y, c)
    a, b = X[c == 0], X[c == 1]
    used = np.unique(m.hists_)
    D = m._grid_distances(a.astype(np.float32), b.astype(np.float32), hists=used)
    votes = sum(al * np.where(D[..., p] <= th, 1.0, -1.0)
                for p, th, al in zip(np.searchsorted(used, m.hists_), m.thresholds_, m.alphas_))
    np.testing.assert_allclose(m.similarity(a, b), votes, atol=1e-9)

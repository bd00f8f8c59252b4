"""The rankers' one search convention: candidates, the choice over folds, the shared scores."""

import numpy as np
import pytest

from rankbench.rankers._search import as_grid, choose, grid_points, validation_cmc


def test_one_value_or_a_list_of_candidates():
    assert as_grid(0.5) == [0.5] and as_grid([1, 2]) == [1, 2] and as_grid((3,)) == [3]
    assert grid_points(C=[1, 10], gamma=0.5) == [{"C": 1, "gamma": 0.5}, {"C": 10, "gamma": 0.5}]
    assert grid_points(gamma=[1, 2], C=[5, 6]) == [{"gamma": 1, "C": 5}, {"gamma": 1, "C": 6},
                                                    {"gamma": 2, "C": 5}, {"gamma": 2, "C": 6}]


def test_choose_means_over_the_folds_that_scored_and_breaks_ties_to_the_first():
    nan = np.nan
    scores = [[0.5, 0.9, 0.7, nan],
              [0.7, nan, 0.5, nan],
              [0.6, 0.3, 0.6, nan]]
    best, mean = choose(scores)
    # 0.6, (0.9 + 0.3) / 2 = 0.6, 0.6: a three-way tie goes to the first; nobody scored the last
    np.testing.assert_allclose(mean[:3], [0.6, 0.6, 0.6])
    assert best == 0 and np.isnan(mean[3])
    assert choose([[0.2, 0.1, 0.1]], minimise=True)[0] == 1
    assert choose([[0.2, 0.3, nan], [0.4, 0.5, 0.9]])[0] == 2   # 0.9 from its one fold
    assert choose([[nan, nan]])[0] == 0


def test_validation_cmc_is_the_mean_cmc_of_every_image_against_the_other_camera():
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(6), 2)
    cams = np.tile(["a", "b"], 6)
    S = rng.normal(size=(12, 12))
    hits = []  # the rank of the true match of every image among the other camera's images
    for i in range(12):
        cand = np.flatnonzero(cams != cams[i])
        order = cand[np.argsort(-S[i, cand], kind="stable")]
        hits.append(np.flatnonzero(y[order] == y[i])[0] + 1)
    expected = np.mean([np.mean(np.asarray(hits) <= r) for r in range(1, 4)])
    assert validation_cmc(S, y, cams, 3) == pytest.approx(expected)
    # a fold of one person (or none) scores nothing: NaN, which choose leaves out, not a 0 that
    # pulled down only the C values the fold reached before its early stop
    assert np.isnan(validation_cmc(S[:2, :2], y[:2], cams[:2], 3))
    assert np.isnan(validation_cmc(S[:0, :0], y[:0], cams[:0], 3))


def test_a_prsvm_whose_folds_score_nothing_says_so():
    from rankbench.errors import InputError
    from rankbench.rankers.ranksvm.prsvm import PRSVM

    rng = np.random.default_rng(0)
    y, cams = np.repeat(np.arange(6), 2), np.tile(["a", "b"], 6)
    X = rng.random((12, 8)) + y[:, None]
    with pytest.raises(InputError, match=r"cv = 12: no validation fold holds a probe with both a true and a wrong "
                                         r"match \(6 training people in 12 folds\)"):
        PRSVM(C=[0.1, 1.0], cv=12).fit(X, y, cams)


def test_too_many_folds_or_groups_for_the_training_people_say_which_parameter():
    # both blamed the training data ("no query has both a true match and a wrong match")
    from rankbench.errors import InputError
    from rankbench.rankers.ranksvm.ensemble import EnsembleRankSVM
    from rankbench.rankers.ranksvm.prsvm import PRSVM

    rng = np.random.default_rng(0)
    y, cams = np.repeat(np.arange(2), 2), np.tile(["a", "b"], 2)
    X = rng.random((4, 8)) + y[:, None]
    with pytest.raises(InputError, match=r"PRSVM: cv = 2: a fold trains on 1 person of 2; expected fewer folds"):
        PRSVM(C=[0.1, 1.0], cv=2).fit(X, y, cams)
    with pytest.raises(InputError, match=r"EnsembleRankSVM: n_groups = 3 needs as many training people, got 2"):
        EnsembleRankSVM(n_groups=3).fit(X, y, cams)

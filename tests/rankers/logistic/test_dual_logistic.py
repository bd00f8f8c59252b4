"""The kernel width of Yan et al.'s KLR / PKLR / RCA+KLR: the median heuristic and the
cross-validation on labelled rows that chooses rho (Sec. 4.3), held out by whole groups."""

import numpy as np
import pytest
from scipy.spatial.distance import pdist

from rankbench.rankers.logistic._dual_logistic import choose_rho, cv_folds, median_rho
from rankbench.rankers.logistic.klr import KernelLogisticRegression
from rankbench.rankers.logistic.pklr import PKLR
from rankbench.rankers.metric_learning.rca import RCAKLR


def test_median_heuristic_is_one_over_the_median_squared_distance():
    X = np.random.default_rng(0).normal(size=(40, 5)) * 7.0
    assert median_rho(X) == pytest.approx(1.0 / np.median(pdist(X, "sqeuclidean")), rel=1e-10)
    assert median_rho(np.vstack([X[:3]] * 4)) == pytest.approx(1.0 / np.median(pdist(X[:3], "sqeuclidean")
                                                                              .tolist() * 16), rel=1e-10)
    assert median_rho(np.ones((5, 2))) == 1.0                      # no distinct pair


def test_folds_hold_out_whole_groups_and_every_class():
    codes = np.repeat([0, 1, 2], 12)
    groups = np.repeat(np.arange(9), 4)                           # 3 groups of 4 rows per class
    fold = cv_folds(codes, groups)
    assert fold.max() == 2
    for g in np.unique(groups):
        assert len(np.unique(fold[groups == g])) == 1
    for k in range(3):
        assert set(codes[fold == k]) == {0, 1, 2} and set(codes[fold != k]) == {0, 1, 2}
    one_group = np.r_[np.zeros(12), np.arange(1, 25)]               # class 0 is one group: no fold possible
    assert (cv_folds(codes, one_group) == -1).all()
    assert cv_folds(codes, None).max() == 4                       # rows: at most 5 folds
    # a group with rows of two classes was split between two folds (one per class)
    mixed = cv_folds(np.array([0, 0, 0, 1, 1, 1, 1]), np.array([1, 2, 3, 2, 3, 4, 5]))
    assert mixed.tolist() == [0, 1, 2, 1, 2, 0, 1]


def near_duplicate_groups(seed=0, n_groups=6, size=8):
    """Classes whose groups are tight bursts of near-identical rows (a tracking sequence's crops)
    around centres that overlap between classes: memorising rows looks perfect, generalising is not."""
    rng = np.random.default_rng(seed)
    X, y, g = [], [], []
    for c in range(3):
        for k in range(n_groups):
            centre = rng.normal(size=4) + 0.6 * c
            X.append(centre + 1e-3 * rng.normal(size=(size, 4)))
            y += [c] * size
            g += [c * n_groups + k] * size
    return np.vstack(X), np.array(y), np.array(g)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_grouped_cross_validation_estimates_accuracy_on_new_groups(seed):
    """Held out by rows, a row's near-twins stay in training and every width looks perfect; held out
    by groups, the estimate is close to the accuracy on groups never seen (the independent check)."""
    X, y, g = near_duplicate_groups(seed)
    X_new, y_new, _ = near_duplicate_groups(100 + seed)
    cands = [0.01, 0.1, 1.0, 10.0, 100.0, 1000.0]
    _, row_scores = choose_rho(X, y, 3, None, cands, 1e-3, False, 100, 1e-10)
    rho, group_scores = choose_rho(X, y, 3, g, cands, 1e-3, False, 100, 1e-10)
    fresh = np.mean(KernelLogisticRegression(rho=rho, rho_scale="absolute").fit(X, y).predict(X_new) == y_new)
    assert max(s[0] for s in row_scores) == 1.0
    assert abs(max(s[0] for s in group_scores) - fresh) < 0.25 and fresh < 0.8


def test_accuracy_ties_go_to_the_smaller_held_out_loss():
    X, y, g = near_duplicate_groups(seed=1)
    rho, scores = choose_rho(X, y, 3, None, [100.0, 1000.0], 1e-3, False, 100, 1e-10)
    assert scores[0][0] == scores[1][0] == 1.0
    assert rho == [100.0, 1000.0][int(np.argmin([s[1] for s in scores]))]


def test_the_classifiers_share_the_one_width_chosen_on_labelled_rows():
    """Yan et al. used one rho "in all of our experiments": KLR, PKLR and RCA+KLR choose the same
    from the same labelled rows, whatever constraints and unlabelled rows PKLR and RCA+KLR get."""
    X, y, g = near_duplicate_groups(seed=2)
    lab = np.arange(len(y)) % 2 == 0
    klr = KernelLogisticRegression().fit(X[lab], y[lab], groups=g[lab])
    Xc = np.vstack([X[lab], X[~lab][:6]])
    yc = np.r_[y[lab], -np.ones(6, int)]
    C = [[len(y[lab]), len(y[lab]) + 1, 1], [len(y[lab]) + 2, len(y[lab]) + 3, 1]]
    gc = np.r_[g[lab], -np.ones(6, int)]
    pk = PKLR().fit(Xc, yc, constraints=C, groups=gc)
    rk = RCAKLR().fit(Xc, yc, constraints=C, groups=gc)
    assert klr.rho_ == pk.rho_ == rk.rho_ == rk.klr_.rho_
    assert klr.diagnostics_["rho"] == klr.rho_ and "cv_accuracy" in klr.diagnostics_
    assert KernelLogisticRegression(rho=0.08, rho_scale="absolute").fit(X, y).rho_ == 0.08
    med = median_rho(X)
    assert KernelLogisticRegression(rho=2.0).fit(X, y).rho_ == pytest.approx(2.0 * med)


def test_without_folds_the_width_nearest_the_median_heuristic_is_used():
    """One group in a class: nothing can be held out, so no cross-validation; the candidate nearest
    (log scale) to the median heuristic, said in the diagnostics, not the first of the list."""
    X, y, g = near_duplicate_groups(seed=3)
    g = np.where(y == 0, -5, g)                                   # class 0: one group
    med = median_rho(X)
    m = KernelLogisticRegression(rho=[0.01, 0.3, 1.0, 30.0]).fit(X, y, groups=g)
    assert m.rho_ == pytest.approx(1.0 * med) and "median heuristic" in m.diagnostics_["rho_by"]
    a = KernelLogisticRegression(rho=[med / 50, med * 2, med * 100], rho_scale="absolute").fit(X, y, groups=g)
    assert a.rho_ == pytest.approx(med * 2)


def test_the_penalty_weight_must_be_positive_for_every_klr():
    """At lam = 0 separable data have no minimiser: kernel_logreg accepted it and said converged."""
    from rankbench.errors import ParameterError
    from rankbench.params import check_params
    from rankbench.registry import rankers

    for name in ("kernel_logreg", "pklr", "rca_klr"):
        with pytest.raises(ParameterError, match=r"lam: expected a number > 0, got 0"):
            check_params(rankers.get(name), {"lam": 0}, f"rankers.{name}")

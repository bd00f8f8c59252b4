"""svm_bank: balanced bags per view, outputs equal to libsvm's decision values, normalised."""

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC

from rankbench.errors import InputError
from rankbench.rankers.boosting.svm_bank import SVMBank


def data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.1).astype(int)
    views = {"a": rng.normal(size=(n, 5)) + 1.5 * y[:, None], "b": rng.normal(size=(n, 3)) + 0.5 * y[:, None]}
    return views, y


def test_bags_are_balanced_per_view_and_capped():
    X, y = data()
    bank = SVMBank(bags_per_type=3, max_bag=40, random_state=0).fit(X, y)
    assert bank.n_models_ == 6 and bank.views_ == ["a"] * 3 + ["b"] * 3
    for bag in bank.bags_:
        assert len(bag) == 40 and y[bag].sum() == 20 and len(np.unique(bag)) == 40
    small = SVMBank(max_bag=800, random_state=0).fit(X, y)  # fewer relevant rows than 400: all of them
    assert all(y[b].sum() == y.sum() and len(b) == 2 * y.sum() for b in small.bags_)


def test_outputs_equal_libsvm_decision_values_normalised():
    X, y = data()
    bank = SVMBank(random_state=1, C=[0.5, 5.0], gamma=[0.3, 3.0]).fit(X, y)
    rows = np.arange(0, 600, 7)
    for j in range(bank.n_models_):
        V, bag = X[bank.views_[j]], bank.bags_[j]
        svc = SVC(C=bank.C_[j], gamma=bank.gamma_[j]).fit(V[bag], y[bag])  # libsvm's own RBF kernel
        ref = np.clip(svc.decision_function(V[rows]) / bank.scale_[j], -1, 1)
        out = bank.model_output(X, j, rows)
        assert np.abs(out - ref).max() < 2e-2  # two libsvm solves agree to its tolerance (1e-3 on KKT)
        # exactly the RBF expansion of the stored support vectors (the blockwise float32 path)
        exact = rbf_kernel(V[rows], bank.support_[j].astype(float), gamma=bank.gamma_[j]) @ bank.coef_[j]
        exact = np.clip((exact + bank.intercept_[j]) / bank.scale_[j], -1, 1)
        assert out == pytest.approx(exact, abs=1e-5)
        assert np.abs(out).max() <= 1.0
    # the output scale: on its own bag a model's outputs reach -1 or 1 exactly
    for j in range(bank.n_models_):
        assert np.abs(bank.model_output(X, j, bank.bags_[j])).max() == pytest.approx(1.0, abs=1e-5)


def test_blocks_do_not_change_outputs_and_matrix_input_is_one_view():
    X, y = data()
    a = SVMBank(random_state=2, block=4096).fit(X, y)
    b = SVMBank(random_state=2, block=13).fit(X, y)
    assert np.allclose(a.outputs(X), b.outputs(X), atol=1e-6)
    m = SVMBank(bags_per_type=2, random_state=0).fit(X["a"], y)
    assert m.views_ == ["X", "X"] and m.outputs(X["a"]).shape == (600, 2)
    assert m.decision_function(X["a"]) == pytest.approx(m.outputs(X["a"]).mean(1))


def test_cross_validation_picks_a_grid_point_and_is_seeded():
    X, y = data()
    a = SVMBank(random_state=3).fit(X, y)
    b = SVMBank(random_state=3).fit(X, y)
    assert set(a.C_) <= {1.0, 10.0} and np.array_equal(a.C_, b.C_) and np.array_equal(a.gamma_, b.gamma_)
    assert all(np.array_equal(p, q) for p, q in zip(a.bags_, b.bags_))


def test_too_few_relevant_rows_is_one_clear_error():
    X, y = data()
    y = np.zeros_like(y)
    y[0] = 1
    with pytest.raises(InputError, match="at least 2 relevant"):
        SVMBank().fit(X, y)


def test_auc_equals_scikit_learn_and_folds_are_stratified():
    from sklearn.metrics import roc_auc_score

    from rankbench.rankers.boosting.svm_bank import _stratified_folds, auc

    rng = np.random.default_rng(0)
    y = (rng.random(60) < 0.3).astype(int)
    s = np.round(rng.normal(size=60), 1)  # with ties
    assert auc(s, y) == pytest.approx(roc_auc_score(y, s))
    folds = _stratified_folds(y, 3, rng)
    assert sorted(np.concatenate(folds).tolist()) == list(range(60))
    assert max(y[f].sum() for f in folds) - min(y[f].sum() for f in folds) <= 1


def test_direct_libsvm_fit_equals_svc():
    from rankbench.rankers.boosting.svm_bank import fit_svc, sq_dists

    rng = np.random.default_rng(4)
    X = rng.normal(size=(50, 3))
    y = (X[:, 0] + 0.7 * rng.normal(size=50) > 0).astype(int)
    K = np.exp(-0.4 * sq_dists(X, X))
    for C in (0.5, 10.0):
        sv, coef, b = fit_svc(K, y, C)
        svc = SVC(C=C, kernel="precomputed").fit(K, y)
        assert np.array_equal(sv, svc.support_)
        assert np.allclose(K[:, sv] @ coef + b, svc.decision_function(K))


def test_pickled_bank_gives_the_same_outputs_without_its_evaluation_matrices():
    import pickle

    X, y = data()
    bank = SVMBank(random_state=5).fit(X, y)
    before = bank.outputs(X)
    copy = pickle.loads(pickle.dumps(bank))
    assert "_expansions" not in copy.__dict__
    assert np.array_equal(copy.outputs(X), before)


def test_a_graded_relevance_below_one_counts_as_relevant():
    X, y = data(n=200)
    whole = SVMBank(bags_per_type=1, random_state=0).fit(X, y)
    graded = SVMBank(bags_per_type=1, random_state=0).fit(X, 0.5 * y)  # relevant is y > 0, not int(y) > 0
    assert [b.tolist() for b in graded.bags_] == [b.tolist() for b in whole.bags_]

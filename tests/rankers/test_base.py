"""rankbench.rankers.base: the capability contracts. Loss-based decoding against its definition
(Allwein et al. 2000) summed term by term, a metric learner's similarity against a brute-force
squared distance, and what the capability helpers read from a ranker."""

from __future__ import annotations

import numpy as np
import pytest

from rankbench.rankers.base import (Classifier, ItemScorer, MetricLearner, PairScorer, accepts_views, capabilities,
                                    capability_mixins, diagnostics, fit_accepts, ovr_decoding_losses)


def _decoding_by_definition(F):
    """sum_s log(1 + exp(-m_rs f_s)), m_rs = +1 for r = s else -1, one term at a time."""
    n, S = F.shape
    out = np.zeros((n, S))
    for i in range(n):
        for r in range(S):
            out[i, r] = sum(np.log1p(np.exp(-(1 if r == s else -1) * F[i, s])) for s in range(S))
    return out


def test_decoding_losses_are_the_definitions_sum():
    F = np.random.default_rng(0).normal(scale=3, size=(5, 4))
    np.testing.assert_allclose(ovr_decoding_losses(F), _decoding_by_definition(F), rtol=1e-12)
    f = np.array([-2.0, 0.0, 3.0])   # two classes: one problem, class 1 positive
    np.testing.assert_allclose(ovr_decoding_losses(f), np.column_stack([np.log1p(np.exp(f)), np.log1p(np.exp(-f))]))


def test_decoding_losses_do_not_overflow_on_large_margins():
    F = np.array([[1000.0, -1000.0]])
    np.testing.assert_allclose(ovr_decoding_losses(F), [[0.0, 2000.0]], atol=1e-9)


class _Scale(MetricLearner):
    def __init__(self, s=2.0):
        self.s = s

    def fit(self, X, y):
        return self

    def transform(self, X):
        return self.s * np.asarray(X)


def test_a_metric_learners_similarity_is_minus_the_squared_distance_after_its_map():
    rng = np.random.default_rng(1)
    Q, G = rng.normal(size=(3, 4)), rng.normal(size=(5, 4))
    want = np.array([[-np.sum((2 * q - 2 * g) ** 2) for g in G] for q in Q])
    np.testing.assert_allclose(_Scale().similarity(Q, G), want)


def test_a_metric_learners_similarity_refuses_a_map_to_no_column():
    from rankbench.errors import RankerFault

    class Empty(_Scale):
        def transform(self, X):
            return np.zeros((len(X), 0))

    # before: every distance 0, an all-tied similarity scored at exit 0
    with pytest.raises(RankerFault, match=r"transform returned shapes \(3, 0\) and \(5, 0\), expected \(3, d\) "
                                          r"and \(5, d\) with d at least 1"):
        Empty().similarity(np.ones((3, 4)), np.ones((5, 4)))


class _Both(PairScorer, ItemScorer):
    accepts_views = True
    diagnostics_ = {"iterations": 3}

    def fit(self, X, y, cams=None, **kw):
        return self

    def similarity(self, Q, G):
        return np.zeros((len(Q), len(G)))

    def decision_function(self, X):
        return np.zeros(len(X))


class _Wrapper:
    ranker_capabilities = ("item_scorer",)
    fit_target = _Both()

    def fit(self, X, y):
        return self


def test_capabilities_are_read_from_the_mixins_or_a_wrapper():
    assert capabilities(_Both) == capabilities(_Both()) == {"pair_scorer", "item_scorer"}
    assert capabilities(_Scale()) == {"metric"} and capabilities(object()) == frozenset()
    assert capabilities(_Wrapper()) == {"item_scorer"}
    mixins = capability_mixins()
    assert len(mixins) == 8 and all(capabilities(cls) == {name} for name, cls in mixins.items())


def test_a_ranker_without_a_method_of_its_capability_cannot_be_made():
    class Half(Classifier):
        def fit(self, X, y):
            return self

    with pytest.raises(TypeError, match="predict"):
        Half()


def test_fit_keywords_views_and_diagnostics_are_read_from_the_ranker():
    class Plain(Classifier):
        def fit(self, X, y, constraints=None):
            return self

        def predict(self, X):
            return X

    assert fit_accepts(Plain(), "constraints") and not fit_accepts(_Scale(), "constraints")
    # **kw is no parameter named: a Pipeline refuses what it cannot route, and a fit that ignores it
    # would take constraints' unlabelled rows (y = -1) for a class
    assert fit_accepts(_Both(), "cams") and not fit_accepts(_Both(), "constraints")
    assert fit_accepts(_Wrapper(), "cams")                      # the wrapped ranker's fit
    assert accepts_views(_Both()) and not accepts_views(Plain())
    est = _Both()
    assert diagnostics(est) == {"iterations": 3} and diagnostics(est) is not est.diagnostics_
    assert diagnostics(Plain()) == {}

"""scikit-learn's own estimator checks (``sklearn.utils.estimator_checks``) on every registered ranker.

A ranker is a scikit-learn estimator whose ``fit`` and scoring differ by capability (identities
and cameras, pairs and signs, base-model outputs in [-1, 1]). Each capability that scikit-learn's
``fit(X, y)`` / ``predict``-style calls cannot reach as it is gets a small adapter: a subclass of
the ranker itself (so its own ``__init__``, parameters, cloning and pickling are what the checks
see) that maps ``fit(X, y)`` and one scoring method onto the capability's. The checks that do
not apply, and why, are in ONE table, :data:`NOT_APPLICABLE`; the checks run strictly
(``xfail_strict``), so a listed check that starts to pass fails too, and a ranker registered
tomorrow runs every check and fails until it meets them or is listed with a reason.
"""

from __future__ import annotations

import functools

import numpy as np
from sklearn.base import TransformerMixin
from sklearn.utils.estimator_checks import parametrize_with_checks

from rankbench.rankers.base import capabilities
from rankbench.registry import rankers

from ranker_inputs import RANKERS, make

#: per-ranker parameters for scikit-learn's small data (a few rows, 2-10 features): few rounds,
#: one C, and histograms of one bin where the features are read as histograms
PARAMS = {"elf": {"n_bins": 1, "n_rounds": 5}, "bhattacharyya": {"n_bins": 1}, "cmds_dml": {"s": 1, "K": 1},
          "ldmlr": {"K": 1}, "rankboost": {"threshold_sample": 200}, "ensemble_ranksvm": {"n_groups": 2}}

#: check name -> why it does not apply, for every ranker ("*"), per adapter (the capability it
#: stands for) or per registry name: THE list of exceptions
NOT_APPLICABLE: dict[str, dict[str, str]] = {
    "*": {
        "check_dtype_object": "text in X is rankbench's InputError (a ValueError: one line in the CLI), "
                              "not a TypeError",
    },
    "pair_scorer": {
        "check_n_features_in_after_fitting": "similarity names its inputs Q and G, not X (the width check "
                                             "itself is in test_bad_inputs_sweep)",
    },
    "elf": {
        "check_fit_score_takes_y": "ELF's parameter `score` (its scoring rule, in configs) hides "
                                   "scikit-learn's score method",
        "check_pipeline_consistency": "ELF's parameter `score` hides scikit-learn's score method",
    },
    "svm_bank": {
        "check_dict_unchanged": "model_output builds its evaluation matrices on first use (kept out of the "
                                "pickle: half a cached bank's size)",
    },
}


def _squash(X):
    """Real features mapped into (-1, 1) (x / (1 + |x|)), as base-model outputs are; anything else
    (NaN, inf, text, complex, 1-D, sparse) passed on unchanged for the ranker's own checks."""
    if isinstance(X, np.ndarray) and X.dtype.kind in "biuf" and X.ndim == 2:
        X = X.astype(float)
        with np.errstate(invalid="ignore"):
            out = X / (1.0 + np.abs(X))
        return np.where(np.isfinite(X), out, X)
    return X


class _PairScorerAdapter:
    """``decision_function(X)``: the similarity of X's rows (probes) to the rows the ranker was
    fitted on (gallery)."""

    def fit(self, X, y=None):
        super().fit(X, np.zeros(np.shape(X)[0]) if y is None else y)
        self.gallery_ = np.asarray(X, dtype=float)
        return self

    def decision_function(self, X):
        return self.similarity(X, getattr(self, "gallery_", X))  # unfitted: the ranker says so


class _PairwiseAdapter:
    """``fit(X, y)``: every pair of rows with different y, ordered by y (the larger y first)."""

    def fit(self, X, y=None):
        y = np.zeros(np.shape(X)[0]) if y is None else np.asarray(y, dtype=float).ravel()
        i, j = np.nonzero(y[:, None] > y[None, :])
        return super().fit(X, np.column_stack([i, j]), np.ones(len(i), dtype=int))


class _BoosterAdapter:
    """Features squashed into (-1, 1) as base-model outputs; the rows of the largest y relevant."""

    def fit(self, X, y=None):
        y = np.zeros(np.shape(X)[0]) if y is None else np.asarray(y, dtype=float).ravel()
        return super().fit(_squash(X), (y == y.max()).astype(int) if len(y) else y)

    def decision_function(self, X):
        return super().decision_function(_squash(X))


class _BankAdapter:
    """The rows of the largest y relevant (a bank's bags are balanced from two classes)."""

    def fit(self, X, y=None):
        y = np.zeros(np.shape(X)[0]) if y is None else np.asarray(y, dtype=float).ravel()
        return super().fit(X, (y == y.max()).astype(int) if len(y) else y)


#: capability -> its adapter; a ranker with ``transform`` (a metric learner) is also declared a
#: transformer (scikit-learn's TransformerMixin), so that the transformer checks run on it
ADAPTERS = {"pairwise": _PairwiseAdapter, "model_booster": _BoosterAdapter, "model_bank": _BankAdapter,
            "pair_scorer": _PairScorerAdapter}


@functools.lru_cache(maxsize=None)
def adapted_class(name: str) -> type:
    """The ranker's class, or a subclass of the same name with its capability's adapter."""
    cls = rankers.get(name)
    bases = [a for cap, a in ADAPTERS.items() if cap in capabilities(cls)][:1]
    if hasattr(cls, "transform"):
        bases = [TransformerMixin]
    if not bases:
        return cls
    # a module attribute of the same name, so that pickle finds it
    out = globals()[cls.__name__] = type(cls.__name__, (*bases, cls), {"__module__": __name__, "__doc__": cls.__doc__})
    return out


def adapted(name: str):
    return adapted_class(name)(**make(name, **PARAMS.get(name, {})).get_params())


def expected_failures(est) -> dict[str, str]:
    name = type(est).registry_name
    adapter = [cap for cap, a in ADAPTERS.items() if isinstance(est, a)]
    out = {}
    for key in ("*", *adapter, name):
        out.update(NOT_APPLICABLE.get(key, {}))
    return out


@parametrize_with_checks([adapted(n) for n in RANKERS], expected_failed_checks=expected_failures, xfail_strict=True)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)

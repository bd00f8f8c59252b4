"""Small generated inputs for every ranker capability, shared by the sweep of bad inputs and
scikit-learn's estimator checks: what ``fit`` takes and which methods score, per capability."""

from __future__ import annotations

import numpy as np

from rankbench.params import init_params
from rankbench.rankers.base import LazyColumns, accepts_views, capabilities
from rankbench.registry import rankers

RANKERS = [e.name for e in rankers.entries()]

#: few rounds / iterations and small grids, so a fit takes milliseconds (defaults suit real data)
FAST = {"elf": {"n_rounds": 5}, "rankboost": {"n_rounds": 5}, "ensemble_ranksvm": {"n_rounds": 5, "weak_C": (1.0,)},
        "prsvm": {"C": 1.0}, "cmds_dml": {"max_iter": 20}, "ldmlr": {"T_max": 5}, "rankmkl": {"max_iter": 3},
        "kernel_logreg": {"rho": 1.0}, "pklr": {"rho": 1.0}, "rca_klr": {"rho": 1.0},
        "svm_bank": {"C": 1.0, "gamma": 1.0, "bags_per_type": 1}, "lgbm_lambdarank": {"n_estimators": 5},
        "xgb_pairwise": {"n_estimators": 5}, "bipartite_rankboost": {"n_rounds": 5},
        "imbalanced_rankboost": {"n_rounds": 5}}


def make(name: str, **over):
    cls = rankers.get(name)
    params = {**FAST.get(name, {}), **over}
    return cls(**{k: v for k, v in params.items() if k in init_params(cls)})


def inputs(name: str, seed: int = 0):
    """(X, fit's other positional arguments, fit's keywords, {method: score(ranker, X)}) of a
    ranker's capability: X is what a bad-input case corrupts (a dict of views for rankers that take
    them under the comparison protocol), and each scorer hands it to one scoring method."""
    cls = rankers.get(name)
    caps = capabilities(cls)
    rng = np.random.default_rng(seed)
    if "pair_scorer" in caps:
        n = 12
        y = np.repeat(np.arange(n), 2)
        cams = np.tile(np.array(["a", "b"]), n)
        X = rng.random((n, 32))[y] + rng.random((2 * n, 32))
        X = X / X.reshape(len(X), -1, 16).sum(-1).repeat(16, axis=1)  # 16-bin histograms (ELF)
        G = X[1::2]
        return X, (y,), {"cams": cams}, {"similarity(Q)": lambda r, Q: r.similarity(Q, G),
                                         "similarity(G)": lambda r, Q: r.similarity(G, Q)}
    if "metric" in caps:
        X = rng.normal(size=(30, 6))
        y = np.repeat(np.arange(3), 10).astype(float)
        X[:, 0] += 2 * y
        return X, (y,), {}, {"transform": lambda r, X: r.transform(X), "similarity": lambda r, X: r.similarity(X, X)}
    if "pairwise" in caps:
        X = rng.random((20, 6))
        f = X @ rng.normal(size=6)
        P = rng.integers(0, 20, size=(80, 2))
        P = P[f[P[:, 0]] != f[P[:, 1]]]
        P = np.where((f[P[:, 0]] < f[P[:, 1]])[:, None], P[:, ::-1], P)
        Xf = {"a": X[:, :3], "b": X[:, 3:]} if accepts_views(cls) else X
        return Xf, (P, np.ones(len(P), int)), {}, {"decision_function": lambda r, X: r.decision_function(X)}
    if "model_booster" in caps:  # base models' outputs in [-1, 1], a few of them informative
        y = (rng.random(60) < 0.3).astype(int)
        H = np.tanh(rng.normal(size=(60, 4)) + np.outer(2 * y - 1, [1.5, 1.0, 0.5, 0]))
        return H, (y,), {}, {"decision_function": lambda r, H: r.decision_function(H),
                             "staged_decision_function": lambda r, H: list(r.staged_decision_function(H)),
                             "decision_function(lazy)": lambda r, H: r.decision_function(lazy(H))}
    if "model_bank" in caps:
        y = np.repeat([0, 1], 10)
        X = rng.normal(size=(20, 4)) + y[:, None]
        return X, (y,), {}, {"decision_function": lambda r, X: r.decision_function(X),
                             "model_output": lambda r, X: r.model_output(X, 0, np.arange(len(X)))}
    if "classifier" in caps or "item_scorer" in caps:
        X = rng.normal(size=(30, 4))
        y = np.repeat(np.arange(3), 10)
        X[:, 0] += 2 * y
        scorers = {"decision_function": lambda r, X: r.decision_function(X)}
        if "classifier" in caps:
            scorers["predict"] = lambda r, X: r.predict(X)
        else:
            y = (y == 2).astype(int)
        return X, (y,), {}, scorers
    raise AssertionError(f"no generated inputs for capabilities {sorted(caps)}: add them here")


def lazy(A):
    """``A`` behind the LazyColumns interface, as the stacked protocol hands base-model outputs
    (values are read only where a ranker asks; a non-array stays one, unevaluated)."""
    A = np.asarray(A)
    return LazyColumns(lambda j, rows: A[rows, j], A.shape) if A.ndim == 2 else A

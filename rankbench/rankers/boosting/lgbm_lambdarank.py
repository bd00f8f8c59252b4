"""LightGBM's LambdaRank with two-leaf trees over base-model outputs: the peer a user would pick."""

from __future__ import annotations

from typing import Annotated

import numpy as np
from pydantic import Field
from sklearn.base import BaseEstimator

from ...params import PositiveFloat, PositiveInt, Seed
from ...registry import rankers
from ..base import ModelBooster
from ._stacked import training_outputs
from ._trees import DumpedTrees


@rankers.register("lgbm_lambdarank")
class LGBMLambdaRank(DumpedTrees, ModelBooster, BaseEstimator):
    """LightGBM lambdarank on base-model outputs, two-leaf trees (Burges' LambdaMART; a peer of RankBoost), staged.

    The boosting rows of one concept form one query (``group = [n]``), or, above LightGBM's limit of
    10,000 rows per query, ceil(n / 10,000) random queries with the relevant rows dealt evenly
    (pairs are then formed within each query only); labels 1 relevant, 0 not.
    Trees with ``num_leaves`` leaves (2: a stump on one base model, the closest tree to
    RankBoost's weak rankers); LightGBM's other settings at their defaults (NDCG-driven
    lambdas, ``lambdarank_truncation_level`` 30, ``min_child_samples`` 20). Ranking evaluates the
    dumped trees here (:mod:`._trees`), reading each base model only where a split needs it, so
    ranking time and evaluations are counted as for RankBoost; the scores equal LightGBM's
    ``predict`` (tested). Needs the optional ``lightgbm`` package (``rankbench[peers]``).

    Parameters
    ----------
    n_estimators : trees (boosting rounds).
    learning_rate : shrinkage.
    num_leaves : leaves per tree (2 = stumps).
    random_state : LightGBM's seed.
    """

    requires = {"lightgbm": "pip install -e '.[peers]' in the rankbench checkout, or pip install lightgbm"}

    def __init__(self, n_estimators: PositiveInt = 100, learning_rate: PositiveFloat = 0.1,
                 num_leaves: Annotated[int, Field(ge=2)] = 2, random_state: Seed = None):
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.random_state = random_state

    def fit(self, X, y):
        """Fit on outputs ``X`` (n, K) in [-1, 1] of one concept's boosting rows, labels ``y``."""
        import lightgbm as lgb  # optional: declared in ``requires``, checked before fit
        training_outputs(self, X, y)  # the same input checks as the boosters (sets n_features_in_)
        H = np.asarray(X, dtype=float)
        model = lgb.LGBMRanker(objective="lambdarank", n_estimators=int(self.n_estimators),
                               learning_rate=float(self.learning_rate), num_leaves=int(self.num_leaves),
                               random_state=self.random_state, n_jobs=1, verbose=-1)
        labels = (np.asarray(y) > 0).astype(int)
        order, groups = _queries(labels, self.random_state)
        model.fit(H[order], labels[order], group=groups)
        self.booster_ = model.booster_
        self._keep_trees([_node(t["tree_structure"]) for t in self.booster_.dump_model()["tree_info"]])
        return self


#: LightGBM's lambdarank refuses a query of more than 10,000 rows
MAX_QUERY = 10000


def _queries(labels: np.ndarray, seed) -> tuple[np.ndarray, list[int]]:
    """Row order and query sizes: one query, or ceil(n / 10,000) random queries of near-equal size
    with the relevant rows dealt evenly among them (LightGBM's limit per query)."""
    n = len(labels)
    q = -(-n // MAX_QUERY)
    if q == 1:
        return np.arange(n), [n]
    rng = np.random.default_rng(seed)
    query = np.empty(n, dtype=int)
    start = 0
    for cls in (1, 0):
        idx = rng.permutation(np.flatnonzero(labels == cls))
        query[idx] = (start + np.arange(len(idx))) % q
        start += len(idx)
    order = np.argsort(query, kind="stable")
    return order, np.bincount(query, minlength=q).tolist()


def _node(n: dict) -> dict:
    """LightGBM's dumped node -> the neutral form of :mod:`._trees`."""
    if "leaf_value" in n:
        return {"leaf": float(n["leaf_value"])}
    if n.get("decision_type", "<=") != "<=":
        raise ValueError(f"unexpected LightGBM split {n.get('decision_type')!r} (numeric features only)")
    left, right = _node(n["left_child"]), _node(n["right_child"])
    return {"feature": int(n["split_feature"]), "threshold": float(n["threshold"]), "strict": False,
            "left": left, "right": right}

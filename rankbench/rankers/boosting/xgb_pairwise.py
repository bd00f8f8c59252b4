"""xgboost's pairwise ranking with depth-1 trees over base-model outputs: the other peer a user would pick."""

from __future__ import annotations

import json
from typing import Annotated

import numpy as np
from pydantic import Field
from sklearn.base import BaseEstimator

from ...params import PositiveFloat, PositiveInt
from ...registry import rankers
from ..base import ModelBooster
from ._stacked import training_outputs
from ._trees import DumpedTrees


@rankers.register("xgb_pairwise")
class XGBPairwise(DumpedTrees, ModelBooster, BaseEstimator):
    """xgboost rank:pairwise on base-model outputs, depth-1 trees (a RankNet-style peer of RankBoost), staged.

    The boosting rows of one concept form one query; labels 1 relevant, 0 not; ``hist`` trees of
    depth ``max_depth`` (1: a stump on one base model); xgboost's other settings at their
    defaults. Ranking evaluates the dumped trees here (:mod:`._trees`, single-precision splits as
    xgboost compares), reading each base model only where a split needs it; the scores equal
    xgboost's margin ``predict`` (tested). Needs the optional ``xgboost`` package
    (``xgboost-cpu`` in ``rankbench[peers]``).

    Parameters
    ----------
    n_estimators : trees (boosting rounds).
    learning_rate : shrinkage (eta).
    max_depth : tree depth (1 = stumps).

    There is no ``random_state``: with these settings (no row or column subsampling, one query)
    xgboost's fit does not depend on its seed (checked over seeds 0-2 on 3000 rows, xgboost 3.2),
    so a seed here would promise a variation that does not exist.
    """

    requires = {"xgboost": "pip install -e '.[peers]' in the rankbench checkout, or pip install xgboost-cpu"}

    def __init__(self, n_estimators: PositiveInt = 100, learning_rate: PositiveFloat = 0.3,
                 max_depth: Annotated[int, Field(ge=1)] = 1):
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth

    def fit(self, X, y):
        """Fit on outputs ``X`` (n, K) in [-1, 1] of one concept's boosting rows, labels ``y``."""
        import xgboost as xgb  # optional: declared in ``requires``, checked before fit
        training_outputs(self, X, y)  # the same input checks as the boosters (sets n_features_in_)
        H = np.asarray(X, dtype=float)
        model = xgb.XGBRanker(objective="rank:pairwise", n_estimators=int(self.n_estimators),
                              learning_rate=float(self.learning_rate), max_depth=int(self.max_depth),
                              tree_method="hist", n_jobs=1, random_state=0)
        model.fit(H, (np.asarray(y) > 0).astype(int), qid=np.zeros(len(H), dtype=int))
        booster = model.get_booster()
        self.booster_ = booster
        self.base_score_ = float(json.loads(booster.save_config())["learner"]["learner_model_param"]["base_score"]
                                 .strip("[]"))
        self._keep_trees([_node(json.loads(t)) for t in booster.get_dump(dump_format="json")])
        return self

    def _tree_scoring(self) -> dict:
        """Margins from the base score, splits compared in single precision as xgboost does."""
        return {"init": self.base_score_, "float32": True}


def _node(n: dict) -> dict:
    """xgboost's JSON dump node -> the neutral form (left = "yes" = x < split_condition)."""
    if "leaf" in n:
        return {"leaf": float(n["leaf"])}
    kids = {c["nodeid"]: c for c in n["children"]}
    return {"feature": int(str(n["split"]).lstrip("f")), "threshold": float(n["split_condition"]), "strict": True,
            "left": _node(kids[n["yes"]]), "right": _node(kids[n["no"]])}

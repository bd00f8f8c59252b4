"""Staged, lazy evaluation of boosted regression trees over base-model outputs.

The gradient-boosting peers (LightGBM, xgboost) are evaluated here from their own dumped trees,
so that a tree reads a base model's outputs only for the rows that reach its split (a stump reads
one model on every row) through :class:`~rankbench.rankers.base.LazyColumns`, and so that the
scores after every tree are available for a staged curve. Trees are in one neutral form:
``{"leaf": value}`` or ``{"feature": j, "threshold": t, "strict": bool, "left": node,
"right": node}`` (left when ``x < t`` if strict, else ``x <= t``; single-precision comparison when
``float32`` is set, as xgboost compares).
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..base import LazyColumns
from ._stacked import scoring_columns


def tree_values(node: dict, cols: LazyColumns, rows: np.ndarray, out: np.ndarray, float32: bool = False) -> None:
    """Add the tree's leaf values of ``rows`` into ``out[rows]``."""
    if "leaf" in node:
        out[rows] += node["leaf"]
        return
    if not len(rows):
        return
    x = cols.column(node["feature"], rows)
    t = node["threshold"]
    if float32:
        x, t = x.astype(np.float32), np.float32(t)
    left = x < t if node["strict"] else x <= t
    tree_values(node["left"], cols, rows[left], out, float32)
    tree_values(node["right"], cols, rows[~left], out, float32)


def staged_tree_scores(trees: list[dict], cols: LazyColumns, init: float = 0.0, float32: bool = False):
    """Scores after each tree (a generator)."""
    f = np.full(cols.shape[0], float(init))
    rows = np.arange(cols.shape[0])
    for tree in trees:
        tree_values(tree, cols, rows, f, float32)
        yield f.copy()


def used_features(trees: list[dict]) -> set[int]:
    out: set[int] = set()
    stack = list(trees)
    while stack:
        n = stack.pop()
        if "leaf" not in n:
            out.add(int(n["feature"]))
            stack += [n["left"], n["right"]]
    return out


class DumpedTrees:
    """A peer's scores from its dumped trees ``trees_`` (set by :meth:`_keep_trees` at fit): after
    each tree and after the last, with :meth:`_tree_scoring`'s initial score and comparison."""

    def _tree_scoring(self) -> dict:
        """:func:`staged_tree_scores`' ``init`` and ``float32`` for this peer's trees."""
        return {}

    def _keep_trees(self, trees: list[dict]) -> None:
        self.trees_ = trees
        self.diagnostics_ = {"trees": len(trees), "distinct_models": len(used_features(trees))}

    def staged_decision_function(self, X):
        """Scores after each tree (a generator), reading base models lazily."""
        check_is_fitted(self, "trees_")
        cols = scoring_columns(self, X, "staged_decision_function")
        return staged_tree_scores(self.trees_, cols, **self._tree_scoring())

    def decision_function(self, X):
        """Scores after the last tree."""
        check_is_fitted(self, "trees_")
        cols = scoring_columns(self, X, "decision_function")
        f = np.zeros(cols.shape[0])
        for f in staged_tree_scores(self.trees_, cols, **self._tree_scoring()):
            pass
        return f

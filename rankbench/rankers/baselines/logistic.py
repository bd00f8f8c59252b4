"""L2-regularised linear logistic regression: a plain, fast baseline scorer and classifier.

A thin wrapper of :class:`sklearn.linear_model.LogisticRegression` so that it carries rankbench's
capabilities: as an :class:`ItemScorer` it ranks items by the log-odds w^T x + b of the positive
class (retrieval), as a :class:`Classifier` it predicts labels, and as a :class:`LossDecoder` it gives
the decoding losses of its per-class scores (for three or more classes those are the multinomial
model's logits, decoded as if they were one-against-all margins). ``class_weight="balanced"``
reweights classes by inverse frequency, the usual remedy for the rare positives of concept
retrieval (Merler et al. instead balance the bags of their base SVMs).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ...params import PositiveFloat, PositiveInt
from ...registry import rankers
from .._validation import checked_input
from ..base import Classifier, ItemScorer, LossDecoder


@rankers.register("logistic")
class Logistic(Classifier, ItemScorer, LossDecoder, BaseEstimator):
    """Linear logistic regression (scikit-learn), scores items by log-odds.

    Parameters
    ----------
    C : float
        Inverse L2 penalty strength.
    class_weight : None, "balanced" or dict
        Per-class loss weights, as in scikit-learn.
    fit_intercept : bool
    max_iter : int
        Iterations of the L-BFGS solver.

    Attributes
    ----------
    model_ : the fitted LogisticRegression; classes_, coef_, intercept_ : read through from it.
    """

    def __init__(self, C: PositiveFloat = 1.0,
                 class_weight: Literal["balanced"] | dict[int, PositiveFloat] | None = None,
                 fit_intercept: bool = True, max_iter: PositiveInt = 1000):
        self.C = C
        self.class_weight = class_weight
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter

    def fit(self, X, y):
        from sklearn.linear_model import LogisticRegression

        self.model_ = LogisticRegression(C=self.C, class_weight=self.class_weight,
                                         fit_intercept=self.fit_intercept, max_iter=self.max_iter)
        self.model_.fit(checked_input(self, X, "fit", y=y), y)
        self.classes_ = self.model_.classes_
        self.coef_ = self.model_.coef_
        self.intercept_ = self.model_.intercept_
        return self

    def decision_function(self, X) -> np.ndarray:
        """Log-odds of classes_[1] (shape (n,)) for two classes, else (n, n_classes) scores."""
        check_is_fitted(self, "model_")
        return self.model_.decision_function(checked_input(self, X, "decision_function"))

    def predict(self, X) -> np.ndarray:
        check_is_fitted(self, "model_")
        return self.model_.predict(checked_input(self, X, "predict"))

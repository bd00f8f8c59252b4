"""The contracts between protocols and rankers.

Rankers are scikit-learn estimators (``__init__`` stores parameters, ``fit`` returns self,
``random_state`` where randomness enters). A ranker never knows which paper or dataset it serves;
it declares which *capabilities* it has, and each protocol asks for the one it needs:

========================  ==========================================================  =============
capability (mixin)        methods                                                     protocols
========================  ==========================================================  =============
:class:`PairScorer`       ``fit(X, y, cams=None)``; ``similarity(Q, G) -> (nq, ng)``  reid
:class:`MetricLearner`    ``fit(X, y)``; ``transform(X) -> (n, s)``                   ordinal, reid
:class:`ItemScorer`       ``fit(X, y)``; ``decision_function(X) -> (n,)``             retrieval
:class:`PairwiseRanker`   ``fit(X, pairs, sign)``; ``decision_function(X) -> (n,)``   comparison
:class:`Classifier`       ``fit(X, y, constraints=None)``; ``predict(X)``             classification
:class:`ModelBank`        ``fit(X, y)``; ``n_models_``; ``model_output(X, j, rows)``  stacked_retrieval
                          (the base models a stacked protocol builds and shares)
:class:`ModelBooster`     ``fit(H, y)``; ``decision_function(H) -> (n,)``, ``H`` the   stacked_retrieval
                          base models' outputs in [-1, 1] (a matrix or LazyColumns)
:class:`LossDecoder`      ``decision_function(X)`` of one-against-all margins;        video_classification
                          ``decoding_losses(X) -> (n, n_classes)`` (given)            (its selector)
========================  ==========================================================  =============

* In ``PairScorer.fit``, ``y`` are identities and ``cams`` the camera/view of each row; a larger
  similarity means a more likely match.
* A ``MetricLearner`` is usable by the reid protocol too: similarity = -||T(q) - T(g)||.
* In ``PairwiseRanker.fit``, ``pairs`` is an (p, 2) int array of row indices of ``X`` and ``sign``
  is +1 where item ``pairs[:, 0]`` has more of the attribute than ``pairs[:, 1]`` and 0 where
  they have equal strength.
* ``constraints`` for classifiers is an (c, 3) int array ``(i, j, same)`` over rows of ``X``.
  Labels come as codes 0..K-1; unlabelled rows that occur in constraints follow the labelled rows
  in ``X`` with ``y = -1`` (scikit-learn's mark for unlabelled); such a row may be an item or a
  mean of items (a tracking sequence's centroid, built by the protocol). The protocol passes
  ``constraints`` only to rankers whose ``fit`` accepts it (:func:`fit_accepts`).
* ``X`` is a 2-D float array, or, for rankers that set ``accepts_views = True``, a dict
  ``{view name: 2-D array}`` (multiple-kernel learners).
* Under ``stacked_retrieval`` an ``ItemScorer`` is fitted on the base models' outputs on the
  boosting rows (a plain (n, K) array) and scores the test rows through a :class:`LazyColumns`,
  which computes model j's outputs only for the rows asked for (``column(j, rows)``) and counts
  the evaluations; :func:`as_columns` gives array and lazy inputs one interface, and
  ``np.asarray(lazy)`` evaluates everything for rankers that want a plain matrix. A ranker that
  defines ``staged_decision_function(X)`` (a generator of the scores after each round, as in
  scikit-learn's gradient boosting) gets its staged curve measured.
* A :class:`LossDecoder` is a classifier whose ``decision_function`` gives the margins f_s of
  binary problems, one per class (one-against-all, shape (n, n_classes)) or one for two classes
  (shape (n,), class 1 positive). Its ``decoding_losses(X)`` are the losses of loss-based decoding
  (Allwein, Schapire & Singer 2000; Yan et al. 2004, Sec. 3): sum_s L(m_rs f_s(x)) per class r,
  L(z) = log(1 + e^-z), m_rs = +1 if r = s else -1 (:func:`ovr_decoding_losses`); the class of
  least loss is the decoded class, and a large least loss marks an ambiguous item (what
  ``video_classification`` selects constraints by, Yan et al. Eq. 12).
* A fitted ranker may report about itself in ``diagnostics_``, a dict of scalars (a chosen ``C``)
  or of per-view numbers (learned kernel weights); protocols store it with the trial, and
  reports tabulate the scalars and plot the per-view numbers. Nothing else of a ranker's
  attributes is read outside the ranker.
"""

from __future__ import annotations

import inspect
from abc import ABCMeta, abstractmethod

import numpy as np

from ..errors import InputError, RankerFault


class _Capability(metaclass=ABCMeta):
    """Base of the capability mixins: what a ranker can do, declared by inheritance.

    A ranker that lacks a method its capability needs cannot be instantiated.
    """

    #: the capability a mixin stands for (protocols ask for it by this name)
    _capability: str = ""
    #: rankers that take a dict of feature views instead of one matrix set this True
    accepts_views: bool = False


class PairScorer(_Capability):
    """Capability: score (probe, gallery) pairs; used by the re-identification protocol."""

    _capability = "pair_scorer"

    @abstractmethod
    def fit(self, X, y, cams=None): ...

    @abstractmethod
    def similarity(self, Q, G): ...


class MetricLearner(_Capability):
    """Capability: a learned linear map / embedding; used by ordinal and re-id protocols."""

    _capability = "metric"

    @abstractmethod
    def fit(self, X, y): ...

    @abstractmethod
    def transform(self, X): ...

    def similarity(self, Q: np.ndarray, G: np.ndarray) -> np.ndarray:
        from scipy.spatial.distance import cdist

        zq, zg = np.asarray(self.transform(Q)), np.asarray(self.transform(G))
        if zq.ndim != 2 or zg.ndim != 2 or 0 in zq.shape[1:] + zg.shape[1:]:  # no column: every distance 0
            raise RankerFault(f"transform returned shapes {zq.shape} and {zg.shape}, expected "
                              f"({len(Q)}, d) and ({len(G)}, d) with d at least 1")
        return -cdist(zq, zg, "sqeuclidean")


class ItemScorer(_Capability):
    """Capability: score single items for relevance; used by the retrieval protocol."""

    _capability = "item_scorer"

    @abstractmethod
    def fit(self, X, y): ...

    @abstractmethod
    def decision_function(self, X): ...


class ModelBooster(_Capability):
    """Capability: combine base models into one item score (Merler et al. 3-4); its inputs are
    the base models' outputs in [-1, 1], so only a stacked protocol, which builds them, can feed it."""

    _capability = "model_booster"

    @abstractmethod
    def fit(self, H, y): ...

    @abstractmethod
    def decision_function(self, H): ...


class PairwiseRanker(_Capability):
    """Capability: learn a scoring function from ordered pairs; used by the comparison protocol."""

    _capability = "pairwise"

    @abstractmethod
    def fit(self, X, pairs, sign): ...

    @abstractmethod
    def decision_function(self, X): ...


class Classifier(_Capability):
    """Capability: predict class labels; used by the classification protocol."""

    _capability = "classifier"

    @abstractmethod
    def fit(self, X, y): ...

    @abstractmethod
    def predict(self, X): ...


class LossDecoder(_Capability):
    """Capability: the losses of loss-based decoding of one-against-all margins (module docstring);
    used by ``video_classification`` to select the most ambiguous sequences (Yan et al. Eq. 12)."""

    _capability = "loss_decoder"

    @abstractmethod
    def decision_function(self, X): ...

    def decoding_losses(self, X) -> np.ndarray:
        """(n, n_classes): sum_s L(m_rs f_s(x)) for every class r (:func:`ovr_decoding_losses`)."""
        return ovr_decoding_losses(self.decision_function(X))


def ovr_decoding_losses(F) -> np.ndarray:
    """(n, n_classes) losses of loss-based decoding of one-against-all margins ``F``: for class r,
    sum_s L(m_rs f_s) with L(z) = log(1 + e^-z), m_rs = +1 if r = s else -1 (Allwein et al. 2000).

    ``F`` is (n, S), one binary problem per class, or (n,) for two classes: one problem with class 1
    positive (the code [[-1], [+1]]: class 0 loses L(-f), class 1 L(f)). Computed as
    sum_s L(-f_s) - L(-f_r) + L(f_r), in O(n S) and without overflow.
    """
    F = np.asarray(F, dtype=float)
    if F.ndim == 1:
        return np.column_stack([np.logaddexp(0.0, F), np.logaddexp(0.0, -F)])
    neg = np.logaddexp(0.0, F)  # L(-f) = log(1 + e^f)
    return neg.sum(1, keepdims=True) - neg + np.logaddexp(0.0, -F)


class ModelBank(_Capability):
    """Capability: a bank of base models whose outputs are ranking features (Merler et al. 5.1).

    ``fit(X, y)`` on the base rows (``X`` a dict of views or a matrix); ``n_models_`` after fit;
    ``model_output(X, j, rows)`` the outputs of model j on ``rows`` of ``X``, shape (len(rows),),
    computed in vectorised blocks. The stacked protocol builds the bank once per trial and
    concept and shares it between the compared methods.
    """

    _capability = "model_bank"

    @abstractmethod
    def fit(self, X, y): ...

    @abstractmethod
    def model_output(self, X, j: int, rows: np.ndarray) -> np.ndarray: ...


class LazyColumns:
    """An (n_rows, n_cols) matrix whose column j is computed only where asked, and counted.

    ``evaluate(j, rows) -> (len(rows),)`` computes column j on the given row positions (a base
    model's outputs on some items, in vectorised blocks). :meth:`column` evaluates only the rows
    of column j not computed before, keeps them, and adds their number to ``n_evals``: the
    ranking cost of Merler et al. (Sec. 5.2, Fig. 5) counted in base-model evaluations.
    ``np.asarray(lazy)`` evaluates every missing entry (for rankers that want a plain matrix).

    Parameters
    ----------
    evaluate : callable (j, rows) -> 1-D array
    shape : (n_rows, n_cols)
    """

    def __init__(self, evaluate, shape: tuple[int, int]):
        self._evaluate = evaluate
        self.shape = (int(shape[0]), int(shape[1]))
        # column-major: a column (one base model's outputs) is contiguous, so reading it is a copy
        self._values = np.zeros(self.shape, order="F")
        self._known = np.zeros(self.shape, dtype=bool, order="F")
        self.n_evals = 0
        #: the ranker method reading the columns (named when a computed value is refused)
        self.read_by = ""

    @classmethod
    def of_array(cls, A) -> "LazyColumns":
        """A plain 2-D array behind the same interface (its evaluations are counted too)."""
        A = np.asarray(A, dtype=float)
        if A.ndim != 2:
            raise ValueError(f"expected a 2-D array of base-model outputs, got shape {A.shape}")
        return cls(lambda j, rows: A[rows, j], A.shape)

    def __len__(self) -> int:
        return self.shape[0]

    @property
    def ndim(self) -> int:
        return 2

    def column(self, j: int, rows=None) -> np.ndarray:
        """Column ``j`` on ``rows`` (default every row), computing only entries not known yet."""
        j = int(j)
        if not 0 <= j < self.shape[1]:
            raise IndexError(f"column {j} out of range for {self.shape[1]} columns")
        if rows is None:
            missing = np.flatnonzero(~self._known[:, j])    # ascending, each row once
        else:
            rows = np.asarray(rows, dtype=np.intp)
            missing = rows[~self._known[rows, j]]
            if len(missing) > 1 and not (missing[1:] > missing[:-1]).all():  # np.unique costs ~0.4 us a row
                missing = np.unique(missing)
        if len(missing):
            vals = np.asarray(self._evaluate(j, missing), dtype=float).reshape(-1)
            if vals.shape != missing.shape:
                raise ValueError(f"evaluate({j}, rows) returned {vals.shape[0]} values for {len(missing)} rows")
            if not np.isfinite(vals).all():  # what a booster reads is checked as it is computed
                bad = missing[~np.isfinite(vals)]
                raise InputError(f"{self.read_by or 'LazyColumns'}: X (base-model outputs) column {j} has "
                                 f"{len(bad)} non-finite values (NaN or infinite), the first in row "
                                 f"{int(bad[0])}; expected finite outputs")
            self._values[missing, j] = vals
            self._known[missing, j] = True
            self.n_evals += len(missing)
        return self._values[:, j].copy() if rows is None else self._values[rows, j]

    def evals_per_row(self) -> np.ndarray:
        """How many columns (base models) have been computed for each row so far."""
        return self._known.sum(axis=1)

    def columns(self, cols, rows=None) -> np.ndarray:
        """(len(rows), len(cols)) block of several columns."""
        return np.stack([self.column(j, rows) for j in cols], axis=1) if len(cols) else \
            np.zeros((self.shape[0] if rows is None else len(rows), 0))

    def __array__(self, dtype=None, copy=None):
        out = self.columns(range(self.shape[1]))
        return out if dtype is None else out.astype(dtype)


def as_columns(X) -> LazyColumns:
    """``X`` itself when it is a :class:`LazyColumns`, else a plain 2-D array wrapped as one."""
    return X if isinstance(X, LazyColumns) else LazyColumns.of_array(X)


def capabilities(est) -> frozenset[str]:
    """The capabilities of a ranker (instance or class): its mixins', or what a wrapper (a
    preprocessing pipeline) reports for the ranker inside it through ``ranker_capabilities``."""
    wrapped = None if isinstance(est, type) else getattr(est, "ranker_capabilities", None)
    if wrapped is not None:
        return frozenset(wrapped)
    klass = est if isinstance(est, type) else type(est)
    return frozenset(k.__dict__["_capability"] for k in klass.__mro__ if k.__dict__.get("_capability"))


def capability_mixins() -> dict[str, type]:
    """Every capability mixin of this module by the name protocols ask for (``"pair_scorer"`` ...)."""
    return {k._capability: k for k in (PairScorer, MetricLearner, ItemScorer, ModelBooster, PairwiseRanker,
                                       Classifier, ModelBank, LossDecoder)}


def accepts_views(est) -> bool:
    return bool(getattr(est, "accepts_views", False))


def fit_accepts(est, name: str) -> bool:
    """Whether the ranker's ``fit`` names a keyword ``name`` (e.g. ``constraints``) among its
    parameters; a wrapper names the estimator that receives the arguments through ``fit_target``.
    A ``fit(X, y, **params)`` does not count: scikit-learn's Pipeline refuses a keyword it cannot
    route, and a ``fit`` that ignores it would take the unlabelled rows that come with
    ``constraints`` (``y = -1``) for a class of their own."""
    target = getattr(est, "fit_target", est)
    return name in inspect.signature(target.fit).parameters


def diagnostics(est) -> dict:
    """What a fitted ranker reports about itself for tables and plots (its ``diagnostics_``)."""
    d = getattr(est, "diagnostics_", None)
    return dict(d) if isinstance(d, dict) else {}

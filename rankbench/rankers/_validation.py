"""Input checks of the rankers: the feature matrices of every ``fit`` and scoring method, the pairs
of the ``PairwiseRanker`` capability and the constraints of the classifiers.

:func:`checked_input` is THE check of a ranker's features, called once where they enter (at the
top of ``fit``, with a Python caller's parameters, and of every scoring method) and passed on
typed: 2-D, numeric and real, non-empty, finite (scikit-learn's ``check_array``), at scoring as
wide as at fit (``n_features_in_``, each view's width for rankers that take a dict of views).
Whatever is wrong is one :class:`~rankbench.errors.InputError` (a ``ValueError``, as
scikit-learn's checks expect) naming the ranker, the method, the argument and what was wrong.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..params import validate_estimator


def _problem(X, exc: Exception) -> str:
    """What is wrong with ``X`` that ``check_array`` refused, in a few words."""
    if _sparse(X):
        return "is a sparse matrix; expected a dense 2-D array (sparse input is not supported)"
    try:
        A = np.asarray(X)
    except Exception:  # noqa: BLE001 - ragged or otherwise not an array: say what it is
        return f"is not an array of numbers (got {type(X).__name__})"
    if A.dtype.kind == "c":
        return "holds complex numbers; expected real features (Complex data not supported)"
    if A.dtype.kind not in "biuf":
        try:
            A = A.astype(np.float64)
        except (TypeError, ValueError):
            return f"is not numeric (dtype {A.dtype}); expected numbers"
    if A.ndim != 2:
        return (f"has shape {A.shape}; expected a 2-D array (rows x features; Reshape your data, e.g. "
                "X.reshape(-1, 1) for one feature)")
    if A.size == 0:  # in scikit-learn's words
        what = "sample" if A.shape[0] == 0 else "feature"
        return f"is empty: 0 {what}(s) (shape={A.shape}) while a minimum of 1 is required."
    if A.dtype.kind == "f" and not np.isfinite(A).all():
        return _non_finite(A)
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _sparse(X) -> bool:
    from scipy.sparse import issparse

    return issparse(X)


def _non_finite(A: np.ndarray) -> str:
    bad = ~np.isfinite(A)
    n_nan = int(np.isnan(A).sum())
    return (f"has {int(bad.sum())} non-finite values (NaN or infinite; {n_nan} NaN), the first in row "
            f"{int(np.argwhere(bad)[0][0])}; expected finite features (drop or impute them first)")


def checked_matrix(X, who: str, arg: str = "X", n_features: int | None = None, owner: str = "",
                   dtype=np.float64) -> np.ndarray:
    """``X`` as a finite, non-empty 2-D real array of ``dtype`` (no copy when it already is one),
    ``n_features`` wide if given; else InputError ``"<who>: <arg> <what is wrong>"``."""
    from sklearn.utils.validation import check_array

    try:
        A = check_array(X, dtype=dtype, ensure_all_finite=True, input_name=arg)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{who}: {arg} {_problem(X, exc)}") from None
    if n_features is not None and A.shape[1] != n_features:
        raise InputError(f"{who}: {arg} has {A.shape[1]} features, but {owner or who.split('.')[0]} is "
                         f"expecting {n_features} features as input (the width it was fitted on)")
    return A


def checked_input(ranker, X, method: str, arg: str = "X", *, y=None, cams=None, min_rows: int = 1,
                  dtype=np.float64, lazy_ok: bool = False):
    """The features a ranker's ``method`` was given, checked (the module docstring) and typed.

    At ``fit`` it sets ``n_features_in_`` (the total width for views) and ``views_in_`` ({view:
    width}, or None for a single matrix); at any other method it compares with them. A dict is a
    ranker's views (only where ``accepts_views``: each view a matrix, all with the same rows); a
    :class:`~rankbench.rankers.base.LazyColumns` (base-model outputs, ``lazy_ok``) is checked for
    its shape only, never evaluated here (its columns are checked as they are computed). ``y``
    (labels or identities of ``fit``) and ``cams``, when given, have one entry per row; ``min_rows`` is
    the fewest rows ``fit`` learns from (2 for rankers of pairs of rows).
    """
    if method == "fit":  # a Python caller's parameters (the engine's rankers: checked by the config)
        validate_estimator(ranker, getattr(ranker, "registry_name", None))
    out = _checked_input(ranker, X, method, arg, dtype, lazy_ok)
    shape = np.shape(next(iter(out.values())) if isinstance(out, dict) else out)
    if shape[0] < min_rows:  # in scikit-learn's words
        raise InputError(f"{type(ranker).__name__}.{method}: {arg} has {shape[0]} sample(s) (shape={shape}) while "
                         f"a minimum of {min_rows} is required.")
    for what, values in (("y", y), ("cams", cams)):
        if values is not None and np.asarray(values).size != shape[0]:
            raise InputError(f"{type(ranker).__name__}.{method}: {what} has {np.asarray(values).size} entries for "
                             f"{shape[0]} rows of {arg}; expected one per row")
    return out


def _checked_input(ranker, X, method, arg, dtype, lazy_ok):
    from .base import LazyColumns

    name = type(ranker).__name__
    who = f"{name}.{method}"
    fitting = method == "fit"
    views = None if fitting else getattr(ranker, "views_in_", None)
    width = None if fitting else getattr(ranker, "n_features_in_", None)
    if isinstance(X, dict) and not _sparse(X):  # (scipy's dok_matrix is a dict)
        if not getattr(ranker, "accepts_views", False):
            raise InputError(f"{who}: {arg} is a dict of views ({', '.join(map(str, X))}); expected one 2-D "
                             "array (this ranker takes no views: drop `combine: views`)")
        if not X:
            raise InputError(f"{who}: {arg} is an empty dict of views; expected at least one view")
        if not fitting and views is None:
            raise InputError(f"{who}: {arg} is a dict of views, but {name} was fitted on one matrix")
        if views is not None:
            missing = [v for v in views if v not in X]
            if missing:
                raise InputError(f"{who}: view {missing[0]!r} missing from {arg} (fitted on views "
                                 f"{', '.join(map(str, views))})")
        out = {k: checked_matrix(v, who, f"{arg}[{k!r}]", None if views is None else views.get(k), name, dtype)
               for k, v in X.items()}
        rows = {len(v) for v in out.values()}
        if len(rows) > 1:
            raise InputError(f"{who}: the views of {arg} have different numbers of rows "
                             f"({', '.join(f'{k}: {len(v)}' for k, v in out.items())})")
        if fitting:
            ranker.views_in_ = {k: v.shape[1] for k, v in out.items()}
            ranker.n_features_in_ = sum(ranker.views_in_.values())
        return out
    if views is not None:
        raise InputError(f"{who}: {arg} is one matrix, but {name} was fitted on the views "
                         f"{', '.join(map(str, views))} (give a dict of them)")
    if isinstance(X, LazyColumns):
        if not lazy_ok:
            X = np.asarray(X)  # a ranker that wants a plain matrix evaluates every output
        else:
            if X.shape[0] < 1 or X.shape[1] < 1:
                raise InputError(f"{who}: {arg} is empty (shape {X.shape}); expected at least one row and "
                                 "one column")
            if width is not None and X.shape[1] != width:
                raise InputError(f"{who}: {arg} has {X.shape[1]} features, but {name} is expecting {width} "
                                 "features as input (the width it was fitted on)")
            return X
    out = checked_matrix(X, who, arg, width, name, dtype)
    if fitting:
        ranker.n_features_in_ = out.shape[1]
        ranker.views_in_ = None
    return out


def checked_rows(block: np.ndarray, who: str, arg: str) -> np.ndarray:
    """``block`` (rows of an input that a ranker reads a few at a time) when finite; else the
    InputError of :func:`checked_matrix` for them."""
    if not np.isfinite(block).all():
        raise InputError(f"{who}: {arg} {_non_finite(block)}")
    return block


def _whole(values) -> np.ndarray:
    """``values`` as int64 when every one is a whole number (never truncated); else ValueError."""
    A = np.asarray(values)
    if A.dtype.kind not in "biu" and (A.dtype.kind != "f" or not np.all(np.mod(A, 1) == 0)):
        raise ValueError(f"{A.dtype} values that are not all whole numbers")
    return A.astype(np.int64)


def check_pairs(pairs, sign, n_items: int, who: str = "") -> tuple[np.ndarray, np.ndarray]:
    """``(pairs, sign)`` as int arrays, or InputError (``"<who>: ..."``) naming what is wrong."""
    at = f"{who}: " if who else ""
    try:
        pairs, sign = _whole(pairs).reshape(-1, 2), _whole(sign).ravel()
    except (TypeError, ValueError) as exc:
        raise InputError(f"{at}pairs must be an (p, 2) integer array and sign p integers ({exc})") from None
    if len(sign) != len(pairs):
        raise InputError(f"{at}pairs ({len(pairs)}) and sign ({len(sign)}) differ in length")
    if len(pairs) and (pairs.min() < 0 or pairs.max() >= n_items):
        raise InputError(f"{at}pair indices must lie in [0, {n_items}) (the rows of X)")
    if not np.isin(sign, (-1, 0, 1)).all():
        raise InputError(f"{at}sign must be +1, -1 (ordered) or 0 (similar)")
    if not (sign != 0).any():
        raise InputError(f"{at}at least one ordered pair (sign != 0) is needed")
    return pairs, sign


def check_constraints(constraints, n_rows: int) -> np.ndarray:
    """``constraints`` as an (c, 3) int array (i, j, same) of rows < ``n_rows``, same in {0, 1}."""
    if constraints is None:
        return np.zeros((0, 3), dtype=np.intp)
    C = np.asarray(constraints)
    if C.size == 0:
        return np.zeros((0, 3), dtype=np.intp)
    if C.ndim != 2 or C.shape[1] != 3:
        raise InputError(f"constraints must be an (c, 3) array of (i, j, same), got shape {C.shape}")
    try:
        C = _whole(C)
    except (TypeError, ValueError):
        raise InputError("constraints must hold integers (row indices and same = 0 / 1)") from None
    if C[:, :2].min() < 0 or C[:, :2].max() >= n_rows:
        raise InputError(f"constraint row indices must lie in 0..{n_rows - 1} (the rows of X)")
    if not np.isin(C[:, 2], (0, 1)).all():
        raise InputError("the third column of constraints (same) must be 1 (same object) or 0 (different)")
    return C.astype(np.intp)

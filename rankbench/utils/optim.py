"""Backtracking line search, shared by the iterative solvers that need one (Armijo 1966).

The ranking-SVM primal has its own exact line search (its objective is piecewise quadratic);
this is for the others: projected gradient steps on kernel weights, damped Newton steps of
logistic losses.
"""

from __future__ import annotations

from typing import Any, Callable


def backtrack(trial: Callable[[float], tuple[float, Any]], accept: Callable[[float, Any, float], bool],
              step: float = 1.0, shrink: float = 0.5, min_step: float = 1e-10) -> tuple[float, float, Any]:
    """The first step ``t = step * shrink^k`` whose ``trial(t) = (value, state)`` is accepted.

    ``accept(value, state, t)`` states the sufficient-decrease condition (e.g. Armijo's
    ``value <= f0 - sigma * t * slope``); below ``min_step`` the last trial is returned as it is.
    Returns ``(t, value, state)``.
    """
    t = step
    while True:
        value, state = trial(t)
        if accept(value, state, t) or t < min_step:
            return t, value, state
        t *= shrink

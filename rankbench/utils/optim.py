"""What the iterative solvers share: one result type and one backtracking (Armijo) line search.

Every iterative solver of the rankers (the ranking-SVM primal, the dual logistic Newton, cMDS-DML's
descent, LDMLR's projected gradient, GMKL's kernel weights) returns :func:`solver_result`, scipy's
:class:`~scipy.optimize.OptimizeResult` with ``x``, ``fun``, ``nit``, ``status``, ``message``
and ``success`` (plus its own fields), and a ranker reports :func:`stop_diagnostics` of it.

The ranking-SVM primal has its own exact line search (its objective is piecewise quadratic);
:func:`backtrack` is for the others: projected gradient steps on kernel weights, damped Newton
steps of logistic losses, cMDS-DML's steepest descent (Armijo 1966).
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Sequence

from scipy.optimize import OptimizeResult

#: ``status`` of a solver result (scipy's convention: 0 is success) -> its short name in diagnostics
STATUS = {0: "converged", 1: "max_iter", 2: "line_search"}
CONVERGED, MAX_ITER, LINE_SEARCH = 0, 1, 2


def solver_result(x: Any, fun: float, nit: int, status: int, message: str, **fields: Any) -> OptimizeResult:
    """The one result of an iterative solver.

    ``status``: :data:`CONVERGED` (a stopping rule on the gradient, the step or the objective was
    met), :data:`MAX_ITER` (the iteration cap came first) or :data:`LINE_SEARCH` (no trial step
    gave sufficient decrease); ``message`` says which rule in words; ``success`` is
    ``status == CONVERGED``. ``fields`` are the solver's own (an intercept, counters, a history).
    """
    if status not in STATUS:
        raise ValueError(f"status must be one of {sorted(STATUS)}, got {status!r}")
    return OptimizeResult(x=x, fun=float(fun), nit=int(nit), status=int(status), message=message,
                          success=status == CONVERGED, **fields)


def stop_diagnostics(*results: OptimizeResult) -> dict:
    """What a ranker reports of its solver in ``diagnostics_``: ``n_iter`` and ``status``; of
    several solves (one per binary problem), the most iterations and the worst status (the
    largest code: a problem that hit its cap is not hidden by others that converged)."""
    return {"n_iter": max(int(r.nit) for r in results), "status": STATUS[max(int(r.status) for r in results)]}


class Step(NamedTuple):
    """A backtracking line search's outcome: the step, its trial's value and state, the number of
    trials and whether the last one was accepted."""

    t: float
    value: float
    state: Any
    trials: int
    accepted: bool


def backtrack(trial: Callable[[float], tuple[float, Any]], accept: Callable[[float, Any, float], bool],
              step: float = 1.0, shrink: float = 0.5, min_step: float = 1e-10,
              steps: Sequence[float] | None = None) -> Step:
    """The first step ``t = step * shrink^k`` (k = 0, 1, ...), or of ``steps`` in order, whose
    ``trial(t) = (value, state)`` is accepted.

    ``accept(value, state, t)`` states the sufficient-decrease condition (e.g. Armijo's
    ``value <= f0 - sigma * t * slope``). The search gives up once ``t`` is below ``min_step``
    or ``steps`` are exhausted, returning the last trial with ``accepted=False`` (the caller
    decides: take it, or stop).
    """
    n = 0
    t = step
    todo = iter(steps) if steps is not None else None
    while True:
        if todo is not None:
            t = next(todo)
        value, state = trial(t)
        n += 1
        if accept(value, state, t):
            return Step(t, value, state, n, True)
        if (steps is None and t < min_step) or (steps is not None and n >= len(steps)):
            return Step(t, value, state, n, False)
        if todo is None:
            t *= shrink

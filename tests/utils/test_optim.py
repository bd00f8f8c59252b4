"""The solvers' one result type and one backtracking line search; every solver reports its stop."""

import numpy as np
import pytest
from scipy.optimize import OptimizeResult
from toydata import toy_ranking_pairs, two_camera_people

from rankbench.utils.optim import backtrack, solver_result, stop_diagnostics


def test_a_result_has_scipys_shape_and_reports_its_stop():
    r = solver_result(np.ones(2), 3, 7, 1, "cap", z=5)
    assert isinstance(r, OptimizeResult) and (r.fun, r.nit, r.status, r.message, r.z) == (3.0, 7, 1, "cap", 5)
    assert not r.success and solver_result(0, 0, 1, 0, "ok").success
    # several solves: the most iterations and the worst status
    assert stop_diagnostics(r, solver_result(0, 0, 9, 0, "ok")) == {"n_iter": 9, "status": "max_iter"}
    assert stop_diagnostics(solver_result(0, 0, 2, 2, "no step")) == {"n_iter": 2, "status": "line_search"}
    with pytest.raises(ValueError):
        solver_result(0, 0, 1, 5, "?")


def test_backtrack_takes_the_first_accepted_step_or_says_none_was():
    f = lambda t: ((t - 0.2) ** 2, None)  # noqa: E731
    armijo = lambda v, _, t: v <= 0.04 - 1e-4 * t * 0.4  # noqa: E731  (f(0) = 0.04, slope 0.4)
    step = backtrack(f, armijo)
    assert (step.t, step.trials, step.accepted) == (0.25, 3, True)  # 1 and 0.5 overshoot
    assert backtrack(f, armijo, steps=[0.9, 0.3, 0.2]).t == 0.3
    none = backtrack(f, armijo, steps=[0.9, 0.8])
    assert (none.t, none.trials, none.accepted) == (0.8, 2, False)
    never = backtrack(f, lambda *_: False, min_step=0.1)
    assert not never.accepted and never.t == 0.0625 and never.trials == 5


def test_the_solvers_report_a_cap_they_hit():
    from rankbench.rankers.logistic.klr import klr_newton
    from rankbench.rankers.metric_learning.ldmlr import LDMLR
    from rankbench.rankers.ranksvm.linear import RankSVM
    from rankbench.rankers.ranksvm.prsvm import PRSVM

    X, y, cams = two_camera_people(10, 5, noise=0.4, seed=1)
    assert PRSVM(C=1.0, tol=1e-12, max_newton=1).fit(X, y, cams).diagnostics_ == {"C": 1.0, "n_iter": 1, "status": "max_iter"}
    done = PRSVM(C=1.0, tol=1e-3, max_newton=50).fit(X, y, cams)
    assert done.result_.success and done.diagnostics_["status"] == "converged" and done.diagnostics_["n_iter"] < 50
    Xp, P, s, _ = toy_ranking_pairs(n=30)
    assert RankSVM(C=1.0, tol=1e-14, max_iter=1).fit(Xp, P, s).diagnostics_["status"] == "max_iter"
    K = np.exp(-((Xp[:, None] - Xp[None]) ** 2).sum(-1) / 8)
    yy = np.where(Xp[:, 0] > 0, 1.0, -1.0)
    assert klr_newton(K, yy, 0.1, max_iter=1).status == 1 and klr_newton(K, yy, 0.1).success
    assert LDMLR(K=2, T_max=3).fit(Xp, np.round(Xp[:, 0])).diagnostics_["status"] == "max_iter"

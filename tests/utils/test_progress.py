"""Progress: the fit hook, the ETA estimator (against simulated schedules), a run's progress lines,
and the logging set-up the command line uses."""

import io
import logging
import warnings

import numpy as np
import pytest

from rankbench.utils.progress import (
    FitReporter,
    JobInfo,
    RunProgress,
    configure_logging,
    estimate_eta,
    fit_fraction,
    reporting,
    tick,
)


# ----------------------------------------------------------------------------- the hook
def test_tick_without_a_reporter_is_a_no_op():
    tick("round", 1, 10)  # nothing installed: nothing happens, nothing raised


def test_reporter_keeps_each_loop_and_forgets_the_inner_loops_of_an_outer_step():
    states = []
    with reporting(FitReporter("job-1", states.append, interval=0.0)):
        tick("C", 1, 3)
        tick("newton", 5, None)
        tick("C", 2, 3)            # a new outer step: its previous inner loop is over
    tick("C", 3, 3)                # outside the block: no reporter
    assert states[0]["job"] == "job-1" and states[0]["loops"] == {}          # the start
    assert [s["loops"] for s in states[1:]] == [{"C": [1, 3]}, {"C": [1, 3], "newton": [5, None]}, {"C": [2, 3]}]


def test_reporter_passes_at_most_one_state_per_interval():
    states = []
    with reporting(FitReporter("job-1", states.append, interval=3600.0)) as reporter:
        for t in range(1000):
            tick("round", t + 1, 1000)
    assert len(states) == 1  # only the start within the hour
    assert reporter.state()["loops"] == {"round": [1000, 1000]}  # the latest is kept for the next report


# ----------------------------------------------------------------------------- the ETA
def test_eta_per_method_from_finished_jobs():
    timings = {"ELF": [100.0, 120.0], "L1": [1.0]}
    est = estimate_eta(["ELF", "ELF", "L1", "L1", "L1"], [], timings, workers=1)
    assert est.seconds == pytest.approx(2 * 110 + 3 * 1) and est.untimed == []
    # two workers: a job running well short of its mean has the rest of it left (80 s); the jobs
    # queued go, in order, to the worker free first: ELF at 0 -> 110, ELF at 80 -> 190, L1s after 110
    est = estimate_eta(["ELF", "ELF", "L1", "L1", "L1"], [("ELF", 30.0)], timings, workers=2)
    assert est.seconds == pytest.approx(190, rel=1e-3)
    # a long job handed out last runs alone at the end: the estimate counts it in full
    est = estimate_eta(["L1"] * 8 + ["ELF"], [], timings, workers=4)
    assert est.seconds == pytest.approx(2 + 110)


def test_a_job_past_its_methods_mean_has_a_little_left_never_nothing():
    """E[T - t | T > t] for T ~ N(mean, spread): checked against a sampled normal."""
    timings = {"ELF": [100.0, 100.0]}                # spread: the floor, 20 % of the mean
    samples = np.random.default_rng(0).normal(100.0, 20.0, 2_000_000)
    for ran in (60.0, 100.0, 130.0, 170.0):
        truth = (samples[samples > ran] - ran).mean()
        assert estimate_eta([], [("ELF", ran)], timings, 1).seconds == pytest.approx(truth, rel=0.02)
    later = [estimate_eta([], [("ELF", ran)], timings, 1).seconds for ran in (100.0, 150.0, 300.0, 1000.0)]
    assert all(a > b > 0 for a, b in zip(later, later[1:]))


def test_eta_says_estimating_until_a_method_has_a_finished_job():
    est = estimate_eta(["ELF", "L1", "L1", "L1"], [("ELF", 50.0)], {"L1": [2.0]}, workers=1)
    assert est.untimed == ["ELF"] and est.seconds == pytest.approx(6.0)
    assert est.text() == "more than 6.0 s left; estimating ELF (no finished job yet)"
    assert estimate_eta(["L1"] * 3, [], {"L1": [2.0]}, 1).text() == "about 6.0 s left"


def test_a_job_of_an_untimed_method_is_projected_from_its_own_progress():
    assert fit_fraction({"round": [51, 200]}) == pytest.approx(0.25)
    assert fit_fraction({"cv point": [3, 16], "cv fold": [6, 10], "newton": [4, None]}) == pytest.approx(2.5 / 16)
    assert fit_fraction({"newton": [4, None]}) is None and fit_fraction({}) is None
    # a quarter done in 100 s: 300 s left; the queued job of its method still cannot be timed
    est = estimate_eta(["ELF"], [("ELF", 100.0, 0.25)], {}, workers=2)
    assert est.seconds == pytest.approx(300.0) and est.untimed == ["ELF"]
    assert estimate_eta([], [("ELF", 100.0, 0.25)], {}, workers=2) == (pytest.approx(300.0), [])
    # what the fit did before its first tick (e.g. building its pairs) is not read as a slow start
    assert estimate_eta([], [("ELF", 160.0, 0.25, 100.0)], {}, 1).seconds == pytest.approx(300.0)
    # too little done to say, or no loop with a total: not guessed
    assert estimate_eta([], [("ELF", 5.0, 0.01)], {}, 1).untimed == ["ELF"]
    assert estimate_eta([], [("ELF", 5.0, None)], {}, 1).untimed == ["ELF"]


def _simulate(durations: list[tuple[str, float]], workers: int):
    """Greedy list scheduling of jobs in plan order; at every job's end, the estimate from what is
    known then and the true time left."""
    free = [0.0] * workers
    spans = []
    for method, d in durations:
        k = int(np.argmin(free))
        spans.append((method, free[k], free[k] + d))
        free[k] += d
    end_all = max(e for _, _, e in spans)
    out = []
    for _, _, now in sorted(spans, key=lambda s: s[2])[:-1]:
        done = [(m, e - s) for m, s, e in spans if e <= now]
        timings = {}
        for m, d in done:
            timings.setdefault(m, []).append(d)
        running = [(m, now - s) for m, s, e in spans if s <= now < e]
        queued = [m for m, s, _ in spans if s > now]
        out.append((estimate_eta(queued, running, timings, workers), end_all - now))
    return out


@pytest.mark.parametrize("workers", [1, 2, 4])
def test_eta_is_honest_within_a_factor_of_two_on_simulated_runs(workers):
    """Runs shaped like the papers' configs, in the engine's order (setting, method in config
    order, trial): a fast baseline, a slow boosting method and a medium SVM in either order, with
    or without a sweep of three settings whose jobs grow by 20 % each, and job times that vary by
    +-15 %. Once every method left has finished a job, and before the run's last tenth (where
    what is left is one running job's luck), nine estimates in ten are within a factor of two of
    the time actually left, and the typical one within 30 % of it (the growing sweeps' later jobs
    take longer than their method's mean so far: the estimate runs short there, as it must)."""
    rng = np.random.default_rng(0)
    shapes = [{"L1": 1.0, "ELF": 870.0, "PRSVM": 60.0}, {"ELF": 870.0, "PRSVM": 60.0, "L1": 1.0},
              {"RankSVM": 40.0, "RankMKL": 400.0, "GIST": 5.0}, {"RankMKL": 400.0, "GIST": 5.0, "RankSVM": 40.0}]
    ratios = []
    for shape in shapes:
        for trials, growth in ((2, [1.0]), (5, [1.0]), (10, [1.0]), (3, [1.0, 1.2, 1.44]), (10, [1.0, 1.2, 1.44])):
            jobs = [(m, base * g * rng.lognormal(0.0, 0.15)) for g in growth for m, base in shape.items()
                    for _ in range(trials)]
            moments = _simulate(jobs, workers)
            run_time = max(truth for _, truth in moments)
            ratios += [est.seconds / truth for est, truth in moments if not est.untimed and truth >= 0.1 * run_time]
    ratios = np.array(ratios)
    assert len(ratios) >= 50
    assert np.mean((ratios >= 0.5) & (ratios <= 2.0)) >= 0.9, np.sort(ratios)
    assert 0.7 <= np.median(ratios) <= 1.3


# ----------------------------------------------------------------------------- a run's lines
@pytest.fixture
def lines():
    """What rankbench logs, as configured by the command line, into a buffer."""
    stream = io.StringIO()
    configure_logging(0, stream)
    yield lambda: stream.getvalue().splitlines()
    configure_logging(-1)


def test_run_progress_in_a_log_says_what_finished_and_what_is_left(lines):
    jobs = [JobInfo(f"{m}-{t}", m, f"{m} trial {t}") for m in ("L1", "ELF") for t in range(2)]
    with RunProgress("viper", jobs, workers=1, stream=io.StringIO(), every=3600.0) as p:
        p.started("L1-0")
        p.finished("L1-0", 1.0)
        p.started("L1-1")
        p.finished("L1-1", 1.0)
        p.started("ELF-0")
        p.every = 0.0  # the next event is the first in an hour: a line about the jobs in progress
        p.update("ELF-0", {"started": 0.0, "loops": {"round": [120, 200]}})
        p.every = 3600.0
        p.finished("ELF-0", 600.0, [("UserWarning: slow", 3)])
        p.finished("ELF-1", 600.0)
    out = [line.split("] ", 1)[1] for line in lines()]  # after the elapsed time
    assert out == [
        "viper: 4 job(s) on 1 worker(s)",
        "viper: 1/4 done: L1 trial 0 (1.0 s); more than 1.0 s left; estimating ELF (no finished job yet)",
        "viper: 2/4 done: L1 trial 1 (1.0 s); estimating ELF (no finished job yet)",
        out[3],
        "warning: ELF trial 0: UserWarning: slow (3 times)",
        "viper: 3/4 done: ELF trial 0 (10.0 min); about 10.0 min left",
        "viper: 4/4 done: ELF trial 1 (10.0 min)"]
    assert out[3].startswith("viper: 2/4 done; running: ELF trial 0 (round 120/200, ") and "estimating ELF" in out[3]


def test_quiet_keeps_warnings_only_and_warnings_are_one_line():
    stream = io.StringIO()
    configure_logging(-1, stream)
    try:
        with RunProgress("viper", [JobInfo("a", "L1", "L1 trial 0")], stream=io.StringIO()) as p:
            p.finished("a", 1.0)
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.warn("beta is below the bound\nsecond line", UserWarning)
    finally:
        configure_logging(-1)
        logging.captureWarnings(False)
    out = stream.getvalue().splitlines()
    assert len(out) == 1, out
    assert "warning: UserWarning: beta is below the bound second line (test_progress.py:" in out[0]


def test_verbose_adds_each_fit_step(lines):
    configure_logging(1, stream := io.StringIO())
    with RunProgress("r", [JobInfo("a", "M", "M trial 0")], stream=io.StringIO()) as p:
        p.started("a")
        p.update("a", {"started": 0.0, "loops": {"step": [2, 5]}})
        p.finished("a", 1.0)
    out = stream.getvalue()
    assert "r: started M trial 0" in out and "r: M trial 0: step 2/5" in out

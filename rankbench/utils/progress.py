"""Progress that a researcher can follow on a terminal and in a log file, from a run down to a fit.

:func:`configure_logging` sets up the ``rankbench`` loggers for a command; :func:`tick` is the
hook a long loop inside a fit calls (rankers import only it); :class:`RunProgress` follows a run's
jobs and its time left (:func:`estimate_eta`); :class:`Progress` the steps of one piece of work.
On a terminal, work that takes a while is drawn as a live tqdm bar instead of INFO lines.
"""

from __future__ import annotations

import contextlib
import heapq
import logging
import math
import statistics
import sys
import threading
import time
import warnings
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Callable, NamedTuple

log = logging.getLogger("rankbench.progress")


def fmt_duration(seconds: float) -> str:
    """``0.4 s``, ``42 s``, ``3.5 min``, ``1.2 h``."""
    if seconds < 9.95:
        return f"{seconds:.1f} s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def _is_tty(stream) -> bool:
    return bool(getattr(stream, "isatty", lambda: False)())


# ----------------------------------------------------------------------------- logging
class _Elapsed(logging.Formatter):
    """``[  12.3 s] message`` (``warning: `` before a warning's message): one line per event."""

    def __init__(self):
        super().__init__()
        self.t0 = time.monotonic()

    def format(self, record: logging.LogRecord) -> str:
        level = "" if record.levelno < logging.WARNING else f"{record.levelname.lower()}: "
        text = " ".join(record.getMessage().split("\n"))
        return f"[{fmt_duration(time.monotonic() - self.t0):>8}] {level}{text}"


class _BarSafeHandler(logging.StreamHandler):
    """Writes to ``stream`` (default: stderr as it is at each event; a test runner swaps it), above
    a live tqdm bar (``tqdm.write``) when the stream is a terminal."""

    def __init__(self, stream=None):
        logging.Handler.__init__(self)
        self._stream = stream

    @property
    def stream(self):
        return self._stream or sys.stderr

    def emit(self, record: logging.LogRecord) -> None:
        if not _is_tty(self.stream):
            return super().emit(record)
        try:
            from tqdm import tqdm

            tqdm.write(self.format(record), file=self.stream)
        except Exception:  # noqa: BLE001 - logging must never raise
            self.handleError(record)


def _one_line_warning(message, category, filename, lineno, line=None) -> str:
    return f"{category.__name__}: {message} ({Path(filename).name}:{lineno})"


def configure_logging(verbosity: int = 0, stream=None) -> None:
    """Set up the ``rankbench`` loggers for a command: ``verbosity`` -1 (``-q``) warnings and errors,
    0 progress events (INFO), 1 (``-v``) DEBUG; Python warnings as one logged line each (with the
    file and line that raised them, not the source text)."""
    level = logging.WARNING if verbosity < 0 else logging.DEBUG if verbosity > 0 else logging.INFO
    handler = _BarSafeHandler(stream)
    handler.setFormatter(_Elapsed())
    for name in ("rankbench", "py.warnings"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(level)
        logger.propagate = False
    logging.captureWarnings(False)  # then on again: installed afresh even if something (a test
    logging.captureWarnings(True)   # runner) has put its own warnings.showwarning back meanwhile
    warnings.formatwarning = _one_line_warning


def progress_shown() -> bool:
    """Whether progress events reach the user (INFO is enabled for rankbench's loggers)."""
    return log.isEnabledFor(logging.INFO)


# ----------------------------------------------------------------------------- the hook
#: the loop a job that waits for another process's identical result shows (:func:`~.diskcache.cached`)
WAITING = "waiting for another process computing the same result"


class FitReporter:
    """Receives one job's :func:`tick` calls and passes the job's state to ``sink``: the latest
    position of each loop (an outer loop's tick forgets the inner loops of its previous step).

    Parameters
    ----------
    job : the job's id (what ``sink`` is told about).
    sink : called with the state ``{"job", "started", "ticking", "updated", "loops": {what: [done,
        total]}}`` (``ticking``: when the first tick came, None before), when the reporter starts
        and then at most once per ``interval`` seconds.
    interval : least seconds between two calls of ``sink``.
    """

    def __init__(self, job: str, sink: Callable[[dict[str, Any]], None], interval: float = 1.0):
        self.job, self.sink, self.interval = job, sink, interval
        self.loops: dict[str, list[int | None]] = {}
        self.started = time.time()
        self.ticking: float | None = None
        self._last = time.monotonic()
        sink(self.state())

    def tick(self, what: str, done: int, total: int | None) -> None:
        if self.ticking is None:
            self.ticking = time.time()
        if what in self.loops:  # the loops ticked after this one were its previous iteration's
            names = list(self.loops)
            for inner in names[names.index(what) + 1:]:
                del self.loops[inner]
        if what != WAITING:
            self.loops.pop(WAITING, None)   # the wait is over: the job computes after all, or goes on
        self.loops[what] = [int(done), None if total is None else int(total)]
        now = time.monotonic()
        if now - self._last >= self.interval or what == WAITING:   # a wait is said at once
            self._last = now
            self.sink(self.state())

    def state(self) -> dict[str, Any]:
        return {"job": self.job, "started": self.started, "ticking": self.ticking, "updated": time.time(),
                "loops": {k: list(v) for k, v in self.loops.items()}}


_reporter: ContextVar[FitReporter | None] = ContextVar("rankbench_fit_reporter", default=None)


def tick(what: str, done: int, total: int | None = None) -> None:
    """A long loop of a fit says how far it is: ``tick("round", t + 1, n_rounds)``, ``tick("C",
    k + 1, len(grid))`` (``total`` None when unknown). A no-op unless the engine reports the
    current job's progress; a fit that starts threads of its own reports from its own thread only."""
    reporter = _reporter.get()
    if reporter is not None:
        reporter.tick(what, done, total)


@contextlib.contextmanager
def reporting(reporter: FitReporter):
    """Route :func:`tick` calls of the code run inside the block (this thread) to ``reporter``."""
    token = _reporter.set(reporter)
    try:
        yield reporter
    finally:
        _reporter.reset(token)


def describe_loops(loops: dict[str, list]) -> str:
    """``round 120/200, C 3/10``."""
    return ", ".join(k if k == WAITING else f"{k} {d}" + (f"/{t}" if t else "") for k, (d, t) in loops.items())


# ----------------------------------------------------------------------------- the ETA
class Estimate(NamedTuple):
    """Seconds left for the methods already timed, and the methods with jobs left but no timing."""

    seconds: float
    untimed: list[str]

    def text(self) -> str:
        if not self.untimed:
            return f"about {fmt_duration(self.seconds)} left"
        known = f"more than {fmt_duration(self.seconds)} left; " if self.seconds >= 1 else ""
        return f"{known}estimating {', '.join(self.untimed)} (no finished job yet)"


#: job times of one method vary (splits, machine load): at least this spread (a fraction of the
#: method's mean) is assumed when its finished jobs show less or are too few to tell
MIN_SPREAD = 0.2


def _time_left(mean: float, spread: float, ran: float) -> float:
    """Expected time left of a job that has run ``ran`` s, its method's job times ~ N(mean, spread):
    E[T - ran | T > ran] (about ``mean - ran`` early on; small, never negative, past the mean)."""
    z = (ran - mean) / spread
    if z > 8:  # far in the tail: the inverse Mills ratio's limit
        return spread / z
    tail = 0.5 * math.erfc(z / math.sqrt(2))
    return mean - ran + spread * math.exp(-z * z / 2) / math.sqrt(2 * math.pi) / tail


#: a running job's own progress is projected only once this share of its fit is done
MIN_FRACTION = 0.05


def fit_fraction(loops: dict[str, list]) -> float | None:
    """The share of a fit done, from its loops' positions (outer loop first; each tick marks the
    start of step ``done``): ``round 51/200`` is 0.25, ``cv point 3/16, cv fold 6/10`` is
    (2 + 5/10) / 16. None when no loop has a known total."""
    share, scale = 0.0, 1.0
    for done, total in loops.values():
        if not total:
            break
        share += scale * (done - 1) / total
        scale /= total
    return share if scale < 1.0 else None


def estimate_eta(queued: list[str], running: list[tuple], timings: dict[str, list[float]],
                 workers: int) -> Estimate:
    """The time until every job is done, per method from its finished jobs' wall times.

    Parameters
    ----------
    queued : the method of every job not started yet, in the order they will be handed out.
    running : (method, seconds it has run[, share of its fit done or None, seconds since its fit's
        first tick]) of every job in progress (the share: :func:`fit_fraction`).
    timings : wall times of each method's finished jobs (this session's and earlier ones').
    workers : how many jobs run at once.

    A queued job is expected to take its method's mean wall time; a running job what is left of
    it given how long it has run (:func:`_time_left`: the spread is the finished jobs' standard
    deviation, at least :data:`MIN_SPREAD` of the mean). A running job of a method with no
    finished job yet is projected from its own progress, once :data:`MIN_FRACTION` of it is done:
    ``t (1 - share) / share`` with ``t`` the time since its first tick (what a fit does before its
    loops, such as building its pairs, is not taken for a slow start of them). The jobs left are then handed, in order, to whichever
    worker frees up first, as the executors do: the estimate is when the last one ends (so a long
    job that starts late, alone, counts in full). Methods with jobs left that neither way can time
    are ``untimed``: their jobs count as taking no time (the estimate is then a lower bound) and
    are named instead of guessed.
    """
    stats = {}
    for m, times in timings.items():
        if times:
            mean = statistics.fmean(times)
            stats[m] = mean, max(statistics.stdev(times) if len(times) > 1 else 0.0, MIN_SPREAD * mean)
    untimed, free = {m for m in queued if m not in stats}, []
    for m, ran, *progress in running:
        share, ticked = (progress + [None, None])[:2]
        if m in stats:
            free.append(_time_left(*stats[m], ran) if stats[m][1] > 0 else 0.0)
        elif share is not None and share >= MIN_FRACTION:
            free.append((ran if ticked is None else ticked) * (1 - share) / share)
        else:
            untimed.add(m)
            free.append(0.0)
    free += [0.0] * max(0, workers - len(free))  # idle workers
    heapq.heapify(free)
    for m in queued:
        heapq.heappush(free, heapq.heappop(free) + (stats[m][0] if m in stats else 0.0))
    return Estimate(max(free, default=0.0), sorted(untimed))


# ----------------------------------------------------------------------------- a run's jobs
class _Closing:
    """Used in a ``with`` block, closes on the way out (the bar goes, a watcher thread stops)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class JobInfo(NamedTuple):
    id: str
    method: str
    label: str


class RunProgress(_Closing):
    """What a run's jobs are doing, for its user: which are running and how far their fits are,
    which finished, and the time left (:func:`estimate_eta`; a method it cannot time yet is named,
    "estimating", not guessed).

    Parameters
    ----------
    name : the run (the config's name).
    jobs : the jobs of this session, in the order they are handed out.
    workers : how many run at once.
    timings : wall times of each method's jobs finished in earlier sessions (a resumed run).
    enabled : False = silent (``-q``).
    stream : where a terminal bar goes (default stderr); anything but a terminal gets log lines.
    every : least seconds between two log lines about jobs in progress (log mode).
    """

    def __init__(self, name: str, jobs: list[JobInfo], workers: int = 1,
                 timings: dict[str, list[float]] | None = None, enabled: bool = True, stream=None,
                 every: float = 30.0):
        self.name, self.workers, self.every = name, max(1, workers), every
        self.jobs = {j.id: j for j in jobs}
        self.timings = {m: list(v) for m, v in (timings or {}).items()}
        self.running: dict[str, dict[str, Any]] = {}   # id -> latest state
        self._finished: set[str] = set()   # a late heartbeat of one of these is not news
        self.done = 0
        self.total = len(jobs)
        self.enabled = enabled and self.total > 0
        self.stream = stream or sys.stderr
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None
        self._last_status = time.monotonic()
        self._bar = None
        if self.enabled and _is_tty(self.stream):
            from tqdm.auto import tqdm

            self._bar = tqdm(total=self.total, desc=name, leave=False, dynamic_ncols=True, file=self.stream,
                             bar_format="{desc}: {n_fmt}/{total_fmt} jobs |{bar}| {elapsed}{postfix}")
        elif self.enabled:
            log.info(f"{name}: {self.total} job(s) on {self.workers} worker(s)")

    # ------------------------------------------------------------------ events
    def started(self, job_id: str, state: dict[str, Any] | None = None) -> None:
        """A job began (``state``: its fit's progress so far)."""
        with self._lock:
            if job_id in self.running or job_id in self._finished or job_id not in self.jobs:
                return
            job = self.jobs[job_id]
            self.running[job_id] = state or {"started": time.time(), "loops": {}}
            log.debug(f"{self.name}: started {job.label}")
            self._show()

    def update(self, job_id: str, state: dict[str, Any]) -> None:
        """The progress of a running job's fit (a :class:`FitReporter` state)."""
        with self._lock:
            if job_id not in self.running:  # (a finished job's late heartbeat is ignored there)
                self.started(job_id, state)
                return
            self.running[job_id] = state
            log.debug(f"{self.name}: {self.jobs[job_id].label}: {describe_loops(state.get('loops', {}))}")
            self._show()

    def finished(self, job_id: str, wall_s: float | None, said: list[tuple[str, int]] | None = None,
                 failure: str | None = None) -> None:
        """A job's result is saved (it took ``wall_s`` seconds; ``said``: the warnings it raised,
        (text, count), logged as warnings naming the job; ``failure``: why the job failed, logged
        as one error line naming it, its time left out of the estimates)."""
        with self._lock:
            job = self.jobs.get(job_id)
            if job is None or job_id in self._finished:
                return
            for text, count in said or []:
                log.warning(f"{job.label}: {text}" + (f" ({count} times)" if count > 1 else ""))
            if failure is not None:
                log.error(f"{job.label} FAILED in {failure}")
            self._finished.add(job_id)
            self.running.pop(job_id, None)
            if wall_s is not None and failure is None:
                self.timings.setdefault(job.method, []).append(float(wall_s))
            self.done += 1
            took = f" ({fmt_duration(wall_s)})" if wall_s is not None else ""
            if self._bar is not None:
                self._bar.update(1)
                self._show()
            elif self.enabled:
                tail = f"; {self.estimate().text()}" if self.done < self.total else ""
                log.info(f"{self.name}: {self.done}/{self.total} done: {job.label}{took}{tail}")
                self._last_status = time.monotonic()

    def set_running(self, job_ids: set[str], states: dict[str, dict] | None = None) -> None:
        """The jobs in progress as an executor sees them now (heartbeats, a scheduler's view);
        jobs that stopped showing are left to :meth:`finished`."""
        states = states or {}
        for job_id in job_ids:
            if job_id in states:
                self.update(job_id, states[job_id])
            else:
                self.started(job_id)

    # ------------------------------------------------------------------ watching
    def watch(self, poll: Callable[[], None] | None = None, interval: float = 1.0) -> None:
        """Refresh the display every ``interval`` seconds in a background thread, first calling
        ``poll`` (e.g. reading the workers' heartbeats) when given."""
        if not self.enabled or self._watcher is not None:
            return

        def loop() -> None:
            while not self._stop.wait(interval):
                try:
                    if poll is not None:
                        poll()
                    with self._lock:
                        self._show()
                except Exception:  # noqa: BLE001 - progress must never stop a run
                    log.debug("progress watcher", exc_info=True)

        self._watcher = threading.Thread(target=loop, name="rankbench-progress", daemon=True)
        self._watcher.start()

    def close(self) -> None:
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join(timeout=5)
            self._watcher = None
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    # ------------------------------------------------------------------ showing
    def estimate(self) -> Estimate:
        now = time.time()
        running = [(self.jobs[i].method, now - float(s.get("started", now)), fit_fraction(s.get("loops", {})),
                    None if s.get("ticking") is None else now - float(s["ticking"])) for i, s in self.running.items()]
        queued = [j.method for i, j in self.jobs.items() if i not in self.running and i not in self._finished]
        return estimate_eta(queued, running, self.timings, self.workers)

    def running_text(self, limit: int = 3) -> str:
        """``ELF trial 0 (round 120/200, 4.0 min), ...``: the jobs in progress, longest first."""
        now = time.time()
        rows = sorted(self.running.items(), key=lambda kv: float(kv[1].get("started", now)))
        parts = []
        for job_id, s in rows[:limit]:
            loops = describe_loops(s.get("loops", {}))
            ran = fmt_duration(now - float(s.get("started", now)))
            parts.append(f"{self.jobs[job_id].label} ({loops + ', ' if loops else ''}{ran})")
        more = f", +{len(rows) - limit} more" if len(rows) > limit else ""
        return ", ".join(parts) + more

    def _show(self) -> None:
        """Redraw the bar, or (log mode) a line about the jobs in progress every ``every`` s."""
        if not self.enabled or self.done >= self.total:
            return
        if self._bar is not None:
            running = self.running_text(limit=2)
            self._bar.set_postfix_str(f"{self.estimate().text()}" + (f" | running: {running}" if running else ""),
                                      refresh=True)
            return
        now = time.monotonic()
        if self.running and now - self._last_status >= self.every:
            self._last_status = now
            log.info(f"{self.name}: {self.done}/{self.total} done; running: {self.running_text(limit=8)}; "
                     f"{self.estimate().text()}")


# ----------------------------------------------------------------------------- one piece of work
class Progress(_Closing):
    """Counts finished steps of one piece of work and reports them (bar or log lines).

    Parameters
    ----------
    total : number of steps.
    desc : what the work is (``"features elf_strips"``).
    enabled : False = silent.
    min_interval : least seconds between two log lines (log mode only).
    stream : where a bar goes (default stderr); anything but a terminal gets log lines.
    """

    def __init__(self, total: int, desc: str = "", enabled: bool = True, min_interval: float = 0.0,
                 stream=None):
        self.total = int(total)
        self.desc = desc
        self.enabled = enabled and self.total > 0
        self.min_interval = min_interval
        self.stream = stream or sys.stderr
        self.done = 0
        self.t0 = time.perf_counter()
        self._last_line = -float("inf")
        self._bar = None
        if self.enabled and _is_tty(self.stream):
            from tqdm.auto import tqdm

            self._bar = tqdm(total=self.total, desc=desc, leave=False, dynamic_ncols=True, file=self.stream)

    def step(self, n: int = 1) -> None:
        """``n`` more steps finished."""
        self.done += n
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(n)
            return
        now = time.perf_counter()
        if now - self._last_line < self.min_interval and self.done < self.total:
            return
        self._last_line = now
        elapsed = now - self.t0
        eta = elapsed / self.done * (self.total - self.done) if self.done else float("nan")
        tail = f", about {fmt_duration(eta)} left" if self.done < self.total else ""
        log.info(f"{self.desc}: {self.done}/{self.total} done; {fmt_duration(elapsed)} elapsed{tail}")

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

"""Where a run's jobs are computed: this machine's processes (:class:`LocalExecutor`), or a Dask
cluster (:class:`DaskExecutor`).

An executor is handed the unfinished (setting, trial, method) jobs as :class:`Work` items and the
function that computes one (``run_job``), and sees to it that each result is written to the run
folder atomically as soon as it exists: an interrupted run loses at most the jobs in flight, and
``--resume`` works whichever executor started the run. Every job carries its own seeds, so
results never depend on the executor.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import threading
import time
import uuid
from collections import Counter
from concurrent.futures.process import BrokenProcessPool
from functools import partial
from typing import Any, Callable, NamedTuple

from ..errors import ConfigError, RankbenchError, Terminated
from ..runfolder import RunFolder, job_id
from ..utils.progress import RunProgress


class Work(NamedTuple):
    """One job and what computing it needs (``run_job(*work)`` computes it)."""

    job: Any        # jobs.Job: setting, trial, method, seeds
    protocol: Any
    spec: Any       # estimator.MethodSpec
    X: Any          # the method's feature matrix, or a dict of views
    dataset: Any    # the dataset without its images
    split: Any      # records.TrialSplit

    @property
    def label(self) -> str:
        """``<setting> <method> trial <k>``, as progress shows a finished job."""
        setting, trial, method = self.job.setting, self.job.trial, self.job.method
        return f"{setting + ' ' if setting else ''}{method} trial {trial}"

    @property
    def id(self) -> str:
        return job_id(self.job.setting, self.job.trial, self.job.method)


JobFn = Callable[..., Any]  # jobs.run_job: returns the job's TrialRecord


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def finished(progress: RunProgress, arrived: list, job: str, record) -> None:
    """Keep ``record`` (a TrialRecord) in ``arrived`` and tell ``progress`` that job ``job`` wrote
    it: its time, its warnings, and for a failed job its error."""
    arrived.append(record)
    failure = None if record.ok else f"{record.phase or 'evaluate'}: {record.error}"
    progress.finished(job, record.wall_s, [(w.text, w.count) for w in record.warnings], failure)


class WorkerDied(RankbenchError):
    """A worker process ended without a result (killed, or crashed outside Python), naming the jobs it
    was running; the results that arrived are kept."""


# ----------------------------------------------------------------------------- local
class LocalExecutor:
    """Jobs in this process (``jobs=1``) or in ``jobs`` joblib worker processes.

    Parameters
    ----------
    jobs : int
        Worker processes; 1 runs every job in this process.
    """

    def __init__(self, jobs: int = 1):
        self.jobs = jobs

    def __enter__(self) -> "LocalExecutor":
        return self

    def __exit__(self, *exc) -> None:
        pass

    def run(self, fn: JobFn, work: list[Work], folder: RunFolder | None, progress: RunProgress,
            arrived: list) -> int:
        """Compute every job; the worker that computed a result writes it (into ``folder``, when
        there is one) and each record is kept in ``arrived`` here. Returns the count.

        In this process each fit reports to ``progress`` directly; worker processes write their
        jobs' heartbeats into the run folder, which a thread here reads every second."""
        if self.jobs == 1 or len(work) <= 1:
            progress.watch()
            for w in work:
                progress.started(w.id)
                finished(progress, arrived, w.id, fn(*w, folder, partial(progress.update, w.id)))
            return len(work)
        from joblib import Parallel, delayed

        def poll() -> None:
            beats = folder.read_heartbeats() if folder is not None else {}
            progress.set_running(set(beats), beats)

        progress.watch(poll)
        parent = os.getpid()
        gen = Parallel(n_jobs=min(self.jobs, len(work)), return_as="generator_unordered")(
            delayed(_in_worker)(parent, fn, *w, folder) for w in work)
        try:
            for rec in gen:
                finished(progress, arrived, job_id(*rec.key), rec)
        except BrokenProcessPool as exc:  # joblib's TerminatedWorkerError: a worker killed or crashed
            beats = folder.read_heartbeats() if folder is not None else {}
            running = ", ".join(f"{w.job.method} trial {w.job.trial}" for w in work if w.id in beats)
            codes = re.search(r"\{.*\}", str(exc))
            raise WorkerDied(f"a worker process died{f' (exit code {codes.group(0)[1:-1]})' if codes else ''} while "
                             f"running {running or 'one of the jobs'}: killed (as by the out-of-memory killer) or "
                             "crashed in compiled code") from None
        return len(work)

    def slots(self) -> int:
        """How many jobs run at once."""
        return self.jobs

    def describe(self) -> dict[str, Any]:
        return {"kind": "local", "workers": self.jobs}


#: the process a worker watches (set once per worker process)
_WATCHED: int | None = None


def _in_worker(parent: int, fn: JobFn, *args):
    """Run one job in a worker process that dies with ``parent``, the run's process: a worker
    whose parent was killed outright (SIGKILL leaves no chance to stop it) must not go on writing
    results into a run folder that nobody runs any more."""
    _die_with(parent)
    return fn(*args)


def _die_with(parent: int, every: float = 0.2) -> None:
    """Start (once per process) a daemon thread that ends this process when its parent is no
    longer ``parent`` (the kernel re-parents an orphan)."""
    global _WATCHED
    if _WATCHED == parent or os.getpid() == parent:
        return
    _WATCHED = parent

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        os._exit(1)

    threading.Thread(target=watch, name="rankbench-parent-watch", daemon=True).start()


# ----------------------------------------------------------------------------- dask
def _rankbench_version() -> str:
    from .. import __version__

    return __version__


def _on_worker(job: bytes, X: Any, dataset: Any) -> tuple[str, Any, str]:
    """Run one job on a Dask worker: ``("ok", record, worker)`` or ``("user-error", exc, worker)``.

    ``job`` is ``(fn, job, protocol, spec, split)`` pickled by cloudpickle (:func:`_pickled_job`);
    ``X`` and ``dataset`` are the scattered data. A user mistake (a :class:`RankbenchError`; a
    module the job's code imports that this worker lacks) comes back as a value, so that Dask does
    not retry what would fail the same way again; any other exception is raised and retried.
    """
    import cloudpickle
    from distributed import get_worker

    try:
        worker = get_worker().address
    except ValueError:  # not on a worker (a client running tasks in-process)
        worker = "client"
    try:
        fn, job, protocol, spec, split = cloudpickle.loads(job)
    except Exception as exc:  # noqa: BLE001 - the worker's Python lacks what the code needs
        return "user-error", ConfigError(
            f"dask worker {worker}: cannot load a job ({type(exc).__name__}: {exc}); expected every module "
            "the run's components import installed there"), worker
    try:
        return "ok", fn(job, protocol, spec, X, dataset, split), worker
    except RankbenchError as exc:
        return "user-error", exc, worker


def _pickled_job(fn: JobFn, w: Work) -> bytes:
    """A job's objects, pickled by cloudpickle: the classes of modules loaded from a file
    (:func:`rankbench.registry.load_by_path`, registered to be pickled by value) travel inside.
    Dask pickles a task's arguments with plain pickle, which names a class by its module, and
    uses cloudpickle only for an object of ``__main__`` or of a registered module at the top;
    a worker cannot import a module that exists only in this process."""
    import cloudpickle

    return cloudpickle.dumps((fn, w.job, w.protocol, w.spec, w.split))


class DaskExecutor:
    """Jobs on a dask.distributed cluster, each result written by the client as it arrives.

    The scheduler and every worker must run this rankbench (checked when connecting). The feature
    matrices and datasets are scattered to every worker once; each job is one task, its objects
    pickled by cloudpickle (:func:`_pickled_job`). A job whose worker dies is run again by the
    scheduler (up to its ``allowed-failures``); one that raises anything but a user error is
    retried ``retries`` times; if every copy of the scattered data dies, it is scattered again
    and the jobs that needed it are submitted again. On Ctrl-C each step of stopping takes at
    most :attr:`STOP_S` seconds.

    Parameters
    ----------
    scheduler : str or None
        Address of a running scheduler (``tcp://host:port``); None starts a LocalCluster with one
        single-threaded worker process per core of this machine, closed again after the run.
    timeout : float
        Seconds to wait for the scheduler to answer, and again for its first worker; also how long
        a cluster may be left without any worker during the run before the run stops.
    retries : int
        Times a job that raised an exception (other than a user error) is run again.
    """

    #: seconds each step of stopping may take (saving the results that arrived, closing the client,
    #: closing a LocalCluster): Ctrl-C ends a run within seconds, whatever state the cluster is in
    STOP_S = 5.0

    def __init__(self, scheduler: str | None = None, timeout: float = 20.0, retries: int = 2):
        self.scheduler = scheduler
        self.timeout = timeout
        self.retries = retries

    # ------------------------------------------------------------------ connecting
    def __enter__(self) -> "DaskExecutor":
        try:
            import distributed
        except ImportError:
            raise ConfigError("--executor dask: expected the dask extra (pip install -e '.[dask]' in the rankbench "
                              "checkout), got no importable 'distributed' module") from None
        _quiet_interrupted_sync()
        self._cluster = self.client = None
        self.interrupted = False
        self.jobs_per_worker: Counter = Counter()
        self.workers_lost: list[str] = []
        self.resubmitted = 0
        where = "--scheduler" if self.scheduler else "--executor dask (a LocalCluster)"
        if self.scheduler is not None:
            _check_address(self.scheduler)
        else:
            self._cluster = _local_cluster(distributed)
        self.address = self.scheduler or self._cluster.scheduler_address
        try:
            self.client = distributed.Client(self.address, timeout=self.timeout, set_as_default=False)
        except (OSError, TimeoutError):
            self._close_cluster()
            raise ConfigError(f"{where}: expected a dask scheduler answering within {self.timeout:g} s, "
                              f"got {self.address} (no answer)") from None
        self._check_rankbench(where, "scheduler")
        try:
            self.client.wait_for_workers(1, timeout=self.timeout)
        except (TimeoutError, OSError):
            self.__exit__(None, None, None)
            raise ConfigError(f"{where}: expected at least one dask worker within {self.timeout:g} s, got "
                              f"0 workers at {self.address}") from None
        self._check_rankbench(where, "worker")
        if self._cluster is not None:  # restarted workers too leave Ctrl-C to this process
            self.client.register_plugin(_ignore_sigint_plugin(distributed), name="rankbench-ignore-sigint")
        self.workers_at_start = dict(self.client.nthreads())
        self.workers_seen = dict(self.workers_at_start)
        return self

    def _check_rankbench(self, where: str, on: str) -> None:
        """The scheduler (``on="scheduler"``: it unpickles every job) or every worker runs this
        rankbench; a job is sent as the name of rankbench's job function and its arguments."""
        from .. import __version__

        if on == "scheduler":
            try:
                found = {self.address: self.client.run_on_scheduler(_rankbench_version)}
            except Exception as exc:  # noqa: BLE001 - any failure to run it there is the answer
                found = {self.address: exc}
        else:
            found = self.client.run(_rankbench_version, on_error="return")
        for address, got in sorted(found.items()):
            if got != __version__:
                self.__exit__(None, None, None)
                got = (str(got) or type(got).__name__) if isinstance(got, BaseException) else f"version {got}"
                raise ConfigError(f"{where}: {on} {address}: expected rankbench {__version__} installed, got "
                                  f"{got}") from None

    def _close_cluster(self) -> None:
        """Close the LocalCluster this executor started, within twice :attr:`STOP_S` seconds (its
        nannies give a worker busy in a job 4 s, then kill it); worker processes still alive then
        are killed (they ignore Ctrl-C, and left alone they would hold the interpreter's exit,
        which waits for them). Not killed first: workers killed under a running scheduler make it
        log their lost connections, after the close has restored distributed's logging."""
        cluster, self._cluster = self._cluster, None
        if cluster is None:
            return
        try:
            cluster.close(timeout=2 * self.STOP_S)
        except Exception:  # noqa: BLE001 - a TimeoutError, or the cluster broke
            _kill_workers(cluster)

    def __exit__(self, *exc) -> None:
        client, self.client = self.client, None
        if client is not None:
            try:
                client.close(timeout=self.STOP_S)
            except Exception:  # noqa: BLE001 - a TimeoutError, or the cluster went away: nothing to close
                pass
        self._close_cluster()

    # ------------------------------------------------------------------ running
    def _scatter(self, objs: dict[int, Any]) -> dict[int, Any]:
        """Each shared object sent once to every worker; futures by the object's id."""
        ids = list(objs)
        futures = self.client.scatter([objs[i] for i in ids], broadcast=True, hash=False)
        return dict(zip(ids, futures))

    def run(self, fn: JobFn, work: list[Work], folder: RunFolder | None, progress: RunProgress,
            arrived: list) -> int:
        """Compute every job on the cluster; write each result here as it arrives (into ``folder``,
        when there is one) and keep it in ``arrived``. Returns the count.

        At most a few jobs per worker thread wait at the scheduler at any time (it balances them
        between workers); the rest are submitted in batches as results come back (one graph update
        per batch), so a sweep of any size costs the cluster little memory and an interruption has
        little to cancel. ``progress`` learns which jobs run as far as the scheduler tells (the
        tasks it has handed to workers, checked every second); the fits' own progress does not
        cross the cluster (their ticks go nowhere there).
        """
        from distributed import as_completed

        if not work:
            return 0
        shared = {id(o): o for w in work for o in (w.X, w.dataset)}
        remote = self._scatter(shared)
        session = uuid.uuid4().hex[:8]
        pending: dict[str, tuple[Work, Any, int]] = {}  # key -> (work, future, attempt)

        def submit(items: list[tuple[Work, int]]) -> None:
            """Jobs (with their attempt numbers) in one message to the scheduler."""
            keys = []
            for w, attempt in items:
                keys.append(f"rankbench-{session}-{w.id}" + (f"-again{attempt}" if attempt else ""))
            ws = [w for w, _ in items]
            futures = self.client.map(_on_worker, [_pickled_job(fn, w) for w in ws], [remote[id(w.X)] for w in ws],
                                      [remote[id(w.dataset)] for w in ws], key=keys, pure=False,
                                      retries=self.retries)
            for (w, attempt), key, fut in zip(items, keys, futures):
                pending[key] = (w, fut, attempt)
            ac.update(futures)

        queue = list(reversed(work))  # popped from the end: submitted in plan order
        # results are fetched a batch at a time (one gather); as_completed's with_results would fetch
        # each one with its own request through the scheduler, at about 3 ms of its time per job
        ac = as_completed([], loop=self.client.loop)
        nthreads = sum(self.workers_at_start.values())
        computed, checked, alone_since = 0, time.monotonic(), None
        signals = _Deferred()
        try:
            signals.install()
            while queue or not ac.is_empty():
                signals.check()
                window = 8 * max(nthreads, 1) + 16
                if queue and ac.count() <= window // 2:  # refill in one batch: one graph update, not many
                    submit([(queue.pop(), 0) for _ in range(min(len(queue), window - ac.count()))])
                batch = ac.next_batch(block=False)
                again = []
                for fut, result in self._results(batch):
                    w, _, attempt = pending.pop(fut.key)
                    if result is not None:
                        status, value, worker = result
                        if status == "user-error":
                            raise value
                        if folder is not None:
                            folder.write_trial(value)
                        self.jobs_per_worker[worker] += 1
                        computed += 1
                        finished(progress, arrived, w.id, value)
                    elif fut.status == "error":
                        self._raise_job_error(w, fut)
                    else:  # cancelled or lost: its scattered inputs died with their workers, or the scheduler
                        again.append((w, attempt + 1))
                if again:
                    remote = self._recover(again, remote, shared)
                    submit(again)
                if batch:
                    continue
                now = time.monotonic()
                if now - checked > 1.0:  # follow the cluster: its size (for the window), lost workers
                    checked = now
                    current = self._workers()
                    nthreads = sum(current.values())
                    progress.set_running(self._processing(pending))
                    alone_since = None if current else alone_since or now
                    if alone_since is not None and now - alone_since > self.timeout:
                        raise RankbenchError(f"--scheduler {self.address}: no dask worker (or no scheduler) for "
                                             f"{self.timeout:g} s; {computed} results of this session are "
                                             f"saved in {folder.path}; continue with --resume")
                time.sleep(0.005)
        except KeyboardInterrupt:
            self.interrupted = True
            self._save_ready(ac, pending, folder, progress, arrived)
            raise
        finally:
            signals.restore()
            # Release every future now, while the client is open: the scheduler then drops the jobs
            # no longer wanted. An exception's traceback keeps this frame, and a future released
            # after the client has closed prints a traceback of its own (Future.__del__).
            ac.clear()
            pending.clear()
            remote = batch = fut = None  # noqa: F841
        return computed

    def _processing(self, pending: dict[str, tuple[Work, Any, int]]) -> set[str]:
        """Ids of the jobs the scheduler has handed to workers now (empty if it does not answer)."""
        try:
            keys = {k for ks in self.client.processing().values() for k in ks}
        except Exception:  # noqa: BLE001 - the cluster may be going away; progress can wait
            return set()
        return {pending[k][0].id for k in keys if k in pending}

    def slots(self) -> int:
        """How many jobs run at once: the cluster's worker threads when it was joined."""
        return max(1, sum(self.workers_at_start.values()))

    def _workers(self) -> dict[str, int]:
        """The cluster's workers now ({} while the scheduler does not answer); notes lost ones."""
        if self.client.status != "running":
            return {}
        try:
            current = dict(self.client.nthreads())
        except (OSError, TimeoutError):
            return {}
        gone = (set(self.workers_seen) | set(self.jobs_per_worker)) - set(current) - set(self.workers_lost)
        self.workers_lost += sorted(gone)
        self.workers_seen |= current
        return current

    def _recover(self, again: list[tuple[Work, int]], remote: dict, shared: dict) -> dict:
        """Before cancelled jobs run again: the scattered data sent again if it was lost; its futures."""
        if self.client.status != "running":
            raise RankbenchError(f"--scheduler {self.address}: lost the connection to the dask scheduler; "
                                 "finished results are saved; continue with --resume")
        for w, attempt in again:
            if attempt > 3:
                raise RankbenchError(f"{w.label}: cancelled on the dask cluster {attempt} times (its workers "
                                     "keep dying); finished results are saved; continue with --resume")
        self.resubmitted += len(again)
        lost = {i: shared[i] for i, f in remote.items() if f.status != "finished"}
        return remote | self._scatter(lost) if lost else remote

    def _results(self, batch: list) -> list[tuple[Any, Any]]:
        """(future, result) of finished futures in one gather; result None for any other future
        (erred, cancelled, or lost between finishing and being fetched)."""
        done = [f for f in batch if f.status == "finished"]
        try:
            got = dict(zip([f.key for f in done], self.client.gather(done))) if done else {}
        except Exception:  # noqa: BLE001 - one of them was lost meanwhile: fetch them one by one
            got = {}
            for f in done:
                try:
                    got[f.key] = f.result()
                except Exception:  # noqa: BLE001 - lost for good: it runs again
                    pass
        return [(f, got.get(f.key)) for f in batch]

    def _raise_job_error(self, w: Work, fut) -> None:
        from distributed import KilledWorker

        exc = fut.exception()
        if isinstance(exc, KilledWorker):
            raise RankbenchError(f"{w.label}: {exc.allowed_failures + 1} dask workers died while running this "
                                 "job (the scheduler's allowed-failures); finished results are saved; continue "
                                 "with --resume") from None
        raise exc.with_traceback(fut.traceback())

    def _save_ready(self, ac, pending: dict, folder: RunFolder | None, progress: RunProgress, arrived: list) -> None:
        """On an interruption: write the results that have arrived but are not written yet, as many
        as can be fetched within :attr:`STOP_S` seconds (the others are computed again on resume)."""
        deadline = time.monotonic() + self.STOP_S
        for fut in ac.next_batch(block=False):
            w = pending.pop(fut.key, (None,))[0]
            left = deadline - time.monotonic()
            if fut.status != "finished" or left <= 0:
                continue
            try:
                status, record, _ = fut.result(timeout=left)
            except Exception:  # noqa: BLE001 - lost or too slow to fetch: computed again on resume
                continue
            if status == "ok":
                if folder is not None:
                    folder.write_trial(record)
                if w is not None:
                    finished(progress, arrived, w.id, record)

    def describe(self) -> dict[str, Any]:
        """For the manifest: the scheduler, every worker seen (threads, jobs it computed), lost ones
        (as last seen when the run was interrupted: the cluster is not asked again)."""
        if self.client is not None and not self.interrupted:
            self._workers()
        return {"kind": "dask", "scheduler": self.address, "local_cluster": self.scheduler is None,
                "retries": self.retries,
                "workers": {a: {"nthreads": n, "jobs": self.jobs_per_worker.get(a, 0)}
                            for a, n in sorted(self.workers_seen.items())},
                "workers_lost": sorted(self.workers_lost), "jobs_submitted_again": self.resubmitted}


class _InterruptedSyncNoise(logging.Filter):
    """Drops the record distributed's ``sync`` leaves when Ctrl-C interrupts a call into the cluster:
    its cancel callback then fails in tornado's event loop (``NameError`` on its free variable
    ``future``, a fault of distributed's, not of the run) and tornado would print that traceback
    after rankbench's one line. Every other record passes."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not (isinstance(exc, NameError) and "sync.<locals>.cancel" in record.getMessage())


def _quiet_interrupted_sync() -> None:
    """Install :class:`_InterruptedSyncNoise` on tornado's callback logger (once; it stays: the
    record can come after the executor has closed)."""
    logger = logging.getLogger("tornado.application")
    if not any(isinstance(f, _InterruptedSyncNoise) for f in logger.filters):
        logger.addFilter(_InterruptedSyncNoise())


class _Deferred:
    """Ctrl-C (and SIGTERM) as a flag the run loop checks (:meth:`check`) rather than an exception
    raised wherever the main thread happens to be: there, it may land in a dask ``Future.__del__``
    the garbage collector runs, where Python ignores it ("Exception ignored in ..."), and the run
    went on waiting for jobs. A second signal before the check raises at once."""

    def __init__(self):
        self.exc: BaseException | None = None
        self._old: dict[int, Any] = {}

    def __call__(self, signum, frame) -> None:
        if self.exc is not None:
            raise self.exc
        self.exc = Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()

    def install(self) -> None:
        if threading.current_thread() is threading.main_thread():  # else: no handler can be set
            self._old = {s: signal.signal(s, self) for s in (signal.SIGINT, signal.SIGTERM)}

    def restore(self) -> None:
        for s, old in self._old.items():
            signal.signal(s, old)
        self._old = {}

    def check(self) -> None:
        if self.exc is not None:
            raise self.exc


def _local_cluster(distributed):
    """A LocalCluster on 127.0.0.1: one single-threaded worker process per core of this machine.

    Its workers are started with SIGINT ignored (the disposition survives their exec), so a Ctrl-C
    in the terminal reaches only this process, which saves what has arrived and closes the cluster,
    instead of every worker printing a traceback. The scheduler lives in this process: its log lines
    about lost workers (and the data they held, which :meth:`DaskExecutor.run` scatters again)
    would interleave with the progress, so they are silenced.
    """
    n = cores()
    main = threading.current_thread() is threading.main_thread()
    old = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        return distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                                        dashboard_address=None, silence_logs=logging.CRITICAL,
                                        # its HTTP routes (health, metrics) on a free loopback port: the
                                        # default 8787 warns on stderr when another cluster holds it
                                        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"})
    finally:
        if main:
            signal.signal(signal.SIGINT, old)


def _kill_workers(cluster) -> None:
    """Kill the worker processes of ``cluster``, a LocalCluster of this process (its nannies' children)."""
    for nanny in list(cluster.workers.values()):
        pid = getattr(nanny, "pid", None)
        if pid:
            try:
                os.kill(pid, getattr(signal, "SIGKILL", signal.SIGTERM))
            except OSError:  # gone meanwhile
                pass


def _ignore_sigint_plugin(distributed):
    """A worker plugin: the worker process ignores SIGINT (for workers a nanny restarts later)."""

    class IgnoreSigint(distributed.WorkerPlugin):
        def setup(self, worker) -> None:
            try:
                signal.signal(signal.SIGINT, signal.SIG_IGN)
            except ValueError:  # not the process's main thread: leave it
                pass

    return IgnoreSigint()


def _check_address(address: str) -> None:
    """A scheduler address Dask can dial (``tcp://host:port``, ``host:port``, ``tls://...``)."""
    from distributed.comm import backends, parse_address, parse_host_port

    try:
        scheme, loc = parse_address(address)
        if scheme not in backends:
            raise ValueError(f"unknown scheme {scheme!r}")
        if scheme != "inproc":
            parse_host_port(loc)
    except ValueError as exc:
        raise ConfigError(f"--scheduler: expected an address such as tcp://HOST:PORT, got {address!r} "
                          f"({exc})") from None

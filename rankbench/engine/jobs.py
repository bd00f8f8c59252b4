"""One job: a method fitted and scored on one trial's split, its faults contained, its result
taken from an identical job's when one is cached (:mod:`.reuse`)."""

from __future__ import annotations

import contextlib
import datetime as _dt
import time
import traceback
import warnings
from collections import Counter
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable

from sklearn import config_context

from ..datasets.base import Dataset
from ..errors import RankbenchError
from ..protocols.base import Protocol
from ..runfolder import RunFolder, TrialRecord, TrialSplit, job_id
from ..utils.diskcache import cached
from ..utils.meter import Meter
from ..utils.process import kept
from ..utils.progress import FitReporter, reporting
from .estimator import MethodSpec


@dataclass
class Job:
    setting: str
    trial: int
    method: str
    seed: int
    ranker_seed: int | None
    #: the run's config fingerprint, stamped on the record (None for a run made before fingerprints)
    fingerprint: str | None = None
    #: the key of the job's result in the cache (:class:`TrialKeys`), None: computed, not reused
    reuse_key: str | None = None


def run_job(job: Job, protocol: Protocol, spec: MethodSpec, X, dataset: Dataset, split: TrialSplit,
            folder: RunFolder | None = None, progress_to: Callable[[dict], None] | None = None) -> TrialRecord:
    """Evaluate one method on one trial's split; write the record when ``folder`` is given.

    The fit's progress (:func:`rankbench.utils.progress.tick`) goes to ``progress_to`` (called
    with the job's state, in this process) or, without it, to the job's heartbeat in ``folder``
    (a worker process; removed when the job ends); with neither, nowhere. Warnings the job raises
    are kept in the record (``warnings``: each text once, with its count) for the caller to show.

    A job that fails is contained: any exception while building the ranker, fitting it, scoring
    with it or scoring its output (a :class:`~rankbench.errors.RankerFault` when its protocol
    refuses what it returned, a record that refuses a non-finite metric), and a ``sys.exit`` in
    the ranker's code, gives a *failed* record (``status: failed``: the exception's last line, the
    phase it stopped in, its traceback) instead of ending the run. Ctrl-C and SIGTERM are not
    caught.

    With a ``reuse_key``, the result of an identical job is taken from the cache (the record
    says so in ``reused``), and a finished result is stored there; a job waits for an identical
    one in progress elsewhere instead of computing it too. Failed results are not stored.
    """
    base = {"setting": job.setting, "trial": job.trial, "seed": job.seed, "ranker_seed": job.ranker_seed,
            "method": job.method, "config_fingerprint": job.fingerprint}
    if job.reuse_key is None:
        record = _computed(job, protocol, spec, X, dataset, split, base, folder, progress_to)
    else:
        made: list[TrialRecord] = []

        def compute() -> dict:
            made.append(_computed(job, protocol, spec, X, dataset, split, base, folder, progress_to))
            origin = {"run": str(folder.path) if folder is not None else None, "setting": job.setting,
                      "trial": job.trial, "method": job.method,
                      "at": _dt.datetime.now().astimezone().isoformat(timespec="seconds")}
            return {"record": made[0].model_dump(mode="json"), "origin": origin}

        entry, hit = cached("trials", job.reuse_key, compute, keep=lambda e: e["record"]["status"] == "ok")
        # a stored result as this job's record: its own labels, the stored result, where it came from
        record = TrialRecord.build({**entry["record"], **base, "reused": entry["origin"]}) if hit else made[0]
    if folder is not None:
        folder.write_trial(record)
    return record


def _computed(job: Job, protocol: Protocol, spec: MethodSpec, X, dataset: Dataset, split: TrialSplit, base: dict,
              folder: RunFolder | None, progress_to: Callable[[dict], None] | None) -> TrialRecord:
    """The job's record, computed (see :func:`run_job`)."""
    jid = job_id(job.setting, job.trial, job.method)
    sink = progress_to or (partial(folder.write_heartbeat, jid) if folder is not None else None)
    meter = Meter()

    def make():
        meter.phase = "build"
        ranker = spec.make(job.ranker_seed)
        meter.phase = None
        return ranker

    t0 = time.perf_counter()
    caught: list = []
    try:
        with contextlib.ExitStack() as stack:
            caught = stack.enter_context(warnings.catch_warnings(record=True))
            # every component of a job is built from a spec the config checked: not checked again at fit
            stack.enter_context(config_context(skip_parameter_validation=True))
            stack.enter_context(kept("the ranker's code"))
            if sink is not None:
                if progress_to is None:
                    stack.callback(folder.remove_heartbeat, jid)
                stack.enter_context(reporting(FitReporter(jid, sink)))
            result = protocol.evaluate(make, X, dataset, split, meter)
        record = TrialRecord.build({
            **base, "metrics": {**result.metrics, **meter.metrics()}, "curves": result.curves, "extra": result.extra,
            "wall_s": time.perf_counter() - t0, "warnings": _said(caught)})
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - whatever the ranker does, the run goes on
        record = TrialRecord.build({
            **base, "status": "failed", "error": fault_line(exc), "phase": meter.phase or "evaluate",
            "traceback": "".join(traceback.format_exception(exc))[-20000:],
            "wall_s": time.perf_counter() - t0, "warnings": _said(caught)})
    return record


def _said(caught: list) -> list[dict[str, Any]]:
    """Caught warnings as ``{"text", "count"}``, each text once."""
    said = Counter(f"{w.category.__name__}: {w.message}" for w in caught)
    return [{"text": text, "count": n} for text, n in said.items()]


def fault_line(exc: BaseException) -> str:
    """Why a job failed, in one line: a user error's message, or the exception's last line."""
    if isinstance(exc, RankbenchError):
        text = str(exc)
    elif isinstance(exc, SystemExit):
        text = f"SystemExit: the ranker's code called {getattr(exc, 'how', 'sys.exit')}({exc.code!r})"
    else:
        text = traceback.format_exception_only(exc)[-1]
    return " ".join(text.split())[:500] or type(exc).__name__

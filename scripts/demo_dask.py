"""A 1000-setting sweep on a two-worker loopback Dask cluster, one worker killed and restarted.

What it shows (issue 13's demonstration):

1. the sweep (``protocol.n_test`` 10..49 x ``protocol.n_train`` 20..68, 1000 settings, L1 and
   Euclidean matching on the generated re-id set, one trial: 2000 jobs) run locally with
   ``--jobs 2`` (joblib processes), wall time measured;
2. the same sweep on a loopback cluster (``dask scheduler`` and two ``dask worker`` processes, each
   one single-threaded worker behind a nanny, all on 127.0.0.1); when a third of the results are
   in, the busiest worker process is killed by its pid (SIGKILL) and its nanny restarts it;
3. every result present, and trials.csv bit-identical to the local run's (timing columns aside);
4. the costs: wall time of the job phase on both; per job, the cluster's time beyond the job's own
   compute (``wall x worker threads / jobs - mean job time``) and the CPU the scheduler process and
   the client spend; and Dask's bare cost per task on the same cluster (2000 no-op tasks, submitted
   and gathered in batches of 32 as the executor does).

Usage::

    python scripts/demo_dask.py [--out results/demo_dask] [--keep]

Everything runs on 127.0.0.1 and every process it starts is stopped at the end. Timings on a
shared machine move with its load; the load average is printed beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pandas as pd

N_TEST = list(range(10, 50))          # 40 values
N_TRAIN = list(range(20, 70, 2))      # 25 values: n_train + n_test <= 117 < 120 people
CONFIG = f"""
name: demo_dask
description: issue 13 demonstration, 1000 settings x 1 trial x 2 methods
dataset: {{name: synthetic_reid, n_people: 120}}
features: [{{name: colour, extractor: color_strips, bins: 8}}]
protocol: {{name: reid, ranks: [1, 5, 10]}}
trials: 1
seed: 0
rankers:
  - {{name: L1, ranker: l1}}
  - {{name: Euclidean, ranker: euclidean}}
sweep:
  protocol.n_test: {N_TEST}
  protocol.n_train: {N_TRAIN}
"""
TIMING = ["train_s", "test_s", "peak_mb"]
BIN = Path(sys.executable).parent


def cpu_s(pid: int | None = None) -> float:
    """User + system CPU seconds a process has used so far (this one by default)."""
    import psutil  # installed with distributed

    t = psutil.Process(pid).cpu_times()
    return t.user + t.system


class PhaseTimer:
    """Times the job phase (``executor.run``) of a run, apart from planning and the report, and the
    CPU seconds this process (the client) and, if set, ``scheduler_pid`` spend in it."""

    def __init__(self):
        from rankbench.engine import executors

        self.seconds: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.scheduler_pid: int | None = None
        for cls in (executors.LocalExecutor, executors.DaskExecutor):
            self._wrap(cls)

    def _wrap(self, cls):
        real, timer = cls.run, self

        def run(ex, *args, **kwargs):
            t0, c0 = time.perf_counter(), cpu_s()
            s0 = cpu_s(timer.scheduler_pid) if timer.scheduler_pid else 0.0
            try:
                return real(ex, *args, **kwargs)
            finally:
                timer.seconds[ex.kind] = time.perf_counter() - t0
                timer.cpu[f"{ex.kind}_client"] = cpu_s() - c0
                if timer.scheduler_pid:
                    timer.cpu[f"{ex.kind}_scheduler"] = cpu_s(timer.scheduler_pid) - s0

        cls.run = run


def start_cluster(tmp: Path) -> tuple[str, list[subprocess.Popen]]:
    """A scheduler and two single-threaded workers (each behind a nanny) on 127.0.0.1."""
    sfile = tmp / "scheduler.json"
    log = open(tmp / "cluster.log", "w")
    procs = [subprocess.Popen([str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0",
                               "--no-dashboard", "--scheduler-file", str(sfile)], stdout=log, stderr=log)]
    deadline = time.monotonic() + 60
    while not sfile.is_file() and time.monotonic() < deadline:
        time.sleep(0.1)
    address = json.loads(sfile.read_text())["address"]
    for _ in range(2):
        procs.append(subprocess.Popen([str(BIN / "dask"), "worker", address, "--nthreads", "1", "--nworkers", "1",
                                       "--host", "127.0.0.1", "--no-dashboard", "--memory-limit", "2GB"],
                                      stdout=log, stderr=log))
    return address, procs


def stop(procs: list[subprocess.Popen]) -> None:
    for p in reversed(procs):  # workers first, the scheduler last
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()


def killer(client, trials_dir: Path, at: int, record: dict) -> threading.Thread:
    """When ``at`` results exist: SIGKILL the process of a worker that is running a job; then time
    how long until the scheduler has dropped it and the nanny's new worker has joined."""

    def watch():
        deadline = time.monotonic() + 1800
        while time.monotonic() < deadline:
            if trials_dir.is_dir() and sum(1 for _ in trials_dir.glob("*.json")) >= at:
                busy = [w for w, keys in client.processing().items() if keys] or list(client.nthreads())
                victim = busy[0]
                pid = client.run(os.getpid, workers=[victim])[victim]
                os.kill(pid, signal.SIGKILL)
                t = time.monotonic()
                record.update(victim=victim, pid=pid, at_results=sum(1 for _ in trials_dir.glob("*.json")))
                break
            time.sleep(0.05)
        else:
            return
        while time.monotonic() < deadline and victim in client.nthreads():
            time.sleep(0.05)
        record["dropped_after_s"] = round(time.monotonic() - t, 2)
        while time.monotonic() < deadline and len(client.nthreads()) < 2:
            time.sleep(0.05)
        record["replaced_after_s"] = round(time.monotonic() - t, 2)
        record["workers_after"] = sorted(client.nthreads())

    th = threading.Thread(target=watch, daemon=True)
    th.start()
    return th


def noop_round_trip(client, n: int, scheduler_pid: int, batch: int = 32) -> tuple[float, float]:
    """(wall s, scheduler CPU s) per task of ``n`` no-op tasks submitted and gathered in batches of
    ``batch``, as the executor does: Dask's bare cost per task on this cluster."""
    t0, s0 = time.perf_counter(), cpu_s(scheduler_pid)
    for b in range(0, n, batch):
        keys = [f"noop-{i}" for i in range(b, min(n, b + batch))]
        client.gather(client.map(int, range(len(keys)), key=keys, pure=False))
    return (time.perf_counter() - t0) / n, (cpu_s(scheduler_pid) - s0) / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="results/demo_dask", help="where the two run folders go")
    ap.add_argument("--keep", action="store_true", help="keep earlier run folders (else replaced)")
    args = ap.parse_args()

    from distributed import Client

    from rankbench import app
    from rankbench.runfolder import TRIALS_CSV, RunFolder

    out = Path(args.out)
    if out.exists() and not args.keep:
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    cfg = out / "demo_dask.yaml"
    cfg.write_text(CONFIG)
    os.environ.setdefault("RANKBENCH_CACHE", str(out / "cache"))
    print(f"load average at start: {os.getloadavg()}", flush=True)
    timer = PhaseTimer()

    # 1. locally, two joblib processes
    t0 = time.perf_counter()
    local = app.run(cfg, out=out / "local", options=app.EngineOptions(jobs=2, progress=False), plots=False)
    local_total = time.perf_counter() - t0
    n_jobs = local.outcome.n_total
    print(f"local --jobs 2: {n_jobs} jobs, job phase {timer.seconds['local']:.1f} s, whole run {local_total:.1f} s",
          flush=True)

    # 2. the loopback cluster, one worker killed a third of the way
    tmp = Path(tempfile.mkdtemp(prefix="rankbench-demo-dask-"))
    address, procs = start_cluster(tmp)
    try:
        timer.scheduler_pid = procs[0].pid
        with Client(address, timeout=60, set_as_default=False) as client:
            client.wait_for_workers(2, timeout=120)
            kill: dict = {}
            watcher = killer(client, out / "dask" / "trials", n_jobs // 3, kill)
            t0 = time.perf_counter()
            dask = app.run(cfg, out=out / "dask", plots=False,
                           options=app.EngineOptions(executor="dask", scheduler=address, progress=False,
                                                     dask_timeout=60))
            dask_total = time.perf_counter() - t0
            watcher.join(timeout=120)
            noop, noop_cpu = noop_round_trip(client, 2000, procs[0].pid)
    finally:
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)

    # 3. all present, the same numbers
    n_files = sum(1 for _ in (out / "dask" / "trials").glob("*.json"))
    a = pd.read_csv(out / "local" / TRIALS_CSV, dtype=str, keep_default_na=False)
    b = pd.read_csv(out / "dask" / TRIALS_CSV, dtype=str, keep_default_na=False)
    same = a[~a.metric.isin(TIMING)].reset_index(drop=True).equals(b[~b.metric.isin(TIMING)].reset_index(drop=True))
    ex = RunFolder(out / "dask").read_manifest().executor

    # 4. costs
    records, _ = RunFolder(out / "dask").read_trials()
    job_s = sum(r.wall_s for r in records) / len(records)
    threads = 2
    per_job = timer.seconds["dask"] * threads / n_jobs - job_s
    print(f"dask, 2 workers: {n_files}/{n_jobs} results, bit-identical to local: {same}; "
          f"job phase {timer.seconds['dask']:.1f} s, whole run {dask_total:.1f} s", flush=True)
    print(f"killed {kill.get('victim')} (pid {kill.get('pid')}) at {kill.get('at_results')} results; the scheduler "
          f"dropped it after {kill.get('dropped_after_s')} s, the nanny's new worker joined after "
          f"{kill.get('replaced_after_s')} s; manifest: workers_lost {ex['workers_lost']}, jobs submitted again "
          f"{ex['jobs_submitted_again']}, jobs per worker { {w: v['jobs'] for w, v in ex['workers'].items()} }")
    sched = timer.cpu["dask_scheduler"] / n_jobs
    client_cpu = {k: timer.cpu[f"{k}_client"] / n_jobs for k in ("local", "dask")}
    print(f"mean job compute {job_s * 1e3:.2f} ms; cluster time per job beyond it {per_job * 1e3:.2f} ms "
          f"(wall x {threads} threads / {n_jobs} jobs - mean job)")
    print(f"scheduler CPU per job {sched * 1e3:.2f} ms; client CPU per job {client_cpu['dask'] * 1e3:.2f} ms "
          f"(local run's parent process: {client_cpu['local'] * 1e3:.2f} ms); Dask's bare cost per no-op task "
          f"(batches of 32): {noop * 1e3:.2f} ms wall, {noop_cpu * 1e3:.2f} ms scheduler CPU")
    print(f"load average at end: {os.getloadavg()}")
    summary = {"n_jobs": n_jobs, "results_present": n_files, "bit_identical": bool(same),
               "local_jobs2_job_phase_s": round(timer.seconds["local"], 2), "local_total_s": round(local_total, 2),
               "dask_job_phase_s": round(timer.seconds["dask"], 2), "dask_total_s": round(dask_total, 2),
               "mean_job_s": job_s, "cluster_s_per_job_beyond_compute": per_job,
               "scheduler_cpu_s_per_job": sched, "client_cpu_s_per_job": client_cpu,
               "noop_wall_s_per_task": noop, "noop_scheduler_cpu_s_per_task": noop_cpu,
               "kill": {k: v for k, v in kill.items() if k != "t"}, "executor": ex,
               "loadavg_end": os.getloadavg()}
    (out / "demo_dask.json").write_text(json.dumps(summary, indent=1))
    print(f"figures in {out / 'demo_dask.json'}")
    if n_files != n_jobs or not same:
        sys.exit(1)


if __name__ == "__main__":
    main()

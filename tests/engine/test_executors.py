"""Executors: the same numbers on this machine and on a Dask cluster, nothing lost when a worker
dies or the client is stopped, resume across executors, and one line for every bad input.

Everything runs on loopback: the module's LocalCluster (its scheduler in this test process, two
single-threaded worker processes behind nannies, all on 127.0.0.1), or the LocalCluster a run
starts itself. Runs that must be stopped or lose a worker run in a subprocess; every wait has a
time limit, so a hang fails the test instead of stalling the suite. The limits are far above what
a test needs on a loaded machine: every wait ends on an event (a file, a worker, a result), never on
a fixed sleep; a gate is opened when its test ends, pass or fail, and each test on the shared
cluster starts once its workers are idle, so one test's failure never holds up the next.
"""

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import distributed  # the test extra installs dask[distributed]: CI runs these tests, never skips them
import pandas as pd
import pytest
from click.testing import CliRunner
from toydata import synthetic_reid_config

from rankbench.cli import main

PLUGIN = Path(__file__).resolve().parents[1] / "plugins" / "slow_ranker.py"
CFG = "\nname: dasky\n" + synthetic_reid_config(n_people=40, n_test=15, ranks=[1, 5, 10], trials=3) + """\
rankers:
  - {name: L1, ranker: l1}
  - {name: Euclidean, ranker: euclidean}
"""
# 8 trials x 3 methods; the Slow one (L1 that sleeps in fit) keeps a run going long enough to be hit
SLOW = CFG.replace("trials: 3", "trials: 8") + f"  - {{name: Slow, ranker: '{PLUGIN}:SlowL1', delay: 0.4}}\n"
N_SLOW = 24
# The same run, its Slow jobs held at a gate file until the test opens it: whatever the machine's
# load, the run is still going when the test kills a worker or sends Ctrl-C (with the bare delay, a
# test process descheduled for 2 s under load saw the run end first). Same numbers as SLOW.
GATED = SLOW.replace("delay: 0.4}", "delay: 0.4, gate: 'GATE'}")
TIMING = ["train_s", "test_s", "peak_mb"]
LIMIT = 240  # seconds any one run may take before the test fails
QUIET_HTTP = {"dashboard_address": "127.0.0.1:0"}  # the scheduler's HTTP routes off the default 8787


@pytest.fixture(scope="module")
def cluster():
    """(scheduler address, a client of it) of a two-worker loopback cluster."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None,
                                  scheduler_kwargs=QUIET_HTTP,
                                  silence_logs=logging.CRITICAL) as cl, \
            distributed.Client(cl, set_as_default=False) as client:
        yield cl.scheduler_address, client


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "cache"))
    return {**os.environ, "RANKBENCH_CACHE": str(tmp_path / "cache")}


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def write(tmp_path, text, name="c.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def values(run: Path) -> pd.DataFrame:
    """trials.csv as text (bit for bit), without the timing and memory columns."""
    t = pd.read_csv(run / "trials.csv", dtype=str, keep_default_na=False)
    return t[~t.metric.isin(TIMING)].reset_index(drop=True)


def results(run: Path) -> dict[str, int]:
    """Every result file's name and modification time (ns)."""
    return {p.name: p.stat().st_mtime_ns for p in (run / "trials").glob("*.json")}


def manifest(run: Path) -> dict:
    return json.loads((run / "manifest.json").read_text())


def start(cfg: Path, out: Path, env: dict, *extra) -> subprocess.Popen:
    return run_process(env, cfg, "--out", out, *extra)


def run_process(env: dict, *args) -> subprocess.Popen:
    """``rankbench run ARGS -q --no-plots`` in a subprocess (a test waits for it with a limit)."""
    return subprocess.Popen([sys.executable, "-m", "rankbench", "run", *map(str, args), "-q", "--no-plots"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


@pytest.fixture
def gate(tmp_path):
    """The gate file a GATED run's Slow jobs wait for, closed; opened when the test ends, pass or
    fail, so that no job is left holding a worker of the shared cluster."""
    path = tmp_path / "gate-open"
    yield path
    path.touch()


def gated(tmp_path: Path, gate: Path) -> Path:
    """The GATED run's config in tmp_path, its Slow jobs held at ``gate``."""
    return write(tmp_path, GATED.replace("GATE", str(gate)))


def start_gated_on(address: str, tmp_path: Path, env: dict, n: int, gate: Path) -> tuple[subprocess.Popen, Path]:
    """The GATED run started on the cluster at ``address``, once it holds ``n`` results: (process,
    run folder)."""
    out = tmp_path / "run"
    proc = start(gated(tmp_path, gate), out, env, "--executor", "dask", "--scheduler", address)
    wait_for_results(proc, out, n)
    return proc, out


def _executing(dask_worker) -> int:
    return dask_worker.state.executing_count  # cancelled tasks still running count too


def idle(client, n: int) -> None:
    """Block until the cluster has ``n`` workers and none is running a task (a job an earlier
    test's interrupted run left behind, a worker its nanny is still restarting)."""
    deadline = time.monotonic() + LIMIT
    while time.monotonic() < deadline:
        busy = client.run(_executing, on_error="return") if len(client.nthreads()) >= n else None
        if busy is not None and len(busy) >= n and not any(busy.values()):
            return
        time.sleep(0.05)
    pytest.fail(f"the cluster had not {n} idle workers within {LIMIT} s")


def wait_for_results(proc: subprocess.Popen, out: Path, n: int) -> int:
    """Block until ``out`` holds at least ``n`` results (the run still going); their count."""
    deadline = time.monotonic() + LIMIT
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        have = len(results(out)) if (out / "trials").is_dir() else 0
        if have >= n:
            return have
        time.sleep(0.02)
    proc.kill()
    pytest.fail(f"no {n} results within {LIMIT} s")


def finish(proc: subprocess.Popen) -> tuple[int, str]:
    try:
        _, err = proc.communicate(timeout=LIMIT)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail(f"run still going after {LIMIT} s")
    return proc.returncode, err


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The SLOW config run locally, uninterrupted."""
    tmp = tmp_path_factory.mktemp("ref")
    out = tmp / "run"
    old = os.environ.get("RANKBENCH_CACHE")
    os.environ["RANKBENCH_CACHE"] = str(tmp / "cache")
    try:
        res = cli("run", write(tmp, SLOW), "--out", out, "-q", "--no-plots")
    finally:
        os.environ.pop("RANKBENCH_CACHE") if old is None else os.environ.__setitem__("RANKBENCH_CACHE", old)
    assert res.exit_code == 0, res.output
    return out


# ------------------------------------------------------------------------------ same numbers
def test_local_and_dask_give_bit_identical_trials(tmp_path, env):
    """A sweep of two settings, 3 trials, 2 methods: locally, and on the LocalCluster the run starts."""
    cfg = write(tmp_path, CFG + "sweep: {protocol.n_test: [10, 15]}\n")
    assert cli("run", cfg, "--out", tmp_path / "local", "-q", "--no-plots").exit_code == 0
    res = cli("run", cfg, "--out", tmp_path / "dask", "-q", "--no-plots", "--executor", "dask")
    assert res.exit_code == 0, res.output
    local, dask = values(tmp_path / "local"), values(tmp_path / "dask")
    assert len(local) == 2 * 3 * 2 * 5  # settings x trials x methods x (cmc@1, 5, 10, nauc, map)
    pd.testing.assert_frame_equal(local, dask)
    ex = manifest(tmp_path / "dask")["executor"]
    assert ex["kind"] == "dask" and ex["local_cluster"] and ex["scheduler"].startswith("tcp://127.0.0.1:")
    assert sum(w["jobs"] for w in ex["workers"].values()) == 12 and ex["workers_lost"] == []
    assert manifest(tmp_path / "local")["executor"] == {"kind": "local", "workers": 1}


# ------------------------------------------------------------------------------ a worker dies
def _busy_workers(client) -> list[str]:
    """Workers processing a rankbench job right now."""
    deadline = time.monotonic() + LIMIT
    while time.monotonic() < deadline:
        busy = [w for w, keys in client.processing().items() if any(str(k).startswith("rankbench-") for k in keys)]
        if busy:
            return busy
        time.sleep(0.01)
    pytest.fail("no worker was running a job")


@pytest.mark.slow
def test_worker_killed_mid_run_loses_nothing(cluster, reference, tmp_path, env, gate):
    address, client = cluster
    idle(client, 2)
    proc, out = start_gated_on(address, tmp_path, env, 4, gate)
    victim = _busy_workers(client)[0]
    pid = client.run(os.getpid, workers=[victim])[victim]
    os.kill(pid, signal.SIGKILL)
    assert len(results(out)) < N_SLOW and proc.poll() is None, "the run ended before the kill"
    gate.touch()
    code, err = finish(proc)
    assert code == 0, err
    assert len(results(out)) == N_SLOW
    pd.testing.assert_frame_equal(values(out), values(reference))
    ex = manifest(out)["executor"]
    assert victim in ex["workers_lost"] and manifest(out)["complete"]


@pytest.mark.slow
def test_every_worker_killed_scatters_the_data_again(cluster, reference, tmp_path, env, gate):
    """Both workers die at once: the scattered features die with them; the run sends them again."""
    address, client = cluster
    idle(client, 2)
    proc, out = start_gated_on(address, tmp_path, env, 4, gate)
    _busy_workers(client)
    for pid in client.run(os.getpid).values():
        os.kill(pid, signal.SIGKILL)
    assert proc.poll() is None, "the run ended before the kill"
    gate.touch()
    code, err = finish(proc)
    assert code == 0, err
    assert len(results(out)) == N_SLOW
    pd.testing.assert_frame_equal(values(out), values(reference))
    ex = manifest(out)["executor"]
    assert len(ex["workers_lost"]) == 2 and ex["jobs_submitted_again"] >= 1


# ------------------------------------------------------------------------------ resume across executors
@pytest.mark.slow
def test_dask_run_interrupted_resumes_locally(cluster, reference, tmp_path, env, gate):
    address, client = cluster
    idle(client, 2)
    proc, out = start_gated_on(address, tmp_path, env, 6, gate)
    proc.send_signal(signal.SIGINT)
    code, err = finish(proc)
    assert code == 130, err
    assert err.strip().startswith("rankbench: error: interrupted") and len(err.strip().splitlines()) == 1, err
    before = results(out)
    assert 6 <= len(before) < N_SLOW
    gate.touch()
    res = cli("run", "--resume", out, "-q", "--no-plots")
    assert res.exit_code == 0, res.output
    after = results(out)
    assert len(after) == N_SLOW
    assert {k: after[k] for k in before} == before, "a finished result was computed again"
    pd.testing.assert_frame_equal(values(out), values(reference))
    m = manifest(out)
    assert [s["executor"]["kind"] for s in m["sessions"]] == ["dask", "local"] and m["complete"]


@pytest.mark.slow
def test_ctrl_c_on_a_started_local_cluster_is_one_line(tmp_path, env, gate):
    """Ctrl-C in a terminal reaches the whole process group: the run's own LocalCluster workers
    ignore it, the client saves, closes the cluster and prints one line; no process is left."""
    import psutil

    out = tmp_path / "run"
    cfg = gated(tmp_path, gate)  # opened only after the test: the run is still going when Ctrl-C comes
    proc = subprocess.Popen([sys.executable, "-m", "rankbench", "run", str(cfg), "--out", str(out),
                             "-q", "--no-plots", "--executor", "dask"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, start_new_session=True)
    # Ctrl-C once a result is saved and a job is running on a worker (held at the gate), whatever
    # the machine's speed: the client is in its loop, waiting for results
    wait_for_results(proc, out, 1)
    reached = gate.with_name(gate.name + ".reached")
    deadline = time.monotonic() + LIMIT
    while not reached.exists():
        assert proc.poll() is None and time.monotonic() < deadline, "no job reached the gate"
        time.sleep(0.02)
    family = psutil.Process(proc.pid).children(recursive=True)
    assert len(family) >= 2  # the workers (and multiprocessing's resource tracker)
    os.killpg(proc.pid, signal.SIGINT)
    code, err = finish(proc)
    assert code == 130 and err.strip().startswith("rankbench: error: interrupted"), err
    assert len(err.strip().splitlines()) == 1, err
    _, alive = psutil.wait_procs(family, timeout=LIMIT)
    assert not alive, alive


def test_local_run_interrupted_resumes_on_dask(cluster, reference, tmp_path, env, monkeypatch):
    from rankbench.engine import execute as runner

    address, client = cluster
    idle(client, 2)
    real, calls = runner.run_job, {"n": 0}

    def interrupting(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 11:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "run_job", interrupting)
    out = tmp_path / "run"
    cfg = write(tmp_path, SLOW)
    res = CliRunner().invoke(main, ["run", str(cfg), "--out", str(out), "-q", "--no-plots"])
    assert res.exit_code == 130 and "interrupted: 10 of 24 results saved" in res.output
    monkeypatch.setattr(runner, "run_job", real)
    before = results(out)
    assert len(before) == 10
    code, err = finish(run_process(env, "--resume", out, "--executor", "dask", "--scheduler", address))
    assert code == 0, err
    after = results(out)
    assert len(after) == N_SLOW and {k: after[k] for k in before} == before
    pd.testing.assert_frame_equal(values(out), values(reference))
    m = manifest(out)
    assert [s["executor"]["kind"] for s in m["sessions"]] == ["local", "dask"]
    assert sum(w["jobs"] for w in m["executor"]["workers"].values()) == N_SLOW - 10


# ------------------------------------------------------------------------------ bad input
def one_line_error(res, *needles):
    assert res.exit_code == 1, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rankbench: error:") and "Traceback" not in res.output, res.output
    for n in needles:
        assert n in lines[0], lines[0]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_scheduler_is_one_line(tmp_path, env):
    cfg = write(tmp_path, CFG)
    address = f"tcp://127.0.0.1:{_free_port()}"
    t0 = time.monotonic()
    one_line_error(cli("run", cfg, "--out", tmp_path / "r", "--executor", "dask", "--scheduler", address,
                       "--dask-timeout", "1"),
                   f"--scheduler: expected a dask scheduler answering within 1 s, got {address} (no answer)")
    assert time.monotonic() - t0 < 30
    assert not (tmp_path / "r").exists(), "a failed start leaves no folder"
    one_line_error(cli("run", cfg, "--executor", "dask", "--scheduler", "headnode"),
                   "--scheduler: expected an address such as tcp://HOST:PORT, got 'headnode'")
    one_line_error(cli("run", cfg, "--scheduler", address), "--scheduler: expected only with --executor dask")


def test_cluster_without_workers_is_one_line(tmp_path, env):
    with distributed.LocalCluster(n_workers=0, host="127.0.0.1", dashboard_address=None,
                                  scheduler_kwargs=QUIET_HTTP,
                                  silence_logs=logging.CRITICAL) as empty:
        one_line_error(cli("run", write(tmp_path, CFG), "--out", tmp_path / "r", "--executor", "dask",
                           "--scheduler", empty.scheduler_address, "--dask-timeout", "1"),
                       "expected at least one dask worker within 1 s, got 0 workers at "
                       + empty.scheduler_address)
    assert not (tmp_path / "r").exists()


def test_dask_not_installed_is_one_line(tmp_path, env, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # what `import distributed` meets without the extra
    one_line_error(cli("run", write(tmp_path, CFG), "--out", tmp_path / "r", "--executor", "dask"),
                   "--executor dask: expected the dask extra (pip install -e '.[dask]' in the rankbench checkout)")
    assert not (tmp_path / "r").exists()


def test_worker_without_rankbench_is_one_line(tmp_path, env):
    """A worker whose Python cannot import rankbench is named before any job is sent."""
    blocker = tmp_path / "no_rankbench.py"
    blocker.write_text("import sys\nsys.modules['rankbench'] = None  # as if rankbench were not installed\n")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, host="127.0.0.1", dashboard_address=None,
                                  scheduler_kwargs=QUIET_HTTP,
                                  silence_logs=logging.CRITICAL, preload=[str(blocker)]) as cl:
        one_line_error(cli("run", write(tmp_path, CFG), "--out", tmp_path / "r", "--executor", "dask",
                           "--scheduler", cl.scheduler_address),
                       "--scheduler: worker tcp://127.0.0.1:", "expected rankbench 0.1.0 installed, got")
    assert not (tmp_path / "r").exists()


def test_scheduler_without_rankbench_is_one_line(tmp_path, env):
    """Dask's scheduler unpickles every job it is sent: one without rankbench is named at connect."""
    blocker = tmp_path / "no_rankbench.py"
    blocker.write_text("import sys\nsys.modules['rankbench'] = None  # as if rankbench were not installed\n")
    sfile = tmp_path / "scheduler.json"
    proc = subprocess.Popen([str(Path(sys.executable).parent / "dask"), "scheduler", "--host", "127.0.0.1",
                             "--port", "0", "--no-dashboard", "--scheduler-file", str(sfile), "--preload",
                             str(blocker)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        # the scheduler creates the file before it writes it: wait for its content
        while not (sfile.is_file() and sfile.stat().st_size) and time.monotonic() < deadline:
            assert proc.poll() is None
            time.sleep(0.1)
        address = json.loads(sfile.read_text())["address"]
        one_line_error(cli("run", write(tmp_path, CFG), "--out", tmp_path / "r", "--executor", "dask",
                           "--scheduler", address),
                       f"--scheduler: scheduler {address}: expected rankbench 0.1.0 installed, got")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert not (tmp_path / "r").exists()


def test_a_failing_ranker_on_dask_is_recorded_and_the_others_computed(cluster, tmp_path, env):
    """On a cluster as locally: a ranker returning NaN fails its jobs (recorded by the client), the
    other method is computed, the run exits 1."""
    from rankbench.runfolder import RunFolder

    plugin = Path(__file__).resolve().parents[1] / "plugins" / "faulty.py"
    text = CFG.replace("trials: 3", "trials: 2")
    text = text.split("rankers:")[0] + (f"rankers:\n  - {{name: L1, ranker: l1}}\n"
                                        f"  - {{name: Bad, ranker: '{plugin}:FaultyPairScorer', fault: nan}}\n")
    out = tmp_path / "run"
    res = cli("run", write(tmp_path, text), "--out", out, "--no-plots", "--executor", "dask",
              "--scheduler", cluster[0])
    assert res.exit_code == 1 and "Traceback" not in res.output, res.output
    assert sum(" FAILED in score: similarity returned 1 non-finite" in line for line in res.output.splitlines()) == 2
    records, problems = RunFolder(out).read_trials()
    assert not problems and sorted((r.method, r.status) for r in records) == [
        ("Bad", "failed"), ("Bad", "failed"), ("L1", "ok"), ("L1", "ok")]


def test_only_distributeds_interrupted_sync_record_is_dropped():
    """Ctrl-C inside distributed's ``sync`` makes its cancel callback fail in tornado's loop; that
    record is dropped, any other (another error, the same text without the NameError) is kept."""
    from rankbench.engine.executors import _InterruptedSyncNoise

    def record(msg, exc):
        info = (type(exc), exc, None) if exc is not None else None
        return logging.LogRecord("tornado.application", logging.ERROR, __file__, 1, msg, None, info)

    sync_msg = "Exception in callback functools.partial(<function sync.<locals>.cancel at 0x7f03>)"
    noise = NameError("cannot access free variable 'future' where it is not associated with a value")
    keep = _InterruptedSyncNoise()
    assert not keep.filter(record(sync_msg, noise))
    assert keep.filter(record(sync_msg, RuntimeError("a real fault")))
    assert keep.filter(record("Exception in callback functools.partial(<function other>)", noise))
    assert keep.filter(record("a plain error line", None))


def test_a_worker_killed_outright_names_its_jobs_and_keeps_the_results(tmp_path, env):
    """A worker process killed (SIGKILL, as by the out-of-memory killer) ends the run in one line naming
    the jobs it ran, exit 1; the results that arrived are kept for --resume."""
    from rankbench.runfolder import RunFolder

    plugin = Path(__file__).resolve().parents[1] / "plugins" / "faulty.py"
    text = CFG.replace("trials: 3", "trials: 2").split("rankers:")[0] + (
        f"rankers:\n  - {{name: L1, ranker: l1}}\n"
        f"  - {{name: Mine, ranker: '{plugin}:KillsItsWorker', parent: {os.getpid()}}}\n")
    out = tmp_path / "run"
    res = cli("run", write(tmp_path, text), "--out", out, "--no-plots", "-q", "--jobs", "2", "--no-cache")
    lines = res.output.strip().splitlines()
    assert res.exit_code == 1 and "Traceback" not in res.output, res.output
    assert lines[-1].startswith("rankbench: error: a worker process died (exit code SIGKILL") and "Mine trial" in \
        lines[-1] and f"continue with: rankbench run --resume {out}" in lines[-1], lines[-1]
    records, _ = RunFolder(out).read_trials()
    assert {r.method for r in records} <= {"L1"}


def test_a_signal_waits_for_the_run_loop_and_is_never_lost_in_a_finaliser():
    # Ctrl-C landed in a dask Future.__del__ run by the garbage collector: Python printed
    # 'Exception ignored in ...' and the run went on waiting for its held jobs (the test above
    # timed out after 240 s, 1 run in 3)
    from rankbench.engine.executors import _Deferred
    from rankbench.errors import Terminated

    class Finalised:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.01)   # the handler runs here, inside the finaliser

    before = signal.getsignal(signal.SIGINT)
    deferred = _Deferred()
    deferred.install()
    try:
        Finalised()   # collected at once: its finaliser takes the signal
        with pytest.raises(KeyboardInterrupt):
            deferred.check()
        with pytest.raises(KeyboardInterrupt):   # a second signal: at once
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.01)
    finally:
        deferred.restore()
    assert signal.getsignal(signal.SIGINT) is before
    deferred = _Deferred()
    deferred.install()
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.01)
        with pytest.raises(Terminated):
            deferred.check()
    finally:
        deferred.restore()

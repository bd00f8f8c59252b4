"""The command line end to end: the output contract, and one clear line for every bad input."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from toydata import synthetic_reid_config

from rankbench.cli import main

REPO = Path(__file__).resolve().parents[1]

SMALL = "\nname: small\n" + synthetic_reid_config(n_people=40, n_test=15, ranks=[1, 5, 10], trials=3) + """\
rankers:
  - {name: L1, ranker: l1}
  - {name: Bhattacharyya, ranker: bhattacharyya}
expected:
  - {method: L1, metric: cmc@10, value: 1.0, tolerance: 0.5, source: "made up, always OK"}
  - {method: RelTree, metric: cmc@1, value: 0.5, tolerance: 0.1, source: "published only", published_only: true}
"""


def write(tmp_path, text, name="small.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_run_writes_the_output_contract(cli, tmp_path):
    cfg = write(tmp_path, SMALL)
    out = tmp_path / "run"
    res = cli("run", cfg, "--out", out, "-q")
    assert res.exit_code == 0, res.output
    for f in ("config.yaml", "splits.json", "trials.csv", "summary.csv", "summary.md", "manifest.json",
              "plots/cmc.png", "plots/cmc.svg", "curves.csv", "diagnostics.csv", "summary.tex"):
        assert (out / f).is_file(), f
    trials = pd.read_csv(out / "trials.csv", keep_default_na=False)
    assert list(trials.columns) == ["setting", "trial", "method", "metric", "value"]
    assert {"cmc@1", "cmc@10", "nauc", "train_s", "test_s", "peak_mb"} <= set(trials["metric"])
    assert trials["trial"].nunique() == 3
    summary = pd.read_csv(out / "summary.csv", keep_default_na=False)
    assert list(summary.columns) == ["setting", "method", "metric", "mean", "std", "n_trials"]
    r1 = summary[(summary.method == "L1") & (summary.metric == "cmc@1")]
    vals = trials[(trials.method == "L1") & (trials.metric == "cmc@1")]["value"]
    assert r1["mean"].item() == pytest.approx(vals.mean())
    assert r1["std"].item() == pytest.approx(vals.std(ddof=1))
    splits = json.loads((out / "splits.json").read_text())["settings"]
    assert len(splits) == 1 and splits[0]["label"] == "" and len(splits[0]["trials"]) == 3
    assert {"trial", "seed", "ranker_seed", "train", "probe", "gallery"} <= set(splits[0]["trials"][0])
    manifest = json.loads((out / "manifest.json").read_text())
    assert {"rankbench_version", "git_commit", "git_dirty", "python", "packages", "machine", "start", "end",
            "wall_s_per_method", "invocation", "data_root", "datasets", "features", "complete", "cwd"} <= set(manifest)
    assert manifest["complete"] and manifest["invocation"]["argv"][:2] == ["rankbench", "run"]
    assert manifest["data_root"] and manifest["datasets"]["synthetic_reid"]
    assert {"extractor", "shape", "seconds", "cached", "extract_seconds"} <= set(manifest["features"]["colour"])
    md = (out / "summary.md").read_text()
    assert "| L1 |" in md and "PUBLISHED" in md and "OK" in md and "Incomplete" not in md

    assert cli("check", out).exit_code == 0
    assert cli("report", out).exit_code == 0


def test_check_fails_on_a_missed_number(cli, tmp_path):
    cfg = write(tmp_path, SMALL.replace("value: 1.0, tolerance: 0.5", "value: 0.0, tolerance: 0.01"))
    out = tmp_path / "run"
    assert cli("run", cfg, "--out", out, "-q").exit_code == 0
    res = cli("check", out)
    assert res.exit_code == 1 and "FAIL" in res.output


def test_same_seed_same_numbers_and_jobs_do_not_change_them(cli, tmp_path):
    cfg = write(tmp_path, SMALL)
    assert cli("run", cfg, "--out", tmp_path / "a", "-q").exit_code == 0
    assert cli("run", cfg, "--out", tmp_path / "b", "-q", "--jobs", "2").exit_code == 0
    a = pd.read_csv(tmp_path / "a" / "trials.csv", keep_default_na=False)
    b = pd.read_csv(tmp_path / "b" / "trials.csv", keep_default_na=False)
    q = ~a.metric.isin(["train_s", "test_s", "peak_mb"])
    assert np.array_equal(a[q].value.to_numpy(), b[q].value.to_numpy())


def _interrupt_after(monkeypatch, n):
    from rankbench.engine import execute as runner

    real = runner.run_job
    calls = {"n": 0}

    def interrupting(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == n:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "run_job", interrupting)
    return lambda: monkeypatch.setattr(runner, "run_job", real)


def test_resume_after_interrupt_gives_identical_numbers(cli, tmp_path, monkeypatch):
    cfg = write(tmp_path, SMALL.replace("trials: 3", "trials: 4"))
    assert cli("run", cfg, "--out", tmp_path / "full", "-q").exit_code == 0
    restore = _interrupt_after(monkeypatch, 3)  # during trial 2 of 4 of the first method
    res = CliRunner().invoke(main, ["run", str(cfg), "--out", str(tmp_path / "part"), "-q", "--trials", "4",
                                    "--set", "protocol.n_test=15"])
    assert res.exit_code == 130
    assert "interrupted: 2 of 8 results saved" in res.output
    assert f"continue with: rankbench run --resume {tmp_path / 'part'}" in res.output
    assert "Incomplete run" in (tmp_path / "part" / "summary.md").read_text()
    assert cli("check", tmp_path / "part").exit_code == 1  # says it is incomplete
    # a run another process is writing: before, 'continue it with --resume', which it refuses
    from rankbench.runfolder import RunFolder

    other = RunFolder.open(tmp_path / "part").lock("rankbench run elsewhere")
    (tmp_path / "part" / ".lock").write_text(json.dumps({"pid": os.getpid() + 1, "host": "h", "since": "s",
                                                         "command": "rankbench run elsewhere"}))
    res = cli("check", tmp_path / "part")
    assert "Still running: 2 of 8 results so far, written by pid" in res.output and "--resume" not in res.output
    other.release()
    restore()
    # the hint works as printed: the folder's own config carries the overrides
    assert cli("run", "--resume", tmp_path / "part", "-q").exit_code == 0
    full = pd.read_csv(tmp_path / "full" / "trials.csv", keep_default_na=False)
    part = pd.read_csv(tmp_path / "part" / "trials.csv", keep_default_na=False)
    q = ~full.metric.isin(["train_s", "test_s", "peak_mb"])
    assert full[q].reset_index(drop=True).equals(part[q].reset_index(drop=True))
    manifest = json.loads((tmp_path / "part" / "manifest.json").read_text())
    assert manifest["complete"] and len(manifest["sessions"]) == 2
    assert manifest["start"] == manifest["sessions"][0]["start"]


def test_resume_names_a_changed_key(cli, tmp_path, monkeypatch):
    cfg = write(tmp_path, SMALL)
    restore = _interrupt_after(monkeypatch, 2)
    assert CliRunner().invoke(main, ["run", str(cfg), "--out", str(tmp_path / "p"), "-q"]).exit_code == 130
    restore()
    one_line_error(cli("run", cfg, "--resume", tmp_path / "p", "--set", "protocol.n_test=12"),
                   "protocol.n_test = 15, now 12")
    one_line_error(cli("run", cfg, "--resume", tmp_path / "p", "--trials", "5"), "trials = 3, now 5")
    # before: 'methods = None, now ['L1']' (None is every ranker)
    one_line_error(cli("run", "--resume", tmp_path / "p", "--methods", "L1"), "methods = (every ranker), now ['L1']")
    # before: exit 0, the --regress of a resume without its config ignored without a word
    one_line_error(cli("run", "--resume", tmp_path / "p", "--regress"), "the run was started without --regress, now with it")
    assert cli("run", cfg, "--resume", tmp_path / "p", "-q").exit_code == 0
    reg = write(tmp_path, SMALL + "regress: {trials: 2}\n", "reg.yaml")
    restore = _interrupt_after(monkeypatch, 1)
    assert CliRunner().invoke(main, ["run", str(reg), "--regress", "--out", str(tmp_path / "r"), "-q"]).exit_code == 130
    restore()
    assert cli("run", "--resume", tmp_path / "r", "--regress", "-q").exit_code == 0   # as it was started


def test_a_split_column_the_data_lacks_is_one_line_naming_the_config(cli, tmp_path):
    """Before: two lines, a DataError 'protocol reid needs a 'nosuch' column' and the same fault
    again from the count of fixed trials, neither naming the config or protocol.split_column."""
    cfg = write(tmp_path, SMALL)
    one_line_error(cli("validate", cfg, "--set", "protocol.split_column=nosuch"),
                   f"{cfg}: protocol.split_column: expected a column of dataset")


def test_resume_names_a_changed_sweep_with_its_values(cli, tmp_path, monkeypatch):
    """A sweep's keys hold dots: before, 'sweep.protocol.n_test = None, now None'."""
    cfg = write(tmp_path, SMALL + "sweep: {protocol.n_test: [10, 15]}\n")
    restore = _interrupt_after(monkeypatch, 2)
    assert CliRunner().invoke(main, ["run", str(cfg), "--out", str(tmp_path / "p"), "-q"]).exit_code == 130
    restore()
    write(tmp_path, SMALL + "sweep: {protocol.n_test: [10, 12]}\n")
    one_line_error(cli("run", cfg, "--resume", tmp_path / "p"), "sweep.protocol.n_test.1 = 15, now 12")


def _fake_viper(root, n_people):
    import cv2

    rng = np.random.default_rng(0)
    for cam in ("cam_a", "cam_b"):
        (root / "viper" / cam).mkdir(parents=True)
        for pid in range(n_people):
            img = rng.integers(0, 256, (128, 48, 3), dtype=np.uint8)
            cv2.imwrite(str(root / "viper" / cam / f"{pid:03d}_000.bmp"), img)
    return root


def _viper_small(n_test):
    """SMALL on a (fake) VIPeR folder instead of the embedded synthetic set."""
    return SMALL.replace("{name: synthetic_reid, n_people: 40}", "{name: viper}").replace("n_test: 15", f"n_test: {n_test}")


def _wait_for_results(proc, out, n):
    """Poll until ``out`` holds ``n`` results (the run must still be going)."""
    import time

    deadline = time.time() + 120
    while time.time() < deadline and len(list((out / "trials").glob("*.json"))) < n:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)


def test_resume_reads_the_data_where_the_run_started(cli, tmp_path, monkeypatch):
    """The printed hint has no --data-root: the resumed run takes the root its manifest records
    (--data-root or $RANKBENCH_DATA still win), not ./datasets of wherever it is resumed from."""
    data = _fake_viper(tmp_path / "data", 24)
    cfg = write(tmp_path, _viper_small(12))
    monkeypatch.delenv("RANKBENCH_DATA", raising=False)
    restore = _interrupt_after(monkeypatch, 2)
    res = CliRunner().invoke(main, ["run", str(cfg), "--data-root", str(data), "--out", str(tmp_path / "p"), "-q"])
    assert res.exit_code == 130, res.output
    restore()
    monkeypatch.chdir(tmp_path)  # no ./datasets here
    res = cli("run", "--resume", tmp_path / "p", "-q")
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "p" / "manifest.json").read_text())["complete"]
    # an explicit root still wins, and a wrong one is still one clear line
    one_line_error(cli("run", "--resume", tmp_path / "p", "--data-root", tmp_path / "nodata"), "viper", "not found")


def test_corrupt_result_is_reported_and_recomputed(cli, tmp_path):
    cfg = write(tmp_path, SMALL)
    out = tmp_path / "c"
    assert cli("run", cfg, "--out", out, "-q").exit_code == 0
    victim = sorted((out / "trials").glob("*.json"))[0]
    good = json.loads(victim.read_text())
    victim.write_text(victim.read_text()[:40])  # truncated
    res = cli("report", out)
    assert res.exit_code == 0 and "Unusable result file" in res.output and victim.name in res.output
    assert cli("check", out).exit_code == 1
    assert cli("run", "--resume", out, "-q").exit_code == 0
    again = json.loads(victim.read_text())
    assert again["metrics"]["cmc@1"] == good["metrics"]["cmc@1"]
    assert cli("check", out).exit_code == 0


def test_sweep_run_keeps_the_sweep_order(cli, tmp_path):
    cfg = write(tmp_path, SMALL.split("expected:")[0] + "sweep: {protocol.n_test: [20, 10, 15]}\n")
    out = tmp_path / "sw"
    assert cli("run", cfg, "--out", out, "-q", "--trials", "2").exit_code == 0
    summary = pd.read_csv(out / "summary.csv", keep_default_na=False)
    assert list(dict.fromkeys(summary.setting)) == ["protocol.n_test=20", "protocol.n_test=10", "protocol.n_test=15"]
    assert (out / "plots" / "cmc1_vs_n_test.png").is_file()


def test_features_export(cli, tmp_path):
    cfg = write(tmp_path, SMALL)
    out = tmp_path / "f.npz"
    res = cli("features", cfg, "--out", out, "-q")
    assert res.exit_code == 0, res.output
    z = np.load(out)
    assert z["X_colour"].shape == (80, 9 * 6 * 8) and len(z["ids"]) == 80 and "identity" in z


def test_list_validate_version_help(cli, tmp_path):
    res = cli("list", "rankers")
    assert "l1" in res.output and "bhattacharyya" in res.output
    res = cli("list", "rankers", "prsvm")
    assert res.exit_code == 0 and "a number > 0 or a list (each a number > 0)" in res.output
    res = cli("validate", write(tmp_path, SMALL))
    assert res.exit_code == 0 and "OK" in res.output and "3 trial(s), 6 jobs" in res.output
    res = cli("validate", write(tmp_path, SMALL), "--set", "sweep={trials: [2, 4]}")   # the sweep's trials
    assert res.exit_code == 0 and "2-4 trial(s), 2 sweep settings, 12 jobs" in res.output
    # as run takes them (before: "No such option '--trials'", where the README says validate makes run's checks)
    res = cli("validate", write(tmp_path, SMALL), "--trials", "5", "--seed", "3")
    assert res.exit_code == 0 and "5 trial(s), 10 jobs" in res.output
    assert "0.1.0" in cli("--version").output
    for cmd in ("run", "validate", "list", "report", "check", "features", "collect"):
        assert "Example" in cli(cmd, "--help").output


def test_outside_ranker_runs_by_import_path(cli, tmp_path):
    plugin = Path(__file__).resolve().parent / "plugins" / "slow_ranker.py"
    text = SMALL.replace("{name: Bhattacharyya, ranker: bhattacharyya}",
                         f"{{name: Mine, ranker: '{plugin}:SlowL1', delay: 0.0}}")
    out = tmp_path / "plug"
    res = cli("run", write(tmp_path, text), "--out", out, "-q", "--jobs", "2")
    assert res.exit_code == 0, res.output
    summary = pd.read_csv(out / "summary.csv", keep_default_na=False)
    mine = summary[(summary.method == "Mine") & (summary.metric == "cmc@1")]["mean"].item()
    l1 = summary[(summary.method == "L1") & (summary.metric == "cmc@1")]["mean"].item()
    assert mine == l1  # the same L1 matching, from a file outside any package, in worker processes


# ------------------------------------------------------------------------------ bad input
def one_line_error(res, *needles):
    assert res.exit_code != 0
    err = res.output.strip().splitlines()
    assert len(err) == 1, res.output
    assert err[0].startswith("rankbench: error:") and "Traceback" not in res.output
    for n in needles:
        assert n in err[0], err[0]


def test_bad_inputs_give_one_clear_line(cli, tmp_path):
    one_line_error(cli("run", tmp_path / "missing.yaml"), "missing.yaml", "not found")
    one_line_error(cli("run", write(tmp_path, "a: [\n", "syn.yaml")), "syn.yaml", "YAML error at line")
    one_line_error(cli("run", write(tmp_path, SMALL + "colour: red\n", "k.yaml")), "k.yaml", "colour: unknown key")
    one_line_error(cli("run", write(tmp_path, SMALL.replace("trials: 3", "trials: many"), "t.yaml")),
                   "t.yaml", "trials: expected a valid integer, got 'many'")
    one_line_error(cli("run", write(tmp_path, SMALL.replace("ranker: l1", "ranker: l7"), "r.yaml")),
                   "rankers.L1.ranker", "unknown ranker 'l7'", "bhattacharyya")
    one_line_error(cli("run", write(tmp_path, SMALL), "--set", "protocol.nope=1"), "unknown parameter 'nope'")
    one_line_error(cli("run", write(tmp_path, SMALL), "--set", "rankers.Ghost.C=1"), "--set", "Ghost")


def test_output_folder_not_writable(cli, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    one_line_error(cli("run", write(tmp_path, SMALL), "--out", blocker / "run"), "cannot create the run folder")
    assert not list(tmp_path.glob("run*")), "a failed start leaves no folder"
    one_line_error(cli("collect", tmp_path, "--out", blocker / "R.md"), "not a run folder")


def test_run_folder_is_never_overwritten(cli, tmp_path):
    cfg = write(tmp_path, SMALL)
    assert cli("run", cfg, "--out", tmp_path / "r", "-q").exit_code == 0
    before = (tmp_path / "r" / "trials.csv").read_text()
    one_line_error(cli("run", cfg, "--out", tmp_path / "r"), "already holds a run", "--resume")
    assert (tmp_path / "r" / "trials.csv").read_text() == before


def test_missing_dataset_folder_shows_layout(cli, tmp_path):
    text = SMALL.replace("{name: synthetic_reid, n_people: 40}", "{name: viper}")
    one_line_error(cli("run", write(tmp_path, text), "--data-root", tmp_path / "nodata"),
                   "viper", "not found", "expected layout", "cam_a")


def test_unreadable_image_is_named(cli, tmp_path):
    root = _fake_viper(tmp_path / "data", 4) / "viper"
    (root / "cam_b" / "002_000.bmp").write_bytes(b"BM\x00\x01truncated")
    one_line_error(cli("run", write(tmp_path, _viper_small(2)), "--data-root", tmp_path / "data", "--no-cache"),
                   "002_000.bmp")


def _gated_run(tmp_path, trials: int, *args: str):
    """``rankbench run -q`` of SMALL in a subprocess whose Slow ranker's fits wait at a gate file
    (SlowL1) after the L1 ones: the run cannot end before a test opens the gate, however loaded
    the machine. Returns (process, run folder, gate, environment)."""
    plugin = Path(__file__).resolve().parent / "plugins" / "slow_ranker.py"
    gate = tmp_path / "gate-open"
    text = SMALL.replace("trials: 3", f"trials: {trials}").replace(
        "{name: Bhattacharyya, ranker: bhattacharyya}", f"{{name: Slow, ranker: '{plugin}:SlowL1', gate: '{gate}'}}")
    cfg = write(tmp_path, text)
    out = tmp_path / "gated"
    env = {**os.environ, "RANKBENCH_CACHE": str(tmp_path / "cache")}
    proc = subprocess.Popen([sys.executable, "-m", "rankbench", "run", str(cfg), "--out", str(out), "-q", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    return proc, out, gate, env


def _open_and_resume(gate, out, env, n):
    """Open the gated run's gate and resume it: the run completes with ``n`` results."""
    gate.touch()
    res = subprocess.run([sys.executable, "-m", "rankbench", "run", "--resume", str(out), "-q"],
                         capture_output=True, text=True, env=env, timeout=600)
    assert res.returncode == 0, res.stderr
    assert len(list((out / "trials").glob("*.json"))) == n


def test_real_sigint_saves_finished_trials(tmp_path):
    """A real Ctrl-C: exit 130, one line, finished results on disk, resume completes the run
    (20 L1 fits, then 20 Slow ones waiting at their gate)."""
    import signal

    proc, out, gate, env = _gated_run(tmp_path, 20)
    _wait_for_results(proc, out, 20)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.strip().startswith("rankbench: error: interrupted") and len(err.strip().splitlines()) == 1
    assert len(list((out / "trials").glob("*.json"))) == 20
    _open_and_resume(gate, out, env, 40)


def test_sigterm_says_what_was_kept_and_how_to_resume(tmp_path):
    """``kill PID`` of a parallel run: exit 143, one line with what was saved and the resume
    command (as Ctrl-C), finished results on disk, and the resume completes the run."""
    import signal

    proc, out, gate, env = _gated_run(tmp_path, 4, "--jobs", "2")
    _wait_for_results(proc, out, 4)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    assert err.strip().splitlines() == [f"rankbench: error: terminated (SIGTERM): 4 of 8 results saved in {out}; "
                                        f"continue with: rankbench run --resume {out}"]
    _open_and_resume(gate, out, env, 8)


def test_workers_die_with_a_run_killed_outright(tmp_path):
    """SIGKILL of a --jobs 2 run leaves its worker processes no parent: they end too, and write no
    result into the folder nobody runs (the Slow fits wait at their gate, which stays shut, so only
    the workers' watch on their parent can end them)."""
    import signal
    import time

    import psutil

    proc, out, gate, env = _gated_run(tmp_path, 4, "--jobs", "2")
    _wait_for_results(proc, out, 4)
    deadline = time.time() + 120
    while time.time() < deadline and len(list((out / ".running").glob("*.json"))) < 2:
        time.sleep(0.05)  # both workers are in a Slow fit (each writes its heartbeat)
    workers = [c for c in psutil.Process(proc.pid).children(recursive=True)]
    assert workers
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    gone, alive = psutil.wait_procs(workers, timeout=60)
    assert not alive, [p.cmdline() for p in alive]
    assert len(list((out / "trials").glob("*.json"))) == 4
    _open_and_resume(gate, out, env, 8)


def test_log_shows_jobs_and_the_fits_progress_in_worker_processes(cli, tmp_path):
    """Without a terminal: one line per event with the elapsed time. -v adds each job's start and
    its fit's steps, read from the workers' heartbeats; a warning raised in a worker's fit is one
    line naming the job; -q leaves the warnings only."""
    plugin = Path(__file__).resolve().parent / "plugins" / "slow_ranker.py"
    text = SMALL.replace("trials: 3", "trials: 2").replace(
        "{name: Bhattacharyya, ranker: bhattacharyya}",
        f"{{name: Slow, ranker: '{plugin}:SlowL1', delay: 3.0, ticks: 12, warn: 'beta below the bound'}}")
    cfg = write(tmp_path, text)
    res = cli("run", cfg, "--out", tmp_path / "v", "--jobs", "2", "-v")
    assert res.exit_code == 0, res.output
    log = [line for line in res.output.splitlines() if line.startswith("[")]
    assert any(line.endswith("small: 4 job(s) on 2 worker(s)") for line in log)
    assert any(line.endswith("small: started Slow trial 0") for line in log)
    assert any("small: Slow trial 0: step " in line and line.endswith("/12") for line in log)
    assert any("small: 4/4 done: " in line for line in log)
    warned = [line for line in log if "warning:" in line]
    assert len(warned) == 2 and all("UserWarning: beta below the bound" in line for line in warned)
    assert {w.split("warning: ")[1].split(":")[0] for w in warned} == {"Slow trial 0", "Slow trial 1"}
    res = cli("run", cfg, "--out", tmp_path / "q", "--jobs", "2", "-q")
    quiet = sorted(line.split("] ", 1)[1] for line in res.output.splitlines() if line.startswith("["))
    assert quiet == sorted(w.split("] ", 1)[1] for w in warned)
    res = cli("run", cfg, "--out", tmp_path / "default", "--jobs", "2")
    log = [line for line in res.output.splitlines() if line.startswith("[")]
    assert any(" done: " in line for line in log) and not any("started" in line for line in log)


def test_a_terminal_gets_a_live_bar_with_the_running_fit(tmp_path):
    """On a terminal (a pseudo-terminal here): a tqdm bar with the jobs done, the job running and
    its fit's step, instead of log lines; gone when the run ends."""
    import fcntl
    import pty
    import struct
    import termios

    plugin = Path(__file__).resolve().parent / "plugins" / "slow_ranker.py"
    text = SMALL.replace("trials: 3", "trials: 1").replace(
        "{name: Bhattacharyya, ranker: bhattacharyya}", f"{{name: Slow, ranker: '{plugin}:SlowL1', delay: 4.0, ticks: 16}}")
    cfg = write(tmp_path, text)
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))
    env = {**os.environ, "RANKBENCH_CACHE": str(tmp_path / "cache")}
    proc = subprocess.Popen([sys.executable, "-m", "rankbench", "run", str(cfg), "--out", str(tmp_path / "r")],
                            stdout=subprocess.DEVNULL, stderr=slave, env=env)
    os.close(slave)
    screen = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the run ended: no writer left
            break
        if not chunk:
            break
        screen += chunk
    os.close(master)
    assert proc.wait(timeout=120) == 0
    frames = screen.decode(errors="replace").replace("\r", "\n").splitlines()
    assert any(f.startswith("small: 1/2 jobs |") and "running: Slow trial 0 (step " in f for f in frames), frames
    assert not any(f.startswith("[") for f in frames)  # no log lines on a terminal


def test_a_second_writer_of_a_running_run_is_refused(cli, tmp_path):
    """--resume (or report) of a folder that a run is still writing: one line naming the holder."""
    proc, out, gate, _ = _gated_run(tmp_path, 3)
    cfg = tmp_path / "small.yaml"
    try:
        _wait_for_results(proc, out, 3)
        before = sorted(p.name for p in out.iterdir())
        for args in (("report", out), ("run", "--resume", out)):  # report first: without a lock it returns
            one_line_error(cli(*args), f"{out}: another rankbench writes this run folder (pid {proc.pid} on ",
                           f"rankbench run {cfg} --out {out} --quiet)")
        assert sorted(p.name for p in out.iterdir()) == before  # the refused writers wrote nothing
    finally:
        gate.touch()
        proc.communicate(timeout=600)
    assert proc.returncode == 0
    assert cli("report", out).exit_code == 0


def test_killed_run_resumes_with_its_data_root(tmp_path):
    """A run killed outright (SIGKILL: no handler, no exit path) has already recorded its data root
    and an open session, so ``--resume`` from another folder needs no --data-root."""
    import signal

    data = _fake_viper(tmp_path / "data", 24)
    plugin = Path(__file__).resolve().parent / "plugins" / "slow_ranker.py"
    gate = tmp_path / "gate-open"
    text = (_viper_small(12).replace("trials: 3", "trials: 4")
            .replace("{name: Bhattacharyya, ranker: bhattacharyya}",
                     f"{{name: Slow, ranker: '{plugin}:SlowL1', gate: '{gate}'}}"))
    cfg = write(tmp_path, text)
    out = tmp_path / "killed"
    env = {k: v for k, v in os.environ.items() if k != "RANKBENCH_DATA"}
    env["RANKBENCH_CACHE"] = str(tmp_path / "cache")
    proc = subprocess.Popen([sys.executable, "-m", "rankbench", "run", str(cfg), "--data-root", str(data),
                             "--out", str(out), "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    _wait_for_results(proc, out, 4)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    manifest = json.loads((out / "manifest.json").read_text())
    assert Path(manifest["data_root"]) == data.resolve() and manifest["end"] is None
    assert [s["end"] for s in manifest["sessions"]] == [None]
    gate.touch()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()  # no ./datasets here
    res = subprocess.run([sys.executable, "-m", "rankbench", "run", "--resume", str(out), "-q"],
                         capture_output=True, text=True, env=env, cwd=elsewhere, timeout=600)
    assert res.returncode == 0, res.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] and len(list((out / "trials").glob("*.json"))) == 8
    first, second = manifest["sessions"]
    assert first["end"] is None and second["end"] is not None  # the killed session stays open


def test_claims_are_graded_in_summary_and_check(cli, tmp_path):
    text = SMALL + ("claims:\n  - {kind: better, method: Bhattacharyya, than: L1, metric: nauc, source: made up}\n"
                    "  - {kind: better, method: L1, than: Bhattacharyya, metric: nauc, by: 0.5}\n")
    out = tmp_path / "cl"
    assert cli("run", write(tmp_path, text), "--out", out, "-q").exit_code == 0
    md = (out / "summary.md").read_text()
    assert "## Claims" in md and "| FAIL |" in md
    res = cli("check", out)
    assert res.exit_code == 1 and "Bhattacharyya better than L1 on nauc" in res.output
    one_line_error(cli("run", write(tmp_path, SMALL + "claims: [{kind: speedup, method: L1, than: L1}]\n", "c.yaml")),
                   "claims.0", "needs 'curve'")


def test_check_exit_status_tells_a_fail_from_a_usage_error_and_from_nothing_to_grade(cli, tmp_path):
    out = tmp_path / "plain"
    assert cli("run", write(tmp_path, SMALL.split("expected:")[0]), "--out", out, "-q", "--trials", "1").exit_code == 0
    res = cli("check", out)
    assert res.exit_code == 0 and "nothing to grade" in res.output
    assert cli("check", tmp_path / "nothere").exit_code == 2
    bad = write(tmp_path, "expected: {method: L1}\n", "bad.yaml")
    assert cli("check", out, "--expected", bad).exit_code == 2
    assert "Exit status" in cli("check", "--help").output and "2  a usage error" in cli("check", "--help").output
    # one trial: a claim of the right sign is a TREND (shown, counted, passing), the other direction a FAIL
    grades = {}
    for a, b in (("L1", "Bhattacharyya"), ("Bhattacharyya", "L1")):
        claim = write(tmp_path, f"claims: [{{kind: better, method: {a}, than: {b}, metric: nauc}}]\n", f"{a}.yaml")
        res = cli("check", out, "--expected", claim)
        grades[a] = ("TREND" if "| TREND |" in res.output else "FAIL", res.exit_code)
    assert sorted(grades.values()) == [("FAIL", 1), ("TREND", 0)]
    res = cli("check", out, "--expected", tmp_path / f"{[k for k, v in grades.items() if v[0] == 'TREND'][0]}.yaml")
    assert "1 trial: no test possible" in res.output and "1 claim: 1 TREND" in res.output


def test_known_gap_is_shown_but_does_not_fail(cli, tmp_path):
    text = SMALL.replace('value: 1.0, tolerance: 0.5, source: "made up, always OK"',
                         'value: 0.0, tolerance: 0.01, source: "x", known_gap: "our features differ"')
    out = tmp_path / "gap"
    assert cli("run", write(tmp_path, text), "--out", out, "-q").exit_code == 0
    res = cli("check", out)
    assert res.exit_code == 0 and "GAP" in res.output and "known gap: our features differ" in res.output


def test_parallel_run_with_a_relative_folder_after_changing_folder(cli, tmp_path, monkeypatch):
    # joblib reuses its worker processes, which keep the working folder they started in: the
    # workers must write results where the run folder is, not relative to their own folder
    cfg = write(tmp_path, SMALL)
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    monkeypatch.chdir(tmp_path / "one")
    assert cli("run", cfg, "--out", "r", "-q", "--jobs", "2").exit_code == 0
    monkeypatch.chdir(tmp_path / "two")
    res = cli("run", cfg, "--out", "r", "-q", "--jobs", "2")
    assert res.exit_code == 0, res.output
    assert len(list((tmp_path / "two" / "r" / "trials").glob("*.json"))) == 6
    assert len(list((tmp_path / "one" / "r" / "trials").glob("*.json"))) == 6


# ------------------------------------------------------------------------------ part of a config
def test_methods_runs_only_the_named_rankers_and_grades_the_others_not_run(cli, tmp_path):
    text = (SMALL.replace("rankers:\n", "rankers:\n  - {name: Euclid, ranker: euclidean}\n")
            + "  - {method: Bhattacharyya, metric: cmc@10, value: 0.0, tolerance: 0.01, source: made up}\n"
            + "claims:\n  - {kind: better, method: Bhattacharyya, than: L1, metric: nauc, by: 0.5}\n")
    cfg = write(tmp_path, text)
    out = tmp_path / "part"
    # as compare's --methods: names after the option, up to the next option
    res = cli("run", cfg, "--methods", "Euclid", "L1", "--out", out, "-q", "--trials", "2")
    assert res.exit_code == 0, res.output
    trials = pd.read_csv(out / "trials.csv", keep_default_na=False)
    assert list(dict.fromkeys(trials.method)) == ["Euclid", "L1"]  # config order
    import yaml

    stored = yaml.safe_load((out / "config.yaml").read_text())
    assert [r["name"] for r in stored["rankers"]] == ["Euclid", "L1", "Bhattacharyya"]
    assert stored["methods"] == ["Euclid", "L1"] and len(stored["expected"]) == 3
    md = (out / "summary.md").read_text()
    assert "2 of the config's 3 rankers (--methods)" in md and "Incomplete" not in md
    res = cli("check", out)
    assert res.exit_code == 0, res.output  # Bhattacharyya's rows would FAIL: not run, they are not graded
    assert "| Bhattacharyya | cmc@10 |" in res.output and "NOT RUN" in res.output
    assert "published numbers: 1 OK, 1 PUBLISHED, 1 NOT RUN" in res.output  # both would FAIL if graded
    assert "1 claim: 1 NOT RUN" in res.output and "| FAIL |" not in res.output
    # a misspelt method in an expected file is still an error, a ranker left out is not
    typo = tmp_path / "typo.yaml"
    typo.write_text("expected: [{method: Bhattacharya, metric: cmc@1, value: 0.1, tolerance: 0.1}]\n")
    one_line_error(cli("check", out, "--expected", typo), "'Bhattacharya' is not a ranker of this config")
    left_out = tmp_path / "left_out.yaml"
    left_out.write_text("expected: [{method: Bhattacharyya, metric: cmc@1, value: 0.1, tolerance: 0.1}]\n")
    assert cli("check", out, "--expected", left_out).exit_code == 0
    # the folder keeps its selection: resume runs the same methods, a different one is refused
    one_line_error(cli("run", "--resume", out, "--methods", "L1"), "methods = ['Euclid', 'L1'], now ['L1']")
    # the same selection by comma, and through the config key
    res = cli("run", cfg, "--methods=L1,Euclid", "--out", tmp_path / "comma", "-q", "--trials", "2")
    assert res.exit_code == 0, res.output
    assert set(pd.read_csv(tmp_path / "comma" / "trials.csv").method) == {"Euclid", "L1"}
    res = cli("validate", cfg, "--methods", "L1")
    assert res.exit_code == 0 and "1 ranker(s)" in res.output and "3 jobs" in res.output


def test_summary_states_the_trials_this_run_has(cli, tmp_path):
    """A description written for the config (``50 trials``) is followed by what this run did."""
    cfg = write(tmp_path, SMALL + "description: L1 against Bhattacharyya (50 trials)\n")
    assert cli("run", cfg, "--out", tmp_path / "r", "-q", "--trials", "2", "--seed", "7").exit_code == 0
    md = (tmp_path / "r" / "summary.md").read_text()
    assert "(50 trials [this run: 2])" in md and "This run: 2 trials (run seed 7, --trials 2)" in md
    # before: a --set was said nowhere in the summary, and one on a published number was graded
    res = cli("run", cfg, "--out", tmp_path / "s", "-q", "--trials", "2", "--set", "protocol.n_test=12")
    assert res.exit_code == 0, res.output
    assert "This run: 2 trials (run seed 0, --trials 2, --set protocol.n_test=12)" in (tmp_path / "s" / "summary.md").read_text()
    one_line_error(cli("run", cfg, "--set", "expected.0.value=0.5"), "--set expected.0.value: published numbers and "
                   "claims are not set on the command line")


# ------------------------------------------------------------------------------ small things
def test_features_refuses_to_overwrite_without_force(cli, tmp_path):
    cfg = write(tmp_path, SMALL)
    out = tmp_path / "f.npz"
    out.write_bytes(b"mine")
    one_line_error(cli("features", cfg, "--out", out, "-q"), "f.npz: already exists", "--force")
    assert out.read_bytes() == b"mine"
    assert cli("features", cfg, "--out", out, "-q", "--force").exit_code == 0
    assert np.load(out)["X_colour"].shape[0] == 80



def test_features_refuses_a_sweep_that_changes_them(cli, tmp_path):
    """A sweep over features.colour.bins [4, 16] (or dataset.*) wrote the base's 8 bins, neither setting's, exit 0."""
    out = tmp_path / "f.npz"
    for sweep in ("features.colour.bins: [4, 16]", "dataset.n_people: [30, 50]"):
        res = cli("features", write(tmp_path, SMALL + f"sweep: {{{sweep}}}\n"), "--out", out, "-q")
        one_line_error(res, f"small.yaml: sweep: {sweep.split(':')[0]}: the features differ", "edit the config")
        assert not out.exists()
    # a sweep the features do not depend on, or of one value: that one setting's features
    for sweep, width in (("protocol.n_test: [10, 15]", 8), ("features.colour.bins: [16]", 16)):
        res = cli("features", write(tmp_path, SMALL + f"sweep: {{{sweep}}}\n"), "--out", out, "-q", "--force")
        assert res.exit_code == 0, res.output
        with np.load(out) as f:
            assert f["X_colour"].shape == (80, 54 * width), sweep   # 54 histograms of `bins` bins

def test_cache_shows_one_kind_and_says_where_it_looked(cli, tmp_path):
    res = cli("cache")
    assert res.exit_code == 0 and f"the cache at {tmp_path / 'cache'} is empty" in res.output
    # before: '--kind: expected one of the cache's kinds (it is empty)', exit 2, as for a typo
    res = cli("cache", "--clear", "--kind", "features")
    assert res.exit_code == 0, res.output
    assert cli("run", write(tmp_path, SMALL), "--out", tmp_path / "r", "-q").exit_code == 0
    res = cli("cache", "--clear", "--kind", "base_models")   # a kind this cache holds no entry of
    assert res.exit_code == 0, res.output
    res = cli("cache", "--kind", "features")
    assert res.exit_code == 0 and res.output.startswith("features ") and len(res.output.splitlines()) == 1



def test_a_cache_that_is_a_file_is_said_so(cli, tmp_path, monkeypatch):
    """RANKBENCH_CACHE naming a file: 'the cache at ... is empty', exit 0."""
    (tmp_path / "afile").write_text("not a cache")
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "afile"))
    for args in (["cache"], ["cache", "--clear"]):
        one_line_error(cli(*args), f"{tmp_path / 'afile'}: the cache is a file, not a folder")

def test_help_says_what_each_option_does_and_no_more():
    from click.testing import CliRunner

    def help_of(command):
        return CliRunner().invoke(main, [command, "--help"], terminal_width=200).output

    features = help_of("features")
    assert "Parallel worker processes for the extraction." in features and "--force" in features
    assert "labels" not in features.replace("label,", "")  # the file holds a label column only when the data do
    for command in ("validate", "features"):
        assert "--resume" not in help_of(command), command
    assert "(with --resume) the run's own" in help_of("run")


def test_every_command_takes_quiet_and_verbose():
    for name, command in main.commands.items():
        assert {"-q", "--quiet", "-v", "--verbose"} <= {o for p in command.params for o in p.opts}, name


def test_check_help_lists_every_grade_from_its_one_definition():
    from click.testing import CliRunner

    from rankbench.report.check import Grade

    text = CliRunner().invoke(main, ["check", "--help"], terminal_width=400).output
    for g in Grade:
        assert f"  {g.value}" in text and g.meaning in text, g
    status = text.split("Exit status:")[1].splitlines()
    exits = {line.split()[0]: line for line in status if line.strip()[:1] in ("0", "1", "2")}
    assert all(g.value in exits["1"] for g in Grade if g.fails)
    assert all(g.value in exits["0"] and g.value not in exits["1"].split(" grade")[0] for g in Grade if not g.fails)


def test_shell_completion_works_as_the_readme_says(tmp_path):
    """The README's line (click's completion) prints a script, and the script's protocol completes."""
    readme = (REPO / "README.md").read_text()
    assert 'eval "$(_RANKBENCH_COMPLETE=bash_source rankbench)"' in readme
    env = {**os.environ, "_RANKBENCH_COMPLETE": "bash_source"}
    script = subprocess.run([sys.executable, "-m", "rankbench"], capture_output=True, text=True, env=env, timeout=60)
    assert script.returncode == 0 and "_rankbench_completion()" in script.stdout
    env = {**os.environ, "_RANKBENCH_COMPLETE": "bash_complete", "COMP_WORDS": "rankbench list ran", "COMP_CWORD": "2"}
    words = subprocess.run([sys.executable, "-m", "rankbench"], capture_output=True, text=True, env=env, timeout=60)
    assert words.stdout.split() == ["plain,rankers"]


@pytest.mark.realdata
@pytest.mark.parametrize("config", ["prosser/viper_p316", "sharaf/pubfig", "yuli/umist_table3_K", "merler/corel5k",
                                    "yan/towncentre6_methods"])
def test_methods_on_each_papers_config_with_its_data(cli, shared_data, config):
    """Every check run makes, on the real data, for the config's last ranker alone."""
    from rankbench.config import load_experiment

    path = REPO / "configs" / f"{config}.yaml"
    last = load_experiment(path).config.rankers[-1].name
    res = cli("validate", path, "--data-root", shared_data, "--methods", last)
    assert res.exit_code == 0 and "1 ranker(s)" in res.output, res.output


def test_a_reader_that_stops_reading_ends_the_command_quietly(tmp_path, capsys):
    """``rankbench run CONFIG | head``: the run is whole on disk, nothing is said, the status is
    the shell's for a closed pipe (141); a broken pipe that is not standard output's is named."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "rankbench", "run", str(write(tmp_path, SMALL)), "--out", str(out)],
                          stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=300,
                          env={**os.environ, "RANKBENCH_CACHE": str(tmp_path / "cache")})
    os.close(write_end)
    assert proc.returncode == 141 and "error" not in proc.stderr, proc.stderr
    assert len(list((out / "trials").glob("*.json"))) == 6 and (out / "summary.md").exists()
    with pytest.raises(SystemExit) as exit_:      # CliRunner's standard output has no file descriptor
        from rankbench.cli import _reader_gone
        _reader_gone(BrokenPipeError(32, "Broken pipe", "worker socket"))
    assert exit_.value.code == 1 and "worker socket: Broken pipe" in capsys.readouterr().err

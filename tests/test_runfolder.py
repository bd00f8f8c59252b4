"""Run folders: created exclusively, never reused, unreadable results reported and not trusted;
the ``latest`` link points at the newest run of a config."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from rankbench.runfolder import RunFolder, RunFolderError, TrialRecord
from toydata import record


def test_two_runs_started_in_the_same_second_get_two_folders(tmp_path, monkeypatch):
    import datetime as dt

    class Frozen(dt.datetime):
        @classmethod
        def now(cls, tz=None):
            return dt.datetime(2026, 1, 2, 3, 4, 5)

    monkeypatch.setattr("rankbench.runfolder._dt.datetime", Frozen)
    a = RunFolder.create(root=tmp_path, name="exp")
    b = RunFolder.create(root=tmp_path, name="exp")
    assert a.path != b.path and a.path.name == "20260102-030405" and b.path.name == "20260102-030405-2"


def test_a_folder_holding_anything_is_never_reused(tmp_path):
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "notes.txt").write_text("mine")
    with pytest.raises(RunFolderError, match="already holds files"):
        RunFolder.create(tmp_path / "used")
    (tmp_path / "empty").mkdir()
    assert RunFolder.create(tmp_path / "empty").path == tmp_path / "empty"
    (tmp_path / "a-file").write_text("mine")
    with pytest.raises(RunFolderError, match="a-file: exists and is a file, not a folder; choose another --out"):
        RunFolder.create(tmp_path / "a-file")


def test_a_run_that_never_started_is_cleared_by_one_process_only(tmp_path):
    """Two processes given one killed run's folder (config.yaml, an opening manifest, a stale
    lock): before, each cleared it, the lock file the first had just taken among its files, and
    both wrote the folder at exit 0 (one run's results lost, or two runs' files mixed)."""
    p = tmp_path / "killed"
    (p / "trials").mkdir(parents=True)
    for name in ("config.yaml", "manifest.json", ".lock"):
        (p / name).write_text("{}")
    a, b = RunFolder.create(p), RunFolder.create(p)       # both see a run that never started
    held = a.claim("rankbench run A")
    assert sorted(e.name for e in p.iterdir()) == [".lock"]   # cleared under the lock
    (p / "config.yaml").write_text("name: A\n")
    with pytest.raises(RunFolderError, match="another rankbench writes this run folder"):
        b.claim("rankbench run B")
    (p / "splits.json").write_text("{}")                # A has started its run, then ends
    held.release()
    with pytest.raises(RunFolderError, match="already holds a run, started meanwhile by another rankbench"):
        b.claim("rankbench run B")
    assert (p / "config.yaml").read_text() == "name: A\n" and (p / "splits.json").exists()


def test_unreadable_results_are_problems_not_results(tmp_path):
    f = RunFolder.create(tmp_path / "r")
    f.write_trial(record("", 0, "A", {"cmc@1": 0.5}))
    f.write_trial(record("", 1, "A", {"cmc@1": 0.5}))
    f.trial_path("", 2, "A").write_text('{"setting": "", "trial": 2, "meth')   # truncated
    f.trial_path("", 3, "A").write_text('{"setting": "", "trial": 3}')         # fields missing
    records, problems = f.read_trials()
    assert sorted(r.trial for r in records) == [0, 1]
    assert len(problems) == 2 and all(p.reason for p in problems)
    f.write_config({"name": "r", "rankers": [{"name": "A", "ranker": "l1"}]})
    state = f.read_state()   # each file read once: config, manifest, splits, trials
    # results without the splits.json they were drawn with: one more problem
    assert [r.trial for r in state.records] == [0, 1] and [p.path.name for p in state.problems] == \
        [f.trial_path("", 2, "A").name, f.trial_path("", 3, "A").name, "manifest.json", "splits.json"]
    with pytest.raises(ValueError, match="metrics: a finished trial holds at least one metric"):
        TrialRecord.parse(json.dumps({"setting": "", "trial": 0, "method": "A", "seed": 0, "wall_s": 1.0}))


def test_without_its_manifest_a_runs_edited_config_is_found_by_its_results(tmp_path):
    # report and check took an edited config.yaml (bins 16 -> 4) for the run's own at exit 0 once
    # the manifest was gone: its results' own fingerprints were never asked
    from rankbench.runfolder import config_fingerprint

    config = {"name": "r", "rankers": [{"name": "A", "ranker": "l1"}], "features": [{"name": "c", "bins": 16}]}
    f = RunFolder.create(tmp_path / "r")
    f.write_config(config)
    f.write_trial(record("", 0, "A", {"cmc@1": 0.5}, config_fingerprint=config_fingerprint(config)))
    assert [p.path.name for p in f.read_state().problems] == ["manifest.json", "splits.json"]
    f.write_config({**config, "features": [{"name": "c", "bins": 4}]})
    problems = f.read_state().problems
    assert [p.path.name for p in problems] == ["manifest.json", "config.yaml", "splits.json"]
    assert problems[1].reason.startswith("edited since the run started (its results' config fingerprint differs)")


def test_truncated_image_gives_our_line_and_no_opencv_noise(tmp_path):
    """OpenCV writes its own errors to the process's stderr (not Python's): check the real process."""
    import cv2

    root = tmp_path / "data" / "viper"
    for cam in ("cam_a", "cam_b"):
        (root / cam).mkdir(parents=True)
        for pid in range(3):
            cv2.imwrite(str(root / cam / f"{pid:03d}_000.bmp"), np.zeros((128, 48, 3), np.uint8))
    bad = root / "cam_b" / "001_000.bmp"
    bad.write_bytes(bad.read_bytes()[:200])
    cfg = tmp_path / "v.yaml"
    cfg.write_text("dataset: {name: viper}\nfeatures: [{extractor: color_strips}]\n"
                   "protocol: {name: reid, n_test: 2, ranks: [1]}\nrankers: [{name: L1, ranker: l1}]\n")
    env = {**os.environ, "RANKBENCH_CACHE": str(tmp_path / "cache")}
    res = subprocess.run([sys.executable, "-m", "rankbench", "run", str(cfg), "--data-root", str(tmp_path / "data"),
                          "--out", str(tmp_path / "out")], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 1
    assert res.stderr.strip().splitlines() == [f"rankbench: error: image {bad} is unreadable or truncated "
                                               "(could not be decoded)"]
    assert not (tmp_path / "out").exists()


def test_new_folders_are_exclusive_and_latest_points_at_the_newest(tmp_path):
    a = RunFolder.create(root=tmp_path, name="cfg")
    b = RunFolder.create(root=tmp_path, name="cfg")
    assert a.path != b.path and a.path.parent == b.path.parent
    latest = tmp_path / "cfg" / "latest"
    assert latest.is_symlink() and os.readlink(latest) == b.path.name      # relative: the tree can move
    assert sorted(p.name for p in (tmp_path / "cfg").iterdir()) == sorted([a.path.name, b.path.name, "latest"])
    explicit = RunFolder.create(tmp_path / "mine")
    assert explicit.path.is_dir() and not (tmp_path / "latest").exists()


def test_a_failed_start_leaves_latest_at_the_previous_run(tmp_path):
    a = RunFolder.create(root=tmp_path, name="cfg")
    a.write_config({"name": "cfg"})
    b = RunFolder.create(root=tmp_path, name="cfg")          # then fails before its first result
    assert os.readlink(tmp_path / "cfg" / "latest") == b.path.name
    assert b.remove_if_empty_of_results()
    assert os.readlink(tmp_path / "cfg" / "latest") == a.path.name
    a2 = RunFolder.create(root=tmp_path, name="other")
    assert a2.remove_if_empty_of_results() and not (tmp_path / "other" / "latest").is_symlink()


def test_a_second_writer_is_refused_naming_the_holder(tmp_path):
    f = RunFolder.create(tmp_path / "r")
    with f.lock("rankbench run cfg.yaml"):
        with pytest.raises(RunFolderError) as err:
            RunFolder(f.path).lock("rankbench run --resume r")
        assert f"pid {os.getpid()} on " in str(err.value) and ": rankbench run cfg.yaml" in str(err.value)
        assert "\n" not in str(err.value)
    with f.lock("rankbench report"):  # released: the next writer gets it
        pass


def test_the_lock_of_a_killed_process_does_not_block(tmp_path):
    """The kernel drops a dead process's flock: a run killed outright (SIGKILL) leaves no blocker."""
    import signal

    f = RunFolder.create(tmp_path / "r")
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\nfrom rankbench.runfolder import RunFolder\n"
        f"lock = RunFolder({str(f.path)!r}).lock('rankbench run held')\nprint('locked', flush=True)\ntime.sleep(600)")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(RunFolderError, match=f"pid {holder.pid} on .*: rankbench run held"):
            f.lock("second")
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=60)
    with f.lock("after the kill"):
        assert json.loads((f.path / ".lock").read_text())["command"] == "after the kill"


def test_heartbeats_of_jobs_in_progress(tmp_path):
    f = RunFolder.create(tmp_path / "r")
    f.write_heartbeat("job-a", {"label": "A trial 0", "ticks": {"round": [3, 10]}})
    f.write_heartbeat("job-b", {"label": "B trial 0"})
    (f.path / ".running" / "job-c.json").write_text('{"label": "tru')  # caught mid-replacement
    assert f.read_heartbeats() == {"job-a": {"label": "A trial 0", "ticks": {"round": [3, 10]}},
                                   "job-b": {"label": "B trial 0"}}
    f.remove_heartbeat("job-a")
    assert set(f.read_heartbeats()) == {"job-b"}
    f.clear_heartbeats()
    assert f.read_heartbeats() == {} and not (f.path / ".running").exists()


def _small_run(cli, tmp_path):
    from toydata import synthetic_reid_config

    cfg = tmp_path / "c.yaml"
    cfg.write_text(synthetic_reid_config(n_people=12, n_test=4, ranks=[1], trials=1)
                   + "rankers:\n  - {name: L1, ranker: l1}\n")
    out = tmp_path / "run"
    assert cli("run", cfg, "--out", out, "--no-plots", "-q").exit_code == 0
    return out


def test_every_lock_is_released_and_removed_on_every_path(cli, tmp_path, monkeypatch):
    """A refused report (unusable splits), a report that fails midway and one interrupted by
    Ctrl-C leave no .lock behind, and the next writer gets the folder at once."""
    out = _small_run(cli, tmp_path)
    assert not (out / ".lock").exists()                        # a finished run leaves none either
    splits = (out / "splits.json").read_bytes()
    (out / "splits.json").write_text("{")
    res = cli("report", out, "--no-plots")
    assert res.exit_code == 1 and "splits.json" in res.output and not (out / ".lock").exists()
    (out / "splits.json").write_bytes(splits)
    for fault in (OSError(28, "No space left on device", str(out / "summary.md")), KeyboardInterrupt()):
        def fail(*args, _fault=fault, **kwargs):
            raise _fault
        with monkeypatch.context() as m:
            m.setattr(RunFolder, "write_text", fail)
            res = cli("report", out, "--no-plots")
        assert res.exit_code == (130 if isinstance(fault, KeyboardInterrupt) else 1), res.output
        assert "Traceback" not in res.output and not (out / ".lock").exists()
        RunFolder(out).lock("next").release()                   # free at once
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []


def test_a_lock_removed_by_its_holder_is_not_shared_by_two_writers(tmp_path):
    """A writer that opened the lock file just before its holder removed it must not believe it
    holds the folder while a third writer locks the new file."""
    f = RunFolder.create(tmp_path / "r")
    first = f.lock("first")
    from rankbench.utils.fileio import FileLock

    stale = os.open(f.path / ".lock", os.O_RDWR)               # opened while held ...
    first.release()                                             # ... then the holder lets go (and removes it)
    assert not (f.path / ".lock").exists()
    with f.lock("second"):
        import fcntl

        fcntl.flock(stale, fcntl.LOCK_EX | fcntl.LOCK_NB)       # the old file locks, but it is not the lock:
        with pytest.raises(RunFolderError, match="second"):
            f.lock("third")                                     # the path names the second writer's file
        with pytest.raises(BlockingIOError):
            FileLock(f.path / ".lock", f.path, blocking=False)
    os.close(stale)


def test_a_lock_file_that_is_a_link_is_refused_naming_it(tmp_path):
    f = RunFolder.create(tmp_path / "r")
    sentinel = tmp_path / "sentinel"
    sentinel.write_text("precious")
    (f.path / ".lock").symlink_to(sentinel)
    with pytest.raises(RunFolderError, match=r"r/\.lock: cannot lock the run folder: is a symbolic link"):
        f.lock("rankbench report")
    assert sentinel.read_text() == "precious" and (f.path / ".lock").is_symlink()

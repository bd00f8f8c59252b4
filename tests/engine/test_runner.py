"""The runner's promises about a run folder it continues: it is the run the folder started (same
config, same rankbench, same data), a run killed at any point can be resumed or replaced, and a
resumed run stays in its own folder."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from toydata import synthetic_reid_config

from rankbench.config import set_path
from rankbench.runfolder import RunFolder

PLUGINS = Path(__file__).resolve().parents[1] / "plugins"
GOOD = synthetic_reid_config(n_people=16, n_test=6, ranks=[1, 5], trials=2) + \
    "rankers:\n  - {name: L1, ranker: l1}\n  - {name: P, ranker: prsvm, C: 1.0}\n"


@pytest.fixture
def half_done(cli, tmp_path):
    """A run with one of its four results deleted (as if interrupted): (config, run folder)."""
    path, out = tmp_path / "c.yaml", tmp_path / "run"
    path.write_text(GOOD)
    assert cli("run", path, "--out", out, "-q", "--no-plots").exit_code == 0
    next(iter(sorted((out / "trials").glob("*.json")))).unlink()
    return path, out


def one_line(res, needle: str, status: int = 1) -> str:
    lines = res.output.strip().splitlines()
    assert res.exit_code == status and len(lines) == 1 and lines[0].startswith("rankbench: error: "), res.output
    assert needle in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("key, value, shown", [
    ("seed", 7, "seed: absent then, 7 now"),
    ("rankers.P.C", 10.0, "rankers.P.C: 1.0 then, 10.0 now"),
    ("protocol.n_test", 5, "protocol.n_test: 6 then, 5 now"),
])
def test_resume_refuses_a_config_edited_after_the_start(cli, half_done, key, value, shown):
    _, out = half_done
    folder = RunFolder(out)
    cfg = folder.read_config()
    set_path(cfg, key, value, "test")
    folder.write_config(cfg)
    one_line(cli("run", "--resume", out), f"config.yaml was changed after the run started ({shown}); put it back")
    assert len(list(folder.trials_dir.glob("*.json"))) == 3     # nothing mixed in


def test_resume_refuses_a_run_of_another_rankbench(cli, half_done):
    _, out = half_done
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["rankbench_version"] = "0.0.1"
    (out / "manifest.json").write_text(json.dumps(manifest))
    one_line(cli("run", "--resume", out), "the run was made by rankbench 0.0.1, this is rankbench")


@pytest.mark.parametrize("how", ["missing", "garbage", "fingerprint"])
def test_resume_refuses_a_run_whose_manifest_cannot_vouch_for_it(cli, half_done, how):
    _, out = half_done
    path = out / "manifest.json"
    if how == "missing":
        path.unlink()
    elif how == "garbage":
        path.write_text("{not json")
    else:
        manifest = json.loads(path.read_text())
        manifest["config_fingerprint"] = "0" * 32
        path.write_text(json.dumps(manifest))
    one_line(cli("run", "--resume", out), "manifest" if how != "fingerprint" else "config_fingerprint")


def test_resume_refuses_splits_beyond_the_dataset(cli, half_done):
    _, out = half_done
    splits = json.loads((out / "splits.json").read_text())
    splits["settings"][0]["trials"][0]["probe"][0] = 10_000
    (out / "splits.json").write_text(json.dumps(splits))
    one_line(cli("run", "--resume", out), "row 10000 is beyond the dataset's 32 items")
    one_line(cli("report", out), "splits.json: not a usable splits file")


def test_a_resumed_run_stays_in_its_own_folder(cli, half_done, tmp_path):
    _, out = half_done
    one_line(cli("run", "--resume", out, "--out", tmp_path / "elsewhere"), "--out", status=2)
    assert not (tmp_path / "elsewhere").exists()
    assert cli("run", "--resume", out, "-q", "--no-plots").exit_code == 0
    assert len(list((out / "trials").glob("*.json"))) == 4


def _killed_while_extracting(tmp_path) -> tuple[Path, Path, Path, dict]:
    """A run SIGKILLed while its features are extracted: (config, folder, gate, environment)."""
    gate = tmp_path / "gate"
    path, out = tmp_path / "c.yaml", tmp_path / "run"
    path.write_text(GOOD.replace("features: [{name: colour, extractor: color_strips, bins: 8}]",
                                 f"features: [{{name: colour, extractor: '{PLUGINS / 'gated_extractor.py'}:GatedMeanColour', "
                                 f"gate: '{gate}'}}]"))
    env = {**os.environ, "RANKBENCH_CACHE": str(tmp_path / "cache")}
    proc = subprocess.Popen([sys.executable, "-m", "rankbench", "run", str(path), "--out", str(out), "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.time() + 120
    while time.time() < deadline and not (out / "manifest.json").is_file():
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert (out / "config.yaml").is_file() and not (out / "splits.json").exists()
    return path, out, gate, env


@pytest.mark.parametrize("then", ["resume", "replace"])
def test_a_run_killed_while_extracting_features_can_be_resumed_or_replaced(tmp_path, then):
    path, out, gate, env = _killed_while_extracting(tmp_path)
    gate.touch()
    args = ["--resume", str(out)] if then == "resume" else [str(path), "--out", str(out)]
    res = subprocess.run([sys.executable, "-m", "rankbench", "run", *args, "-q", "--no-plots"],
                         capture_output=True, text=True, env=env, timeout=600)
    assert res.returncode == 0, res.stderr
    records, problems = RunFolder(out).read_trials()
    assert len(records) == 4 and not problems and all(r.ok for r in records)


def test_jobs_are_capped_at_the_machine(cli, tmp_path):
    from rankbench.engine.execute import cores

    path, out = tmp_path / "c.yaml", tmp_path / "run"
    path.write_text(GOOD)
    res = cli("run", path, "--out", out, "--jobs", "100000", "--no-plots")
    assert res.exit_code == 0 and f"--jobs 100000: using {cores()}, the cores of this machine" in res.output
    assert RunFolder(out).read_manifest().executor == {"kind": "local", "workers": cores()}


def test_a_run_reads_back_nothing_it_wrote(tmp_path, monkeypatch):
    """A new run holds its state in memory and hands it to its report: no file of its folder is
    read (the folder is read only to resume or to report again), and the report it builds is the
    one ``rankbench report`` builds from the folder."""
    from rankbench import app

    path = tmp_path / "c.yaml"
    path.write_text(GOOD)

    def never(self, *args, **kwargs):
        raise AssertionError("a run read its own folder back")

    with monkeypatch.context() as m:
        for name in ("read_config", "read_splits", "read_manifest", "read_trials", "read_state"):
            m.setattr(RunFolder, name, never)
        result = app.run(path, out=tmp_path / "run", options=app.EngineOptions(progress=False), plots=False)
    written = (tmp_path / "run" / "summary.md").read_text()
    again = app.report(tmp_path / "run", plots=False)
    assert result.outcome.n_done == 4 and written == again["markdown"]
    assert result.outcome.state.manifest == RunFolder(tmp_path / "run").read_manifest()


def test_evaluate_without_a_folder_writes_nothing(tmp_path, monkeypatch):
    """``app.evaluate`` runs as ``run`` does; without ``out`` it writes no file at all (no
    temporary run folder), and its frames equal those of the same run kept in a folder."""
    import tempfile

    from rankbench import app
    from rankbench.rankers.baselines.template import L1Norm

    path = tmp_path / "c.yaml"
    path.write_text(GOOD)
    kept = app.evaluate(L1Norm(), path, out=tmp_path / "kept", progress=False)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    with monkeypatch.context() as m:
        m.setattr(tempfile, "tempdir", str(scratch))
        m.setattr(RunFolder, "_write", lambda *a, **k: pytest.fail("evaluate wrote a run file"))
        trials, summary = app.evaluate(L1Norm(), path, progress=False)
    assert not any(scratch.iterdir())
    q = ~trials.metric.isin(["train_s", "test_s", "peak_mb"])
    assert trials[q].equals(kept[0][q]) and list(summary.columns) == list(kept[1].columns)

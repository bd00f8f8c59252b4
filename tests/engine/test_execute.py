"""rankbench.engine.execute: a run killed at any point can be resumed or replaced, and its jobs
are capped at the machine's cores."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from toydata import synthetic_reid_config

from rankbench.runfolder import RunFolder

PLUGINS = Path(__file__).resolve().parents[1] / "plugins"
GOOD = synthetic_reid_config(n_people=16, n_test=6, ranks=[1, 5], trials=2) + \
    "rankers:\n  - {name: L1, ranker: l1}\n  - {name: P, ranker: prsvm, C: 1.0}\n"


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



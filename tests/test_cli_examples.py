"""Every example in every command's --help runs as written (a shell's word splitting and globbing),
in a fresh folder holding the repository's configs and, when present, the real datasets at
../shared/datasets as the examples expect."""

import glob
import os
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from rankbench.cli import main

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("RANKBENCH_SHARED_DATA", REPO.parent / "shared" / "datasets"))


def help_examples() -> list[tuple[str, str]]:
    """(command, example line) from ``rankbench --help`` and every ``rankbench <command> --help``."""
    runner = CliRunner()
    out = []
    for name in ["", *main.commands]:
        text = runner.invoke(main, [name, "--help"] if name else ["--help"]).output
        block = False
        for line in text.splitlines():
            if re.match(r"\s*Examples?:\s*$", line):
                block = True
            elif block and line.strip().startswith("rankbench "):
                out.append((name or "rankbench", line.strip()))
            elif block:
                block = False
    return out


def test_every_command_has_examples():
    commands = {c for c, _ in help_examples()}
    assert set(main.commands) | {"rankbench"} <= commands


def test_every_help_example_runs_as_written(tmp_path, monkeypatch):
    work = tmp_path / "repo"
    work.mkdir()
    (work / "configs").symlink_to(REPO / "configs")
    if SHARED.is_dir():
        (tmp_path / "shared").mkdir()
        (tmp_path / "shared" / "datasets").symlink_to(SHARED)
    monkeypatch.chdir(work)
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "cache"))
    examples = help_examples()
    # runs first (later examples read their folders), each example once, in the order shown
    ordered = list(dict.fromkeys([e for c, e in examples if e.split()[1] == "run"] + [e for _, e in examples]))
    runner = CliRunner()
    skipped, failed = [], []
    missing: list[str] = []   # the results folders of runs skipped for want of the datasets
    for line in ordered:
        if ("../shared/datasets" in line or any(m in line for m in missing)) and not SHARED.is_dir():
            skipped.append(line)
            missing += [f"results/{Path(w).stem}/" for w in shlex.split(line) if w.endswith(".yaml")]
            continue
        words = [w2 for w in shlex.split(line)[1:] for w2 in (sorted(glob.glob(w)) or [w] if "*" in w else [w])]
        res = runner.invoke(main, words, catch_exceptions=False)
        if res.exit_code != 0:
            failed.append(f"{line}\n    exit {res.exit_code}: {res.output.strip()[-300:]}")
    assert not failed, "\n".join(failed)
    assert (work / "results" / "quickstart" / "latest" / "summary.md").is_file()
    assert (work / "results" / "REPORT.html").is_file() and (work / "compare.csv").is_file()
    if skipped:
        pytest.skip(f"{len(skipped)} example(s) need the real datasets at {SHARED}: " + "; ".join(skipped))

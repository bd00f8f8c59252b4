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


def run_folder_of(words: list[str]) -> str:
    """The run folder a ``run`` example's words make: its ``--out``, else ``results/<config name>``."""
    from rankbench.config import load_raw

    if "--out" in words:
        return words[words.index("--out") + 1]
    return f"results/{load_raw(words[1])['name']}"


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
    skipped, failed, not_made = [], [], []
    for line in ordered:
        words = [w2 for w in shlex.split(line)[1:] for w2 in (sorted(glob.glob(w)) or [w] if "*" in w else [w])]
        if "../shared/datasets" in line and not SHARED.is_dir():
            skipped.append(line)
            if words[0] == "run":
                not_made.append(run_folder_of(words))
            continue
        if any(w.startswith(f"{folder}/") or w == folder for w in words for folder in not_made):
            skipped.append(line)  # reads the folder of a run that needs the real datasets
            continue
        res = runner.invoke(main, words, catch_exceptions=False)
        if res.exit_code != 0:
            failed.append(f"{line}\n    exit {res.exit_code}: {res.output.strip()[-300:]}")
    assert not failed, "\n".join(failed)
    assert (work / "results" / "quickstart" / "latest" / "summary.md").is_file()
    assert (work / "results" / "REPORT.html").is_file() and (work / "compare.csv").is_file()
    if skipped:
        pytest.skip(f"{len(skipped)} example(s) need the real datasets at {SHARED}: " + "; ".join(skipped))

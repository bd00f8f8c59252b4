"""No file rankbench writes is ever written through a symbolic link: a generated sweep over every
file and folder a run, a report, an export and the cache write (and the lock and heartbeat files
that exist only while they work), each replaced in turn by a link to a sentinel file (a folder: to
a copy of what it held). Whatever the command, the sentinel is unchanged, and the command either succeeds (writing beside the link, or without
the cache) or exits 1 with one line; never a traceback.

As root (the tests may run so), following such a link would overwrite whatever it names.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from rankbench.cli import main

SENTINEL = b"precious: not rankbench's to write\n"


def _table(root: Path) -> None:
    rng = np.random.default_rng(3)
    n = 80
    beach = rng.random(n) < 0.3
    root.mkdir()
    pd.DataFrame({"id": [f"shot{i}" for i in range(n)], "beach": beach.astype(int)}).to_csv(root / "shots.csv",
                                                                                           index=False)
    np.save(root / "x.npy", np.c_[beach, rng.random(n)] + rng.normal(0, 0.8, (n, 2)))


@pytest.fixture
def invoke(monkeypatch):
    runner = CliRunner()

    def run(cache: Path, *args) -> tuple[int, str]:
        monkeypatch.setenv("RANKBENCH_CACHE", str(cache))
        monkeypatch.setenv("RANKBENCH_REUSE", "1")   # the cache's trials/ entries too
        res = runner.invoke(main, [str(a) for a in args], catch_exceptions=True)
        if res.exception is not None and not isinstance(res.exception, SystemExit):
            raise res.exception
        return res.exit_code, res.output

    return run


@pytest.mark.slow
def test_no_file_is_written_through_a_link(tmp_path, invoke):
    data = tmp_path / "data"
    _table(data)
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({
        "name": "links", "trials": 1, "seed": 0,
        "dataset": {"name": "table", "file": "shots.csv", "concepts": ["beach"], "features": "x.npy"},
        "features": [{"name": "x", "extractor": "array", "key": "feat"}],
        "protocol": {"name": "retrieval", "depths": [10], "keep_scores": True},
        "rankers": [{"name": "LR", "ranker": "logistic"}]}))
    reid = tmp_path / "reid.yaml"   # a run whose features the cache keeps (extracted from images)
    reid.write_text(yaml.safe_dump({
        "name": "reid", "trials": 1, "seed": 0, "dataset": {"name": "synthetic_reid", "n_people": 12},
        "features": [{"name": "c", "extractor": "color_strips", "bins": 4}],
        "protocol": {"name": "reid", "n_test": 4, "ranks": [1]}, "rankers": [{"name": "L1", "ranker": "l1"}]}))
    pristine = tmp_path / "pristine"
    run, cache = pristine / "run", pristine / "cache"
    commands = {"run": [("run", "--resume", "{run}", "--no-plots", "-q")],
                "report": [("report", "{run}", "--no-plots", "-q")], "plots": [("report", "{run}", "-q")],
                "trec": [("export", "{run}", "--format", "trec", "-q")],
                "svmlight": [("export", "{run}", "--format", "svmlight", "-q")],
                "cache": [("run", cfg, "--out", "{tmp}/again", "--data-root", data, "--no-plots", "-q")],
                "features": [("run", reid, "--out", "{tmp}/again-reid", "--no-plots", "-q")],
                "clear": [("cache", "--clear")]}
    assert invoke(cache, "run", cfg, "--out", run, "--data-root", data, "-q")[0] == 0
    assert invoke(tmp_path / "reid-cache", "run", reid, "--out", tmp_path / "reid", "--no-plots", "-q")[0] == 0
    shutil.copytree(tmp_path / "reid-cache", cache, dirs_exist_ok=True)
    for args in commands["trec"] + commands["svmlight"]:
        assert invoke(cache, *[str(a).format(run=run) for a in args])[0] == 0

    # every file and folder written, and those that exist only while a command works (locks, heartbeats)
    written = sorted(p.relative_to(pristine) for p in pristine.rglob("*") if p.is_file())
    folders = sorted(p.relative_to(pristine) for p in pristine.rglob("*/*") if p.is_dir()) + [Path("run/.running")]
    jobs = [p.stem for p in (run / "trials").glob("*.json")]
    transient = [Path("run/.lock"), *(Path("run/.running") / f"{j}.json" for j in jobs), Path("cache/.clear.lock"),
                 *(p.with_suffix(".lock") for p in written if p.parts[0] == "cache")]
    assert len(written) >= 20 and any(p.parts[1] == "plots" for p in written if p.parts[0] == "run")
    assert {p.parts[1] for p in written if p.parts[0] == "cache"} >= {"features", "trials"}

    def kinds(rel: Path) -> list[str]:
        if rel.parts[0] == "cache":
            return ["clear"] if rel.name == ".clear.lock" else ["features"] if "features" in rel.parts else ["cache"]
        if rel.parts[1] == "export":
            return [rel.parts[2]] if len(rel.parts) > 3 or rel.suffix == "" and len(rel.parts) == 3 else \
                ["trec", "svmlight"]
        if rel.parts[1] == "plots":
            return ["plots"]
        return ["report"] if rel.suffix in (".csv", ".md", ".tex") or rel.name == "results.json" else ["run"]

    def snapshot(path: Path):
        if path.is_file():
            return path.read_bytes()
        return {p.relative_to(path): p.read_bytes() if p.is_file() else None for p in sorted(path.rglob("*"))}

    problems = []
    for i, rel in enumerate(written + transient + folders):
        case = tmp_path / f"case{i}"
        shutil.copytree(pristine, case, symlinks=True)
        target = case / rel
        sentinel = case / "sentinel"
        if rel in folders:   # a folder's link names a copy of what it held: writes there would show
            shutil.copytree(target, sentinel) if target.is_dir() else sentinel.mkdir()
            shutil.rmtree(target, ignore_errors=True)
        else:
            sentinel.write_bytes(SENTINEL)
            target.unlink(missing_ok=True)
        before = snapshot(sentinel)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(sentinel)
        for args in [a for kind in kinds(rel) for a in commands[kind]]:
            args = [str(a).format(run=case / "run", tmp=case) for a in args]
            code, output = invoke(case / "cache", *args)
            errors = [line for line in output.splitlines() if line.startswith("rankbench: error:")]
            if snapshot(sentinel) != before or sentinel.is_symlink():
                problems.append(f"{rel}: {' '.join(args[:2])} wrote through the link")
            elif "Traceback" in output or (code != 0 and (code != 1 or len(errors) != 1)):
                problems.append(f"{rel}: {' '.join(args[:2])} exit {code}: {output[-300:]}")
            elif code == 1 and rel.name not in errors[0]:
                problems.append(f"{rel}: {' '.join(args[:2])}: the line does not name the file: {errors[0]}")
        shutil.rmtree(case)
    assert not problems, "\n".join(problems)


def test_a_plots_folder_that_is_a_link_is_never_cleared(cli, tmp_path):
    """A report deletes its old figures before drawing new ones: through a plots/ link it would
    delete the figures of whatever folder the link names."""
    from toydata import synthetic_reid_config

    cfg = tmp_path / "c.yaml"
    cfg.write_text(synthetic_reid_config(n_people=12, n_test=4, ranks=[1, 3], trials=1)
                   + "rankers:\n  - {name: L1, ranker: l1}\n")
    out, mine = tmp_path / "run", tmp_path / "mine"
    assert cli("run", cfg, "--out", out, "-q").exit_code == 0
    shutil.copytree(out / "plots", mine)
    shutil.rmtree(out / "plots")
    (out / "plots").symlink_to(mine)
    before = sorted(p.name for p in mine.iterdir())
    res = cli("report", out, "--max-rank", "2")          # other figures: the old ones would be deleted
    lines = res.output.strip().splitlines()
    assert res.exit_code == 1 and len(lines) == 1 and f"{out / 'plots'}: " in lines[0], res.output
    assert sorted(p.name for p in mine.iterdir()) == before

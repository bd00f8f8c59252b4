"""report/build.py: a run's derived files rebuilt from its trial records, checked against the
records read independently (plain JSON and numpy), and what a reader is told before the tables."""

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from rankbench.report.build import build_report, load_run, run_description, run_facts, status_lines


@pytest.fixture
def run_a(runs, tmp_path):
    """A private copy of the 3-trial run (build_report rewrites its derived files)."""
    return shutil.copytree(runs["a"], tmp_path / "a")


def _records_by_hand(folder):
    rows = []
    for f in sorted((folder / "trials").glob("*.json")):
        rec = json.loads(f.read_text())
        rows += [(rec["method"], rec["trial"], k, v) for k, v in rec["metrics"].items()]
    return pd.DataFrame(rows, columns=["method", "trial", "metric", "value"])


def test_the_summary_is_the_mean_and_sample_std_of_the_trial_files(run_a):
    built = build_report(run_a, plots=False)
    summary = pd.read_csv(run_a / "summary.csv")
    by_hand = _records_by_hand(run_a)
    assert set(summary["method"]) == {"L1", "Euclidean", "Bhattacharyya"}
    for (method, metric), g in by_hand.groupby(["method", "metric"]):
        row = summary[(summary["method"] == method) & (summary["metric"] == metric)]
        assert len(row) == 1, (method, metric)
        assert row["mean"].iloc[0] == pytest.approx(np.mean(g["value"]), rel=1e-12, abs=1e-15)
        assert row["std"].iloc[0] == pytest.approx(np.std(g["value"], ddof=1), rel=1e-9, abs=1e-12)
        assert row["n_trials"].iloc[0] == 3
    assert "## Published numbers" in built.markdown and "## Claims" in built.markdown
    doc = json.loads((run_a / "results.json").read_text())
    assert {(r["method"], r["metric"]) for r in doc["summary"]} == set(map(tuple, summary[["method", "metric"]].values))


def test_a_missing_and_an_unreadable_result_are_said_before_the_tables(run_a):
    files = sorted((run_a / "trials").glob("*.json"))
    files[0].unlink()
    files[1].write_text("{not json")
    run = load_run(run_a)
    lines = status_lines(run)
    assert lines[0].startswith("**Incomplete run:** 7 of 9 results")
    assert any(line.startswith("**Unusable result file**") and files[1].name in line for line in lines)
    built = build_report(run_a, plots=False)
    assert "**Incomplete run:** 7 of 9" in built.markdown


def test_the_resume_command_works_wherever_the_report_is_read(run_a, monkeypatch):
    """Rebuilt from a relative path (collect from another folder), summary.md said `--resume a`."""
    next((run_a / "trials").glob("*.json")).unlink()
    monkeypatch.chdir(run_a.parent)
    assert status_lines(load_run("a"))[0].endswith(f"(continue it with `--resume {run_a}`).")


def test_what_the_trials_warned_of_is_said_with_the_tables(run_a):
    # a concept left out of a trial's MAP, probes a trial could not score: on stderr while it ran,
    # and in the report a reader keeps
    files = sorted((run_a / "trials").glob("*.json"))
    for f in files[:2]:
        rec = json.loads(f.read_text())
        rec["warnings"] = [{"text": "UserWarning: 3 of 20 probes unscored | no match", "count": 1}]
        f.write_text(json.dumps(rec))
    methods = [json.loads(f.read_text())["method"] for f in files[:2]]
    built = build_report(run_a, plots=False)
    assert "**Warnings:** 2 of 9 results came with warnings (listed under Warnings)." in built.markdown
    row = built.markdown.split("## Warnings\n\n")[1].splitlines()[2]
    by = ", ".join(f"{m} ({methods.count(m)})" for m in dict.fromkeys(methods))
    assert row == f"| UserWarning: 3 of 20 probes unscored \\| no match | {by} |"


@pytest.mark.parametrize("change, said", [
    ("splits", "**`splits.json`** missing: the trials' splits can be neither checked nor paired"),
    ("config", "**`config.yaml`** edited since the run started"),
])
def test_results_without_their_splits_or_config_are_said_and_not_resumed(run_a, change, said):
    # without splits.json a claim paired trials of other rows (OK where TREND was right); an edited
    # config.yaml re-graded the run against other numbers; both at exit 0 of check
    from rankbench.engine.manifest import verify_resume
    from rankbench.errors import RankbenchError
    from rankbench.runfolder import RunFolder

    if change == "splits":
        (run_a / "splits.json").unlink()
    else:
        (run_a / "config.yaml").write_text((run_a / "config.yaml").read_text().replace("trials: 3", "trials: 2"))
    run = load_run(run_a)
    assert not run.complete and any(line.startswith(said) for line in status_lines(run)), status_lines(run)
    with pytest.raises(RankbenchError, match="splits.json missing|config.yaml was changed"):
        verify_resume(RunFolder.open(run_a))


def test_a_file_no_job_writes_is_called_stray_not_recomputed(run_a):
    # --resume has nothing to recompute for it, so "recomputed by --resume" sent the user in a circle
    first = sorted((run_a / "trials").glob("*.json"))[0]
    shutil.copy(first, run_a / "trials" / f"copy of {first.name}")
    lines = status_lines(load_run(run_a))
    assert len(lines) == 1 and lines[0].startswith(f"**Stray file** `copy of {first.name}` (holds the result of ")
    assert lines[0].endswith("no result this run makes has its name; it is left out here: remove it.")


def test_after_a_ranker_renamed_in_config_its_results_are_not_called_for_removal(run_a):
    # 'remove it' of the real L1 results, when config.yaml was what changed (L1 -> L1-norm)
    cfg = run_a / "config.yaml"
    cfg.write_text(cfg.read_text().replace("name: L1\n", "name: L1-norm\n"))
    lines = status_lines(load_run(run_a))
    stray = [line for line in lines if line.startswith("**Stray file**")]
    assert stray and all(line.endswith("put config.yaml back (its results may be this file's), do not remove it.")
                         for line in stray), lines


def test_a_complete_run_has_nothing_to_say_first(runs):
    assert status_lines(load_run(runs["a"])) == []


def test_the_description_keeps_the_protocols_trials_and_marks_this_runs(runs):
    run = load_run(runs["a"])
    run.config = {**run.config, "description": "VIPeR, 10 trials as the paper; 3 trials in CI."}
    assert run_description(run) == "VIPeR, 10 trials [this run: 3] as the paper; 3 trials in CI."
    facts = run_facts(run)
    assert facts.startswith("This run: 3 trials (run seed 0)") and "methods: L1, Euclidean, Bhattacharyya." in facts


def test_a_run_without_results_is_one_line(tmp_path, runs):
    empty = shutil.copytree(runs["one"], tmp_path / "empty")
    for f in (empty / "trials").glob("*.json"):
        f.unlink()
    from rankbench.errors import RankbenchError

    with pytest.raises(RankbenchError, match="no trial results yet"):
        load_run(empty)


def test_a_run_sweeping_its_trials_is_complete_with_each_settings_own(tmp_path, monkeypatch):
    """Before: 18 of 30 results 'Incomplete run' (the base trials, 5, times the settings), check
    exit 1, and --resume had nothing to do."""
    from click.testing import CliRunner

    from rankbench import app
    from rankbench.cli import main

    from .conftest import reid_config

    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "cache"))
    cfg = reid_config(tmp_path, "trials_sweep", trials=5, methods=("L1", "Euclidean"),
                      extra="sweep: {trials: [2, 4]}\n")
    folder = app.run(cfg, out=tmp_path / "run", options=app.EngineOptions(progress=False)).folder.path
    run = load_run(folder)
    assert run.complete and run.n_expected == 12 == len(run.records) and status_lines(run) == []
    assert run_facts(run).startswith("This run: 2, 4 trials (by setting) (run seed 0)")
    assert CliRunner().invoke(main, ["check", str(folder)]).exit_code == 0

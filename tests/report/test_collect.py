"""report/collect.py: REPORT.md across runs, checked against each run graded on its own."""

import shutil
from pathlib import Path

from rankbench import app
from rankbench.report.build import load_run
from rankbench.report.check import Grade
from rankbench.report.collect import paper_of, write_collected


def test_the_collected_report_holds_each_run_its_links_and_the_totals_of_its_grades(runs, tmp_path):
    folders = [shutil.copytree(runs[k], tmp_path / "results" / k) for k in ("a", "one")]
    out = tmp_path / "site" / "REPORT.md"
    out.parent.mkdir()
    got = write_collected(folders, out)
    md = out.read_text()

    checked = [app.check(f) for f in folders]
    rows = [r for c in checked for r in c.rows + c.claims]
    assert got.n_runs == 2 and got.html == out.with_suffix(".html") and got.html.is_file()
    assert got.n_fail == sum(Grade(r["grade"]).fails for r in rows)
    counts = {}
    for r in rows:
        counts[r["grade"]] = counts.get(r["grade"], 0) + 1
    assert {k: v for k, v in got.counts.items() if v} == counts

    assert md.count("\n## papera\n") == 1                       # one section per paper
    for name, folder in (("reid_a", folders[0]), ("reid_one", folders[1])):
        assert f"\n### {name}\n" in md
        assert f"run: `../results/{folder.name}`" in md
        assert f"rerun exactly: `rankbench run {folder}/config.yaml" in md
    for link in (line.split("](", 1)[1].split(")", 1)[0] for line in md.splitlines() if "](../results/" in line):
        assert (out.parent / link).is_file(), link                 # every figure link resolves from REPORT.md


def test_a_runs_paper_is_its_configs_folder(runs, tmp_path):
    run = load_run(runs["a"])
    assert paper_of(run) == "papera"
    run.manifest = run.manifest.model_copy(update={"config_path": str(Path("elsewhere.yaml"))})
    assert paper_of(run) == "other"


def test_collect_does_not_rewrite_a_run_another_rankbench_writes(runs, tmp_path):
    # report refused such a folder; collect rewrote its summary.md beside the running run
    import pytest

    from rankbench.runfolder import RunFolder, RunFolderError

    run = shutil.copytree(runs["a"], tmp_path / "a")
    before = (run / "summary.md").read_text()
    with RunFolder.open(run).lock("rankbench run"), pytest.raises(RunFolderError, match="another rankbench writes"):
        app.collect([run], tmp_path / "REPORT.md")
    assert (run / "summary.md").read_text() == before and not (tmp_path / "REPORT.md").exists()


def test_an_incomplete_run_is_said_and_never_reproduced(runs, tmp_path, caplog):
    # collect and notes said 'Reproduced: 1 of 1 published numbers match' of a run whose third
    # trial file was cut short (graded on 2 of 3 trials, check: Incomplete run, exit 1), at exit 0
    import logging

    run = shutil.copytree(runs["a"], tmp_path / "results" / "a")
    cut = sorted((run / "trials").glob("*.json"))[-1]
    cut.write_bytes(cut.read_bytes()[:200])
    with caplog.at_level(logging.WARNING, logger="rankbench"):
        got = app.collect([run], tmp_path / "REPORT.md")
    md = got.markdown.read_text()
    assert "Reproduced:" not in md and "1 run(s) incomplete or damaged, graded on the results they hold" in md
    assert "1 run(s) incomplete or damaged" in got.html.read_text()
    assert any(line.startswith(f"{run}: Incomplete run:") for line in got.said)
    assert any("Incomplete run" in r.getMessage() for r in caplog.records)
    (tmp_path / "configs" / "papera").mkdir(parents=True)
    note = app.notes("papera", [run], tmp_path / "papera.md", configs=tmp_path / "configs")
    assert "Reproduced:" not in note.markdown and "incomplete or damaged" in note.markdown
    caplog.clear()   # report said it only inside the Markdown it wrote: the terminal stayed silent
    with caplog.at_level(logging.WARNING, logger="rankbench"):
        app.report(run, plots=False)
    assert any("Incomplete run" in r.getMessage() for r in caplog.records)

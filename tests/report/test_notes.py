"""rankbench notes: a paper's result note written from its run folders (rankbench/report/notes.py, app.notes)."""

import shutil

import pytest

from rankbench import app
from rankbench.errors import RankbenchError
from rankbench.report.notes import demoted, split_run


@pytest.fixture
def paper(runs, tmp_path):
    """A copy of the runs' committed configs (paper ``papera``) that a test may edit, and where notes go."""
    configs = tmp_path / "configs"
    shutil.copytree(runs["a"].parent.parent / "configs", configs)
    return configs, tmp_path / "docs" / "papera.md"


def test_the_note_holds_each_runs_facts_tables_grades_and_choices(runs, paper):
    configs, out = paper
    res = app.notes("papera", [runs["sweep"], runs["a"]], out=out, configs=configs)
    md = out.read_text()
    assert res.path == out and res.markdown == md and res.n_runs == 2 and res.n_committed == 2
    assert md.startswith("# papera\n")
    # in the order of the config files, whatever the order given, graded first, then what was measured
    order = ["## Verdict", "## Graded", "### reid_a: graded", "## What differs and why",
             "## What the runs measured", "### reid_a", "### reid_sweep"]
    assert [md.index(f"\n{h}\n") for h in order] == sorted(md.index(f"\n{h}\n") for h in order)
    assert "reid_sweep: graded" not in md  # nothing grades it
    graded = md[md.index("\n### reid_a: graded\n"):md.index("\n## What differs and why\n")]
    assert "#### Published numbers" in graded and "known gap: made-up number" in graded
    assert "#### Claims" in graded and "| L1 better than Euclidean" in graded
    assert "Mean ± standard deviation" not in graded and "Chosen by the rankers" not in graded
    section = md[md.index("\n### reid_a\n"):md.index("\n### reid_sweep\n")]
    assert "Generated re-identification for report tests." in section
    assert "This run: 3 trials (run seed 0); methods: L1, Euclidean, Bhattacharyya." in section
    assert f"run folder `{runs['a'].name}`" in section and "commit" in section
    assert "| L1 |" in section and "#### Results" in section and "Published numbers" not in section
    assert f"graded: with the published numbers and claims of `{(configs / 'papera' / 'reid_a.yaml').as_posix()}`" \
           f" as committed" in section
    verdict = md[md.index("## Verdict"):md.index("## Graded")]
    assert "reproduced" in verdict and "Totals:" in verdict
    # the same folders give the same file
    assert app.notes("papera", [runs["a"], runs["sweep"]], out=out, configs=configs).markdown == md


def test_a_reason_edited_after_the_run_is_the_one_shown(runs, paper):
    configs, out = paper
    cfg = configs / "papera" / "reid_a.yaml"
    cfg.write_text(cfg.read_text().replace('known_gap: "made-up number"', 'known_gap: "a reason written later"'))
    md = app.notes("papera", [runs["a"]], out=out, configs=configs).markdown
    assert "known gap: a reason written later" in md and "made-up number" not in md


def test_a_run_of_a_config_that_now_computes_something_else_keeps_its_own_grades(runs, paper):
    configs, out = paper
    cfg = configs / "papera" / "reid_a.yaml"
    cfg.write_text(cfg.read_text().replace("n_test: 15", "n_test: 12")
                   .replace('known_gap: "made-up number"', 'known_gap: "a reason written later"'))
    res = app.notes("papera", [runs["a"]], out=out, configs=configs)
    assert res.n_committed == 0
    assert "with the run's own config: " in res.markdown and "now computes something else (it differs in protocol)" \
        in res.markdown
    assert "known gap: made-up number" in res.markdown and "written later" not in res.markdown


def test_a_default_written_out_computes_the_same_as_one_left_out(runs, paper):
    configs, out = paper
    cfg = configs / "papera" / "reid_a.yaml"
    text = cfg.read_text()
    cfg.write_text(text.replace("{name: Bhattacharyya, ranker: bhattacharyya}",
                                "{name: Bhattacharyya, ranker: bhattacharyya, form: coefficient}")
                   .replace("protocol: {name: reid, n_test: 15,", "protocol: {name: reid, n_test: 15, gallery: cam,"))
    assert cfg.read_text() != text
    assert app.notes("papera", [runs["a"]], out=out, configs=configs).n_committed == 1
    cfg.write_text(text.replace("{name: Bhattacharyya, ranker: bhattacharyya}",
                                "{name: Bhattacharyya, ranker: bhattacharyya, form: hellinger}"))
    assert app.notes("papera", [runs["a"]], out=out, configs=configs).n_committed == 0  # not the default


def test_a_run_without_a_committed_config_is_graded_with_its_own(runs, paper):
    configs, out = paper
    (configs / "papera" / "reid_c.yaml").unlink()
    md = app.notes("papera", [runs["c"], runs["a"]], out=out, configs=configs).markdown
    assert "no config of papera is named 'reid_c'" in md
    assert md.index("\n### reid_a\n") < md.index("\n### reid_c\n")  # runs without a config come last


def test_a_run_of_another_paper_is_refused(runs, paper, tmp_path):
    configs, out = paper
    (configs / "paperb").mkdir()
    # before: paperb's page was written, graded with papera's run, exit 0
    with pytest.raises(RankbenchError, match=rf"^{runs['a']}: a run of papera \(its config .*reid_a.yaml\), not of "
                                             "paperb: its page is written by: rankbench notes papera$"):
        app.notes("paperb", [runs["a"]], out=out, configs=configs)
    mine = tmp_path / "mine"                  # a configs folder without papera: the run is the user's own
    (mine / "paperb").mkdir(parents=True)
    assert "no config of paperb is named 'reid_a'" in app.notes("paperb", [runs["a"]], out=out, configs=mine).markdown


def test_two_runs_of_one_config_are_refused(runs, paper, tmp_path):
    configs, out = paper
    copy = tmp_path / "again"
    shutil.copytree(runs["a"], copy)
    # before: two '### reid_a' sections, and its claims counted twice in the verdict
    with pytest.raises(RankbenchError, match=f"^notes: {runs['a']} and {copy} are both runs of 'reid_a': give one"):
        app.notes("papera", [runs["a"], copy], out=out, configs=configs)


def test_the_history_is_kept_verbatim_with_its_headings_one_level_down(runs, paper):
    configs, out = paper
    history = "# papera: history\n\nIn 2026-11 the tolerance was *wider*.\n\n## reid_a\n\n| a | b |\n|---|---|\n"
    out.parent.mkdir(parents=True)
    (out.parent / "papera.history.md").write_text(history)
    md = app.notes("papera", [runs["a"]], out=out, configs=configs).markdown
    tail = md[md.index("## papera: history"):]
    assert tail == "## papera: history\n\nIn 2026-11 the tolerance was *wider*.\n\n### reid_a\n\n| a | b |\n|---|---|\n"
    assert f"kept verbatim from `{(out.parent / 'papera.history.md').as_posix()}`" in md
    (out.parent / "papera.history.md").unlink()
    without = app.notes("papera", [runs["a"]], out=out, configs=configs).markdown
    assert "tolerance was" not in without and "kept verbatim" not in without


def test_every_run_folder_of_the_paper_by_default(runs, paper, tmp_path):
    configs, out = paper
    results = tmp_path / "results"
    (results / "papera").mkdir(parents=True)
    for key in ("a", "c"):
        shutil.copytree(runs[key], results / "papera" / key)
    (results / "papera" / "figures").mkdir()  # not a run folder: skipped
    assert app.notes("papera", out=out, configs=configs, results=results).n_runs == 2
    with pytest.raises(RankbenchError, match="no run folders"):
        app.notes("papera", out=out, configs=configs, results=tmp_path / "elsewhere")
    with pytest.raises(RankbenchError, match="no such paper folder; expected one of: papera"):
        app.notes("paperz", [runs["a"]], out=out, configs=configs)


def test_headings_are_demoted():
    assert demoted("# a\n\ntext # not a heading\n## b\n", 2) == "### a\n\ntext # not a heading\n#### b\n"


def test_the_cli_writes_the_note(cli, runs, paper):
    configs, out = paper
    res = cli("notes", "papera", runs["a"], "--configs", configs, "--out", out)
    assert res.exit_code == 0, res.output
    assert f"wrote {out} (1 runs; 1 graded with their committed config)" in res.output
    assert out.read_text().startswith("# papera\n")


def test_a_hand_written_opening_follows_the_verdict_and_survives_regeneration(runs, paper):
    configs, out = paper
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_name("papera.opening.md").write_text("| regime | verdict |\n|---|---|\n| easy | holds |\n")
    md = app.notes("papera", [runs["a"]], out=out, configs=configs).markdown
    assert md.index("## Verdict") < md.index("Totals:") < md.index("| easy | holds |") < md.index("## Graded")
    assert app.notes("papera", [runs["a"]], out=out, configs=configs).markdown == md


def test_what_differs_is_kept_under_its_heading_with_its_anchors(runs, paper):
    configs, out = paper
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_name("papera.differs.md").write_text("## L1 at rank 1\n\nThe number was made up: 99 %.\n")
    cfg = configs / "papera" / "reid_a.yaml"
    cfg.write_text(cfg.read_text().replace('"made-up number"', '"Made up (docs/papers/papera.md#l1-at-rank-1)"'))
    md = app.notes("papera", [runs["a"]], out=out, configs=configs).markdown
    assert "known gap: Made up ([why](#l1-at-rank-1))" in md  # the reason's pointer, a link within the page
    assert md.index("## Graded") < md.index("\n## What differs and why\n\n### L1 at rank 1\n\nThe number was made up: 99 %.\n") \
        < md.index("## What the runs measured")
    assert "`" + out.with_name("papera.differs.md").as_posix() + "`" in md.split("\n")[2]
    out.with_name("papera.differs.md").unlink()
    assert "## What differs and why\n\nNothing documented.\n" in app.notes("papera", [runs["a"]], out=out,
                                                                            configs=configs).markdown


def test_the_page_goes_to_docs_papers_by_default(runs, paper, tmp_path, monkeypatch):
    configs, _ = paper
    monkeypatch.chdir(tmp_path)
    res = app.notes("papera", [runs["a"]], configs=configs)
    assert res.path.as_posix() == "docs/papers/papera.md" and (tmp_path / "docs" / "papers" / "papera.md").is_file()


def test_the_page_splits_a_run_into_what_grades_it_and_what_it_measured():
    part = split_run("r", "Facts.\n\n## Results\n\n### sweep\n\n| a |\n\n## Claims\n\n| c |\n\n"
                          "## Failed jobs\n\n| f |\n\n## Chosen by the rankers\n\n| C |\n")
    assert part.graded == "## Claims\n\n| c |\n\n## Failed jobs\n\n| f |\n"
    assert part.measured == "Facts.\n\n## Results\n\n### sweep\n\n| a |\n\n## Chosen by the rankers\n\n| C |\n"

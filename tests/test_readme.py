"""The README's own examples work as written: the minimal config, and the ranker written in a file
outside the repository, named by its path; its verdict table says what the papers' pages say."""

import re
from pathlib import Path

import pandas as pd
from click.testing import CliRunner

from rankbench.cli import main

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def block(after: str, lang: str) -> str:
    tail = README[README.index(after):]
    return re.search(rf"```{lang}\n(.*?)```", tail, re.S).group(1)


def test_minimal_config_with_a_ranker_from_a_file_outside_the_repo(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "cache"))
    (tmp_path / "my_ranker.py").write_text(block("### Your own ranker", "python"))
    (tmp_path / "minimal.yaml").write_text(block("a minimal one", "yaml"))
    res = CliRunner().invoke(main, ["run", "minimal.yaml", "--out", "run", "-q", "--trials", "2"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    summary = pd.read_csv(tmp_path / "run" / "summary.csv", keep_default_na=False)
    assert {"L1-norm", "Mine"} <= set(summary.method)
    assert set(summary.setting) == {"protocol.n_test=30", "protocol.n_test=60", "protocol.n_test=90"}
    md = (tmp_path / "run" / "summary.md").read_text()
    assert "## Claims" in md and "PUBLISHED" in md
    # the published number names the setting it is graded at: graded, not MISSING
    assert "| protocol.n_test=60 | L1-norm | cmc@1 |" in md and "MISSING" not in md


def test_evaluate_an_object_in_memory_as_the_readme_shows(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "cache"))
    (tmp_path / "configs").symlink_to(Path(__file__).resolve().parents[1] / "configs")
    namespace: dict = {}
    exec(block("### Your own ranker", "python"), namespace)            # MyRanker
    exec(block("Evaluate an object you hold", "python").replace("trials=3)", "trials=3, progress=False)")
         .replace('out="results/mine")', 'out="results/mine", progress=False)'), namespace)
    summary = namespace["summary"]
    assert set(summary.method) == {"MyRanker"} and "cmc@1" in set(summary.metric)
    assert (tmp_path / "results" / "mine" / "summary.md").is_file()


def test_the_verdict_table_counts_what_each_papers_page_counts():
    """The README said '3 of 60 claims hold' for Merler et al. after the page, regenerated, said
    '2 of 70'."""
    rows = re.findall(r"^\| \[[^]]+\]\((docs/papers/\w+\.md)\) \|.*\| ([^|]*) \|$", README, re.M)
    assert len(rows) == 5, rows
    root = Path(__file__).resolve().parents[1]
    for page, verdict in rows:
        said = re.match(r"(\d+ of \d+ (?:numbers match|claims hold))", verdict).group(1)
        headline = re.search(r"^\*\*[^*]*?: (\d+ of \d+) published (numbers match)|^\*\*[^*]*?: (\d+ of \d+) "
                             r"(claims hold)", (root / page).read_text(), re.M)
        counted = " ".join(g for g in headline.groups() if g)
        assert said == counted, (page, said, counted)

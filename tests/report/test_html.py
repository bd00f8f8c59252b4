"""REPORT.html: self-contained, graded with reasons, reproducible, and rendered by a real browser."""

import re
import shutil
from pathlib import Path

import pytest

from rankbench import app

from .browser import Browser, find_chromium

REPO = Path(__file__).resolve().parents[2]
ARTEFACTS = REPO / "results" / "test-artefacts"


@pytest.fixture(scope="module")
def report(runs, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "REPORT.md"
    res = app.collect([runs["a"], runs["sweep"], runs["one"], runs["a"]], out)   # a given twice: once in the report
    return res


def test_collect_writes_markdown_and_html_beside_it(report):
    assert report.markdown.name == "REPORT.md" and report.html == report.markdown.with_suffix(".html")
    assert report.n_runs == 3 and report.counts["GAP"] == 2 and report.counts["OK"] >= 2
    md = report.markdown.read_text()
    # two known gaps among four numbers and a one-trial claim: partly, never "reproduced"
    assert "## papera" in md and ("**Verdict:** Partly reproduced: 2 of 4 published numbers match (2 GAP); "
                                  "1 of 2 claims hold (1 TREND).") in md
    assert "Totals: 6 published numbers: 2 OK, 2 GAP, 2 PUBLISHED; 2 claims: 1 OK, 1 TREND." in md
    assert "rerun exactly: `rankbench run " in md and "REPORT.html" in md
    assert "TREND = a claim of the right sign that is not significant" in md       # the legend


def test_page_is_self_contained(report):
    page = report.html.read_text()
    assert "<script src" not in page and "<link" not in page and "@import" not in page
    srcs = re.findall(r'\ssrc="([^"]*)"', page)
    assert srcs and all(s.startswith("data:image/svg+xml;base64,") for s in srcs)
    hrefs = re.findall(r'\shref="([^"]*)"', page)
    assert hrefs and not [h for h in hrefs if re.match(r"[a-z]+://", h)]   # anchors and files beside it only


def test_page_has_verdicts_grades_with_reasons_and_provenance(report, runs):
    page = report.html.read_text()
    assert "Partly reproduced: 2 of 4 published numbers match" in page
    assert 'class="grade g-GAP">GAP<' in page and "known gap: made-up number" in page
    assert 'class="grade g-TREND">TREND<' in page and "1 trial: no test possible" in page
    assert "This run: 1 trial (run seed 0)" in page and "This run: 3 trials (run seed 0)" in page
    assert "Totals: 6 published numbers: 2 OK, 2 GAP, 2 PUBLISHED; 2 claims: 1 OK, 1 TREND." in page
    assert 'class="grade g-OK">OK<' in page and "within the tolerance" in page
    assert 'class="grade g-PUBLISHED">PUBLISHED<' in page
    assert "L1 better than Euclidean on nauc" in page                      # the claim
    from rankbench.runfolder import RunFolder

    manifest = RunFolder.open(runs["a"]).read_manifest()
    if manifest.git_commit:
        assert manifest.git_commit[:12] in page
    assert "rankbench run " in page and "configs/papera/reid_a.yaml" in page     # the command and the config
    assert "n_test = 10" in page                                                 # typed sweep values, not labels
    n_svg = sum(len(list((runs[k] / "plots").glob("*.svg"))) for k in ("a", "sweep", "one"))
    assert page.count("<figure") == n_svg and n_svg >= 6


def test_a_report_collected_twice_from_the_same_folders_is_the_same_page(runs, tmp_path):
    out = tmp_path / "R.md"
    app.collect([runs["a"], runs["one"]], out)
    first = (out.read_bytes(), out.with_suffix(".html").read_bytes())
    app.collect([runs["a"], runs["one"]], out)
    assert (out.read_bytes(), out.with_suffix(".html").read_bytes()) == first


def test_links_and_the_rerun_command_name_the_run_folder_never_latest(runs, tmp_path):
    link = runs["a"].parent / "latest"
    link.unlink(missing_ok=True)
    link.symlink_to(runs["a"].name, target_is_directory=True)
    out = tmp_path / "R.md"
    try:
        app.collect([link], out)
    finally:
        link.unlink()
    md, page = out.read_text(), out.with_suffix(".html").read_text()
    assert "latest" not in md and "latest" not in page
    assert f"rankbench run {runs['a'] / 'config.yaml'}" in md


def test_verdicts_follow_the_grades():
    from rankbench.report.html import verdict

    def rows(*grades):
        return [{"grade": g} for g in grades]

    assert verdict(rows("OK", "OKISH"), rows("OK"))[0] == "reproduced"
    cls, sentence = verdict([], rows("OK", "GAP", "GAP", "TREND"))
    assert cls == "partly" and sentence == "Partly reproduced: 1 of 4 claims hold (1 TREND, 2 GAP)."
    assert verdict(rows("OK", "INCONCLUSIVE"), [])[0] == "partly"
    assert verdict(rows("GAP"), rows("TREND", "VOID")) == (
        "unshown", "Not shown: 0 of 1 published numbers match (1 GAP); 0 of 2 claims hold (1 TREND, 1 VOID).")
    assert verdict(rows("OK"), rows("OK", "FAIL"))[0] == "failed"
    assert verdict(rows("OK", "MISSING"), [])[0] == "failed"
    assert verdict(rows("PUBLISHED"), []) == ("none", "No published numbers or claims to grade.")
    # a run graded on part of its results (killed, a damaged file) reproduces nothing yet
    assert verdict(rows("OK"), rows("OK"), unsettled=1) == (
        "partly", "Not settled: 1 of 1 published numbers match; 1 of 1 claims hold; 1 run(s) incomplete or damaged, "
        "graded on the results they hold.")
    assert verdict(rows("FAIL"), [], unsettled=2)[0] == "failed"


def test_many_per_task_grades_form_a_method_by_task_matrix():
    from types import SimpleNamespace

    from rankbench.report.html import grades_html

    run = SimpleNamespace(name="osr", setting_values=lambda: {})
    tasks = ["natural", "open", "perspective", "size", "diagonal", "depth"]
    rows = [(run, {"method": m, "metric": f"pair_acc/{t}", "setting": "", "ours": 0.80 + 0.01 * i,
                   "published": 0.80, "tolerance": 0.02, "grade": "OK" if i < 3 else "GAP", "std": None,
                   "n_trials": 1, "reason": f"reason {m} {t}", "source": "Table 2", "note": ""})
            for m in ("RankSVM", "RankMKL") for i, t in enumerate(tasks)]
    rows.append((run, {"method": "RankMKL", "metric": "pair_acc", "setting": "", "ours": 0.9, "published": 0.9,
                       "tolerance": 0.02, "grade": "OK", "std": None, "n_trials": 1, "reason": "mean",
                       "source": "", "note": ""}))
    html = grades_html(rows)
    head = re.search(r"<h4>pair_acc per task, osr</h4>.*?<thead><tr>(.*?)</tr>", html).group(1)
    assert re.findall(r"<th scope=col>([^<]*)</th>", head) == ["method"] + tasks
    assert html.count('<td class="cellgrade"') == 12 and "<small>80.00</small>" in html
    assert html.count("<li>") == 6 and "reason RankMKL depth" in html       # the six non-OK cells, with reasons
    assert html.count("<table") == 2                                          # the plain mean in its own table


BROWSER_CHECK = """JSON.stringify({
  images: document.images.length,
  broken: Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).map(i => i.alt),
  tables: document.querySelectorAll("table").length,
  sortable: document.querySelectorAll("table.sortable").length,
  overflow: document.documentElement.scrollWidth - window.innerWidth,
  title: document.title
})"""

FIT_CHECK = """JSON.stringify(Array.from(document.querySelectorAll("table.fit")).map(
  t => t.scrollWidth - t.parentElement.clientWidth))"""

SORT_CHECK = """(() => {
  const grades = Array.from(document.querySelectorAll("table.sortable")).find(
      t => Array.from(t.tHead.rows[0].cells).some(c => c.textContent === "published"));
  const col = Array.from(grades.tHead.rows[0].cells).findIndex(c => c.textContent === "published");
  const read = () => Array.from(grades.tBodies[0].rows).map(r => parseFloat(r.cells[col].dataset.v));
  grades.tHead.rows[0].cells[col].click();
  const up = read();
  grades.tHead.rows[0].cells[col].click();
  const down = read();
  return JSON.stringify({up, down, aria: grades.tHead.rows[0].cells[col].getAttribute("aria-sort")});
})()"""


@pytest.fixture(scope="module")
def browser():
    if not find_chromium():
        pytest.skip("chromium is not installed (Debian: apt-get install chromium; .ci/run installs it)")
    with Browser() as b:
        yield b


def test_page_renders_in_a_real_browser(report, browser, capsys):
    import json

    page = browser.open(report.html.as_uri(), width=1366, height=768)   # a laptop screen
    got = json.loads(page.evaluate(BROWSER_CHECK))
    assert got["title"] == "rankbench reproduction report"
    assert got["images"] == report.html.read_text().count("<figure") and not got["broken"]
    assert got["tables"] >= 8 and got["sortable"] == got["tables"]
    assert got["overflow"] <= 0, "the page scrolls sideways on a laptop screen"
    fit = json.loads(page.evaluate(FIT_CHECK))
    assert fit and all(w <= 0 for w in fit), f"a graded table scrolls sideways on a laptop screen: {fit}"
    sort = json.loads(page.evaluate(SORT_CHECK))
    assert sort["up"] == sorted(sort["up"]) and sort["down"] == sorted(sort["down"], reverse=True)
    assert sort["aria"] == "descending" and len(sort["up"]) >= 3
    assert page.console_errors == []
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    shot = page.screenshot(ARTEFACTS / "REPORT.png")
    full = page.screenshot(ARTEFACTS / "REPORT-full.png", full_page=True)
    shutil.copy(report.html, ARTEFACTS / "REPORT.html")
    assert shot.stat().st_size > 10_000 and full.stat().st_size > shot.stat().st_size
    with capsys.disabled():
        print(f"\nREPORT.html screenshots: {shot} and {full}")


def test_the_browser_check_catches_a_broken_figure_and_a_console_error(report, browser, tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text(report.html.read_text().replace(
        "</main>", '<img alt="broken" src="data:image/png;base64,AAAA"><script>console.error("boom")</script></main>'))
    import json

    page = browser.open(bad.as_uri())
    got = json.loads(page.evaluate(BROWSER_CHECK))
    assert got["broken"] == ["broken"]
    assert any("boom" in e for e in page.console_errors)

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
    assert "## papera" in md and "**Verdict:** Reproduced except documented gaps" in md
    assert "rerun exactly: `rankbench run " in md and "REPORT.html" in md


def test_page_is_self_contained(report):
    page = report.html.read_text()
    assert "<script src" not in page and "<link" not in page and "@import" not in page
    srcs = re.findall(r'\ssrc="([^"]*)"', page)
    assert srcs and all(s.startswith("data:image/svg+xml;base64,") for s in srcs)
    hrefs = re.findall(r'\shref="([^"]*)"', page)
    assert hrefs and not [h for h in hrefs if re.match(r"[a-z]+://", h)]   # anchors and files beside it only


def test_page_has_verdicts_grades_with_reasons_and_provenance(report, runs):
    page = report.html.read_text()
    assert "Reproduced except documented gaps" in page
    assert 'class="grade g-GAP">GAP<' in page and "known gap: made-up number" in page
    assert 'class="grade g-OK">OK<' in page and "within the tolerance" in page
    assert 'class="grade g-PUBLISHED">PUBLISHED<' in page
    assert "L1 better than Euclidean on nauc" in page                      # the claim
    from rankbench.runfolder import RunFolder

    manifest = RunFolder.open(runs["a"]).read_manifest()
    if manifest.get("git_commit"):
        assert manifest["git_commit"][:12] in page
    assert "rankbench run " in page and "configs/papera/reid_a.yaml" in page     # the command and the config
    assert "n_test = 10" in page                                                 # typed sweep values, not labels
    n_svg = sum(len(list((runs[k] / "plots").glob("*.svg"))) for k in ("a", "sweep", "one"))
    assert page.count("<figure") == n_svg and n_svg >= 6


BROWSER_CHECK = """JSON.stringify({
  images: document.images.length,
  broken: Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).map(i => i.alt),
  tables: document.querySelectorAll("table").length,
  sortable: document.querySelectorAll("table.sortable").length,
  overflow: document.documentElement.scrollWidth - window.innerWidth,
  title: document.title
})"""

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

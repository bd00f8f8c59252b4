"""The documentation's pages run as written: each page's fenced code blocks, in order, in a fresh
folder holding the repository's configs (as the root of a clone does).

The convention, stated for writers in docs/tutorials/index.md:

* ```` ```bash ```` blocks run with bash (``set -euo pipefail``), the tested rankbench first on
  PATH; ```` ```python ```` blocks run in one namespace per page;
* a block with ``title="NAME"`` (any language) is a file: it is written to NAME before the next
  block runs;
* any other block (```` ```console ```` for commands shown with their output, ```` ```yaml ````,
  ```` ```text ````) is shown, not run;
* a block right after the line ``<!-- needs: datasets -->`` reads the real datasets: it runs with
  ``RANKBENCH_DATA`` pointing at them, and is skipped when they are absent.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("RANKBENCH_SHARED_DATA", REPO.parent / "shared" / "datasets"))
DOCS = REPO / "docs"
PAGES = ["getting-started.md", *sorted(str(p.relative_to(DOCS)) for p in (DOCS / "tutorials").glob("*.md")
                                      if p.name != "index.md")]
FENCE = re.compile(r"^(?P<needs><!-- needs: datasets -->\n)?```(?P<lang>\w*)(?P<attrs>[^\n]*)\n(?P<code>.*?)^```[ \t]*$",
                   re.M | re.S)


def blocks(text: str) -> list[dict]:
    """The fenced blocks of a page: language, the file it is (title=...), whether it needs the data."""
    out = []
    for m in FENCE.finditer(text):
        title = re.search(r'title="([^"]+)"', m["attrs"])
        out.append({"lang": m["lang"], "file": title[1] if title else None, "needs_data": bool(m["needs"]),
                    "code": m["code"], "line": text[:m.start()].count("\n") + 1})
    return out


def test_the_convention_is_read_as_documented():
    page = ('x\n```bash\necho a\n```\n```yaml title="c.yaml"\nk: 1\n```\n```console\n$ ls\n```\n'
            '<!-- needs: datasets -->\n```bash\nrankbench run x\n```\n')
    got = [(b["lang"], b["file"], b["needs_data"], b["code"]) for b in blocks(page)]
    assert got == [("bash", None, False, "echo a\n"), ("yaml", "c.yaml", False, "k: 1\n"),
                   ("console", None, False, "$ ls\n"), ("bash", None, True, "rankbench run x\n")]


@pytest.mark.parametrize("page", PAGES)
def test_page_runs_as_written(page, tmp_path, monkeypatch):
    found = blocks((DOCS / page).read_text())
    assert any(b["lang"] in ("bash", "python") for b in found), f"{page}: nothing to run"
    (tmp_path / "configs").symlink_to(REPO / "configs")
    env = dict(os.environ, RANKBENCH_CACHE=str(tmp_path / ".cache"), PYTHONPATH=str(REPO),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("RANKBENCH_DATA", None)
    monkeypatch.chdir(tmp_path)
    for key in ("RANKBENCH_CACHE", "PYTHONPATH"):
        monkeypatch.setenv(key, env[key])
    namespace: dict = {"__name__": "__tutorial__"}
    skipped = []
    for b in found:
        where = f"{page}:{b['line']}"
        if b["file"]:
            path = tmp_path / b["file"]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(b["code"])
            continue
        if b["lang"] not in ("bash", "python"):
            continue
        if b["needs_data"]:
            if not SHARED.is_dir():
                skipped.append(where)
                continue
            env["RANKBENCH_DATA"] = str(SHARED)
        if b["lang"] == "bash":
            res = subprocess.run(["bash", "-euo", "pipefail", "-c", b["code"]], cwd=tmp_path, env=env,
                                 capture_output=True, text=True, timeout=900)
            assert res.returncode == 0, f"{where} exited {res.returncode}:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
        else:
            exec(compile(b["code"], where, "exec"), namespace)
        env.pop("RANKBENCH_DATA", None)
    if skipped:
        pytest.skip(f"real datasets not found at {SHARED}: skipped the blocks at {', '.join(skipped)}")

"""A run's report is taken from the one cache (kind ``reports``) only while it is current: the same
run files, options and code, and the folder still holding every file the report wrote; anything
else builds it again. ``rankbench collect`` of finished runs then reads their reports."""

from __future__ import annotations

import json
import shutil

import pytest

from rankbench.report.build import WRITTEN, build_report


@pytest.fixture
def run(runs, tmp_path, monkeypatch):
    """A private copy of the 3-trial run, reuse on (the suite turns it off), a cache of its own."""
    monkeypatch.setenv("RANKBENCH_REUSE", "1")
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "cache"))
    return shutil.copytree(runs["a"], tmp_path / "a")


def _stamps(folder):
    return {name: (folder / name).stat().st_mtime_ns for name in WRITTEN}


def _built(folder, **kw):
    b = build_report(folder, **kw)
    return b["markdown"], b["latex"], b["summary"].to_csv(), json.dumps(b["grades"], default=str), \
        json.dumps(b["claims"], default=str), [(p.path, p.caption) for p in b["plots"]]


def test_a_current_report_is_read_not_written_again(run):
    first = _built(run, plots=False)
    stamps = _stamps(run)
    again = _built(run, plots=False)
    assert again == first
    assert _stamps(run) == stamps   # no file written


def test_its_figures_are_kept_and_listed(run):
    first = _built(run, plots=True)
    assert first[-1]
    stamps = {p: p.stat().st_mtime_ns for p, _ in first[-1]}
    assert _built(run, plots=True) == first
    assert {p: p.stat().st_mtime_ns for p, _ in first[-1]} == stamps


def test_a_changed_trial_file_builds_it_again(run):
    first = _built(run, plots=False)
    record = sorted((run / "trials").glob("L1-*.json"))[0]
    data = json.loads(record.read_text())
    data["metrics"]["cmc@1"] = 0.123
    record.write_text(json.dumps(data))
    again = _built(run, plots=False)
    assert again[2] != first[2]           # the summary moved with the record
    assert "0.123" in (run / "trials.csv").read_text()


@pytest.mark.parametrize("how", ["edited", "deleted"])
def test_a_derived_file_changed_since_is_written_again(run, how):
    first = _built(run, plots=False)
    path = run / "summary.md"
    original = path.read_text()
    if how == "edited":
        path.write_text(original + "\nmy own note\n")
    else:
        path.unlink()
    assert _built(run, plots=False) == first
    assert path.read_text() == original


def test_another_option_or_reuse_off_builds_it_again(run, monkeypatch):
    _built(run, plots=False)
    stamps = _stamps(run)
    _built(run, plots=False, max_rank=5)         # another option: another entry
    assert _stamps(run) != stamps
    stamps = _stamps(run)
    monkeypatch.setenv("RANKBENCH_REUSE", "0")
    _built(run, plots=False, max_rank=5)
    assert _stamps(run) != stamps


def test_a_copied_folder_is_built_in_its_own_place(run, tmp_path):
    _built(run, plots=False)
    copy = shutil.copytree(run, tmp_path / "copy")
    (copy / "summary.md").unlink()
    md = build_report(copy, plots=False)["markdown"]
    assert (copy / "summary.md").read_text() == md

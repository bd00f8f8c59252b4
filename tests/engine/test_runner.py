"""A run through the application: a new run holds its state in memory and reads back nothing it
wrote, and ``evaluate`` without a folder writes nothing. (Resuming a run: test_manifest.py; runs
killed and resumed or replaced: test_execute.py.)"""

from __future__ import annotations

import pytest
from toydata import synthetic_reid_config

from rankbench.runfolder import RunFolder

GOOD = synthetic_reid_config(n_people=16, n_test=6, ranks=[1, 5], trials=2) + \
    "rankers:\n  - {name: L1, ranker: l1}\n  - {name: P, ranker: prsvm, C: 1.0}\n"


def test_a_run_reads_back_nothing_it_wrote(tmp_path, monkeypatch):
    """A new run holds its state in memory and hands it to its report: no file of its folder is
    read (the folder is read only to resume or to report again), and the report it builds is the
    one ``rankbench report`` builds from the folder."""
    from rankbench import app

    path = tmp_path / "c.yaml"
    path.write_text(GOOD)

    def never(self, *args, **kwargs):
        raise AssertionError("a run read its own folder back")

    with monkeypatch.context() as m:
        for name in ("read_config", "read_splits", "read_manifest", "read_trials", "read_state"):
            m.setattr(RunFolder, name, never)
        result = app.run(path, out=tmp_path / "run", options=app.EngineOptions(progress=False), plots=False)
    written = (tmp_path / "run" / "summary.md").read_text()
    again = app.report(tmp_path / "run", plots=False)
    assert result.outcome.n_done == 4 and written == again.markdown
    assert result.outcome.state.manifest == RunFolder(tmp_path / "run").read_manifest()


def test_evaluate_without_a_folder_writes_nothing(tmp_path, monkeypatch):
    """``app.evaluate`` runs as ``run`` does; without ``out`` it writes no file at all (no
    temporary run folder), and its frames equal those of the same run kept in a folder."""
    import tempfile

    from rankbench import app
    from rankbench.rankers.baselines.template import L1Norm

    path = tmp_path / "c.yaml"
    path.write_text(GOOD)
    kept = app.evaluate(L1Norm(), path, out=tmp_path / "kept", progress=False)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    with monkeypatch.context() as m:
        m.setattr(tempfile, "tempdir", str(scratch))
        m.setattr(RunFolder, "_write", lambda *a, **k: pytest.fail("evaluate wrote a run file"))
        trials, summary = app.evaluate(L1Norm(), path, progress=False)
    assert not any(scratch.iterdir())
    q = ~trials.metric.isin(["train_s", "test_s", "peak_mb"])
    assert trials[q].equals(kept[0][q]) and list(summary.columns) == list(kept[1].columns)

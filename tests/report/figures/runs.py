"""In-memory runs for the paper figures' helpers: real records and settings, no folder on disk."""

from __future__ import annotations

from pathlib import Path

from rankbench.records import SettingSplits, TrialRecord, TrialSplit
from rankbench.report.build import RunData
from rankbench.runfolder import RunFolder


def record(method: str, trial: int = 0, setting: str = "", metrics=None, curves=None, extra=None) -> TrialRecord:
    return TrialRecord(setting=setting, trial=trial, method=method, seed=trial, metrics=metrics or {"map": 0.5},
                       curves=curves or {}, extra=extra or {}, wall_s=1.0)


def run(records, config=None, settings: dict[str, dict] | None = None, methods=None) -> RunData:
    """A run of ``records``; ``settings`` {label: swept values}, each with one recorded trial."""
    splits = [SettingSplits(label=label, values=values, trials=[TrialSplit(trial=0, seed=0)])
              for label, values in (settings or {}).items()]
    return RunData(folder=RunFolder(Path("nowhere")), config=config or {"name": "r"}, records=list(records),
                   problems=[], methods=methods or sorted({r.method for r in records}), settings=splits)

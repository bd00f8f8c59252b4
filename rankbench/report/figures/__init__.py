"""A paper's own figures, drawn from its run folders (``rankbench figures [PAPER] RUN_DIR...``).

The report's generic plots (:mod:`rankbench.report.plots`) draw what any run stores; these draw the
figures a paper prints, one module per paper (:data:`PAPERS`; each docstring lists its figures),
each with ``draw(runs, out, refit, **options)`` returning the files it wrote.

A module recognises a run by its config's name (``synthetic_fig9_regularizers``, ``<name>_lambda``,
``spirals``, ``towncentre6_types``...). Figures of a fitted model (yan's Figure 3, yuli's) get it
from ``refit(run, setting, trial, method)``, which the caller provides (the application refits the
method on the trial's recorded split, as the run did: see :mod:`rankbench.engine.refit`); it returns
an object with ``model``, ``X`` (the method's features of every item) and ``dataset``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ...errors import RankbenchError
from ...runfolder import SPLITS
from ..build import RunData
from ..collect import paper_of
from . import merler, yan, yuli

#: paper -> its figure module
PAPERS = {"merler": merler, "yan": yan, "yuli": yuli}
#: the paper of a run whose config lies outside configs/<paper>/, by its protocol
BY_PROTOCOL = {"stacked_retrieval": "merler", "video_classification": "yan", "classification": "yan",
               "ordinal": "yuli"}

Refit = Callable[[RunData, str, int, str], Any]


def figure_paper(run: RunData) -> str | None:
    """The paper whose figures a run feeds: its config's folder (``configs/<paper>/``), else by its
    protocol; None when no paper here draws figures of it."""
    paper = paper_of(run)
    return paper if paper in PAPERS else BY_PROTOCOL.get(run.protocol_name or "")


def require_complete(run: RunData) -> None:
    """A paper's figures read a run's recorded splits and every one of its results: a run folder
    that lacks one is one line naming the folder and the first file missing (or unusable, or a
    failed job's), instead of a figure module's traceback or a figure of fewer trials."""
    where = run.folder.path
    resume = f"complete it with: rankbench run --resume {where}"
    if not run.settings:
        raise RankbenchError(f"{where}: {SPLITS} is missing or empty: the figures need the run's recorded splits; "
                             "start the run again")
    done, failed = {r.key for r in run.records}, {r.key for r in run.failed}
    unusable = {p.path for p in run.problems}
    missing = [(st.label, t.trial, m) for st in run.settings for t in st.trials for m in run.methods
               if (st.label, t.trial, m) not in done]
    if missing:
        key = missing[0]
        path = run.folder.trial_path(*key)
        why = "a failed job's" if key in failed else "unusable" if path in unusable else "missing"
        raise RankbenchError(f"{where}: {path.relative_to(where)} is {why} ({key[2]} trial {key[1]}"
                             + (f", setting {key[0]}" if key[0] else "") + f"; {len(missing)} result(s) in all): "
                             f"the figures need every result; {resume}")


def draw(paper: str, runs: list[RunData], out: Path, refit: Refit | None = None, **options) -> list[Path]:
    """Every figure of ``paper`` that ``runs`` allow, written into ``out`` (PNG, SVG and PDF, and
    for yan the numbers behind Figure 6 as Markdown); the paths written. ``out`` is made with the
    first figure (none drawn, none made)."""
    return PAPERS[paper].draw(runs, out, refit, **options)

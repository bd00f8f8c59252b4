"""Drawing a run's figures into ``<run>/plots``: each in the style, checked for layout problems and
written (PNG, SVG, PDF); a large report in several processes. An index of what was drawn
(``plots/.index.json``), under a digest of everything a figure is drawn from (:func:`_plots_key`),
lets a report asked for again from the same inputs reuse the figures on disk.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ...utils.diskcache import digest, module_fingerprint
from ...utils.fileio import atomic_write_text, refuse_link
from .choice import Figure, run_figures
from .layout import layout_problems
from .style import FORMATS, STYLE_FILE, in_style, save, style_file, user_style

log = logging.getLogger("rankbench.report")

#: in ``plots/``: what the last report drew and from what (:func:`make_plots`)
PLOTS_INDEX = ".index.json"
#: the fewest figures drawn in several processes (``make_plots(n_jobs=...)``): below it, starting
#: the processes and sending them the figures' data costs more than it saves
PARALLEL_FIGURES = 24


@dataclass
class PlotFile:
    """One written figure file and the sentence that says what it shows."""

    path: Path
    caption: str

    @property
    def name(self) -> str:
        return self.path.name


def make_plots(run, summary: pd.DataFrame, max_rank: int | None = None, style: str | Path | None = None,
               n_jobs: int = 1) -> list[PlotFile]:
    """Every figure a run supports (:func:`~.choice.run_figures`), into ``<run>/plots`` (PNG, SVG
    and PDF each; figures of an earlier report there are removed first, so the folder holds
    exactly this report's figures).

    ``max_rank`` adds CMC figures ending at that rank under names of their own
    (``cmc_rank20.png``) beside the standard ones, which it leaves as they are; such figures of
    earlier reports are kept (each was asked for by name). ``style``: a matplotlib style file
    applied on top of the house style. A figure with :func:`~.layout.layout_problems` is written
    and named in a warning.

    Figures on disk drawn from the same inputs (the index) are returned, their warnings logged again.

    ``n_jobs`` > 1 draws a report of at least :data:`PARALLEL_FIGURES` figures in that many
    processes (each drawing every n-th figure): the same files, as each figure is drawn alone.
    """
    out = run.folder.plots_dir
    refuse_link(out)   # its old figures are deleted below: never those of a folder it names
    key = _plots_key(run, summary, max_rank, style)
    reused = _reusable_plots(out, key)
    if reused is not None:
        files, warnings = reused
        for w in warnings:
            log.warning("%s", w)
        return files
    for old in (p for ext in FORMATS for p in out.glob(f"*.{ext}")):
        if not re.search(r"_rank\d+$", old.stem):
            old.unlink(missing_ok=True)
    figures = run_figures(run, summary, max_rank)
    n = max(1, int(n_jobs)) if len(figures) >= PARALLEL_FIGURES else 1
    style = None if style is None else str(style)
    if n == 1:
        drawn = _draw(figures, out, run.folder.path, style)
    else:
        from joblib import Parallel, delayed

        parts = Parallel(n_jobs=n, backend="loky")(
            delayed(_draw)(figures[k::n], out, run.folder.path, style) for k in range(n))
        drawn = [parts[i % n][i // n] for i in range(sum(map(len, parts)))]   # back in the figures' order
    files = [f for fs, _ in drawn for f in fs]
    warnings = [w for _, ws in drawn for w in ws]
    for w in warnings:
        log.warning("%s", w)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / PLOTS_INDEX, json.dumps(
        {"key": key, "files": [{"name": f.name, "caption": f.caption} for f in files], "warnings": warnings},
        indent=1) + "\n", root=run.folder.path)
    return files


def _draw(figures: list[Figure], out: Path, root: Path, style: str | None) -> list[tuple[list[PlotFile], list[str]]]:
    """Draw and write ``figures`` into ``out`` (no link below ``root`` followed): per figure, its
    files and its layout warnings (an empty entry for a figure with nothing to draw)."""
    drawn = []
    with user_style(style):
        for f in figures:
            fig = f.draw()
            if fig is None:
                drawn.append(([], []))
                continue
            with in_style():
                warnings = [f"plots/{f.stem}: {problem}" for problem in layout_problems(fig)]
            drawn.append(([PlotFile(p, f.caption) for p in save(fig, out, f.stem, laid_out=True, root=root)],
                          warnings))
    return drawn


def _plots_key(run, summary: pd.DataFrame, max_rank: int | None, style: str | Path | None) -> str:
    """A digest of everything ``make_plots`` draws from."""
    import matplotlib

    styles = [STYLE_FILE] + ([style_file(style)] if style else [])
    code = [module_fingerprint(__name__), module_fingerprint("rankbench.metrics")]
    return digest(run.config, [r.to_json() for r in run.records + run.failed], summary.to_csv(index=False),
                  max_rank, [p.read_text(encoding="utf-8") for p in styles], matplotlib.__version__, code)


def _reusable_plots(out: Path, key: str) -> tuple[list[PlotFile], list[str]] | None:
    """(figures, layout warnings) of ``out`` when its index ``plots/.index.json`` was written under
    ``key`` and each figure is still there."""
    try:
        index = json.loads((out / PLOTS_INDEX).read_text(encoding="utf-8"))
        files = [PlotFile(out / f["name"], f["caption"]) for f in index["files"]]
        warnings = list(index["warnings"])
        if index["key"] != key:
            return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return (files, warnings) if all(f.path.is_file() and not f.path.is_symlink() for f in files) else None

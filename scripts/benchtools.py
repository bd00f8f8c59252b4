"""What the benchmarks share: one timer, old-versus-new runs side by side, the quick mode.

Timings on a shared machine are noisy, so every figure is a median over repeats (wall clock and
process CPU), and a speed-up is the ratio of two medians measured in the same run, the two
candidates alternating. ``--quick`` (what CI runs) shrinks every benchmark to check that it still
runs to the end; its timings mean nothing and its targets are not checked.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

REPO = Path(__file__).resolve().parents[1]


@dataclass
class Timing:
    """Medians of repeated calls (seconds), and the result of the last one."""

    result: Any
    wall: float
    cpu: float
    walls: list[float] = field(default_factory=list)

    def __str__(self) -> str:
        return f"{self.wall:.3f} s wall / {self.cpu:.3f} s CPU"

    def __iter__(self):  # result, wall, cpu = timed(...)
        return iter((self.result, self.wall, self.cpu))


def timed(fn: Callable, *args, repeats: int = 1, **kwargs) -> Timing:
    """Call ``fn(*args, **kwargs)`` ``repeats`` times; the medians of wall and CPU time."""
    walls, cpus, out = [], [], None
    for _ in range(max(1, repeats)):
        t, c = time.perf_counter(), time.process_time()
        out = fn(*args, **kwargs)
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    return Timing(out, float(np.median(walls)), float(np.median(cpus)), walls)


def side_by_side(new: Callable, old: Callable, repeats: int = 1, warmup: bool = False) -> tuple[Timing, Timing]:
    """Time ``new()`` and ``old()`` alternately, ``repeats`` times each (after one untimed call of
    each with ``warmup``, e.g. to compile), so both see the same load."""
    if warmup:
        new(), old()
    runs = {"new": [], "old": []}
    for _ in range(max(1, repeats)):
        for name, fn in (("new", new), ("old", old)):
            runs[name].append(timed(fn))
    pick = lambda ts: Timing(ts[-1].result, float(np.median([t.wall for t in ts])),
                             float(np.median([t.cpu for t in ts])), [t.wall for t in ts])
    return pick(runs["new"]), pick(runs["old"])


def numpy_version(fn: Callable) -> Callable:
    """``fn`` with rankbench's compiled loops switched off: the numpy code they replace, the old
    version a benchmark times the compiled one against."""
    from rankbench.utils import jit

    def run():
        with jit.use_compiled(False):
            return fn()
    return run


def ratio(old: Timing, new: Timing) -> str:
    """``old / new`` of the median CPU and wall times, as printed beside each comparison."""
    return f"{old.cpu / max(new.cpu, 1e-12):.1f}x CPU, {old.wall / max(new.wall, 1e-12):.1f}x wall"


def traced_peak_mb(fn: Callable) -> tuple[Any, float]:
    """(result, peak MB of Python-traced allocations, numpy's included) of ``fn()``. Tracing slows
    Python loops: time separately."""
    tracemalloc.start()
    try:
        out = fn()
        return out, tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def _spin(stop):
    while not stop.is_set():
        sum(range(10000))


@contextlib.contextmanager
def busy_cores(n: int):
    """Inside the block, ``n`` processes keep a core busy each (a machine loaded by other jobs, as
    when ``--jobs 2`` runs two fits at once); they stop when the block ends."""
    stop = multiprocessing.Event()
    procs = [multiprocessing.Process(target=_spin, args=(stop,), daemon=True) for _ in range(n)]
    for p in procs:
        p.start()
    try:
        yield
    finally:
        stop.set()
        for p in procs:
            p.join(5)


def arguments(description: str, data_root: bool = True, repeats: int = 1) -> argparse.ArgumentParser:
    """The options every benchmark takes: ``--data-root``, ``--quick``, ``--repeats``."""
    ap = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    if data_root:
        default = os.environ.get("RANKBENCH_DATA", str(REPO.parent / "shared" / "datasets"))
        ap.add_argument("--data-root", default=default)
    ap.add_argument("--quick", action="store_true",
                    help="a small run that checks the benchmark still works (CI); timings mean nothing")
    ap.add_argument("--repeats", type=int, default=repeats, help="timed calls per figure (the median is shown)")
    return ap


def have_data(data_root, folder: str, bench: str) -> bool:
    """True when ``data_root/folder`` exists; otherwise say the benchmark is skipped."""
    if (Path(data_root) / folder).is_dir():
        return True
    print(f"{bench}: no {folder} under {data_root}; skipped")
    return False

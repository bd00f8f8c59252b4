"""Wall time and peak memory of one ranker's training and scoring, measured from outside.

Memory is the growth of the process's resident set above its level when the step began, after
the C allocator has handed back what it holds free (glibc's ``malloc_trim``), so that a step
counts the memory it uses and not only what it needs beyond blocks an earlier step freed. On
Linux the kernel keeps the exact high-water mark of the resident set (``VmHWM``) and lets a
process reset it (writing ``5`` to ``/proc/self/clear_refs``): the meter resets it when a step
begins and reads it when the step ends, so the peak is exact and costs the measured code nothing.
Where the reset is not permitted (some sandboxes), a background thread samples the resident set
every 2 ms instead; that can miss a short-lived peak, or all of one when the machine is so busy
that the thread is not scheduled. Unlike ``tracemalloc`` neither way slows the ranker. Without
Linux's /proc memory reads as 0.

The resident set is the process's: jobs run concurrently in threads of one process see each
other's memory (and one job's reset of the high-water mark hides another's earlier peak). The
local executor and the LocalCluster it starts run one job per process at a time; on an outside
Dask cluster whose workers have several threads, peak_mb is the worker's, not the job's.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import re
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass

try:
    _PAGE = os.sysconf("SC_PAGE_SIZE")
except (AttributeError, ValueError, OSError):  # pragma: no cover - non-POSIX
    _PAGE = 4096


def _rss_bytes() -> int:
    """Resident set size of this process (Linux /proc; 0 where unavailable)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


@functools.lru_cache(maxsize=1)
def _malloc_trim():
    """glibc's ``malloc_trim``, or None (another C library, or none loadable)."""
    try:
        trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError, TypeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def _release_free_memory() -> None:
    """Hand the memory the C allocator holds free back to the OS (glibc's ``malloc_trim``; see the
    module docstring). A no-op without glibc."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def _reset_high_water_mark() -> bool:
    """Reset the kernel's resident-set high-water mark to the current resident set; True if done."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return _high_water_mark_bytes() > 0
    except OSError:
        return False


def _high_water_mark_bytes() -> int:
    """The kernel's resident-set high-water mark (``VmHWM``) of this process; 0 where unavailable."""
    try:
        with open("/proc/self/status") as fh:
            found = re.search(r"^VmHWM:\s+(\d+)\s+kB", fh.read(), re.MULTILINE)
    except OSError:
        return 0
    return int(found.group(1)) * 1024 if found else 0


class _RssSampler(threading.Thread):
    """Samples resident memory every ``interval`` seconds until stopped; keeps the peak."""

    def __init__(self, interval: float = 0.002):
        super().__init__(daemon=True)
        self.interval = interval
        self.peak = _rss_bytes()
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.wait(self.interval):
            self.peak = max(self.peak, _rss_bytes())

    def stop(self) -> int:
        self._stop_event.set()
        self.join()
        return max(self.peak, _rss_bytes())


class _PeakProbe:
    """Peak resident set of one step: the kernel's high-water mark where it can be reset, else
    sampled."""

    def __init__(self):
        _release_free_memory()
        self.base = _rss_bytes()
        self._sampler = None
        if not _reset_high_water_mark():
            self._sampler = _RssSampler()
            self._sampler.start()

    def growth(self) -> int:
        """Peak resident set since the step began, above its level then (bytes, >= 0)."""
        peak = self._sampler.stop() if self._sampler is not None else _high_water_mark_bytes()
        return max(peak - self.base, 0)


@dataclass
class Meter:
    """Accumulates train/test wall time and peak memory over one trial of one method.

    Memory is the growth of the process's resident set above its level when the step began (the
    kernel's exact high-water mark on Linux; see the module's docstring).
    """

    measure_memory: bool = True
    train_s: float = 0.0
    test_s: float = 0.0
    peak_bytes: int = 0
    #: the step in progress (``"fit"`` or ``"score"``), None between steps; an exception that
    #: leaves a step leaves it set, so the caller can say where a job failed
    phase: str | None = None

    @contextmanager
    def _measure(self, attr: str, phase: str):
        probe = _PeakProbe() if self.measure_memory else None
        self.phase = phase
        t0 = time.perf_counter()
        try:
            yield
            self.phase = None
        finally:
            setattr(self, attr, getattr(self, attr) + time.perf_counter() - t0)
            if probe is not None:
                self.peak_bytes = max(self.peak_bytes, probe.growth())

    def train(self):
        return self._measure("train_s", "fit")

    def test(self):
        return self._measure("test_s", "score")

    def metrics(self) -> dict[str, float]:
        out = {"train_s": self.train_s, "test_s": self.test_s}
        if self.measure_memory:
            out["peak_mb"] = self.peak_bytes / 2**20
        return out

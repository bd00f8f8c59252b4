"""Wall time and peak memory of one ranker's training and scoring, measured from outside.

Memory is the growth of the process's resident set above its level when the step began, sampled
every 2 ms by a background thread. Unlike ``tracemalloc`` this costs the measured code nothing
(tracing every allocation made Python-loop optimisers 5-7x slower); it sees every allocation large
enough to be mapped from the OS, which is where a ranker's memory goes. Resident memory is read
from Linux's /proc; elsewhere memory reads as 0.
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass


def _rss_bytes() -> int:
    """Resident set size of this process (Linux /proc; 0 where unavailable)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


try:
    _PAGE = os.sysconf("SC_PAGE_SIZE")
except (AttributeError, ValueError, OSError):  # pragma: no cover - non-POSIX
    _PAGE = 4096


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


@dataclass
class Meter:
    """Accumulates train/test wall time and peak memory over one trial of one method.

    Memory is the growth of the process's resident set above its level when the step began,
    sampled every 2 ms by a background thread. Unlike ``tracemalloc`` this costs the ranker
    nothing (tracing every allocation made Python-loop optimisers 5-7x slower); it sees every
    allocation large enough to be mapped from the OS, which is where a ranker's memory goes.
    """

    measure_memory: bool = True
    train_s: float = 0.0
    test_s: float = 0.0
    peak_bytes: int = 0

    @contextmanager
    def _measure(self, attr: str):
        sampler = None
        if self.measure_memory:
            base = _rss_bytes()
            sampler = _RssSampler()
            sampler.start()
        t0 = time.perf_counter()
        try:
            yield
        finally:
            setattr(self, attr, getattr(self, attr) + time.perf_counter() - t0)
            if sampler is not None:
                self.peak_bytes = max(self.peak_bytes, sampler.stop() - base)

    def train(self):
        return self._measure("train_s")

    def test(self):
        return self._measure("test_s")

    def metrics(self) -> dict[str, float]:
        out = {"train_s": self.train_s, "test_s": self.test_s}
        if self.measure_memory:
            out["peak_mb"] = self.peak_bytes / 2**20
        return out



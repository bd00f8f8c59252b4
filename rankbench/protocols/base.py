"""Base class of protocols, and the meter that times and weighs each ranker's work.

A protocol owns a task: it draws seeded splits of a :class:`~rankbench.datasets.base.Dataset`,
gives a fresh ranker only the training rows in the form the task needs, scores the held-out rows
with pure functions from :mod:`rankbench.metrics`, and returns a flat ``{metric: value}`` dict
(plus optional curves). It never knows which ranker it runs.
"""

from __future__ import annotations

import os
import threading
import time
from abc import ABC, abstractmethod
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from sklearn.base import BaseEstimator

from ..datasets.base import Dataset
from ..errors import ConfigError
from ..rankers.base import capabilities


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


@dataclass
class TrialResult:
    metrics: dict[str, float]
    curves: dict[str, list[float]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


class Protocol(BaseEstimator, ABC):
    """Abstract protocol. Subclasses set ``capability`` and implement ``split`` and ``evaluate``."""

    #: capabilities a ranker must have one of (see :mod:`rankbench.rankers.base`)
    capability: tuple[str, ...] = ()
    #: metric plotted as a curve (e.g. "cmc"), if any
    curve: str | None = None

    @abstractmethod
    def split(self, dataset: Dataset, rng: np.random.Generator) -> dict[str, Any]:
        """One trial's split as a JSON-serialisable dict of index lists (row positions)."""

    @abstractmethod
    def evaluate(
        self,
        make_ranker: Callable[[], Any],
        X: np.ndarray | dict[str, np.ndarray],
        dataset: Dataset,
        split: dict[str, Any],
        meter: Meter,
    ) -> TrialResult:
        """Fit fresh rankers on the training rows of ``split`` and score the test rows."""

    def check_dataset(self, dataset: Dataset) -> None:
        """Raise a DataError if the dataset lacks what this protocol needs."""

    def check_ranker(self, ranker: Any, where: str) -> None:
        caps = capabilities(ranker)
        if not caps.intersection(self.capability):
            raise ConfigError(
                f"{where}: ranker {getattr(ranker, 'registry_name', type(ranker).__name__)!r} cannot run "
                f"under protocol {self.registry_name!r} (it needs one of: {', '.join(self.capability)}; "
                f"the ranker offers: {', '.join(sorted(caps)) or 'nothing'})"
            )


def take(X: np.ndarray | dict[str, np.ndarray], idx) -> np.ndarray | dict[str, np.ndarray]:
    """Rows ``idx`` of a feature matrix or of every view of a multi-view dict."""
    if isinstance(X, dict):
        return {k: v[idx] for k, v in X.items()}
    return X[idx]

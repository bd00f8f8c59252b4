"""The meter charges training and scoring to the right account, and sees memory a step maps.

The memory the tests allocate is mapped fresh from the OS (an anonymous ``mmap``, every page
written): an ``np.ones`` block may be served from memory the process already holds resident
(what malloc kept from earlier work), and then, rightly, the resident set does not grow.
"""

import mmap
import time

import numpy as np
import pytest
from sklearn.base import BaseEstimator

from rankbench.datasets.synthetic_ordinal import SyntheticOrdinal
from rankbench.protocols.ordinal import Ordinal
from rankbench.rankers.base import MetricLearner
from rankbench.records import TrialSplit
from rankbench.utils import meter as meter_module
from rankbench.utils.meter import Meter


def fresh_block(mb: int) -> mmap.mmap:
    """``mb`` MB mapped from the OS and written, so all of it is resident until closed."""
    block = mmap.mmap(-1, mb * 2**20)
    np.frombuffer(block, dtype=np.uint8)[:] = 1
    return block


class Slow(MetricLearner, BaseEstimator):
    """Sleeps 0.2 s in fit and 0.05 s per transform; maps 64 MB in fit."""

    def fit(self, X, y):
        block = fresh_block(64)
        time.sleep(0.2)
        self.n_ = int(block[-1])
        block.close()
        return self

    def transform(self, X):
        time.sleep(0.05)
        return np.asarray(X)


def test_protocol_charges_fit_to_training_and_scoring_to_testing():
    ds = SyntheticOrdinal(n_labels=3, n_per_label=10).load()
    p = Ordinal(n_per_label=3, k=3)
    meter = Meter()
    p.evaluate(Slow, ds.arrays["feat"], ds, TrialSplit.drawn(p.split(ds, np.random.default_rng(0))), meter)
    m = meter.metrics()
    assert m["train_s"] >= 0.2  # the sleep, plus whatever else fit costs
    assert m["test_s"] >= 0.1  # two transforms (training and test rows)
    assert m["train_s"] > m["test_s"]
    assert m["peak_mb"] >= 48  # the 64 MB block (resident-set growth)


def test_accounts_accumulate_and_memory_can_be_off():
    meter = Meter(measure_memory=False)
    for _ in range(2):
        with meter.train():
            time.sleep(0.03)
    assert meter.train_s >= 0.06 and meter.test_s == 0.0 and "peak_mb" not in meter.metrics()


def _allocate_briefly(mb: int) -> None:
    fresh_block(mb).close()  # mapped, written, unmapped at once: no time for a sampler to see it


def test_a_brief_peak_is_seen_exactly_where_the_kernel_mark_can_be_reset():
    if not meter_module._reset_high_water_mark():
        pytest.skip("this kernel or sandbox does not let a process reset VmHWM (/proc/self/clear_refs)")
    meter = Meter()
    with meter.train():
        _allocate_briefly(64)
    assert 60 <= meter.metrics()["peak_mb"] < 80


def test_the_sampling_fallback_sees_a_block_held_for_a_while(monkeypatch):
    monkeypatch.setattr(meter_module, "_reset_high_water_mark", lambda: False)
    meter = Meter()
    with meter.train():
        block = fresh_block(64)
        time.sleep(0.2)
        block.close()
    assert meter.metrics()["peak_mb"] >= 48


def _kept_by_malloc(mb: int) -> None:
    """Leave ``mb`` MB freed but held by glibc: freeing a large mmapped block raises glibc's mmap
    threshold, so the next block of that size comes from its heap and stays there when freed."""
    for _ in range(3):
        block = np.ones(mb * 2**20 // 8)
        del block


def test_a_step_counts_memory_an_earlier_step_freed():
    """A step reusing blocks the allocator kept from earlier work counts them (the meter hands free
    memory back first): without it, the same step read nearly nothing in a long-lived process."""
    if meter_module._malloc_trim() is None or not meter_module._reset_high_water_mark():
        pytest.skip("needs glibc's malloc_trim and a resettable VmHWM")

    def step(meter):
        _kept_by_malloc(24)
        with meter.train():
            block = np.ones(24 * 2**20 // 8)
            del block
        return meter.metrics()["peak_mb"]

    assert step(Meter()) >= 20   # without the hand-back, 0.0 MB on this machine's glibc

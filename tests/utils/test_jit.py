"""The compiled-loop switch: numba when present and enabled, the numpy versions otherwise."""

import pytest

from rankbench.utils import jit


def test_use_compiled_switches_and_restores():
    before = jit.enabled()
    with jit.use_compiled(False):
        assert not jit.enabled()
        with jit.use_compiled(True):
            assert jit.enabled() == jit.AVAILABLE
        assert not jit.enabled()
    assert jit.enabled() == before


def test_without_numba_nothing_is_compiled(monkeypatch):
    monkeypatch.setattr(jit, "AVAILABLE", False)
    with jit.use_compiled(True):
        assert not jit.enabled()  # callers then take the numpy version


def test_njit_compiles_on_first_call_and_keeps_the_python_function():
    pytest.importorskip("numba")

    @jit.njit
    def total(a):
        s = 0.0
        for x in a:
            s += x
        return s

    import numpy as np

    assert total.py_func(np.arange(4.0)) == 6.0
    assert total(np.arange(5.0)) == 10.0
    assert total._compiled is not None  # numba's dispatcher, not the Python loop

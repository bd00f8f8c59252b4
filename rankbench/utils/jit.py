"""Compiled loops (numba), with the numpy code they replace as the reference and the fallback.

The one place that imports numba. A hot loop is written twice: the numpy version (the
reference, and what runs when numba is absent) and a loop decorated with :func:`njit`. The caller
asks :func:`enabled` which one to run, so tests can run both (``with use_compiled(False): ...``)
and compare the fitted models. numba is imported, and a loop compiled, on the loop's first call
(importing numba costs a few tenths of a second, compiling a loop about a second; compiled code
is cached on disk, so worker processes and later runs load it instead).

Set ``RANKBENCH_JIT=0`` to run the numpy versions everywhere.
"""

from __future__ import annotations

import importlib.util
import os
from contextlib import contextmanager

#: numba is installed (a dependency; the numpy versions stand in when it is not)
AVAILABLE = importlib.util.find_spec("numba") is not None
_enabled = AVAILABLE and os.environ.get("RANKBENCH_JIT", "1") != "0"


def enabled() -> bool:
    """True when the compiled loops should run (numba present and not switched off)."""
    return _enabled


@contextmanager
def use_compiled(flag: bool):
    """Run the compiled loops (``True``, when numba is present) or the numpy versions inside."""
    global _enabled
    before = _enabled
    _enabled = bool(flag) and AVAILABLE
    try:
        yield
    finally:
        _enabled = before


class _Lazy:
    """A function compiled by ``numba.njit`` on its first call (numba imported then, not before)."""

    def __init__(self, fn, options):
        self.py_func = fn
        self._options = options
        self._compiled = None
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__
        self.__wrapped__ = fn

    def __call__(self, *args):
        if self._compiled is None:
            import numba

            self._compiled = numba.njit(cache=True, nogil=True, **self._options)(self.py_func)
        return self._compiled(*args)


def njit(fn=None, **options):
    """Decorator: ``fn`` compiled by numba (``cache=True, nogil=True`` and ``options``) on first call.

    Callers run it only when :func:`enabled` (without numba, calling it raises ImportError); the
    plain Python function stays reachable as ``.py_func``.
    """
    if fn is None:
        return lambda f: _Lazy(f, options)
    return _Lazy(fn, options)

"""One way to limit BLAS threads: small matrix products (a few hundred rows) run faster on one
thread than on several, and do not thrash a machine that runs other jobs. The libraries are
looked up again whenever Python modules were imported since (a package loaded later may bring a
BLAS of its own, which would otherwise escape the limit).
"""

from __future__ import annotations

import functools
import sys
from concurrent.futures import ThreadPoolExecutor

_CONTROLLER = None
_SEEN_MODULES = 0


def blas_threads(n: int | None = 1):
    """Context manager limiting BLAS to ``n`` threads (None: leave the limit as it is)."""
    global _CONTROLLER, _SEEN_MODULES
    from threadpoolctl import ThreadpoolController

    if _CONTROLLER is None or len(sys.modules) != _SEEN_MODULES:
        import scipy.linalg  # noqa: F401  (loads scipy's BLAS, which the controller must see)

        _CONTROLLER = ThreadpoolController()
        _SEEN_MODULES = len(sys.modules)
    return _CONTROLLER.limit(limits=n, user_api="blas")


def one_blas_thread(fit):
    """Decorator: the whole of ``fit`` runs with BLAS limited to one thread."""

    @functools.wraps(fit)
    def pinned(*args, **kwargs):
        with blas_threads(1):
            return fit(*args, **kwargs)

    return pinned


def in_threads(work, n: int, n_jobs: int, grain: int = 8) -> list:
    """``[work(a, b), ...]`` over ``n_jobs`` contiguous ranges [a, b) covering range(n), in order.

    For compiled loops that release the GIL (``nogil``) and numpy's large elementwise work: the
    ranges run in threads. Boundaries are multiples of ``grain`` (e.g. a compiled loop's unit
    groups); with one range, ``work`` runs in the caller.
    """
    n_jobs = max(1, min(int(n_jobs), -(-n // grain)))
    cuts = sorted({min(n, grain * round(k * n / (n_jobs * grain))) for k in range(n_jobs)} | {n})
    if len(cuts) <= 2:
        return [work(0, n)]
    with ThreadPoolExecutor(len(cuts) - 1) as pool:
        return list(pool.map(work, cuts[:-1], cuts[1:]))

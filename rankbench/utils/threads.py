"""One way to limit BLAS threads: small matrix products (a few hundred rows) run faster on one
thread than on several, and do not thrash a machine that runs other jobs. The libraries are
looked up once (threadpoolctl's controller), not at every call."""

from __future__ import annotations

_CONTROLLER = None


def blas_threads(n: int | None = 1):
    """Context manager limiting BLAS to ``n`` threads (None: leave the limit as it is)."""
    global _CONTROLLER
    from threadpoolctl import ThreadpoolController

    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=n, user_api="blas")

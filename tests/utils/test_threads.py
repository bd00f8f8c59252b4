"""BLAS thread limits: whole fits pinned to one thread."""

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from rankbench.utils.threads import one_blas_thread


def _blas_threads():
    return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]


def test_one_blas_thread_pins_the_call_and_restores_the_limit():
    if not _blas_threads():
        pytest.skip("no BLAS library found by threadpoolctl")

    @one_blas_thread
    def fit():
        return _blas_threads()

    with threadpool_limits(2, user_api="blas"):
        assert fit() == [1] * len(_blas_threads())
        assert set(_blas_threads()) == {2}


def test_rank_svm_fit_runs_on_one_blas_thread(monkeypatch):
    if not _blas_threads():
        pytest.skip("no BLAS library found by threadpoolctl")
    from rankbench.rankers.ranksvm import linear

    seen = []
    real = linear.fit_linear
    monkeypatch.setattr(linear, "fit_linear", lambda *a: seen.append(_blas_threads()) or real(*a))
    rng = np.random.default_rng(0)
    X = rng.random((8, 20))  # d > n: the Gram-matrix route (X X^T, its eigendecomposition)
    pairs = np.array([[0, 1], [2, 3], [4, 5], [6, 7]])
    with threadpool_limits(2, user_api="blas"):
        linear.RankSVM(C=1.0).fit(X, pairs, np.ones(4))
    assert seen and all(set(s) == {1} for s in seen)


def test_a_blas_loaded_after_the_first_fit_is_pinned_too():
    """OpenCV ships an OpenBLAS of its own; imported after the first pinned fit, it is limited too."""
    import subprocess
    import sys

    code = (
        "from threadpoolctl import threadpool_info, threadpool_limits\n"
        "from rankbench.utils.threads import one_blas_thread\n"
        "threads = lambda: sorted((p['filepath'], p['num_threads']) for p in threadpool_info() if p['user_api'] == 'blas')\n"
        "fit = one_blas_thread(threads)\n"
        "fit()\n"
        "import cv2\n"
        "with threadpool_limits(2, user_api='blas'):\n"
        "    seen = fit()\n"
        "print(len(seen), sorted({n for _, n in seen}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    n, counts = out.stdout.split(" ", 1)
    if int(n) < 3:
        pytest.skip("OpenCV brings no BLAS of its own here")
    assert counts.strip() == "[1]"

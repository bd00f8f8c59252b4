"""Kernels shared by the kernel rankers and classifiers: linear, exponential chi-square, RBF.

``scale`` normalises a kernel by a statistic of the training rows (mean diagonal of the linear
kernel, mean chi-square distance), so that gamma is unit-free and kernels are comparable in size
when a multiple-kernel learner weighs them (Zhang, Marszalek, Lazebnik & Schmid, IJCV 2007).
"""

from __future__ import annotations

import numpy as np

from ..errors import DataError

KINDS = ("linear", "chi2")


def chi2_distance(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Chi-square distances sum (x - y)^2 / (x + y) between rows (non-negative features)."""
    from sklearn.metrics.pairwise import additive_chi2_kernel

    if (np.asarray(X) < 0).any() or (np.asarray(Y) < 0).any():
        raise DataError("kernel chi2: features must be non-negative (histograms); use kernel: linear "
                        "or a non-negative feature set")
    return -additive_chi2_kernel(np.asarray(X, float), np.asarray(Y, float))


def base_kernel(kind: str, X: np.ndarray, Y: np.ndarray, gamma: float, scale: float) -> np.ndarray:
    """``linear``: x'y / scale; ``chi2``: exp(-gamma * chi2(x, y) / scale)."""
    if kind == "linear":
        return (np.asarray(X, float) @ np.asarray(Y, float).T) / scale
    if kind == "chi2":
        return np.exp(-gamma * chi2_distance(X, Y) / scale)
    raise ValueError(f"unknown kernel {kind!r}; valid kernels: {', '.join(KINDS)}")


def kernel_scale(kind: str, X: np.ndarray) -> float:
    """The training statistic that ``base_kernel`` divides by (see the module docstring)."""
    if kind == "linear":
        return float(max(np.einsum("ij,ij->i", X, X).mean(), 1e-12))
    if kind == "chi2":
        D = chi2_distance(X, X)
        n = len(X)
        return float(max(D.sum() / max(n * (n - 1), 1), 1e-12))
    raise ValueError(f"unknown kernel {kind!r}; valid kernels: {', '.join(KINDS)}")


def rbf_kernel(A: np.ndarray, B: np.ndarray, rho: float) -> np.ndarray:
    """K[i, j] = exp(-rho ||A_i - B_j||^2) (the same arithmetic whether or not B is A)."""
    A, B = np.asarray(A, float), np.asarray(B, float)
    sq = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * A @ B.T
    return np.exp(-rho * np.maximum(sq, 0.0))

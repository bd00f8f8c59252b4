"""The two-spirals toy set."""


import numpy as np
import pytest

from rankbench.registry import datasets


def test_two_spirals_counts_and_seed():
    ds = datasets.build("two_spirals", {}).load()
    assert len(ds) == 400 and ds.arrays["points"].shape == (400, 2)
    assert (ds.items.label == 1).sum() == 201 and (ds.items.label == 0).sum() == 199
    assert ds.items.id.is_unique
    same = datasets.build("two_spirals", {}).load()
    other = datasets.build("two_spirals", {"random_state": 1}).load()
    assert np.array_equal(ds.arrays["points"], same.arrays["points"])
    assert not np.array_equal(ds.arrays["points"], other.arrays["points"])
    clean = datasets.build("two_spirals", {"noise": 0.0}).load().arrays["points"]
    r, theta = np.hypot(*clean.T), np.arctan2(clean[:, 1], clean[:, 0])
    pos = clean[:201]
    # noise-free positives lie on r = theta (mod 2 pi)
    assert np.allclose(np.cos(np.hypot(*pos.T)), np.cos(theta[:201]), atol=1e-9)
    assert r.max() == pytest.approx(np.pi / 2 + 2 * np.pi * 2.0)

"""The scaling steps (preprocess/scalers.py) under their short names: scikit-learn's scalers, the
same numbers, fitted on the training rows only."""

import numpy as np
import pytest

from rankbench.preprocess.scalers import L2Norm, MinMax, Standardize
from rankbench.registry import preprocessors


@pytest.mark.parametrize("name, cls", [("standardize", Standardize), ("minmax", MinMax), ("l2norm", L2Norm)])
def test_registered_under_the_short_name(name, cls):
    assert preprocessors.get(name) is cls


def test_scaled_from_the_training_rows_by_hand():
    train = np.array([[1.0, -2.0], [3.0, 0.0], [5.0, 4.0]])
    test = np.array([[7.0, 1.0]])
    z = Standardize().fit(train).transform(test)
    np.testing.assert_allclose(z, [[(7 - 3) / np.sqrt(8 / 3), (1 - 2 / 3) / np.sqrt(56 / 9)]])
    np.testing.assert_allclose(MinMax().fit(train).transform(test), [[1.5, 0.5]])
    np.testing.assert_allclose(MinMax(feature_range=(-1, 1)).fit(train).transform(train)[:, 0], [-1, 0, 1])
    np.testing.assert_allclose(L2Norm().fit(train).transform([[3.0, 4.0], [0.0, -2.0]]), [[0.6, 0.8], [0, -1]])

"""The generated relative-attributes dataset."""


import numpy as np
import pandas as pd

from rankbench.registry import datasets


def test_synthetic_attributes_is_seeded():
    a = datasets.build("synthetic_attributes", {"random_state": 3}).load()
    b = datasets.build("synthetic_attributes", {"random_state": 3}).load()
    assert a.fingerprint == b.fingerprint and a.arrays["images"].dtype == np.uint8
    assert isinstance(a.info["strength"], pd.DataFrame)

"""The generated ordinal dataset."""


import numpy as np

from rankbench.datasets.synthetic_ordinal import SyntheticOrdinal


def test_synthetic_ordinal_is_seeded():
    a = SyntheticOrdinal(n_labels=3, n_per_label=5, random_state=1).load()
    b = SyntheticOrdinal(n_labels=3, n_per_label=5, random_state=1).load()
    assert a.arrays["feat"].shape == (15, 23)
    np.testing.assert_array_equal(a.arrays["feat"], b.arrays["feat"])
    assert a.fingerprint == b.fingerprint
    assert a.fingerprint != SyntheticOrdinal(n_labels=3, n_per_label=5, random_state=2).load().fingerprint

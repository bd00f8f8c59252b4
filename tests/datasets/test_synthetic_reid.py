"""The generated two-camera re-identification set (datasets/synthetic_reid.py) on its own."""

import numpy as np
import pytest

from rankbench.registry import datasets


def load(**kw):
    return datasets.get("synthetic_reid")(**kw).load()


def test_every_person_once_in_each_camera():
    d = load(n_people=5, random_state=3)
    assert len(d) == 10 and d.name == "synthetic_reid"
    assert d.items["id"].is_unique
    for pid in range(5):
        rows = d.items[d.items["identity"] == pid]
        assert sorted(rows["cam"]) == ["a", "b"]
    imgs = d.arrays["images"]
    assert imgs.shape == (10, 128, 48, 3) and imgs.dtype == np.uint8
    np.testing.assert_array_equal(d.image(7), imgs[7])


def test_the_same_seed_gives_the_same_set_and_another_seed_another():
    a, b, c = load(n_people=4, random_state=1), load(n_people=4, random_state=1), load(n_people=4, random_state=2)
    np.testing.assert_array_equal(a.arrays["images"], b.arrays["images"])
    assert a.fingerprint == b.fingerprint
    assert a.fingerprint != c.fingerprint and not np.array_equal(a.arrays["images"], c.arrays["images"])
    assert load(n_people=5, random_state=1).fingerprint != a.fingerprint


def test_two_views_of_a_person_differ_and_are_not_blank():
    d = load(n_people=6, random_state=0)
    imgs = d.arrays["images"].astype(int)
    for pid in range(6):
        a, b = imgs[d.items.index[(d.items["identity"] == pid)].to_numpy()]
        assert np.abs(a - b).mean() > 1               # lit and placed differently by each camera
    assert (imgs.reshape(len(imgs), -1).std(axis=1) > 10).all()


@pytest.mark.parametrize("n", [3, 11])
def test_identities_are_the_numbers_of_the_people(n):
    d = load(n_people=n)
    assert sorted(set(d.items["identity"])) == list(range(n))

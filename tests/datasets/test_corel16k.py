"""The corel16k loader on a generated file pair in its layout, and on the real subset 001."""

import numpy as np
import pytest

from rankbench.datasets.corel16k import Corel16k
from rankbench.errors import ConfigError, DataError
from rankbench.params import check_params
from rankbench.registry import datasets

XML = ('<?xml version="1.0" encoding="utf-8"?>\n<labels xmlns="http://mulan.sourceforge.net/labels">\n'
       '<label name="sky"></label><label name="water"></label><label name="cat"></label>\n</labels>\n')


def make(root, target=None, data=None, subset=1, variables=("data", "target")):
    import scipy.io

    root.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    if data is None:
        data = (rng.random((8, 5)) < 0.3).astype(np.uint8)
    if target is None:
        target = np.where(rng.random((3, 8)) < 0.4, 1, -1).astype(np.int16)
    arrays = {"data": data, "target": target}
    scipy.io.savemat(root / f"Corel16k{subset:03d}.mat", {k: arrays[k] for k in variables})
    (root / f"Corel16k{subset:03d}.xml").write_text(XML)
    return data, target


def test_generated(tmp_path):
    data, target = make(tmp_path)
    ds = datasets.build("corel16k", {"root": str(tmp_path)}).load()
    assert ds.info["concepts"] == ["sky", "water", "cat"] and len(ds) == 8
    assert "train" not in ds.items and ds.items["id"].iat[7] == "Corel16k001:7"
    assert ds.arrays["feat"].dtype == np.float32 and ds.arrays["relevance"].dtype == np.int8
    np.testing.assert_array_equal(ds.arrays["feat"], data)
    np.testing.assert_array_equal(ds.arrays["relevance"], (target.T == 1).astype(int))
    make(tmp_path / "s3", subset=3)
    assert len(Corel16k(root=str(tmp_path / "s3"), subset=3).load()) == 8


@pytest.mark.parametrize("kwargs, words", [
    ({"target": np.zeros((3, 8), np.int16)}, "target holds [0], expected only -1 and +1"),
    ({"target": np.ones((8, 3), np.int16)}, "data is (8, 5) and target (8, 3), expected target = (3 concepts"),
    ({"target": np.ones((2, 8), np.int16)}, "expected target = (3 concepts named in Corel16k001.xml, 8 items"),
    ({"variables": ("data",)}, "no variable 'target'"),
])
def test_errors(tmp_path, kwargs, words):
    make(tmp_path, **kwargs)
    with pytest.raises(DataError) as e:
        Corel16k(root=str(tmp_path)).load()
    assert words in str(e.value) and "Corel16k001.mat" in str(e.value) and "expected layout" in str(e.value)


def test_missing_files(tmp_path):
    make(tmp_path)
    (tmp_path / "Corel16k001.xml").unlink()
    with pytest.raises(DataError, match="Corel16k001.xml not found; expected layout"):
        Corel16k(root=str(tmp_path)).load()
    with pytest.raises(DataError, match="Corel16k002.mat not found"):
        Corel16k(root=str(tmp_path), subset=2).load()
    with pytest.raises(ConfigError, match="dataset.subset: expected an integer >= 1 and <= 10, got 11"):
        check_params(Corel16k, {"subset": 11}, "dataset")


@pytest.mark.realdata
def test_real_corel16k(shared_data):
    if not (shared_data / "corel16k").is_dir():
        pytest.skip("corel16k not in the shared datasets")
    ds = datasets.build("corel16k", {}).load(str(shared_data))
    R = ds.arrays["relevance"]
    assert ds.arrays["feat"].shape == (13766, 500) and R.shape == (13766, 153) and len(ds.info["concepts"]) == 153
    pos = dict(zip(ds.info["concepts"], R.sum(axis=0).tolist()))
    assert pos["water"] == 3170 and pos["sky"] == 2562 and pos["stone"] == 428  # the MANIFEST's counts
    assert (R.mean(axis=0) < 0.01).sum() == 87
    assert R.sum() / len(R) == pytest.approx(2.86, abs=0.01)  # labels per image
    assert set(np.unique(ds.arrays["feat"])) <= {0.0, 1.0}

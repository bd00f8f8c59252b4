"""synthetic_collection: the generated TRECVID-scale keyframe collection (built-in TRECVID 2006
rates, or real label vectors from tv06_gt.mat), its seeding, its graded feature types and scale."""

import numpy as np
import pytest

from rankbench.datasets.synthetic_collection import TRECVID2006_KEYFRAMES, TRECVID2006_POSITIVES, SyntheticCollection
from rankbench.errors import ConfigError, DataError
from rankbench.metrics import average_precision
from rankbench.params import check_params
from rankbench.registry import datasets

SMALL = {"n_items": 3000, "feature_types": [[8, 0.1], [12, 3.0]], "shots_per_video": 100}


def build(**params):
    return datasets.build("synthetic_collection", {**SMALL, **params}).load()


def test_small_collection():
    ds = build()
    R = ds.arrays["relevance"]
    assert R.dtype == np.int8 and R.shape == (3000, 20) and len(ds.info["concepts"]) == 20
    want = [max(1, round(p / TRECVID2006_KEYFRAMES * 3000)) for p in TRECVID2006_POSITIVES]
    assert R.sum(axis=0).tolist() == want and set(np.unique(R)) == {0, 1}
    assert ds.items["id"].iat[0] == "shot1_1_RKF" and ds.items["id"].iat[2999] == "shot30_100_RKF"
    assert ds.items["group"].nunique() == 30 and ds.items["group"].iat[100] == "video2"
    assert [ds.arrays[k].shape for k in ("feat/type00", "feat/type01")] == [(3000, 8), (3000, 12)]
    assert all(ds.arrays[k].dtype == np.float32 for k in ds.arrays if k.startswith("feat/"))
    assert ds.info["feature_types"] == {"type00": {"dims": 8, "noise": 0.1}, "type01": {"dims": 12, "noise": 3.0}}
    assert ds.info["nbytes"] == 3000 * 20 * 4 + 3000 * 20


def test_seeding():
    a, b = build(), build()
    for k in a.arrays:
        np.testing.assert_array_equal(a.arrays[k], b.arrays[k])
    assert a.fingerprint == b.fingerprint
    c = build(random_state=1)
    assert not np.array_equal(a.arrays["relevance"], c.arrays["relevance"]) and c.fingerprint != a.fingerprint
    # labels and earlier types do not depend on the types that follow
    more = build(feature_types=[[8, 0.1], [12, 3.0], [4, 1.0]])
    for k in a.arrays:
        np.testing.assert_array_equal(a.arrays[k], more.arrays[k])


def test_feature_types_are_graded():
    ds = build(n_items=8000)
    R = ds.arrays["relevance"] > 0

    def map_of(X):  # AP of the direction between the class means, per concept
        return np.mean([average_precision(X @ (X[y].mean(0) - X[~y].mean(0)), y) for y in R.T])

    clean, noisy = map_of(ds.arrays["feat/type00"]), map_of(ds.arrays["feat/type01"])
    assert clean > 0.8 and noisy < 0.1


def test_video_effect_makes_a_video_alike():
    ds = build(feature_types=[[16, 1.0]], video_effect=2.0)
    X = ds.arrays["feat/type00"].astype(float)
    g = ds.items["group"].to_numpy()
    between = np.var([X[g == v].mean(0) for v in np.unique(g)], axis=0).mean()
    assert between > 3.0  # video offsets with variance 4 dominate the item noise (1 / 100 per mean)


def test_default_scale():
    ds = datasets.build("synthetic_collection", {}).load()
    assert len(ds) == 52347 and ds.arrays["relevance"].shape == (52347, 20)
    assert len(ds.info["feature_types"]) == 10 and ds.info["n_videos"] == 262
    dims = [t["dims"] for t in ds.info["feature_types"].values()]
    assert min(dims) == 16 and max(dims) == 64
    assert ds.info["nbytes"] == 52347 * (4 * sum(dims) + 20)  # 77 MB + 1 MB, as the docstring says
    rates = np.array(list(ds.info["positive_rates"].values()))
    ref = np.array(list(ds.info["reference_rates"].values()))
    np.testing.assert_allclose(rates, ref, atol=0.5 / 52347)  # the built-in table, up to rounding


def write_gt(root, gt):
    import scipy.io

    root.mkdir(parents=True, exist_ok=True)
    scipy.io.savemat(root / "tv06_gt.mat", {"tv06_gt": gt})


def load_tv(data_root, **params):
    return datasets.build("synthetic_collection", {**SMALL, "labels": "trecvid2006", **params}).load(str(data_root))


def test_trecvid_labels_from_a_file(tmp_path):
    rng = np.random.default_rng(0)
    gt = (rng.random((400, 20)) < 0.1).astype(np.uint8)
    gt[:, 1] = gt[:, 0]  # two concepts that always co-occur
    write_gt(tmp_path / "trecvid2006-labels", gt)
    ds = load_tv(tmp_path, n_items=300)
    Y = ds.arrays["relevance"]
    assert Y.shape == (300, 20) and Y.dtype == np.int8 and np.array_equal(Y[:, 0], Y[:, 1])  # co-occurrence kept
    # 300 distinct rows of gt, in their original order: Y is a subsequence of gt
    it = iter(gt.astype(np.int8).tolist())
    assert all(any(row == g for g in it) for row in Y.tolist())
    assert load_tv(tmp_path, n_items=400).arrays["relevance"].tolist() == gt.tolist()  # all rows, in order
    with pytest.raises(ConfigError, match="dataset.n_items: 500 exceeds the 400 label vectors of .*tv06_gt.mat"):
        load_tv(tmp_path / "elsewhere", n_items=500, root=str(tmp_path / "trecvid2006-labels"))


def test_trecvid_label_errors(tmp_path):
    with pytest.raises(DataError, match="folder .*trecvid2006-labels not found.*; expected layout: "
                                        "trecvid2006-labels/tv06_gt.mat"):
        load_tv(tmp_path)
    (tmp_path / "trecvid2006-labels").mkdir()
    with pytest.raises(DataError, match="tv06_gt.mat not found.*; expected layout: trecvid2006-labels/tv06_gt.mat"):
        load_tv(tmp_path)
    write_gt(tmp_path / "trecvid2006-labels", np.full((10, 3), 1, np.uint8))
    with pytest.raises(DataError, match=r"tv06_gt.mat: found tv06_gt of shape \(10, 3\), expected keyframes x 20"):
        load_tv(tmp_path)


@pytest.mark.parametrize("bad", [{"labels": "trecvid2007"}, {"feature_types": [[0, 1.0]]},
                                 {"feature_types": [[8, -1.0]]}, {"n_items": 0}, {"random_state": None}])
def test_declared_parameters(bad):
    with pytest.raises(ConfigError, match=f"dataset.{list(bad)[0]}: expected"):
        check_params(SyntheticCollection, bad, "dataset")
    check_params(SyntheticCollection, {"feature_types": [[8, 0.5], [16, 2]]}, "dataset")


@pytest.mark.realdata
def test_real_trecvid2006_labels(shared_data):
    if not (shared_data / "trecvid2006-labels").is_dir():
        pytest.skip("trecvid2006-labels not in the shared datasets")
    ds = datasets.build("synthetic_collection", {"labels": "trecvid2006", "feature_types": [[8, 0.5]]}).load(
        str(shared_data))
    Y = ds.arrays["relevance"]
    assert Y.shape == (52347, 20)
    frac = 52347 / TRECVID2006_KEYFRAMES
    for c, p in enumerate(TRECVID2006_POSITIVES):  # hypergeometric draw: within 5 standard deviations
        sd = np.sqrt(p * frac * (1 - frac))
        assert abs(Y[:, c].sum() - p * frac) < 5 * sd + 1
    assert Y.max(axis=1).sum() == pytest.approx(8458 * frac, rel=0.05)  # keyframes with a positive


def test_imbalance_profile_meets_both_ratios_and_keeps_the_order():
    """Merler et al.'s stated profile: irrelevant:relevant 49.47 over the collection, 385.75 at the rarest."""
    loader = SyntheticCollection(n_items=20000, mean_ratio=49.47, peak_ratio=385.75, feature_types=[[4, 1.0]])
    ref, rates = np.array(loader.reference_rates()), np.array(loader.table_rates())
    assert (1 - rates.mean()) / rates.mean() == pytest.approx(49.47, rel=1e-9)
    assert (1 - rates.min()) / rates.min() == pytest.approx(385.75, rel=1e-9)
    assert np.array_equal(np.argsort(ref, kind="stable"), np.argsort(rates, kind="stable"))
    Y = loader.load().arrays["relevance"]
    assert Y.sum(0).tolist() == [max(1, round(r * 20000)) for r in rates]


@pytest.mark.parametrize("params, match", [({"mean_ratio": 49.0}, "together"),
                                           ({"mean_ratio": 400.0, "peak_ratio": 100.0}, "peak_ratio"),
                                           ({"mean_ratio": 49.0, "peak_ratio": 300.0, "labels": "trecvid2006"},
                                            "trecvid2006")])
def test_imbalance_profile_mistakes_are_config_errors(params, match):
    from rankbench.errors import ConfigError

    with pytest.raises(ConfigError, match=match):
        SyntheticCollection(n_items=100, feature_types=[[4, 1.0]], **params).load()

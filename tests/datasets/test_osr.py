"""osr_scenes: OSR's categories as rare retrieval concepts (positives subsampled, the category's
other images unjudged), on a generated OSR folder and on the real 2688 scenes."""

import numpy as np
import pytest

from rankbench.datasets.osr import OSRScenes
from rankbench.errors import ConfigError, DataError
from rankbench.params import check_params
from rankbench.registry import datasets

SIZES = {"coast": 30, "forest": 20, "street": 50}


def make_osr(root):
    import cv2

    (root / "images").mkdir(parents=True)
    for c, n in SIZES.items():
        for i in range(n):
            img = np.full((8, 8, 3), 5 * i, np.uint8)
            cv2.imwrite(str(root / "images" / f"{c}_n{i:03d}.jpg"), img)
    (root / "relative_ordering.csv").write_text("attribute,coast,forest,street\nnatural,3,3,1\nopen,3,1,2\n")
    return root


def test_subsampled_concepts(tmp_path):
    root = make_osr(tmp_path)
    ds = datasets.build("osr_scenes", {"root": str(root), "positive_rate": 0.1, "random_state": 3, "check_images": False}).load()
    R = ds.arrays["relevance"]
    assert R.dtype == np.int8 and R.shape == (100, 3) and ds.info["concepts"] == ["coast", "forest", "street"]
    cats = ds.items["category"].to_numpy()
    for j, c in enumerate(ds.info["concepts"]):
        col = R[:, j]
        assert (col == 1).sum() == 10  # 0.1 of the 100 images
        assert np.all(col[cats != c] == 0)  # other categories: judged negatives
        assert (col[cats == c] == -1).sum() == SIZES[c] - 10  # the rest of the category: unjudged
    assert ds.info["n_relevant"] == {"coast": 10, "forest": 10, "street": 10}
    assert ds.info["n_judged"] == {"coast": 80, "forest": 90, "street": 60}
    # same seed, same draw; another seed, another draw; same items and fingerprint as `osr`
    again = OSRScenes(root=str(root), check_images=False, positive_rate=0.1, random_state=3).load()
    np.testing.assert_array_equal(again.arrays["relevance"], R)
    other = OSRScenes(root=str(root), check_images=False, positive_rate=0.1, random_state=4).load()
    assert not np.array_equal(other.arrays["relevance"], R)
    osr = datasets.build("osr", {"root": str(root), "check_images": False}).load()
    assert osr.items["id"].tolist() == ds.items["id"].tolist() and osr.fingerprint == ds.fingerprint


def test_all_positives_and_limits(tmp_path):
    root = make_osr(tmp_path)
    ds = OSRScenes(root=str(root), check_images=False, positive_rate=None).load()
    np.testing.assert_array_equal(ds.arrays["relevance"].sum(axis=0), list(SIZES.values()))
    assert ds.arrays["relevance"].min() == 0
    with pytest.raises(ConfigError, match="asks for 25 positives per concept, but category forest has 20"):
        OSRScenes(root=str(root), check_images=False, positive_rate=0.25).load()
    with pytest.raises(ConfigError, match="is no positive"):
        OSRScenes(root=str(root), check_images=False, positive_rate=0.001).load()
    with pytest.raises(ConfigError, match="dataset.positive_rate: expected a number > 0 and < 1"):
        check_params(OSRScenes, {"positive_rate": 1.0}, "dataset")
    (root / "images" / "beach_x.jpg").write_bytes(b"")
    with pytest.raises(DataError, match="dataset osr_scenes: image .*beach_x.jpg has no known category"):
        OSRScenes(root=str(root), check_images=False).load()


@pytest.mark.realdata
def test_real_osr_scenes(shared_data):
    if not (shared_data / "osr").is_dir():
        pytest.skip("osr not in the shared datasets")
    ds = datasets.build("osr_scenes", {}).load(str(shared_data))
    R = ds.arrays["relevance"]
    sizes = {"coast": 360, "forest": 328, "highway": 260, "insidecity": 308, "mountain": 374,
             "opencountry": 410, "street": 292, "tallbuilding": 356}  # the MANIFEST's counts
    assert R.shape == (2688, 8) and ds.info["concepts"] == sorted(sizes)
    assert ds.info["n_relevant"] == {c: 54 for c in sizes}  # round(0.02 * 2688)
    for j, c in enumerate(ds.info["concepts"]):
        assert (R[:, j] == -1).sum() == sizes[c] - 54 and (R[:, j] == 0).sum() == 2688 - sizes[c]
    rate_judged = {c: 54 / ds.info["n_judged"][c] for c in sizes}
    assert 0.0217 < min(rate_judged.values()) and max(rate_judged.values()) < 0.0233  # 2.18 .. 2.32 %
    assert np.mean([(2688 - n) / 54 for n in sizes.values()]) == pytest.approx(43.56, abs=0.01)

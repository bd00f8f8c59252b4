"""hsv_hist (Yan et al., Section 4.1): 32 bins per HSV channel, per-channel L1-normalised."""

import numpy as np
import pytest

from rankbench.errors import ConfigError, DataError
from rankbench.params import check_params
from rankbench.registry import datasets, features


def calchist_reference(img, bins):
    import cv2

    hsv = cv2.cvtColor(img, cv2.COLOR_RGB2HSV)
    out = []
    for c, hi in enumerate((180, 256, 256)):
        h = cv2.calcHist([hsv], [c], None, [bins], [0, hi]).ravel().astype(np.float64)
        out.append(h / h.sum())
    return np.concatenate(out)


@pytest.mark.parametrize("bins", [32, 7, 180])
def test_matches_cv2_calchist(bins):
    rng = np.random.default_rng(bins)
    img = rng.integers(0, 256, (37, 23, 3), dtype=np.uint8)
    f = features.build("hsv_hist", {"bins": bins}).transform_image(img)
    assert f.shape == (3 * bins,)
    assert np.allclose(f, calchist_reference(img, bins), atol=1e-15)
    assert np.allclose(f.reshape(3, bins).sum(1), 1.0)


def test_default_is_96_dims_and_every_hue_bin_is_reachable():
    ext = features.build("hsv_hist", {})
    assert ext.bins == 32
    # all 180 hues of fully saturated colours, and all 256 grey levels
    import cv2

    hsv = np.stack(np.meshgrid(np.arange(180), [255], [255], indexing="ij"), -1).reshape(180, 1, 3)
    img = cv2.cvtColor(hsv.astype(np.uint8), cv2.COLOR_HSV2RGB)
    f = ext.transform_image(img)
    assert f.shape == (96,) and (f[:32] > 0).all()
    assert np.allclose(f, calchist_reference(img, 32))


def test_grey_images_and_bad_bins_are_refused():
    with pytest.raises(DataError, match="colour"):
        features.build("hsv_hist", {}).transform_image(np.zeros((4, 4), np.uint8))
    from rankbench.features.hsv_hist import HSVHistogram

    with pytest.raises(ConfigError, match="bins"):
        check_params(HSVHistogram, {"bins": 1}, "features hsv_hist")


@pytest.mark.realdata
def test_real_towncentre_crops(shared_data):
    from rankbench.datasets.base import read_image

    ds = datasets.build("towncentre", {"tracks": [139]}).load(str(shared_data))
    ext = features.build("hsv_hist", {})
    for i in (0, len(ds) - 1):
        img = read_image(ds.items.path.iat[i])
        assert np.allclose(ext.transform_image(img), calchist_reference(img, 32))

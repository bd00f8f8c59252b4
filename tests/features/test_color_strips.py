"""Per-strip colour histograms (features/color_strips.py) against np.histogram strip by strip."""

import cv2
import numpy as np
import pytest

from rankbench.registry import features

HI = {"rgb": (256, 256, 256), "hsv": (180, 256, 256), "ycrcb": (256, 256, 256)}
CODE = {"rgb": None, "hsv": cv2.COLOR_RGB2HSV, "ycrcb": cv2.COLOR_RGB2YCrCb}


def brute(img, spaces, n_strips, bins):
    """Strips cut at round(k H / n) (half to even), each channel histogrammed and L1-normalised."""
    H = img.shape[0]
    cuts = [int(round(k * H / n_strips)) for k in range(n_strips + 1)]
    out = []
    for space in spaces:
        conv = img if CODE[space] is None else cv2.cvtColor(img, CODE[space])
        for c in range(3):
            for a, b in zip(cuts[:-1], cuts[1:]):
                h, _ = np.histogram(conv[a:b, :, c], bins=bins, range=(0, HI[space][c]))
                out.append(h / max(h.sum(), 1))
    return np.concatenate(out)


@pytest.mark.parametrize("spaces, n_strips, bins, H", [
    (("rgb", "hsv", "ycrcb"), 6, 16, 24), (("hsv",), 4, 7, 10), (("ycrcb", "rgb"), 3, 2, 11)])
def test_matches_strip_by_strip_histograms(spaces, n_strips, bins, H):
    img = np.random.default_rng(H).integers(0, 256, size=(H, 5, 3), dtype=np.uint8)
    got = features.get("color_strips")(spaces=spaces, n_strips=n_strips, bins=bins, size=None).transform_image(img)
    assert got.shape == (len(spaces) * 3 * n_strips * bins,)
    np.testing.assert_allclose(got, brute(img, spaces, n_strips, bins), atol=1e-12)


def test_resized_to_its_size_first_and_grey_replicated():
    rng = np.random.default_rng(5)
    img = rng.integers(0, 256, size=(40, 20, 3), dtype=np.uint8)
    ext = features.get("color_strips")(spaces=("rgb",), n_strips=2, bins=4, size=(8, 6))
    small = cv2.resize(img, (6, 8), interpolation=cv2.INTER_AREA)
    np.testing.assert_allclose(ext.transform_image(img), brute(small, ("rgb",), 2, 4))
    grey = rng.integers(0, 256, size=(8, 6), dtype=np.uint8)
    np.testing.assert_allclose(ext.transform_image(grey), brute(np.dstack([grey] * 3), ("rgb",), 2, 4))

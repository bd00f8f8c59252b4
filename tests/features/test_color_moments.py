"""color_moments against scipy.stats moments."""

import numpy as np
import pytest

from keyframe_images import cells, rand_img
from rankbench.registry import features


@pytest.mark.parametrize("space", ["rgb", "lab"])
def test_color_moments_match_scipy(space):
    import cv2
    from scipy import stats

    img = rand_img(11, 14, seed=6)
    got = features.build("color_moments", {"space": space, "grid": 3}).transform_image(img).reshape(9, 3, 3)
    x = img if space == "rgb" else cv2.cvtColor(img, cv2.COLOR_RGB2LAB)
    x = x.astype(float) / 255
    for c, (sy, sx) in enumerate(cells(11, 14, 3)):
        px = x[sy, sx].reshape(-1, 3)
        want = np.stack([px.mean(0), np.sqrt(stats.moment(px, 2, axis=0)),
                         np.cbrt(stats.moment(px, 3, axis=0))], axis=1)
        np.testing.assert_allclose(got[c], want, atol=1e-6)


def test_constant_cells_have_zero_higher_moments():
    img = np.zeros((8, 8, 3), np.uint8)
    img[:, 4:] = (10, 200, 90)
    v = features.build("color_moments", {"space": "rgb", "grid": 2}).transform_image(img).reshape(4, 3, 3)
    assert np.all(v[:, :, 1:] == 0)
    np.testing.assert_allclose(v[1, :, 0], np.array([10, 200, 90]) / 255, atol=1e-7)

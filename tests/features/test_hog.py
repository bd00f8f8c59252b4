"""HoG: scikit-image's descriptor on the extractor's own preprocessing, and what it responds to."""

import numpy as np
from skimage.feature import hog

from rankbench.features.hog import HoG


def test_hog_is_scikit_images_descriptor_of_the_resized_grey_image():
    import cv2

    img = np.random.default_rng(0).integers(0, 256, size=(90, 70, 3), dtype=np.uint8)
    ours = HoG(image_size=64, orientations=8, pixels_per_cell=8, cells_per_block=2).transform_image(img)
    grey = img.astype(float) @ np.array([0.299, 0.587, 0.114])
    ref = hog(cv2.resize(grey, (64, 64), interpolation=cv2.INTER_AREA), orientations=8, pixels_per_cell=(8, 8),
              cells_per_block=(2, 2), block_norm="L2-Hys", feature_vector=True)
    np.testing.assert_allclose(ours, ref, rtol=1e-6, atol=1e-9)
    assert ours.shape == (7 * 7 * 2 * 2 * 8,)


def test_vertical_stripes_load_the_horizontal_gradient_bin():
    img = np.zeros((64, 64), np.uint8)
    img[:, ::8] = 255
    f = HoG(image_size=64, orientations=9, pixels_per_cell=16, cells_per_block=1).transform_image(img)
    bins = f.reshape(-1, 9).sum(0)
    assert np.argmax(bins) == 0  # gradients point along x: orientation 0

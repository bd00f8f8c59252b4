"""HoG: scikit-image's descriptor on the extractor's own preprocessing, and what it responds to."""

import numpy as np
from skimage.feature import hog

from rankbench.features.hog import HoG


def test_hog_is_scikit_images_descriptor_of_the_resized_grey_image():
    import cv2

    img = np.random.default_rng(0).integers(0, 256, size=(90, 70, 3), dtype=np.uint8)
    ours = HoG(image_size=64, orientations=8, pixels_per_cell=8, cells_per_block=2).transform_image(img)
    grey = img.astype(float) @ np.array([0.299, 0.587, 0.114])
    # 90 x 70 -> 64 is no whole-number shrink: the resized grey is held to four decimals (luma's 0.001 steps)
    ref = hog(np.round(cv2.resize(grey, (64, 64), interpolation=cv2.INTER_AREA), 4), orientations=8,
              pixels_per_cell=(8, 8), cells_per_block=(2, 2), block_norm="L2-Hys", feature_vector=True)
    np.testing.assert_allclose(ours, ref, rtol=1e-6, atol=1e-9)
    assert ours.shape == (7 * 7 * 2 * 2 * 8,)


def test_vertical_stripes_load_the_horizontal_gradient_bin():
    img = np.zeros((64, 64), np.uint8)
    img[:, ::8] = 255
    f = HoG(image_size=64, orientations=9, pixels_per_cell=16, cells_per_block=1).transform_image(img)
    bins = f.reshape(-1, 9).sum(0)
    assert np.argmax(bins) == 0  # gradients point along x: orientation 0


def test_flat_areas_give_no_histogram_after_any_resize():
    """Before: a white 128x48 crop resized to 128 gave 196 values of 0.5 (OpenCV's float32 resize
    left 254.99999 beside 255, and each block's normalisation blew that up); skimage's HoG of the
    flat image is all zeros. A whole-number shrink (256 -> 128: PubFig, OSR) is exact and stays so."""
    for shape in ((128, 48, 3), (300, 200, 3), (37, 91, 3)):
        for value in (255, 149, 0):
            assert not HoG().transform_image(np.full(shape, value, np.uint8)).any(), (shape, value)
    half = np.random.default_rng(1).integers(0, 256, (128, 48, 3), dtype=np.uint8)
    half[64:] = 255
    f = HoG().transform_image(half).reshape(7, 7, 2, 2, 9)
    assert not f[5:].any() and f[:3].any()    # blocks wholly in the white half (cells 5-7) are empty
    img = np.random.default_rng(2).integers(0, 256, (256, 256, 3), dtype=np.uint8)
    import cv2

    grey = img.astype(float) @ np.array([0.299, 0.587, 0.114])
    assert np.array_equal(HoG().transform_image(img), hog(cv2.resize(grey, (128, 128), interpolation=cv2.INTER_AREA),
                                                          orientations=9, pixels_per_cell=(16, 16),
                                                          cells_per_block=(2, 2), block_norm="L2-Hys",
                                                          feature_vector=True))

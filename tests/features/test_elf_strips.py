"""The 2784-d ELF strip histograms of Prosser et al."""


import numpy as np
import pytest

from rankbench.features.elf_strips import ELFStrips, gabor_kernel, schmid_kernel


def test_elf_shape_layout_and_normalisation():
    rng = np.random.default_rng(0)
    imgs = [rng.integers(0, 256, (128, 48, 3), dtype=np.uint8) for _ in range(3)]
    ext = ELFStrips()
    F = ext.transform_batch(imgs)
    assert F.shape == (3, 2784) and ext.n_channels == 29
    H = F.reshape(3, 29, 6, 16)
    np.testing.assert_allclose(H.sum(-1), 1.0, atol=1e-5)  # each (channel, strip) histogram
    # one image alone gives the same vector as inside a batch (no leakage across the mosaic)
    np.testing.assert_allclose(ext.transform_image(imgs[1]), F[1], atol=1e-6)


def test_elf_colour_histogram_of_a_flat_image():
    img = np.zeros((128, 48, 3), np.uint8)
    img[..., 0] = 255  # pure red
    H = ELFStrips().transform_image(img).reshape(29, 6, 16)
    assert H[0, :, 15].min() == 1.0 and H[1, :, 0].min() == 1.0  # R in the top bin, G at 0
    # flat luminance: zero-mean filters respond 0 everywhere -> all mass in one bin
    assert np.allclose(H[8:].max(-1), 1.0)


def test_elf_strips_follow_the_rows():
    img = np.zeros((128, 48, 3), np.uint8)
    img[64:] = 255  # bottom half white
    H = ELFStrips(gabor_bank=(), schmid_bank=()).transform_image(img).reshape(8, 6, 16)
    assert H[0, 0, 0] == 1.0 and H[0, 5, 15] == 1.0


def test_elf_kernels_zero_mean_and_resize():
    for k in [gabor_kernel(0.3, 0, 4, 2), gabor_kernel(0.4, np.pi / 2, 8, 1), schmid_kernel(10, 4)]:
        assert abs(k.sum()) < 1e-5 and np.isclose(np.abs(k).sum(), 1, atol=1e-5)
    rng = np.random.default_rng(1)
    small = rng.integers(0, 256, (76, 30, 3), dtype=np.uint8)
    assert ELFStrips(size=(128, 64)).transform_image(small).shape == (2784,)
    for bad in [dict(normalize="bogus"), dict(filter_range="bogus")]:
        with pytest.raises(ValueError):
            ELFStrips(**bad).transform_image(small)

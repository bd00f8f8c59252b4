"""Gabor energy: the batched FFT filtering against a direct circular convolution in space."""

import numpy as np
from scipy import ndimage

from rankbench.features.gabor import GaborEnergy, manjunath_bank


def test_fft_filtering_equals_spatial_circular_convolution_and_block_means():
    n, grid = 32, 2
    img = np.random.default_rng(2).integers(0, 256, size=(n, n), dtype=np.uint8)
    ours = GaborEnergy(image_size=n, n_scales=2, n_orientations=3, grid=grid).transform_image(img)
    x = img.astype(float) - img.mean()
    ref = []
    for G in manjunath_bank(n, 2, 3):
        k = np.fft.fftshift(np.fft.ifft2(G))  # the filter's spatial kernel, zero lag at the centre
        resp = ndimage.convolve(x, k.real, mode="wrap") + 1j * ndimage.convolve(x, k.imag, mode="wrap")
        mag = np.abs(resp)
        ref.append([mag[16 * i:16 * (i + 1), 16 * j:16 * (j + 1)].mean() for i in range(grid) for j in range(grid)])
    np.testing.assert_allclose(ours, np.ravel(ref), rtol=1e-9, atol=1e-9)


def test_the_bank_tiles_orientations_at_each_scale():
    bank = manjunath_bank(64, 3, 4)
    assert bank.shape == (12, 64, 64) and np.all(bank >= 0) and np.all(bank <= 1 + 1e-12)
    peaks = [np.unravel_index(np.argmax(g), g.shape) for g in bank]
    assert len(set(peaks)) == 12  # every filter peaks at its own frequency

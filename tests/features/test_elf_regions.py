"""Gray & Tao-style localized region histograms."""


import numpy as np
import pytest

from rankbench.features.elf_strips import ELFStrips
from rankbench.features.elf_regions import ELFRegions, region_pool

SMALL = dict(n_cells=4, heights=(1, 2, 4), stride=0.5, n_bins=8,
             gabor_bank=((0.3, 0.0, 4, 2),), schmid_bank=((2, 1),))


def test_region_pool_covers_every_height_and_the_bottom():
    assert region_pool(4, (1, 2, 4)) == [(0, 1), (1, 1), (2, 1), (3, 1), (0, 2), (1, 2), (2, 2), (0, 4)]
    pool = region_pool(12, (1, 2, 3, 4, 6))
    assert len(pool) == 37 and (9, 3) in pool  # stride 2 for height 3, last start appended
    assert all(s + h <= 12 for s, h in pool)
    with pytest.raises(ValueError):
        region_pool(4, (5,))


def test_region_histograms_shape_normalisation_and_cell_sums():
    rng = np.random.default_rng(0)
    imgs = [rng.integers(0, 256, (16, 6, 3), dtype=np.uint8) for _ in range(3)]
    ex = ELFRegions(**SMALL)
    n_ch = len(ex.colours) + 2
    R = len(ex.regions())
    F = np.stack([ex.transform_image(im) for im in imgs])
    assert F.shape == (3, n_ch * R * 8) and F.dtype == np.float32
    h = F.reshape(3, n_ch, R, 8)
    np.testing.assert_allclose(h.sum(-1), 1.0, atol=1e-5)
    assert (h >= 0).all()
    # the whole-image region (last) equals ELFStrips with one strip
    one = ELFStrips(n_strips=1, n_bins=8, gabor_bank=SMALL["gabor_bank"],
                    schmid_bank=SMALL["schmid_bank"]).transform_image(imgs[0])
    np.testing.assert_allclose(h[0, :, -1].ravel(), one, atol=1e-5)
    # a single-cell region equals the matching strip of ELFStrips with n_cells strips
    strips = ELFStrips(n_strips=4, n_bins=8, gabor_bank=SMALL["gabor_bank"],
                       schmid_bank=SMALL["schmid_bank"]).transform_image(imgs[1]).reshape(n_ch, 4, 8)
    np.testing.assert_allclose(h[1, :, 2], strips[:, 2], atol=1e-5)

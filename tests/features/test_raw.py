"""Raw pixels and shipped arrays as features."""


import numpy as np
import pytest

from rankbench.datasets.fgnet import FGNET
from rankbench.datasets.umist import UMIST
from rankbench.errors import DataError
from rankbench.features.raw import Array, Pixels, transductive_pca


def test_pixels_and_array_features(umist_root, fgnet_root):
    ds = UMIST(root=str(umist_root)).load()
    F = Pixels().extract(ds)
    assert F.shape == (5, 10304) and F[3].max() == 1
    assert Pixels(scale=0.5).transform_image(np.full((2, 2), 4, np.uint8)).tolist() == [2.0] * 4
    fg = FGNET(root=str(fgnet_root)).load()
    A = Array(key="landmarks", scale=0.5).extract(fg)
    np.testing.assert_allclose(A, fg.arrays["landmarks"] * 0.5)
    assert not Array.cacheable
    with pytest.raises(DataError, match="no array 'feat'"):
        Array().extract(fg)


@pytest.mark.parametrize("shape", [(12, 40), (40, 12)])
def test_transductive_pca_equals_sklearn_up_to_sign(shape):
    from sklearn.decomposition import PCA as SkPCA

    X = np.random.default_rng(1).normal(size=shape) @ np.diag(np.linspace(3, 0.5, shape[1]))
    Z = transductive_pca(X, 5)
    ref = SkPCA(5, svd_solver="full").fit_transform(X)
    sign = np.sign((Z * ref).sum(0))
    np.testing.assert_allclose(Z, ref * sign, atol=1e-9)
    # components beyond the rank of the centred data are dropped
    assert transductive_pca(X[:4], 10).shape == (4, 3)


def test_transductive_and_unit_norm_options(umist_root, fgnet_root):
    ds = UMIST(root=str(umist_root)).load()
    X = Pixels().extract(ds)
    np.testing.assert_allclose(Pixels(transductive_pca=2).extract(ds), transductive_pca(X, 2))
    fg = FGNET(root=str(fgnet_root)).load()
    L = fg.arrays["landmarks"]
    U = Array(key="landmarks", unit_norm=True).extract(fg)
    np.testing.assert_allclose(np.linalg.norm(U, axis=1), 1.0)
    np.testing.assert_allclose(U * np.linalg.norm(L, axis=1, keepdims=True), L)
    np.testing.assert_allclose(Array(key="landmarks", unit_norm=True, transductive_pca=3).extract(fg),
                               transductive_pca(U, 3))

"""Raw pixels and shipped arrays as features."""


import numpy as np
import pytest

from rankbench.datasets.fgnet import FGNET
from rankbench.datasets.umist import UMIST
from rankbench.errors import DataError
from rankbench.features.raw import Array, Pixels, transductive_pca


def _write_pgm(path, h=112, w=92, value=7, comment=False):
    header = b"P5\n" + (b"# made by a test\n" if comment else b"") + f"{w} {h}\n255\n".encode()
    path.write_bytes(header + np.full(h * w, value, np.uint8).tobytes())


@pytest.fixture
def umist_root(tmp_path):
    for subj, n in (("1a", 2), ("1b", 3)):
        face = tmp_path / "umist_cropped" / subj / "face"
        face.mkdir(parents=True)
        for i in range(n):
            _write_pgm(face / f"{subj}{i:03d}.pgm", value=i, comment=(i == 1))
    (tmp_path / "umist_cropped" / "license.html").write_text("licence")
    (tmp_path / "labels.csv").write_text("# derived\nsubject,paper_label\n1a,0\n1b,2\n")
    return tmp_path


def _write_pts(path, n=68, shift=0.0):
    pts = "\n".join(f"{i + shift:.2f} {2 * i + shift:.2f}" for i in range(n))
    path.write_text(f"version: 1\nn_points: {n}\n{{\n{pts}\n}}\n")


@pytest.fixture
def fgnet_root(tmp_path):
    (tmp_path / "points").mkdir()
    for stem in ("001a01", "001a05", "002a05", "003a09", "003a10a", "004a10b"):
        _write_pts(tmp_path / "points" / f"{stem}.pts", shift=int(stem[:3]))
    return tmp_path


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

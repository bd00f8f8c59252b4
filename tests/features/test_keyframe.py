"""Low-level keyframe extractors (rankbench/features/keyframe.py) against independent oracles on
tiny images: np.histogramdd / cv2.calcHist, a brute-force correlogram loop, scipy.stats moments,
an explicit Haar matrix and a hand-computed 4x4 example, a per-block MPEG-7 edge loop."""

import itertools

import numpy as np
import pytest

from rankbench.datasets.base import Dataset
from rankbench.errors import ConfigError
from rankbench.features.keyframe import autocorrelogram, haar_bands
from rankbench.params import check_params
from rankbench.registry import features

NAMES = ["color_histogram", "color_correlogram", "color_moments", "wavelet_texture", "edge_histogram"]


def rand_img(h, w, seed=0, channels=3):
    shape = (h, w, channels) if channels else (h, w)
    return np.random.default_rng(seed).integers(0, 256, size=shape, dtype=np.uint8)


def edges(length, cells):
    """The documented cell boundaries, written out independently: floor(linspace)."""
    return [int(np.floor(i * length / cells)) for i in range(cells + 1)]


def cells(h, w, grid):
    ey, ex = edges(h, grid), edges(w, grid)
    for i, j in itertools.product(range(grid), range(grid)):
        yield slice(ey[i], ey[i + 1]), slice(ex[j], ex[j + 1])


# --------------------------------------------------------------------------- colour histogram
@pytest.mark.parametrize("grid", [1, 2, 3])
def test_color_histogram_rgb_matches_histogramdd(grid):
    img = rand_img(13, 11, seed=1)
    bins = (4, 3, 2)
    got = features.build("color_histogram", {"space": "rgb", "bins": bins, "grid": grid}).transform_image(img)
    want = []
    for sy, sx in cells(13, 11, grid):
        px = img[sy, sx].reshape(-1, 3).astype(float)
        h, _ = np.histogramdd(px, bins=bins, range=[(0, 256)] * 3)
        want.append(h.ravel() / len(px))
    np.testing.assert_allclose(got, np.concatenate(want), atol=1e-7)


def test_color_histogram_hsv_matches_cv2_calchist():
    import cv2

    img = rand_img(20, 17, seed=2)
    got = features.build("color_histogram", {"bins": (8, 3, 3)}).transform_image(img)
    hsv = cv2.cvtColor(img, cv2.COLOR_RGB2HSV_FULL)
    h = cv2.calcHist([hsv], [0, 1, 2], None, [8, 3, 3], [0, 256, 0, 256, 0, 256]).ravel()
    np.testing.assert_allclose(got, h / h.sum(), atol=1e-7)


def test_grey_image_falls_in_the_zero_saturation_bins():
    grey = rand_img(16, 16, seed=3, channels=0)
    H = features.build("color_histogram", {"bins": (8, 3, 3)}).transform_image(grey).reshape(8, 3, 3)
    assert H[0, 0].sum() == pytest.approx(1.0) and H[1:].sum() == 0 and H[0, 1:].sum() == 0
    # grey = the same image with R = G = B, for every colour extractor
    rgb = np.repeat(grey[:, :, None], 3, axis=2)
    for name in NAMES:
        e = features.build(name, {"grid": 2})
        np.testing.assert_array_equal(e.transform_image(grey), e.transform_image(rgb))


# --------------------------------------------------------------------------- correlogram
def brute_correlogram(codes, n, distances, grid):
    h, w = codes.shape
    cell_of = {}
    for c, (sy, sx) in enumerate(cells(h, w, grid)):
        for y in range(sy.start, sy.stop):
            for x in range(sx.start, sx.stop):
                cell_of[y, x] = c
    out = np.zeros((grid * grid, len(distances), n))
    for j, k in enumerate(distances):
        match = np.zeros((grid * grid, n))
        total = np.zeros((grid * grid, n))
        for y in range(h):
            for x in range(w):
                c = codes[y, x]
                for y2 in range(h):
                    for x2 in range(w):
                        if max(abs(y2 - y), abs(x2 - x)) == k:
                            total[cell_of[y, x], c] += 1
                            match[cell_of[y, x], c] += codes[y2, x2] == c
        out[:, j] = np.divide(match, total, out=np.zeros_like(match), where=total > 0)
    return out


@pytest.mark.parametrize("grid", [1, 2])
def test_autocorrelogram_matches_brute_force(grid):
    codes = np.random.default_rng(4).integers(0, 3, size=(9, 7))
    codes[:3, :3] = 1  # a patch, so that some probabilities are large
    got = autocorrelogram(codes, 4, (1, 2, 3, 9), grid)  # colour 3 absent; distance 9 leaves no pair
    np.testing.assert_allclose(got, brute_correlogram(codes, 4, (1, 2, 3, 9), grid), atol=1e-12)
    assert got[:, :, 3].max() == 0 and got[:, 3].max() == 0


def test_color_correlogram_extractor_uses_the_histogram_colours():
    img = rand_img(12, 10, seed=5) // 128 * 255  # 8 pure colours
    e = features.build("color_correlogram", {"space": "rgb", "bins": (2, 2, 2), "distances": (1, 3), "grid": 2})
    codes = (img[..., 0] // 128 * 2 + img[..., 1] // 128) * 2 + img[..., 2] // 128
    np.testing.assert_allclose(e.transform_image(img), brute_correlogram(codes, 8, (1, 3), 2).ravel(), atol=1e-6)


def test_uniform_image_correlogram_is_one_for_its_colour():
    img = np.full((10, 10, 3), 200, np.uint8)
    v = features.build("color_correlogram", {"space": "rgb", "bins": (2, 2, 2)}).transform_image(img)
    assert v.reshape(4, 8)[:, 7].tolist() == [1, 1, 1, 1] and v.reshape(4, 8)[:, :7].max() == 0


# --------------------------------------------------------------------------- colour moments
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


# --------------------------------------------------------------------------- wavelet
def test_haar_hand_computed_4x4():
    x = np.array([[1, 3, 0, 0],
                  [5, 7, 0, 4],
                  [2, 2, 8, 8],
                  [2, 2, 8, 8]], dtype=float)
    (H1, V1, D1), (H2, V2, D2) = haar_bands(x, 2)
    # top-left block 1 3 / 5 7: H = (1+3-5-7)/2 = -4, V = (1-3+5-7)/2 = -2, D = (1-3-5+7)/2 = 0
    np.testing.assert_allclose(H1, [[-4, -2], [0, 0]])
    np.testing.assert_allclose(V1, [[-2, -2], [0, 0]])
    np.testing.assert_allclose(D1, [[0, 2], [0, 0]])
    # level-1 approximation: [[8, 2], [4, 16]] -> H = (8+2-4-16)/2 = -5, V = (8-2+4-16)/2 = -3, D = 9
    np.testing.assert_allclose([H2[0, 0], V2[0, 0], D2[0, 0]], [-5, -3, 9])


def haar_matrix(n):
    H = np.zeros((n, n))
    for i in range(n // 2):
        H[i, 2 * i:2 * i + 2] = [1, 1]
        H[n // 2 + i, 2 * i:2 * i + 2] = [1, -1]
    return H / np.sqrt(2)


def test_haar_matches_the_separable_matrix_transform():
    x = np.random.default_rng(7).random((16, 8))
    ll = x
    for H, V, D in haar_bands(x, 3):
        h, w = ll.shape
        Y = haar_matrix(h) @ ll @ haar_matrix(w).T
        np.testing.assert_allclose(H, Y[h // 2:, :w // 2], atol=1e-12)  # high along y, low along x
        np.testing.assert_allclose(V, Y[:h // 2, w // 2:], atol=1e-12)
        np.testing.assert_allclose(D, Y[h // 2:, w // 2:], atol=1e-12)
        ll = Y[:h // 2, :w // 2]


def test_wavelet_texture_energies_per_cell():
    grey = rand_img(32, 24, seed=8, channels=0)
    got = features.build("wavelet_texture", {"levels": 2, "grid": 2}).transform_image(grey).reshape(4, 2, 3)
    bands = haar_bands(grey / 255.0, 2)
    for lev, trio in enumerate(bands):
        for b, band in enumerate(trio):
            for c, (sy, sx) in enumerate(cells(*band.shape, 2)):
                assert got[c, lev, b] == pytest.approx(np.sqrt(np.mean(band[sy, sx] ** 2)), rel=1e-5)


def test_wavelet_texture_sees_orientation():
    yy, xx = np.mgrid[0:64, 0:64]
    stripes_h = ((yy // 1) % 2 * 255).astype(np.uint8)  # alternate rows: horizontal structure
    v = features.build("wavelet_texture", {"levels": 1}).transform_image(stripes_h)
    assert v[0] > 0.4 and v[1] == 0 and v[2] == 0


# --------------------------------------------------------------------------- edge histogram
def direct_ehd(grey, block, threshold, grid):
    ny, nx = grey.shape[0] // block, grey.shape[1] // block
    s = block // 2
    types = np.zeros((ny, nx), int)
    r2 = np.sqrt(2)
    for by in range(ny):
        for bx in range(nx):
            def m(i, j):
                y0, x0 = by * block + i * s, bx * block + j * s
                return grey[y0:y0 + s, x0:x0 + s].mean()
            a0, a1, a2, a3 = m(0, 0), m(0, 1), m(1, 0), m(1, 1)
            resp = [abs(a0 - a1 + a2 - a3), abs(a0 + a1 - a2 - a3), abs(r2 * a0 - r2 * a3),
                    abs(r2 * a1 - r2 * a2), abs(2 * a0 - 2 * a1 - 2 * a2 + 2 * a3)]
            if max(resp) >= threshold:
                types[by, bx] = int(np.argmax(resp)) + 1
    out = []
    for sy, sx in cells(ny, nx, grid):
        t = types[sy, sx].ravel()
        out.append([np.sum(t == k) / t.size for k in range(1, 6)])
    return np.array(out).ravel()


@pytest.mark.parametrize("grid", [1, 2, 3])
def test_edge_histogram_matches_direct_per_block_computation(grid):
    img = rand_img(40, 52, seed=9, channels=0)
    img[:, 26:] = img[:, 26:] // 8  # a dark half: strong vertical edges along the border
    e = features.build("edge_histogram", {"grid": grid, "n_blocks": 120, "threshold": 20.0})
    block = int(np.sqrt(40 * 52 / 120) / 2) * 2  # = 4
    np.testing.assert_allclose(e.transform_image(img), direct_ehd(img.astype(float), block, 20.0, grid), atol=1e-6)


def test_edge_types_of_pure_patterns():
    up = np.zeros((16, 16), np.uint8)
    up[:, 8:] = 255
    e = features.build("edge_histogram", {"grid": 1, "n_blocks": 4})  # 8x8 blocks: 4 blocks
    np.testing.assert_allclose(e.transform_image(up), [0, 0, 0, 0, 0])  # edge on block borders only
    shifted = np.zeros((16, 16), np.uint8)
    shifted[:, 4:12] = 255  # each block's left/right halves differ: vertical edges
    np.testing.assert_allclose(e.transform_image(shifted), [1, 0, 0, 0, 0])
    np.testing.assert_allclose(e.transform_image(shifted.T), [0, 1, 0, 0, 0])


# --------------------------------------------------------------------------- all extractors
DIMS = {"color_histogram": 72, "color_correlogram": 128, "color_moments": 9, "wavelet_texture": 9,
        "edge_histogram": 5}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("grid", [1, 2, 3, 5])
def test_any_size_grey_or_colour_deterministic(name, grid):
    e = features.build(name, {"grid": grid})
    for img in (rand_img(37, 61, seed=10), rand_img(9, 4, seed=11, channels=0), rand_img(1, 1, seed=12),
                rand_img(20, 20, seed=13, channels=4)):
        v = e.transform_image(img)
        assert v.dtype == np.float32 and v.shape == (DIMS[name] * grid * grid,) and np.isfinite(v).all()
        np.testing.assert_array_equal(v, features.build(name, {"grid": grid}).transform_image(img.copy()))


def test_extract_on_a_dataset_is_cacheable():
    import pandas as pd

    imgs = np.stack([rand_img(24, 32, seed=s) for s in range(5)])
    ds = Dataset(name="t", items=pd.DataFrame({"id": list("abcde")}), arrays={"images": imgs}, fingerprint="x")
    for name in NAMES:
        e = features.build(name, {"grid": 2})
        X = e.extract(ds)
        assert X.shape == (5, DIMS[name] * 4) and X.dtype == np.float32
        key = e.cache_key()
        assert key["extractor"] == name and key["params"]["grid"] == 2


@pytest.mark.parametrize("name, bad", [
    ("color_histogram", {"grid": 0}), ("color_histogram", {"space": "lab"}),
    ("color_histogram", {"bins": [8, 3]}), ("color_correlogram", {"distances": []}),
    ("color_correlogram", {"distances": [0, 1]}), ("color_moments", {"space": "xyz"}),
    ("wavelet_texture", {"levels": 0}), ("edge_histogram", {"threshold": -1.0}),
    ("edge_histogram", {"grid": "2"}),
])
def test_declared_parameter_constraints(name, bad):
    cls = features.get(name)
    with pytest.raises(ConfigError, match=f"features.{list(bad)[0]}: expected"):
        check_params(cls, bad, "features")
    check_params(cls, {}, "features")  # the defaults are valid


def test_init_only_stores_parameters():
    from sklearn.base import clone

    for name in NAMES:
        e = features.build(name, {"grid": 3})
        assert clone(e).get_params() == e.get_params()

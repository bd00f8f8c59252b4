"""Every histogram extractor gives the features it gave before the histograms were unified.

The reference was computed once with the extractors as they were before ``features/_histogram.py``
(commit 85e6eab): for small generated images (any size, RGB, RGBA, grey, constant) the features
themselves (``data/histograms_reference.npz``, compared to 1e-12), and for the first images of
each real dataset a SHA-256 digest of the float32 features (``data/histograms_realdata.json``,
bit-identical; skipped without the datasets). Regenerate only for an intended change of an
extractor's output (the cache keys features by the extractor's code, so no version to bump)::

    PYTHONPATH=$PWD python tests/features/test_histograms_unchanged.py --write
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from rankbench.registry import datasets, features

DATA = Path(__file__).resolve().parent / "data"
REFERENCE = DATA / "histograms_reference.npz"
REALDATA = DATA / "histograms_realdata.json"

#: (extractor, parameters) of every histogram path, the configs' settings among them
CASES = [
    ("color_strips", {}),
    ("color_strips", {"spaces": ["hsv"], "bins": 8, "n_strips": 3, "size": [24, 12]}),
    ("hsv_hist", {}),
    ("hsv_hist", {"bins": 7}),
    ("lab_hist", {"bins": 10, "joint": False}),
    ("lab_hist", {"bins": [4, 8, 8]}),
    ("lab_hist", {"bins": [3, 5, 7], "joint": False, "image_size": 16}),
    ("color_histogram", {}),
    ("color_histogram", {"grid": 2, "image_size": 16}),
    ("color_histogram", {"space": "rgb", "bins": [4, 4, 4], "grid": 3}),
    ("color_correlogram", {}),
    ("color_correlogram", {"grid": 2, "bins": [4, 2, 2], "distances": [1, 2]}),
    ("color_moments", {}),
    ("color_moments", {"space": "hsv", "grid": 2}),
    ("wavelet_texture", {"grid": 2}),
    ("edge_histogram", {}),
    ("edge_histogram", {"grid": 1, "threshold": 3.0}),
    ("lbp", {"image_size": 16, "grid": 2}),
    ("elf_strips", {}),
    ("elf_strips", {"normalize": "channel", "response": "signed"}),
    ("elf_strips", {"normalize": "l1", "filter_range": "image"}),
    ("elf_strips", {"normalize": "none", "n_strips": 4, "n_bins": 12, "colours": ["H", "S", "Cr"]}),
    ("elf_regions", {"n_cells": 6, "heights": [1, 3]}),
]

#: real datasets and the extractors of the configs that read them (first IMAGES images each)
REAL = {
    "viper": [("elf_strips", {}), ("elf_regions", {}), ("color_strips", {})],
    "towncentre": [("hsv_hist", {}), ("color_histogram", {"grid": 2, "image_size": 64}),
                   ("color_correlogram", {"grid": 2, "image_size": 64}),
                   ("color_moments", {"grid": 2, "image_size": 64}), ("edge_histogram", {"grid": 2, "image_size": 64})],
    "pubfig": [("lab_hist", {"bins": 10, "joint": False}), ("lbp", {})],
    "osr": [("lab_hist", {"bins": [4, 8, 8]}), ("color_histogram", {"grid": 3, "image_size": 128})],
}
IMAGES = 12


def generated_images() -> dict[str, np.ndarray]:
    """Small images covering the input conventions: sizes, RGB / RGBA / grey, flat and smooth."""
    rng = np.random.default_rng(23)
    yy, xx = np.mgrid[0:24, 0:24]
    smooth = np.stack([8 * yy + 3, 10 * xx, 255 - 5 * (xx + yy)], axis=-1).clip(0, 255).astype(np.uint8)
    return {
        "rgb_32x16": rng.integers(0, 256, (32, 16, 3), dtype=np.uint8),
        "rgb_9x7": rng.integers(0, 256, (9, 7, 3), dtype=np.uint8),
        "rgba_16x16": rng.integers(0, 256, (16, 16, 4), dtype=np.uint8),
        "smooth_24x24": smooth,
        "grey_20x12": rng.integers(0, 256, (20, 12), dtype=np.uint8),
        "flat_8x8": np.full((8, 8, 3), 77, np.uint8),
    }


def case_key(i: int, image: str) -> str:
    name, _ = CASES[i]
    return f"{i:02d}-{name}-{image}"


def features_of(name: str, params: dict, img: np.ndarray) -> np.ndarray | None:
    """One image's features, or None where the extractor refuses the image (e.g. grey for hsv_hist,
    RGBA for elf_strips)."""
    from rankbench.errors import DataError

    try:
        return np.asarray(features.build(name, params).transform_image(img))
    except (DataError, ValueError):
        return None


def real_digest(name: str, params: dict, ds) -> str:
    X = np.vstack([np.asarray(features.build(name, params).transform_image(ds.image(i)), np.float32).ravel()
                   for i in range(IMAGES)])
    return hashlib.sha256(np.ascontiguousarray(X).tobytes()).hexdigest()


def real_key(dataset: str, name: str, params: dict) -> str:
    return f"{dataset}/{name}/{json.dumps(params, sort_keys=True)}"


# ----------------------------------------------------------------------------- the tests
@pytest.fixture(scope="module")
def reference():
    with np.load(REFERENCE) as ref:
        return {k: ref[k] for k in ref.files}


def test_the_reference_covers_every_case(reference):
    imgs = generated_images()
    for name, img in imgs.items():
        np.testing.assert_array_equal(reference[f"image-{name}"], img)  # the images themselves are stable
    for i, (name, params) in enumerate(CASES):
        assert any(case_key(i, im) in reference for im in imgs), f"no reference for {name} {params}"


@pytest.mark.parametrize("i", range(len(CASES)), ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_generated_images_give_the_reference_features(reference, i):
    name, params = CASES[i]
    for image, img in generated_images().items():
        got = features_of(name, params, img)
        key = case_key(i, image)
        if key not in reference:
            assert got is None, f"{key}: the extractor used to refuse this image"
            continue
        assert got is not None, f"{key}: the extractor now refuses this image"
        assert got.dtype == reference[key].dtype, key
        np.testing.assert_allclose(got, reference[key], rtol=0, atol=1e-12, err_msg=key)


@pytest.mark.realdata
@pytest.mark.parametrize("dataset", sorted(REAL))
def test_real_images_give_bit_identical_features(dataset):
    from conftest import shared_dataset

    root = shared_dataset(dataset)
    digests = json.loads(REALDATA.read_text())
    ds = datasets.build(dataset, {}).load(str(root.parent))
    for name, params in REAL[dataset]:
        key = real_key(dataset, name, params)
        assert real_digest(name, params, ds) == digests[key], f"{key}: features changed"


# ----------------------------------------------------------------------------- writing the reference
def write_reference(shared: Path) -> None:
    DATA.mkdir(exist_ok=True)
    out = {f"image-{k}": v for k, v in generated_images().items()}
    for i, (name, params) in enumerate(CASES):
        for image, img in generated_images().items():
            got = features_of(name, params, img)
            if got is not None:
                out[case_key(i, image)] = got
    np.savez_compressed(REFERENCE, **out)
    digests = {}
    for dataset, cases in REAL.items():
        ds = datasets.build(dataset, {}).load(str(shared))
        for name, params in cases:
            digests[real_key(dataset, name, params)] = real_digest(name, params, ds)
    REALDATA.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__" and "--write" in sys.argv:
    import os

    write_reference(Path(os.environ.get("RANKBENCH_SHARED_DATA",
                                        Path(__file__).resolve().parents[3] / "shared" / "datasets")))

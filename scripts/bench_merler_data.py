"""Data side of the Merler et al. reproduction: the synthetic collection's cost and rates, and the
keyframe extractors' throughput on real OSR images.

Prints

* ``synthetic_collection`` at the paper's scale (52,347 items, 10 feature types): generation wall
  time, the arrays' size and the growth of the process's peak resident memory; its positive rate
  per concept next to TRECVID 2006's (built-in table, and real ``tv06_gt.mat`` rows when the data
  root has them); and how good each feature type is (MAP over the 20 concepts of the direction
  between the class means, on the whole collection; chance is about the mean positive rate);
* images per second of each keyframe extractor at grid 1 and 5 on ``--n-images`` OSR images
  (256x256 RGB), one process, decoding excluded, next to ``cv2.calcHist`` (a C histogram) as the
  reference for the colour histogram.

Usage: python scripts/bench_merler_data.py --data-root ../shared/datasets [--n-images 200] [--quick]
(--quick: 10 images.)
"""

from __future__ import annotations

import resource
import time
from pathlib import Path

import numpy as np
from benchtools import arguments
from rankbench.datasets.base import read_image
from rankbench.datasets.synthetic_collection import SyntheticCollection
from rankbench.metrics import average_precision
from rankbench.registry import features

EXTRACTORS = ["color_histogram", "color_correlogram", "color_moments", "wavelet_texture", "edge_histogram"]


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kB


def synthetic(data_root: str | None) -> None:
    base = peak_mb()
    t = time.perf_counter()
    ds = SyntheticCollection().load()
    dt = time.perf_counter() - t
    print(f"synthetic_collection (labels: table): {len(ds)} items, {len(ds.info['feature_types'])} feature types, "
          f"generated in {dt:.2f} s; arrays {ds.info['nbytes'] / 2**20:.1f} MiB; peak RSS +{peak_mb() - base:.0f} MiB")
    real = None
    if data_root and (Path(data_root) / "trecvid2006-labels" / "tv06_gt.mat").is_file():
        t = time.perf_counter()
        real = SyntheticCollection(labels="trecvid2006", feature_types=[[16, 0.1]]).load(data_root)
        print(f"synthetic_collection (labels: trecvid2006, one feature type): {time.perf_counter() - t:.2f} s")
    print("\npositive rate per concept, % (TRECVID 2006 = tv06_gt.mat column / 79,484)")
    print(f"{'concept':24s} {'TRECVID06':>9s} {'table':>7s} {'n_pos':>6s}" + ("   tv06 rows  n_pos" if real else ""))
    ref = ds.info["reference_rates"]
    Y = ds.arrays["relevance"]
    for j, c in enumerate(ds.info["concepts"]):
        line = f"{c:24s} {100 * ref[c]:9.3f} {100 * ds.info['positive_rates'][c]:7.3f} {int(Y[:, j].sum()):6d}"
        if real:
            line += f" {100 * real.info['positive_rates'][c]:11.3f} {int(real.arrays['relevance'][:, j].sum()):6d}"
        print(line)
    mean_ref = np.mean(list(ref.values()))
    print(f"{'mean':24s} {100 * mean_ref:9.3f} {100 * Y.mean():7.3f}" + (
        f"        {100 * real.arrays['relevance'].mean():11.3f}" if real else ""))
    neg_pos = [(1 - r) / r for r in ref.values()]
    print(f"irrelevant : relevant, mean over concepts {np.mean(neg_pos):.1f}, max {np.max(neg_pos):.1f} "
          "(paper's TRECVID 2007 set: 49.47, max 385.75)")
    print("\nfeature type quality: MAP (full depth) of the class-mean direction over the 20 concepts")
    R = Y > 0
    for name, spec in ds.info["feature_types"].items():
        X = ds.arrays[f"feat/{name}"]
        aps = [average_precision(X @ (X[y].mean(0) - X[~y].mean(0)), y) for y in R.T]
        print(f"  {name}  dims {spec['dims']:3d}  noise {spec['noise']:5.2f}  MAP {np.mean(aps):.3f}")
    print(f"  (chance: mean positive rate {Y.mean():.4f})")


def throughput(data_root: str, n_images: int) -> None:
    import cv2

    files = sorted((Path(data_root) / "osr" / "images").glob("*.jpg"))
    if not files:
        print("\nno OSR images under the data root: extractor throughput skipped")
        return
    step = max(1, len(files) // n_images)
    t = time.perf_counter()
    imgs = [read_image(f) for f in files[::step][:n_images]]
    print(f"\nextractor throughput on {len(imgs)} OSR images {imgs[0].shape} (decoding alone: "
          f"{len(imgs) / (time.perf_counter() - t):.0f} images/s), images per second, one process")
    print(f"{'extractor':20s} {'grid 1':>8s} {'grid 5':>8s}   dims (grid 1 / 5)")
    for name in EXTRACTORS:
        rates, dims = [], []
        for grid in (1, 5):
            e = features.build(name, {"grid": grid})
            e.transform_image(imgs[0])  # warm-up (first OpenCV call)
            t = time.perf_counter()
            for img in imgs:
                v = e.transform_image(img)
            rates.append(len(imgs) / (time.perf_counter() - t))
            dims.append(v.size)
        print(f"{name:20s} {rates[0]:8.0f} {rates[1]:8.0f}   {dims[0]} / {dims[1]}")
    t = time.perf_counter()
    for img in imgs:
        hsv = cv2.cvtColor(img, cv2.COLOR_RGB2HSV_FULL)
        h = cv2.calcHist([hsv], [0, 1, 2], None, [8, 3, 3], [0, 256, 0, 256, 0, 256])
        h /= h.sum()
    print(f"{'cv2.calcHist (peer)':20s} {len(imgs) / (time.perf_counter() - t):8.0f}")


def main() -> None:
    ap = arguments(__doc__.split("\n\n")[0])
    ap.add_argument("--n-images", type=int, default=200)
    args = ap.parse_args()
    if args.quick:
        args.n_images = 10
    synthetic(args.data_root)
    if args.data_root:
        throughput(args.data_root, args.n_images)


if __name__ == "__main__":
    main()

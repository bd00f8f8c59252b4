"""Small generated data that several test files share: fake dataset folders, toy problems, config texts.

Import it as ``toydata``: tests/ has no __init__.py, so pytest puts tests/ on sys.path when it loads
tests/conftest.py (rootdir-relative "prepend" import mode).
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pandas as pd

from rankbench.datasets.base import Dataset


# ------------------------------------------------------------------------------ fake dataset folders
def write_pgm(path, h=112, w=92, value=7, comment=False):
    """Write a binary (P5) PGM image of one grey value, with a header comment line when asked."""
    header = b"P5\n" + (b"# made by a test\n" if comment else b"") + f"{w} {h}\n255\n".encode()
    path.write_bytes(header + np.full(h * w, value, np.uint8).tobytes())


def make_umist_folder(root):
    """A fake UMIST under root: subjects 1a (2 faces) and 1b (3 faces) of 112x92, a licence, labels.csv."""
    for subj, n in (("1a", 2), ("1b", 3)):
        face = root / "umist_cropped" / subj / "face"
        face.mkdir(parents=True)
        for i in range(n):
            write_pgm(face / f"{subj}{i:03d}.pgm", value=i, comment=(i == 1))
    (root / "umist_cropped" / "license.html").write_text("licence")
    (root / "labels.csv").write_text("# derived\nsubject,paper_label\n1a,0\n1b,2\n")
    return root


def write_pts(path, n=68, shift=0.0):
    """Write an FG-NET .pts landmark file of n points (i + shift, 2 i + shift)."""
    pts = "\n".join(f"{i + shift:.2f} {2 * i + shift:.2f}" for i in range(n))
    path.write_text(f"version: 1\nn_points: {n}\n{{\n{pts}\n}}\n")


def make_fgnet_points(root):
    """A fake FG-NET under root: points/ with six faces of subjects 001-004, each shifted by its subject."""
    (root / "points").mkdir()
    for stem in ("001a01", "001a05", "002a05", "003a09", "003a10a", "004a10b"):
        write_pts(root / "points" / f"{stem}.pts", shift=int(stem[:3]))
    return root


# ------------------------------------------------------------------------------ toy problems
def toy_ranking_pairs(n=60, d=8, n_pairs=400, seed=0, similar=True):
    """Toy pairwise ranking: X, pairs (better first), signs (1 ordered, 0 tied; similar=False drops ties), y."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.round(X @ rng.normal(size=d))
    P = rng.integers(0, n, size=(n_pairs, 2))
    P = P[P[:, 0] != P[:, 1]]
    diff = y[P[:, 0]] - y[P[:, 1]]
    if not similar:
        P, diff = P[diff != 0], diff[diff != 0]
    P = np.where((diff < 0)[:, None], P[:, ::-1], P)
    return X, P, (diff != 0).astype(int), y


def two_camera_people(n=12, d=7, noise=0.3, seed=0):
    """Toy re-identification: X, identities, cameras of n people seen once by camera a and once by b."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(n), 2)
    cams = np.tile(np.array(["a", "b"]), n)
    X = rng.random((n, d))[y] + noise * rng.random((2 * n, d))
    return X, y, cams


def bipartite_scores(n, K, seed, positive_rate, spread, lift):
    """Toy bipartite ranking: K weak scores in [-1, 1] per item (relevant items lifted) and 0/1 labels."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < positive_rate).astype(int)
    y[:2] = [1, 0]
    O = np.clip(rng.normal(size=(n, K)) * spread + lift * y[:, None] * rng.random(K), -1, 1)
    return O, y


def three_level_ordinal(n_per=8, d=12, seed=0):
    """Toy ordinal data: X, y with n_per points at each level 0, 1, 2; feature 0 shifted by 2 * level."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0.0, 1.0, 2.0], n_per)
    X = rng.normal(size=(len(y), d))
    X[:, 0] += 2.0 * y
    return X, y


def labelled_blobs(n_per=30, k=3, seed=0, train_col=False):
    """Toy classification: X and a Dataset of k 2-D Gaussian blobs labelled 5, 15, 25, ... (not 0..k-1)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 4, (k, 2))
    y = np.repeat(np.arange(k), n_per) * 10 + 5  # labels that are not 0..k-1
    X = centres[np.repeat(np.arange(k), n_per)] + rng.normal(size=(k * n_per, 2))
    items = pd.DataFrame({"id": [f"i{i}" for i in range(len(y))], "label": y})
    if train_col:
        items["train"] = rng.random(len(y)) < 0.6
    return X, Dataset(name="blobs", items=items, arrays={"feat": X})


# ------------------------------------------------------------------------------ config texts
def synthetic_reid_config(n_people, n_test, ranks, trials):
    """Config lines for a quick run: synthetic re-id people, colour strips (8 bins), reid protocol, trials."""
    return (f"dataset: {{name: synthetic_reid, n_people: {n_people}}}\n"
            "features: [{name: colour, extractor: color_strips, bins: 8}]\n"
            f"protocol: {{name: reid, n_test: {n_test}, ranks: [{', '.join(map(str, ranks))}]}}\n"
            f"trials: {trials}\n")


# ------------------------------------------------------------------------------ run-folder records
def record(setting="", trial=0, method="A", metrics=None, curves=None, extra=None, **fields):
    """A valid finished TrialRecord for report tests (seed 0, no time spent); ``metrics`` default
    to one cost (a finished record holds at least one metric)."""
    from rankbench.runfolder import TrialRecord

    return TrialRecord.build({"setting": setting, "trial": trial, "method": method, "seed": 0, "wall_s": 0.0,
                              "metrics": metrics or {"test_s": 0.0}, "curves": curves or {},
                              "extra": extra or {}, **fields})


def write_tracks_table(folder, rng) -> None:
    """``tracks.csv`` (track, frame: three people, 16 crops each 9 frames apart; track 139 seen twice,
    the second time 365 frames later) and ``tracks.npy`` (features that tell the people apart)."""
    rows = [(t, 100 * k + 9 * f) for t, k in ((139, 0), (58, 1), (55, 2)) for f in range(16)] \
        + [(139, 500 + 9 * f) for f in range(16)]
    pd.DataFrame(rows, columns=["track", "frame"]).to_csv(folder / "tracks.csv", index=False)
    who = np.array([t for t, _ in rows])
    np.save(folder / "tracks.npy", (who[:, None] == np.array([139, 58, 55])[None, :]) + rng.normal(0, 0.4, (len(rows), 3)))


def people(folder: Path, n: int = 6, copies: dict | None = None, rng=None) -> list[str]:
    """Two images per person (cameras a and b), each different; ``copies`` {target: source}
    makes a file a byte copy of another."""
    rng = rng or np.random.default_rng(0)
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for p in range(n):
        for cam in "ab":
            name = f"{p:04d}_{cam}.png"
            cv2.imwrite(str(folder / name), rng.integers(0, 255, (16, 8, 3), dtype=np.uint8))
            names.append(name)
    for target, source in (copies or {}).items():
        (folder / target).write_bytes((folder / source).read_bytes())
    return names

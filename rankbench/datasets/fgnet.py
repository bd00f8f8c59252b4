"""FG-NET ageing database (Lanitis): 68 facial landmarks per image, subject and age in the file name.

Layout: ``points/<PPP>a<AA>[a|b].pts`` (68 points, ``version: 1 / n_points: 68 / { x y ... }``) and,
optionally, ``images/<PPP>A<AA>[a|b].JPG``; a points file and an image pair up when their stems
match case-insensitively. Items are ordered by file name. The landmarks, flattened
``x1, y1, ..., x68, y68`` (136 values, Yu & Li's feature), are ``arrays["landmarks"]``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import numpy as np
import pandas as pd
from pydantic import Field

from ..errors import ConfigError, DataError
from ..params import NonNegativeInt
from ..registry import datasets
from .base import Dataset, Loader, fingerprint_files, require_dir

N_POINTS = 68
_NAME = re.compile(r"^(\d{3})a(\d{2})([ab]?)$", re.IGNORECASE)


def read_pts(path: Path, n_points: int = N_POINTS) -> np.ndarray:
    """Read a landmark file (``n_points: N`` header, points between braces) as an (N, 2) array."""
    if not Path(path).is_file():
        raise DataError(f"{path}: named like a landmark file but is not a file")
    text = Path(path).read_text(errors="replace")
    m = re.search(r"n_points:\s*(\d+)", text)
    body = re.search(r"\{(.*)\}", text, re.DOTALL)
    if not m or not body:
        raise DataError(f"{path}: not a landmark file (expected 'n_points: N' and points between '{{' and '}}')")
    try:
        pts = np.array(body.group(1).split(), dtype=float).reshape(-1, 2)
    except ValueError:
        raise DataError(f"{path}: landmark values are not pairs of numbers") from None
    if len(pts) != int(m.group(1)) or len(pts) != n_points:
        raise DataError(f"{path}: {len(pts)} points (header says {m.group(1)}); expected {n_points}")
    return pts


@datasets.register("fgnet")
class FGNET(Loader):
    """FG-NET ageing: 1002 faces of 82 people with 68 landmarks each; ages selected and relabelled.

    Parameters
    ----------
    root : str, optional
        The dataset folder (holding ``points/``); default ``<data-root>/fgnet``.
    ages : list of int, optional
        Keep only these ages (default: all). Every selected age must have images.
    relabel : dict or list, optional
        The ``label`` of each kept age: ``{age: label}`` or a list parallel to ``ages``
        (Yu & Li: ages 1, 5, 9, 15, 19 -> 1..5). Default: the age itself.
    images : bool
        Also pair each points file with ``images/<stem>.JPG`` (case-insensitive); the column
        ``path`` then holds the image. A missing image is an error.
    unlabelled : bool
        With ``ages``: keep the images of the other ages too, with no label (NaN). Protocols
        neither train nor test on them; they serve unsupervised, transductive feature steps only
        (Yu & Li's published FG-NET data is a PCA over all 1002 images, of which the experiment
        uses the 145 of five ages).
    """

    folder = "fgnet"
    layout = "points/<PPP>a<AA>[a|b].pts (68 landmarks), optional images/<PPP>A<AA>[a|b].JPG"

    def __init__(self, root: str | None = None, ages: Annotated[list[NonNegativeInt], Field(min_length=2)] | None = None,
                 relabel: dict[int, float] | list[float] | None = None, images: bool = False,
                 unlabelled: bool = False):
        self.root = root
        self.ages = ages
        self.relabel = relabel
        self.images = images
        self.unlabelled = unlabelled

    def _label_map(self) -> dict[int, float] | None:
        if self.relabel is None:
            return None
        if isinstance(self.relabel, dict):
            return {int(k): float(v) for k, v in self.relabel.items()}
        if self.ages is None or len(self.relabel) != len(self.ages):
            raise ConfigError("dataset fgnet: relabel as a list needs 'ages' of the same length "
                              f"(ages={self.ages}, relabel={self.relabel})")
        return {int(a): float(v) for a, v in zip(self.ages, self.relabel)}

    def load(self, data_root=None) -> Dataset:
        root = self.root_dir(data_root)
        pdir = require_dir(root / "points", "dataset fgnet", self.layout)
        files = sorted(p for p in pdir.iterdir() if p.suffix.lower() == ".pts")
        if not files:
            raise DataError(f"dataset fgnet: no .pts files in {pdir}; expected layout: {self.layout}")
        labels = self._label_map()
        ages = None if self.ages is None else [int(a) for a in self.ages]
        if labels is not None:
            unmapped = [a for a in (ages or []) if a not in labels]
            if unmapped:
                raise ConfigError(f"dataset fgnet: relabel gives no label for age {unmapped[0]}")
        rows, paths = [], []
        for f in files:
            m = _NAME.match(f.stem)
            if not m:
                raise DataError(f"dataset fgnet: unexpected file name {f.name}; expected layout: {self.layout}")
            age = int(m.group(2))
            if ages is not None and age not in ages and not self.unlabelled:
                continue
            rows.append({"id": f.stem.lower(), "subject": m.group(1), "age": age})
            paths.append(f)
        items = pd.DataFrame(rows, columns=["id", "subject", "age"])
        if ages is not None:
            counts = items["age"].value_counts()
            empty = [a for a in ages if counts.get(a, 0) == 0]
            if empty:
                raise DataError(f"dataset fgnet: no images of age {empty[0]} in {pdir} "
                                f"(selected ages: {ages})")
        items["label"] = items["age"].map(labels).astype(float) if labels else items["age"].astype(float)
        if ages is not None and self.unlabelled:
            items.loc[~items["age"].isin(ages), "label"] = np.nan
        landmarks = np.stack([read_pts(p).ravel() for p in paths]) if paths else np.zeros((0, 2 * N_POINTS))
        if self.images:
            idir = require_dir(root / "images", "dataset fgnet (images: true)", self.layout)
            by_stem = {p.stem.lower(): p for p in idir.iterdir() if p.is_file()}
            missing = [s for s in items["id"] if s not in by_stem]
            if missing:
                raise DataError(f"dataset fgnet: no image for {missing[0]} in {idir} "
                                f"(expected {missing[0].upper()}.JPG, any case)")
            items["path"] = [str(by_stem[s]) for s in items["id"]]
        return Dataset(
            name="fgnet",
            items=items,
            arrays={"landmarks": landmarks},
            info={"root": str(root), "ages": ages, "relabel": labels},
            fingerprint=fingerprint_files(paths, extra=repr((ages, labels) + ((True,) if self.unlabelled else ()))),
        )

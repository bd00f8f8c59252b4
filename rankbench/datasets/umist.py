"""UMIST faces (Graham & Allinson 1998), cropped version: 575 grey 112x92 images of 20 people.

Layout: ``umist_cropped/<subject>/face/<subject><NNN>.pgm`` (binary PGM, P5). Items are ordered by
subject, then file name. The ordinal label of an image comes from its subject, through a mapping
given in the config (the data ship no per-subject attributes): ``labels`` is either a dict
``{subject: label}`` or the path of a CSV with a ``subject`` column and a ``label_column``.

``labels: authors`` is the documented alternative: the labelling of Yu & Li's published data
(``UMISTlabel.csv`` of github.com/mengzhicao0414/ImageRanking, commit 2f530d1), which is positional,
not per subject: in subject / file order the first 111 images are label 0, the next 239 label 1
and the last 225 label 2 (the paper's counts), so subjects 1d and 1m are split across two labels
and about 55 % of the images differ from a by-eye sex / glasses labelling.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ConfigError, DataError
from ..registry import datasets
from .base import Dataset, Loader, fingerprint_files, not_a_file, require_dir
from .table import numbers, read_table, text

HEIGHT, WIDTH = 112, 92
#: images per label (0, 1, 2) of the authors' positional labelling, in subject / file order
AUTHORS_COUNTS = (111, 239, 225)


def read_pgm(path: Path) -> np.ndarray:
    """Read an 8-bit binary PGM (P5) as a (H, W) uint8 array on 0..255 (grey levels scaled from the
    file's maxval), naming the file on any problem."""
    data = Path(path).read_bytes()
    if not data.startswith(b"P5"):
        raise DataError(f"{path}: not a binary PGM image (expected magic 'P5', got {data[:2]!r})")
    # header: magic, width, height, maxval, separated by whitespace; '#' comments allowed
    fields, pos = [], 2
    token = re.compile(rb"\s*(?:#[^\n]*\n\s*)*(\d+)")
    for _ in range(3):
        m = token.match(data, pos)
        if not m:
            raise DataError(f"{path}: malformed PGM header")
        fields.append(int(m.group(1)))
        pos = m.end()
    width, height, maxval = fields
    if not 1 <= maxval <= 255:
        raise DataError(f"{path}: PGM maxval {maxval}; expected an 8-bit image (maxval 1..255)")
    pixels = np.frombuffer(data, dtype=np.uint8, offset=pos + 1)
    if pixels.size < width * height:
        raise DataError(f"{path}: truncated PGM ({pixels.size} of {width * height} pixels)")
    pixels = pixels[: width * height].reshape(height, width)
    if pixels.max(initial=0) > maxval:
        raise DataError(f"{path}: a pixel of {int(pixels.max())} above the PGM's maxval {maxval}")
    # a grey level is a fraction of maxval: rescaled to 0..255, as every other image is read
    return pixels if maxval == 255 else np.rint(pixels * (255.0 / maxval)).astype(np.uint8)


def subject_labels(labels, label_column: str, where: str) -> dict[str, float]:
    """The ``{subject: label}`` mapping from a dict or a CSV path, every label a finite number and
    every subject labelled once."""
    if isinstance(labels, dict):
        try:
            mapping = {str(k): float(v) for k, v in labels.items()}
        except (TypeError, ValueError) as e:
            raise ConfigError(f"{where}: labels must map subject -> number ({e})") from None
        bad = [s for s, v in mapping.items() if not np.isfinite(v)]
        if bad:
            raise ConfigError(f"{where}: labels: subject {bad[0]!r}: expected a finite number, got {mapping[bad[0]]}")
        return mapping
    path = Path(str(labels)).expanduser()
    if not path.is_file():
        raise ConfigError(f"{where}: labels file {path} {not_a_file(path)} (expected a CSV with columns "
                          f"'subject' and {label_column!r}, or a mapping {{subject: label}})")
    table = read_table(path, comment="#")
    for col in ("subject", label_column):
        if col not in table.columns:
            raise DataError(f"{path}: no column {col!r} (has: {', '.join(table.columns)})")
    subjects, values = text(table, "subject", str(path)), numbers(table, label_column, str(path))
    twice = pd.Series(subjects).duplicated().to_numpy()
    if twice.any():
        raise DataError(f"{path}: column 'subject', row {np.flatnonzero(twice)[0] + 1}: subject "
                        f"{subjects[twice][0]!r} is labelled twice; expected one row per subject")
    return dict(zip(subjects, values))


@datasets.register("umist")
class UMIST(Loader):
    """UMIST cropped faces: 575 grey 112x92 PGM images of 20 subjects, ordinal labels per subject.

    Parameters
    ----------
    root : str, optional
        The dataset folder (holding ``umist_cropped/``); default ``<data-root>/umist``.
    labels : dict or str, optional
        ``{subject: label}`` or a CSV path (relative paths are read from the dataset folder).
        Every subject folder must have a label. ``"authors"``: Yu & Li's published positional
        labels (see the module docstring; needs the 575 images). Without it there is no
        ``label`` column.
    label_column : str
        Column of the CSV holding the label (default ``paper_label``).
    """

    folder = "umist"
    layout = "umist_cropped/<subject>/face/<subject><NNN>.pgm, 8-bit binary PGM, 112 high x 92 wide"

    def __init__(self, root: str | None = None,
                 labels: dict[str, int | float | dict[str, int | float]] | str | None = None,
                 label_column: str = "paper_label"):
        self.root = root
        self.labels = labels
        self.label_column = label_column

    def load(self, data_root=None) -> Dataset:
        root = self.root_dir(data_root)
        base = require_dir(root / "umist_cropped", "dataset umist", self.layout)
        subjects = sorted(p.name for p in base.iterdir() if p.is_dir() and p.name != "license_files")
        if not subjects:
            raise DataError(f"dataset umist: no subject folders in {base}; expected layout: {self.layout}")
        mapping = None
        if self.labels is not None and self.labels != "authors":
            lab = self.labels
            if isinstance(lab, str) and not Path(lab).expanduser().is_absolute() and (root / lab).is_file():
                lab = str(root / lab)
            mapping = subject_labels(lab, self.label_column, "dataset umist")
            missing = [s for s in mapping if s not in subjects]
            if missing:
                raise DataError(f"dataset umist: subject folder {base / missing[0]} not found "
                                f"(labels name it); expected layout: {self.layout}")
            unlabelled = [s for s in subjects if s not in mapping]
            if unlabelled:
                raise ConfigError(f"dataset umist: labels give no label for subject {unlabelled[0]!r}")
        rows, images, paths = [], [], []
        for subj in subjects:
            face = require_dir(base / subj / "face", f"dataset umist subject {subj}", self.layout)
            files = sorted(p for p in face.iterdir() if p.is_file() and not p.name.startswith("."))
            if not files:
                raise DataError(f"dataset umist: no images in {face}; expected layout: {self.layout}")
            for f in files:
                if f.suffix.lower() != ".pgm":
                    raise DataError(f"dataset umist: {f} is not a .pgm file; expected layout: {self.layout}")
                img = read_pgm(f)
                if img.shape != (HEIGHT, WIDTH):
                    raise DataError(f"dataset umist: {f} is {img.shape[1]}x{img.shape[0]} (w x h); "
                                    f"expected {WIDTH}x{HEIGHT}")
                rows.append({"id": f.stem, "subject": subj, "path": str(f)})
                images.append(img)
                paths.append(f)
        items = pd.DataFrame(rows)
        if mapping is not None:
            items["label"] = items["subject"].map(mapping).astype(float)
        elif self.labels == "authors":
            if len(items) != sum(AUTHORS_COUNTS):
                raise DataError(f"dataset umist: labels: authors needs the {sum(AUTHORS_COUNTS)} images of "
                                f"the cropped UMIST set; {base} has {len(items)}")
            items["label"] = np.repeat([0.0, 1.0, 2.0], AUTHORS_COUNTS)
        return Dataset(
            name="umist",
            items=items,
            arrays={"images": np.stack(images)},
            info={"root": str(root), "subject_labels": mapping},
            fingerprint=fingerprint_files(paths, extra="authors" if self.labels == "authors"
                                          else repr(sorted((mapping or {}).items()))),
        )

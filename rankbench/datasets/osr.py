"""Outdoor Scene Recognition (OSR, Oliva & Torralba 2001): Parikh & Grauman's relative attributes
(``osr``) and the scenes as a retrieval collection with rare concepts (``osr_scenes``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ConfigError, DataError
from ..params import NonNegativeInt, OpenFraction, PositiveInt
from ..registry import datasets
from .base import RELEVANCE_CODES, Dataset, Loader, check_image_sizes, fingerprint_files, require_dir, require_file


def read_strength_csv(path) -> pd.DataFrame:
    """``relative_ordering.csv`` (rows = attributes, columns = categories; '#' comments) ->
    a categories x attributes DataFrame of strengths (larger = more). Names are kept as written
    (``NA``, ``007``); a mistake is one line naming the file and the attribute or category."""
    try:
        raw = pd.read_csv(path, comment="#", header=None, dtype=str, keep_default_na=False)
    except Exception as exc:
        raise DataError(f"{path}: cannot be parsed as CSV ({str(exc).strip().splitlines()[-1]}); expected a header "
                        "'attribute,<category>,...' and one row of strengths per attribute") from None
    raw = raw.apply(lambda col: col.str.strip())
    if raw.shape[0] < 2 or raw.shape[1] < 2:
        raise DataError(f"{path}: expected a header 'attribute,<category>,...' and one row of strengths per attribute")
    cats, attrs, cells = pd.Index(raw.iloc[0, 1:]), pd.Index(raw.iloc[1:, 0]), raw.iloc[1:, 1:]
    if (cats == "").any():
        raise DataError(f"{path}: header column {int(np.argmax(cats == '')) + 2} names no category (a trailing "
                        "comma?); expected a category name above every column of strengths")
    for kind, names, unit in (("category", cats, "column"), ("attribute", attrs, "row")):
        twice = names[names.duplicated()]
        if len(twice):
            raise DataError(f"{path}: {kind} {twice[0]!r} has two {unit}s; expected one {unit} per {kind}")
    values = cells.apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
    bad = np.argwhere(~np.isfinite(values))
    if len(bad):
        (i, j) = bad[0]
        got = repr(cells.iat[i, j]) if cells.iat[i, j] else "nothing"
        raise DataError(f"{path}: attribute {attrs[i]!r}, category {cats[j]!r}: expected a finite strength, got "
                        f"{got} ({len(bad)} such cell(s))")
    table = pd.DataFrame(values, index=attrs, columns=cats)
    flat = table.index[table.nunique(axis=1) < 2]
    if len(flat):
        raise DataError(f"{path}: attribute {flat[0]!r} gives every category the same strength; expected "
                        "at least two strengths (there is nothing to order)")
    return table.T


#: (height, width) of every OSR image
SIZE = (256, 256)


def scan_osr(root: Path, what: str, layout: str, check_images: bool = True) -> tuple[pd.DataFrame, pd.DataFrame, Path]:
    """The OSR folder's images as items (``id``, ``category``: the file-name prefix, ``path``;
    sorted by name), the categories x attributes strength table and the CSV it came from;
    ``what`` names the loader in errors. ``check_images`` checks every image's size from its header."""
    csv = require_file(root / "relative_ordering.csv", what, layout)
    strength = read_strength_csv(csv)
    img_dir = require_dir(root / "images", what, layout)
    files = sorted(p for p in img_dir.iterdir() if p.suffix.lower() in (".jpg", ".jpeg", ".png"))
    if not files:
        raise DataError(f"{what}: no images in {img_dir}; expected layout: {layout}")
    cats = [p.name.split("_", 1)[0] for p in files]
    bad = [p.name for p, c in zip(files, cats) if "_" not in p.name or c not in strength.index]
    if bad:
        raise DataError(f"{what}: image {img_dir / bad[0]} has no known category prefix "
                        f"(known: {', '.join(strength.index)}); expected layout: {layout}")
    if check_images:
        check_image_sizes(files, SIZE, what)
    items = pd.DataFrame({"id": [p.stem for p in files], "category": cats, "path": [str(p) for p in files]})
    return items, strength, csv


_LAYOUT = "osr/images/<category>_<name>.jpg and osr/relative_ordering.csv " \
          "(rows attribute,<category>...; larger = more)"


@datasets.register("osr")
class OSR(Loader):
    """OSR outdoor scenes: 2688 images of 8 categories, 6 attributes ordered per category.

    The category is the file-name prefix (``coast_arnat59.jpg`` -> ``coast``). There is no
    official training split here; the comparison protocol draws ``n_train_per_category`` training
    images per category with a recorded seed (Parikh & Grauman used 30).
    """

    folder = "osr"
    layout = _LAYOUT

    def __init__(self, root: str | None = None, n_per_category: PositiveInt | None = None,
                 check_images: bool = True):
        self.root = root
        self.n_per_category = n_per_category
        self.check_images = check_images

    def load(self, data_root=None) -> Dataset:
        root = self.root_dir(data_root)
        items, strength, csv = scan_osr(root, "dataset osr", self.layout, self.check_images)
        if self.n_per_category is not None:   # the first n of each category, by name
            items = items[items.groupby("category").cumcount() < int(self.n_per_category)].reset_index(drop=True)
        return Dataset(
            name="osr",
            items=items,
            info={"attributes": list(strength.columns), "strength": strength, "root": str(root)},
            fingerprint=fingerprint_files([csv, *items["path"]], extra="osr"),
        )


@datasets.register("osr_scenes")
class OSRScenes(Loader):
    """OSR's 2688 scenes as a retrieval collection: the 8 categories are the concepts, positives subsampled.

    Merler et al.'s TRECVID concepts are rare (irrelevant : relevant = 49.47 on average); OSR's
    categories are not (10-15 % each). For each concept this loader keeps ``positive_rate`` of the
    whole collection, ``round(positive_rate * 2688)`` images drawn from the category with
    ``random_state``, as relevant (1); the category's other images become unjudged (-1) for that
    concept, so they are neither positives nor negatives there (the retrieval protocol leaves
    them out of training and AP, as ``trec_eval -J``); every other category's image is a judged
    negative (0). One image is thus relevant for at most one concept and unjudged for at most one.

    Counts with the default ``positive_rate = 0.02`` (54 positives per concept):

    ============  ======  ========  ==========  =========  ===================  ==================
    concept       images  relevant  unjudged    negatives  rate among judged    negatives : relev.
    ============  ======  ========  ==========  =========  ===================  ==================
    coast            360        54         306       2328  2.27 %               43.1
    forest           328        54         274       2360  2.24 %               43.7
    highway          260        54         206       2428  2.18 %               45.0
    insidecity       308        54         254       2380  2.22 %               44.1
    mountain         374        54         320       2314  2.28 %               42.9
    opencountry      410        54         356       2278  2.32 %               42.2
    street           292        54         238       2396  2.20 %               44.4
    tallbuilding     356        54         302       2332  2.26 %               43.2
    ============  ======  ========  ==========  =========  ===================  ==================

    (negatives : relevant 43.6 on average, close to the paper's 49.47.) ``positive_rate: null``
    keeps every image of the category relevant (no unjudged items; rates 9.7-15.3 %).

    Items: ``id``, ``category``, ``path`` (the same items and order as the ``osr`` loader, whose
    fingerprint it shares, so image features are computed once for both). ``arrays["relevance"]``
    int8 items x concepts (1 / 0 / -1 as above), ``info["concepts"]`` (categories, sorted),
    ``info["n_relevant"]``, ``info["n_judged"]``.

    Parameters
    ----------
    root : str, optional
        The OSR folder (default ``<data-root>/osr``).
    positive_rate : float in (0, 1) or None
        Relevant images per concept as a share of the collection (default 0.02); at most the
        smallest category's share (260 / 2688 = 0.097 here).
    random_state : int
        Seed of the subsampling (concepts drawn in order from one generator).
    """

    folder = "osr"
    layout = _LAYOUT

    def __init__(self, root: str | None = None, positive_rate: OpenFraction | None = 0.02,
                 random_state: NonNegativeInt = 0, check_images: bool = True):
        self.root = root
        self.positive_rate = positive_rate
        self.random_state = random_state
        self.check_images = check_images

    def load(self, data_root=None) -> Dataset:
        root = self.root_dir(data_root)
        items, _, csv = scan_osr(root, "dataset osr_scenes", self.layout, self.check_images)
        cats_arr = items["category"].to_numpy()
        concepts = sorted(set(cats_arr))
        n = len(items)
        R = np.zeros((n, len(concepts)), dtype=np.int8)
        rng = np.random.default_rng(int(self.random_state))
        n_keep = None if self.positive_rate is None else int(round(float(self.positive_rate) * n))
        if n_keep == 0:
            raise ConfigError(f"dataset.positive_rate: {self.positive_rate} of {n} images is no positive; "
                              f"expected at least {1 / n:.2g}")
        for j, c in enumerate(concepts):
            members = np.flatnonzero(cats_arr == c)
            if n_keep is None:
                R[members, j] = 1
                continue
            if n_keep > len(members):
                raise ConfigError(f"dataset.positive_rate: {self.positive_rate} asks for {n_keep} positives per "
                                  f"concept, but category {c} has {len(members)} images (at most "
                                  f"{len(members) / n:.4f} here)")
            R[members, j] = -1
            R[rng.choice(members, n_keep, replace=False), j] = 1
        return Dataset(
            name="osr_scenes",
            items=items,
            arrays={"relevance": R},
            info={"concepts": concepts, "root": str(root), "relevance_codes": RELEVANCE_CODES,
                  "positive_rate": self.positive_rate,
                  "n_relevant": {c: int((R[:, j] == 1).sum()) for j, c in enumerate(concepts)},
                  "n_judged": {c: int((R[:, j] >= 0).sum()) for j, c in enumerate(concepts)}},
            fingerprint=fingerprint_files([csv, *items["path"]], extra="osr"),
        )

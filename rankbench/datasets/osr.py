"""Outdoor Scene Recognition (OSR, Oliva & Torralba 2001) with Parikh & Grauman's relative attributes."""

from __future__ import annotations

import pandas as pd

from ..errors import DataError
from ..params import PositiveInt
from ..registry import datasets
from .base import Dataset, Loader, fingerprint_files, require_dir, require_file


def read_strength_csv(path) -> pd.DataFrame:
    """``relative_ordering.csv`` (rows = attributes, columns = categories; '#' comments) ->
    a categories x attributes DataFrame of strengths (larger = more)."""
    try:
        table = pd.read_csv(path, comment="#", index_col=0)
    except Exception as exc:
        raise DataError(f"{path}: cannot be parsed as CSV ({exc}); expected a header "
                        "'attribute,<category>,...' and one row of integer strengths per attribute")
    if table.empty or not all(pd.api.types.is_numeric_dtype(t) for t in table.dtypes):
        raise DataError(f"{path}: expected a header 'attribute,<category>,...' and one row of numeric "
                        "strengths per attribute")
    table.index = table.index.astype(str).str.strip()
    table.columns = table.columns.astype(str).str.strip()
    return table.T.astype(float)


@datasets.register("osr")
class OSR(Loader):
    """OSR outdoor scenes: 2688 images of 8 categories, 6 attributes ordered per category.

    The category is the file-name prefix (``coast_arnat59.jpg`` -> ``coast``). There is no
    official training split here; the comparison protocol draws ``n_train_per_category`` training
    images per category with a recorded seed (Parikh & Grauman used 30).
    """

    folder = "osr"
    layout = "osr/images/<category>_<name>.jpg and osr/relative_ordering.csv " \
             "(rows attribute,<category>...; larger = more)"

    def __init__(self, root: str | None = None, n_per_category: PositiveInt | None = None):
        self.root = root
        self.n_per_category = n_per_category

    def load(self, data_root=None) -> Dataset:
        root = self.root_dir(data_root)
        csv = require_file(root / "relative_ordering.csv", "dataset osr", self.layout)
        strength = read_strength_csv(csv)
        img_dir = require_dir(root / "images", "dataset osr", self.layout)
        files = sorted(p for p in img_dir.iterdir() if p.suffix.lower() in (".jpg", ".jpeg", ".png"))
        if not files:
            raise DataError(f"dataset osr: no images in {img_dir}; expected layout: {self.layout}")
        cats = [p.name.split("_", 1)[0] for p in files]
        bad = [p.name for p, c in zip(files, cats) if "_" not in p.name or c not in strength.index]
        if bad:
            raise DataError(f"dataset osr: image {img_dir / bad[0]} has no known category prefix "
                            f"(known: {', '.join(strength.index)}); expected layout: {self.layout}")
        if self.n_per_category is not None:
            seen: dict[str, int] = {}
            keep = []
            for p, c in zip(files, cats):
                seen[c] = seen.get(c, 0) + 1
                if seen[c] <= int(self.n_per_category):
                    keep.append((p, c))
            files, cats = [p for p, _ in keep], [c for _, c in keep]
        items = pd.DataFrame({
            "id": [p.stem for p in files],
            "category": cats,
            "path": [str(p) for p in files],
        })
        return Dataset(
            name="osr",
            items=items,
            info={"attributes": list(strength.columns), "strength": strength, "root": str(root)},
            fingerprint=fingerprint_files([csv, *files], extra="osr"),
        )

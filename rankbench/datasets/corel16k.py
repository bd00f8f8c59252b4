"""Corel16k (Barnard et al., "Matching words and pictures", JMLR 2003) in its MATLAB form, as a
retrieval collection: each of the 153 concepts is one ranking task (a real substitute for Merler et
al.'s TRECVID keyframes, whose features are not public; 87 of its concepts are under 1 % positive).
"""

from __future__ import annotations

from typing import Annotated

import numpy as np
import pandas as pd
from pydantic import Field

from ..errors import DataError
from ..registry import datasets
from .base import Dataset, Loader, fingerprint_files, require_file
from .multilabel import read_mulan_labels


@datasets.register("corel16k")
class Corel16k(Loader):
    """Corel16k subset 001 (Barnard et al. 2003): 13,766 images, 500 binary blob features, 153 concepts.

    Reads ``Corel16k<NNN>.mat`` (``data``: items x 500 uint8 blob-cluster features; ``target``:
    concepts x items in {-1, +1}, concepts x items as stored) and ``Corel16k<NNN>.xml`` (MULAN label
    names, in the order of ``target``'s rows). There is no stored split, so there is no ``train``
    column: use the retrieval protocol's ``split_by: random``.

    Items: ``id`` (``"Corel16k001:<row>"``). ``arrays["feat"]`` float32 (13,766 x 500),
    ``arrays["relevance"]`` int8 (13,766 x 153) with 1 = relevant and 0 = not relevant (every
    image is judged for every concept), ``info["concepts"]`` the 153 names.

    Parameters
    ----------
    root : str, optional
        The folder (default ``<data-root>/corel16k``).
    subset : int
        Which of the ten Corel16k subsets (1..10; ``../shared/datasets`` has subset 1).
    """

    folder = "corel16k"
    layout = ("corel16k/Corel16k<NNN>.mat (variables data: items x features uint8, target: concepts x items "
              "in {-1,+1}) + Corel16k<NNN>.xml (MULAN label names in target's row order), NNN = 001 by default")

    def __init__(self, root: str | None = None, subset: Annotated[int, Field(ge=1, le=10)] = 1):
        self.root = root
        self.subset = subset

    def load(self, data_root=None) -> Dataset:
        import scipy.io

        d = self.root_dir(data_root)
        stem = f"Corel16k{int(self.subset):03d}"
        mat = require_file(d / f"{stem}.mat", "dataset corel16k", self.layout)
        xml = require_file(d / f"{stem}.xml", "dataset corel16k", self.layout)
        concepts = read_mulan_labels(xml)
        try:
            m = scipy.io.loadmat(str(mat), variable_names=["data", "target"])
        except Exception as exc:
            raise DataError(f"{mat}: not a readable MATLAB file ({exc}); expected layout: {self.layout}") from None
        missing = [k for k in ("data", "target") if k not in m]
        if missing:
            raise DataError(f"{mat}: no variable {missing[0]!r}; expected layout: {self.layout}")
        data, target = np.asarray(m["data"]), np.asarray(m["target"])
        if data.ndim != 2 or target.ndim != 2 or target.shape != (len(concepts), len(data)):
            raise DataError(f"{mat}: data is {data.shape} and target {target.shape}, expected target = "
                            f"({len(concepts)} concepts named in {xml.name}, {len(data)} items of data); "
                            f"expected layout: {self.layout}")
        if not np.isin(target, (-1, 1)).all():
            bad = np.setdiff1d(np.unique(target), (-1, 1))
            raise DataError(f"{mat}: target holds {bad[:5].tolist()}, expected only -1 and +1; "
                            f"expected layout: {self.layout}")
        n = len(data)
        return Dataset(
            name="corel16k",
            items=pd.DataFrame({"id": [f"{stem}:{i}" for i in range(n)]}),
            arrays={"feat": data.astype(np.float32), "relevance": (target.T > 0).astype(np.int8)},
            info={"concepts": concepts, "root": str(d)},
            fingerprint=fingerprint_files([mat, xml], extra=f"corel16k:{stem}"),
        )

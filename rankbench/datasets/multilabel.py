"""Multi-label image collections in MULAN's ARFF + XML form, used as retrieval benchmarks.

Each concept is a retrieval task (rank the collection by relevance to the concept), as in
Merler et al.'s keyframe experiments; the TRECVID data of that paper is not public, so these
public collections stand in. ``arrays["feat"]`` holds the shipped features, ``arrays["relevance"]``
the items x concepts 0/1 matrix, ``info["concepts"]`` the concept names and the ``train`` column
the split shipped with the data.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import DataError
from ..registry import datasets
from ._arff import read_arff
from .base import Dataset, Loader, fingerprint_files, require_file


def read_mulan_labels(path) -> list[str]:
    """Label names, in order, from a MULAN label XML file (``<labels><label name=.../>``)."""
    import xml.etree.ElementTree as ET

    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        raise DataError(f"{path}: not a readable MULAN label XML file ({e})") from None
    # MULAN may nest labels in hierarchies; every <label> element (any namespace) is one label
    names = [el.get("name") for el in root.iter() if el.tag.rsplit("}", 1)[-1] == "label"]
    if not names or any(n is None for n in names):
        raise DataError(f"{path}: expected <label name=\"...\"> elements, found none or one without a name")
    twice = [n for i, n in enumerate(names) if n in names[:i]]
    if twice:   # its relevance column would count twice in every mean over concepts
        raise DataError(f"{path}: label {twice[0]!r} is listed twice; expected each label once")
    return names


class MulanLoader(Loader):
    """Base of MULAN train/test ARFF loaders; subclasses set the file names."""

    xml: str = ""
    train_file: str = ""
    test_file: str = ""
    n_features: int | None = None  # checked when set

    def __init__(self, root: str | None = None):
        self.root = root

    def load(self, data_root=None) -> Dataset:
        d = self.root_dir(data_root)
        what = f"dataset {self.registry_name}"
        xml = require_file(d / self.xml, what, self.layout)
        files = [require_file(d / f, what, self.layout) for f in (self.train_file, self.test_file)]
        concepts = read_mulan_labels(xml)
        feats, rels, ids, train = [], [], [], []
        for f, is_train in zip(files, (True, False)):
            try:
                arff = read_arff(f)
            except DataError as e:
                raise DataError(f"{e}; expected layout: {self.layout}") from None
            try:
                lab = arff.columns(concepts)
            except DataError as e:
                raise DataError(f"{f}: {e}; the labels named in {xml.name} must be ARFF attributes "
                                f"(expected layout: {self.layout})") from None
            fcols = np.setdiff1d(np.arange(len(arff.names)), lab)
            if feats and len(fcols) != feats[0].shape[1]:
                raise DataError(f"{f}: {len(fcols)} feature attributes, but {files[0].name} has "
                                f"{feats[0].shape[1]}; expected layout: {self.layout}")
            if self.n_features and len(fcols) != self.n_features:
                raise DataError(f"{f}: {len(fcols)} feature attributes, expected {self.n_features}; "
                                f"expected layout: {self.layout}")
            R = arff.numbers(lab)
            if not np.isin(R, (0, 1)).all():
                raise DataError(f"{f}: label attributes must be 0/1 (found other values or '?')")
            feats.append(arff.numbers(fcols).astype(np.float32))
            rels.append(R.astype(np.int8))   # the relevance codes (1 / 0 / -1) every loader gives
            ids += [f"{f.stem}:{i}" for i in range(len(R))]
            train += [is_train] * len(R)
        items = pd.DataFrame({"id": ids, "train": np.array(train, dtype=bool)})
        return Dataset(
            name=self.registry_name,
            items=items,
            arrays={"feat": np.vstack(feats), "relevance": np.vstack(rels)},
            info={"concepts": concepts, "root": str(d)},
            fingerprint=fingerprint_files([xml, *files], extra=self.registry_name),
        )


@datasets.register("mulan_scene")
class MulanScene(MulanLoader):
    """Scene (Boutell et al. 2004): 2407 images, 294-d grid colour moments, 6 concepts (MULAN split)."""

    folder = "mulan-scene"
    xml = "scene.xml"
    train_file = "scene-train.arff"
    test_file = "scene-test.arff"
    n_features = 294
    layout = ("mulan-scene/{scene-train.arff, scene-test.arff} (dense ARFF: 294 numeric features, then "
              "the 6 {0,1} labels) + scene.xml (MULAN label names)")


@datasets.register("corel5k")
class Corel5k(MulanLoader):
    """Corel5k (Duygulu et al. 2002): 5000 images, 499 binary blob features, 374 concepts (4500/500 split)."""

    folder = "corel5k"
    xml = "Corel5k.xml"
    train_file = "Corel5k-train-sparse.arff"
    test_file = "Corel5k-test-sparse.arff"
    n_features = 499
    layout = ("corel5k/{Corel5k-train-sparse.arff, Corel5k-test-sparse.arff} (sparse ARFF: 499 {0,1} "
              "features, then 374 {0,1} labels) + Corel5k.xml (MULAN label names)")

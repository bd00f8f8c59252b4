"""PubFig relative-attributes subset (Parikh & Grauman, ICCV 2011; used by Sharaf et al., BMVC 2015)."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from ..errors import DataError
from ..registry import datasets
from .base import Dataset, Loader, check_image_sizes, fingerprint_files, require_dir, require_file


def _strings(cell_array) -> list[str]:
    """MATLAB cell array of strings (as scipy.io.loadmat returns it) -> list of str."""
    return [str(np.asarray(c).ravel()[0]) for c in np.asarray(cell_array).ravel()]


#: (height, width) of every image of the relative-attributes PubFig subset
SIZE = (256, 256)


@datasets.register("pubfig")
class PubFig(Loader):
    """PubFig relative attributes: 772 face images of 8 people, 11 attributes ordered per person.

    Reads ``pubfig_data.mat`` of the relative_attributes_v2 release. ``items`` has ``id``,
    ``category`` (person name), ``train`` (the release's ``used_for_training``: 241 images,
    30 per person but JaredLeto's 31) and ``path``. ``arrays["feat"]`` is the release's 542-d feature (512 GIST + 30
    colour); ``arrays["gist_ref"]`` its first 512 columns (LMgist GIST, used to validate ours),
    ``arrays["colour_ref"]`` its last 30 (the release's colour histogram, of undocumented binning).
    ``info["strength"]`` is a categories x attributes DataFrame from ``relative_ordering``
    (larger = more of the attribute).
    """

    folder = "pubfig"
    layout = "pubfig/pubfig_data.mat (fields im_names, class_labels, class_names, attribute_names, " \
             "relative_ordering, used_for_training, feat) and pubfig/images/<Person>_<n>.jpg"
    _fields = ("im_names", "class_labels", "class_names", "attribute_names", "relative_ordering",
               "used_for_training", "feat")

    def __init__(self, root: str | None = None, check_images: bool = True):
        self.root = root
        self.check_images = check_images

    def load(self, data_root=None) -> Dataset:
        import scipy.io

        root = self.root_dir(data_root)
        mat_path = require_file(root / "pubfig_data.mat", "dataset pubfig", self.layout)
        try:
            m = scipy.io.loadmat(str(mat_path))
        except Exception as exc:  # scipy raises several types for corrupt files
            raise DataError(f"{mat_path}: cannot be read as a MATLAB file ({exc}); expected layout: {self.layout}")
        missing = [f for f in self._fields if f not in m]
        if missing:
            raise DataError(f"{mat_path}: field {missing[0]!r} missing; expected layout: {self.layout}")
        names = _strings(m["im_names"])
        classes = _strings(m["class_names"])
        attributes = _strings(m["attribute_names"])
        labels = np.asarray(m["class_labels"]).ravel().astype(int)
        train = np.asarray(m["used_for_training"]).ravel().astype(bool)
        feat = np.asarray(m["feat"], dtype=float)
        order = np.asarray(m["relative_ordering"], dtype=float)
        n = len(names)
        if not (len(labels) == len(train) == feat.shape[0] == n):
            raise DataError(f"{mat_path}: im_names, class_labels, used_for_training and feat disagree in length")
        if order.shape != (len(attributes), len(classes)):
            raise DataError(f"{mat_path}: relative_ordering has shape {order.shape}, expected "
                            f"(attributes={len(attributes)}, classes={len(classes)})")
        if labels.min() < 1 or labels.max() > len(classes):
            raise DataError(f"{mat_path}: class_labels must lie in 1..{len(classes)}")
        img_dir = require_dir(root / "images", "dataset pubfig", self.layout)
        paths = [str(img_dir / nm) for nm in names]
        if self.check_images:
            absent = [p for p in paths if not (img_dir / p.rsplit("/", 1)[-1]).is_file()]
            if absent:
                raise DataError(f"dataset pubfig: {len(absent)} image(s) listed in im_names are missing, "
                                f"e.g. {absent[0]}; expected layout: {self.layout}")
            check_image_sizes(paths, SIZE, "dataset pubfig")
        items = pd.DataFrame({
            "id": [nm.rsplit(".", 1)[0] for nm in names],
            "category": [classes[k - 1] for k in labels],
            "train": train,
            "path": paths,
        })
        strength = pd.DataFrame(order.T, index=classes, columns=attributes)
        return Dataset(
            name="pubfig",
            items=items,
            arrays={"feat": feat, "gist_ref": feat[:, :512], "colour_ref": feat[:, 512:]},
            info={"attributes": attributes, "strength": strength, "root": str(root)},
            # the images the extractors read as well as the release's file (those present: without
            # check_images some may be absent, and only the release's arrays are then used)
            fingerprint=fingerprint_files([mat_path, *(p for p in paths if os.path.isfile(p))], extra="pubfig"),
        )

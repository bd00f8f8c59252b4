"""VIPeR (Gray, Brennan & Tao, PETS 2007): 632 people, one 128x48 image in each of two cameras."""

from __future__ import annotations

import re

import pandas as pd

from ..errors import DataError
from ..registry import datasets
from .base import Dataset, Loader, fingerprint_files, named_files, read_image, require_dir

_NAME = re.compile(r"^(\d+)_(\d+)\.bmp$", re.IGNORECASE)


#: (height, width) of every VIPeR image
SIZE = (128, 48)


@datasets.register("viper")
class VIPeR(Loader):
    """VIPeR re-identification set: cam_a/NNN_AAA.bmp and cam_b/NNN_AAA.bmp (632 people x 2 views).

    Parameters
    ----------
    root : folder holding ``cam_a`` and ``cam_b`` (default ``<data-root>/viper``).
    check_images : decode every image at load time, so an unreadable file is reported up
        front with its name rather than in the middle of feature extraction.

    Items (one per image, camera a first, each camera sorted by person id): ``id``
    (``"a/000"``), ``identity`` (``"000"``), ``cam`` (``"a"`` / ``"b"``), ``angle`` (viewpoint
    in degrees, from the file name) and ``path``.
    """

    folder = "viper"
    layout = ("viper/cam_a/NNN_AAA.bmp and viper/cam_b/NNN_AAA.bmp (NNN person id, AAA viewpoint "
              "angle; one image per person in each camera)")

    def __init__(self, root: str | None = None, check_images: bool = True):
        self.root = root
        self.check_images = check_images

    def load(self, data_root=None) -> Dataset:
        root = self.root_dir(data_root)
        rows = []
        for cam in ("a", "b"):
            folder = require_dir(root / f"cam_{cam}", "dataset viper", self.layout)
            seen = {}
            for path, m in named_files(folder, _NAME, (".bmp",), "dataset viper", self.layout):
                pid = m.group(1)
                if pid in seen:
                    raise DataError(f"dataset viper: person {pid} has two images in cam_{cam}: "
                                    f"{seen[pid].name} and {path.name}")
                seen[pid] = path
                rows.append({"id": f"{cam}/{pid}", "identity": pid, "cam": cam,
                             "angle": int(m.group(2)), "path": str(path)})
            if not seen:
                raise DataError(f"dataset viper: no NNN_AAA.bmp images in {folder}; expected layout: {self.layout}")
        items = pd.DataFrame(rows)
        per_cam = items.groupby("identity")["cam"].nunique()
        lonely = per_cam[per_cam < 2].index.tolist()
        if lonely:
            cam_of = items.set_index("identity").loc[lonely[0], "cam"]
            raise DataError(
                f"dataset viper: person {lonely[0]} appears only in cam_{cam_of} "
                f"({len(lonely)} such people); every person needs one image in cam_a and one in cam_b")
        items = items.sort_values(["cam", "identity"], kind="stable").reset_index(drop=True)
        if self.check_images:  # every image decodes and has VIPeR's size
            for p in items["path"]:
                read_image(p, size=SIZE)
        return Dataset(name="viper", items=items, info={"root": str(root)},
                       fingerprint=fingerprint_files(list(items["path"]), extra="viper"))

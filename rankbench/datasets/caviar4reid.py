"""CAVIAR4REID (Cheng, Cristani, Stoppa, Bazzani & Murino, BMVC 2011): 72 people, two cameras of a
shopping centre, 10 images per person and camera; 50 people seen by both cameras, 22 by one only."""

from __future__ import annotations

import re

import pandas as pd

from ..errors import DataError
from ..params import PositiveInt
from ..registry import datasets
from .base import Dataset, Loader, fingerprint_files, named_files, read_image, require_dir, resized_reader

_NAME = re.compile(r"^(\d{4})_(\d{3})\.jpe?g$", re.IGNORECASE)
#: images per person and camera in the release
PER_CAMERA = 10


@datasets.register("caviar4reid")
class CAVIAR4REID(Loader):
    """CAVIAR4REID (PETA's copy): images/PPPP_NNN.jpg, camera 1 for NNN 001-010 and camera 2 for 011-020.

    Parameters
    ----------
    root : folder holding ``images/`` (default ``<data-root>/caviar4reid``).
    size : (height, width) every image is resized to (default 128 x 64); the crops vary from 39 to
        150 pixels high and 16 to 75 wide.
    check_images : decode every image at load time so an unreadable file is reported up front.

    Items: ``id`` (file stem, ``0001_001``), ``identity`` (``0001``), ``cam`` (``"1"`` / ``"2"``),
    ``index`` (NNN) and ``path``.

    The file names carry no camera. The release has 10 images of each person per camera, and PETA's
    renaming kept their order: NNN = 001-010 are one camera and 011-020 the other. Read that way
    on the real files, the two blocks are two cameras: crops of 001-010 are larger (101 against 59
    pixels high on average; larger in 48 of the 50 two-camera people), and a classifier of border
    colour and crop size tells the blocks apart at 97 % on people it was not trained on (5 folds
    over people). The 22 people with 10 images are all read as camera 1, and the same classifier
    puts 21 of them in the first block's camera. So ``probe_cam: "2"``, ``gallery_cam: "1"`` and
    ``distractors: unpaired`` make the one-camera people gallery distractors.
    """

    folder = "caviar4reid"
    layout = ("caviar4reid/images/PPPP_NNN.jpg (PPPP person 0001-0072, NNN 001-010 camera 1, 011-020 "
              "camera 2)")

    def __init__(self, root: str | None = None, size: tuple[PositiveInt, PositiveInt] | None = (128, 64),
                 check_images: bool = True):
        self.root = root
        self.size = size
        self.check_images = check_images

    def load(self, data_root=None) -> Dataset:
        folder = require_dir(self.root_dir(data_root) / "images", "dataset caviar4reid", self.layout)
        rows = []
        for path, m in named_files(folder, _NAME, (".jpg", ".jpeg"), "dataset caviar4reid", self.layout):
            index = int(m.group(2))
            if not 1 <= index <= 2 * PER_CAMERA:
                raise DataError(f"dataset caviar4reid: image number {index} in {path} is outside 001-020; "
                                f"expected layout: {self.layout}")
            rows.append({"id": path.stem, "identity": m.group(1), "cam": "1" if index <= PER_CAMERA else "2",
                         "index": index, "path": str(path)})
        if not rows:
            raise DataError(f"dataset caviar4reid: no PPPP_NNN.jpg images in {folder}; expected layout: {self.layout}")
        items = pd.DataFrame(rows).sort_values(["identity", "index"]).reset_index(drop=True)
        dup = items.duplicated(["identity", "index"])
        if dup.any():
            r = items[dup].iloc[0]
            raise DataError(f"dataset caviar4reid: image {r['index']:03d} of person {r['identity']} appears twice "
                            f"(e.g. {r['path']})")
        paths = list(items["path"])
        size = None if self.size is None else (int(self.size[0]), int(self.size[1]))
        if self.check_images:
            for p in paths:
                read_image(p)
        extra = "caviar4reid:" + ("original" if size is None else f"{size[0]}x{size[1]}")
        return Dataset(name="caviar4reid", items=items, image_reader=resized_reader(paths, size),
                       info={"root": str(folder.parent), "size": list(size) if size else None},
                       fingerprint=fingerprint_files(paths, extra=extra))

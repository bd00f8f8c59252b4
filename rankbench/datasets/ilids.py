"""i-LIDS re-identification set (Zheng, Gong & Xiang 2009): 119 people, 476 images of varying size."""

from __future__ import annotations

import re
import warnings
from typing import Annotated

import pandas as pd
from pydantic import Field

from ..errors import DataError
from ..params import PositiveInt
from ..registry import datasets
from .base import Dataset, Loader, fingerprint_files, named_files, read_image, resized_reader

_NAME = re.compile(r"^(\d{4})_?(\d{3})\.jpe?g$", re.IGNORECASE)
_SUBFOLDERS = ("", "images", "Persons")
_JPEG = (".jpg", ".jpeg")


@datasets.register("ilids")
class ILIDS(Loader):
    """i-LIDS (public 119-person set): PPPP_SSS.jpg or PPPPSSS.jpg, resized to a common size.

    Parameters
    ----------
    root : the folder of the JPEGs, or a folder holding them under ``images/`` or ``Persons/``
        (default ``<data-root>/ilids``); JPEGs in more than one of these places are an error.
    size : (height, width) every image is resized to (default 128 x 64), as the originals vary
        (widths about 30-130 px, heights 76-304 px); None: as stored (for extractors that take
        images of any size).
    min_images : people with fewer images are left out (re-identification needs a probe and a
        gallery image); they are reported with a warning and listed in ``info["left_out"]``.
    check_images : decode every image at load time so an unreadable file is reported up front.

    Items: ``id`` (file stem), ``identity`` (``PPPP``), ``index`` (``SSS``), ``path``. There is no
    camera label in this set, so there is no ``cam`` column.
    """

    folder = "ilids"
    layout = ("ilids/PPPP_SSS.jpg or ilids/PPPPSSS.jpg (PPPP person, SSS image index), optionally "
              "under ilids/images/ or ilids/Persons/")

    def __init__(self, root: str | None = None, size: tuple[PositiveInt, PositiveInt] | None = (128, 64),
                 min_images: Annotated[int, Field(ge=1)] = 2, check_images: bool = True):
        self.root = root
        self.size = size
        self.min_images = min_images
        self.check_images = check_images

    def _image_dir(self, root):
        """The one folder of ``_SUBFOLDERS`` that holds JPEGs (hidden files aside): none, or
        several, is a DataError naming the places, never a guess."""
        found = [d for d in (root / sub if sub else root for sub in _SUBFOLDERS)
                 if d.is_dir() and any(not p.name.startswith(".") and p.suffix.lower() in _JPEG for p in d.iterdir())]
        if not found:
            raise DataError(f"dataset ilids: no JPEG images in {root} or its images/ or Persons/ "
                            f"sub-folder; expected layout: {self.layout}")
        if len(found) > 1:
            raise DataError(f"dataset ilids: JPEG images in {' and '.join(map(str, found))}; expected them in "
                            f"one of these places only (move or delete the others); expected layout: {self.layout}")
        return found[0]

    def load(self, data_root=None) -> Dataset:
        folder = self._image_dir(self.root_dir(data_root))
        items = pd.DataFrame([{"id": path.stem, "identity": m.group(1), "index": int(m.group(2)), "path": str(path)}
                              for path, m in named_files(folder, _NAME, _JPEG, "dataset ilids", self.layout)])
        dup = items.duplicated(["identity", "index"])
        if dup.any():
            r = items[dup].iloc[0]
            raise DataError(f"dataset ilids: image {r['index']:03d} of person {r['identity']} appears "
                            f"twice (e.g. {r['path']}); name files either PPPP_SSS.jpg or PPPPSSS.jpg")
        counts = items["identity"].value_counts()
        few = sorted(counts[counts < self.min_images].index)
        if few:
            warnings.warn(f"dataset ilids: leaving out {len(few)} person(s) with fewer than "
                          f"{self.min_images} images: {', '.join(few)}", stacklevel=2)
            items = items[~items["identity"].isin(few)]
        if items.empty:
            raise DataError(f"dataset ilids: no person in {folder} has {self.min_images} or more images")
        items = items.sort_values(["identity", "index"]).reset_index(drop=True)
        paths = list(items["path"])
        size = None if self.size is None else (int(self.size[0]), int(self.size[1]))  # None: as stored
        if self.check_images:
            for p in paths:
                read_image(p)
        extra = "ilids:" + ("original" if size is None else f"{size[0]}x{size[1]}")
        return Dataset(name="ilids", items=items, image_reader=resized_reader(paths, size),
                       info={"root": str(folder), "left_out": few, "size": list(size) if size else None},
                       fingerprint=fingerprint_files(paths, extra=extra))

"""The in-memory form every loader returns, and helpers for reading real files with clear errors.

A loader is a class registered in :data:`rankbench.registry.datasets` whose ``__init__`` takes its
options (``root`` first) and whose ``load()`` returns a :class:`Dataset`. Loaders never know about
features, rankers or protocols.
"""

from __future__ import annotations

import hashlib
import os
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from ..errors import DataError
from ..params import init_params
from ..utils.diskcache import code_fingerprint, digest

#: codes of ``arrays["relevance"]``: unjudged items are left out of a concept's training and of
#: its AP (as ``trec_eval -J``); collections judged exhaustively only use 1 and 0
RELEVANCE_CODES = {1: "relevant", 0: "judged not relevant", -1: "unjudged"}


@dataclass
class Dataset:
    """Items of a dataset and what protocols need to know about them.

    Attributes
    ----------
    name : str
        Registry name of the loader.
    items : pandas.DataFrame
        One row per item, in a fixed order (row position = item index everywhere in rankbench).
        Column ``id`` (str) always; then, as the dataset has them: ``identity`` and ``cam`` (re-id),
        ``label`` (ordinal or class label, numeric), ``category`` (relative attributes),
        ``subject``, ``train`` (bool, a split shipped with the data), ``path`` (image file),
        ``group`` (str, items that must stay on one side of a split, e.g. a keyframe's video).
    arrays : dict of str -> ndarray
        Arrays shipped with the data, first axis = items: precomputed features (``"feat"``, or
        ``"feat/<type>"`` for several feature types), landmarks, relevance matrices
        (``"relevance"``, items x concepts, int8 coded as :data:`RELEVANCE_CODES`: 1 relevant,
        0 judged not relevant, -1 unjudged), in-memory images (``"images"``, for generated datasets).
    info : dict
        Dataset-level facts: ``attributes`` and ``strength`` (a categories x attributes DataFrame,
        larger = more) for relative attributes; ``concepts`` for retrieval; ``root`` ...
    fingerprint : str
        A digest of the content, used to key the feature cache.
    image_reader : callable, optional
        ``image_reader(i) -> ndarray`` (H, W, 3) uint8 RGB or (H, W) uint8 grey. Defaults to reading
        ``items.path`` or ``arrays["images"]``.
    """

    name: str
    items: pd.DataFrame
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    fingerprint: str = ""
    image_reader: Callable[[int], np.ndarray] | None = None

    def __len__(self) -> int:
        return len(self.items)

    def column(self, name: str) -> np.ndarray:
        if name not in self.items.columns:
            raise DataError(f"dataset {self.name!r} has no {name!r} column (has: {', '.join(self.items.columns)})")
        return self.items[name].to_numpy()

    def own_split(self) -> np.ndarray:
        """The split shipped with the data (column ``train``) as booleans; a DataError when it
        leaves no training row or no test row."""
        train = self.column("train").astype(bool)
        if train.all() or not train.any():
            raise DataError(f"dataset {self.name!r}, column 'train': {'every' if train.all() else 'no'} row is true; "
                            "expected training rows (true) and test rows (false)")
        return train

    def image(self, i: int) -> np.ndarray:
        """Item ``i``'s image as uint8 RGB (H, W, 3) or grey (H, W); an image from a reader or an
        array (a plug-in's) of another type or shape is a DataError naming the item: the extractors
        read 0-255 pixels, and a float image in [0, 1] would give near-black features silently."""
        if self.image_reader is not None:
            img = np.asarray(self.image_reader(i))
        elif "images" in self.arrays:
            img = np.asarray(self.arrays["images"][i]).view()  # read-only: an extractor that writes to
            img.flags.writeable = False                        # its image would change the data itself
        elif "path" in self.items.columns:
            return read_image(self.items["path"].iat[i])
        else:
            raise DataError(f"dataset {self.name!r} has no images (it ships only arrays: {', '.join(self.arrays)})")
        if img.dtype != np.uint8 or img.ndim not in (2, 3) or img.ndim == 3 and img.shape[2] != 3 or not img.size:
            item = self.items["id"].iat[i] if "id" in self.items.columns else i
            raise DataError(f"dataset {self.name!r}, item {item!r}: the image is {img.dtype} of "
                            f"shape {img.shape}; expected uint8 RGB (H, W, 3) or grey (H, W), values 0-255")
        return img

    def without_images(self) -> "Dataset":
        """The same dataset minus in-memory images and the reader, cheap to send to worker processes."""
        return Dataset(name=self.name, items=self.items,
                       arrays={k: v for k, v in self.arrays.items() if k != "images"},
                       info=self.info, fingerprint=self.fingerprint)

    def subset(self, idx: np.ndarray) -> "Dataset":
        """A view on some items (arrays sliced, info shared)."""
        idx = np.asarray(idx)
        return Dataset(
            name=self.name,
            items=self.items.iloc[idx].reset_index(drop=True),
            arrays={k: v[idx] for k, v in self.arrays.items()},
            info=self.info,
            fingerprint=f"{self.fingerprint}:{hashlib.sha1(idx.tobytes()).hexdigest()[:12]}",
        )


def resolve_root(root: str | os.PathLike | None, folder: str, data_root: str | os.PathLike | None) -> Path:
    """The folder of one dataset: an explicit ``root``, else ``<data_root>/<folder>``.

    A relative ``root`` is relative to the data root (``data_root``, else ``$RANKBENCH_DATA``,
    else ``./datasets``), never to the working directory, so that a config names the same folder
    from wherever it is run; an absolute one (or ``~/...``) is used as it is.
    """
    base = Path(data_root or os.environ.get("RANKBENCH_DATA") or "datasets")
    if root:
        path = Path(root).expanduser()
        return path if path.is_absolute() else base / path
    return base / folder


def require_dir(path: Path, what: str, layout: str) -> Path:
    if not path.is_dir():
        raise DataError(f"{what}: folder {path} not found; expected layout: {layout}")
    return path


def not_a_file(path: Path) -> str:
    """Why ``path``, which is not a file, cannot be read: a folder of its name, or nothing."""
    return "is a folder, not a file" if Path(path).is_dir() else "not found"


def require_file(path: Path, what: str, layout: str) -> Path:
    if not path.is_file():
        raise DataError(f"{what}: file {path} {not_a_file(path)}; expected layout: {layout}")
    return path


def require_link_target(path: Path, what: str, layout: str) -> None:
    """A DataError naming ``path``, its missing target and ``layout`` if ``path`` is a symbolic link
    to nothing: a file that a listing would otherwise pass over in silence, one item fewer."""
    if path.is_symlink() and not path.exists():
        target = path.parent / os.readlink(path)
        raise DataError(f"{what}: {path} is a symbolic link to {target}, which does not exist; "
                        f"expected layout: {layout}")


def named_files(folder: Path, pattern: re.Pattern[str], suffixes: tuple[str, ...], what: str, layout: str,
                unexpected: str = "unexpected file name {path}") -> list[tuple[Path, re.Match[str]]]:
    """The files of ``folder`` with one of ``suffixes`` (any case), sorted by name, each with its
    match of ``pattern``; hidden files and other files (notes, Thumbs.db) are skipped. A file that
    does not match is one DataError naming it (``unexpected``) and ``layout``, and so is a broken
    link among them (:func:`require_link_target`), anything else named like an image (a folder), and a
    sub-folder holding such files: the layout is flat, and its images would be left out unread."""
    out = []
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            continue
        if path.suffix.lower() not in suffixes:
            if path.is_dir() and (n := sum(1 for p in path.iterdir()
                                           if not p.name.startswith(".") and p.suffix.lower() in suffixes)):
                raise DataError(f"{what}: the sub-folder {path} holds {n} image(s) that would not be read "
                                f"(the images stand in {folder} itself); expected layout: {layout}")
            continue
        require_link_target(path, what, layout)
        if not path.is_file():
            raise DataError(f"{what}: {path} is named like an image but is not a file; expected layout: {layout}")
        m = pattern.match(path.name)
        if m is None:
            raise DataError(f"{what}: {unexpected.format(path=path)}; expected layout: {layout}")
        out.append((path, m))
    return out


def resized_reader(paths: list[str], size: tuple[int, int] | None) -> Callable[[int], np.ndarray]:
    """``reader(i)``: the image ``paths[i]`` resized to ``size`` = (height, width) by area
    interpolation (None: as it is)."""
    def reader(i: int) -> np.ndarray:
        img = read_image(paths[i])
        if size is None:
            return img
        return _cv2().resize(img, (int(size[1]), int(size[0])), interpolation=_cv2().INTER_AREA)

    return reader


_CV2 = None


def _cv2():
    """OpenCV, imported once with its own log silenced: a file it cannot decode is reported by us,
    in one line naming the file, not by OpenCV's console noise."""
    global _CV2
    if _CV2 is None:
        import cv2

        logging = getattr(getattr(cv2, "utils", None), "logging", None)
        if logging is not None:
            logging.setLogLevel(logging.LOG_LEVEL_SILENT)
        _CV2 = cv2
    return _CV2


#: the most pixels an image may have (PIL's decompression-bomb limit): a few hundred bytes of PNG
#: can claim 20000 x 20000 pixels, 1.2 GB and 15 s to decode
MAX_PIXELS = 89_478_485


def image_size(data: bytes | np.ndarray | str | os.PathLike, path: str | os.PathLike) -> tuple[int, int] | None:
    """(height, width) of an image (its bytes, or the file) from its header alone (None: a format
    PIL does not read); an image of more than :data:`MAX_PIXELS` pixels is a DataError naming the
    file, before anything is decoded."""
    import io
    import warnings

    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(data if isinstance(data, (str, os.PathLike)) else io.BytesIO(memoryview(data))) as im:
                w, h = im.size
        said = f" is {h}x{w} pixels,"
    except Image.DecompressionBombError:  # over twice PIL's limit: the size is not given back
        h = w = MAX_PIXELS
        said = " has"
    except (OSError, UnidentifiedImageError, ValueError, SyntaxError):
        return None
    if h * w > MAX_PIXELS:
        raise DataError(f"image {path}{said} more than the {MAX_PIXELS:,} pixels an image may have "
                        "(a decompression bomb or a wrong file); expected a photograph-sized image")
    return h, w


def read_image(path: str | os.PathLike, grey: bool = False, size: tuple[int, int] | None = None) -> np.ndarray:
    """Read an image file as RGB (or grey) uint8, naming the file if it cannot be decoded or claims
    more than :data:`MAX_PIXELS` pixels; with ``size`` = (height, width), an image of another size
    is an error naming both sizes. Decoded as OpenCV does: a grey file as RGB with R = G = B, a
    16-bit file as its high byte, alpha dropped (not composited), the EXIF orientation applied, and
    a multi-frame file (GIF, TIFF) as its first frame; a float TIFF does not decode."""
    cv2 = _cv2()
    flag = cv2.IMREAD_GRAYSCALE if grey else cv2.IMREAD_COLOR
    data = np.fromfile(str(path), dtype=np.uint8) if Path(path).is_file() else None
    if data is None:
        raise DataError(f"image {path} " + ("is not a file (a folder?)" if os.path.exists(path) else "not found"))
    if data.size:
        image_size(data, path)
    try:
        img = cv2.imdecode(data, flag) if data.size else None
    except cv2.error:  # OpenCV's own limits (CV_IO_MAX_IMAGE_PIXELS) on a format PIL does not read
        img = None
    if img is None:
        raise DataError(f"image {path} is unreadable or truncated (could not be decoded)")
    if size is not None and tuple(img.shape[:2]) != tuple(size):
        raise DataError(f"image {path} is {img.shape[0]}x{img.shape[1]} pixels, expected {size[0]}x{size[1]}")
    if not grey:
        img = cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
    return img


def check_image_sizes(paths: list, size: tuple[int, int], what: str) -> None:
    """Every image is ``size`` = (height, width) pixels, read from the file headers only (fast,
    :func:`image_size`); otherwise one DataError naming the first file and both sizes."""
    for p in paths:
        hw = image_size(p, p)
        if hw is None:
            raise DataError(f"{what}: image {p} is unreadable (not an image file)")
        if hw != tuple(size):
            raise DataError(f"{what}: image {p} is {hw[0]}x{hw[1]} pixels, expected {size[0]}x{size[1]}")


def fingerprint_files(paths: list[str | os.PathLike], extra: str = "") -> str:
    """A digest of the files' names and contents (BLAKE2b over every byte), the key of their
    features in the cache: two images that swap contents, or a file rewritten in the same second
    at the same size, change it, as names, sizes and modification times would not."""
    h = hashlib.blake2b(extra.encode(), digest_size=16)
    for p in paths:
        with open(p, "rb") as fh:
            data = fh.read()
        h.update(os.fsencode(os.path.basename(p)) + f":{len(data)};".encode())
        h.update(data)
    return h.hexdigest()[:16]


def same_files(paths: list[str | os.PathLike]) -> np.ndarray:
    """For each file, the position of the first of ``paths`` with the same bytes: the same file
    listed twice, or a byte-identical copy (``out[i] == i`` for a file seen first). Only files of
    equal size are read (BLAKE2b)."""
    out = np.arange(len(paths))
    by_size: dict[int, list[int]] = {}
    for i, p in enumerate(paths):
        by_size.setdefault(os.path.getsize(p), []).append(i)
    for rows in by_size.values():
        if len(rows) > 1:
            first: dict[bytes, int] = {}
            for i in rows:
                with open(paths[i], "rb") as fh:
                    out[i] = first.setdefault(hashlib.blake2b(fh.read()).digest(), i)
    return out


def fingerprint_arrays(*arrays: np.ndarray, extra: str = "") -> str:
    h = hashlib.sha1(extra.encode())
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(str(a.shape).encode() + str(a.dtype).encode())
        h.update(a.tobytes())
    return h.hexdigest()[:16]


def load(loader: Any, data_root: str | os.PathLike | None = None) -> Dataset:
    """``loader.load(data_root)``, checked where the data enters (any loader, a plug-in's too): a
    :class:`Dataset` whose items each have their own ``id``, the name every split file, export and
    record knows an item by, and whose arrays hold a row per item. A DataError names the loader
    and, for a repeated id, its first two rows (and files: one image saved as ``.jpg`` and
    ``.png`` is two items of one name).

    A plug-in loader's fingerprint, which keys the cached features and results, is keyed by the
    loader's name, parameters and code besides: a fingerprint that leaves out what a parameter
    changes would serve one setting's features for another."""
    name = getattr(loader, "registry_name", type(loader).__name__)
    ds = loader.load(data_root)
    if not isinstance(ds, Dataset):
        raise DataError(f"dataset {name}: load() returned {type(ds).__name__}, expected a rankbench.datasets.Dataset")
    if "id" not in ds.items.columns:
        raise DataError(f"dataset {name}: its items have no 'id' column (has: {', '.join(map(str, ds.items.columns))})")
    short = next((k for k, v in ds.arrays.items() if len(v) != len(ds.items)), None)
    if short is not None:
        raise DataError(f"dataset {name}: arrays[{short!r}] has {len(ds.arrays[short])} rows for {len(ds.items)} "
                        "items; expected one row per item")
    missing = np.flatnonzero(pd.isna(ds.items["id"]).to_numpy())
    if len(missing):
        raise DataError(f"dataset {name}: row {missing[0]} has no item id ({len(missing)} such row(s)); expected "
                        "an id on every item")
    if ds.fingerprint and type(loader).__module__.split(".")[0] != "rankbench":
        params = {k: v for k, v in loader.get_params().items() if k != "root"} if hasattr(loader, "get_params") \
            else {}
        ds.fingerprint = digest(ds.fingerprint, name, params, code_fingerprint(type(loader)))
    ids = ds.items["id"].astype(str)
    repeated = ids[ids.duplicated()]
    if len(repeated):
        rows = np.flatnonzero((ids == repeated.iloc[0]).to_numpy())
        files = (f": {ds.items['path'].iat[rows[0]]} and {ds.items['path'].iat[rows[1]]}"
                 if "path" in ds.items.columns else "")
        raise DataError(f"dataset {name}: item id {repeated.iloc[0]!r} names {len(rows)} items (rows {rows[0]} and "
                        f"{rows[1]}{files}); expected one item per id")
    return ds


class Loader(ABC):
    """Base of dataset loaders.

    Subclasses are registered in :data:`rankbench.registry.datasets`, set ``folder`` (the
    sub-folder name under the data root, as in ``../shared/datasets``) and ``layout`` (a one-line
    description of the expected files, shown in errors), store their options in ``__init__``
    (``root`` first: an explicit folder that overrides ``<data_root>/<folder>``) and implement
    :meth:`load`.
    """

    folder: str = ""
    layout: str = ""

    @abstractmethod
    def load(self, data_root: str | None = None) -> Dataset:
        """Read the dataset from ``<data_root>/<folder>`` (or ``root``)."""

    def get_params(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in init_params(type(self))}

    def root_dir(self, data_root: str | None) -> Path:
        root = getattr(self, "root", None)
        path = resolve_root(root, self.folder, data_root)
        if not path.is_dir():
            how = (f"dataset.root {root!r} in the config, relative to the data root" if root and not
                   Path(root).expanduser().is_absolute() else "set by dataset.root in the config" if root else
                   f"<data root>/{self.folder}, the data root being --data-root or $RANKBENCH_DATA "
                   f"(here: {path.parent})")
            raise DataError(f"dataset {self.registry_name}: folder {path} not found ({how}); expected layout: "
                            f"{self.layout}")
        return path

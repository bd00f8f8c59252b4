"""Keyframe collections in the form a TRECVID user has them: keyframe images, one judgement file per
concept and, optionally, precomputed features per feature type.

This is the data side of Merler, Yan & Smith's experiments (Imbalanced RankBoost, section 5.1:
52,347 TRECVID 2007 development keyframes, 20 concepts, 100 low-level feature types): each concept
is one retrieval task over the collection. The annotation *files* use TRECVID's own codes (1 / -1 /
0, see :class:`Keyframes`); the loader maps them to the in-memory codes of ``base.RELEVANCE_CODES``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ConfigError, DataError
from ..params import Names
from ..registry import datasets
from .base import (RELEVANCE_CODES, Dataset, Loader, fingerprint_files, read_image, require_dir,
                   require_link_target)

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".ppm", ".pgm", ".tif", ".tiff", ".webp")
#: label in an annotation file -> relevance code in arrays["relevance"]
FILE_LABELS = {"1": 1, "+1": 1, "-1": 0, "0": -1}
_TRECVID_SHOT = re.compile(r"^shot(\d+)_\d+")
#: the codes of an annotation file, said in errors
_CODES = "TRECVID codes are 1 relevant, -1 not relevant, 0 unjudged"
#: features are held as float32: the values they may take, said in errors
_FLOAT32 = f"expected values within float32's range (magnitude at most {np.finfo(np.float32).max:.4g})"


def _overflows_float32(X: np.ndarray) -> np.ndarray:
    """Where a finite value of ``X`` becomes infinite as float32 (magnitude above about 3.4e38)."""
    with np.errstate(over="ignore"):
        return np.isfinite(X) & ~np.isfinite(X.astype(np.float32))


def video_group(keyframe_id: str) -> str:
    """The group of a keyframe: ``video<N>`` for TRECVID ids ``shot<N>_<shot>[_...]`` (e.g.
    ``shot12_3_RKF`` -> ``video12``), else the id itself (each keyframe its own group)."""
    m = _TRECVID_SHOT.match(keyframe_id)
    return f"video{m.group(1)}" if m else keyframe_id


def natural_key(s: str) -> list:
    """Sort key that orders digit runs by value: shot1_2_RKF < shot1_10_RKF < shot2_1_RKF."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


@datasets.register("keyframes")
class Keyframes(Loader):
    """A keyframe collection: images and/or precomputed features, one judgement file per concept.

    Layout (``<root>`` is ``dataset.root``, else ``<data-root>/keyframes``)::

        <root>/keyframes/[<any sub-folders>/]<keyframe id>.<jpg|jpeg|png|bmp|ppm|pgm|tif|tiff|webp>
        <root>/annotations/<concept>.txt
        <root>/features/<type>.csv
        <root>/features/<type>.npy  and  <root>/features/ids.txt

    - ``keyframes/`` holds one image per keyframe; its file name without the extension is the
      keyframe id (ids contain no white space; hidden files and other extensions are ignored). It
      may be absent when feature files are given.
    - ``annotations/<concept>.txt``: one ``<keyframe id> <label>`` line per judged keyframe, label
      ``1`` (relevant; ``+1`` also accepted), ``-1`` (not relevant) or ``0`` (unjudged); ``#``
      starts a comment, blank lines are skipped. A keyframe not named in a concept's file is
      unjudged for that concept. The concept is the file name without ``.txt`` (any case); it
      needs at least one keyframe judged ``1`` and one judged ``-1``.
    - ``features/<type>.csv`` (optional): one row per keyframe, the keyframe id first, then the
      numbers, comma-separated; an optional header row whose first field is ``id``; ``#`` comment
      lines. ``features/<type>.npy`` (optional): a 2-D numeric array whose rows follow the ids in
      ``features/ids.txt`` (one id per line, shared by every ``.npy`` file). Every feature file
      must hold exactly the collection's keyframes (the images', or else the first feature
      type's), each once, in any order; values must be real, finite and within float32's range.

    Items (sorted by keyframe id, digit runs by value): ``id``, ``group`` (:func:`video_group`:
    the TRECVID video, so that a protocol can split by video) and ``path`` when there are images.
    ``arrays["relevance"]`` int8 items x concepts (1 relevant, 0 judged not relevant, -1 unjudged);
    ``arrays["feat/<type>"]`` float32 per feature type (use them with ``extractor: array, key:
    feat/<type>``); ``info["concepts"]``, ``info["feature_types"]``, ``info["n_judged"]`` and
    ``info["n_relevant"]`` (per concept).

    Parameters
    ----------
    root : str, optional
        The collection folder (default ``<data-root>/keyframes``).
    concepts : list of str, optional
        Load only these concepts, in this order (default: every ``annotations/*.txt``, sorted).
    feature_types : list of str, optional
        Load only these feature types (default: every file in ``features/``; ``[]``: none).
    check_images : bool
        Decode every image at load time, so that an unreadable file is reported up front with its
        name (slow for tens of thousands of keyframes); otherwise only their existence is checked.

    Every problem is one :class:`~rankbench.errors.DataError` line naming the file (and line),
    what was found and this layout: an annotation naming a keyframe that has no image (or no
    feature row), a keyframe annotated twice in one file, an unknown label, a concept without a
    keyframe judged relevant or one judged not relevant, two files of one concept or feature type
    (names that differ only in case or extension), two images of one keyframe, a broken link, an
    empty folder, a feature file whose ids do not match the collection's.
    """

    folder = "keyframes"
    layout = ("<root>/keyframes/[<sub-folders>/]<keyframe id>.<jpg|png|...> (optional when features are "
              "given), <root>/annotations/<concept>.txt ('<keyframe id> <label>' lines, label 1 relevant, "
              "-1 not relevant, 0 unjudged; '#' comments), optional <root>/features/<type>.csv (keyframe id, "
              "then numbers) or <root>/features/<type>.npy + <root>/features/ids.txt")

    def __init__(self, root: str | None = None,
                 concepts: Names | None = None,
                 feature_types: list[str] | None = None, check_images: bool = False):
        self.root = root
        self.concepts = concepts
        self.feature_types = feature_types
        self.check_images = check_images

    # ------------------------------------------------------------------ load
    def load(self, data_root=None) -> Dataset:
        root = self.root_dir(data_root)
        kf_dir, ann_dir, feat_dir = root / "keyframes", root / "annotations", root / "features"
        images = self._scan_images(kf_dir) if kf_dir.is_dir() else None
        feat_files = self._feature_files(feat_dir) if feat_dir.is_dir() else {}
        if images is None and not feat_dir.is_dir():
            raise DataError(f"dataset keyframes: {root} has neither a keyframes/ nor a features/ folder; "
                            f"expected layout: {self.layout}")
        types = self._selected(feat_files, "feature_types", "feature types", feat_dir)
        if images is None and not types:
            raise ConfigError("dataset.feature_types: the collection has no keyframes/ folder, so at least "
                              "one feature type is needed to know its keyframes")

        feats: dict[str, np.ndarray] = {}
        if images is not None:
            ids = sorted(images, key=natural_key)
            source = f"the images in {kf_dir}"
        for t in types:
            fids, X, where = self._read_feature(feat_files[t])
            if not feats and images is None:
                ids, source = sorted(fids, key=natural_key), str(where)
            feats[t] = self._align(X, fids, ids, where, source)

        concept_files = self._annotation_files(ann_dir)
        concepts = self._selected(concept_files, "concepts", "concepts", ann_dir)
        index = {k: i for i, k in enumerate(ids)}
        R = np.full((len(ids), len(concepts)), -1, dtype=np.int8)
        has = "image in keyframes/" if images is not None else f"row in {feat_files[types[0]][0]}"
        for j, c in enumerate(concepts):
            R[:, j] = self._read_annotation(concept_files[c], index, has)

        items = pd.DataFrame({"id": ids, "group": [video_group(k) for k in ids]})
        if images is not None:
            items["path"] = [str(images[k]) for k in ids]
            if self.check_images:
                for p in items["path"]:
                    read_image(p)
        # the fingerprint keys the feature cache, so it covers what features are computed from
        # (images, feature files), not the judgements: re-judging keeps the cached features
        content = [f for t in types for f in feat_files[t]] + (list(items["path"]) if images is not None else [])
        return Dataset(
            name="keyframes",
            items=items,
            arrays={"relevance": R, **{f"feat/{t}": X for t, X in feats.items()}},
            info={"concepts": list(concepts), "feature_types": list(types), "root": str(root),
                  "relevance_codes": RELEVANCE_CODES,
                  "n_judged": {c: int((R[:, j] >= 0).sum()) for j, c in enumerate(concepts)},
                  "n_relevant": {c: int((R[:, j] == 1).sum()) for j, c in enumerate(concepts)}},
            fingerprint=fingerprint_files(content, extra="keyframes"),
        )

    # ------------------------------------------------------------------ helpers
    def _err(self, msg: str) -> DataError:
        return DataError(f"{msg}; expected layout: {self.layout}")

    def _scan_images(self, kf_dir: Path) -> dict[str, Path]:
        images: dict[str, Path] = {}
        for p in sorted(kf_dir.rglob("*")):
            if p.name.startswith(".") or p.suffix.lower() not in IMAGE_EXTENSIONS:
                continue
            require_link_target(p, "dataset keyframes", self.layout)
            if not p.is_file():
                continue
            if p.stem in images:
                raise self._err(f"dataset keyframes: keyframe {p.stem!r} has two images, {images[p.stem]} and {p}")
            images[p.stem] = p
        if not images:
            raise self._err(f"dataset keyframes: folder {kf_dir} holds no images "
                            f"({', '.join(IMAGE_EXTENSIONS)})")
        return images

    def _by_name(self, folder: Path, suffixes: tuple[str, ...], what: str) -> dict[str, Path]:
        """The files of ``folder`` with one of ``suffixes`` (any case; hidden files aside), by name
        without the extension, in natural order. Two whose names differ only in case or extension
        (``car.txt`` and ``Car.TXT``) name one ``what`` twice: a DataError naming both."""
        files: dict[str, Path] = {}
        seen: dict[str, Path] = {}
        for p in sorted(folder.iterdir(), key=lambda p: natural_key(p.name)):
            if p.name.startswith(".") or p.suffix.lower() not in suffixes:
                continue
            require_link_target(p, "dataset keyframes", self.layout)
            if not p.is_file():
                continue
            if p.stem.casefold() in seen:
                raise self._err(f"dataset keyframes: {what} {p.stem!r} is given twice, {seen[p.stem.casefold()]} "
                                f"and {p} (file names that differ only in case or extension name one {what})")
            seen[p.stem.casefold()] = files[p.stem] = p
        return files

    def _annotation_files(self, ann_dir: Path) -> dict[str, Path]:
        require_dir(ann_dir, "dataset keyframes", self.layout)
        files = self._by_name(ann_dir, (".txt",), "concept")
        if not files:
            raise self._err(f"dataset keyframes: folder {ann_dir} holds no <concept>.txt files")
        return files

    def _feature_files(self, feat_dir: Path) -> dict[str, list[Path]]:
        files = {t: [p] if p.suffix.lower() == ".csv" else [p, feat_dir / "ids.txt"]
                 for t, p in self._by_name(feat_dir, (".csv", ".npy"), "feature type").items()}
        if not files:
            raise self._err(f"dataset keyframes: folder {feat_dir} holds no <type>.csv or <type>.npy files")
        return files

    def _selected(self, available: dict, param: str, what: str, folder: Path) -> list[str]:
        wanted = getattr(self, param)
        if wanted is None:
            return list(available)
        unknown = [w for w in wanted if w not in available]
        if unknown:
            raise ConfigError(f"dataset.{param}: unknown {what[:-1]} {unknown[0]!r}; {folder} has: "
                              f"{', '.join(available) or 'none'}")
        return list(dict.fromkeys(wanted))

    def _read_annotation(self, path: Path, index: dict[str, int], has: str) -> np.ndarray:
        col = np.full(len(index), -1, dtype=np.int8)
        seen: dict[str, int] = {}
        with open(path, encoding="utf-8-sig", errors="replace") as f:
            for lineno, raw in enumerate(f, 1):
                parts = raw.split("#", 1)[0].split()
                if not parts:
                    continue
                if len(parts) != 2:
                    raise self._err(f"{path}:{lineno}: expected '<keyframe id> <label>', found {raw.strip()!r}")
                kid, label = parts
                if label not in FILE_LABELS:
                    raise self._err(f"{path}:{lineno}: unknown label {label!r} for keyframe {kid!r} "
                                    "(expected 1 relevant, -1 not relevant or 0 unjudged)")
                if kid in seen:
                    raise self._err(f"{path}:{lineno}: keyframe {kid!r} is annotated twice "
                                    f"(also on line {seen[kid]})")
                seen[kid] = lineno
                i = index.get(kid)
                if i is None:
                    raise self._err(f"{path}:{lineno}: keyframe {kid!r} has no {has}")
                col[i] = FILE_LABELS[label]
        self._check_judged(col, path, len(seen))
        return col

    def _check_judged(self, col: np.ndarray, path: Path, n_lines: int) -> None:
        """A concept is a retrieval task only with a keyframe judged relevant and one judged not
        relevant (AP needs both): otherwise a DataError naming its file and what it holds."""
        if not n_lines:
            raise self._err(f"{path}: no judgements (the file is empty or holds only comments); expected "
                            f"'<keyframe id> <label>' lines, {_CODES}")
        relevant, not_relevant = int((col == 1).sum()), int((col == 0).sum())
        found = (f"its {n_lines} line(s) hold {relevant} relevant (1), {not_relevant} not relevant (-1) and "
                 f"{n_lines - relevant - not_relevant} unjudged (0)")
        if not relevant:
            raise self._err(f"{path}: no keyframe judged relevant (1): {found}; {_CODES}")
        if not not_relevant:
            raise self._err(f"{path}: no keyframe judged not relevant (-1): {found}; {_CODES}")

    def _read_feature(self, files: list[Path]):
        """(ids, values float32 (n, d), the file to name in errors) of one feature type."""
        path = files[0]
        if path.suffix.lower() == ".csv":
            ids, X = self._read_csv(path)
        else:
            ids = self._read_ids(files[1], path)
            try:
                X = np.load(path, allow_pickle=False)
            except Exception as exc:
                raise self._err(f"{path}: not a readable .npy array ({exc})") from None
            if not isinstance(X, np.ndarray):  # np.load opens an .npz archive whatever the file's name
                X.close()
                raise self._err(f"{path}: expected one .npy array, found an .npz archive; save one array "
                                "with numpy.save")
            if X.ndim == 1:
                X = X[:, None]
            if X.ndim != 2 or X.dtype.kind not in "iuf":
                kind = "complex numbers (their imaginary parts would be dropped)" if X.dtype.kind == "c" else X.dtype
                raise self._err(f"{path}: expected a 2-D array of real numbers, found shape {X.shape} of {kind}")
            if len(X) != len(ids):
                raise self._err(f"{path}: {len(X)} rows, but {files[1]} lists {len(ids)} keyframe ids")
            bad = np.flatnonzero(~np.isfinite(X).all(axis=1))
            if bad.size:
                raise self._err(f"{path}: row {bad[0]} (keyframe {ids[bad[0]]!r}) has a non-finite value")
            big = np.argwhere(_overflows_float32(X))
            if big.size:
                r, j = big[0]
                raise self._err(f"{path}: row {r} (keyframe {ids[r]!r}) value {j + 1} is {float(X[r, j]):g}, "
                                f"which overflows float32; {_FLOAT32}")
            X = X.astype(np.float32)
        return ids, X, path

    def _read_ids(self, ids_file: Path, npy: Path) -> list[str]:
        if not ids_file.is_file():
            raise self._err(f"{npy}: a .npy feature file needs {ids_file} (one keyframe id per line, "
                            "in row order)")
        ids, seen = [], {}
        for lineno, raw in enumerate(ids_file.read_text(encoding="utf-8-sig", errors="replace").splitlines(), 1):
            kid = raw.split("#", 1)[0].strip()
            if not kid:
                continue
            if kid in seen:
                raise self._err(f"{ids_file}:{lineno}: duplicate keyframe {kid!r} (also on line {seen[kid]})")
            seen[kid] = lineno
            ids.append(kid)
        if not ids:
            raise self._err(f"{ids_file}: lists no keyframe ids")
        return ids

    def _read_csv(self, path: Path) -> tuple[list[str], np.ndarray]:
        with open(path, encoding="utf-8-sig", errors="replace") as f:   # (line number, text) of each row
            data = [(i, s) for i, line in enumerate(f, 1) if (s := line.strip()) and not s.startswith("#")]
        if not data:
            raise self._err(f"{path}: no rows")
        skip = [data[0][0] - 1] if data[0][1].split(",", 1)[0].strip().lower() == "id" else []
        line_of = [i for i, _ in data[len(skip):]]   # of each data row, the header left out
        try:
            df = pd.read_csv(path, header=None, comment="#", skiprows=skip, dtype={0: str},
                             skipinitialspace=True, skip_blank_lines=True)
        except pd.errors.EmptyDataError:
            df = pd.DataFrame()
        except pd.errors.ParserError as exc:
            raise self._err(f"{path}: rows of unequal length ({str(exc).split('error: ')[-1].strip()})") from None
        if df.empty:
            raise self._err(f"{path}: a header but no rows")
        if df.shape[1] < 2:
            raise self._err(f"{path}: expected '<keyframe id>,<number>,...' rows, found only one column")
        values = df.iloc[:, 1:]
        for j, col in enumerate(values.columns):
            num = pd.to_numeric(values[col], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
            bad = np.flatnonzero(~np.isfinite(num))
            if bad.size:
                r = int(bad[0])
                v = values[col].iat[r]
                shown = "missing" if pd.isna(v) else repr(str(v))
                raise self._err(f"{path}:{line_of[r]}: value {j + 1} is {shown}, "
                                "expected a finite number")
            big = np.flatnonzero(_overflows_float32(num))
            if big.size:
                r = int(big[0])
                raise self._err(f"{path}:{line_of[r]}: value {j + 1} is {num[r]:g}, which "
                                f"overflows float32; {_FLOAT32}")
        ids = df.iloc[:, 0].str.strip()
        dup = np.flatnonzero(ids.duplicated().to_numpy())
        if dup.size:
            r = int(dup[0])
            r0 = int(np.flatnonzero((ids == ids.iat[r]).to_numpy())[0])
            raise self._err(f"{path}:{line_of[r]}: duplicate keyframe {ids.iat[r]!r} (also on line {line_of[r0]})")
        return ids.tolist(), values.to_numpy(dtype=np.float32)

    def _align(self, X: np.ndarray, fids: list[str], ids: list[str], where: Path, source: str) -> np.ndarray:
        pos = pd.Index(fids).get_indexer(ids)
        missing = [k for k, p in zip(ids, pos) if p < 0]
        extra = sorted(set(fids) - set(ids), key=natural_key) if len(fids) != len(ids) - len(missing) else []
        if missing or extra:
            parts = []
            if missing:
                parts.append(f"{len(missing)} keyframe(s) of {source} missing (first: {missing[0]!r})")
            if extra:
                parts.append(f"{len(extra)} keyframe(s) not in {source} (first: {extra[0]!r})")
            raise self._err(f"{where}: keyframe ids do not match the collection: {'; '.join(parts)}")
        return np.ascontiguousarray(X[pos])


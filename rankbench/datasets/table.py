"""Bring your own data without writing a loader: the items listed in one CSV or Parquet file, or
named by their image files (a Market-1501-style ``<identity>_c<cam>...`` pattern).

One row per item. The columns a protocol needs, by their rankbench names (``columns:`` maps a
rankbench name to a column of another name):

==========================  ===============================================================
protocol                    columns
==========================  ===============================================================
``reid``                    ``identity``, ``cam`` (``cam`` for ``gallery: cam``), a fixed split's column (``subset``)
``ordinal``                 ``label`` (a number; empty = unlabelled)
``classification``          ``label`` (a number; optional ``train``: the pool of ``split_by: dataset``)
``comparison``              ``category``, and ``strengths:`` a second file giving each category's
                            strength per attribute (optional ``train``)
``retrieval``,              one judgement column per concept, named in ``concepts:`` (1 relevant,
``stacked_retrieval``       0 not, -1 or empty unjudged; optional ``train``, ``group``)
``video_classification``    ``track`` and ``frame`` (integers; optional ``identity`` when one
                            person has several tracks), cut into sequences as ``tracks`` does
==========================  ===============================================================

and what the features come from: ``path``, an image file, or ``features:`` a ``.npy`` file (or
several, by feature-set name) whose rows are the items, in table order or at the rows of a ``row``
column. Relative paths in the table and in the loader's options are relative to the table's
folder; the table itself (``file``) or the image folder (``root``) is relative to the data root,
as every dataset's ``root`` is. Optional ``id`` (unique; default the image's file name without
its extension, or, where two images share a name, its path below their common folder without the
extension: ``cam_a/person_0001``; else the row number), ``group``, ``subject``; any other column is kept as it is
(e.g. for a protocol's ``group_column``).

A file-name pattern instead of a table (``root`` + ``pattern``): every image under ``root`` (any
depth) is an item, its columns read from its name by a regular expression with named groups
(``identity``, ``cam``, ``frame``, ...), or by the ready pattern ``market1501``
(``^<identity>_c<cam>``: Market-1501, also DukeMTMC-reID and MSMT17 names); the sub-folder is
kept as ``subset`` (``bounding_box_train``, ``query``...). Every image is kept: Market-1501's junk
images (identity ``-1``) and distractors (identity ``0000``) keep those labels, and the dataset
declares them (``info["identity_roles"]``), so a ``reid`` run must say what they are (its
``junk`` and ``distractors`` options).

Every mistake is one line naming the file, the column, the row and what was expected: a missing
column, file or image, an unknown category, a value that is not a number / a boolean / a
judgement, a duplicate id, an image or a features row listed twice, data rows with more fields
than the header, a file name that is not UTF-8, a ``columns:`` entry that would replace a column
the table has; a features file that is not one ``.npy`` array of real, finite numbers with one row
per item (or the rows a ``row`` column names).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ConfigError, DataError
from ..params import Names, PositiveInt
from ..registry import datasets
from .base import Dataset, Loader, fingerprint_files, not_a_file, read_image, resolve_root
from .osr import read_strength_csv
from .tracks import cut_sequences

#: ready file-name patterns (``pattern: market1501``)
PATTERNS = {"market1501": r"^(?P<identity>-?\d+)_c(?P<cam>\d+)"}
#: identities of a ready pattern's images that show no person to re-identify (Market-1501's junk
#: and distractors), declared in the dataset's ``info["identity_roles"]``
NOT_PEOPLE = {"market1501": {"-1": "junk", "0000": "distractor"}}
IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".ppm", ".pgm", ".tif", ".tiff", ".webp")
#: columns read as text (compared as labels, never as numbers: "007" stays "007")
TEXT = ("id", "identity", "cam", "category", "group", "subject")
TRUE, FALSE = {"true", "1", "yes", "y", "t"}, {"false", "0", "no", "n", "f"}


@datasets.register("table")
class Table(Loader):
    """Your own items from one CSV / Parquet table (or image file names): no loader to write.

    Parameters
    ----------
    file : str, optional
        The table (``.csv``; ``.parquet`` with pyarrow installed), relative to the data root.
    root : str, optional
        Or: a folder of images whose names ``pattern`` reads (relative to the data root).
    pattern : str, optional
        ``market1501`` or a regular expression with named groups, matched at the start of each
        image's file name (with ``root``).
    columns : dict, optional
        ``{rankbench name: column of the table}`` for columns named otherwise (``identity: pid``).
    features : str or dict, optional
        A ``.npy`` file of one row per item (``arrays["feat"]``, read with ``extractor: array``),
        or ``{name: file}`` (``arrays["feat/<name>"]``, ``key: feat/<name>``).
    concepts : list of str, optional
        Judgement columns of retrieval concepts (1 / 0 / -1 or empty).
    strengths : str, optional
        Relative attributes: a CSV with a header ``attribute,<category>,...`` and one row of
        strengths (larger = more) per attribute, as OSR's ``relative_ordering.csv``.
    max_gap, sequence_length : int, optional
        Tracking: how tracks are cut into sequences (see the ``tracks`` loader).
    check_images : bool
        Decode every image at load time, so an unreadable file is named up front.
    """

    layout = ("a CSV or Parquet table, one row per item, with the columns the protocol needs (identity, cam; "
              "label; category; concept judgements; track, frame) and a path (an image, relative to the table) "
              "or features (.npy rows); or root: a folder of images named by pattern")

    def __init__(self, file: str | None = None, root: str | None = None, pattern: str | None = None,
                 columns: dict[str, str] | None = None, features: str | dict[str, str] | None = None,
                 concepts: Names | None = None, strengths: str | None = None,
                 max_gap: PositiveInt | None = None, sequence_length: PositiveInt | None = None,
                 check_images: bool = False):
        self.file = file
        self.root = root
        self.pattern = pattern
        self.columns = columns
        self.features = features
        self.concepts = concepts
        self.strengths = strengths
        self.max_gap = max_gap
        self.sequence_length = sequence_length
        self.check_images = check_images

    # ------------------------------------------------------------------ reading
    def load(self, data_root: str | None = None) -> Dataset:
        if (self.file is None) == (self.root is None) or (self.root is None) != (self.pattern is None):
            given = ", ".join(k for k in ("file", "root", "pattern") if getattr(self, k)) or "neither"
            raise ConfigError(f"dataset: expected file (a table) or root and pattern (image file names), got {given}")
        if self.file is not None:
            source = resolve_root(self.file, "", data_root)
            if not source.is_file():
                raise DataError(f"dataset table: file {source} {not_a_file(source)} (file: is relative to the data root, "
                                f"--data-root or $RANKBENCH_DATA); expected layout: {self.layout}")
            table, base = read_table(source), source.parent
        else:
            source = self.root_dir(data_root)
            table, base = scan_names(source, self.pattern), source
        where = str(source)
        table = self._renamed(table, where)
        items, feature_rows = self._items(table, base, where)
        arrays = self._features(base, feature_rows, len(items), where)
        info: dict[str, Any] = {"root": str(base), "source": where}
        if "identity" in items.columns:
            roles = {k: v for k, v in NOT_PEOPLE.get(str(self.pattern), {}).items() if k in set(items["identity"])}
            if roles:
                info["identity_roles"] = roles
        if self.concepts:
            arrays["relevance"] = judgements(table, self.concepts, where)
            info["concepts"] = list(self.concepts)
        if self.strengths is not None:
            info["strength"] = self._strength(items, base, where)
            info["attributes"] = list(info["strength"].columns)
        if "track" in table.columns:
            order = self._tracking(items, where)
            items = items.iloc[order].reset_index(drop=True)
            arrays = {k: v[order] for k, v in arrays.items()}
        if self.check_images and "path" in items.columns:
            for p in items["path"]:
                read_image(p)
        files = [source] if source.is_file() else []
        files += [base / f for f in self._feature_files().values()]
        files += [base / self.strengths] if self.strengths else []
        files += list(items["path"]) if "path" in items.columns else []
        # named by its file: every protocol's message about a column or a value then names the file
        return Dataset(name=where, items=items, arrays=arrays, info=info,
                       fingerprint=fingerprint_files(files, extra=f"{self.registry_name}:{self.get_params()}"))

    def _renamed(self, table: pd.DataFrame, where: str) -> pd.DataFrame:
        mapping = {name: str(col).strip() for name, col in (self.columns or {}).items()}   # as the header is read
        missing = [c for c in mapping.values() if c not in table.columns]
        if missing:
            raise DataError(f"{where}: columns: no column {missing[0]!r} (the table has: {', '.join(table.columns)})")
        for name, col in mapping.items():
            twice = [k for k, v in mapping.items() if v == col and k != name]
            if twice:
                raise ConfigError(f"dataset.columns: expected each column of {where} mapped once, got {col!r} "
                                  f"as both {name!r} and {twice[0]!r}")
            if name != col and name in table.columns and name not in mapping.values():
                raise DataError(f"{where}: columns: {name}: {col!r} would replace the table's own column "
                                f"{name!r}; expected a name the table does not use (rename or drop one of them)")
        return table.rename(columns={v: k for k, v in mapping.items()})

    def _items(self, table: pd.DataFrame, base: Path, where: str) -> tuple[pd.DataFrame, np.ndarray | None]:
        """The items frame (typed columns) and each item's feature-file row (None: table order)."""
        n = len(table)
        if n == 0:
            raise DataError(f"{where}: the table has no rows; expected one row per item")
        items = pd.DataFrame(index=range(n))
        if "path" in table.columns:
            paths = [str(base / p) for p in text(table, "path", where)]
            absent = [i for i, p in enumerate(paths) if not os.path.isfile(p)]
            if absent:
                raise DataError(f"{where}: column 'path', row {absent[0] + 1}: image {paths[absent[0]]} not found "
                                f"({len(absent)} such row(s)); paths are relative to the table's folder")
            real = pd.Series([os.path.realpath(p) for p in paths])
            twice = real.duplicated().to_numpy()
            if twice.any():
                i = int(np.flatnonzero(twice)[0])
                j = int(np.flatnonzero(real.to_numpy() == real.iat[i])[0])
                raise DataError(f"{where}: column 'path', row {i + 1}: image {paths[i]} is row {j + 1}'s too "
                                f"({int(twice.sum())} such row(s)); expected each image once (a copy listed "
                                "twice weighs twice in every metric)")
            items["path"] = paths
        if "id" in table.columns:
            items["id"] = text(table, "id", where)
        elif "path" in items.columns:
            items["id"] = [Path(p).stem for p in items["path"]]
            if items["id"].duplicated().any():   # person_0001.png in cam_a/ and in cam_b/: the folders tell
                top = os.path.commonpath([os.path.dirname(p) for p in items["path"]])
                items["id"] = [Path(os.path.relpath(p, top)).with_suffix("").as_posix() for p in items["path"]]
        else:
            items["id"] = [str(i) for i in range(n)]
        dup = items["id"].duplicated()
        if dup.any():
            i = int(np.flatnonzero(dup)[0])
            raise DataError(f"{where}: column 'id', row {i + 1}: {items['id'].iat[i]!r} names two items; ids must be unique")
        for col in TEXT[1:]:
            if col in table.columns:
                items[col] = text(table, col, where)
        if "label" in table.columns and "track" in table.columns and "identity" not in table.columns:
            # else each track would be a class of its own, the label unread (said before the label is
            # parsed: text classes would first be asked to be numbers)
            raise DataError(f"{where}: column 'label': beside a 'track' column the class is the 'identity' "
                            "(the track when there is none), and a label is not read; expected the class as "
                            "'identity' (rename the column, or map it: columns: {identity: label})")
        if "label" in table.columns:
            items["label"] = numbers(table, "label", where, allow_empty=True)
        if "train" in table.columns:
            items["train"] = booleans(table, "train", where)
        for col in ("track", "frame"):
            if col in table.columns:
                items[col] = integers(table, col, where)
        known = set(items.columns) | {"row", "path", *(self.concepts or [])}
        for col in table.columns:  # anything else, as it is (a protocol's group_column, notes)
            if col not in known:
                items[col] = table[col].to_numpy()
        rows = integers(table, "row", where) if "row" in table.columns else None
        twice = pd.Series(rows).duplicated().to_numpy() if rows is not None else np.zeros(0, bool)
        if twice.any():
            i = int(np.flatnonzero(twice)[0])
            raise DataError(f"{where}: column 'row', row {i + 1}: features row {rows[i]} is row "
                            f"{int(np.flatnonzero(rows == rows[i])[0]) + 1}'s too ({int(twice.sum())} such row(s)); "
                            "expected each item its own features row (a copy weighs twice in every metric)")
        return items, rows

    def _feature_files(self) -> dict[str, str]:
        if self.features is None:
            return {}
        return {"feat": self.features} if isinstance(self.features, str) else \
            {f"feat/{k}": v for k, v in self.features.items()}

    def _features(self, base: Path, rows: np.ndarray | None, n: int, where: str) -> dict[str, np.ndarray]:
        out = {}
        for key, name in self._feature_files().items():
            path = base / name
            if not path.is_file():
                raise DataError(f"{where}: features: file {path} {not_a_file(path)} (relative to the table's folder)")
            out[key] = feature_rows(path, rows, n, where)
        return out

    def _strength(self, items: pd.DataFrame, base: Path, where: str) -> pd.DataFrame:
        path = base / str(self.strengths)
        if not path.is_file():
            raise DataError(f"{where}: strengths: file {path} {not_a_file(path)} (relative to the table's folder)")
        if "category" not in items.columns:
            raise DataError(f"{where}: strengths: the table has no 'category' column to look them up by")
        strength = read_strength_csv(path)
        unknown = sorted(set(items["category"]) - set(strength.index))
        if unknown:
            row = int(np.flatnonzero(items["category"].to_numpy() == unknown[0])[0])
            raise DataError(f"{where}: column 'category', row {row + 1}: unknown category {unknown[0]!r}; {path} "
                            f"orders {', '.join(strength.index)}")
        return strength

    def _tracking(self, items: pd.DataFrame, where: str) -> np.ndarray:
        """Tracking columns: identity (the track unless given), sequence, group; the row order by
        (track, frame), as sequences are cut."""
        if "frame" not in items.columns:
            raise DataError(f"{where}: a 'track' column needs a 'frame' column (tracking sequences)")
        if "group" in items.columns:  # it was replaced by the track, silently
            raise DataError(f"{where}: column 'group': beside a 'track' column the group is the track (a track's "
                            "sequences stay on one side of a split); expected no 'group' column (rename it: a "
                            "protocol's group_column may name any column)")
        order = np.lexsort((items["frame"].to_numpy(), items["track"].to_numpy()))
        track, frame = items["track"].to_numpy()[order], items["frame"].to_numpy()[order]
        twice = np.flatnonzero((track[1:] == track[:-1]) & (frame[1:] == frame[:-1]))
        if len(twice):
            raise DataError(f"{where}: track {track[twice[0]]} has two rows at frame {frame[twice[0]]}")
        seq = np.empty(len(items), dtype=np.intp)
        seq[order] = cut_sequences(track, frame, self.max_gap, self.sequence_length)
        if "identity" not in items.columns:
            items["identity"] = items["track"].to_numpy()
        items["sequence"] = seq
        items["group"] = items["track"].astype(str)
        return order


def feature_rows(path: Path, rows: np.ndarray | None, n: int, where: str) -> np.ndarray:
    """The items' rows of a ``.npy`` file of real, finite numbers: rows ``rows`` (a ``row``
    column), else one row per item in table order, exactly as many as the table has."""
    try:
        a = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise DataError(f"{path}: not a .npy array ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") \
            from None
    if not isinstance(a, np.ndarray):  # np.load opens an .npz archive whatever the file's name
        a.close()
        raise DataError(f"{path}: expected one .npy array, got an .npz archive of {len(a.files)} array(s) "
                        f"({', '.join(a.files[:3])}); save one array with numpy.save")
    if a.ndim < 2 or a.dtype.kind not in "iuf" or not a[:1].size:
        kind = {"c": "complex numbers (their imaginary parts would be dropped)", "b": "booleans"}.get(
            a.dtype.kind, str(a.dtype))
        raise DataError(f"{path}: expected real numbers, one row per item, got shape {a.shape} of {kind}")
    if rows is None:
        if len(a) != n:
            raise DataError(f"{path}: expected one row per item of {where} ({n} rows, in table order), got "
                            f"{len(a)} rows; a 'row' column says which row is whose")
        rows = np.arange(n)
    bad = np.flatnonzero((rows < 0) | (rows >= len(a)))
    if len(bad):
        raise DataError(f"{where}: row {bad[0] + 1}: its features are row {rows[bad[0]]} of {path}, which "
                        f"has {len(a)} rows (rows count from 0, in table order unless a 'row' column says)")
    out = a[rows]
    finite = np.isfinite(out).all(axis=tuple(range(1, out.ndim))) if out.dtype.kind == "f" else np.ones(n, bool)
    if not finite.all():
        i = int(np.flatnonzero(~finite)[0])
        raise DataError(f"{path}: expected finite numbers, got NaN or infinity in row {rows[i]} (item {i + 1} of "
                        f"{where}; {int((~finite).sum())} such item(s))")
    return out


# ----------------------------------------------------------------------------- cells
def read_table(path: Path, comment: str | None = None) -> pd.DataFrame:
    """A CSV or Parquet file as text cells (each column typed later, by what it is); a CSV's lines
    from ``comment`` on are left out when it is given."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        from importlib.util import find_spec

        if find_spec("pyarrow") is None:
            raise DataError(f"{path}: expected the optional package 'pyarrow' to be installed to read Parquet "
                            "(pip install -e '.[parquet]' in the rankbench checkout, or pip install pyarrow), "
                            "got none; or save the table as CSV")
        frame = pd.read_parquet(path)
        return _stripped(frame.astype(object).where(frame.notna(), "").astype(str))
    if suffix != ".csv":
        raise DataError(f"{path}: expected a .csv or .parquet table, got a {suffix or 'file without extension'}")
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True, comment=comment)
        header = pd.read_csv(path, dtype=str, nrows=1, header=None, skipinitialspace=True, comment=comment).iloc[0] \
            if len(frame.columns) else pd.Series(dtype=str)
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise DataError(f"{path}: not a readable CSV table ({str(exc).splitlines()[0]})") from None
    if not isinstance(frame.index, pd.RangeIndex):  # pandas reads a first field beyond the header as row names
        raise DataError(f"{path}: every data row has more fields than the header's {len(frame.columns)} (a "
                        "trailing comma, or a column without a name?); expected as many fields as the header names")
    if len(frame.columns) == 1 and (sep := next((c for c in ";\t|" if c in str(frame.columns[0])), None)):
        raise DataError(f"{path}: expected comma-separated columns, got one column named {str(frame.columns[0])!r}: "
                        f"the header looks separated by {sep!r}; save the table with commas")
    twice = header[header.astype(str).str.strip().duplicated()]
    if len(twice):
        raise DataError(f"{path}: column {str(twice.iat[0]).strip()!r} appears twice in the header; expected "
                        "each column once")
    _no_short_row(path, len(frame.columns), comment)
    return _stripped(frame)


def _stripped(frame: pd.DataFrame) -> pd.DataFrame:
    """Column names and cells without the spaces around them: a header 'row ' is the 'row' column
    (read as another column, its items took the features in table order), and 'v0 ' the group 'v0'
    (a group column is kept as it is: 'v0' and 'v0 ' were two videos, one on each side of a split)."""
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame.apply(lambda column: column.str.strip()) if len(frame.columns) else frame


def _no_short_row(path: Path, n_columns: int, comment: str | None) -> None:
    """pandas reads a row with fewer fields than the header as empty cells, which a label column
    takes for 'unlabelled': a DataError naming the first such line instead."""
    import csv

    with open(path, newline="", encoding="utf-8-sig", errors="replace") as fh:
        lines = (line.split(comment, 1)[0] if comment else line for line in fh)
        rows = csv.reader(lines)
        for row in rows:
            if row and any(f.strip() for f in row) and len(row) < n_columns:
                raise DataError(f"{path}: line {rows.line_num} has {len(row)} field(s) where the header names "
                                f"{n_columns}; expected a field for every column (an empty cell between commas)")


def scan_names(root: Path, pattern: str | None) -> pd.DataFrame:
    """Every image under ``root`` as a row: ``path`` (relative), ``subset`` (its sub-folder) and the
    named groups of ``pattern`` (a ready name or a regular expression) read from its file name."""
    try:
        rx = re.compile(PATTERNS.get(pattern, pattern))
    except re.error as exc:
        raise ConfigError(f"dataset.pattern: expected market1501 or a regular expression, got {pattern!r} ({exc})") \
            from None
    if not rx.groupindex:
        raise ConfigError(f"dataset.pattern: expected named groups such as (?P<identity>...), got {pattern!r}")
    rows = []
    for path in sorted(p for p in root.rglob("*") if p.suffix.lower() in IMAGE_EXTENSIONS and p.is_file()):
        try:
            path.name.encode("utf-8")
        except UnicodeEncodeError:  # bytes that are no UTF-8 text, kept by Python as surrogates
            raise DataError(f"dataset table: image file name {os.fsencode(path.name)!r} under "
                            f"{os.fsencode(path.parent)!r} is not UTF-8 text; expected UTF-8 file names (rename "
                            "the file)") from None
        m = rx.match(path.name)
        if m is None:
            raise DataError(f"dataset table: image {path} does not match the pattern {pattern!r} "
                            f"({PATTERNS.get(pattern, pattern)})")
        fields = m.groupdict()
        rel = path.relative_to(root)
        rows.append({"path": str(rel), "subset": str(rel.parent) if rel.parent != Path(".") else "", **fields})
    if not rows:
        raise DataError(f"dataset table: no images named by the pattern {pattern!r} under {root}")
    return pd.DataFrame(rows).astype(str)


def _bad(where: str, col: str, table: pd.DataFrame, mask: np.ndarray, want: str) -> DataError:
    i = int(np.flatnonzero(mask)[0])
    return DataError(f"{where}: column {col!r}, row {i + 1}: expected {want}, got {table[col].iat[i]!r} "
                     f"({int(mask.sum())} such row(s))")


def text(table: pd.DataFrame, col: str, where: str) -> np.ndarray:
    values = table[col].astype(str).str.strip().to_numpy(dtype=object)
    empty = values == ""
    if empty.any():
        raise _bad(where, col, table, empty, "a value")
    return values


def numbers(table: pd.DataFrame, col: str, where: str, allow_empty: bool = False) -> np.ndarray:
    raw = table[col].astype(str).str.strip()
    out = pd.to_numeric(raw.where(raw != "", None), errors="coerce").to_numpy(dtype=float)
    bad = (np.isnan(out) & ((raw != "").to_numpy() | (not allow_empty))) | np.isinf(out)
    if bad.any():
        raise _bad(where, col, table, bad, "a finite number" + (" (or nothing: unlabelled)" if allow_empty else ""))
    # an integer written beyond 2^53 is not held exactly: two such labels would become one
    inexact = raw.str.fullmatch(r"[+-]?\d+").to_numpy() & (np.abs(out) >= 2 ** 53)
    if inexact.any():
        raise _bad(where, col, table, inexact, "a number held exactly (an integer below 2^53 in size)")
    return out


def integers(table: pd.DataFrame, col: str, where: str) -> np.ndarray:
    out = numbers(table, col, where)
    bad = (out != np.round(out)) | (np.abs(out) > 2 ** 53)   # beyond 2^53 a float is no exact integer
    if bad.any():
        raise _bad(where, col, table, bad, "an integer (of at most 2^53 in size)")
    return out.astype(np.int64)


def booleans(table: pd.DataFrame, col: str, where: str) -> np.ndarray:
    raw = table[col].astype(str).str.strip().str.lower()
    bad = ~raw.isin(TRUE | FALSE).to_numpy()
    if bad.any():
        raise _bad(where, col, table, bad, "true or false (1 / 0, yes / no)")
    return raw.isin(TRUE).to_numpy()


def judgements(table: pd.DataFrame, concepts: list[str], where: str) -> np.ndarray:
    """(items x concepts) int8: 1 relevant, 0 not, -1 unjudged (an empty cell is unjudged)."""
    missing = [c for c in concepts if c not in table.columns]
    if missing:
        raise DataError(f"{where}: concepts: no column {missing[0]!r} (the table has: {', '.join(table.columns)})")
    out = np.empty((len(table), len(concepts)), dtype=np.int8)
    for j, c in enumerate(concepts):
        raw = table[c].astype(str).str.strip().replace({"": "-1", "+1": "1"})
        bad = ~raw.isin(["1", "0", "-1"]).to_numpy()
        if bad.any():
            raise _bad(where, c, table, bad, "a judgement: 1 (relevant), 0 (not) or -1 / empty (unjudged)")
        out[:, j] = raw.astype(int).to_numpy()
    return out

"""Person tracks from one camera as ``<track>_<frame>.jpg`` crops, cut into tracking sequences.

The data of Yan, Zhang, Yang & Hauptmann's PKLR experiments (CVPR 2004, Section 4.1): silhouettes
of people from a tracker, sampled every half second along each tracking sequence, the person's
identity being the class. Any tracker's crop dump renamed to ``<track>_<frame>.jpg`` loads with
``tracks``; ``towncentre`` is the Oxford Town Centre crops as shipped in PETA (the public stand-in
for the paper's private nursing-home video, see ``towncentre/MANIFEST.txt``).

Each track is cut into *sequences* of consecutive crops: a new sequence starts after a gap of more
than ``max_gap`` frames, and a run of n crops is cut into ceil(n / ``sequence_length``) pieces of
near-equal length (so at most ``sequence_length`` crops each, and no one-crop stub at the end).
Sequences get global ids 0, 1, ... in temporal order (first frame, then track).

Items (sorted by track, then frame): ``id`` (the file stem ``"139_2443"``), ``identity`` (track id,
int), ``frame`` (int), ``sequence`` (global sequence id), ``group`` (= track, for protocols that
split by track), ``path``. People seen in the same frame are different people: the
``video_classification`` protocol turns sequences of different tracks that overlap in time into
negative constraints (the paper's Section 4.2).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ConfigError, DataError
from ..params import NonNegativeInt, PositiveInt
from ..registry import datasets
from .base import Dataset, Loader, fingerprint_files, named_files, read_image, require_dir, require_file

_IMAGE_EXT = (".jpg", ".jpeg", ".png", ".bmp")
_NAME = re.compile(r"^(\d+)_(\d+)\.(jpe?g|png|bmp)$", re.IGNORECASE)


def cut_sequences(track: np.ndarray, frame: np.ndarray, max_gap: int | None = None,
                  sequence_length: int | None = None) -> np.ndarray:
    """Global sequence id of each crop; rows must be sorted by (track, frame).

    A sequence ends where the track changes or the next crop is more than ``max_gap`` frames
    later; a run of n crops is then split into ceil(n / sequence_length) near-equal pieces. Ids are
    numbered by (first frame, track), i.e. in temporal order.
    """
    track, frame = np.asarray(track), np.asarray(frame)
    n = len(track)
    if n == 0:
        return np.zeros(0, dtype=np.intp)
    new_run = np.ones(n, dtype=bool)
    new_run[1:] = track[1:] != track[:-1]
    if max_gap is not None:
        new_run[1:] |= np.diff(frame) > max_gap
    starts = np.flatnonzero(new_run)
    bounds = np.r_[starts, n]
    piece = np.empty(n, dtype=np.intp)
    count = 0
    for a, b in zip(bounds[:-1], bounds[1:]):
        k = 1 if sequence_length is None else -(-(b - a) // sequence_length)
        for part in np.array_split(np.arange(a, b), k):
            piece[part] = count
            count += 1
    first = np.full(count, np.iinfo(np.int64).max)
    np.minimum.at(first, piece, frame)
    who = np.empty(count, dtype=track.dtype)
    who[piece] = track
    order = np.lexsort((who, first))
    rank = np.empty(count, dtype=np.intp)
    rank[order] = np.arange(count)
    return rank[piece]


@datasets.register("tracks")
class Tracks(Loader):
    """Tracking crops <track>_<frame>.jpg in one folder (any tracker's dump), cut into sequences.

    Parameters
    ----------
    root : str
        The folder of crops (required).
    tracks : list of int, optional
        Load only these track ids.
    top_k : int, optional
        Or: load only the k tracks with most crops (ties: the smaller track id first).
    max_gap : int, optional
        A new sequence starts after a gap of more than this many frames (default: never).
    sequence_length : int, optional
        At most this many crops per sequence (default: no limit).
    check_images : bool
        Decode every selected crop at load time, so an unreadable file is named up front.

    Items: ``id``, ``identity`` (track), ``frame``, ``sequence``, ``group`` (= track), ``path``
    (module docstring). ``info``: ``tracks`` (the selected track ids, most crops first for
    ``top_k``), ``n_sequences``, ``n_frames`` and ``n_shared_frames`` (frames holding two or more
    selected tracks), ``root``.
    """

    image_dir = ""
    layout = ("<root>/<track>_<frame>.jpg: one crop per track and frame, track and frame "
              "non-negative integers (.jpg, .jpeg, .png or .bmp)")

    def __init__(self, root: str, tracks: list[NonNegativeInt] | None = None, top_k: PositiveInt | None = None,
                 max_gap: PositiveInt | None = None, sequence_length: PositiveInt | None = None,
                 check_images: bool = False):
        self.root = root
        self.tracks = tracks
        self.top_k = top_k
        self.max_gap = max_gap
        self.sequence_length = sequence_length
        self.check_images = check_images

    # ------------------------------------------------------------------ reading
    def _where(self) -> str:
        return f"dataset {self.registry_name}"

    def scan(self, folder: Path) -> pd.DataFrame:
        """Every crop of ``folder`` as rows (track, frame, path), sorted; errors name the file."""
        rows, seen = [], {}
        for path, m in named_files(folder, _NAME, _IMAGE_EXT, self._where(), self.layout,
                                   "file name {path} does not parse as <track>_<frame>"):
            key = (int(m.group(1)), int(m.group(2)))
            if key in seen:
                raise DataError(f"{self._where()}: two crops of track {key[0]} at frame {key[1]} in "
                                f"{folder}: {seen[key]} and {path.name}; expected layout: {self.layout}")
            seen[key] = path.name
            rows.append((key[0], key[1], str(path)))
        if not rows:
            raise DataError(f"{self._where()}: no <track>_<frame> images in {folder}; "
                            f"expected layout: {self.layout}")
        return pd.DataFrame(rows, columns=["track", "frame", "path"]).sort_values(
            ["track", "frame"], kind="stable").reset_index(drop=True)

    def select(self, crops: pd.DataFrame, folder: Path) -> list[int]:
        """The track ids to load, in selection order."""
        counts = crops.groupby("track").size()
        if self.tracks is not None and self.top_k is not None:
            raise ConfigError(f"{self._where()}: give tracks or top_k, not both")
        if self.tracks is not None:
            chosen = [int(t) for t in self.tracks]
            if len(set(chosen)) != len(chosen):
                raise ConfigError(f"{self._where()}.tracks: a track is listed twice: {chosen}")
            missing = [t for t in chosen if t not in counts.index]
            if missing:
                raise DataError(f"{self._where()}: selected track {missing[0]} has no crops in {folder} "
                                f"({len(missing)} such track(s): {missing[:10]}); expected layout: {self.layout}")
            return chosen
        order = sorted(counts.index, key=lambda t: (-counts[t], t))
        if self.top_k is not None:
            if self.top_k > len(order):
                raise ConfigError(f"{self._where()}.top_k: {self.top_k} asked for, but {folder} holds "
                                  f"{len(order)} tracks")
            return [int(t) for t in order[: self.top_k]]
        return sorted(int(t) for t in counts.index)

    def load(self, data_root: str | None = None) -> Dataset:
        root = self.root_dir(data_root)
        folder = require_dir(root / self.image_dir, self._where(), self.layout) if self.image_dir else root
        crops = self.scan(folder)
        chosen = self.select(crops, folder)
        crops = crops[crops["track"].isin(chosen)].reset_index(drop=True)
        track, frame = crops["track"].to_numpy(), crops["frame"].to_numpy()
        seq = cut_sequences(track, frame, self.max_gap, self.sequence_length)
        items = pd.DataFrame({
            "id": [f"{t}_{f}" for t, f in zip(track, frame)],
            "identity": track, "frame": frame, "sequence": seq, "group": track, "path": crops["path"],
        })
        if self.check_images:
            for p in items["path"]:
                read_image(p)
        per_frame = items.groupby("frame").size()
        info = {"root": str(folder), "tracks": chosen, "n_sequences": int(seq.max() + 1),
                "n_frames": int(len(per_frame)), "n_shared_frames": int((per_frame >= 2).sum())}
        arrays = self.extra_arrays(items, root, info)
        return Dataset(name=self.registry_name, items=items, arrays=arrays, info=info,
                       fingerprint=fingerprint_files(list(items["path"]), extra=self.registry_name))

    def extra_arrays(self, items: pd.DataFrame, root: Path, info: dict) -> dict[str, np.ndarray]:
        """Arrays shipped with the crops (none for a plain dump); may add to ``info``."""
        return {}


def read_attribute_labels(path: Path, layout: str) -> dict[int, list[str]]:
    """PETA's ``<id> attr attr ...`` lines as {id: attributes}; errors name the file and line."""
    labels: dict[int, list[str]] = {}
    with open(path, encoding="utf-8-sig", errors="replace") as fh:
        for k, line in enumerate(fh, 1):
            parts = line.split()
            if not parts:
                continue
            if not parts[0].isdigit():
                raise DataError(f"dataset towncentre: {path} line {k} does not start with a track id "
                                f"({line.strip()[:40]!r}); expected layout: {layout}")
            tid = int(parts[0])
            if tid in labels:
                raise DataError(f"dataset towncentre: {path} line {k}: track {tid} is labelled twice; "
                                f"expected layout: {layout}")
            labels[tid] = parts[1:]
    return labels


@datasets.register("towncentre")
class TownCentre(Tracks):
    """Oxford Town Centre pedestrian tracks (PETA crops): 222 tracks, 6967 crops, PETA attributes.

    ``towncentre/images/<track>_<frame>.jpg``; one fixed camera, 25 fps, crops mostly 9 frames
    apart within a track. With the defaults (``max_gap=18``: one missed crop is bridged;
    ``sequence_length=8``: 8 crops ~ 2.9 s, about the paper's 5.8-7.2 silhouettes per sequence at
    half-second sampling) the whole set loads as 222 tracks, 6967 crops, 995 sequences; 2185 of
    its 3403 frames hold two or more tracks. The paper's two settings by most crops:

    ====================  ======  =========  =====  ========================================
    setting               people  sequences  crops  paper (nursing home)
    ====================  ======  =========  =====  ========================================
    ``top_k: 6``          6       69         507    63 sequences / 363 images / 6 people
    ``top_k: 5``          5       59         444    156 sequences / 1118 images / 5 people
    ====================  ======  =========  =====  ========================================

    Top 6 = tracks 139, 58, 55, 196, 201, 43 (ties at 66 crops by track id). Their crops fall on
    503 frames, only 4 of them shared (tracks are sampled every 9 frames at different phases), but
    43 pairs of their sequences overlap in time (33 of the top 5's), the paper's source of negative
    constraints.

    When ``PETA_TownCentre_Label.txt`` is present, every crop also carries its track's PETA
    attributes as retrieval concepts: ``arrays["relevance"]`` (int8, items x attributes, 1 = the
    track has the attribute, 0 = not; absent from a track's line = 0) and ``info["concepts"]``
    (the attribute names, sorted: every attribute named in the file). Parameters as ``tracks``,
    ``root`` optional (default ``<data-root>/towncentre``).
    """

    folder = "towncentre"
    image_dir = "images"
    label_file = "PETA_TownCentre_Label.txt"
    layout = ("towncentre/images/<track>_<frame>.jpg (one crop per track and frame) and optionally "
              "towncentre/PETA_TownCentre_Label.txt ('<track> attr attr ...' per line)")

    def __init__(self, root: str | None = None, tracks: list[NonNegativeInt] | None = None,
                 top_k: PositiveInt | None = None, max_gap: PositiveInt | None = 18,
                 sequence_length: PositiveInt | None = 8, check_images: bool = False):
        super().__init__(root=root, tracks=tracks, top_k=top_k, max_gap=max_gap,
                         sequence_length=sequence_length, check_images=check_images)

    def extra_arrays(self, items: pd.DataFrame, root: Path, info: dict) -> dict[str, np.ndarray]:
        path = root / self.label_file
        if not path.exists():
            return {}
        labels = read_attribute_labels(require_file(path, self._where(), self.layout), self.layout)
        missing = [t for t in info["tracks"] if t not in labels]
        if missing:
            raise DataError(f"dataset towncentre: track {missing[0]} has no line in {path} ({len(missing)} "
                            f"such track(s)); expected layout: {self.layout}")
        concepts = sorted({a for attrs in labels.values() for a in attrs})
        by_case = {}
        for c in concepts:   # upperBodyGrey and UpperBodyGrey: one attribute's tracks split in two
            if by_case.setdefault(c.casefold(), c) != c:
                raise DataError(f"dataset towncentre: {path}: attributes {by_case[c.casefold()]!r} and {c!r} differ "
                                f"only in case; expected each attribute written one way")
        col = {c: k for k, c in enumerate(concepts)}
        per_track = {t: np.zeros(len(concepts), dtype=np.int8) for t in info["tracks"]}
        for t, row in per_track.items():
            row[[col[a] for a in labels[t]]] = 1
        info["concepts"] = concepts
        return {"relevance": np.stack([per_track[t] for t in items["identity"]]).reshape(len(items), len(concepts))}

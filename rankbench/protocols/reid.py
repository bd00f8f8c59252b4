"""Person re-identification: probes from one view rank a gallery from another.

Prosser et al. (BMVC 2010, Section 4) and the later tables quoted in ``../shared/PAPERS.md``, and
the benchmarks evaluated as torchreid evaluates them (GRID, PRID 2011, Market-1501, CAVIAR4REID).

Splits are drawn per trial (seeded) or fixed by the benchmark. Drawn: ``n_test`` people are drawn
at random from those a trial could test (under ``cam``, seen by both ``probe_cam`` and
``gallery_cam``; otherwise, with two images at least); the rest of those train (or ``n_train`` of
them). Other people (one camera only, a third camera's alone, a single image) neither train nor
test; ``distractors: unpaired`` puts the one-camera people in the galleries. Three ways to form
probe and gallery:

``cam``
    two-camera sets such as VIPeR: each test person's images in ``probe_cam`` are probes, the ones
    in ``gallery_cam`` the gallery.
``one_random``
    sets without cameras such as i-LIDS (Zheng, Gong, Xiang): one random image per test person
    forms the gallery, all their other images are probes.
``pair``
    two random images per test person, one probe and one gallery (Prosser's i-LIDS protocol); the
    training people give two images each as well.

Under ``one_random`` and ``pair`` the images are drawn regardless of camera: on data with a ``cam``
column, a probe whose person's gallery images were all taken by its own camera has no match to
find and is left out of CMC and mAP (see Metrics), so a trial may score fewer probes than it drew;
each such trial says so in a warning. ``cam`` draws probe and gallery from two cameras instead.

Fixed (the benchmark's own splits, replacing the draw; ``n_test``, ``n_train``, ``gallery`` and
the cameras are then not used): ``split_file``, a YAML or JSON file of trials, each naming its
train / probe / gallery items by the dataset's ``id``::

    trials:
      - {train: [0001_a, 0001_b, 0002_a, 0002_b], probe: [0003_a, 0004_a], gallery: [0003_b, 0004_b, 0900_b]}
      - {train: [...], probe: [...], gallery: [...]}

(a relative path is relative to the dataset's folder, the table's folder for ``table``; trial ``t``
of a run is the file's ``trials[t]``, so a run has at most as many trials as the file); or
``split_column``, a column naming each item's part of the one trial: ``train``, ``probe`` or
``gallery``, or Market-1501's folder names ``bounding_box_train``, ``query`` and
``bounding_box_test`` (the table loader's ``subset``); an item with any other value (Market-1501's
``gt_bbox``) takes no part.

Shots (``probe_shots``, ``gallery_shots``: an integer N or ``all``): how many images of a test
person (and camera, where the dataset has cameras) are probes and how many are gallery, N drawn at
random per trial (seeded; all of them when the person has N or fewer). By default (null) what the
gallery mode says: ``all`` under ``cam`` and fixed splits; under ``one_random`` one gallery image
and all the others probes, under ``pair`` one and one (there, a person's images are drawn in one
random order: the first ``gallery_shots`` are the gallery, the next ``probe_shots`` the probes,
always leaving at least one probe). ``probe_shots: 1, gallery_shots: 1`` is single-shot,
``all`` / ``all`` multi-shot.

Distractors, identities with no probe that join every gallery and are never trained on:
``distractors: unpaired`` adds the gallery-camera images of every person seen by the gallery camera
only (under ``one_random`` / ``pair``: of every person with a single image), ``gallery_shots`` of
them per person (GRID's 775 gallery-only people, PRID 2011's 549 people of camera B only); a list
of identity labels (``["0000"]``, Market-1501's distractors) adds every image of those identities
(a fixed split places them itself, in its galleries only, and must list some). ``junk``: identity
labels whose images are left out of training, probes and galleries (Market-1501's ``"-1"``). A loader that knows such
labels (the table loader's ``market1501`` pattern) declares them, and a run must say what they are.

Metrics: ``cmc@K`` for K in ``ranks`` (default 1, 5, 10, 20, 25, 50 as far as the smallest gallery
reaches; a rank beyond it is refused) (matching rate at rank K: the rank of a probe's first correct
gallery item, ties at their expected value), ``nauc`` and ``map``, the mean over probes of the average
precision of each probe's ranking of the gallery over all its correct items (torchreid's
``eval_market1501``, :func:`rankbench.metrics.reid_average_precisions`); every probe image is a
query. The whole CMC curve is kept for plots. As in torchreid, a probe does not rank the images of
its own identity taken by its own camera (when the dataset has a ``cam`` column): a probe whose
only true matches are such images has no match to find and is left out of CMC and mAP (the trial
records how many in ``extra["probes_without_match"]`` and warns, saying how many probes of how many
it scored); under ``cam`` the two cameras differ, so every probe counts.

An image is one person's: a file (or a byte-identical copy) under two identities is refused, and
so is one in both the probe and the gallery camera of a person (``cam``), a person matched to
their own image. Copies within one person's images occur in real data (CAVIAR4REID has one) and
are kept, with a warning counting them; ``one_random`` and ``pair`` never make a copy of a
gallery image its probe.
"""

from __future__ import annotations

import functools
import json
import os
import re
import warnings
from pathlib import Path
from typing import Annotated, Any, Callable, Literal

import numpy as np
import pandas as pd
import yaml
from pydantic import Field

from ..datasets.base import Dataset, same_files
from ..errors import ConfigError, DataError
from ..metrics import cmc_curve, nauc, reid_average_precisions
from ..params import Distinct, PositiveInt
from ..rankers.base import capabilities, diagnostics
from ..registry import protocols
from ..utils.meter import Meter
from .base import Protocol, TrialResult, TrialSplit, by_number, checked_output, take, whole_number

DEFAULT_RANKS = (1, 5, 10, 20, 25, 50)
#: the parts of a fixed trial
PARTS = ("train", "probe", "gallery")
#: what a ``split_column`` value says about an item (Market-1501's folder names included)
ROLES = {"train": "train", "probe": "probe", "gallery": "gallery",
         "bounding_box_train": "train", "query": "probe", "bounding_box_test": "gallery"}
Shots = PositiveInt | Literal["all"]
Labels = Annotated[tuple[str, ...], Field(min_length=1), Distinct]


@protocols.register("reid")
class ReIdentification(Protocol):
    """Re-identification (probe vs gallery; single- or multi-shot, distractors), scored by CMC, nAUC and mAP."""

    capability = ("pair_scorer", "metric")
    curve = "cmc"
    headline = "cmc@1"
    metric_families = ("cmc@K", "nauc", "map")
    parameter_labels = {"n_test": "Test people", "n_train": "Training people",
                        "probe_shots": "Probe images per person", "gallery_shots": "Gallery images per person"}

    def __init__(self, n_test: Annotated[int, Field(ge=2)] = 316, n_train: PositiveInt | None = None,
                 gallery: Literal["cam", "one_random", "pair"] = "cam", probe_cam: str = "a",
                 gallery_cam: str = "b",
                 ranks: Annotated[tuple[PositiveInt, ...], Field(min_length=1)] | None = None,
                 probe_shots: Shots | None = None, gallery_shots: Shots | None = None,
                 distractors: Literal["none", "unpaired"] | Labels = "none", junk: Labels | None = None,
                 split_file: str | None = None, split_column: str | None = None):
        self.n_test = n_test
        self.n_train = n_train
        self.gallery = gallery
        self.probe_cam = probe_cam
        self.gallery_cam = gallery_cam
        self.ranks = ranks
        self.probe_shots = probe_shots
        self.gallery_shots = gallery_shots
        self.distractors = distractors
        self.junk = junk
        self.split_file = split_file
        self.split_column = split_column

    # ------------------------------------------------------------------ checks
    @property
    def _is_fixed(self) -> bool:
        """The benchmark's own trials replace the draw (``split_file`` or ``split_column``)."""
        return self.split_file is not None or self.split_column is not None

    @property
    def _by_cam(self) -> bool:
        """Probes and gallery are drawn by camera: ``gallery: cam`` and no fixed split (which forms
        them itself, cameras or not); only then does the protocol read the ``cam`` column to split."""
        return self.gallery == "cam" and not self._is_fixed

    def check_dataset(self, dataset: Dataset) -> None:
        if self.split_file is not None and self.split_column is not None:
            raise ConfigError("protocol.split_column: expected split_file or split_column, got both")
        if self.split_column is not None and self.split_column not in dataset.items.columns:
            raise ConfigError(f"protocol.split_column: expected a column of dataset {dataset.name!r} (it has: "
                              f"{', '.join(dataset.items.columns)}), got {self.split_column!r}")
        needed = ["identity"] + (["cam"] if self._by_cam else [])
        for col in needed:
            if col not in dataset.items.columns:
                raise DataError(f"protocol reid needs a {col!r} column; dataset {dataset.name!r} has: "
                                f"{', '.join(dataset.items.columns)}")
        self._check_labels(dataset)
        self._check_copies(dataset)
        if self.split_column is not None:
            self._check_parts(dataset)
        if self.gallery != "cam" and not self._is_fixed and self.gallery_shots == "all":
            raise ConfigError(f"protocol.gallery_shots: expected an integer under gallery: {self.gallery} (a "
                              "person's other images are the probes), got 'all'")
        if self._is_fixed:
            if self.distractors == "unpaired":
                raise ConfigError("protocol.distractors: expected none or identity labels with a fixed split "
                                  "(its gallery is what it lists), got 'unpaired'")
        else:
            if self._by_cam:
                self._check_cams(dataset)
            n_total = len(self._eligible(dataset))
            if n_total < 3:  # no n_test can be drawn: the data, not the parameter, is at fault
                seen = (f"in both camera {self.probe_cam!r} and camera {self.gallery_cam!r}" if self._by_cam
                        else "in two different images")
                raise DataError(f"dataset {dataset.name!r}: {n_total} people are seen {seen}; expected at least "
                                "3 (two test people and one to train on; is an identity written two ways, "
                                "e.g. '007' and '7'?)")
            if self.n_test >= n_total or self.n_test < 2:
                raise ConfigError(f"protocol.n_test: expected 2..{n_total - 1} (dataset {dataset.name!r} "
                                  f"has {n_total} usable people), got {self.n_test}")
            if self.n_train is not None and self.n_train + self.n_test > n_total:
                raise ConfigError(f"protocol.n_train: n_train + n_test must be <= {n_total}, got "
                                  f"{self.n_train} + {self.n_test}")
        floor = self._gallery_floor(dataset)
        where = ("the smallest gallery of the fixed trials" if self._is_fixed else
                 f"the gallery size n_test = {self.n_test}" if floor == self.n_test and self._shots()[1] == 1 else
                 f"the smallest gallery a trial can draw, {floor} (n_test = {self.n_test} people, at least one "
                 "image each" + (", and the distractors)" if floor > self.n_test else ")"))
        if self.ranks is not None and max(self.ranks) > floor:
            raise ConfigError(f"protocol.ranks: expected ranks <= {where}, got {max(self.ranks)}")
        self._check_negative(dataset)

    def _check_negative(self, dataset: Dataset) -> None:
        """A negative identity (Market-1501 and DukeMTMC's junk) is declared junk or distractors:
        scored as a person, it would join every gallery it falls in as distractors."""
        ids = dataset.column("identity").astype(str)
        negative = sorted(lab for lab in set(map(str, ids)) - self._not_people(dataset)
                          if lab.strip().startswith("-") and lab.strip()[1:].isdigit())
        if negative:
            raise ConfigError(f"protocol.junk: dataset {dataset.name!r} has identity {negative[0]!r} "
                              f"({int((ids == negative[0]).sum())} item(s)), a negative number, which marks junk "
                              "images in Market-1501-style data; expected it in protocol.junk or protocol.distractors "
                              f"(e.g. junk: [{negative[0]!r}]), or a person's label that is not negative")

    def _check_parts(self, dataset: Dataset) -> None:
        """A ``split_column`` value that names a part but for its case or spaces ('Gallery') is
        refused; the items of any other value take no part, said in a warning with their counts."""
        where = f"protocol.split_column: column {self.split_column!r} of dataset {dataset.name!r}"
        values, counts = np.unique(dataset.column(self.split_column).astype(str), return_counts=True)
        unknown = ~np.isin(values, list(ROLES))
        values, counts = values[unknown].astype(object), counts[unknown]   # Python str: said as written
        near = [v for v in values if v.strip().lower() in ROLES]
        if near:
            raise DataError(f"{where}: value {near[0]!r}; expected a part written exactly as "
                            f"{near[0].strip().lower()!r} ({', '.join(ROLES)}; any other value takes no part)")
        if len(values):
            warnings.warn(f"{where}: {counts.sum()} item(s) take no part, their value being none of "
                          f"{', '.join(ROLES)}: {', '.join(f'{v!r} ({n})' for v, n in zip(values[:5], counts[:5]))}",
                          UserWarning, stacklevel=2)

    def _check_cams(self, dataset: Dataset) -> None:
        cams = sorted(set(dataset.column("cam").astype(str)))
        for key in ("probe_cam", "gallery_cam"):
            if str(getattr(self, key)) not in cams:
                raise ConfigError(f"protocol.{key}: expected one of dataset {dataset.name!r}'s cameras "
                                  f"({', '.join(cams)}), got {getattr(self, key)!r}")
        if str(self.probe_cam) == str(self.gallery_cam):
            raise ConfigError(f"protocol.gallery_cam: expected a camera other than probe_cam, got "
                              f"{self.gallery_cam!r} for both")

    def _check_labels(self, dataset: Dataset) -> None:
        """Junk and distractor labels name identities of the dataset, never the same one twice; the
        labels the loader knows not to be people (``info["identity_roles"]``) are declared."""
        present = set(map(str, dataset.column("identity")))
        labels = self._labels()
        not_people = self._not_people(dataset)
        # '007' in camera a and '7' in b: one person split in two (in one camera too: two people
        # no dataset means); 'c5' in the query and '5' in the gallery: a probe's own camera unseen
        ids = dataset.column("identity").astype(str)
        _one_way(dataset.name, "identity", "person's", sorted(present - not_people), ids,
                 dataset.column("cam").astype(str) if "cam" in dataset.items.columns else None,
                 lambda s: n if (n := whole_number(s)) is not None and n > 0 else None)   # 0000, -1: markers
        if "cam" in dataset.items.columns:
            _one_way(dataset.name, "cam", "camera's", sorted(map(str, set(dataset.column("cam").astype(str)))),
                     dataset.column("cam").astype(str), None, _camera_key)
        for key in ("junk", "distractors"):
            absent = [lab for lab in labels[key] if lab not in present]
            if absent:
                some = ", ".join(repr(s) for s in sorted(present)[:3])
                raise ConfigError(f"protocol.{key}: expected identities of dataset {dataset.name!r} (such as "
                                  f"{some}), got {absent[0]!r}, which no item has")
        both = sorted(set(labels["junk"]) & set(labels["distractors"]))
        if both:
            raise ConfigError(f"protocol.junk: identity {both[0]!r} is also in protocol.distractors; expected one")
        for label, role in dict(dataset.info.get("identity_roles") or {}).items():
            if label in present and label not in labels["junk"] + labels["distractors"]:
                key = "junk" if role == "junk" else "distractors"
                raise ConfigError(f"protocol.{key}: dataset {dataset.name!r} marks identity {label!r} as {role} "
                                  f"images, not a person; expected it in protocol.junk or protocol.distractors "
                                  f"(e.g. {key}: [{label!r}]), got {getattr(self, key)!r}")

    def _not_people(self, dataset: Dataset) -> set[str]:
        """The identity labels that are no person: junk, distractors, and what the loader marks so."""
        labels = self._labels()
        return set(labels["junk"] + labels["distractors"]) | set(dict(dataset.info.get("identity_roles") or {}))

    def _labels(self) -> dict[str, list[str]]:
        return {"junk": list(self.junk or ()),
                "distractors": [] if self.distractors in ("none", "unpaired") else list(self.distractors)}

    def _usable(self, dataset: Dataset) -> tuple[np.ndarray, np.ndarray]:
        """Rows that may be a person's (not junk, no distractor label), and the distractor-label rows."""
        ids = dataset.column("identity").astype(str)
        labels = self._labels()
        junk, marked = np.isin(ids, labels["junk"]), np.isin(ids, labels["distractors"])
        return ~junk & ~marked, marked

    def _check_copies(self, dataset: Dataset) -> None:
        """Refuse an image (the same bytes) shared by two people, or by a person's probe and gallery
        cameras; warn once, counting them, about copies within one person's images."""
        copy = _copies(dataset)
        if copy is None:
            return
        ids, paths = dataset.column("identity"), dataset.column("path")
        cams = dataset.column("cam").astype(str) if self._by_cam else None
        roles = {str(self.probe_cam), str(self.gallery_cam)}
        kept = []
        for i in np.flatnonzero(copy != np.arange(len(copy))):
            j = copy[i]
            what = f"rows {j + 1} and {i + 1} of dataset {dataset.name!r} ({paths[j]}, {paths[i]}) are the same image"
            if ids[i] != ids[j]:
                raise DataError(f"{what} under two identities, {ids[j]!r} and {ids[i]!r}; expected each image to "
                                "show one person")
            if cams is not None and cams[i] != cams[j] and {cams[i], cams[j]} == roles:
                raise DataError(f"{what} in the probe and the gallery camera of identity {ids[i]!r} (a person "
                                "matched to their own image); expected another image in each camera")
            kept.append(i)
        if kept:
            warnings.warn(f"dataset {dataset.name!r}: {len(kept)} image(s) repeat another image of the same person "
                          f"byte for byte (first: row {kept[0] + 1}, {paths[kept[0]]}); kept, never as a probe "
                          "of its own copy", UserWarning, stacklevel=2)

    def _eligible(self, dataset: Dataset) -> np.ndarray:
        """People usable as test people: seen in both cameras, or with at least two different images."""
        ids = dataset.column("identity")
        usable, _ = self._usable(dataset)
        if self._by_cam:
            cams = dataset.column("cam").astype(str)
            in_p = set(ids[usable & (cams == str(self.probe_cam))])
            in_g = set(ids[usable & (cams == str(self.gallery_cam))])
            return by_number(np.array(sorted(in_p & in_g)))
        copy = _copies(dataset)
        distinct = usable if copy is None else usable & (copy == np.arange(len(ids)))   # one row per image
        uniq, counts = np.unique(ids[distinct], return_counts=True)
        return by_number(uniq[counts >= 2])

    def _unpaired(self, dataset: Dataset) -> np.ndarray:
        """Rows of ``distractors: unpaired``: the gallery-camera images of people with no probe-camera
        image (without cameras: the images of people with a single image)."""
        if self.distractors != "unpaired":
            return np.array([], dtype=int)
        ids = dataset.column("identity")
        usable, _ = self._usable(dataset)
        if self._by_cam:
            cams = dataset.column("cam").astype(str)
            seen_p = ids[usable & (cams == str(self.probe_cam))]
            return np.flatnonzero(usable & (cams == str(self.gallery_cam)) & ~np.isin(ids, seen_p))
        uniq, counts = np.unique(ids[usable], return_counts=True)
        return np.flatnonzero(usable & np.isin(ids, uniq[counts == 1]))

    def _shots(self) -> tuple[int | str, int | str]:
        """(probe_shots, gallery_shots) with the gallery mode's defaults filled in."""
        default = ("all", "all") if self.gallery == "cam" or self._is_fixed else \
            ("all", 1) if self.gallery == "one_random" else (1, 1)
        return (default[0] if self.probe_shots is None else self.probe_shots,
                default[1] if self.gallery_shots is None else self.gallery_shots)

    def _gallery_floor(self, dataset: Dataset) -> int:
        """The fewest items a trial's gallery can hold: each test person gives at least one, and the
        distractors what they give in every trial (a fixed split: its smallest gallery)."""
        _, marked = self._usable(dataset)
        if self._is_fixed:
            return min(int(marked[g].sum()) + len(_groups(dataset, g[~marked[g]]))
                       for g in (t["gallery"] for t in self._fixed(dataset)))
        k = self._shots()[1]

        def shots(rows: np.ndarray) -> np.ndarray:
            sizes = _group_sizes(dataset, rows)
            return sizes if k == "all" else np.minimum(sizes, int(k))

        test = self.n_test   # without cameras: at least one image per test person
        if self._by_cam:     # the test people of fewest gallery-camera images (all of them, or k)
            usable, _ = self._usable(dataset)
            gal = np.flatnonzero(usable & (dataset.column("cam").astype(str) == str(self.gallery_cam))
                                 & np.isin(dataset.column("identity").astype(str), self._eligible(dataset).astype(str)))
            test = int(np.sort(shots(gal))[: self.n_test].sum())
        return test + int(marked.sum()) + int(shots(self._unpaired(dataset)).sum())

    def _ranks(self, dataset: Dataset) -> tuple[int, ...]:
        """The ranks reported: as given, or the usual ones that fit in the smallest gallery."""
        if self.ranks is not None:
            return tuple(self.ranks)
        floor = self._gallery_floor(dataset)
        return tuple(r for r in DEFAULT_RANKS if r <= floor)

    def reported_numbers(self, family: str, dataset: Dataset) -> tuple[int, ...] | None:
        """The ranks K of ``cmc@K``: ``ranks``, or the usual ones that fit in the smallest gallery."""
        return self._ranks(dataset) if family == "cmc@K" else super().reported_numbers(family, dataset)

    # ------------------------------------------------------------------ fixed splits
    def fixed_trials(self, dataset: Dataset) -> int | None:
        if not self._is_fixed:
            return None
        return len(self._fixed(dataset))

    def _fixed(self, dataset: Dataset) -> list[dict[str, np.ndarray]]:
        """The fixed trials as row arrays (junk left out), checked against the dataset."""
        if self.split_column is not None:
            values = dataset.column(self.split_column).astype(str)
            roles = np.array([ROLES.get(v, "") for v in values])
            trials = [{part: np.flatnonzero(roles == part) for part in PARTS}]
            where = f"protocol.split_column: column {self.split_column!r} of dataset {dataset.name!r}"
            for part in PARTS:
                if not len(trials[0][part]):
                    names = " / ".join(k for k, v in ROLES.items() if v == part)
                    raise ConfigError(f"{where}: expected items marked {names}, got none (values: "
                                      f"{', '.join(sorted(set(values))[:8])})")
        else:
            path = self._split_path(dataset)
            trials = [{p: np.asarray(v, dtype=int) for p, v in t.items()}
                      for t in _rows_of(read_split_file(str(path)), tuple(map(str, dataset.column("id"))), str(path))]
            where = str(path)
        usable, marked = self._usable(dataset)
        ids = dataset.column("identity").astype(str)
        item_ids = dataset.column("id")
        copy = _copies(dataset)
        out = []
        for i, t in enumerate(trials):
            for part in ("train", "probe"):
                bad = t[part][marked[t[part]]]
                if len(bad):
                    raise ConfigError(f"{where}: trials[{i}].{part}: item {str(item_ids[bad[0]])!r} is of distractor "
                                      f"identity {str(ids[bad[0]])!r}; expected distractors in the gallery only")
            kept = {p: t[p][usable[t[p]] | marked[t[p]]] for p in PARTS}
            seen = set(ids[kept["train"]])
            for part in ("probe", "gallery"):
                leak = [r for r in kept[part] if ids[r] in seen]
                if leak:
                    raise ConfigError(f"{where}: trials[{i}].{part}: item {str(item_ids[leak[0]])!r} is of identity "
                                      f"{str(ids[leak[0]])!r}, which trials[{i}].train trains on; expected unseen people")
            twin = np.flatnonzero(np.isin(copy[kept["probe"]], copy[kept["gallery"]])) if copy is not None else []
            if len(twin):
                r = kept["probe"][twin[0]]
                g = kept["gallery"][copy[kept["gallery"]] == copy[r]][0]
                raise ConfigError(f"{where}: trials[{i}].probe: item {str(item_ids[r])!r} is the same image as gallery "
                                  f"item {str(item_ids[g])!r} ({dataset.column('path')[g]}); expected a person never "
                                  "matched to their own image")
            for part in PARTS:
                if not len(kept[part]):
                    raise ConfigError(f"{where}: trials[{i}].{part}: expected items, got none"
                                      + (" once junk is left out" if len(t[part]) else ""))
            if not set(ids[kept["probe"]]) & set(ids[kept["gallery"]]):
                raise ConfigError(f"{where}: trials[{i}].gallery: expected the identities of some probes, got none "
                                  "of them (no probe has a match to find)")
            out.append(kept)
        listed = set(ids[np.concatenate([t["gallery"] for t in out])])
        absent = [lab for lab in self._labels()["distractors"] if lab not in listed]
        if absent:
            raise ConfigError(f"protocol.distractors: identity {absent[0]!r} has no item in any gallery of {where}; "
                              "expected a fixed split to list the distractors' items in its galleries (it places "
                              "them), or the label left out of protocol.distractors")
        return out

    def input_files(self, dataset: Dataset) -> tuple[Path, ...]:
        return (self._split_path(dataset),) if self.split_file is not None else ()

    def _split_path(self, dataset: Dataset) -> Path:
        path = Path(str(self.split_file)).expanduser()
        if not path.is_absolute() and dataset.info.get("root"):
            path = Path(dataset.info["root"]) / path
        if not path.is_file():
            raise ConfigError(f"protocol.split_file: file {path} not found (a relative path is relative to the "
                              f"dataset's folder)")
        return path

    # ------------------------------------------------------------------ split
    def split(self, dataset: Dataset, rng: np.random.Generator, trial: int | None = None) -> dict[str, Any]:
        if self._is_fixed:
            return self._fixed_split(dataset, rng, int(trial or 0))
        ids = dataset.column("identity")
        usable, marked = self._usable(dataset)
        people = self._eligible(dataset)
        perm = rng.permutation(len(people))
        test_people = people[perm[: self.n_test]]
        rest = people[perm[self.n_test:]]
        train_people = rest if self.n_train is None else rest[: self.n_train]
        test_mask = np.isin(ids, test_people) & usable
        train = np.flatnonzero(np.isin(ids, train_people) & usable)
        probe_k, gal_k = self._shots()

        if self._by_cam:
            cams = dataset.column("cam").astype(str)
            probe = _draw(dataset, np.flatnonzero(test_mask & (cams == str(self.probe_cam))), probe_k, rng)
            gal = _draw(dataset, np.flatnonzero(test_mask & (cams == str(self.gallery_cam))), gal_k, rng)
        else:
            copy = _copies(dataset)
            probe, gal = [], []
            for p in test_people:
                rows = rng.permutation(np.flatnonzero(test_mask & (ids == p)))
                g = min(int(gal_k), len(rows) - 1)
                gal.extend(rows[:g])
                others = rows[g:] if copy is None else rows[g:][~np.isin(copy[rows[g:]], copy[rows[:g]])]  # no copy
                probe.extend(others if probe_k == "all" else others[:int(probe_k)])
            probe, gal = np.sort(np.array(probe, dtype=int)), np.sort(np.array(gal, dtype=int))
            if self.gallery == "pair":
                # the pair protocol trains on two images per person as well
                train = np.sort(np.concatenate([
                    rng.permutation(np.flatnonzero(usable & (ids == p)))[:2] for p in train_people
                ])) if len(train_people) else train
        extra = np.concatenate([np.flatnonzero(marked), _draw(dataset, self._unpaired(dataset), gal_k, rng)])
        if len(extra):
            gal = np.sort(np.concatenate([gal, extra]))
        return {"train": train.tolist(), "probe": probe.tolist(), "gallery": gal.tolist()}

    def _fixed_split(self, dataset: Dataset, rng: np.random.Generator, trial: int) -> dict[str, Any]:
        trials = self._fixed(dataset)
        if trial >= len(trials):
            raise ConfigError(f"trials: expected at most {len(trials)}, the trials of the protocol's fixed split, "
                              f"got trial {trial}")
        t = trials[trial]
        _, marked = self._usable(dataset)
        probe_k, gal_k = self._shots()
        gal = t["gallery"]
        probe = _draw(dataset, t["probe"], probe_k, rng)
        gal = np.sort(np.concatenate([_draw(dataset, gal[~marked[gal]], gal_k, rng), gal[marked[gal]]]))
        return {"train": np.sort(t["train"]).tolist(), "probe": probe.tolist(), "gallery": gal.tolist()}

    # ------------------------------------------------------------------ evaluate
    def evaluate(self, make_ranker: Callable[[], Any], X, dataset: Dataset, split: TrialSplit,
                 meter: Meter) -> TrialResult:
        ids = dataset.column("identity")
        train, probe, gal = (np.asarray(rows, dtype=int) for rows in (split.train, split.probe, split.gallery))
        cams = dataset.column("cam")[train] if "cam" in dataset.items.columns else None
        if self.gallery == "pair" and cams is not None and not self._is_fixed:
            self._warn_one_camera_pairs(dataset, ids[train], cams)
        ranker = make_ranker()
        # metric learners (ordinal-style rankers) take no camera argument
        kwargs = {"cams": cams} if "pair_scorer" in capabilities(ranker) else {}
        with meter.train():
            ranker.fit(take(X, train), ids[train], **kwargs)
        with meter.test():
            S = checked_output(ranker.similarity(take(X, probe), take(X, gal)), (len(probe), len(gal)), "similarity")
        cand = own_view_left_out(ids, dataset.column("cam") if "cam" in dataset.items.columns else None, probe, gal)
        same = ids[probe][:, None] == ids[gal][None, :]
        kept = (same & cand).any(axis=1)
        absent = int((~same.any(axis=1)).sum())   # the rest of those left out: their person's own camera only
        if not kept.any():
            raise DataError(f"protocol reid: dataset {dataset.name!r}: no probe has a true match in the gallery "
                            + ("(no probe's person is in it)" if absent == len(kept) else
                               "taken by another camera (every test person was seen by one camera only)"))
        S, cand, p_ids = np.asarray(S)[kept], cand[kept], ids[probe][kept]
        curve = cmc_curve(S, p_ids, ids[gal], cand)
        metrics = {f"cmc@{r}": float(curve[r - 1]) for r in self._ranks(dataset)}
        metrics["nauc"] = nauc(curve)
        metrics["map"] = float(np.mean(reid_average_precisions(S, p_ids, ids[gal], cand)))
        extra: dict[str, Any] = {"diagnostics": diagnostics(ranker)}
        if not kept.all():
            extra["probes_without_match"] = int((~kept).sum())
            self._warn_left_out(dataset, int(kept.sum()), len(kept), absent)
        return TrialResult(metrics=metrics, curves={"cmc": curve.tolist()}, extra=extra)

    def _warn_one_camera_pairs(self, dataset: Dataset, people: np.ndarray, cams: np.ndarray) -> None:
        """Say how many training people's two images (drawn regardless of camera) share a camera:
        a learner that pairs images across cameras only gets no true match from them."""
        seen = pd.Series(cams.astype(str)).groupby(people.astype(str)).nunique()
        if (seen == 1).any():
            warnings.warn(f"protocol reid: dataset {dataset.name!r}: {int((seen == 1).sum())} of {len(seen)} training "
                          "people have both their images from one camera (gallery: pair draws them regardless of "
                          "camera); a learner that pairs images across cameras gets no true match from them",
                          UserWarning, stacklevel=2)

    def _warn_left_out(self, dataset: Dataset, n_scored: int, n_probes: int, absent: int) -> None:
        """Say, in one line, that ``n_probes - n_scored`` probes had no match to find and were left
        out of this trial's CMC and mAP, and why: ``absent`` of them have no gallery image of their
        person, the others only images from their own camera."""
        how = (f"gallery: {self.gallery} draws probe and gallery images regardless of camera, gallery: cam "
               "from two cameras" if self.gallery != "cam" and not self._is_fixed else "as the fixed split places them")
        own = n_probes - n_scored - absent
        why = [f"{absent} with no gallery image of their person"] if absent else []
        why += [f"{own} whose person's gallery images are all from the probe's own camera (a probe does not rank "
                "its own camera's)"] if own else []
        warnings.warn(f"protocol reid: dataset {dataset.name!r}: CMC and mAP scored {n_scored} of {n_probes} "
                      f"probes; {n_probes - n_scored} left out, having no match to find: {'; '.join(why)}, {how}",
                      UserWarning, stacklevel=2)


def _camera_key(label: str) -> str:
    """What a camera label names, however it is written: 'c5', 'C05', 'cam5', 'camera_5' and '5'
    are camera 5; 'cam_a' and 'A' are camera a."""
    s = re.sub(r"[\s_\-]", "", label.lower())
    s = re.sub(r"^(camera|cam|c)(?=[0-9a-z])", "", s) if s not in ("c", "cam", "camera") else s
    return str(int(s)) if s.isdigit() else s


def _one_way(name: str, column: str, whose: str, labels: list[str], values: np.ndarray, cams: np.ndarray | None,
             key) -> None:
    """A DataError when two of ``labels`` (the values of ``column``) are one label written two ways
    (the same ``key``), naming both and (for identities) their cameras."""
    seen: dict = {}
    for label in labels:
        k = key(label)
        if k is None:
            continue
        other = seen.setdefault(k, label)
        if other != label:
            def where(v: str) -> str:
                return "" if cams is None else f" (camera {', '.join(sorted(set(cams[values == v])))})"

            raise DataError(f"dataset {name!r}, column {column!r}: {other!r}{where(other)} and {label!r}{where(label)} "
                            f"are one {'number' if column == 'identity' else 'label'} written two ways; expected "
                            f"each {whose} label written one way")


def _copies(dataset: Dataset) -> np.ndarray | None:
    """Per row, the first row with the same image bytes (:func:`~rankbench.datasets.base.same_files`);
    None for a dataset without image files. Read once per process while the files are unchanged
    (every trial's split asks)."""
    if "path" not in dataset.items.columns:
        return None
    paths = tuple(map(str, dataset.column("path")))
    return _same_files(paths, tuple((st.st_size, st.st_mtime_ns) for st in map(os.stat, paths)))


@functools.lru_cache(maxsize=4)
def _same_files(paths: tuple[str, ...], stamps: tuple) -> np.ndarray:
    out = same_files(list(paths))
    out.flags.writeable = False
    return out


def own_view_left_out(ids: np.ndarray, cams: np.ndarray | None, probe: np.ndarray, gal: np.ndarray) -> np.ndarray:
    """(n_probe, n_gallery) mask of the gallery items each probe ranks: all but the images of its
    own identity from its own camera (torchreid's rule; every item when there are no cameras)."""
    if cams is None:
        return np.ones((len(probe), len(gal)), dtype=bool)
    cams = np.asarray(cams).astype(str)
    own = (ids[probe][:, None] == ids[gal][None, :]) & (cams[probe][:, None] == cams[gal][None, :])
    return ~own


def _group_key(dataset: Dataset, rows: np.ndarray) -> np.ndarray:
    """Each of ``rows``' person and camera (its person when there are no cameras), as one text."""
    key = dataset.column("identity")[rows].astype(str)
    if "cam" in dataset.items.columns:
        key = np.char.add(np.char.add(key, "\x00"), dataset.column("cam")[rows].astype(str))
    return key


def _groups(dataset: Dataset, rows: np.ndarray) -> list[np.ndarray]:
    """``rows`` grouped by person and camera (by person when there are no cameras), in row order."""
    rows = np.asarray(rows, dtype=int)
    _, inverse = np.unique(_group_key(dataset, rows), return_inverse=True)
    return [rows[inverse == g] for g in range(inverse.max() + 1)] if len(rows) else []


def _group_sizes(dataset: Dataset, rows: np.ndarray) -> np.ndarray:
    """How many of ``rows`` each :func:`_groups` group holds (without building the groups)."""
    rows = np.asarray(rows, dtype=int)
    return np.unique(_group_key(dataset, rows), return_counts=True)[1] if len(rows) else np.zeros(0, int)


def _draw(dataset: Dataset, rows: np.ndarray, k: int | str, rng: np.random.Generator) -> np.ndarray:
    """``k`` of each person's (and camera's) ``rows`` at random (all of them for ``all`` or when
    there are no more), sorted. Draws nothing from ``rng`` for ``all``."""
    rows = np.asarray(rows, dtype=int)
    if k == "all":
        return np.sort(rows)
    picked = [g if len(g) <= int(k) else rng.choice(g, int(k), replace=False) for g in _groups(dataset, rows)]
    return np.sort(np.concatenate(picked)) if picked else rows


# ----------------------------------------------------------------------------- split files
#: a split file beyond this size is refused (Market-1501's one trial is about 1 MB of names)
MAX_SPLIT_BYTES = 256 * 2**20


@functools.lru_cache(maxsize=8)
def _parsed(path: str, stamp: tuple[int, int]) -> Any:
    del stamp  # in the key only: a file changed on disk is read again
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_SPLIT_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the split file ({exc.strerror or exc})") from None
    if len(raw) > MAX_SPLIT_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_SPLIT_BYTES // 2**20} MB; expected a split file of item names")
    try:
        text = raw.decode("utf-8")
        if path.lower().endswith(".json"):
            return json.loads(text)
        # every value as the text written, as item names are (YAML 1.1 read 0010 as the number 8)
        return yaml.load(text, Loader=getattr(yaml, "CBaseLoader", yaml.BaseLoader))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    except (json.JSONDecodeError, yaml.YAMLError, RecursionError) as exc:
        first = (getattr(exc, "problem", None) or str(exc) or type(exc).__name__).splitlines()[0]
        raise ConfigError(f"{path}: not a readable split file ({first})") from None


def read_split_file(path: str) -> list[dict[str, list[str]]]:
    """A split file's trials, each ``{train, probe, gallery}`` lists of item names (checked in form:
    a mapping with ``trials``, a non-empty list of mappings of exactly those three lists of
    names); one ConfigError line naming the file and the trial otherwise."""
    st = os.stat(path)
    doc = _parsed(path, (st.st_mtime_ns, st.st_size))
    trials = doc.get("trials") if isinstance(doc, dict) else None
    if not isinstance(trials, list) or not trials:
        got = ("an empty file" if doc is None else type(doc).__name__ if not isinstance(doc, dict) else
               f"'trials': {trials!r:.40}" if "trials" in doc else f"a mapping with keys {', '.join(map(str, doc))}")
        raise ConfigError(f"{path}: expected a mapping with 'trials', a list of {{train, probe, gallery}} item "
                          f"lists, got {got}")
    for i, t in enumerate(trials):
        if not isinstance(t, dict):
            raise ConfigError(f"{path}: trials[{i}]: expected a mapping of train, probe and gallery, "
                              f"got {type(t).__name__}")
        unknown = [k for k in t if k not in PARTS]
        missing = [k for k in PARTS if k not in t]
        if unknown or missing:
            raise ConfigError(f"{path}: trials[{i}]: expected the keys train, probe and gallery, got "
                              + (f"an unknown key {unknown[0]!r}" if unknown else f"no {missing[0]!r}"))
        for part in PARTS:
            names = t[part]
            if not isinstance(names, list) or not names:
                raise ConfigError(f"{path}: trials[{i}].{part}: expected a non-empty list of item names, got "
                                  f"{names!r:.60}")
            bad = [n for n in names if not isinstance(n, (str, int)) or isinstance(n, bool)]  # None too
            if bad:
                raise ConfigError(f"{path}: trials[{i}].{part}: expected item names, got {bad[0]!r:.60}")
    seen: dict[tuple, int] = {}
    for i, t in enumerate(trials):  # a repeated trial counts one split twice in the std and the paired tests
        key = tuple(frozenset(map(str, t[part])) for part in PARTS)
        if key in seen:
            raise ConfigError(f"{path}: trials[{i}]: the same train, probe and gallery as trials[{seen[key]}]; "
                              "expected each trial once")
        seen[key] = i
    return trials


def _rows_of(trials: list[dict[str, list]], names: tuple[str, ...], path: str) -> list[dict[str, list[int]]]:
    """Each trial's parts as rows of the dataset whose item ids are ``names``; an unknown name, a
    name given twice, or one item in two parts is one line naming the file, the trial and the item."""
    index = {n: i for i, n in enumerate(names)}
    out = []
    for i, t in enumerate(trials):
        rows: dict[str, list[int]] = {}
        where: dict[int, str] = {}
        for part in PARTS:
            rows[part] = []
            for name in t[part]:
                r = index.get(str(name))
                if r is None:
                    hint = "" if isinstance(name, str) else "; it was read as a number: quote it"
                    raise ConfigError(f"{path}: trials[{i}].{part}: unknown item {str(name)!r} (expected the "
                                      f"dataset's item ids, such as {str(names[0])!r}{hint})")
                if r in where:
                    raise ConfigError(f"{path}: trials[{i}].{part}: item {str(name)!r} is listed twice "
                                      f"(in {where[r]} too)")
                where[r] = part
                rows[part].append(r)
        out.append(rows)
    return out

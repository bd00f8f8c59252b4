"""Single-shot person re-identification: probes from one view rank a gallery from another.

Prosser et al. (BMVC 2010, Section 4) and the later tables quoted in ``../shared/PAPERS.md``.
Per trial, ``n_test`` people are drawn at random (seeded); everyone else trains (or ``n_train`` of
them). Three ways to form probe and gallery:

``cam``
    two-camera sets such as VIPeR: each test person's image in ``probe_cam`` is a probe, the one in
    ``gallery_cam`` the gallery.
``one_random``
    multi-shot sets such as i-LIDS (Zheng, Gong, Xiang): one random image per test person forms the
    gallery, all their other images are probes.
``pair``
    two random images per test person, one probe and one gallery (Prosser's i-LIDS protocol).

Metrics: ``cmc@K`` for K in ``ranks`` (default 1, 5, 10, 20, 25, 50 as far as the gallery reaches; a rank
beyond the gallery is refused) (matching rate at rank K, ties against the method), ``nauc`` and
``map``, the mean over probes of the average precision of each probe's ranking of the gallery
(torchreid's mAP, :func:`rankbench.metrics.reid_average_precisions`); the whole CMC curve is kept
for plots. As in torchreid, a probe does not rank the images of its own identity taken by its own
camera (when the dataset has a ``cam`` column): under ``one_random`` and ``pair`` a probe whose
only true match is such an image has no match to find and is left out of CMC and mAP (the trial
records how many in ``extra["probes_without_match"]``); under ``cam`` the two cameras differ, so
every probe counts.

An image is one person's: a file (or a byte-identical copy) under two identities is refused, and
so is one in both the probe and the gallery camera of a person (``cam``), a person matched to
their own image. Copies within one person's images occur in real data (CAVIAR4REID has one) and
are kept, with a warning counting them; ``one_random`` and ``pair`` never make a copy of a
gallery image its probe.
"""

from __future__ import annotations

import warnings
from typing import Annotated, Any, Callable, Literal

import numpy as np
from pydantic import Field

from ..datasets.base import Dataset, same_files
from ..errors import ConfigError, DataError
from ..metrics import cmc_curve, nauc, reid_average_precisions
from ..params import PositiveInt
from ..rankers.base import capabilities, diagnostics
from ..registry import protocols
from ..utils.meter import Meter
from .base import Protocol, TrialResult, checked_output, take

DEFAULT_RANKS = (1, 5, 10, 20, 25, 50)


@protocols.register("reid")
class ReIdentification(Protocol):
    """Single-shot re-identification (probe vs gallery), scored by CMC, nAUC and mAP."""

    capability = ("pair_scorer", "metric")
    curve = "cmc"
    headline = "cmc@1"
    metric_families = ("cmc@K", "nauc", "map")
    parameter_labels = {"n_test": "Test people", "n_train": "Training people"}

    def __init__(self, n_test: Annotated[int, Field(ge=2)] = 316, n_train: PositiveInt | None = None,
                 gallery: Literal["cam", "one_random", "pair"] = "cam", probe_cam: str = "a",
                 gallery_cam: str = "b",
                 ranks: Annotated[tuple[PositiveInt, ...], Field(min_length=1)] | None = None):
        self.n_test = n_test
        self.n_train = n_train
        self.gallery = gallery
        self.probe_cam = probe_cam
        self.gallery_cam = gallery_cam
        self.ranks = ranks

    # ------------------------------------------------------------------ checks
    def check_dataset(self, dataset: Dataset) -> None:
        if self.gallery == "cam" and str(self.probe_cam) == str(self.gallery_cam):
            raise ConfigError(f"protocol.gallery_cam: expected a camera other than probe_cam, got "
                              f"{self.gallery_cam!r} for both")
        needed = ["identity"] + (["cam"] if self.gallery == "cam" else [])
        for col in needed:
            if col not in dataset.items.columns:
                raise DataError(f"protocol reid needs a {col!r} column; dataset {dataset.name!r} has: "
                                f"{', '.join(dataset.items.columns)}")
        if self.gallery == "cam":
            cams = sorted(set(dataset.column("cam").astype(str)))
            for key in ("probe_cam", "gallery_cam"):
                if str(getattr(self, key)) not in cams:
                    raise ConfigError(f"protocol.{key}: expected one of dataset {dataset.name!r}'s cameras "
                                      f"({', '.join(cams)}), got {getattr(self, key)!r}")
            if str(self.probe_cam) == str(self.gallery_cam):
                raise ConfigError(f"protocol.gallery_cam: expected a camera other than probe_cam, got "
                                  f"{self.gallery_cam!r} for both")
        self._check_copies(dataset)
        people = self._eligible(dataset)
        n_total = len(people)
        if self.n_test >= n_total or self.n_test < 2:
            raise ConfigError(f"protocol.n_test: expected 2..{n_total - 1} (dataset {dataset.name!r} "
                              f"has {n_total} usable people), got {self.n_test}")
        if self.n_train is not None and self.n_train + self.n_test > n_total:
            raise ConfigError(f"protocol.n_train: n_train + n_test must be <= {n_total}, got "
                              f"{self.n_train} + {self.n_test}")
        if self.ranks is not None and max(self.ranks) > self.n_test:  # one gallery image per test person
            raise ConfigError(f"protocol.ranks: expected ranks <= the gallery size n_test = {self.n_test}, "
                              f"got {max(self.ranks)}")

    def _check_copies(self, dataset: Dataset) -> None:
        """Refuse an image (the same bytes) shared by two people, or by a person's probe and gallery
        cameras; warn once, counting them, about copies within one person's images."""
        copy = _copies(dataset)
        if copy is None:
            return
        ids, paths = dataset.column("identity"), dataset.column("path")
        cams = dataset.column("cam").astype(str) if self.gallery == "cam" else None
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
        if self.gallery == "cam":
            cams = dataset.column("cam").astype(str)
            in_p = set(ids[cams == str(self.probe_cam)])
            in_g = set(ids[cams == str(self.gallery_cam)])
            return np.array(sorted(in_p & in_g))
        copy = _copies(dataset)
        first = ids if copy is None else ids[copy == np.arange(len(ids))]   # one row per distinct image
        uniq, counts = np.unique(first, return_counts=True)
        return uniq[counts >= 2]

    def _ranks(self) -> tuple[int, ...]:
        """The ranks reported: as given, or the usual ones that fit in the gallery."""
        if self.ranks is not None:
            return tuple(self.ranks)
        return tuple(r for r in DEFAULT_RANKS if r <= self.n_test)

    # ------------------------------------------------------------------ split
    def split(self, dataset: Dataset, rng: np.random.Generator) -> dict[str, Any]:
        ids = dataset.column("identity")
        people = self._eligible(dataset)
        perm = rng.permutation(len(people))
        test_people = people[perm[: self.n_test]]
        rest = people[perm[self.n_test:]]
        train_people = rest if self.n_train is None else rest[: self.n_train]
        test_mask = np.isin(ids, test_people)
        train = np.flatnonzero(np.isin(ids, train_people))

        if self.gallery == "cam":
            cams = dataset.column("cam").astype(str)
            probe = np.flatnonzero(test_mask & (cams == str(self.probe_cam)))
            gal = np.flatnonzero(test_mask & (cams == str(self.gallery_cam)))
        else:
            copy = _copies(dataset)
            probe, gal = [], []
            for p in test_people:
                rows = rng.permutation(np.flatnonzero(ids == p))
                gal.append(rows[0])
                others = rows[1:] if copy is None else rows[1:][copy[rows[1:]] != copy[rows[0]]]  # no copy of it
                probe.extend(others[:1] if self.gallery == "pair" else others)
            probe, gal = np.sort(np.array(probe)), np.sort(np.array(gal))
            if self.gallery == "pair":
                # the pair protocol trains on two images per person as well
                train = np.sort(np.concatenate([
                    rng.permutation(np.flatnonzero(ids == p))[:2] for p in train_people
                ])) if len(train_people) else train
        return {"train": train.tolist(), "probe": probe.tolist(), "gallery": gal.tolist()}

    # ------------------------------------------------------------------ evaluate
    def evaluate(self, make_ranker: Callable[[], Any], X, dataset: Dataset, split: dict[str, Any],
                 meter: Meter) -> TrialResult:
        ids = dataset.column("identity")
        train, probe, gal = (np.asarray(split[k], dtype=int) for k in ("train", "probe", "gallery"))
        cams = dataset.column("cam")[train] if "cam" in dataset.items.columns else None
        ranker = make_ranker()
        # metric learners (ordinal-style rankers) take no camera argument
        kwargs = {"cams": cams} if "pair_scorer" in capabilities(ranker) else {}
        with meter.train():
            ranker.fit(take(X, train), ids[train], **kwargs)
        with meter.test():
            S = checked_output(ranker.similarity(take(X, probe), take(X, gal)), (len(probe), len(gal)), "similarity")
        cand = own_view_left_out(ids, dataset.column("cam") if "cam" in dataset.items.columns else None, probe, gal)
        found = (ids[probe][:, None] == ids[gal][None, :]) & cand
        kept = found.any(axis=1)
        if not kept.any():
            raise DataError(f"protocol reid: dataset {dataset.name!r}: no probe has a true match in the gallery "
                            "taken by another camera (every test person was seen by one camera only)")
        S, cand, p_ids = np.asarray(S)[kept], cand[kept], ids[probe][kept]
        curve = cmc_curve(S, p_ids, ids[gal], cand)
        metrics = {f"cmc@{r}": float(curve[r - 1]) for r in self._ranks()}
        metrics["nauc"] = nauc(curve)
        metrics["map"] = float(np.mean(reid_average_precisions(S, p_ids, ids[gal], cand)))
        extra: dict[str, Any] = {"diagnostics": diagnostics(ranker)}
        if not kept.all():
            extra["probes_without_match"] = int((~kept).sum())
        return TrialResult(metrics=metrics, curves={"cmc": curve.tolist()}, extra=extra)


def _copies(dataset: Dataset) -> np.ndarray | None:
    """Per row, the first row with the same image bytes (:func:`~rankbench.datasets.base.same_files`);
    None for a dataset without image files."""
    return same_files(list(dataset.column("path"))) if "path" in dataset.items.columns else None


def own_view_left_out(ids: np.ndarray, cams: np.ndarray | None, probe: np.ndarray, gal: np.ndarray) -> np.ndarray:
    """(n_probe, n_gallery) mask of the gallery items each probe ranks: all but the images of its
    own identity from its own camera (torchreid's rule; every item when there are no cameras)."""
    if cams is None:
        return np.ones((len(probe), len(gal)), dtype=bool)
    cams = np.asarray(cams).astype(str)
    own = (ids[probe][:, None] == ids[gal][None, :]) & (cams[probe][:, None] == cams[gal][None, :])
    return ~own

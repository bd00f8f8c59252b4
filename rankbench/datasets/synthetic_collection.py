"""A generated keyframe collection at the scale of Merler et al.'s TRECVID experiments.

Merler, Yan & Smith (Imbalanced RankBoost, section 5.1) rank 52,347 TRECVID 2007 development
keyframes for 20 concepts with base models trained on 100 low-level feature types; neither those
keyframes nor their features are public. This loader generates a stand-in with the same number of
items, 20 concepts as rare as real TRECVID ones, several feature types of graded quality, and
videos of consecutive keyframes, all seeded.
"""

from __future__ import annotations

import hashlib
import json
from typing import Literal

import numpy as np
import pandas as pd

from ..errors import ConfigError, DataError
from ..params import NonNegativeFloat, NonNegativeInt, PositiveFloat, PositiveInt
from ..registry import datasets
from .base import RELEVANCE_CODES, Dataset, Loader, fingerprint_files, require_file
from .keyframes import video_group

#: TRECVID 2006 test-set ground truth (tv06_gt.mat): positives per column out of 79,484 keyframes,
#: as listed in ../shared/datasets/trecvid2006-labels/MANIFEST.txt (column order as stored)
TRECVID2006_KEYFRAMES = 79484
TRECVID2006_POSITIVES = (679, 474, 292, 1498, 172, 163, 427, 22, 340, 612,
                         243, 1556, 231, 166, 750, 238, 150, 221, 511, 329)
#: the TRECVID 2006 high-level feature names in feature-number order; that the columns of
#: tv06_gt.mat follow this order is the MANIFEST's inference, not documented in the files
TRECVID2006_CONCEPTS = ("Sports", "Weather", "Office", "Meeting", "Desert", "Mountain",
                        "Waterscape_Waterfront", "Corporate_Leader", "Police_Security",
                        "Military_Personnel", "Animal", "Computer_TV-screen", "US_Flag", "Airplane",
                        "Car", "Truck", "People_Marching", "Explosion_Fire", "Maps", "Charts")

#: default feature types (dims, noise), noise geometric from 0.1 (nearly clean: a concept's
#: prototype 10 noise standard deviations away) to 3.2 (nearly pure noise)
DEFAULT_FEATURE_TYPES = ((16, 0.1), (32, 0.15), (48, 0.22), (64, 0.32), (16, 0.47),
                         (32, 0.68), (48, 1.0), (64, 1.5), (16, 2.2), (32, 3.2))


def imbalance_profile(rates: list[float], mean_ratio: float, peak_ratio: float) -> list[float]:
    """Rates mapped log-linearly so that (1 - mean) / mean = ``mean_ratio`` and the rarest concept's
    (1 - r) / r = ``peak_ratio`` (see :class:`SyntheticCollection`'s ``labels``)."""
    from scipy.optimize import brentq

    if peak_ratio < mean_ratio:
        raise ConfigError(f"dataset.peak_ratio: expected at least mean_ratio ({mean_ratio:g}): the rarest concept "
                          f"is at least as imbalanced as the collection, got {peak_ratio:g}")
    lr = np.log(np.asarray(rates, dtype=float))
    spread = lr - lr.min()
    a = -np.log1p(peak_ratio)                      # the rarest concept's rate 1 / (1 + peak_ratio)
    target = 1.0 / (1.0 + mean_ratio)

    def excess(b: float) -> float:
        return float(np.exp(a + b * spread).mean()) - target

    hi = 1.0
    while excess(hi) < 0 and hi < 1e3:             # the mean rate grows with b from the rarest's rate
        hi *= 2.0
    if excess(0.0) > 0 or excess(hi) < 0 or not np.any(spread > 0):
        raise ConfigError(f"dataset.mean_ratio: no log-linear map of the reference rates gives mean ratio "
                          f"{mean_ratio:g} with peak ratio {peak_ratio:g}")
    b = brentq(excess, 0.0, hi, xtol=1e-12)
    return np.minimum(np.exp(a + b * spread), 0.5).tolist()


@datasets.register("synthetic_collection")
class SyntheticCollection(Loader):
    """Generated keyframe collection at Merler et al.'s scale: 52,347 items, 20 rare concepts, graded feature types.

    Labels (``labels``):

    - ``"table"`` (default, no data needed): concept c has ``max(1, round(rate_c * n_items))``
      positives at uniformly random items, with rate_c the positive rate of column c of the real
      TRECVID 2006 ground truth (:data:`TRECVID2006_POSITIVES` / 79,484, from
      ``trecvid2006-labels/MANIFEST.txt``: 0.028 % to 1.96 %, 0.57 % on average). Concepts are
      drawn independently, so there is no co-occurrence and no clustering in time.

      ``mean_ratio`` and ``peak_ratio`` (both or neither) map those rates to another imbalance
      profile: rate_c' = exp(a + b (ln rate_c - ln min rate)), the one log-linear map (it keeps
      the concepts' order and the shape of their spread) under which the collection's
      irrelevant:relevant ratio (total irrelevant over total relevant: (1 - mean rate) / mean
      rate) is ``mean_ratio`` and the rarest concept's ratio is ``peak_ratio``. Merler et al.
      (Sec. 5.1) state 49.47 and 385.75 for their TRECVID 2007 collection: mapped, the rates run
      from 0.26 % to 5.0 % (mean 1.98 %), about 27 to 520 relevant items per concept in a
      10,469-item boosting split (median 170) where TRECVID 2006's own rates give 3 to 205.
    - ``"trecvid2006"``: ``n_items`` rows of ``<data-root>/trecvid2006-labels/tv06_gt.mat``
      (79,484 x 20, {0, 1}) drawn without replacement and kept in their original order, so that
      concept co-occurrence is real and positives still cluster by video (the file lists each
      video's shots in string order, shot1_10 after shot1_1, not in time). TRECVID's 0 means
      "negative or unjudged"; both become 0 here.

    Features: for each type t with (dims d_t, noise s_t), every concept c has a random unit
    prototype u_tc in R^d_t; an item's vector is ``sum_c y_ic u_tc + v_video + s_t * e`` with
    ``e ~ N(0, I)`` and ``v_video ~ N(0, video_effect^2 I)`` shared by the keyframes of one video
    (so items of a video are alike, and a split by ``group`` matters). The smaller s_t, the better
    the type; the default 10 types (16-64 dims) run from noise 0.1 (nearly clean) to 3.2 (nearly
    pure noise). Labels and each type come from their own child seed of ``random_state``,
    so adding a type leaves the labels and the other types unchanged.

    Items: ``id`` ``shot<video>_<shot>_RKF`` and ``group`` ``video<video>`` (consecutive runs of
    ``shots_per_video`` items). ``arrays["relevance"]`` int8 0/1 (items x 20);
    ``arrays["feat/typeNN"]`` float32, one per feature type (``extractor: array, key:
    feat/type00``); ``info["concepts"]`` (the TRECVID 2006 names, see
    :data:`TRECVID2006_CONCEPTS`), ``info["feature_types"]`` ({name: {dims, noise}}),
    ``info["positive_rates"]`` and ``info["reference_rates"]``.

    Memory: 4 bytes x n_items x total dims for the features plus n_items x 20 bytes of relevance;
    the default (52,347 items, 368 dims) holds 77 MB + 1 MB.

    Parameters
    ----------
    root : str, optional
        Folder of ``tv06_gt.mat`` for ``labels: trecvid2006`` (default
        ``<data-root>/trecvid2006-labels``); unused for ``labels: table``.
    n_items : int
        Keyframes (default 52,347 as in the paper; at most 79,484 with ``labels: trecvid2006``).
    labels : "table" or "trecvid2006"
    feature_types : list of [dims, noise]
        One entry per feature type.
    shots_per_video : int
        Keyframes per synthetic video (default 200: TRECVID 2006's 79,484 shots of 259 videos,
        subsampled to 52,347, give about 200).
    video_effect : float
        Standard deviation of the per-video offset.
    mean_ratio, peak_ratio : float, optional
        Target imbalance profile of the ``table`` rates (see ``labels``).
    random_state : int
    """

    folder = "trecvid2006-labels"
    layout = ("trecvid2006-labels/tv06_gt.mat (variable tv06_gt: keyframes x 20 in {0,1}, the TRECVID 2006 "
              "ground truth; only read with labels: trecvid2006)")

    def __init__(self, root: str | None = None, n_items: PositiveInt = 52347,
                 labels: Literal["table", "trecvid2006"] = "table",
                 feature_types: tuple[tuple[PositiveInt, NonNegativeFloat], ...] = DEFAULT_FEATURE_TYPES,
                 shots_per_video: PositiveInt = 200, video_effect: NonNegativeFloat = 0.1,
                 mean_ratio: PositiveFloat | None = None, peak_ratio: PositiveFloat | None = None,
                 random_state: NonNegativeInt = 0):
        self.root = root
        self.n_items = n_items
        self.labels = labels
        self.feature_types = feature_types
        self.shots_per_video = shots_per_video
        self.video_effect = video_effect
        self.mean_ratio = mean_ratio
        self.peak_ratio = peak_ratio
        self.random_state = random_state

    def load(self, data_root=None) -> Dataset:
        n = int(self.n_items)
        seeds = np.random.SeedSequence(int(self.random_state)).spawn(1 + len(self.feature_types))
        rng = np.random.default_rng(seeds[0])
        extra = ""
        if (self.mean_ratio is None) != (self.peak_ratio is None):
            raise ConfigError("dataset.mean_ratio: expected mean_ratio and peak_ratio together (an imbalance "
                              f"profile), got mean_ratio={self.mean_ratio!r}, peak_ratio={self.peak_ratio!r}")
        if self.labels == "trecvid2006":
            if self.mean_ratio is not None:
                raise ConfigError("dataset.mean_ratio: expected no imbalance profile with labels: trecvid2006 "
                                  "(its rates are the real ones), got one")
            gt, path = self._trecvid_labels(data_root)
            if n > len(gt):
                raise ConfigError(f"dataset.n_items: {n} exceeds the {len(gt)} label vectors of {path} "
                                  "(labels: trecvid2006 samples them without replacement)")
            Y = gt[np.sort(rng.choice(len(gt), n, replace=False))].astype(np.int8)
            extra = fingerprint_files([path])
        elif self.labels == "table":
            Y = np.zeros((n, len(TRECVID2006_POSITIVES)), dtype=np.int8)
            for c, rate in enumerate(self.table_rates()):
                Y[rng.choice(n, min(n, max(1, round(rate * n))), replace=False), c] = 1
        else:
            raise ConfigError(f"dataset.labels: expected 'table' or 'trecvid2006', got {self.labels!r}")

        video = np.arange(n) // int(self.shots_per_video)
        shot = np.arange(n) % int(self.shots_per_video)
        ids = [f"shot{v + 1}_{s + 1}_RKF" for v, s in zip(video, shot)]
        n_videos = int(video[-1]) + 1
        Yf = Y.astype(np.float32)
        arrays: dict[str, np.ndarray] = {"relevance": Y}
        types = {}
        for t, ((dims, noise), ss) in enumerate(zip(self.feature_types, seeds[1:])):
            r = np.random.default_rng(ss)
            U = r.standard_normal((Y.shape[1], int(dims)))
            U /= np.linalg.norm(U, axis=1, keepdims=True)
            V = r.standard_normal((n_videos, int(dims)), dtype=np.float32) * np.float32(self.video_effect)
            X = r.standard_normal((n, int(dims)), dtype=np.float32)
            X *= np.float32(noise)
            X += V[video]
            X += Yf @ U.astype(np.float32)
            arrays[f"feat/type{t:02d}"] = X
            types[f"type{t:02d}"] = {"dims": int(dims), "noise": float(noise)}

        blob = json.dumps({k: v for k, v in self.get_params().items() if k != "root"}, sort_keys=True, default=list)
        return Dataset(
            name="synthetic_collection",
            items=pd.DataFrame({"id": ids, "group": [video_group(k) for k in ids]}),
            arrays=arrays,
            info={"concepts": list(TRECVID2006_CONCEPTS), "feature_types": types, "label_source": self.labels,
                  "relevance_codes": RELEVANCE_CODES,
                  "positive_rates": dict(zip(TRECVID2006_CONCEPTS, Y.mean(axis=0).tolist())),
                  "reference_rates": dict(zip(TRECVID2006_CONCEPTS, self.table_rates())),
                  "n_videos": n_videos,
                  "nbytes": int(sum(a.nbytes for a in arrays.values()))},
            fingerprint=hashlib.sha1((blob + extra).encode()).hexdigest()[:16],
        )

    @staticmethod
    def reference_rates() -> list[float]:
        """TRECVID 2006's positive rate per concept (the built-in table)."""
        return [p / TRECVID2006_KEYFRAMES for p in TRECVID2006_POSITIVES]

    def table_rates(self) -> list[float]:
        """The ``table`` labels' rate per concept: TRECVID 2006's, or mapped to the imbalance profile."""
        rates = self.reference_rates()
        if self.mean_ratio is None:
            return rates
        return imbalance_profile(rates, float(self.mean_ratio), float(self.peak_ratio))

    def _trecvid_labels(self, data_root):
        import scipy.io

        what = "dataset synthetic_collection (labels: trecvid2006)"
        path = require_file(self.root_dir(data_root) / "tv06_gt.mat", what, self.layout)
        try:
            gt = scipy.io.loadmat(str(path), variable_names=["tv06_gt"]).get("tv06_gt")
        except Exception as exc:
            raise DataError(f"{path}: not a readable MATLAB file ({exc}); expected layout: {self.layout}") from None
        if gt is None or gt.ndim != 2 or gt.shape[1] != len(TRECVID2006_CONCEPTS) or not np.isin(gt, (0, 1)).all():
            found = "no variable tv06_gt" if gt is None else f"tv06_gt of shape {gt.shape}"
            raise DataError(f"{path}: found {found}, expected keyframes x 20 values in {{0,1}}; "
                            f"expected layout: {self.layout}")
        return np.asarray(gt), path

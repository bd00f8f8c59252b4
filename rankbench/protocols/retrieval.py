"""Concept retrieval: rank a collection once per concept, scored by AP at depths and MAP.

Merler, Yan & Smith, "Imbalanced RankBoost for Efficiently Ranking Large-Scale Image/Video
Collections": every concept is a separate ranking task over the test collection; the score is
AP@d = (1/TP) sum_{k<=d} (TP_k / k) I_k with TP the relevant items in the whole test collection
(:func:`rankbench.metrics.average_precision`), at depths 100, 500 and full, and MAP its mean over
concepts. The paper's result is MAP against ranking time, so the time spent scoring the test
collection (``test_s``, summed over concepts) is the ranking time.

Data: ``arrays["relevance"]`` (items x concepts, 0/1) and ``info["concepts"]`` (names).
Split: the dataset's ``train`` column (``split_by: dataset``) or a seeded random
``train_fraction`` of the items (``split_by: random``). A concept is evaluated in a trial only
if it has at least ``min_positives`` relevant items on both sides of the split (and a negative
in training); the kept concepts are stored with the split, so every method sees the same ones, and
a warning names those a trial leaves out (its MAP averages the others). A concept named in
``concepts`` that too few items judge for any trial to keep is refused.

Metrics: ``ap@D/<concept>`` for D in ``depths`` and ``ap/<concept>`` (full depth), with their
means over concepts ``map@D`` and ``map``. With ``keep_scores`` the trial also keeps every score
(``extra["scores"][concept]``: one per judged test row, in row order), which ``rankbench export
--format trec`` writes as TREC run files.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Literal

import numpy as np

from ..datasets.base import Dataset
from ..errors import ConfigError, DataError
from ..metrics import average_precisions
from ..params import Names, OpenFraction, PositiveInt
from ..rankers.base import diagnostics
from ..registry import protocols
from ..utils.meter import Meter
from ..utils.progress import tick
from .base import Protocol, TrialResult, TrialSplit, checked_output, label_codes, take


@protocols.register("retrieval")
class Retrieval(Protocol):
    """Per-concept ranking of a collection (Merler et al.), scored by AP@D and MAP@D.

    Parameters
    ----------
    split_by : "random" or "dataset"
        A seeded random split of ``train_fraction`` of the items, or the dataset's ``train`` column.
    train_fraction : float
        Fraction of items that train, for ``split_by: random``.
    depths : list of int
        Cut-offs D of ``ap@D`` / ``map@D``; full depth (``ap`` / ``map``) is always reported.
    concepts : list of str, optional
        Evaluate only these concepts (default: all).
    min_positives : int
        Least number of relevant items a concept needs in the training rows and in the test rows.
    keep_scores : bool
        Keep each test item's score per concept in the trial's record (for ``export --format trec``).
    """

    capability = ("item_scorer",)
    headline = "map"
    metric_families = ("ap@D", "ap", "map@D", "map")
    parameter_labels = {"train_fraction": "Training fraction", "min_positives": "Least relevant items per part"}

    def __init__(self, split_by: Literal["random", "dataset"] = "random", train_fraction: OpenFraction = 0.5,
                 depths: tuple[PositiveInt, ...] = (100, 500),
                 concepts: Names | None = None,
                 min_positives: PositiveInt = 1, group_column: str | None = None, keep_scores: bool = False):
        self.split_by = split_by
        self.train_fraction = train_fraction
        self.depths = depths
        self.concepts = concepts
        self.min_positives = min_positives
        self.group_column = group_column
        self.keep_scores = keep_scores

    # ------------------------------------------------------------------ checks
    def check_dataset(self, dataset: Dataset) -> None:
        if self.split_by == "dataset":
            dataset.own_split()
        if self.group_column is not None and self.split_by == "dataset":
            raise ConfigError("protocol.group_column: only with split_by: random (the dataset's own "
                              "split decides where each item goes)")
        if self.split_by == "random":
            check_parts(dataset, (self.train_fraction,), self.group_column, ("training", "test"))
        check_collection(dataset, self.concepts, self.registry_name, (2 * self.min_positives, 1))

    # ------------------------------------------------------------------ split
    def split(self, dataset: Dataset, rng: np.random.Generator) -> dict[str, Any]:
        if self.split_by == "dataset":
            part = (~dataset.own_split()).astype(int)
        else:
            groups = None if self.group_column is None else dataset.column(self.group_column)
            part = draw_parts(rng, len(dataset), (self.train_fraction,), groups)
        train, test = np.flatnonzero(part == 0), np.flatnonzero(part == 1)
        wanted, R = concept_relevance(dataset, self.concepts)
        pos_tr, pos_te = (R[train] > 0).sum(0), (R[test] > 0).sum(0)
        neg_tr = (R[train] == 0).sum(0)
        keep = (pos_tr >= self.min_positives) & (pos_te >= self.min_positives) & (neg_tr > 0)
        if not keep.any():
            raise DataError(f"protocol retrieval: no concept of dataset {dataset.name!r} has at least "
                            f"{self.min_positives} relevant items in both the training and the test rows")
        left_out(self.registry_name, wanted, keep, f"fewer than {self.min_positives} relevant items in the "
                 "training or the test rows, or no judged non-relevant training item")
        return {"train": train.tolist(), "test": test.tolist(),
                "concepts": [c for c, k in zip(wanted, keep) if k]}

    # ------------------------------------------------------------------ evaluate
    def evaluate(self, make_ranker: Callable[[], Any], X, dataset: Dataset, split: TrialSplit,
                 meter: Meter) -> TrialResult:
        train = np.asarray(split.train, dtype=int)
        test = np.asarray(split.test, dtype=int)
        names = list(dataset.info["concepts"])
        R = np.asarray(dataset.arrays["relevance"])
        X_tr, X_te = take(X, train), take(X, test)
        depths = [int(d) for d in self.depths]
        scored_concepts(self.registry_name, dataset, self.concepts, split)
        metrics: dict[str, float] = {}
        diag, scores = {}, {}
        for i, concept in enumerate(split.concepts):
            tick("concept", i + 1, len(split.concepts))
            c = names.index(concept)
            judged_tr = R[train, c] >= 0  # unjudged items (-1) neither train nor count (trec_eval -J)
            judged_te = R[test, c] >= 0
            ranker = make_ranker()  # fresh per concept: one binary ranking task each
            with meter.train():
                ranker.fit(take(X_tr, np.flatnonzero(judged_tr)), R[train, c][judged_tr].astype(int))
            with meter.test():
                s = checked_output(ranker.decision_function(take(X_te, np.flatnonzero(judged_te))),
                                   (int(judged_te.sum()),), "decision_function")
            rel = R[test, c][judged_te] > 0
            if diagnostics(ranker):
                diag[concept] = diagnostics(ranker)
            metrics.update(ap_metrics(s, rel, depths, concept))
            if self.keep_scores:
                scores[concept] = s.tolist()
        metrics.update(map_metrics(metrics, split.concepts, depths))
        extra = {"n_concepts": len(split.concepts), "n_train": len(train), "n_test": len(test), "diagnostics": diag}
        return TrialResult(metrics=metrics, extra={**extra, **({"scores": scores} if self.keep_scores else {})})


# ---------------------------------------------------------------------- shared by retrieval protocols
def draw_parts(rng: np.random.Generator, n: int, fractions: tuple[float, ...],
               groups: np.ndarray | None = None) -> np.ndarray:
    """Each of ``n`` rows' part, 0..len(fractions): the rows (or, with ``groups``, whole groups:
    videos, tracks) in a seeded random order, cut at the rounded cumulative ``fractions`` of their
    number; the rest is the last part."""
    if groups is None:
        unit = np.arange(n)
    else:   # each group's place in the draw's order (by number where every group is one)
        unit = label_codes(groups)
    n_units = int(unit.max()) + 1 if n else 0
    cut = np.round(np.cumsum(fractions) * n_units).astype(int)
    part_of = np.empty(n_units, dtype=int)
    part_of[rng.permutation(n_units)] = np.searchsorted(cut, np.arange(n_units), side="right")
    return part_of[unit]


def check_parts(dataset: Dataset, fractions: tuple[float, ...], group_column: str | None,
                names: tuple[str, ...]) -> None:
    """A ConfigError unless :func:`draw_parts` gives every part (``names``) a row or a group: a
    ``group_column`` the dataset has, with groups enough for the ``fractions``."""
    if group_column is not None and group_column not in dataset.items.columns:
        raise ConfigError(f"protocol.group_column: expected a column of dataset {dataset.name!r} ("
                          f"{', '.join(dataset.items.columns)}), got {group_column!r}")
    units = len(dataset) if group_column is None else len(np.unique(dataset.column(group_column).astype(str)))
    sizes = np.diff(np.r_[0, np.round(np.cumsum(fractions) * units).astype(int), units])
    if (sizes == 0).any():
        key, what = ("protocol", "rows") if group_column is None else \
            ("protocol.group_column", f"groups of column {group_column!r}")
        raise ConfigError(f"{key}: dataset {dataset.name!r} has {units} {what}; cut at the fractions "
                          f"{', '.join(map(str, fractions))}, they leave the {names[int(np.argmin(sizes))]} rows "
                          "empty; expected more of them")


def check_collection(dataset: Dataset, concepts: list[str] | None, who: str, least: tuple[int, int] = (0, 0)) -> None:
    """A DataError / ConfigError unless the dataset has a 1 / 0 / -1 relevance matrix with named
    concepts that include every name in ``concepts``, each of them with at least ``least`` = (relevant,
    judged non-relevant) items: fewer could be evaluated in no trial (a concept the config does not
    name is left out of each trial instead, as :func:`left_out` says)."""
    R = dataset.arrays.get("relevance")
    names = dataset.info.get("concepts")
    if R is None or R.ndim != 2 or R.shape[0] != len(dataset):
        raise DataError(f"protocol {who}: dataset {dataset.name!r} has no relevance judgements (arrays['relevance'], "
                        f"items x concepts; it has: {', '.join(dataset.arrays) or 'none'}); the table loader reads "
                        "them from the columns its dataset.concepts names")
    if not np.isin(np.unique(R), (-1, 0, 1)).all():
        raise DataError(f"dataset {dataset.name!r}: arrays['relevance'] must hold 1 (relevant), 0 (not) "
                        "or -1 (unjudged)")
    if names is None or len(names) != R.shape[1]:
        raise DataError(f"protocol {who} needs info['concepts'] naming the {R.shape[1]} relevance "
                        f"columns of dataset {dataset.name!r}")
    if concepts is not None:
        unknown = [c for c in concepts if c not in names]
        if unknown:
            shown = ", ".join(list(names)[:20]) + (" ..." if len(names) > 20 else "")
            raise ConfigError(f"protocol.concepts: unknown concept {unknown[0]!r} in dataset "
                              f"{dataset.name!r}; concepts: {shown}")
    wanted, R = concept_relevance(dataset, concepts)
    pos, neg = (R > 0).sum(0), (R == 0).sum(0)
    short = np.flatnonzero((pos < least[0]) | (neg < least[1]))
    if len(short):
        i = int(short[0])
        what = (f"concept {wanted[i]!r} of dataset {dataset.name!r} has {pos[i]} relevant and {neg[i]} judged "
                f"non-relevant items; protocol {who} needs at least {least[0]} and {least[1]} to evaluate it")
        if concepts is not None:
            raise DataError(f"protocol.concepts: {what}")
        warnings.warn(f"{what} ({len(short)} such concept(s)): left out of every trial", UserWarning, stacklevel=3)


def left_out(who: str, wanted: list[str], keep: np.ndarray, why: str) -> None:
    """Warn, in one line, of the concepts a trial's split leaves out (``keep`` False): its MAP averages
    the others, so the trials' MAPs may average different concepts."""
    if keep.all():
        return
    out = [c for c, k in zip(wanted, keep) if not k]
    shown = ", ".join(out[:5]) + (" ..." if len(out) > 5 else "")
    warnings.warn(f"protocol {who}: a trial leaves out {len(out)} of {len(wanted)} concepts ({shown}): {why}; "
                  f"its MAP averages the other {int(keep.sum())}", UserWarning, stacklevel=3)


def scored_concepts(who: str, dataset: Dataset, concepts: list[str] | None, split: TrialSplit) -> None:
    """Say, while a trial is scored (so that its result records it), the concepts its split left
    out (:func:`left_out`): the run's mean MAP then averages trials over different concepts."""
    wanted = list(dataset.info["concepts"]) if concepts is None else list(concepts)
    left_out(who, wanted, np.isin(wanted, split.concepts), "too few relevant items when its split was drawn")


def concept_relevance(dataset: Dataset, concepts: list[str] | None) -> tuple[list[str], np.ndarray]:
    """The wanted concept names (default all) and their relevance columns (items x wanted)."""
    names = list(dataset.info["concepts"])
    wanted = names if concepts is None else list(concepts)
    cols = np.array([names.index(c) for c in wanted], dtype=int)
    return wanted, np.asarray(dataset.arrays["relevance"])[:, cols]


def ap_metrics(scores: np.ndarray, relevant: np.ndarray, depths: list[int], concept: str) -> dict[str, float]:
    """``ap@D/<concept>`` for every depth and ``ap/<concept>`` (full depth), from one sort."""
    aps = average_precisions(scores, relevant, [*depths, None])
    out = {f"ap@{d}/{concept}": ap for d, ap in zip(depths, aps)}
    out[f"ap/{concept}"] = aps[-1]
    return out


def map_metrics(metrics: dict[str, float], concepts: list[str], depths: list[int]) -> dict[str, float]:
    """``map@D`` and ``map``: the means of the per-concept APs over ``concepts``."""
    out = {f"map@{d}": float(np.mean([metrics[f"ap@{d}/{c}"] for c in concepts])) for d in depths}
    out["map"] = float(np.mean([metrics[f"ap/{c}"] for c in concepts]))
    return out

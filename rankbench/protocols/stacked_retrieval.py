"""Stacked concept retrieval (Merler et al., Sec. 5.1): base models, then boosting on held-out rows.

Merler, Yan & Smith, "Imbalanced RankBoost for Efficiently Ranking Large-Scale Image/Video
Collections": per trial the collection is split into base rows (50 %) that train the *base
models* (RBF-SVMs on balanced bags, one feature type each), boosting rows (20 %) on whose
base-model outputs every compared method is fitted, and test rows (30 %) that are ranked per
concept. The result is MAP against *ranking time* (Figure 6): ranking a test collection costs
base-model evaluations, which Imbalanced RankBoost saves on low-ranked items.

Per trial and concept (unjudged items, -1, are left out of every part for that concept):

1. the base models: the ranker named by ``base_models`` (a :class:`~rankbench.rankers.base.ModelBank`,
   a :class:`~rankbench.components.ComponentSpec` seeded per concept from the split's ``bank_seed``
   by :func:`rankbench.utils.seeds.stream_seed`) fitted on the base rows and the feature views;
   with its outputs on the boosting rows H (n_boost x n_models). Both are built once per (trial,
   concept) and shared by every compared method: they are kept on disk
   (:func:`rankbench.utils.diskcache.cached`), keyed by a digest of the rows, the concept, the
   views and the bank's parameters, seed and code;
2. each compared method (a :class:`~rankbench.rankers.base.ModelBooster`, or any
   :class:`~rankbench.rankers.base.ItemScorer`) is fitted on (H, labels);
3. it scores the test rows through a :class:`~rankbench.rankers.base.LazyColumns` that evaluates
   base model j only on the rows asked for and counts the evaluations. ``rank_s`` is the wall
   time of scoring the test rows (base-model evaluations included), on one BLAS thread (a
   method's small batches of survivors would otherwise pay two threads' start-up per batch, and
   ``--jobs`` fills the cores) and after the bank has built its evaluation state; ``evals`` the
   base-model evaluations per test item. A method with ``staged_decision_function`` is timed round by
   round; its curve (``curves["staged"]``: round, evals, rank_s, map@D, map; means over
   concepts, rank_s cumulative within each concept) is what Figure 6 plots and what
   ``dominates`` / ``speedup`` claims read. A concept whose method stopped early keeps its last
   values in later rounds. Per-concept curves (rank_s, evals, ap) are stored as
   ``curves["staged/<concept>"]`` (Figure 7).

Each method's per-concept diagnostics (``diagnostics.csv``, the summary's "what the rankers
chose") start with ``boost_positives`` and ``test_positives``, the relevant items it learnt from
and was graded on, so every result is read beside the size of its concepts, and end with where its
ranking spent evaluations (:func:`pruning`: ``evals_relevant``, ``evals_irrelevant``,
``relevant_full``), which measures whether a threshold left relevant items behind.

Metrics: ``ap@D/<c>``, ``ap/<c>``, ``rank_s/<c>``, ``evals/<c>`` and their means over concepts
``map@D``, ``map``, ``rank_s``, ``evals``. ``test_s`` (the meter's scoring time) also holds the
curve's bookkeeping for staged methods; ``rank_s`` does not. With ``keep_scores`` the final score of
every judged test row is kept per concept (``extra["scores"]``, as ``retrieval`` keeps it).
"""

from __future__ import annotations

import time
from typing import Annotated, Any, Callable

import numpy as np
from pydantic import Field

from ..components import ComponentSpec
from ..datasets.base import Dataset
from ..errors import ConfigError, DataError, RankerFault
from ..params import Names, OpenFraction, PositiveInt
from ..rankers.base import LazyColumns, capabilities, diagnostics
from ..registry import protocols
from ..utils.diskcache import cached, code_fingerprint, digest
from ..utils.meter import Meter
from ..utils.progress import tick
from ..utils.seeds import stream_seed
from ..utils.threads import blas_threads
from .base import Protocol, TrialResult, TrialSplit, checked_output, take
from .retrieval import (ap_metrics, check_collection, check_parts, concept_relevance, draw_parts, left_out,
                        map_metrics, scored_concepts)

PARTS = ("base", "boost", "test")


@protocols.register("stacked_retrieval")
class StackedRetrieval(Protocol):
    """Merler et al.'s protocol: shared base models on 50 %, boosting on 20 %, MAP@D against ranking time on 30 %.

    Parameters
    ----------
    base_models : dict
        ``{ranker: <a model bank, e.g. svm_bank>, <its parameters>...}``; built through the
        registry, fitted on the base rows of every (trial, concept).
    base_fraction, boost_fraction : float
        Shares of the items (or of the groups) that train the base models and the boosting; the
        rest is ranked (paper: 0.5 and 0.2).
    depths : list of int
        Cut-offs D of ``ap@D`` / ``map@D``; full depth is always reported.
    concepts : list of str, optional
        Evaluate only these concepts (default all).
    min_positives : int
        Least number of relevant items a concept needs in each of the three parts (and two
        irrelevant ones), else it is left out of the trial (the kept ones are stored with the split).
    group_column : str, optional
        Split whole groups (videos, person tracks) instead of items.
    cache_base_models : bool
        Keep base models on disk (``$RANKBENCH_CACHE/base_models``) for other methods and runs.
    keep_scores : bool
        Keep each test item's final score per concept in the trial's record (``export --format trec``).
    """

    capability = ("model_booster", "item_scorer")
    headline = "map"
    metric_families = ("ap@D", "ap", "map@D", "map")
    curve_series = {"staged": ("round", "evals", "rank_s", "map@D", "map")}
    ranker_input = "the base models' outputs"
    parameter_labels = {"base_fraction": "Base-model fraction", "boost_fraction": "Boosting fraction",
                        "min_positives": "Least relevant items per part"}
    #: the feature views feed the base models, not the compared methods (docs/developer/extending.md)
    consumes_views = True

    def __init__(self, base_models: dict[str, Any] | None = None, base_fraction: OpenFraction = 0.5,
                 boost_fraction: OpenFraction = 0.2, depths: tuple[PositiveInt, ...] = (100, 500),
                 concepts: Names | None = None,
                 min_positives: Annotated[int, Field(ge=2)] = 2, group_column: str | None = None,
                 cache_base_models: bool = True, keep_scores: bool = False):
        self.base_models = base_models
        self.base_fraction = base_fraction
        self.boost_fraction = boost_fraction
        self.depths = depths
        self.concepts = concepts
        self.min_positives = min_positives
        self.group_column = group_column
        self.cache_base_models = cache_base_models
        self.keep_scores = keep_scores

    # ------------------------------------------------------------------ checks
    def _bank(self) -> ComponentSpec:
        """The model bank named by ``base_models``, looked up and its parameters checked."""
        entry = dict(self.base_models or {"ranker": "svm_bank"})
        name = entry.pop("ranker", None)
        if not isinstance(name, str):
            raise ConfigError(f"protocol.base_models.ranker: expected a model-bank ranker name (e.g. svm_bank), "
                              f"got {name!r}")
        spec = ComponentSpec.checked("rankers", name, entry, "protocol.base_models", "protocol.base_models.ranker")
        if "model_bank" not in capabilities(spec.cls):
            raise ConfigError(f"protocol.base_models.ranker: {name!r} is not a model bank (it offers: "
                              f"{', '.join(sorted(capabilities(spec.cls))) or 'nothing'}); e.g. svm_bank")
        return spec

    def fit_sizes(self, dataset: Dataset, n_features):
        return {}   # its rankers are fitted on the base models' outputs, not on the features

    def check_dataset(self, dataset: Dataset) -> None:
        if self.base_fraction + self.boost_fraction >= 1:
            raise ConfigError(f"protocol.boost_fraction: expected base_fraction + boost_fraction < 1 (the rest "
                              f"is ranked), got {self.base_fraction} + {self.boost_fraction}")
        self._bank()
        check_parts(dataset, (self.base_fraction, self.boost_fraction), self.group_column, PARTS)
        check_collection(dataset, self.concepts, self.registry_name, (3 * self.min_positives, 6))

    # ------------------------------------------------------------------ split
    def split(self, dataset: Dataset, rng: np.random.Generator) -> dict[str, Any]:
        groups = None if self.group_column is None else dataset.column(self.group_column)
        part = draw_parts(rng, len(dataset), (self.base_fraction, self.boost_fraction), groups)
        rows = {p: np.flatnonzero(part == i) for i, p in enumerate(PARTS)}
        wanted, R = concept_relevance(dataset, self.concepts)
        keep = np.ones(len(wanted), bool)
        for p in PARTS:
            keep &= (R[rows[p]] > 0).sum(0) >= self.min_positives
            keep &= (R[rows[p]] == 0).sum(0) >= 2
        if not keep.any():
            raise DataError(f"protocol stacked_retrieval: no concept of dataset {dataset.name!r} has at least "
                            f"{self.min_positives} relevant items in each of the base, boosting and test rows")
        left_out(self.registry_name, wanted, keep, f"fewer than {self.min_positives} relevant items, or fewer "
                 "than two judged non-relevant ones, in the base, the boosting or the test rows")
        return {**{p: rows[p].tolist() for p in PARTS},
                "concepts": [c for c, k in zip(wanted, keep) if k],
                "bank_seed": int(rng.integers(2**31 - 1))}

    # ------------------------------------------------------------------ evaluate
    def evaluate(self, make_ranker: Callable[[], Any], X, dataset: Dataset, split: TrialSplit,
                 meter: Meter) -> TrialResult:
        names = list(dataset.info["concepts"])
        R = np.asarray(dataset.arrays["relevance"])
        depths = [int(d) for d in self.depths]
        bank_spec = self._bank()
        scored_concepts(self.registry_name, dataset, self.concepts, split)
        views_key = digest(X) if self.cache_base_models else ""
        metrics: dict[str, float] = {}
        curves: dict[str, Any] = {}
        per_concept_curves = []
        extra: dict[str, Any] = {"base_models": {}, "diagnostics": {}, **({"scores": {}} if self.keep_scores else {})}
        for ci, concept in enumerate(split.concepts):
            tick("concept", ci + 1, len(split.concepts))
            c = names.index(concept)
            rows = {p: np.asarray(getattr(split, p), dtype=int) for p in PARTS}
            rows = {p: r[R[r, c] >= 0] for p, r in rows.items()}  # unjudged: left out (trec_eval -J)
            # one stream per (trial, concept), recorded via bank_seed
            spec = bank_spec.with_seed(stream_seed(int(split.bank_seed), ci))

            def build():
                bank = spec.build()
                t0 = time.perf_counter()
                bank.fit(take(X, rows["base"]), (R[rows["base"], c] > 0).astype(int))
                t1 = time.perf_counter()
                X_boost = take(X, rows["boost"])
                H = np.stack([bank.model_output(X_boost, j, np.arange(len(rows["boost"])))
                              for j in range(bank.n_models_)], axis=1)
                return bank, H, {"fit_s": t1 - t0, "boost_outputs_s": time.perf_counter() - t1}

            code = code_fingerprint(spec.cls)
            key = digest(spec.name, code, spec.params, concept, views_key, *(rows[p] for p in PARTS),
                         R[rows["base"], c] > 0)  # the labels the bank learns: a re-judged concept is a new bank
            (bank, H, info), hit = cached("base_models", key, build, enabled=self.cache_base_models and code is not None)
            extra["base_models"][concept] = {**info, "n_models": int(bank.n_models_), "from_cache": hit,
                                             **diagnostics(bank)}
            ranker = make_ranker()
            y_boost = (R[rows["boost"], c] > 0).astype(int)
            with meter.train():
                ranker.fit(H, y_boost)
            rel = R[rows["test"], c] > 0
            # the relevant items each method learnt from and was graded on, beside what it chose
            extra["diagnostics"][concept] = {"boost_positives": int(y_boost.sum()), "test_positives": int(rel.sum()),
                                             **diagnostics(ranker)}
            X_test = take(X, rows["test"])
            cols = LazyColumns(lambda j, r: bank.model_output(X_test, j, r), (len(rows["test"]), bank.n_models_))
            with meter.test(), blas_threads(1):
                for j in range(bank.n_models_):  # a bank's evaluation state (built on first use) is not ranking time
                    bank.model_output(X_test, j, np.arange(0))
                s, rank_s, curve = _rank(ranker, cols, rel, depths)
            metrics.update(ap_metrics(s, rel, depths, concept))
            if self.keep_scores:
                extra["scores"][concept] = s.tolist()
            metrics[f"rank_s/{concept}"] = rank_s
            metrics[f"evals/{concept}"] = cols.n_evals / len(rel)
            extra["diagnostics"][concept].update(pruning(cols.evals_per_row(), rel))
            if curve is not None:
                per_concept_curves.append(curve)
                curves[f"staged/{concept}"] = {k: curve[k] for k in ("rank_s", "evals", "ap")}
        kept = split.concepts
        metrics.update(map_metrics(metrics, kept, depths))
        metrics["rank_s"] = float(np.mean([metrics[f"rank_s/{c}"] for c in kept]))
        metrics["evals"] = float(np.mean([metrics[f"evals/{c}"] for c in kept]))
        if per_concept_curves:
            curves["staged"] = _mean_curve(per_concept_curves, depths)
        extra.update(n_concepts=len(kept), **{f"n_{p}": len(getattr(split, p)) for p in PARTS})
        return TrialResult(metrics=metrics, curves=curves, extra=extra)


def pruning(per_row: np.ndarray, rel: np.ndarray) -> dict[str, float]:
    """Where a ranking spent its base-model evaluations: per relevant and per irrelevant test item,
    and the share of relevant items that went through every model any item got (1 for RankBoost;
    below 1 where a threshold left relevant items behind, as Imbalanced RankBoost's may)."""
    full = per_row.max(initial=0)
    return {"evals_relevant": float(per_row[rel].mean()) if rel.any() else 0.0,
            "evals_irrelevant": float(per_row[~rel].mean()) if (~rel).any() else 0.0,
            "relevant_full": float((per_row[rel] == full).mean()) if rel.any() else 0.0}


def _rank(ranker, cols: LazyColumns, rel: np.ndarray, depths: list[int]):
    """(final scores, ranking seconds, per-round curve or None) of one method on one concept."""
    n = len(rel)
    staged = getattr(ranker, "staged_decision_function", None)
    if staged is None:
        t0 = time.perf_counter()
        s = ranker.decision_function(cols)
        elapsed = time.perf_counter() - t0
        return checked_output(s, (n,), "decision_function"), elapsed, None
    curve: dict[str, list[float]] = {"evals": [], "rank_s": [], "ap": [], **{f"ap@{d}": [] for d in depths}}
    elapsed, s = 0.0, None
    gen = iter(staged(cols))
    while True:
        t0 = time.perf_counter()
        try:
            s = next(gen)
        except StopIteration:
            break
        elapsed += time.perf_counter() - t0
        s = checked_output(s, (n,), "staged_decision_function")
        aps = ap_metrics(s, rel, depths, "")
        curve["evals"].append(cols.n_evals / n)
        curve["rank_s"].append(elapsed)
        curve["ap"].append(aps["ap/"])
        for d in depths:
            curve[f"ap@{d}"].append(aps[f"ap@{d}/"])
    if s is None:
        raise RankerFault("staged_decision_function yielded no scores")
    return s, elapsed, curve


def _mean_curve(curves: list[dict[str, list[float]]], depths: list[int]) -> dict[str, list[float]]:
    """Means over concepts, round by round; a concept that stopped early keeps its last values."""
    T = max(len(c["rank_s"]) for c in curves)

    def padded(key):
        return np.array([np.r_[c[key], np.full(T - len(c[key]), c[key][-1])] for c in curves]).mean(axis=0)

    out = {"round": list(range(1, T + 1)), "evals": padded("evals").tolist(), "rank_s": padded("rank_s").tolist(),
           "map": padded("ap").tolist()}
    for d in depths:
        out[f"map@{d}"] = padded(f"ap@{d}").tolist()
    return out

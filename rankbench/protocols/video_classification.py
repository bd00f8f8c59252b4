"""People in tracking sequences classified from a few labelled sequences plus constraints selected
from the video, scored by error rate (Yan, Zhang, Yang & Hauptmann, CVPR 2004, Sections 4.2-4.3).

The dataset is a tracking loader's (``tracks``, ``towncentre``): items with ``identity`` (the
class: who it is), ``sequence`` (tracking sequence id), ``frame`` and ``group`` (the track).
Per trial (seeded by ``rng``):

1. **Split by time** (Section 4.3). The sequences are cut into two disjoint sets by temporal
   order (first frame): the first ``first_fraction`` of them form the first set. With
   ``temporal_split: per_class`` (default) the cut is made within each person's sequences; with
   ``global`` over all sequences at once (the paper's single cut, which needs every person to
   appear in both halves of the video - not so in Town Centre, where each person walks through
   once); with ``global_covering`` at one moment too, moved later where needed until every person
   has a sequence before it. From the first set, ``train_fraction`` of each person's sequences (at least one) are
   drawn at random; all their images are the labelled training images. Every other image is a test
   image. Both counts round half up.
2. **Constraints** (Section 4.2, Figure 5), among the *test* sequences: a ``selector`` classifier
   (the paper: KLR, ``kernel_logreg``; any registered classifier that is a
   :class:`~rankbench.rankers.base.LossDecoder`) is fitted on the training images; each test
   sequence G gets the best-worst ambiguity of Eq. 12 from the selector's ``decoding_losses``,
   taken over the sequence as one object (its images share one label):

       a(G) = min_r (1 / |G|) sum_{x in G} sum_s L(m_rs f_s(x)),   L(z) = log(1 + e^-z),

   with the one-against-all code m_rs = +1 if r = s else -1 (two classes: one output, m = -1 / +1).
   The ``n_constraints`` = K sequences of largest a(G) (ties: smaller sequence id) are selected and
   each gets, by ``strategy``:

   * ``temporal``: the *temporal* constraint (G, G, +1), a sequence with itself. Following the
     paper's centroid approximation, L'(G, G) = sum_{x in G} L'(f(x) - f(mu_G)), i.e. one positive
     constraint (x, mu_G) per image x of G, mu_G the sequence's mean feature; and the *negative*
     constraints (G, H, -1) with every sequence H of another track whose frame span overlaps G's
     (two people on screen at once are different people: the paper's other temporal constraint),
     between the centroids (mu_G, mu_H);
   * ``active``: the *active* constraint (G, T, y) with the training sequence T nearest to G in
     kernel distance between centroids (for an RBF kernel ||phi(mu_G) - phi(mu_T)||^2 =
     2 - 2 exp(-rho ||mu_G - mu_T||^2), so the nearest in Euclidean distance of the selector's
     features, whatever rho), answered from the ground truth (y = +1 if the same person, else
     -1), as the paper simulated its user;
   * ``both``: all of the above.

   ``n_constraints`` is K, the number of constrained sequences; what the paper's Figure 6 counts
   on its x-axis, "number of constraints", are pairs of sequences, which the trial records as
   ``n_pairs`` (:func:`constraint_pairs`: one per temporal, negative and active constraint), so
   the figure is drawn against it with K kept beside it.

Constraints are recorded in the split (``splits.json``) over the extended row space of
:func:`rankbench.protocols.classification.fit_predict`: ``(a, b, same)`` with ``a < n_items`` a
dataset row and ``n_items + k`` the centroid of the rows ``means[k]``; with them ``kinds``
(``temporal`` / ``negative`` / ``active`` per constraint) and ``selected`` (the K sequence ids,
most ambiguous first). Every method of a setting sees the same constraints; a method decides
itself what it uses of them (PKLR all, or only positive ones with ``use_negative: false``; RCA the
positive ones). Metrics on the test images: ``error_rate`` (each image on its own) and
``vote_error_rate`` (every image given its sequence's majority label: the paper's baseline scheme).
"""

from __future__ import annotations

from typing import Any, Callable, Literal

import numpy as np
import pandas as pd

from ..components import ComponentSpec
from ..datasets.base import Dataset
from ..errors import ConfigError, DataError
from ..metrics import error_rate, vote_error_rate
from ..params import NonNegativeInt, OpenFraction
from ..rankers.base import capabilities, diagnostics, fit_accepts
from ..registry import protocols
from ..utils.diskcache import cached, code_fingerprint, digest
from ..utils.meter import Meter
from .base import Protocol, TrialResult, TrialSplit, by_number, checked_output, label_codes
from .classification import fit_predict

COLUMNS = ("identity", "sequence", "frame", "group")


# ----------------------------------------------------------------------------- sequences
def sequence_table(items: pd.DataFrame) -> pd.DataFrame:
    """One row per sequence id (sorted): ``cls`` (class code of ``identity``), ``track``
    (``group``), ``first`` / ``last`` frame, ``n`` images (a track shows one person:
    :meth:`VideoClassification.check_dataset`)."""
    codes = label_codes(items["identity"].to_numpy())
    t = pd.DataFrame({"sequence": items["sequence"].to_numpy(), "cls": codes, "track": items["group"].to_numpy(),
                      "frame": items["frame"].to_numpy()})
    return t.groupby("sequence", sort=True).agg(cls=("cls", "first"), track=("track", "first"),
                                                first=("frame", "min"), last=("frame", "max"), n=("frame", "size"))


def overlapping_sequences(seqs: pd.DataFrame) -> np.ndarray:
    """(p, 2) pairs (a < b) of sequence ids of different tracks whose frame spans overlap, from the
    :func:`sequence_table`.

    Two people on screen at the same time are different people: the paper's negative constraints
    between sequences that overlap in time (Section 4.2).
    """
    s, f, l, tr = seqs.index.to_numpy(), seqs["first"].to_numpy(), seqs["last"].to_numpy(), seqs["track"].to_numpy()
    overlap = (f[:, None] <= l[None, :]) & (f[None, :] <= l[:, None]) & (tr[:, None] != tr[None, :])
    a, b = np.nonzero(np.triu(overlap, 1))
    return np.column_stack([s[a], s[b]]).reshape(-1, 2)


def _round_half_up(x: np.ndarray | float) -> np.ndarray:
    return np.floor(np.asarray(x, dtype=float) + 0.5).astype(int)


def split_counts(seqs: pd.DataFrame, first_fraction: float, train_fraction: float,
                 mode: str = "per_class") -> tuple[np.ndarray, pd.Series]:
    """The first set (sequence ids, by temporal order) and the training sequences per class.

    ``mode``: ``per_class`` cuts each class's sequences at ``first_fraction``; ``global`` cuts all
    sequences at one moment, the first ``first_fraction`` of them; ``global_covering`` the same,
    moved later where needed until every class has a sequence before the cut (the latest of
    the classes' first appearances).

    Returns (first-set mask over ``seqs``' rows, number of training sequences per class code;
    0 where a class has no sequence in the first set).
    """
    order = np.lexsort((seqs.index.to_numpy(), seqs["first"].to_numpy()))
    rank = np.empty(len(seqs), dtype=int)
    if mode == "per_class":
        cls = seqs["cls"].to_numpy()[order]
        rank[order] = pd.Series(cls).groupby(cls).cumcount().to_numpy()  # within the class, by time
        size = seqs.groupby("cls")["n"].transform("size").to_numpy()
        n_first = np.clip(_round_half_up(first_fraction * size), 1, size)
    else:
        rank[order] = np.arange(len(order))
        n_first = int(np.clip(_round_half_up(first_fraction * len(seqs)), 1, len(seqs)))
        if mode == "global_covering":  # every class's earliest sequence inside the first set
            n_first = max(n_first, int(pd.Series(rank).groupby(seqs["cls"].to_numpy()).min().max()) + 1)
    first = rank < n_first
    per = pd.Series(first, index=seqs.index).groupby(seqs["cls"]).sum()
    n_train = pd.Series(np.where(per > 0, np.clip(_round_half_up(train_fraction * per), 1, None), 0), index=per.index)
    return first, n_train


# ----------------------------------------------------------------------------- Eq. 12
def sequence_ambiguity(losses: np.ndarray, sequence: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eq. 12 per sequence: (sequence ids, a(G) = min_r mean_{x in G} loss_r(x)), ``losses`` the
    (n, n_classes) decoding losses sum_s L(m_rs f_s(x)) of the selector
    (:meth:`~rankbench.rankers.base.LossDecoder.decoding_losses`) on the rows of ``sequence``."""
    ids, inv = np.unique(sequence, return_inverse=True)
    inv = inv.ravel()
    per = np.zeros((len(ids), losses.shape[1]))
    np.add.at(per, inv, losses)
    per /= np.bincount(inv)[:, None]
    return ids, per.min(axis=1)


def most_ambiguous(ids: np.ndarray, ambiguity: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` ids of largest ambiguity, most ambiguous first (ties: smaller id first)."""
    order = np.lexsort((ids, -ambiguity))
    return ids[order[:k]]


def nearest_rows(Q: np.ndarray, R: np.ndarray) -> np.ndarray:
    """Index into ``R`` of the row nearest to each row of ``Q`` (Euclidean; ties: first)."""
    d2 = (Q * Q).sum(1)[:, None] - 2.0 * Q @ R.T + (R * R).sum(1)[None, :]
    return np.argmin(d2, axis=1)


@protocols.register("video_classification")
class VideoClassification(Protocol):
    """People in tracking sequences: few labelled sequences, constraints selected from video (Yan et al.).

    Parameters
    ----------
    n_constraints : int
        K, the number of most ambiguous test sequences that get constraints (Figure 6's "number
        of constraints"; module docstring).
    strategy : "temporal", "active" or "both"
        Which constraints each selected sequence gets (temporal: itself and the sequences
        overlapping it in time, negatively; active: its nearest training sequence, answered from
        the ground truth).
    first_fraction : float
        Share of the sequences (by temporal order) in the first set.
    train_fraction : float
        Share of each person's first-set sequences whose images are labelled (the paper: 50 %).
    temporal_split : "per_class", "global" or "global_covering"
        Cut each person's sequences by time, or all sequences at one moment.
    selector : dict, optional
        The classifier whose ambiguity selects sequences, as a ranker entry: ``ranker`` (default
        ``kernel_logreg``), its parameters, and ``features`` (a feature set of the config; default
        the only one). Default: KLR with its defaults (lambda = 0.001, rho chosen by cross-validation on the
        training sequences, as the paper chose it).
    """

    capability = ("classifier",)
    headline = "error_rate"
    metric_families = ("error_rate", "vote_error_rate")
    parameter_labels = {"n_constraints": "Constrained sequences (K)", "first_fraction": "First-set fraction",
                        "train_fraction": "Labelled fraction of the first set"}
    split_uses_features = True

    def __init__(self, n_constraints: NonNegativeInt = 0, strategy: Literal["temporal", "active", "both"] = "both",
                 first_fraction: OpenFraction = 0.5, train_fraction: OpenFraction = 0.5,
                 temporal_split: Literal["per_class", "global", "global_covering"] = "per_class",
                 selector: dict[str, Any] | None = None):
        self.n_constraints = n_constraints
        self.strategy = strategy
        self.first_fraction = first_fraction
        self.train_fraction = train_fraction
        self.temporal_split = temporal_split
        self.selector = selector

    # ------------------------------------------------------------------ checks
    def _selector_entry(self) -> tuple[Any, dict[str, Any], str | None]:
        """The ``selector`` entry as (ranker name, its parameters, feature set), unchecked."""
        entry = dict(self.selector or {})
        name = entry.pop("ranker", "kernel_logreg")
        feats = entry.pop("features", None)
        if feats is not None and not isinstance(feats, str):
            raise ConfigError(f"protocol.selector.features: expected the name of a feature set, got {feats!r}")
        return name, entry, feats

    def selector_spec(self) -> ComponentSpec:
        """The selector classifier, checked: registry name, parameters, and a classifier that
        gives decoding losses (:class:`~rankbench.rankers.base.LossDecoder`)."""
        name, params, _ = self._selector_entry()
        spec = ComponentSpec.checked("rankers", name, params, "protocol.selector", "protocol.selector.ranker")
        if not {"classifier", "loss_decoder"} <= capabilities(spec.cls):
            raise ConfigError(f"protocol.selector.ranker: expected a classifier with decoding_losses (a loss_decoder, "
                              f"e.g. kernel_logreg), got {name!r}")
        return spec

    def check_dataset(self, dataset: Dataset) -> None:
        missing = [c for c in COLUMNS if c not in dataset.items.columns]
        if missing:
            raise DataError(f"protocol video_classification: dataset {dataset.name!r} has no {missing[0]!r} column; "
                            "expected tracking sequences (loaders tracks, towncentre)")
        who = f"protocol video_classification: dataset {dataset.name!r}"
        ids, tracks = dataset.column("identity"), dataset.column("group")
        shown = pd.Series(ids).groupby(tracks).unique()
        if (shown.map(len) > 1).any():  # a tracker's id reused, or identities mixed up
            tr, names = next((t, v) for t, v in shown.items() if len(v) > 1)
            raise DataError(f"{who}: track {tr} shows several identities ({', '.join(repr(str(n)) for n in names[:3])}); "
                            "expected one person per track (a person may have several tracks)")
        seqs = sequence_table(dataset.items)
        if self.n_constraints and self.strategy != "active":
            pairs = overlapping_sequences(seqs)
            same = pairs[seqs.loc[pairs[:, 0], "cls"].to_numpy() == seqs.loc[pairs[:, 1], "cls"].to_numpy()]
            if len(same):
                a, b = seqs.loc[same[0, 0]], seqs.loc[same[0, 1]]
                raise DataError(f"{who}: tracks {a['track']} and {b['track']} of identity {str(ids[tracks == a['track']][0])!r} "
                                f"overlap in time (frames {max(a['first'], b['first'])}-{min(a['last'], b['last'])}); "
                                "expected one person on screen once, as the negative constraints take sequences seen "
                                "together for different people (strategy: active draws none)")
        if seqs["cls"].nunique() < 2:
            raise DataError(f"protocol video_classification: dataset {dataset.name!r} has fewer than two identities")
        _, n_train = split_counts(seqs, self.first_fraction, self.train_fraction, self.temporal_split)
        if (n_train == 0).any():
            who = by_number(np.unique(dataset.items["identity"].to_numpy())).tolist()[n_train.index[n_train == 0][0]]
            raise ConfigError(f"protocol.temporal_split: expected every identity in the first "
                              f"{self.first_fraction:g} of the video, got identity {who!r} only later; "
                              "use temporal_split: per_class or global_covering")
        n_test = len(seqs) - int(n_train.sum())
        if self.n_constraints > n_test:
            raise ConfigError(f"protocol.n_constraints: expected at most {n_test} (the test sequences of "
                              f"dataset {dataset.name!r}), got {self.n_constraints}")
        if self.n_constraints:
            self.selector_spec()

    def check_features(self, names: list[str]) -> None:
        if self.n_constraints:
            self._selector_features(names)

    def _selector_features(self, names) -> str:
        _, _, feats = self._selector_entry()
        if feats is None:
            if len(names) != 1:
                raise ConfigError(f"protocol.selector.features: expected the feature set the selector uses "
                                  f"(the config defines {', '.join(names) or 'none'}), got nothing")
            return next(iter(names))
        if feats not in names:
            raise ConfigError(f"protocol.selector.features: expected one of {', '.join(names)}, got {feats!r}")
        return feats

    # ------------------------------------------------------------------ split
    def split(self, dataset: Dataset, rng: np.random.Generator,
              features: dict[str, np.ndarray] | None = None) -> dict[str, Any]:
        items = dataset.items
        seqs = sequence_table(items)
        first, n_train = split_counts(seqs, self.first_fraction, self.train_fraction,
                                      self.temporal_split)
        cand = pd.Series(seqs.index[first]).groupby(seqs["cls"].to_numpy()[first])
        train_seq = np.sort(np.concatenate([rng.choice(s.to_numpy(), int(n_train[c]), replace=False)
                                            for c, s in cand]))
        seq_of = items["sequence"].to_numpy()
        is_train = np.isin(seq_of, train_seq)
        out = {"train": np.flatnonzero(is_train).tolist(), "test": np.flatnonzero(~is_train).tolist(),
               "train_sequences": train_seq.tolist(), "constraints": [], "kinds": [], "means": [], "selected": []}
        if self.n_constraints:
            seed = int(rng.integers(2**31 - 1))
            X = np.asarray((features or {})[self._selector_features(list(features or {}))], dtype=float)
            out.update(self.constraints(X, items, seqs, is_train, train_seq, self.selector_spec().build(seed)))
        return out

    def constraints(self, X: np.ndarray, items: pd.DataFrame, seqs: pd.DataFrame, is_train: np.ndarray,
                    train_seq: np.ndarray, selector) -> dict[str, list]:
        """Select the K most ambiguous test sequences and build their constraints (module docstring)."""
        X = X.reshape(len(X), -1)
        codes = seqs["cls"].to_numpy()
        seq_of = items["sequence"].to_numpy()
        row_cls = codes[np.searchsorted(seqs.index.to_numpy(), seq_of)]
        test_rows = np.flatnonzero(~is_train)
        losses = checked_output(selector_losses(selector, X, row_cls, seq_of, is_train),
                                (len(test_rows), int(codes.max()) + 1), "protocol.selector's decoding_losses")
        ids, amb = sequence_ambiguity(losses, seq_of[test_rows])
        selected = most_ambiguous(ids, amb, int(self.n_constraints))

        n = len(items)
        mean_id: dict[int, int] = {}
        means: list[list[int]] = []

        def rows(s) -> np.ndarray:
            return np.flatnonzero(seq_of == s)

        def centroid(s) -> int:  # extended row of sequence s's mean, created on first use
            if int(s) not in mean_id:
                mean_id[int(s)] = n + len(means)
                means.append(rows(s).tolist())
            return mean_id[int(s)]

        C: list[tuple[int, int, int]] = []
        kinds: list[str] = []
        if self.strategy in ("temporal", "both"):
            for s in selected:
                m = centroid(s)
                C += [(int(r), m, 1) for r in rows(s)]
                kinds += ["temporal"] * len(rows(s))
            pairs = overlapping_sequences(seqs)
            pairs = pairs[np.isin(pairs, selected).any(axis=1)]
            first = np.minimum(_position(selected, pairs[:, 0]), _position(selected, pairs[:, 1]))
            for a, b in pairs[np.argsort(first, kind="stable")]:
                C.append((centroid(a), centroid(b), 0))
                kinds.append("negative")
        if self.strategy in ("active", "both"):
            def mu(ss) -> np.ndarray:
                return np.stack([X[rows(s)].mean(0) for s in ss])

            nearest = train_seq[nearest_rows(mu(selected), mu(train_seq))]
            cls_of = dict(zip(seqs.index.to_numpy().tolist(), codes.tolist()))
            for s, t in zip(selected, nearest):
                C.append((centroid(s), centroid(t), int(cls_of[int(s)] == cls_of[int(t)])))
                kinds.append("active")
        return {"constraints": [list(c) for c in C], "kinds": kinds, "means": means,
                "selected": [int(s) for s in selected]}

    # ------------------------------------------------------------------ evaluate
    def evaluate(self, make_ranker: Callable[[], Any], X, dataset: Dataset, split: TrialSplit,
                 meter: Meter) -> TrialResult:
        codes = label_codes(dataset.column("identity"))
        test = np.asarray(split.test, dtype=int)
        pred, ranker, used = fit_predict(make_ranker, X, codes, split, meter, groups=dataset.column("sequence"))
        kinds = pd.Series(getattr(split, "kinds", []), dtype=object)
        C = np.asarray(getattr(split, "constraints", []), dtype=int).reshape(-1, 3)
        same = C[:, 2]
        return TrialResult(
            metrics={"error_rate": error_rate(codes[test], pred),
                     "vote_error_rate": vote_error_rate(codes[test], pred, dataset.column("sequence")[test])},
            extra={"n_train": len(split.train), "n_test": len(test),
                   "n_train_sequences": len(getattr(split, "train_sequences", [])),
                   "n_selected": len(getattr(split, "selected", [])), "n_constraints": len(same),
                   "n_pairs": constraint_pairs(C, kinds.to_numpy()),
                   "n_positive": int(same.sum()), "constraint_kinds": kinds.value_counts().to_dict(),
                   "constraints_used": used, "diagnostics": diagnostics(ranker)})


def constraint_pairs(C: np.ndarray, kinds: np.ndarray) -> int:
    """Constraints counted as the paper counts them, per pair of sequences (Figure 6's x-axis).

    A temporal constraint (G, G) is one pair however many image-to-centroid terms its loss has
    (one row of ``C`` per image of G, all ending at G's centroid); each negative and each active
    constraint is one pair of sequences.
    """
    C = np.asarray(C).reshape(-1, 3)
    temporal = np.asarray(kinds) == "temporal"
    return int(len(np.unique(C[temporal, 1])) + (~temporal).sum())


def _position(selected: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Rank of each id of ``s`` in ``selected`` (ids not selected rank last)."""
    where = {int(v): k for k, v in enumerate(selected)}
    return np.array([where.get(int(v), len(selected)) for v in s], dtype=int)


def selector_losses(selector, X: np.ndarray, row_cls: np.ndarray, seq_of: np.ndarray,
                    is_train: np.ndarray) -> np.ndarray:
    """The selector's decoding losses on the test rows, fitted on the training rows (a selector
    choosing its own rho holds out whole sequences: ``groups``).

    Kept in the cache (kind ``selectors``) under a digest of the selector's class, code and
    parameters (its seed among them) and of the rows it sees: the settings of a sweep share each
    trial's split seed, so every setting with constraints would fit the same selector on the
    same training rows again (Yan et al. Fig. 6: 24 of 27 settings).
    """
    test_rows = np.flatnonzero(~is_train)
    code = code_fingerprint(type(selector))
    params = selector.get_params(deep=False) if hasattr(selector, "get_params") else None
    key = digest(type(selector).__qualname__, code, params, X, row_cls, seq_of, is_train)

    def compute() -> np.ndarray:
        if fit_accepts(selector, "groups"):
            selector.fit(X[is_train], row_cls[is_train], groups=seq_of[is_train])
        else:
            selector.fit(X[is_train], row_cls[is_train])
        return np.asarray(selector.decoding_losses(X[test_rows]))

    return cached("selectors", key, compute, enabled=code is not None and params is not None)[0]

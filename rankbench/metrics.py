"""Evaluation metrics: pure functions of scores and labels.

Conventions (tested against independent references, and for every metric, in
``tests/test_metrics.py``):

* Larger score = ranked higher / more similar.
* **Ties count at their expected value** (THE tie rule of every ranking metric): items of equal
  score are ranked in every order with equal probability, and a metric is its mean over those
  orders, computed exactly (McSherry & Najork, ECIR 2008), not by sampling. A constant scorer so
  gets exactly chance: CMC@r = r / n_gallery for one true match, pair accuracy 1/2, AP the
  expected AP of a random order; a tie between a true match and a wrong item is half right, not
  right (a fixed order such as the item index would reward whatever order the rows happen to
  have) and not wrong (a pessimistic order would punish a scorer for resolution it was never
  asked for). A tie is equality of the scores as the ranker returned them: two distances equal
  in exact arithmetic but rounded differently (summed in another order, e.g. L1 over histograms
  whose bins are multiples of 1/1536) are not tied; a ranker that means them tied rounds its
  scores itself. Without ties every metric is the ordinary one, bit for bit. A tied majority vote
  is right with probability one over the number of tied labels. (The k-NN *predictors* below are
  part of a protocol's model, not metrics: they break ties in distance by training row and ties
  in votes by the smallest label, as Yu & Li's Matlab code does. ``rankbench export --format
  trec`` writes scores as they are, so trec_eval breaks their ties by document id, descending,
  and its numbers can differ from rankbench's where scores tie.)
* Non-finite inputs are an error, never a value: every metric refuses a NaN or infinite score,
  similarity, embedding, prediction or label with a ``ValueError`` (:func:`finite`). A NaN never
  wins or loses a comparison (``NaN >= x`` is false), so a NaN scorer would otherwise match every
  probe at rank 1. Protocols check what a ranker returns before it reaches a metric and name the
  method (:func:`rankbench.protocols.base.checked_output`); this is the last line of defence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np


# --------------------------------------------------------------------------- declarations
@dataclass(frozen=True)
class MetricInfo:
    """What a metric is, declared once for every table, plot and check.

    ``rate`` metrics are fractions in [0, 1] in the files and percentages in tables and plots;
    ``higher_is_better`` orients comparisons; ``cost`` marks time and memory columns; ``label`` is
    what an axis or a reader calls it (``K`` / ``D`` stand for the number in the metric's name);
    ``unit`` the unit of a metric that is not a rate (a rate's is %).
    """

    family: str
    pattern: str
    label: str
    rate: bool = True
    higher_is_better: bool = True
    cost: bool = False
    unit: str = ""


METRICS: tuple[MetricInfo, ...] = (
    MetricInfo("cmc@K", r"cmc@\d+", "Matching rate at rank K"),
    MetricInfo("nauc", r"nauc", "Normalised area under the CMC curve"),
    MetricInfo("ap@D", r"ap@\d+", "Average precision at depth D"),
    MetricInfo("ap", r"ap", "Average precision"),
    MetricInfo("map@D", r"map@\d+", "Mean average precision at depth D"),
    MetricInfo("map", r"map", "Mean average precision"),
    MetricInfo("mae", r"mae", "Mean absolute error", rate=False, higher_is_better=False),
    MetricInfo("pair_acc", r"pair_acc", "Pair accuracy"),
    MetricInfo("error_rate", r"error_rate", "Error rate", higher_is_better=False),
    MetricInfo("vote_error_rate", r"vote_error_rate", "Error rate after a majority vote per sequence",
               higher_is_better=False),
    MetricInfo("train_s", r"train_s", "Training time", rate=False, higher_is_better=False, cost=True, unit="s"),
    MetricInfo("test_s", r"test_s", "Scoring time", rate=False, higher_is_better=False, cost=True, unit="s"),
    MetricInfo("rank_s", r"rank_s", "Ranking time", rate=False, higher_is_better=False, cost=True, unit="s"),
    MetricInfo("evals", r"evals", "Base-model evaluations per item", rate=False, higher_is_better=False,
               cost=True),
    MetricInfo("peak_mb", r"peak_mb", "Peak memory", rate=False, higher_is_better=False, cost=True, unit="MB"),
)
_COMPILED = [(re.compile(m.pattern + r"\Z"), m) for m in METRICS]


def metric_info(name: str) -> MetricInfo | None:
    """The declaration of a metric name (``cmc@5``, ``pair_acc/Male``: the part before ``/``)."""
    base = name.split("/", 1)[0]
    for rx, info in _COMPILED:
        if rx.match(base):
            return info
    return None


def metric_label(name: str, unit: bool = True) -> str:
    """What a reader calls a metric: ``cmc@5`` -> "Matching rate at rank 5 (%)", ``mae`` -> "Mean
    absolute error", ``train_s`` -> "Training time (s)"; a per-task name by its family. An
    undeclared name is returned as it is."""
    info = metric_info(name)
    if info is None:
        return name
    base = name.split("/", 1)[0]
    text = info.label
    if "@" in base:
        text = re.sub(r"\b[KD]\b", base.split("@", 1)[1], text)
    shown = "%" if info.rate else info.unit
    return f"{text} ({shown})" if unit and shown else text


def is_rate(name: str) -> bool:
    info = metric_info(name)
    return bool(info and info.rate)


def finite(values, what: str = "scores") -> np.ndarray:
    """``values`` as a float array, or a ValueError when any is NaN or infinite (see the module
    docstring: a non-finite value is an error, never a value)."""
    a = np.asarray(values, dtype=float)
    bad = int(a.size - np.count_nonzero(np.isfinite(a)))
    if bad:
        raise ValueError(f"{what}: {bad} of {a.size} values are not finite (NaN or infinite)")
    return a


def labels(values, what: str = "labels") -> np.ndarray:
    """Class labels of any kind (numbers, strings) as an array; a ValueError when a numeric one
    is NaN or infinite, or one is missing (None)."""
    a = np.asarray(values)
    if a.dtype.kind in "fc":
        return finite(a, what)
    if a.dtype.kind == "O":
        bad = sum(v is None or (isinstance(v, float) and not np.isfinite(v)) for v in a.ravel())
        if bad:
            raise ValueError(f"{what}: {bad} of {a.size} values are not finite (None, NaN or infinite)")
    return a


# --------------------------------------------------------------------------- re-identification
def _matches(S: np.ndarray, probe_ids, gallery_ids, candidates) -> tuple[np.ndarray, np.ndarray]:
    """The (n_probe, n_gallery) masks of each probe's candidates and of its true matches among
    them, after checking that the candidates' similarities are finite and every probe has a match."""
    cand = np.ones(S.shape, dtype=bool) if candidates is None else np.asarray(candidates, dtype=bool)
    finite(S[cand], "similarity")
    match = (np.asarray(probe_ids)[:, None] == np.asarray(gallery_ids)[None, :]) & cand
    if not match.any(axis=1).all():
        raise ValueError("every probe identity must appear among its gallery candidates")
    return cand, match


def cmc_curve(similarity: np.ndarray, probe_ids: np.ndarray, gallery_ids: np.ndarray,
              candidates: np.ndarray | None = None) -> np.ndarray:
    """Cumulative matching characteristic: the fraction of probes whose first true match is within
    rank r, r = 1..n_gallery.

    Parameters
    ----------
    similarity : (n_probe, n_gallery) array, larger = better match.
    probe_ids, gallery_ids : identities; every probe must have a true match among its candidates.
    candidates : optional (n_probe, n_gallery) bool mask of the gallery items each probe is ranked
        against (e.g. only another camera's images); default every gallery item. Only candidates'
        similarities must be finite (a ranker may mark the others ``-inf``).

    Notes
    -----
    Ties count at their expected value (the module's rule): a probe whose best true match ties
    with t wrong candidates (and m true ones), below g wrong ones, has its first true match at
    rank g + j with the probability that the first of m marked items lands at place j of a random
    order of t + m, so P(rank <= g + j) = 1 - prod_{i<j} (t - i) / (t + m - i).
    """
    S = np.asarray(similarity, dtype=float)
    cand, match = _matches(S, probe_ids, gallery_ids, candidates)
    wrong = cand & ~match
    best = np.where(match, S, -np.inf).max(axis=1)[:, None]
    above, tied, true_tied = ((S > best) & wrong).sum(1), ((S == best) & wrong).sum(1), ((S == best) & match).sum(1)
    n_probe, n_gallery = S.shape
    plain = tied == 0
    counts = np.bincount(above[plain], minlength=n_gallery)[:n_gallery]
    curve = np.cumsum(counts).astype(float)
    for g, t, m in zip(above[~plain], tied[~plain], true_tied[~plain]):
        j = np.arange(1, t + 1)
        not_yet = np.cumprod((t - j + 1) / (t + m - j + 1))   # P(first true match after place j)
        curve[g:g + t] += 1.0 - not_yet
        curve[g + t:] += 1.0
    return curve / n_probe


def reid_average_precisions(similarity: np.ndarray, probe_ids: np.ndarray, gallery_ids: np.ndarray,
                            candidates: np.ndarray | None = None) -> np.ndarray:
    """Average precision of each probe's ranking of the gallery (the per-probe terms of re-id mAP).

    torchreid's definition (``eval_market1501``): a probe ranks its candidate gallery items by
    similarity; AP = (1 / R) sum_k P@k over the positions k of its R true matches, P@k the
    fraction of true matches among the first k. Its mean over probes is the re-id ``map``.

    Parameters
    ----------
    similarity : (n_probe, n_gallery) array, larger = better match.
    probe_ids, gallery_ids : identities.
    candidates : optional (n_probe, n_gallery) bool mask of the gallery items each probe ranks
        (torchreid leaves out the probe's own identity seen by the probe's own camera); default
        every gallery item. Every probe needs a true match among its candidates, and the
        candidates' similarities must be finite.

    Returns
    -------
    ap : (n_probe,) float array. Ties count at their expected value (:func:`average_precisions`).
    """
    S = np.asarray(similarity, dtype=float)
    cand, match = _matches(S, probe_ids, gallery_ids, candidates)
    # candidates first, then by similarity (descending)
    order = np.lexsort((-S, ~cand), axis=1)
    ranked = np.take_along_axis(S, order, axis=1)
    hits = np.take_along_axis(match, order, axis=1)
    n_cand = cand.sum(axis=1)
    mixed = (ranked[:, 1:] == ranked[:, :-1]) & (hits[:, 1:] != hits[:, :-1])   # a true and a wrong tie
    tied = (mixed & (np.arange(1, S.shape[1]) < n_cand[:, None])).any(axis=1)
    precision = np.cumsum(hits, axis=1) / np.arange(1, S.shape[1] + 1)
    ap = (precision * hits).sum(axis=1) / hits.sum(axis=1)
    for i in np.flatnonzero(tied):
        c = cand[i]
        ap[i] = average_precisions(S[i, c], match[i, c])[0]
    return ap


def nauc(curve: np.ndarray) -> float:
    """Normalised area under a CMC curve: the mean matching rate over ranks 1..n_gallery."""
    return float(np.mean(curve))


# --------------------------------------------------------------------------- retrieval
def average_precision(scores: np.ndarray, relevant: np.ndarray, depth: int | None = None,
                      n_relevant: int | None = None) -> float:
    """Average precision at depth ``d`` as defined by Merler et al. (and trec_eval's ``map_cut``).

    AP@d = (1 / TP) * sum_{k <= d} (TP_k / k) * I_k, where TP is the number of relevant items in
    the whole collection (not only those within the depth), TP_k the relevant items among the
    top k and I_k whether item k is relevant. Ties in score count at their expected value over
    the orders of the tied items (:func:`average_precisions`). Returns 0 when there is nothing
    relevant.
    """
    return average_precisions(scores, relevant, (depth,), n_relevant)[0]


def average_precisions(scores: np.ndarray, relevant: np.ndarray, depths=(None,),
                       n_relevant: int | None = None) -> list[float]:
    """:func:`average_precision` at several depths (``None`` = full depth) from one sort.

    The items fall into groups of equal score, best first. A group of n items holding r relevant
    ones, after a items of which c are relevant, adds at its j-th place (a random one of its n!
    orders) the expected term E[TP_k I_k] / k, k = a + j, which is (r / n) (c + 1 + (j - 1)
    (r - 1) / (n - 1)) / k (the place holds a relevant item with probability r / n, and then each
    of the j - 1 places before it within the group with probability (r - 1) / (n - 1));
    McSherry & Najork (ECIR 2008) give the same expectation. A depth may cut a group; only its
    places up to the depth count. An untied relevant item (n = 1) adds (c + 1) / k: without ties
    this is the ordinary AP@d, the same terms summed in the same order as over the ranked list.
    """
    scores = finite(scores)
    rel = np.asarray(relevant).astype(bool)
    tp = int(rel.sum()) if n_relevant is None else int(n_relevant)
    if tp == 0:
        return [0.0 for _ in depths]
    rank, term = _expected_terms(scores, rel)
    csum = np.cumsum(term)
    out = []
    for d in depths:
        k = len(scores) if d is None else min(int(d), len(scores))
        within = int(np.searchsorted(rank, k, side="right"))   # places within the top k
        out.append(float(csum[within - 1] / tp) if within > 0 else 0.0)
    return out


def _expected_terms(scores: np.ndarray, rel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The places k that may hold a relevant item, best first, and each one's expected term
    E[TP_k I_k] / k (see :func:`average_precisions`).

    A group of equal score with no relevant item adds no place; an untied relevant item, or a
    group of relevant items only, adds each item's ordinary term (c + j) / (a + j). Only the groups
    holding a relevant item are looked up, in one sort of the scores: a staged curve calls this
    once per round.
    """
    ordered = np.sort(scores)
    values, r = np.unique(scores[rel], return_counts=True)      # the groups holding a relevant item
    values, r = values[::-1], r[::-1]                            # best first
    hi = np.searchsorted(ordered, values, side="right")
    n = hi - np.searchsorted(ordered, values, side="left")       # each group's size
    a = len(scores) - hi                                         # items ranked above each group
    c = np.cumsum(r) - r                                         # relevant items above each group
    pure = r == n                                                # every place holds a relevant item
    start = np.cumsum(n) - n
    g = np.repeat(np.arange(len(n)), n)
    j = np.arange(int(n.sum())) - start[g] + 1                   # 1..n within each group
    rank = a[g] + j
    # P(relevant) x E[TP | relevant]; 1 x (c + j) for a pure group, as the ordinary AP counts it
    share = np.where(pure, 1.0, r / n)[g]
    mates = np.divide(r - 1, n - 1, out=np.ones(len(n)), where=~pure)[g]
    return rank, share * (c[g] + 1 + (j - 1) * mates) / rank


# --------------------------------------------------------------------------- ordinal
def _distances(Z_test: np.ndarray, Z_train: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances of the test to the training rows, or a ValueError naming the
    cause when one overflows: k nearest neighbours among infinite distances are the first rows,
    not the nearest."""
    from scipy.spatial.distance import cdist

    Z_test, Z_train = finite(Z_test, "embedding"), finite(Z_train, "embedding")
    with np.errstate(over="ignore", invalid="ignore"):
        D = cdist(Z_test, Z_train, "sqeuclidean")
    bad = int(D.size - np.count_nonzero(np.isfinite(D)))
    if bad:
        top = max(np.abs(Z_test).max(initial=0.0), np.abs(Z_train).max(initial=0.0))
        raise ValueError(f"k-NN: {bad} of {D.size} squared distances overflow to infinity (embedding values up "
                         f"to {top:.3g}); rescale the features")
    return D


def _nearest(Z_train: np.ndarray, Z_test: np.ndarray, k: int) -> np.ndarray:
    """(n_test, k) the k nearest training rows of each test row, ties in distance to the lower row."""
    return np.argsort(_distances(Z_test, Z_train), axis=1, kind="stable")[:, :min(int(k), len(Z_train))]


def knn_regress(Z_train: np.ndarray, y_train: np.ndarray, Z_test: np.ndarray, k: int) -> np.ndarray:
    """k-nearest-neighbour regression: the mean label of the k nearest training rows (Euclidean).

    Ties in distance are broken by training-row order (``np.argsort`` with a stable sort).
    """
    nn = _nearest(Z_train, Z_test, k)
    return finite(y_train, "labels")[nn].mean(axis=1)


def knn_vote(Z_train: np.ndarray, y_train: np.ndarray, Z_test: np.ndarray, k: int) -> np.ndarray:
    """k-nearest-neighbour majority vote: the most frequent label of the k nearest training rows.

    Ties in count go to the smallest label and ties in distance to the lower training row, as in
    Yu & Li's published Matlab code (``sort(..., 'ascend')`` is stable; ``max`` returns the first
    maximum over the sorted labels).
    """
    y_train = finite(y_train, "labels")
    nn = _nearest(Z_train, Z_test, k)
    labels, idx = np.unique(y_train, return_inverse=True)
    counts = np.zeros((len(Z_test), len(labels)), dtype=int)
    np.add.at(counts, (np.repeat(np.arange(len(Z_test)), nn.shape[1]), idx[nn].ravel()), 1)
    return labels[np.argmax(counts, axis=1)]


def mae(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Mean absolute error."""
    return float(np.mean(np.abs(finite(y_true, "labels") - finite(y_pred, "predictions"))))


# --------------------------------------------------------------------------- pairwise comparison
def grouped_pair_accuracy(scores: np.ndarray, strength: np.ndarray) -> tuple[float, int]:
    """Pair accuracy over *all* pairs of items whose strengths differ, without listing the pairs.

    The pair (i, j) with strength[i] > strength[j] is correct when scores[i] > scores[j]; a tie in
    score counts one half (the module's tie rule). Counting uses one sort, O(n log n), so millions of pairs (OSR's test
    set) cost milliseconds.

    Returns
    -------
    accuracy, n_pairs
    """
    s = finite(scores)
    g = finite(strength, "strengths")
    levels = np.unique(g)
    correct = ties = total = 0
    order = np.sort(s)
    # for each stronger item, count weaker items with strictly lower score:
    # #(weaker with score < s_i) = #(all with score < s_i) - #(same-or-stronger with score < s_i)
    below_all = np.searchsorted(order, s, side="left")
    tied_all = np.searchsorted(order, s, side="right") - below_all
    for lv in levels:
        mask = g >= lv
        sorted_ge = np.sort(s[mask])
        cur = g == lv
        below_ge = np.searchsorted(sorted_ge, s[cur], side="left")
        tied_ge = np.searchsorted(sorted_ge, s[cur], side="right") - below_ge
        correct += int((below_all[cur] - below_ge).sum())
        ties += int((tied_all[cur] - tied_ge).sum())
        total += int(cur.sum()) * int((g < lv).sum())
    correct += ties / 2
    return (correct / total if total else float("nan")), total


# --------------------------------------------------------------------------- classification
def error_rate(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Fraction of wrongly predicted labels (a non-finite or missing one is an error)."""
    return float(np.mean(labels(y_true) != labels(y_pred, "predictions")))


def vote_error_rate(y_true: np.ndarray, y_pred: np.ndarray, groups: np.ndarray) -> float:
    """Error rate after a majority vote within each group (e.g. a tracking sequence).

    Yan et al.'s baseline (Section 4.3): "each image is predicted independently and for each
    sequence the majority label is predicted" for all its images. An item counts as right when its
    true label has strictly more votes in its group than any other label; a vote tied between t
    labels, the true one among them, is right with probability 1 / t (the module's tie rule).
    """
    y_true, y_pred = labels(y_true), labels(y_pred, "predictions")
    g = np.unique(np.asarray(groups), return_inverse=True)[1].ravel()
    lab = np.unique(np.r_[y_true, y_pred], return_inverse=True)[1].ravel()
    true, pred = lab[: len(y_true)], lab[len(y_true):]
    votes = np.zeros((g.max() + 1, lab.max() + 1), dtype=np.intp)
    np.add.at(votes, (g, pred), 1)
    top = votes.max(axis=1)
    n_top = (votes == top[:, None]).sum(axis=1)
    right = (votes[g, true] == top[g]) / n_top[g]
    return float(1.0 - right.mean())

"""The video classification protocol (Yan et al. Sections 4.2-4.3): splits by time, the three
constraint strategies, each checked against a direct computation on a tiny generated tracking set."""

import json
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from protocol_helpers import Recorder

from rankbench import metrics
from rankbench.datasets.base import Dataset
from rankbench.errors import ConfigError, DataError
from rankbench.protocols.video_classification import (
    overlapping_sequences,
    sequence_ambiguity,
    sequence_table,
    split_counts,
)
from rankbench.rankers.base import Classifier, LossDecoder
from rankbench.rankers.logistic.klr import KernelLogisticRegression
from rankbench.records import TrialSplit
from rankbench.registry import datasets, features, protocols, rankers
from rankbench.utils.meter import Meter

PEOPLE = {10: 0, 20: 50, 30: 100}  # identity (= track): frame of its first crop


def tiny(seed=0, n_seq=4, per_seq=3):
    """3 people, each ``n_seq`` sequences of ``per_seq`` crops 9 frames apart, a sequence every 30
    frames; people overlap in time. Sequence ids are shuffled (the protocol must order by frame)."""
    rng = np.random.default_rng(seed)
    rows = []
    for who, start in PEOPLE.items():
        for k in range(n_seq):
            for j in range(per_seq):
                rows.append((who, start + 30 * k + 9 * j, (who, k)))
    ident, frame, key = zip(*rows)
    keys = sorted(set(key))
    perm = rng.permutation(len(keys))
    seq = np.array([perm[keys.index(k)] for k in key])
    items = pd.DataFrame({"id": [f"{i}_{f}" for i, f in zip(ident, frame)], "identity": ident, "frame": frame,
                          "sequence": seq, "group": ident})
    centre = {10: [0.0, 0.0], 20: [1.5, 0.0], 30: [0.0, 1.5]}
    X = np.array([centre[i] for i in ident]) + 0.3 * rng.normal(size=(len(ident), 2)) \
        + 0.5 * rng.normal(size=(len(keys), 2))[seq]
    return X, Dataset(name="tiny", items=items, arrays={})


def build(**params):
    return protocols.build("video_classification", params)


def seqs_of(ds, rows):
    return set(ds.items.sequence.to_numpy()[np.asarray(rows, int)].tolist())


def span(ds):
    g = ds.items.groupby("sequence").frame
    return g.min().to_dict(), g.max().to_dict(), ds.items.groupby("sequence").identity.first().to_dict()


# ------------------------------------------------------------------------------ splits
def test_per_class_split_is_by_time_whole_sequences_and_seeded():
    X, ds = tiny()
    p = build()
    p.check_dataset(ds)
    first, _, who = span(ds)
    training_sets = set()
    for seed in range(12):
        sp = p.split(ds, np.random.default_rng(seed))
        assert sp == p.split(ds, np.random.default_rng(seed))
        assert sorted(sp["train"] + sp["test"]) == list(range(len(ds)))
        tr, te = seqs_of(ds, sp["train"]), seqs_of(ds, sp["test"])
        assert not tr & te and tr == set(sp["train_sequences"])  # whole sequences
        for person in PEOPLE:
            mine = sorted((first[s], s) for s in who if who[s] == person)
            earliest_two = {s for _, s in mine[:2]}  # first set: half of 4, by time
            picked = {s for s in tr if who[s] == person}
            assert len(picked) == 1 and picked <= earliest_two  # half of 2 drawn at random
        training_sets.add(tuple(sorted(tr)))
        assert sp["constraints"] == [] and sp["means"] == []
    assert len(training_sets) > 1



def test_a_split_draws_the_same_sequences_whether_identities_are_numbers_or_text():
    """Identities 9, 10, 100 read back as text ('10' sorts before '9'): before, the same seed drew
    other sequences."""
    X, ds = tiny()
    relabel = {10: 9, 20: 10, 30: 100}
    as_int = ds.items.assign(identity=ds.items.identity.map(relabel), group=ds.items.identity.map(relabel))
    as_text = as_int.assign(identity=as_int.identity.astype(str), group=as_int.group.astype(str))
    p = build()
    for seed in range(6):
        got = [p.split(Dataset(name="tiny", items=items, arrays={}), np.random.default_rng(seed))["train_sequences"]
               for items in (as_int, as_text)]
        assert got[0] == got[1]

def test_global_split_cuts_all_sequences_at_one_moment():
    X, ds = tiny()
    first, _, who = span(ds)
    with pytest.raises(ConfigError, match="temporal_split.*identity 30"):
        build(temporal_split="global").check_dataset(ds)  # the first 6 of 12 hold no sequence of 30
    ds.items["identity"] = ds.items["identity"].map(lambda i: f"P{i}").astype(object)  # a table's text ids
    with pytest.raises(ConfigError, match="temporal_split.*identity 'P30'"):  # was AttributeError: no .item()
        build(temporal_split="global").check_dataset(ds)
    # numbers as text, in their order by number ('100' sorts before '9' as text): the late one named
    ds.items["identity"] = ds.items["identity"].map({"P10": "9", "P20": "10", "P30": "100"})
    with pytest.raises(ConfigError, match="temporal_split.*identity '100'"):
        build(temporal_split="global").check_dataset(ds)
    ds.items["identity"] = ds.items["identity"].map({"9": "P10", "10": "P20", "100": "P30"})
    ds.items["identity"] = ds.items["identity"].str[1:].astype(int)
    p = build(temporal_split="global", first_fraction=0.75)
    p.check_dataset(ds)
    by_time = [s for _, s in sorted((f, s) for s, f in first.items())]
    first_set = set(by_time[:9])
    sp = p.split(ds, np.random.default_rng(3))
    tr = seqs_of(ds, sp["train"])
    assert tr <= first_set
    per_person = Counter(who[s] for s in tr)
    in_first = Counter(who[s] for s in first_set)  # 10: 4, 20: 3, 30: 2 -> 2, 2, 1 training sequences
    assert per_person == {k: int(np.floor(v / 2 + 0.5)) for k, v in in_first.items()}


def test_split_counts_round_half_up_with_at_least_one():
    seqs = pd.DataFrame({"cls": [0] * 5 + [1] * 1, "first": [0, 10, 20, 30, 40, 5], "n": 1},
                        index=pd.Index(range(6), name="sequence"))
    first, n_train = split_counts(seqs, 0.5, 0.5, "per_class")
    assert first.tolist() == [True, True, True, False, False, True]  # 2.5 -> 3 of class 0; 1 of class 1
    assert n_train.tolist() == [2, 1]  # 1.5 -> 2; 0.5 -> 1


def test_global_cuts_at_one_moment_and_the_covering_cut_waits_for_every_class():
    # class 1 first appears at time 35, after 3 of the 6 sequences: a global cut at half leaves it out
    seqs = pd.DataFrame({"cls": [0, 0, 0, 1, 0, 1], "first": [0, 10, 20, 35, 30, 50], "n": 1},
                        index=pd.Index(range(6), name="sequence"))
    first, n_train = split_counts(seqs, 0.5, 0.5, "global")
    assert first.tolist() == [True, True, True, False, False, False] and n_train.tolist() == [2, 0]
    first, n_train = split_counts(seqs, 0.5, 0.5, "global_covering")
    assert first.tolist() == [True, True, True, True, True, False]  # up to time 35: 30 comes first
    assert n_train.tolist() == [2, 1]


# ------------------------------------------------------------------------------ Eq. 12
class LinearScores(Classifier, LossDecoder):
    """A stand-in selector: decision_function(X) = X @ W, fixed (fit ignores the data)."""

    W = np.array([[1.0, -2.0, 0.5], [0.3, 1.0, -1.5]])

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def decision_function(self, X):
        return X @ self.W

    def predict(self, X):
        return np.argmax(self.decision_function(X), axis=1)


def hand_ambiguity(F, seq):
    """Eq. 12 over a sequence, by loops: min_r mean_x sum_s log(1 + exp(-m_rs f_s(x)))."""
    out = {}
    for s in np.unique(seq):
        rows = np.flatnonzero(seq == s)
        best = np.inf
        for r in range(F.shape[1]):
            loss = 0.0
            for i in rows:
                for t in range(F.shape[1]):
                    m = 1.0 if r == t else -1.0
                    loss += np.log(1.0 + np.exp(-m * F[i, t]))
            best = min(best, loss / len(rows))
        out[int(s)] = best
    return out


def test_sequence_ambiguity_is_eq12_by_hand():
    """a(G) = min_r mean_{x in G} loss_r(x), checked by loops over sequences and classes."""
    rng = np.random.default_rng(0)
    losses = rng.exponential(size=(17, 3))
    seq = rng.integers(0, 5, 17)
    ids, a = sequence_ambiguity(losses, seq)
    hand = {int(s): min(sum(losses[i, r] for i in range(17) if seq[i] == s) / np.sum(seq == s) for r in range(3))
            for s in np.unique(seq)}
    assert ids.tolist() == sorted(hand) and a == pytest.approx([hand[i] for i in ids.tolist()], rel=1e-12)
    # over a selector's own decoding losses (LossDecoder): eq. 12 by hand over its outputs
    F = rng.normal(0, 2, (17, 3))
    ids, a = sequence_ambiguity(Margins().decoding_losses(F), seq)
    hand = hand_ambiguity(F, seq)
    assert a == pytest.approx([hand[i] for i in ids.tolist()], rel=1e-12)
    # two classes: one output, class 1 positive; the loss of class r is log(1 + exp(-(+-1) f))
    f = rng.normal(size=6)
    _, a2 = sequence_ambiguity(Margins().decoding_losses(f), np.zeros(6, int))
    assert a2[0] == pytest.approx(min(np.mean(np.log1p(np.exp(f))), np.mean(np.log1p(np.exp(-f)))))


class Margins(LossDecoder):
    """Decoding losses of given margins: decision_function(F) = F."""

    def decision_function(self, X):
        return X


def constrained(strategy, k, seed=1, selector=None):
    X, ds = tiny()
    p = build(strategy=strategy, n_constraints=k)
    p.check_dataset(ds)
    if selector is None:
        return X, ds, p.split(ds, np.random.default_rng(seed), features={"f": X})
    sp = build().split(ds, np.random.default_rng(seed))  # the same training set; constraints from the stub
    is_train = np.zeros(len(ds), bool)
    is_train[sp["train"]] = True
    sp.update(p.constraints(X, ds.items, sequence_table(ds.items), is_train, np.array(sp["train_sequences"]),
                            selector))
    return X, ds, sp


def test_selected_sequences_are_the_most_ambiguous_test_sequences():
    X, ds, sp = constrained("temporal", 4, selector=LinearScores())
    test = np.array(sp["test"])
    hand = hand_ambiguity(X[test] @ LinearScores.W, ds.items.sequence.to_numpy()[test])
    ranked = sorted(hand, key=lambda s: (-hand[s], s))
    assert sp["selected"] == ranked[:4]
    # with the default selector (KLR, lambda 0.001, rho by cross-validation over whole training
    # sequences) the ranking of its own outputs
    X, ds, sp = constrained("temporal", 5)
    tr, test = np.array(sp["train"]), np.array(sp["test"])
    codes = np.unique(ds.items.identity, return_inverse=True)[1]
    seq = ds.items.sequence.to_numpy()
    F = KernelLogisticRegression().fit(X[tr], codes[tr], groups=seq[tr]).decision_function(X[test])
    hand = hand_ambiguity(F, ds.items.sequence.to_numpy()[test])
    assert sp["selected"] == sorted(hand, key=lambda s: (-hand[s], s))[:5]


def centroid_rows(sp, n, end):
    """The item rows behind one constraint end: itself, or the rows of its mean."""
    return [end] if end < n else sp["means"][end - n]


def test_temporal_constraints_tie_each_image_of_a_selected_sequence_to_its_centroid():
    X, ds, sp = constrained("temporal", 3)
    n, seq = len(ds), ds.items.sequence.to_numpy()
    C = np.array(sp["constraints"])
    kinds = np.array(sp["kinds"])
    T = C[kinds == "temporal"]
    assert (T[:, 2] == 1).all() and (T[:, 0] < n).all() and (T[:, 1] >= n).all()
    for s in sp["selected"]:
        rows = np.flatnonzero(seq == s)
        mine = T[np.isin(T[:, 0], rows)]
        assert sorted(mine[:, 0]) == rows.tolist()
        assert len(set(mine[:, 1])) == 1 and centroid_rows(sp, n, mine[0, 1]) == rows.tolist()
    assert len(T) == sum((seq == s).sum() for s in sp["selected"])
    assert "active" not in kinds


def brute_overlaps(ds):
    first, last, who = span(ds)
    return {(a, b) for a in first for b in first
            if a < b and who[a] != who[b] and max(first[a], first[b]) <= min(last[a], last[b])}


def test_overlapping_sequences_by_brute_force():
    X, ds = tiny()
    it = ds.items
    got = overlapping_sequences(sequence_table(it))
    assert {tuple(p) for p in got.tolist()} == brute_overlaps(ds) and len(got) == len(brute_overlaps(ds)) > 0
    one = it[it.identity == 10]
    assert overlapping_sequences(sequence_table(one)).shape == (0, 2)


def test_negative_constraints_join_selected_sequences_with_every_overlapping_one():
    X, ds, sp = constrained("both", 3)
    n, seq = len(ds), ds.items.sequence.to_numpy()
    C, kinds = np.array(sp["constraints"]), np.array(sp["kinds"])
    N = C[kinds == "negative"]
    assert (N[:, 2] == 0).all() and (N[:, :2] >= n).all()

    def seq_of_mean(end):
        return int(np.unique(seq[centroid_rows(sp, n, end)])[0])

    got = {tuple(sorted((seq_of_mean(a), seq_of_mean(b)))) for a, b, _ in N}
    want = {p for p in brute_overlaps(ds) if p[0] in sp["selected"] or p[1] in sp["selected"]}
    assert got == want and len(N) == len(want) > 0


def test_active_constraints_pair_with_the_nearest_training_sequence_in_kernel_distance():
    X, ds, sp = constrained("active", 5)
    n, seq = len(ds), ds.items.sequence.to_numpy()
    who = ds.items.identity.to_numpy()
    C, kinds = np.array(sp["constraints"]), np.array(sp["kinds"])
    assert set(kinds) == {"active"} and len(C) == 5
    rho = 0.08

    def k(a, b):
        return np.exp(-rho * np.sum((a - b) ** 2))

    for (a, b, same), s in zip(C, sp["selected"]):
        assert centroid_rows(sp, n, a) == np.flatnonzero(seq == s).tolist()
        mu = X[seq == s].mean(0)
        dist = {t: k(mu, mu) + k(X[seq == t].mean(0), X[seq == t].mean(0)) - 2 * k(mu, X[seq == t].mean(0))
                for t in sp["train_sequences"]}
        nearest = min(dist, key=dist.get)
        assert centroid_rows(sp, n, b) == np.flatnonzero(seq == nearest).tolist()
        assert same == int(who[seq == s][0] == who[seq == nearest][0])  # the simulated user's answer


def test_both_is_temporal_and_negative_plus_active_and_selection_is_nested():
    _, _, t = constrained("temporal", 4)
    _, _, a = constrained("active", 4)
    _, _, b = constrained("both", 4)
    assert t["selected"] == a["selected"] == b["selected"]
    assert Counter(b["kinds"]) == Counter(t["kinds"]) + Counter(a["kinds"])
    _, _, small = constrained("both", 2)
    assert small["selected"] == b["selected"][:2] and small["train"] == b["train"]


def test_settings_sharing_a_trials_training_rows_fit_the_selector_once(tmp_path, monkeypatch):
    X, ds = tiny()
    calls = []
    real = KernelLogisticRegression.decoding_losses
    monkeypatch.setattr(KernelLogisticRegression, "decoding_losses", lambda self, Z: calls.append(1) or real(self, Z))

    def splits(cache, seed=1):
        monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / cache))
        return [build(strategy=s, n_constraints=k).split(ds, np.random.default_rng(seed), features={"f": X})
                for s, k in (("temporal", 2), ("active", 3), ("both", 4))]

    shared = splits("shared")
    assert len(calls) == 1                                   # one fit for the three settings of the trial
    fresh = [splits(f"fresh{i}")[i] for i in range(3)]        # each setting in an empty cache
    assert fresh == shared and len(calls) == 4
    splits("shared", seed=2)                                 # another trial's training rows: fitted again
    assert len(calls) == 5


# ------------------------------------------------------------------------------ evaluate
def test_centroids_reach_the_ranker_as_mean_rows_and_vote_error_is_reported():
    X, ds, sp = constrained("both", 3)
    rec = Recorder()
    res = build().evaluate(lambda: rec, X, ds, TrialSplit.drawn(sp), Meter(measure_memory=False))
    n, n_lab = len(ds), len(sp["train"])
    assert (rec.X[:n_lab] == X[sp["train"]]).all() and (rec.y[n_lab:] == -1).all()
    for (a, b, same), (i, j, s2) in zip(sp["constraints"], rec.constraints):
        for end, pos in ((a, i), (b, j)):
            assert rec.X[pos] == pytest.approx(X[centroid_rows(sp, n, end)].mean(0))
        assert same == s2
    codes = np.unique(ds.items.identity, return_inverse=True)[1]
    test = np.array(sp["test"])
    assert res.metrics["error_rate"] == pytest.approx(np.mean(codes[test] != 0))
    assert res.metrics["vote_error_rate"] == pytest.approx(np.mean(codes[test] != 0))  # a constant vote
    assert res.extra["n_selected"] == 3 and res.extra["constraint_kinds"]["active"] == 3
    # pairs of sequences, as Figure 6 counts them: 3 temporal (one per selected sequence, however
    # many images), every negative one, 3 active
    kinds = res.extra["constraint_kinds"]
    assert res.extra["n_pairs"] == 3 + kinds.get("negative", 0) + 3 < res.extra["n_constraints"]


class GroupRecorder(Recorder):
    """A classifier that takes ``groups`` (as one choosing its own hyper-parameters does)."""

    def fit(self, X, y, constraints=None, groups=None):
        self.groups = groups
        return super().fit(X, y, constraints)


def test_a_classifier_that_takes_groups_gets_each_row_s_sequence():
    X, ds, sp = constrained("both", 3)
    rec = GroupRecorder()
    build().evaluate(lambda: rec, X, ds, TrialSplit.drawn(sp), Meter(measure_memory=False))
    seq = ds.items["sequence"].to_numpy()
    n_lab = len(sp["train"])
    assert rec.groups.tolist()[:n_lab] == seq[sp["train"]].tolist()
    assert len(rec.groups) == len(rec.y) and (rec.groups[n_lab:][rec.y[n_lab:] == -1] >= -1).all()
    plain = Recorder()                                    # one that does not take them gets none
    build().evaluate(lambda: plain, X, ds, TrialSplit.drawn(sp), Meter(measure_memory=False))
    assert not hasattr(plain, "groups")


def test_vote_error_rate_brute_force():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 60)
    g = rng.integers(0, 9, 60)
    pred = rng.integers(0, 3, 60)
    wrong = 0
    for i in range(60):
        votes = Counter(pred[g == g[i]]).most_common()
        top = [lab for lab, c in votes if c == votes[0][1]]
        wrong += 1 - (y[i] in top) / len(top)            # a tied vote: each top label equally likely
    assert metrics.vote_error_rate(y, pred, g) == pytest.approx(wrong / 60)
    assert metrics.vote_error_rate(["a", "a", "b"], ["a", "b", "b"], [1, 1, 2]) == pytest.approx(1 / 3)  # tie


# ------------------------------------------------------------------------------ errors
def test_mistakes_are_one_line_errors():
    X, ds = tiny()
    with pytest.raises(ConfigError, match=r"protocol.n_constraints: expected at most 9 .*got 10"):
        build(n_constraints=10).check_dataset(ds)
    with pytest.raises(ConfigError, match=r"protocol.selector.ranker: expected a classifier with decoding_losses"):
        build(n_constraints=2, selector={"ranker": "l1"}).check_dataset(ds)
    with pytest.raises(ConfigError, match=r"protocol.selector.rho: expected a number > 0"):
        build(n_constraints=2, selector={"rho": -1.0}).check_dataset(ds)
    with pytest.raises(ConfigError, match=r"protocol.selector.features: expected the feature set"):
        build(n_constraints=2).check_features(["a", "b"])
    with pytest.raises(ConfigError, match=r"protocol.selector.features: expected one of a, b, got 'c'"):
        build(n_constraints=2, selector={"features": "c"}).check_features(["a", "b"])
    build(n_constraints=2, selector={"features": "b"}).check_features(["a", "b"])
    with pytest.raises(DataError, match="no 'sequence' column"):
        build().check_dataset(Dataset(name="x", items=ds.items.drop(columns="sequence")))
    bad = ds.items.copy()
    bad.loc[0, "identity"] = 30 if bad.identity[0] != 30 else 10
    with pytest.raises(DataError, match=r"dataset 'x': track 10 shows several identities \(('10', '30'|'30', '10')\); "
                                        "expected one person per track"):
        build().check_dataset(Dataset(name="x", items=bad))


def test_two_tracks_of_one_person_at_one_time_are_refused_where_negatives_are_drawn():
    # the negative constraints take sequences on screen together for different people
    X, ds = tiny()
    it = ds.items
    twin = it[it.identity == 10].assign(group=99, id=lambda d: d.id + "b", sequence=lambda d: d.sequence + 100)
    two = Dataset(name="x", items=pd.concat([it, twin], ignore_index=True))
    with pytest.raises(DataError, match=r"tracks (10 and 99|99 and 10) of identity '10' overlap in time \(frames"):
        build(n_constraints=2).check_dataset(two)
    build(n_constraints=2, strategy="active").check_dataset(two)   # draws no negative constraint
    build().check_dataset(two)


def test_a_run_records_the_constraints_in_splits_json(tmp_path, monkeypatch):
    """End to end through the engine: features reach the split, every method the same constraints."""
    from rankbench import app

    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "cache"))
    import cv2

    folder = tmp_path / "dump"
    folder.mkdir()
    X, ds = tiny()
    colour = {10: (200, 30, 30), 20: (30, 200, 30), 30: (30, 30, 200)}
    noise = np.random.default_rng(0)
    for who, f in zip(ds.items.identity, ds.items.frame):
        img = np.clip(np.array(colour[who]) + noise.normal(0, 40, (12, 6, 3)), 0, 255).astype(np.uint8)
        cv2.imwrite(str(folder / f"{who}_{f}.jpg"), img)
    cfg = tmp_path / "video.yaml"
    cfg.write_text(f"""
dataset: {{name: tracks, root: {folder}, max_gap: 18, sequence_length: 3}}
features: [{{name: hsv, extractor: hsv_hist}}]
protocol: {{name: video_classification, n_constraints: 3, strategy: both}}
trials: 2
rankers:
  - {{name: PKLR, ranker: pklr}}
  - {{name: KLR, ranker: kernel_logreg}}
""")
    out = tmp_path / "run"
    app.run(cfg, out=out, options=app.EngineOptions(progress=False))
    splits = json.loads((out / "splits.json").read_text())["settings"][0]["trials"]
    assert all(len(s["selected"]) == 3 and "active" in s["kinds"] and s["means"] for s in splits)
    recs = [json.loads(p.read_text()) for p in (out / "trials").glob("*.json")]
    assert {r["method"] for r in recs} == {"PKLR", "KLR"}
    for r in recs:
        assert r["extra"]["constraints_used"] == (r["method"] == "PKLR")
        assert r["extra"]["n_constraints"] == len(splits[r["trial"]]["constraints"])
        assert {"error_rate", "vote_error_rate"} <= set(r["metrics"])


def test_validate_names_the_file_for_a_protocol_mistake(tmp_path):
    from rankbench import app

    cfg = tmp_path / "bad.yaml"
    cfg.write_text("""
dataset: {name: two_spirals}
features: [{name: a, extractor: array}, {name: b, extractor: array}]
protocol: {name: classification, n_train_per_class: 500}
rankers: [{name: KLR, ranker: kernel_logreg}]
""")
    with pytest.raises(ConfigError, match=rf"^{cfg}: protocol.n_train_per_class: 500 asked for, but class 0 has"):
        app.validate(cfg)


# ------------------------------------------------------------------------------ real data
@pytest.mark.realdata
def test_real_towncentre_six_people(shared_data):
    """Town Centre's 6 people with most crops (the paper's single-day setting: 63 sequences,
    363 images): 69 sequences / 507 crops; 21 training sequences; constraints from 20 sequences."""
    ds = datasets.build("towncentre", {"top_k": 6}).load(str(shared_data))
    X = features.build("hsv_hist", {}).extract(ds)
    p = build(n_constraints=20, strategy="both")
    p.check_dataset(ds)
    first, last, who = span(ds)
    errs = {"pklr": [], "kernel_logreg": []}
    for seed in range(3):
        sp = p.split(ds, np.random.default_rng(seed), features={"hsv": X})
        tr, te = seqs_of(ds, sp["train"]), seqs_of(ds, sp["test"])
        assert len(tr) == 21 and len(tr) + len(te) == 69
        for person in set(who.values()):  # training precedes the second half of each person's track
            mine = sorted(first[s] for s in who if who[s] == person)
            cut = mine[int(np.floor(len(mine) / 2 + 0.5)) - 1]
            assert all(first[s] <= cut for s in tr if who[s] == person)
        kinds = Counter(sp["kinds"])
        assert len(sp["selected"]) == 20 and kinds["active"] == 20 and kinds["negative"] > 0
        assert set(sp["selected"]) <= te
        for name in errs:
            res = p.evaluate(lambda: rankers.build(name, {}), X, ds, TrialSplit.drawn(sp), Meter(measure_memory=False))
            errs[name].append(res.metrics["error_rate"])
    assert np.mean(errs["pklr"]) < np.mean(errs["kernel_logreg"])

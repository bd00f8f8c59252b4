"""The reid protocol as the benchmarks run it: gallery distractors, junk, single- and multi-shot,
fixed splits (a split file, a split column); the defaults draw as before.

Oracles: the documented draw of the default protocol written out step by step, and torchreid's
``eval_market1501`` re-implemented here from its published algorithm (argsort of distances, the
probe's own identity seen by its own camera removed, CMC from the first match, AP over all).
"""

import json

import numpy as np
import pandas as pd
import pytest
import yaml

from rankbench import app
from rankbench.datasets.base import Dataset
from rankbench.errors import ConfigError, DataError, ParameterError
from rankbench.protocols.reid import ReIdentification
from rankbench.rankers.baselines.template import L1Norm
from rankbench.records import TrialSplit
from rankbench.registry import protocols
from rankbench.utils.meter import Meter


# ----------------------------------------------------------------------------- generated sets
def viper_like(n=30):
    rows = [{"id": f"{c}/{p:03d}", "identity": f"{p:03d}", "cam": c} for c in "ab" for p in range(n)]
    return Dataset("viper-like", pd.DataFrame(rows))


def grid_like(n_pairs=12, n_gallery_only=7, n_probe_only=3, shots=1):
    """People in both cameras, people seen by the gallery camera (b) only, by the probe camera only;
    ``shots`` images per person and camera; plus Market-style junk (-1) and distractor (0000) images."""
    rows = []
    for p in range(n_pairs + n_gallery_only + n_probe_only):
        cams = "ab" if p < n_pairs else "b" if p < n_pairs + n_gallery_only else "a"
        rows += [{"id": f"{p:03d}_{c}{k}", "identity": f"{p:03d}", "cam": c} for c in cams for k in range(shots)]
    rows += [{"id": f"junk{k}", "identity": "-1", "cam": "ab"[k % 2]} for k in range(4)]
    rows += [{"id": f"dis{k}", "identity": "0000", "cam": "ab"[k % 2]} for k in range(5)]
    return Dataset("grid-like", pd.DataFrame(rows))


def build(**params):
    return protocols.build("reid", params, "protocol")


def torchreid_eval(S, q_pids, g_pids, q_cams, g_cams):
    """torchreid's eval_market1501 on a similarity (its distmat = -S): (CMC curve, mAP, valid probes)."""
    indices = np.argsort(-S, axis=1, kind="stable")
    matches = (g_pids[indices] == q_pids[:, None]).astype(np.int32)
    all_cmc, all_ap = [], []
    for q in range(len(q_pids)):
        order = indices[q]
        keep = ~((g_pids[order] == q_pids[q]) & (g_cams[order] == q_cams[q]))
        raw = matches[q][keep]
        if not raw.any():
            continue
        cmc = raw.cumsum()
        cmc[cmc > 1] = 1
        all_cmc.append(np.r_[cmc, np.ones(len(g_pids) - len(cmc))])
        precision = raw.cumsum() / np.arange(1, len(raw) + 1)
        all_ap.append((precision * raw).sum() / raw.sum())
    return np.mean(all_cmc, axis=0), float(np.mean(all_ap)), len(all_ap)


# ----------------------------------------------------------------------------- the defaults
def test_defaults_draw_as_the_documented_procedure_and_score_like_torchreid():
    """A VIPeR-like set with the defaults: n_test people drawn by one permutation of the sorted people,
    their camera-a images the probes and camera-b images the gallery, the others train; the numbers
    are torchreid's."""
    ds = viper_like(30)
    X = np.random.default_rng(3).normal(size=(60, 6))
    ids, cams = ds.column("identity"), ds.column("cam")
    for seed in range(4):
        proto = ReIdentification(n_test=12)
        proto.check_dataset(ds)
        sp = proto.split(ds, np.random.default_rng(seed))
        people = np.array(sorted(set(ids)))
        test = people[np.random.default_rng(seed).permutation(len(people))[:12]]
        assert sp["probe"] == [i for i in range(60) if ids[i] in test and cams[i] == "a"]
        assert sp["gallery"] == [i for i in range(60) if ids[i] in test and cams[i] == "b"]
        assert sp["train"] == [i for i in range(60) if ids[i] not in test]
        res = proto.evaluate(L1Norm, X, ds, TrialSplit.drawn(sp), Meter())
        p, g = np.array(sp["probe"]), np.array(sp["gallery"])
        S = -np.abs(X[p][:, None, :] - X[g][None, :, :]).sum(-1)
        cmc, mAP, _ = torchreid_eval(S, ids[p], ids[g], cams[p], cams[g])
        assert [res.metrics[f"cmc@{r}"] for r in (1, 5, 10)] == pytest.approx([cmc[0], cmc[4], cmc[9]], abs=1e-12)
        assert res.metrics["map"] == pytest.approx(mAP, abs=1e-12)
        assert sorted(k for k in res.metrics if k.startswith("cmc@")) == ["cmc@1", "cmc@10", "cmc@5"]


def test_one_random_defaults_draw_one_gallery_image_per_person_in_a_fixed_order_of_draws():
    counts = [4, 2, 3, 1, 5, 2, 2, 3, 4, 2]
    ids = np.repeat([f"{p:02d}" for p in range(len(counts))], counts)
    ds = Dataset("ilids-like", pd.DataFrame({"id": [str(i) for i in range(len(ids))], "identity": ids}))
    sp = ReIdentification(n_test=4, gallery="one_random").split(ds, np.random.default_rng(7))
    rng = np.random.default_rng(7)
    people = np.array([p for p in sorted(set(ids)) if (ids == p).sum() >= 2])
    test = people[rng.permutation(len(people))[:4]]
    gal, probe = [], []
    for p in test:
        rows = rng.permutation(np.flatnonzero(ids == p))
        gal.append(rows[0])
        probe += list(rows[1:])
    assert sp["gallery"] == sorted(gal) and sp["probe"] == sorted(probe)


# ----------------------------------------------------------------------------- distractors
@pytest.mark.parametrize("shots", [1, 3])
def test_unpaired_distractors_join_every_gallery_at_exactly_the_expected_size(shots):
    ds = grid_like(shots=shots)
    proto = build(n_test=5, distractors="unpaired", junk=["-1", "0000"])
    proto.check_dataset(ds)
    ids, cams = ds.column("identity"), ds.column("cam")
    only_b = {f"{p:03d}" for p in range(12, 19)}
    for seed in range(3):
        sp = proto.split(ds, np.random.default_rng(seed))
        gal = np.array(sp["gallery"])
        assert len(gal) == 5 * shots + 7 * shots                      # test people's + the 7 gallery-only people's
        assert set(ids[gal]) - set(ids[sp["probe"]]) == only_b and set(cams[gal]) == {"b"}
        assert not only_b & set(ids[sp["train"]])                     # never trained on
        assert not {f"{p:03d}" for p in range(19, 22)} & set(ids[np.r_[sp["train"], sp["probe"], gal]].tolist())
    # single-shot: one image of each gallery-only person too, drawn per trial
    one = build(n_test=5, distractors="unpaired", junk=["-1", "0000"], probe_shots=1, gallery_shots=1)
    sp = one.split(ds, np.random.default_rng(0))
    assert len(sp["gallery"]) == 5 + 7 and len(sp["probe"]) == 5


def test_labelled_distractors_join_every_gallery_and_junk_never_appears():
    ds = grid_like(shots=2)
    ids = ds.column("identity")
    for params in ({"gallery": "cam"}, {"gallery": "one_random"}, {"gallery": "pair"},
                   {"gallery": "cam", "probe_shots": 1, "gallery_shots": 1}):
        proto = build(n_test=4, distractors=["0000"], junk=["-1"], **params)
        proto.check_dataset(ds)
        for seed in range(3):
            sp = proto.split(ds, np.random.default_rng(seed))
            every = np.r_[sp["train"], sp["probe"], sp["gallery"]].astype(int)
            assert "-1" not in set(ids[every])                         # junk: nowhere
            assert (ids[sp["gallery"]] == "0000").sum() == 5             # every distractor image, every trial
            assert "0000" not in set(ids[sp["train"]]) | set(ids[sp["probe"]])


def test_a_distractor_ranked_above_the_true_match_costs_exactly_one_rank_and_half_the_ap():
    """Five test people on a line, each probe identical to its gallery image, except probe 0, whose
    true match is 0.3 away and a distractor 0.1 away: probe 0 is matched at rank 2 (CMC@1 = 4 / 5)
    and its AP is 1 / 2 (mAP = (4 + 1/2) / 5); without the distractor every probe is at rank 1."""
    rows = [{"id": f"{p}{c}", "identity": str(p), "cam": c} for p in range(8) for c in "ab"]
    rows.append({"id": "d", "identity": "0000", "cam": "b"})
    ds = Dataset("line", pd.DataFrame(rows))
    x = np.array([10.0 * int(r["identity"]) for r in rows[:-1]] + [0.0])
    X = x[:, None]
    proto = build(n_test=5, distractors=["0000"], ranks=[1, 2])
    sp = proto.split(ds, np.random.default_rng(0))
    test = sorted({rows[i]["identity"] for i in sp["probe"]})
    p0 = test[0]
    X[[i for i, r in enumerate(rows) if r["identity"] == p0 and r["cam"] == "b"][0]] += 0.3
    X[-1] = X[[i for i, r in enumerate(rows) if r["identity"] == p0 and r["cam"] == "a"][0]] + 0.1
    res = proto.evaluate(L1Norm, X, ds, TrialSplit.drawn(sp), Meter())
    assert res.metrics["cmc@1"] == 4 / 5 and res.metrics["cmc@2"] == 1.0
    assert res.metrics["map"] == pytest.approx((4 + 0.5) / 5, abs=1e-15)
    ids, cams, p, g = ds.column("identity"), ds.column("cam"), np.array(sp["probe"]), np.array(sp["gallery"])
    cmc, mAP, _ = torchreid_eval(-np.abs(X[p] - X[g].T), ids[p], ids[g], cams[p], cams[g])
    assert (cmc[0], cmc[1], mAP) == pytest.approx((4 / 5, 1.0, 4.5 / 5), abs=1e-12)
    fewer = TrialSplit.drawn({**sp, "gallery": sp["gallery"][:-1]})
    plain = build(n_test=5, ranks=[1, 2]).evaluate(L1Norm, X, ds, fewer, Meter())
    assert plain.metrics["cmc@1"] == 1.0 and plain.metrics["map"] == 1.0


@pytest.mark.parametrize("seed", range(3))
def test_multi_shot_with_distractors_scores_as_torchreid(seed):
    """Several images per person and camera, gallery-only people and labelled distractors: CMC and
    mAP over every probe image against torchreid's algorithm."""
    ds = grid_like(n_pairs=14, n_gallery_only=6, shots=3)
    X = np.random.default_rng(seed).normal(size=(len(ds), 4))
    proto = build(n_test=8, distractors="unpaired", junk=["-1", "0000"], ranks=[1, 3, 10])
    sp = proto.split(ds, np.random.default_rng(seed))
    res = proto.evaluate(L1Norm, X, ds, TrialSplit.drawn(sp), Meter())
    ids, cams, p, g = ds.column("identity"), ds.column("cam"), np.array(sp["probe"]), np.array(sp["gallery"])
    assert len(p) == 8 * 3 and len(g) == 8 * 3 + 6 * 3
    S = -np.abs(X[p][:, None, :] - X[g][None, :, :]).sum(-1)
    cmc, mAP, n_valid = torchreid_eval(S, ids[p], ids[g], cams[p], cams[g])
    assert n_valid == len(p)
    assert [res.metrics[f"cmc@{r}"] for r in (1, 3, 10)] == pytest.approx([cmc[0], cmc[2], cmc[9]], abs=1e-12)
    assert res.metrics["map"] == pytest.approx(mAP, abs=1e-12)
    assert res.curves["cmc"] == pytest.approx(cmc.tolist(), abs=1e-12)


# ----------------------------------------------------------------------------- shots
def test_shots_draw_per_person_and_camera_per_trial_and_are_seeded():
    ds = grid_like(n_pairs=10, n_gallery_only=0, n_probe_only=0, shots=4)
    ids, cams = ds.column("identity"), ds.column("cam")
    proto = build(n_test=6, probe_shots=1, gallery_shots=2, junk=["-1", "0000"])
    splits = [proto.split(ds, np.random.default_rng(s)) for s in (0, 1, 0)]
    assert splits[0] == splits[2]                                       # seeded
    for sp in splits:
        probe_ids, gal_ids = ids[sp["probe"]], ids[sp["gallery"]]
        assert set(cams[sp["probe"]]) == {"a"} and set(cams[sp["gallery"]]) == {"b"}
        assert sorted(np.unique(probe_ids, return_counts=True)[1]) == [1] * 6
        assert sorted(np.unique(gal_ids, return_counts=True)[1]) == [2] * 6
    # drawn per trial: trials with the same test people (9 of 10: 40 seeds repeat some) draw other images
    nine = build(n_test=9, probe_shots=1, gallery_shots=2, junk=["-1", "0000"])
    by_people = {}
    for s in range(40):
        sp = nine.split(ds, np.random.default_rng(s))
        by_people.setdefault(tuple(sorted(set(ids[sp["probe"]]))), set()).add((tuple(sp["probe"]), tuple(sp["gallery"])))
    assert len(by_people) < 40 and max(len(v) for v in by_people.values()) > 1
    drawn = {tuple(proto.split(ds, np.random.default_rng(s))["probe"]) for s in range(10)}
    assert len(drawn) == 10
    # all shots = multi-shot: every image of a test person in its camera
    sp = build(n_test=6, probe_shots="all", gallery_shots="all", junk=["-1", "0000"]).split(ds, np.random.default_rng(0))
    assert len(sp["probe"]) == len(sp["gallery"]) == 24


def test_shots_in_one_random_take_the_first_images_of_a_random_order_and_leave_a_probe():
    ids = np.repeat([f"{p}" for p in range(6)], [5, 5, 2, 5, 5, 5])
    ds = Dataset("nocam", pd.DataFrame({"id": [str(i) for i in range(len(ids))], "identity": ids}))
    sp = build(n_test=5, gallery="one_random", gallery_shots=2, probe_shots=2).split(ds, np.random.default_rng(0))
    g, p = pd.Series(ids[sp["gallery"]]).value_counts(), pd.Series(ids[sp["probe"]]).value_counts()
    for person in g.index:
        n = (ids == person).sum()
        assert g[person] == min(2, n - 1) and p[person] == min(2, n - g[person])
    assert not set(sp["gallery"]) & set(sp["probe"])


# ----------------------------------------------------------------------------- fixed splits
def write_split(path, trials, fmt):
    if fmt == "json":
        path.write_text(json.dumps({"trials": trials}))
    else:
        path.write_text(yaml.safe_dump({"trials": trials}))


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_a_split_file_round_trips_drawn_splits(tmp_path, fmt):
    ds = grid_like(shots=2)
    ds.info["root"] = str(tmp_path)
    item = ds.column("id")
    drawn = build(n_test=5, distractors=["0000"], junk=["-1"])
    splits = [drawn.split(ds, np.random.default_rng(s)) for s in range(3)]
    write_split(tmp_path / f"splits.{fmt}", [{k: [str(item[i]) for i in sp[k]] for k in ("train", "probe", "gallery")}
                                             for sp in splits], fmt)
    fixed = build(split_file=f"splits.{fmt}", distractors=["0000"], junk=["-1"])
    fixed.check_dataset(ds)
    assert fixed.fixed_trials(ds) == 3 and drawn.fixed_trials(ds) is None
    X = np.random.default_rng(0).normal(size=(len(ds), 3))
    for t, sp in enumerate(splits):
        again = fixed.split(ds, np.random.default_rng(99), trial=t)
        assert again == sp
        assert fixed.evaluate(L1Norm, X, ds, TrialSplit.drawn(again), Meter()).metrics \
            == drawn.evaluate(L1Norm, X, ds, TrialSplit.drawn(sp), Meter()).metrics


def test_a_split_file_leaves_junk_out_and_shots_draw_from_its_items(tmp_path):
    ds = grid_like(n_pairs=6, n_gallery_only=0, n_probe_only=0, shots=3)
    item, ids = ds.column("id"), ds.column("identity")
    names = lambda people, cam: [f"{p:03d}_{cam}{k}" for p in people for k in range(3)]  # noqa: E731
    trial = {"train": names([0, 1, 2], "a") + names([0, 1, 2], "b") + ["junk0"],
             "probe": names([3, 4, 5], "a") + ["junk1"], "gallery": names([3, 4, 5], "b") + ["dis1", "dis3", "junk2"]}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump({"trials": [trial]}))
    proto = build(split_file=str(tmp_path / "s.yaml"), junk=["-1"], distractors=["0000"], probe_shots=1,
                  gallery_shots=1)
    proto.check_dataset(ds)
    sp = proto.split(ds, np.random.default_rng(0), trial=0)
    assert "-1" not in set(ids[np.r_[sp["train"], sp["probe"], sp["gallery"]]])
    assert len(sp["probe"]) == 3 and len(sp["gallery"]) == 3 + 2 and set(item[sp["gallery"]]) >= {"dis1", "dis3"}
    assert proto.split(ds, np.random.default_rng(0), trial=0) == sp


BAD_FILES = [
    ("[1, 2]", r"expected a mapping with 'trials'"),
    ("trials: []", r"expected a mapping with 'trials', .* got 'trials': \[\]"),
    ("", r"expected a mapping with 'trials', .* got an empty file"),
    ("trials: [{train: [000_a0], probe: [001_a0]}]", r"trials\[0\]: expected the keys .*no 'gallery'"),
    ("trials: [{train: [000_a0], probe: [001_a0], gallery: [001_b0], test: []}]", r"an unknown key 'test'"),
    ("trials: [{train: [000_a0], probe: [001_a0], gallery: [001_b0]}, {train: [000_a0], probe: [nobody], "
     "gallery: [001_b0]}]", r"trials\[1\]\.probe: unknown item 'nobody'"),
    # the name as written (YAML 1.1 read 0001 as the number 1)
    ("trials: [{train: [000_a0], probe: [001_a0], gallery: [0001]}]", r"trials\[0\]\.gallery: unknown item '0001' "
     r"\(expected the dataset's item ids, such as '000_a0'\)"),
    ("trials: [{train: [000_a0], probe: [001_a0], gallery: [001_a0]}]", r"trials\[0\]\.gallery: item '001_a0' is "
     r"listed twice \(in probe too\)"),
    ("trials: [{train: [001_b0], probe: [001_a0], gallery: [002_b0]}]", r"trials\[0\]\.probe: item '001_a0' is of "
     r"identity '001', which trials\[0\]\.train trains on"),
    ("trials: [{train: [002_a0], probe: [001_a0], gallery: [001_b0, 002_b0, dis0]}]", r"trials\[0\]\.gallery: item "
     r"'002_b0' is of identity '002', which trials\[0\]\.train trains on"),
    ("trials: [{train: [000_a0], probe: [001_a0], gallery: [001_b0]}]", r"protocol\.distractors: identity '0000' has "
     r"no item in any gallery of .*bad\.yaml; expected a fixed split to list"),
    ("trials: [{train: [000_a0, dis0], probe: [001_a0], gallery: [001_b0]}]", r"trials\[0\]\.train: item 'dis0' is "
     r"of distractor identity '0000'"),
    ("trials: [{train: [000_a0], probe: [junk0], gallery: [001_b0]}]", r"trials\[0\]\.probe: expected items, got "
     r"none once junk is left out"),
    ("trials: [{train: [000_a0], probe: [001_a0], gallery: [002_b0, dis0]}]", r"trials\[0\]\.gallery: expected the "
     r"identities of some probes, got none of them"),
    ("trials: [{train: [000_a0], probe: {a: 1}, gallery: [001_b0]}]", r"trials\[0\]\.probe: expected a non-empty list"),
    ("trials: [{train: [000_a0], probe: [001_a0], gallery: [001_b0]", r"not a readable split file"),
    # a null was 'unknown item None ... read as a number: quote it'; a YAML file's names are text
    ("trials: [{train: [000_a0], probe: [null], gallery: [001_b0]}]", r"trials\[0\]\.probe: unknown item 'null'"),
    # a copied trial counted one split twice in the std and the paired tests
    ("trials: [{train: [000_a0], probe: [001_a0], gallery: [001_b0, dis0]},\n"
     " {train: [000_a0], probe: [001_a0], gallery: [dis0, 001_b0]}]", r"trials\[1\]: the same train, probe and "
     r"gallery as trials\[0\]"),
]


@pytest.mark.parametrize("text, message", BAD_FILES)
def test_a_bad_split_file_is_one_line_naming_the_file_the_trial_and_the_item(tmp_path, text, message):
    ds = grid_like()
    (tmp_path / "bad.yaml").write_text(text)
    with pytest.raises(ConfigError, match=message) as err:
        build(split_file=str(tmp_path / "bad.yaml"), junk=["-1"], distractors=["0000"]).check_dataset(ds)
    assert "\n" not in str(err.value) and "bad.yaml" in str(err.value)


def test_a_split_column_reads_market1501_folders_as_one_fixed_trial():
    rows = []
    for p in range(1, 9):
        sub = "bounding_box_train" if p <= 4 else None
        for c in "12":
            rows.append({"id": f"{p:04d}_c{c}", "identity": f"{p:04d}", "cam": c,
                         "subset": sub or ("query" if c == "1" else "bounding_box_test")})
        if sub is None:
            rows.append({"id": f"{p:04d}_c1x", "identity": f"{p:04d}", "cam": "1", "subset": "bounding_box_test"})
    rows += [{"id": "0000_c2", "identity": "0000", "cam": "2", "subset": "bounding_box_test"},
             {"id": "-1_c1", "identity": "-1", "cam": "1", "subset": "bounding_box_test"},
             {"id": "0005_gt", "identity": "0005", "cam": "1", "subset": "gt_bbox"}]
    ds = Dataset("market-like", pd.DataFrame(rows), info={"identity_roles": {"-1": "junk", "0000": "distractor"}})
    proto = build(split_column="subset", junk=["-1"], distractors=["0000"])
    with pytest.warns(UserWarning, match=r"column 'subset' .*: 1 item\(s\) take no part, .*: 'gt_bbox' \(1\)"):
        proto.check_dataset(ds)
    assert proto.fixed_trials(ds) == 1
    sp = proto.split(ds, np.random.default_rng(0), trial=0)
    item = ds.column("id")
    assert set(item[sp["train"]]) == {f"{p:04d}_c{c}" for p in range(1, 5) for c in "12"}
    assert set(item[sp["probe"]]) == {f"{p:04d}_c1" for p in range(5, 9)}
    assert set(item[sp["gallery"]]) == {f"{p:04d}_c2" for p in range(5, 9)} | {f"{p:04d}_c1x" for p in range(5, 9)} \
        | {"0000_c2"}
    # the probe's own camera's image of itself is no match: each probe finds its camera-2 image
    X = np.zeros((len(ds), 1))
    X[:, 0] = [int(r["identity"]) * 10 + (0 if r["cam"] == "2" else 3 * (r["id"].endswith("x"))) for r in rows]
    res = proto.evaluate(L1Norm, X, ds, TrialSplit.drawn(sp), Meter())
    assert res.metrics["cmc@1"] == 1.0
    # 'Gallery' took no part, silently: the person's other gallery image scored alone
    typo = Dataset("market-like", ds.items.assign(subset=ds.items["subset"].replace("bounding_box_test", "Bounding_box_test ")),
                   info=ds.info)
    with pytest.raises(DataError, match=r"value 'Bounding_box_test '; expected a part written exactly as 'bounding_box_test'"):
        proto.check_dataset(typo)
    with pytest.raises(ConfigError, match=r"protocol.junk: dataset 'market-like' marks identity '-1' as junk"):
        build(split_column="subset", distractors=["0000"]).check_dataset(ds)
    with pytest.raises(ConfigError, match=r"protocol.distractors: .* marks identity '0000' as distractor"):
        build(split_column="subset", junk=["-1"]).check_dataset(ds)


# ----------------------------------------------------------------------------- through the engine
def write_table(folder, ds, X):
    folder.mkdir(parents=True, exist_ok=True)
    ds.items.to_csv(folder / "t.csv", index=False)
    np.save(folder / "t.npy", X)


def config(tmp_path, protocol, trials):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({
        "name": "fixed", "dataset": {"name": "table", "file": "d/t.csv", "features": "t.npy"},
        "features": [{"name": "x", "extractor": "array", "key": "feat"}], "protocol": {"name": "reid", **protocol},
        "trials": trials, "rankers": [{"name": "L1", "ranker": "l1"}]}))
    return path


def test_a_run_takes_trial_t_from_the_file_and_refuses_more_trials_than_it_holds(tmp_path, monkeypatch):
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "cache"))
    ds = grid_like(shots=2)
    X = np.random.default_rng(1).normal(size=(len(ds), 3))
    write_table(tmp_path / "d", ds, X)
    item = ds.column("id")
    drawn = build(n_test=5, distractors=["0000"], junk=["-1"])
    splits = [drawn.split(ds, np.random.default_rng(s)) for s in (5, 6)]
    write_split(tmp_path / "d" / "splits.yaml",
                [{k: [str(item[i]) for i in sp[k]] for k in ("train", "probe", "gallery")} for sp in splits], "yaml")
    protocol = {"split_file": "splits.yaml", "distractors": ["0000"], "junk": ["-1"], "ranks": [1, 5]}
    with pytest.raises(ConfigError, match=r"trials: expected at most 2, the trials the protocol's fixed split holds, got 3"):
        app.validate(config(tmp_path, protocol, 3), data_root=str(tmp_path))
    assert not (tmp_path / "run").exists()
    res = app.run(config(tmp_path, protocol, 2), out=tmp_path / "run",
                  options=app.EngineOptions(data_root=str(tmp_path), progress=False), plots=False)
    assert res.outcome.n_done == 2
    recorded = json.loads((tmp_path / "run" / "splits.json").read_text())["settings"][0]["trials"]
    records = sorted((tmp_path / "run" / "trials").glob("*.json"))
    assert len(records) == 2
    for t, sp in enumerate(splits):
        # the held-out parts as the engine hands them over, in a seeded random order
        assert {k: sorted(recorded[t][k]) for k in ("train", "probe", "gallery")} == sp
        got = json.loads(records[t].read_text())
        assert got["trial"] == t
        own = drawn.evaluate(L1Norm, X, ds, TrialSplit.drawn(sp), Meter())
        assert got["metrics"]["map"] == pytest.approx(own.metrics["map"])
    summary = res.report.summary
    assert summary.loc[summary["metric"] == "cmc@1", "mean"].iloc[0] == pytest.approx(
        np.mean([drawn.evaluate(L1Norm, X, ds, TrialSplit.drawn(sp), Meter()).metrics["cmc@1"] for sp in splits]))


# ----------------------------------------------------------------------------- bad options
@pytest.mark.parametrize("params, error, message", [
    ({"distractors": "0000"}, ParameterError, r"protocol.distractors: expected one of 'none', 'unpaired' or a list"),
    ({"distractors": [0]}, ParameterError, r"protocol.distractors: expected"),
    ({"probe_shots": 0}, ParameterError, r"protocol.probe_shots: expected"),
    ({"gallery_shots": "some"}, ParameterError, r"protocol.gallery_shots: expected"),
    ({"junk": ["7"], "distractors": ["0000"]}, ConfigError, r"protocol.junk: expected identities of dataset .* got '7'"),
    ({"junk": ["-1", "0000"], "distractors": ["0000"]}, ConfigError, r"identity '0000' is also in protocol.distractors"),
    ({"gallery": "one_random", "gallery_shots": "all", "junk": ["-1", "0000"]}, ConfigError,
     r"protocol.gallery_shots: expected an integer under gallery: one_random"),
    ({"split_file": "s.yaml", "distractors": "unpaired"}, ConfigError, r"protocol.distractors: expected none or identity"),
    ({"split_file": "s.yaml", "split_column": "subset"}, ConfigError, r"expected split_file or split_column, got both"),
    ({"split_column": "nosuch"}, ConfigError, r"protocol.split_column: expected a column of dataset .* got 'nosuch'"),
    ({"split_file": "none.yaml", "junk": ["-1", "0000"]}, ConfigError, r"protocol.split_file: file .*none.yaml not found"),
    ({"n_test": 5, "junk": ["-1", "0000"], "ranks": [1, 6]}, ConfigError,
     r"ranks <= the smallest gallery a trial can draw, 5 \(n_test = 5 people, at least one image each\), got 6"),
    ({"n_test": 5, "junk": ["-1", "0000"], "ranks": [1, 6], "probe_shots": 1, "gallery_shots": 1}, ConfigError,
     r"ranks <= the gallery size n_test = 5, got 6"),
    ({"n_test": 5, "junk": ["-1"], "distractors": ["0000"], "ranks": [1, 11]}, ConfigError,
     r"ranks <= the smallest gallery a trial can draw, 10 \(n_test = 5 people, at least one image each, and the "
     r"distractors\), got 11"),
])
def test_bad_options_are_one_line(tmp_path, params, error, message):
    ds = grid_like()
    ds.info["root"] = str(tmp_path)
    (tmp_path / "s.yaml").write_text("trials: [{train: [000_a0], probe: [001_a0], gallery: [001_b0]}]")
    with pytest.raises(error, match=message) as err:
        build(**params).check_dataset(ds)
    assert "\n" not in str(err.value)


def test_the_options_are_listed_with_their_constraints():
    params = {p[0] for p in app.describe_component("protocols", "reid")["parameters"]}
    assert {"distractors", "junk", "probe_shots", "gallery_shots", "split_file", "split_column"} <= set(params)


def test_a_default_run_records_the_documented_draw(tmp_path, monkeypatch):
    """Through the engine, with the defaults: every recorded split is the documented draw from the
    trial's recorded seed (one permutation of the sorted people; camera a probes, camera b gallery)."""
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "cache"))
    ds = viper_like(20)
    write_table(tmp_path / "d", ds, np.random.default_rng(2).normal(size=(len(ds), 3)))
    res = app.run(config(tmp_path, {"n_test": 8, "ranks": [1, 5]}, 3), out=tmp_path / "run",
                  options=app.EngineOptions(data_root=str(tmp_path), progress=False), plots=False)
    assert res.outcome.n_done == 3
    ids, cams = ds.column("identity"), ds.column("cam")
    people = np.array(sorted(set(ids)))
    for t in json.loads((tmp_path / "run" / "splits.json").read_text())["settings"][0]["trials"]:
        test = people[np.random.default_rng(t["seed"]).permutation(len(people))[:8]]
        assert sorted(t["probe"]) == [i for i in range(len(ds)) if ids[i] in test and cams[i] == "a"]
        assert sorted(t["gallery"]) == [i for i in range(len(ds)) if ids[i] in test and cams[i] == "b"]
        assert t["train"] == [i for i in range(len(ds)) if ids[i] not in test]


def test_resume_refuses_a_split_file_changed_since_the_run_started(tmp_path, monkeypatch):
    # the resumed trial kept its recorded split, but its ranks came from the edited file: a cmc@20
    # that the other trials never had, at exit 0 (or an IndexError blaming the ranker)
    from rankbench.runfolder import RunFolderError

    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "cache"))
    ds = grid_like(shots=2)
    write_table(tmp_path / "d", ds, np.random.default_rng(1).normal(size=(len(ds), 3)))
    item = ds.column("id")
    drawn = build(n_test=5, distractors=["0000"], junk=["-1"])
    splits = [{k: [str(item[i]) for i in sp[k]] for k in ("train", "probe", "gallery")}
              for sp in (drawn.split(ds, np.random.default_rng(s)) for s in (5, 6))]
    write_split(tmp_path / "d" / "splits.yaml", splits, "yaml")
    protocol = {"split_file": "splits.yaml", "distractors": ["0000"], "junk": ["-1"]}
    opts = app.EngineOptions(data_root=str(tmp_path), progress=False)
    app.run(config(tmp_path, protocol, 2), out=tmp_path / "run", options=opts, plots=False)
    sorted((tmp_path / "run" / "trials").glob("*.json"))[-1].unlink()   # as if killed before the last trial
    write_split(tmp_path / "d" / "splits.yaml", splits[::-1], "yaml")
    with pytest.raises(RunFolderError, match=r"--resume: .*splits.json: .*splits.yaml changed since the splits were "
                                             "drawn; put it back or start a new run"):
        app.run(resume=tmp_path / "run", options=opts, plots=False)
    write_split(tmp_path / "d" / "splits.yaml", splits, "yaml")
    assert app.run(resume=tmp_path / "run", options=opts, plots=False).outcome.n_done == 2

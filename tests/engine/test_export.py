"""rankbench export: TREC files that pytrec_eval scores as rankbench did, svmlight files from which
the run's own numbers are computed again, and the results document."""

import json
from urllib.parse import unquote

import numpy as np
import pandas as pd
import pytest
import yaml
from sklearn.datasets import load_svmlight_file

from rankbench import app
from rankbench.errors import ConfigError
from rankbench.metrics import average_precision, grouped_pair_accuracy
from rankbench.registry import rankers

COLLECTION = {"name": "synthetic_collection", "n_items": 1200, "feature_types": [[8, 0.5], [8, 1.0]],
              "shots_per_video": 50}


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "cache"))


def run(tmp_path, name, data, data_root=None):
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"name": name, "trials": 2, "seed": 0, **data}))
    opts = app.EngineOptions(progress=False, data_root=data_root)
    return app.run(path, out=tmp_path / name, options=opts, plots=False).folder.path


def judged_table(tmp_path):
    """A retrieval table with unjudged items (empty cells), which neither file may hold."""
    rng = np.random.default_rng(1)
    n = 300
    beach, urban = rng.random(n) < 0.2, rng.random(n) < 0.3
    urban_cell = np.where(rng.random(n) < 0.15, "", urban.astype(int).astype(str))
    d = tmp_path / "data"
    d.mkdir()
    pd.DataFrame({"id": [f"shot{i // 20} {i}" if i % 7 else f"shot{i // 20}:{i}%" for i in range(n)], "beach": beach.astype(int),
                  "urban": urban_cell}).to_csv(d / "shots.csv", index=False)
    np.save(d / "x.npy", np.c_[beach, urban] + rng.normal(0, 0.8, (n, 2)))
    return d


def read_trec(path, run: bool):
    out: dict = {}
    for line in path.read_text().splitlines():
        f = line.split()
        out.setdefault(f[0], {})[f[2]] = float(f[4]) if run else int(f[3])
    return out


def records(folder):
    return [json.loads(p.read_text()) for p in sorted((folder / "trials").glob("*.json"))]


@pytest.mark.parametrize("kind", ["retrieval", "stacked_retrieval"])
def test_pytrec_eval_gives_every_trial_the_ap_rankbench_gave(kind, tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    if kind == "retrieval":
        data_root = judged_table(tmp_path)
        data = {"dataset": {"name": "table", "file": "shots.csv", "concepts": ["beach", "urban"], "features": "x.npy"},
                "features": [{"name": "x", "extractor": "array", "key": "feat"}],
                "protocol": {"name": "retrieval", "depths": [10, 30], "keep_scores": True},
                "rankers": [{"name": "LR", "ranker": "logistic"}, {"name": "LR balanced", "ranker": "logistic",
                                                                    "class_weight": "balanced"}]}
    else:
        data_root = None
        data = {"dataset": COLLECTION,
                "features": [{"name": f"t{k}", "extractor": "array", "key": f"feat/type0{k}"} for k in (0, 1)],
                "protocol": {"name": "stacked_retrieval", "depths": [10, 30], "min_positives": 2, "keep_scores": True,
                             "concepts": ["Meeting", "Computer_TV-screen"],
                             "base_models": {"ranker": "svm_bank", "C": [1.0], "gamma": [1.0], "max_bag": 60}},
                "rankers": [{"name": "RankBoost", "ranker": "bipartite_rankboost", "combine": "views", "n_rounds": 5}]}
    folder = run(tmp_path, kind, data, str(data_root) if data_root else None)
    files = app.export(folder, "trec", tmp_path / "trec", progress=False).files
    assert {p.name for p in files} >= {"trial0.qrels", "trial1.qrels"}
    compared = 0
    for rec in records(folder):
        k, tag = rec["trial"], rec["method"].replace(" ", "%20")
        qrels = read_trec(tmp_path / "trec" / f"trial{k}.qrels", run=False)
        ranking = read_trec(tmp_path / "trec" / f"trial{k}.{tag}.run", run=True)
        assert all(set(ranking[q]) == set(qrels[q]) for q in qrels)     # judged items only, in both
        got = pytrec_eval.RelevanceEvaluator(qrels, {"map", "map_cut.10,30"}).evaluate(ranking)
        for concept, v in got.items():
            for ours, theirs in ((f"ap/{concept}", "map"), (f"ap@10/{concept}", "map_cut_10"),
                                 (f"ap@30/{concept}", "map_cut_30")):
                assert rec["metrics"][ours] == pytest.approx(v[theirs], abs=1e-12)
                compared += 1
    assert compared == 2 * len(data["rankers"]) * 2 * 3
    if kind == "retrieval":
        urban = read_trec(tmp_path / "trec" / "trial0.qrels", run=False)["urban"]
        table = pd.read_csv(data_root / "shots.csv", dtype=str, keep_default_na=False).set_index("id")
        assert all(table.loc[unquote(i), "urban"] != "" for i in urban)          # no unjudged item


def test_trec_needs_kept_scores_and_a_retrieval_run(tmp_path):
    folder = run(tmp_path, "noscores", {
        "dataset": COLLECTION, "features": [{"name": "t0", "extractor": "array", "key": "feat/type00"}],
        "protocol": {"name": "retrieval", "depths": [10], "min_positives": 3, "concepts": ["Meeting"]},
        "rankers": [{"name": "LR", "ranker": "logistic"}]})
    with pytest.raises(ConfigError, match="kept no scores; run it with --set protocol.keep_scores=true"):
        app.export(folder, "trec", tmp_path / "t", progress=False)
    assert not (tmp_path / "t").exists() or not any((tmp_path / "t").rglob("*"))   # not even the qrels
    reid = run(tmp_path, "reid", {"dataset": {"name": "synthetic_reid", "n_people": 20},
                                  "features": [{"name": "c", "extractor": "color_strips", "bins": 4}],
                                  "protocol": {"name": "reid", "n_test": 8}, "rankers": [{"name": "L1", "ranker": "l1"}]})
    with pytest.raises(ConfigError, match="expected a retrieval run, got protocol 'reid'"):
        app.export(reid, "trec")
    with pytest.raises(ConfigError, match="svmlight: expected a run of protocol retrieval or comparison"):
        app.export(reid, "svmlight")


def test_svmlight_retrieval_rows_give_the_runs_ap_again(tmp_path):
    data_root = judged_table(tmp_path)
    folder = run(tmp_path, "ret", {
        "dataset": {"name": "table", "file": "shots.csv", "concepts": ["beach", "urban"], "features": "x.npy"},
        "features": [{"name": "x", "extractor": "array", "key": "feat"}],
        "protocol": {"name": "retrieval", "depths": [10]},
        "rankers": [{"name": "LR", "ranker": "logistic"}]}, str(data_root))
    app.export(folder, "svmlight", progress=False)           # into the run folder, data root as recorded
    out = folder / "export" / "svmlight"
    for rec in records(folder):
        k = rec["trial"]
        Xtr, ytr, qtr = load_svmlight_file(str(out / "x" / f"trial{k}.train.svm"), query_id=True)
        Xte, yte, qte = load_svmlight_file(str(out / "x" / f"trial{k}.test.svm"), query_id=True)
        names = dict(line.split() for line in (out / f"trial{k}.qids.txt").read_text().splitlines())
        for q, concept in names.items():
            tr, te = qtr == int(q), qte == int(q)
            s = rankers.get("logistic")().fit(Xtr[tr].toarray(), ytr[tr]).decision_function(Xte[te].toarray())
            assert average_precision(s, yte[te] > 0) == pytest.approx(rec["metrics"][f"ap/{concept}"])
        lines = [line.split(" ") for line in (out / f"trial{k}.test.ids").read_text().splitlines()]
        assert len(lines) == len(yte) and all(len(f) == 2 for f in lines)     # ids with spaces: one field each
        assert {unquote(i) for _, i in lines} <= set(pd.read_csv(data_root / "shots.csv", dtype=str)["id"])


def test_svmlight_relative_attributes_levels_and_the_exact_training_pairs(tmp_path):
    folder = run(tmp_path, "attr", {
        "dataset": {"name": "synthetic_attributes", "n_per_category": 10, "n_train_per_category": 4},
        "features": [{"name": "x", "extractor": "array", "key": "feat"}],
        "protocol": {"name": "comparison", "n_train_pairs": 200},
        "rankers": [{"name": "RankSVM", "ranker": "ranksvm", "C": 1.0}]})
    out = tmp_path / "svm"
    app.export(folder, "svmlight", out, progress=False)
    for rec in records(folder):
        k = rec["trial"]
        Xtr, ltr, qtr = load_svmlight_file(str(out / "x" / f"trial{k}.train.svm"), query_id=True)
        Xte, lte, qte = load_svmlight_file(str(out / "x" / f"trial{k}.test.svm"), query_id=True)
        ids = [line.split()[1] for line in (out / f"trial{k}.train.ids").read_text().splitlines()]
        pairs = pd.read_csv(out / f"trial{k}.pairs.csv", dtype={"stronger": str, "weaker": str})
        names = dict(line.split() for line in (out / f"trial{k}.qids.txt").read_text().splitlines())
        assert set(np.unique(ltr)) <= set(range(10)) and ltr.dtype.kind == "f" and (ltr == np.round(ltr)).all()
        for q, attr in names.items():
            tr, te = qtr == int(q), qte == int(q)
            pos = {i: j for j, i in enumerate(np.array(ids)[tr])}
            P = pairs[pairs.attribute == attr]
            idx = np.c_[P.stronger.map(pos), P.weaker.map(pos)]
            assert (ltr[tr][idx[P.ordered == 1, 0]] > ltr[tr][idx[P.ordered == 1, 1]]).all()   # levels order them
            model = rankers.get("ranksvm")(C=1.0).fit(Xtr[tr].toarray(), idx, P.ordered.to_numpy())
            acc, _ = grouped_pair_accuracy(model.decision_function(Xte[te].toarray()), lte[te])
            assert acc == pytest.approx(rec["metrics"][f"pair_acc/{attr}"])


def test_json_is_the_results_document_every_report_writes(tmp_path, cli):
    folder = run(tmp_path, "reid", {"dataset": {"name": "synthetic_reid", "n_people": 20},
                                    "features": [{"name": "c", "extractor": "color_strips", "bins": 4}],
                                    "protocol": {"name": "reid", "n_test": 8, "ranks": [1, 5]},
                                    "rankers": [{"name": "L1", "ranker": "l1"}],
                                    "expected": [{"method": "L1", "metric": "cmc@5", "value": 0.5, "tolerance": 0.5}]})
    written = json.loads((folder / "results.json").read_text())
    got = app.export(folder, "json", tmp_path / "r.json")
    doc = got.document
    assert got.files == [tmp_path / "r.json"]
    assert doc == written == json.loads((tmp_path / "r.json").read_text())
    assert doc["schema_version"] == 1 and doc["methods"] == ["L1"] and doc["run"]["protocol"] == "reid"
    summary = pd.read_csv(folder / "summary.csv", keep_default_na=False)
    row = summary[(summary.metric == "map")].iloc[0]
    got = next(r for r in doc["summary"] if r["metric"] == "map")
    assert got["mean"] == pytest.approx(row["mean"]) and got["n_trials"] == 2
    assert doc["metrics"]["cmc@1"] == {"label": "Matching rate at rank 1", "unit": "fraction", "rate": True,
                                       "higher_is_better": True, "cost": False}
    assert [g["grade"] for g in doc["published"]] == ["OK"] and len(doc["trials"]) == len(summary) * 2
    res = cli("export", folder, "--format", "json")
    assert res.exit_code == 0 and json.loads(res.output) == doc


TABLE = {"dataset": {"name": "table", "file": "shots.csv", "concepts": ["beach", "urban"], "features": "x.npy"},
         "features": [{"name": "x", "extractor": "array", "key": "feat"}],
         "protocol": {"name": "retrieval", "depths": [10], "keep_scores": True}}


def test_names_a_file_name_cannot_hold_stay_apart(tmp_path):
    """Methods whose names differ only in characters a file name cannot hold (``Log reg``,
    ``Log_reg``) overwrote each other's run file while the export listed both; item ids that
    differed only so shared a docno (duplicate qrels). Each now keeps its own file and docno."""
    data_root = judged_table(tmp_path)
    table = pd.read_csv(data_root / "shots.csv", dtype=str, keep_default_na=False)
    table.loc[0, "id"], table.loc[1, "id"] = "shot 0", "shot_0"
    table.to_csv(data_root / "shots.csv", index=False)
    folder = run(tmp_path, "names", {**TABLE, "rankers": [
        {"name": "Log reg", "ranker": "logistic"},
        {"name": "Log_reg", "ranker": "logistic", "class_weight": "balanced"}]}, str(data_root))
    files = app.export(folder, "trec", tmp_path / "trec", progress=False).files
    assert len(files) == len(set(files)) == 2 * 3 and all(p.is_file() for p in files)
    for rec in records(folder):
        k = rec["trial"]
        lines = [line.split() for line in (tmp_path / "trec" / f"trial{k}.qrels").read_text().splitlines()]
        assert len({(f[0], f[2]) for f in lines}) == len(lines)                 # one judgement per document
        path = tmp_path / "trec" / f"trial{k}.{rec['method'].replace(' ', '%20')}.run"
        ranked = [line.split() for line in path.read_text().splitlines()]
        assert {f[5] for f in ranked} == {rec["method"].replace(" ", "%20")}
        for concept, scores in rec["extra"]["scores"].items():
            assert sorted(float(f[4]) for f in ranked if f[0] == concept) == sorted(scores)   # its own scores


def test_docnos_shared_by_two_items_are_refused():
    from rankbench.datasets.base import Dataset
    from rankbench.engine.export import write_trec
    from rankbench.errors import DataError

    ds = Dataset("mine.csv", pd.DataFrame({"id": pd.Series([1, "1", 2], dtype=object)}),
                 arrays={"relevance": np.ones((3, 1))}, info={"concepts": ["c"]})
    with pytest.raises(DataError, match="mine.csv: item id '1' names 2 items"):
        write_trec([], [type("S", (), {"label": "", "trials": []})()], lambda label: ds, None)


def test_an_export_of_a_run_swept_over_its_data_refuses_changed_data(tmp_path, cli):
    """Each setting's data is checked against what splits.json recorded for it (as --resume does),
    so a run swept over its data file no longer exports qrels of data it never saw."""
    data_root = judged_table(tmp_path)
    (data_root / "other.csv").write_bytes((data_root / "shots.csv").read_bytes())
    folder = run(tmp_path, "swept", {**TABLE, "rankers": [{"name": "LR", "ranker": "logistic"}],
                                     "sweep": {"dataset.file": ["shots.csv", "other.csv"]}}, str(data_root))
    assert len(app.export(folder, "trec", tmp_path / "before", progress=False).files) == 2 * 2 * 2
    table = pd.read_csv(data_root / "other.csv", dtype=str, keep_default_na=False)
    table["beach"] = np.where(table["beach"] == "1", "0", "1")                  # the same items, other judgements
    table.to_csv(data_root / "other.csv", index=False)
    res = cli("export", folder, "--format", "trec", "--out", tmp_path / "after")
    lines = res.output.strip().splitlines()
    assert res.exit_code == 1 and len(lines) == 1 and "Traceback" not in res.output, res.output
    assert "dataset 'table' (setting dataset.file=other.csv) changed since the run" in lines[0]


def test_an_incomplete_run_is_said_when_exported(tmp_path, caplog):
    """Export writes what the run has; a run missing a result says so (here on stderr)."""
    reid = run(tmp_path, "reid", {"dataset": {"name": "synthetic_reid", "n_people": 20},
                                  "features": [{"name": "c", "extractor": "color_strips", "bins": 4}],
                                  "protocol": {"name": "reid", "n_test": 8}, "rankers": [{"name": "L1", "ranker": "l1"}]})
    next((reid / "trials").glob("*.json")).unlink()
    with caplog.at_level("WARNING", logger="rankbench.app"):
        app.export(reid, "json", tmp_path / "r.json")
    assert f"{reid}: Incomplete run: 1 of 2 results" in caplog.text

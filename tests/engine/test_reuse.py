"""Results of identical jobs are reused (the cache's ``trials``): within a run (a sweep setting
that leaves a method unchanged) and across runs (a config that repeats another's trials); any
change to what a result is computed from computes it again, and failed results are never kept."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from toydata import record, synthetic_reid_config

from rankbench.runfolder import TrialRecord, TrialSplit
from rankbench.utils.diskcache import digest

COUNTING = '''
from pathlib import Path
import numpy as np
from sklearn.base import BaseEstimator
from rankbench.rankers.base import PairScorer

class Counting(PairScorer, BaseEstimator):
    """L1 distance; every fit adds a line to the file ``log``."""
    def __init__(self, log="", fail=False):
        self.log = log
        self.fail = fail

    def fit(self, X, y, cams=None):
        with open(self.log, "a") as fh:
            fh.write("fit\\n")
        if self.fail:
            raise ValueError("broken on purpose")
        self.fitted_ = True
        return self

    def similarity(self, Q, G):
        return -np.abs(np.asarray(Q)[:, None] - np.asarray(G)[None]).sum(-1)
'''


@pytest.fixture
def reuse(monkeypatch, tmp_path):
    """Reuse on (the suite turns it off), with this test's own cache."""
    monkeypatch.setenv("RANKBENCH_REUSE", "1")
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "cache"))


def _config(tmp_path: Path, trials: int = 2, fail: bool = False, extra: str = "") -> tuple[Path, Path]:
    plugin, log = tmp_path / "counting.py", tmp_path / "fits.log"
    plugin.write_text(COUNTING)
    path = tmp_path / f"c{len(list(tmp_path.glob('c*.yaml')))}.yaml"
    path.write_text(synthetic_reid_config(n_people=14, n_test=6, ranks=[1, 5], trials=trials)
                    + "rankers:\n  - {name: L1, ranker: l1}\n"
                    + f"  - {{name: Count, ranker: '{plugin}:Counting', log: '{log}', fail: {str(fail).lower()}}}\n"
                    + extra)
    return path, log


def _fits(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def _records(out: Path) -> dict[tuple, dict]:
    return {(r["setting"], r["trial"], r["method"]): r
            for r in (json.loads(p.read_text()) for p in (out / "trials").glob("*.json"))}


def test_a_repeated_run_takes_every_result_and_a_longer_one_computes_only_the_new_trials(cli, reuse, tmp_path):
    path, log = _config(tmp_path, trials=2)
    assert cli("run", path, "--out", tmp_path / "a", "-q", "--no-plots").exit_code == 0
    assert _fits(log) == 2
    assert cli("run", path, "--out", tmp_path / "b", "-q", "--no-plots", "--trials", "3").exit_code == 0
    assert _fits(log) == 3                                      # trials 0 and 1 were reused
    a, b = _records(tmp_path / "a"), _records(tmp_path / "b")
    for key, rec in a.items():
        assert b[key]["reused"]["run"] == str(tmp_path / "a") and b[key]["reused"]["trial"] == key[1]
        assert b[key]["metrics"] == rec["metrics"] and b[key]["wall_s"] == rec["wall_s"]
        assert b[key]["config_fingerprint"] != rec["config_fingerprint"]   # stamped by the run that took it
    assert all(b[k]["reused"] is None for k in b if k[1] == 2)
    summary = (tmp_path / "b" / "summary.md").read_text()
    assert "4 of its 6 results were taken from identical jobs computed before" in summary
    spent = json.loads((tmp_path / "b" / "manifest.json").read_text())["wall_s_per_method"]
    assert spent["Count"] == pytest.approx(b[("", 2, "Count")]["wall_s"], abs=1e-3)   # the new trial's only


def test_a_sweep_setting_that_leaves_a_method_unchanged_reuses_its_results(cli, reuse, tmp_path):
    path, log = _config(tmp_path, trials=2, extra="  - {name: P, ranker: prsvm, C: 1.0}\n"
                                                  "sweep:\n  rankers.P.C: [1.0, 10.0]\n")
    assert cli("run", path, "--out", tmp_path / "a", "-q", "--no-plots").exit_code == 0
    assert _fits(log) == 2                                      # Count: the same jobs in both settings
    recs = _records(tmp_path / "a")
    for method in ("Count", "L1"):
        later = [r for k, r in recs.items() if k[2] == method and r["reused"] is not None]
        assert len(later) == 2 and all(r["reused"]["setting"] != r["setting"] for r in later)
    assert not any(r["reused"] for k, r in recs.items() if k[2] == "P")     # C changed: computed


@pytest.mark.parametrize("how", ["--no-cache", "RANKBENCH_REUSE=0", "another seed", "another parameter"])
def test_anything_that_changes_the_job_or_switches_reuse_off_computes_again(cli, reuse, tmp_path, monkeypatch, how):
    path, log = _config(tmp_path, trials=2)
    assert cli("run", path, "--out", tmp_path / "a", "-q", "--no-plots").exit_code == 0
    args = ["run", path, "--out", tmp_path / "b", "-q", "--no-plots"]
    if how == "--no-cache":
        args.append("--no-cache")
    elif how == "another seed":
        args += ["--seed", "5"]
    elif how == "another parameter":
        args += ["--set", "features.colour.bins=6"]
    else:
        monkeypatch.setenv("RANKBENCH_REUSE", "0")
    assert cli(*args).exit_code == 0
    assert _fits(log) == 4 and not any(r["reused"] for r in _records(tmp_path / "b").values())


def test_a_failed_result_is_not_kept_for_reuse(cli, reuse, tmp_path):
    path, log = _config(tmp_path, trials=1, fail=True)
    assert cli("run", path, "--out", tmp_path / "a", "-q", "--no-plots").exit_code == 1
    assert cli("run", path, "--out", tmp_path / "b", "-q", "--no-plots").exit_code == 1
    assert _fits(log) == 2
    failed = _records(tmp_path / "b")[("", 0, "Count")]
    assert failed["status"] == "failed" and failed["reused"] is None
    assert _records(tmp_path / "b")[("", 0, "L1")]["reused"] is not None     # the good method's was kept


def test_a_record_of_schema_1_reads_without_reused_and_a_failed_one_cannot_claim_it():
    data = json.loads(record().to_json())
    assert data["schema_version"] == 3 and data["reused"] is None
    del data["reused"]
    assert TrialRecord.parse(json.dumps({**data, "schema_version": 1})).reused is None
    with pytest.raises(ValueError, match="reused: missing field"):
        TrialRecord.parse(json.dumps(data))
    failed = {**data, "status": "failed", "metrics": {}, "error": "boom", "phase": "fit", "traceback": "",
              "reused": {"run": None, "setting": "", "trial": 0, "method": "A", "at": "2026-01-01T00:00:00"}}
    with pytest.raises(ValueError, match="never reused"):
        TrialRecord.parse(json.dumps(failed))


def test_digest_reads_arrays_inside_lists_and_nested_mappings_whole():
    """Arrays are fed by their bytes at any depth (JSON would shorten a long one to '...')."""
    a = np.zeros(2000)
    b = a.copy()
    b[1000] = 1.0
    assert digest([a]) != digest([b]) and digest({"s": {"rows": a}}) != digest({"s": {"rows": b}})
    assert digest({"x": a, "n": [1, 2]}) == digest({"x": a.copy(), "n": [1, 2]})


# ----------------------------------------------------------------------------- the keys themselves
def _spec(name="prsvm", **params):
    from rankbench.components import ComponentSpec
    from rankbench.engine.estimator import MethodSpec

    return MethodSpec("P", ComponentSpec.checked("rankers", name, params, "rankers.P"), ["colour"], "concat")


def test_a_method_key_holds_its_ranker_parameters_and_features_and_no_object_gets_one():
    from dataclasses import replace

    from rankbench.components import ComponentSpec
    from rankbench.engine.reuse import TrialKeys
    from rankbench.rankers.baselines.template import L1Norm

    key = TrialKeys.method
    assert key(_spec(C=1.0)) == key(_spec(C=1.0))
    assert len({key(_spec(C=1.0)), key(_spec(C=2.0)), key(_spec("l1")),
                key(replace(_spec(C=1.0), feature_sets=["other"])),
                key(replace(_spec(C=1.0), combine="views"))}) == 5
    assert key(replace(_spec(), ranker=ComponentSpec.of(L1Norm()))) is None    # an object: computed every time
    assert key(replace(_spec(), fault="cannot be built")) is None


def test_a_job_key_changes_with_each_part_and_is_none_without_a_setting_or_method():
    from rankbench.engine.reuse import TrialKeys

    drawn = {"trial": 0, "seed": 1, "probe": [0, 1]}
    split = TrialSplit.model_validate(drawn)
    parts = ("s", "m", "k")
    keys = {TrialKeys.job(*parts, split), TrialKeys.job("s2", "m", "k", split), TrialKeys.job("s", "m2", "k", split),
            TrialKeys.job("s", "m", "k2", split),
            TrialKeys.job(*parts, TrialSplit.model_validate({**drawn, "probe": [0, 2]}))}
    assert len(keys) == 5 and TrialKeys.job(*parts, split.model_copy()) in keys
    # keyed by the split as splits.json holds it: results cached before splits were typed still answer
    assert TrialKeys.job(*parts, split) == digest(*parts, drawn)
    assert TrialKeys.job(None, "m", "k", split) is None and TrialKeys.job("s", "m", None, split) is None
    keys = TrialKeys(enabled=False)
    assert keys.base is None
    assert keys.matrix(("a",), np.arange(3)) == digest(np.arange(3)) != keys.matrix(("b",), np.arange(4))


def test_the_data_key_follows_labels_strengths_and_relevance_not_paths_or_root():
    # keyframes' fingerprint leaves the judgements out (it keys the feature cache): re-judged
    # keyframes took the old results, ap 0.976 where the new judgements give 0.282, at exit 0
    import pandas as pd

    from rankbench.datasets.base import Dataset
    from rankbench.engine.reuse import data_content

    def data(label=(0, 1, 2), rel=(1, 0, 0), strength=5.0, root="/a", path="/a/x.png", feat=0.0):
        items = pd.DataFrame({"id": ["a", "b", "c"], "label": list(label), "path": [path] * 3})
        info = {"root": root, "source": f"{root}/t.csv", "concepts": ["sky"], "nested": {"strength": pd.DataFrame({"open": [strength] * 300})}}
        arrays = {"relevance": np.array(rel, np.int8)[:, None], "feat": np.full((3, 2), feat),
                  "images": np.zeros((3, 2, 2), np.uint8) + int(feat)}
        return Dataset(name="d", items=items, arrays=arrays, info=info)

    same = {data_content(data()), data_content(data(root="/b", path="/b/x.png", feat=1.0))}
    assert len(same) == 1    # features key the job through its matrix; the data root is not the data
    changed = {data_content(d) for d in (data(label=(0, 2, 1)), data(rel=(0, 1, 0)), data(strength=6.0))}
    assert len(changed) == 3 and not changed & same   # a cell past str()'s shortened print of a table counts


def _judged_keyframes(root: Path, flip: bool = False) -> Path:
    """60 keyframes of 12 videos with one feature file and one judged concept (keyframes' layout)."""
    rng = np.random.default_rng(0)
    ids = [f"shot{v}_{k}_RKF" for v in range(1, 13) for k in range(1, 6)]
    (root / "features").mkdir(parents=True, exist_ok=True)
    (root / "annotations").mkdir(exist_ok=True)
    rel = np.where(rng.random(60) < 0.4, 1, -1)
    np.save(root / "features" / "f.npy", rel[:, None] + rng.normal(size=(60, 3)) * 2)   # the same features
    rel = -rel if flip else rel
    (root / "features" / "ids.txt").write_text("".join(i + "\n" for i in ids))
    (root / "annotations" / "sky.txt").write_text("".join(f"{i} {r}\n" for i, r in zip(ids, rel)))
    return root


def test_rejudged_keyframes_are_computed_again_and_refused_by_resume_and_export(tmp_path, monkeypatch):
    # keyframes' fingerprint leaves the judgements out: re-judged keyframes took the old results
    # (ap 0.976 where the new judgements give 0.282) and exported new qrels beside old scores
    from rankbench import app
    from rankbench.errors import RankbenchError
    from rankbench.runfolder import RunFolderError

    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("RANKBENCH_REUSE", raising=False)
    _judged_keyframes(tmp_path / "kf")
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: kf\ndataset: {name: keyframes, root: kf}\n"
                   "features: [{name: f, extractor: array, key: feat/f}]\n"
                   "protocol: {name: retrieval, group_column: group, keep_scores: true}\ntrials: 2\n"
                   "rankers: [{name: LR, ranker: logistic}]\n")
    opts = app.EngineOptions(data_root=str(tmp_path), progress=False)

    def ap(run):
        return [json.loads(p.read_text())["metrics"]["ap/sky"] for p in sorted((run / "trials").glob("*.json"))]

    before = ap(app.run(cfg, out=tmp_path / "a", options=opts, plots=False).folder.path)
    _judged_keyframes(tmp_path / "kf", flip=True)
    after = ap(app.run(cfg, out=tmp_path / "b", options=opts, plots=False).folder.path)
    assert len(after) == 2 and not set(after) & set(before)
    monkeypatch.setenv("RANKBENCH_REUSE", "0")
    assert ap(app.run(cfg, out=tmp_path / "c", options=opts, plots=False).folder.path) == after
    sorted((tmp_path / "a" / "trials").glob("*.json"))[-1].unlink()
    with pytest.raises(RunFolderError, match="the labels of dataset 'keyframes' .* changed since the splits were drawn"):
        app.run(resume=tmp_path / "a", options=opts, plots=False)
    with pytest.raises(RankbenchError, match="the labels of dataset 'keyframes' .* changed since the run"):
        app.export(tmp_path / "a", "trec", tmp_path / "x", data_root=str(tmp_path), progress=False)

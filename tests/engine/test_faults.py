"""Generated fault sweeps: a ranker that misbehaves is named and contained under every registered
protocol, and every field of a run folder's records is verified, not trusted.

1. For every registered protocol and every fault of ``tests/plugins/faulty.py`` (NaN, inf, the
   wrong shape, None, text, an exception in fit, an exception in scoring, ``sys.exit`` in fit), a
   tiny run of the faulty ranker beside a sound one: one line per failed job naming the method and
   the trial, the sound method computed, the failed jobs recorded as failed (the exception's last
   line, the phase), the grade FAILED, a non-zero exit; and ``--resume`` (the fault disarmed)
   retries only the failed jobs.
2. For every field of a trial record, corrupted in turn (its type, its value, the key missing, an
   unknown key beside it): the record is rejected like a corrupt file (reported, left out of the
   summary, recomputed by ``--resume``).

The number of cases is what pytest collects here (``pytest --collect-only -q tests/engine/test_faults.py``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rankbench.registry import protocols
from rankbench.runfolder import RunFolder

PLUGIN = Path(__file__).resolve().parents[1] / "plugins" / "faulty.py"
FAULTS = ("nan", "inf", "shape", "none", "text", "fit", "score", "exit")
#: what a failed job's record says, per fault (its phase and a piece of its error line)
SAYS = {"nan": ("score", "non-finite"), "inf": ("score", "non-finite"), "shape": ("score", "returned shape"),
        "none": ("score", "returned None"), "text": ("score", "expected numbers"),
        "fit": ("fit", "ValueError: broken on purpose in fit"), "score": ("score", "RuntimeError: broken on purpose"),
        "exit": ("fit", "called sys.exit(3)")}

COLLECTION = "{name: synthetic_collection, n_items: 1500, feature_types: [[8, 0.5], [8, 1.0]]}"
#: per protocol: (config lines without rankers, the faulty class, a sound ranker entry)
SETUPS = {
    "reid": ("dataset: {name: synthetic_reid, n_people: 16}\n"
             "features: [{name: f, extractor: color_strips, bins: 4, n_strips: 2}]\n"
             "protocol: {name: reid, n_test: 6, ranks: [1, 5]}\n", "FaultyPairScorer", "{name: Good, ranker: l1}"),
    "ordinal": ("dataset: {name: synthetic_ordinal, n_labels: 3, n_per_label: 8, n_nuisance: 2}\n"
                "features: [{name: f, extractor: array, key: feat}]\n"
                "protocol: {name: ordinal, n_per_label: 3, k: 3}\n", "FaultyMetric", "{name: Good, ranker: euclidean}"),
    "comparison": ("dataset: {name: synthetic_attributes, n_categories: 3, n_per_category: 6, n_attributes: 2, "
                   "n_train_per_category: 3}\n"
                   "features: [{name: f, extractor: array, key: feat}]\n"
                   "protocol: {name: comparison, n_train_pairs: 100}\n", "FaultyPairwise",
                   "{name: Good, ranker: ranksvm, C: 1.0}"),
    "retrieval": (f"dataset: {COLLECTION}\n"
                  "features: [{name: f, extractor: array, key: feat/type00}]\n"
                  "protocol: {name: retrieval, concepts: [Meeting, Computer_TV-screen]}\n", "FaultyItemScorer",
                  "{name: Good, ranker: logistic}"),
    "stacked_retrieval": (f"dataset: {COLLECTION}\n"
                          "features: [{name: a, extractor: array, key: feat/type00}, "
                          "{name: b, extractor: array, key: feat/type01}]\n"
                          "protocol: {name: stacked_retrieval, concepts: [Meeting, Computer_TV-screen], base_models: {ranker: svm_bank, "
                          "bags_per_type: 1, max_bag: 60, C: [1.0], gamma: [1.0]}}\n",
                          "FaultyItemScorer", "{name: Good, ranker: bipartite_rankboost, n_rounds: 3, combine: views}"),
    "classification": ("dataset: {name: two_spirals, n_positive: 30, n_negative: 30}\n"
                       "features: [{name: f, extractor: array}]\n"
                       "protocol: {name: classification, n_train_per_class: 8}\n", "FaultyClassifier",
                       "{name: Good, ranker: logistic}"),
    "video_classification": (f"dataset: {{name: '{PLUGIN}:TinyTracks'}}\n"
                             "features: [{name: f, extractor: array, key: feat}]\n"
                             "protocol: {name: video_classification}\n", "FaultyClassifier",
                             "{name: Good, ranker: logistic}"),
}


def config(protocol: str, fault: str, armed: Path | None = None, trials: int = 2) -> str:
    head, cls, good = SETUPS[protocol]
    combine = ", combine: views" if protocol == "stacked_retrieval" else ""
    arm = f", armed: '{armed}'" if armed else ""
    return (head + f"trials: {trials}\nrankers:\n  - {{name: Bad, ranker: '{PLUGIN}:{cls}', fault: '{fault}'{arm}{combine}}}\n"
            f"  - {good}\nexpected:\n  - {{method: Bad, metric: {protocols.get(protocol).headline}, value: 0.5, "
            "tolerance: 0.5}\n")


def test_every_registered_protocol_has_a_setup():
    assert set(SETUPS) == set(protocols.names())


@pytest.fixture
def shared_cache(monkeypatch, tmp_path_factory):
    """One cache for the whole sweep (features and base models are computed once)."""
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path_factory.getbasetemp() / "faults-cache"))


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("protocol", sorted(SETUPS))
def test_a_misbehaving_ranker_is_named_and_contained(cli, shared_cache, tmp_path, protocol, fault):
    path, out = tmp_path / "c.yaml", tmp_path / "run"
    path.write_text(config(protocol, fault))
    res = cli("run", path, "--out", out, "--no-plots")
    assert res.exit_code == 1, res.output
    assert "Traceback" not in res.output
    phase, says = SAYS[fault]
    failed_lines = [line for line in res.output.splitlines() if " error: " in line and " FAILED in " in line]
    assert len(failed_lines) == 2, res.output                       # one line per failed job
    for t, line in enumerate(sorted(failed_lines)):
        assert f"Bad trial {t} FAILED in {phase}: " in line and says in line, line
    assert res.output.strip().splitlines()[-1].startswith("rankbench: error: 2 of 4 jobs failed (Bad;")
    records, problems = RunFolder(out).read_trials()
    assert not problems
    ok = sorted((r.method, r.trial) for r in records if r.ok)
    bad = [r for r in records if not r.ok]
    assert ok == [("Good", 0), ("Good", 1)]                          # the sound method was computed
    assert sorted(r.trial for r in bad) == [0, 1] and all(r.method == "Bad" and r.phase == phase for r in bad)
    assert all(says in r.error and r.traceback for r in bad)
    assert "| Bad | " in res.output and "FAILED" in res.output       # graded FAILED in the summary
    check = cli("check", out)
    assert check.exit_code == 1 and "FAILED" in check.output


@pytest.mark.parametrize("protocol", sorted(SETUPS))
def test_resume_retries_only_the_failed_jobs(cli, shared_cache, tmp_path, protocol):
    """The fault is armed by a file; with the file gone (the ranker fixed), --resume computes the
    failed jobs and leaves every finished one as it was. Local processes for one protocol."""
    armed = tmp_path / "armed"
    armed.write_text("")
    path, out = tmp_path / "c.yaml", tmp_path / "run"
    path.write_text(config(protocol, "fit", armed))
    jobs = ["--jobs", "2"] if protocol == "reid" else []
    assert cli("run", path, "--out", out, "--no-plots", *jobs).exit_code == 1
    folder = RunFolder(out)
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.trials_dir.glob("*.json")}
    records, _ = folder.read_trials()
    good = {folder.trial_path(*r.key).name for r in records if r.ok}
    assert len(good) == 2 and len(before) == 4
    armed.unlink()
    res = cli("run", "--resume", out, "--no-plots", *jobs)
    assert res.exit_code == 0, res.output
    after = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.trials_dir.glob("*.json")}
    assert all(after[name] == before[name] for name in good)        # finished jobs untouched
    assert all(after[name] != before[name] for name in set(before) - good)
    assert all(r.ok for r in folder.read_trials()[0]) and cli("check", out).exit_code == 0


@pytest.mark.parametrize("cls, says", [("Abstract", "Can't instantiate abstract class Abstract"),
                                       ("InitRaises", "RuntimeError: broken on purpose in __init__")])
def test_an_outside_ranker_that_cannot_be_built_is_contained(cli, shared_cache, tmp_path, cls, says):
    """Found when planning: validate names it; run computes the other method and records every
    job of this one as failed in its build."""
    path, out = tmp_path / "c.yaml", tmp_path / "run"
    head, _, good = SETUPS["reid"]
    path.write_text(head + f"trials: 2\nrankers:\n  - {{name: Bad, ranker: '{PLUGIN}:{cls}'}}\n  - {good}\n")
    res = cli("validate", path)
    assert res.exit_code == 1 and res.output.strip().splitlines() == [
        f"rankbench: error: {path}: rankers.Bad: the ranker cannot be built: " + res.output.split("built: ", 1)[1].strip()]
    assert says in res.output
    res = cli("run", path, "--out", out, "--no-plots")
    assert res.exit_code == 1 and "Traceback" not in res.output
    records, _ = RunFolder(out).read_trials()
    assert sorted((r.method, r.status, r.phase) for r in records) == [
        ("Bad", "failed", "build"), ("Bad", "failed", "build"), ("Good", "ok", None), ("Good", "ok", None)]
    assert all(says in r.error for r in records if not r.ok)


def test_a_module_that_exits_on_import_is_one_line(cli, tmp_path):
    path, out = tmp_path / "c.yaml", tmp_path / "run"
    head, _, good = SETUPS["reid"]
    module = PLUGIN.parent / "exits_on_import.py"
    path.write_text(head + f"trials: 2\nrankers:\n  - {{name: Bad, ranker: '{module}:R'}}\n  - {good}\n")
    for command in (("validate", path), ("run", path, "--out", out)):
        res = cli(*command)
        assert res.exit_code == 1 and len(res.output.strip().splitlines()) == 1, res.output
        assert "rankers.Bad.ranker: importing" in res.output and "the module called sys.exit(3)" in res.output
    assert not out.exists()


# ----------------------------------------------------------------------------- records corrupted
@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """A finished run folder (re-identification, L1, 2 trials) and its first record's JSON."""
    import os

    from rankbench import app

    base = tmp_path_factory.mktemp("finished")
    os.environ.setdefault("RANKBENCH_CACHE", str(base / "cache"))
    path = base / "c.yaml"
    head, _, good = SETUPS["reid"]
    path.write_text(head + f"trials: 2\nrankers:\n  - {good}\n")
    app.run(path, out=base / "run", options=app.EngineOptions(progress=False), plots=False)
    folder = RunFolder(base / "run")
    first = folder.trial_path("", 0, "Good")
    return base / "run", first.name, json.loads(first.read_text())


WRONG_TYPE = {str: 5, int: "7", float: "high", dict: [1], list: {"a": 1}, bool: 1, type(None): 5}


def _value_corruptions(rec: dict) -> dict[str, object]:
    """Per field: a value of the right type that is wrong for this record or this run."""
    return {"schema_version": 99, "setting": "protocol.n_test=3", "trial": 7, "method": "Nope",
            "seed": rec["seed"] + 1, "ranker_seed": rec["ranker_seed"] + 1, "status": "maybe",
            "metrics": {}, "curves": {"cmc": [float("nan")]}, "wall_s": -1.0,
            "warnings": [{"text": "x", "count": 0}], "config_fingerprint": "0" * 32, "error": "boom",
            "phase": "fit", "traceback": "Traceback: boom",
            "reused": {"run": None, "setting": "", "trial": -1, "method": rec["method"], "at": "2026-01-01"}}


def _corruptions() -> list[tuple[str, object]]:
    """(case id, how to corrupt a record dict in place) for every field of a finished record."""
    from rankbench.runfolder import TrialRecord

    cases = []
    fields = list(TrialRecord.model_fields)
    for key in fields:
        cases.append((f"{key}-missing", lambda r, k=key: r.pop(k)))
        cases.append((f"{key}-type", lambda r, k=key: r.__setitem__(k, WRONG_TYPE[type(r[k])])))
        if key != "extra":  # extra is the protocol's free-form mapping: only its type is checked
            cases.append((f"{key}-value", lambda r, k=key: r.__setitem__(k, _value_corruptions(r)[k])))
    cases.append(("unknown-key", lambda r: r.__setitem__("colour", "red")))
    cases += [
        ("metric-text", lambda r: r["metrics"].__setitem__("cmc@1", "high")),
        ("metric-nan", lambda r: r["metrics"].__setitem__("cmc@1", float("nan"))),
        ("metric-rate-above-1", lambda r: r["metrics"].__setitem__("cmc@1", 1.5)),
        ("metric-negative-cost", lambda r: r["metrics"].__setitem__("train_s", -0.5)),
        ("metric-undeclared", lambda r: r["metrics"].__setitem__("bogus", 0.5)),
        ("metric-bool", lambda r: r["metrics"].__setitem__("nauc", True)),
        ("curve-text", lambda r: r["curves"]["cmc"].__setitem__(0, "x")),
        ("status-failed-with-metrics", lambda r: r.update(status="failed", error="boom")),
        ("trial-negative", lambda r: r.__setitem__("trial", -1)),
        ("trial-bool", lambda r: r.__setitem__("trial", False)),
    ]
    return cases


CORRUPTIONS = _corruptions()
FILE_CORRUPTIONS = ["truncated", "empty", "binary", "not-an-object", "renamed"]


def _assert_rejected_like_a_corrupt_file(cli, run: Path, name: str, original: dict) -> None:
    folder = RunFolder(run)
    records, problems = folder.read_trials()
    assert [p.path.name for p in problems] == [name]
    assert ("", 0, "Good") not in {r.key for r in records if r.ok}
    res = cli("report", run, "--no-plots")
    assert res.exit_code == 0 and f"**Unusable result file** `{name}`" in res.output
    assert "| Good | 1 |" not in res.output and "1 trial(s)" in res.output    # left out of the summary
    assert cli("check", run).exit_code == 1                                   # not a complete run
    res = cli("run", "--resume", run, "--no-plots", "-q")                     # recomputed
    assert res.exit_code == 0, res.output
    again = json.loads((folder.trials_dir / name).read_text())
    assert again["metrics"]["cmc@1"] == original["metrics"]["cmc@1"] and not folder.read_trials()[1]


@pytest.mark.parametrize("case, corrupt", CORRUPTIONS, ids=[c[0] for c in CORRUPTIONS])
def test_every_record_field_corrupted_is_rejected(cli, finished_run, tmp_path, case, corrupt):
    import copy

    run, name, original = finished_run
    shutil.copytree(run, tmp_path / "run")
    rec = copy.deepcopy(original)
    corrupt(rec)
    (tmp_path / "run" / "trials" / name).write_text(json.dumps(rec))
    _assert_rejected_like_a_corrupt_file(cli, tmp_path / "run", name, original)


@pytest.mark.parametrize("case", FILE_CORRUPTIONS)
def test_a_corrupt_record_file_is_rejected(cli, finished_run, tmp_path, case):
    run, name, original = finished_run
    shutil.copytree(run, tmp_path / "run")
    path = tmp_path / "run" / "trials" / name
    text = json.dumps(original)
    if case == "renamed":  # trial 1's record under trial 0's name
        other = RunFolder(tmp_path / "run").trial_path("", 1, "Good")
        path.write_bytes(other.read_bytes())
    else:
        path.write_bytes({"truncated": text[: len(text) // 2].encode(), "empty": b"", "binary": b"\xff\xfe\x00x",
                          "not-an-object": b"[1, 2]"}[case])
    _assert_rejected_like_a_corrupt_file(cli, tmp_path / "run", name, original)


def _splits_corruptions() -> list[tuple[str, object]]:
    """(case id, how to corrupt splits.json's dict in place): every key of the file, of a setting
    and of a trial's split that the engine and the reports rely on."""
    s0 = lambda d: d["settings"][0]  # noqa: E731
    t0 = lambda d: s0(d)["trials"][0]  # noqa: E731
    cases = [("schema_version-value", lambda d: d.__setitem__("schema_version", 99)),
             ("settings-missing", lambda d: d.pop("settings")), ("settings-empty", lambda d: d.__setitem__("settings", [])),
             ("unknown-key", lambda d: d.__setitem__("colour", 1)),
             ("setting-twice", lambda d: d["settings"].append(dict(s0(d))))]
    for key, bad in (("label", 5), ("values", [1]), ("n_items", 0), ("dataset_fingerprint", 5), ("trials", [])):
        cases += [(f"setting.{key}-missing", lambda d, k=key: s0(d).pop(k)),
                  (f"setting.{key}-wrong", lambda d, k=key, b=bad: s0(d).__setitem__(k, b))]
    cases.append(("setting.unknown-key", lambda d: s0(d).__setitem__("colour", 1)))
    for key, bad in (("trial", 3), ("seed", -1), ("ranker_seed", "x"), ("train", [1.5]), ("probe", [-1]),
                     ("gallery", [10_000])):
        cases += [(f"trial.{key}-wrong", lambda d, k=key, b=bad: t0(d).__setitem__(k, b))]
    cases += [("trial.trial-missing", lambda d: t0(d).pop("trial")), ("trial.seed-missing", lambda d: t0(d).pop("seed"))]
    return cases


SPLITS_CORRUPTIONS = _splits_corruptions()


@pytest.mark.parametrize("case, corrupt", SPLITS_CORRUPTIONS, ids=[c[0] for c in SPLITS_CORRUPTIONS])
def test_every_splits_field_corrupted_is_refused(cli, finished_run, tmp_path, case, corrupt):
    """The splits define the trials: a run whose splits.json is not valid cannot be reported or
    resumed; both say so in one line naming the file."""
    run, _, _ = finished_run
    shutil.copytree(run, tmp_path / "run")
    path = tmp_path / "run" / "splits.json"
    data = json.loads(path.read_text())
    corrupt(data)
    path.write_text(json.dumps(data))
    for command in (("report", tmp_path / "run", "--no-plots"), ("run", "--resume", tmp_path / "run")):
        res = cli(*command)
        lines = res.output.strip().splitlines()
        assert res.exit_code == 1 and len(lines) == 1 and "splits.json: " in lines[0], res.output


MANIFEST_FIELDS = ["schema_version", "rankbench_version", "config_fingerprint", "config", "start", "sessions",
                   "n_results", "complete", "data_root"]


@pytest.mark.parametrize("how", ["missing", "type"])
@pytest.mark.parametrize("key", MANIFEST_FIELDS)
def test_every_manifest_field_corrupted_is_reported_and_refused(cli, finished_run, tmp_path, key, how):
    """The manifest vouches for the run (its config, its version): a report says it is unusable,
    --resume refuses it."""
    run, _, _ = finished_run
    shutil.copytree(run, tmp_path / "run")
    path = tmp_path / "run" / "manifest.json"
    data = json.loads(path.read_text())
    if how == "missing":
        data.pop(key)
    else:
        data[key] = WRONG_TYPE[type(data[key])]
    path.write_text(json.dumps(data))
    res = cli("report", tmp_path / "run", "--no-plots")
    assert res.exit_code == 0 and "**Unusable manifest** `manifest.json`" in res.output
    res = cli("run", "--resume", tmp_path / "run")
    assert res.exit_code == 1 and "manifest.json: not a usable manifest" in res.output


# ----------------------------------------------------------------------------- app.evaluate
def _faulty(protocol: str, fault: str):
    """The protocol's faulty ranker as an object, and its config as a mapping (without the faulty entry)."""
    import importlib.util

    import yaml

    spec = importlib.util.spec_from_file_location("faulty_objects", PLUGIN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    head, cls, good = SETUPS[protocol]
    data = yaml.safe_load(head + f"trials: 2\nrankers:\n  - {good}\n")
    return getattr(module, cls)(fault=fault), data


EVALUATE_CASES = [("reid", f) for f in FAULTS] + [(p, "nan") for p in sorted(SETUPS) if p != "reid"]


@pytest.mark.parametrize("protocol, fault", EVALUATE_CASES)
def test_evaluate_raises_on_failed_jobs_naming_method_trial_and_fault(shared_cache, protocol, fault):
    """What the command line exits 1 for, app.evaluate raises for: one line naming the method,
    the first failed trial, its phase and error, the other failed trials; never a partial table."""
    from rankbench import app
    from rankbench.errors import JobsFailed

    obj, data = _faulty(protocol, fault)
    combine = {"combine": "views"} if protocol == "stacked_retrieval" else {}
    with pytest.raises(JobsFailed) as err:
        app.evaluate(obj, data, name="Bad", progress=False, **combine)
    phase, says = SAYS[fault]
    line = str(err.value)
    assert "\n" not in line and line.startswith(f"evaluate: 2 of 2 jobs failed: Bad trial 0 FAILED in {phase}: ")
    assert says in line and "also trial 1" in line
    assert [f[:4] for f in err.value.failed] == [("", 0, "Bad", phase), ("", 1, "Bad", phase)]
    assert err.value.trials.empty and err.value.summary.empty


class FailsOn:
    """L1 matching that returns a NaN when seeded with one of ``seeds`` (so in chosen trials only)."""

    def __init__(self, seeds=(), random_state=None):
        self.seeds, self.random_state = seeds, random_state

    def get_params(self, deep=True):
        return {"seeds": self.seeds, "random_state": self.random_state}

    def set_params(self, **params):
        self.__dict__.update(params)
        return self

    def fit(self, X, y, cams=None):
        return self

    def similarity(self, Q, G):
        import numpy as np
        from scipy.spatial.distance import cdist

        S = -cdist(Q, G, "cityblock")
        if self.random_state in self.seeds:
            S[0, 0] = np.nan
        return S


def test_evaluate_keeps_what_finished_when_some_trials_fail(shared_cache, tmp_path):
    """NaN in trials 1 and 3 of 4: the error carries trials 0 and 2, each equal to a clean run's,
    and names both failed trials; with out= the folder keeps them and says which failed."""
    from rankbench import app
    from rankbench.errors import JobsFailed
    from rankbench.runfolder import RunFolder
    from rankbench.utils.seeds import ranker_seed

    _, data = _faulty("reid", "nan")
    data["trials"] = 4
    clean, _ = app.evaluate(FailsOn(), data, name="M", progress=False)
    seeds = tuple(ranker_seed(data.get("seed", 0), t) for t in (1, 3))
    with pytest.raises(JobsFailed) as err:
        app.evaluate(FailsOn(seeds), data, name="M", out=tmp_path / "run", progress=False)
    e = err.value
    assert str(e).startswith("evaluate: 2 of 4 jobs failed: M trial 1 FAILED in score: similarity returned 1 "
                             "non-finite") and "also trial 3" in str(e) and str(tmp_path / "run") in str(e)
    assert [f[1] for f in e.failed] == [1, 3] and sorted(set(e.trials["trial"])) == [0, 2]
    kept = clean[clean["trial"].isin([0, 2])].reset_index(drop=True)
    quality = ~e.trials["metric"].isin(["train_s", "test_s", "peak_mb"])
    assert e.trials[quality].reset_index(drop=True).equals(kept[~kept["metric"].isin(["train_s", "test_s", "peak_mb"])]
                                                           .reset_index(drop=True))
    records, _ = RunFolder(tmp_path / "run").read_trials()
    assert sorted((r.trial, r.status) for r in records) == [(0, "ok"), (1, "failed"), (2, "ok"), (3, "failed")]
    assert e.folder == tmp_path / "run"


@pytest.mark.parametrize("jobs", [0, -1, 2.5, "2", True, None])
def test_evaluate_refuses_jobs_as_the_command_line_does(cli, shared_cache, tmp_path, jobs):
    from rankbench import app
    from rankbench.errors import ConfigError

    obj, data = _faulty("reid", "off")
    with pytest.raises(ConfigError, match=r"^jobs: expected an integer >= 1, got "):
        app.evaluate(obj, data, jobs=jobs, out=tmp_path / "run", progress=False)
    assert not (tmp_path / "run").exists()
    if isinstance(jobs, int) and not isinstance(jobs, bool):       # the same values refused there
        path = tmp_path / "c.yaml"
        path.write_text(config("reid", "off"))
        res = cli("run", path, "--jobs", jobs, "--out", tmp_path / "run")
        assert res.exit_code == 2 and "--jobs" in res.output and not (tmp_path / "run").exists()


class Uncopyable(FailsOn):
    """get_params names a parameter its __init__ does not take: no copy can be made."""

    def __init__(self):
        super().__init__()

    def get_params(self, deep=True):
        return {"scale": 1.0}


def test_evaluate_refuses_an_estimator_it_cannot_copy_before_any_job(shared_cache, tmp_path):
    from rankbench import app
    from rankbench.errors import ConfigError

    _, data = _faulty("reid", "off")
    with pytest.raises(ConfigError, match="the ranker cannot be built: TypeError: .*'scale'"):
        app.evaluate(Uncopyable(), data, out=tmp_path / "run", progress=False)
    assert not (tmp_path / "run").exists()


def test_a_run_whose_every_job_failed_is_an_error(cli, shared_cache, tmp_path):
    """The command line: exit 1, one error line; Python: JobsFailed naming the failed jobs; the
    records are kept for --resume either way."""
    from rankbench import app
    from rankbench.errors import JobsFailed

    path, out = tmp_path / "c.yaml", tmp_path / "run"
    head, cls, _ = SETUPS["reid"]
    path.write_text(head + f"trials: 2\nrankers:\n  - {{name: Bad, ranker: '{PLUGIN}:{cls}', fault: fit}}\n")
    res = cli("run", path, "--out", out, "--no-plots")
    errors = [line for line in res.output.splitlines() if line.startswith("rankbench: error: ")]
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert len(errors) == 1 and errors[0].startswith("rankbench: error: 2 of 2 jobs failed (Bad;")
    with pytest.raises(JobsFailed, match=r"^2 of 2 jobs failed \(Bad;") as err:
        app.run(path, out=tmp_path / "py", options=app.EngineOptions(progress=False), plots=False)
    assert [f[1:4] for f in err.value.failed] == [(0, "Bad", "fit"), (1, "Bad", "fit")]
    assert len(RunFolder(tmp_path / "py").read_trials()[0]) == 2

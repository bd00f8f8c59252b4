"""A run logged to a local MLflow store, read back through MLflow's own client."""

import builtins
import json

import pytest

from rankbench import app
from rankbench.errors import ConfigError
from rankbench.report.mlflow_store import flat_params, mlflow_name

mlflow = pytest.importorskip("mlflow", reason="the optional extra rankbench[mlflow] (installed by the test extra)")


def _read(store):
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=store.resolve().as_uri())
    exp = client.get_experiment_by_name("rankbench/reid_sweep")
    assert exp is not None
    runs = client.search_runs([exp.experiment_id])
    parents = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    children = [r for r in runs if "mlflow.parentRunId" in r.data.tags]
    return client, parents, children


def test_a_run_in_mlflow_holds_the_runs_numbers_parameters_and_files(runs, tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    folder, store = runs["sweep"], tmp_path / "mlruns"
    parent_id = app.export(folder, "mlflow", store).run_id
    client, parents, children = _read(store)
    doc = json.loads((folder / "results.json").read_text())

    (parent,) = parents
    assert parent.info.run_id == parent_id and parent.info.status == "FINISHED"
    assert parent.data.params["trials"] == "2" and parent.data.params["protocol.name"] == "reid"
    assert parent.data.tags["rankbench.folder"] == doc["run"]["folder"]
    files = {a.path for a in client.list_artifacts(parent_id)}
    assert {"config.yaml", "results.json", "manifest.json", "plots"} <= files
    assert any(a.path.endswith(".png") for a in client.list_artifacts(parent_id, "plots"))

    # one child per (setting, method): 3 n_test settings x 2 methods, each with its swept value
    assert len(children) == 6 and {c.data.tags["mlflow.parentRunId"] for c in children} == {parent_id}
    for row in doc["summary"]:
        (child,) = [c for c in children if c.data.tags["rankbench.method"] == row["method"]
                    and c.data.tags["rankbench.setting"] == row["setting"]]
        key = mlflow_name(row["metric"])
        assert child.data.metrics[key] == pytest.approx(row["mean"], rel=1e-12)
        history = client.get_metric_history(child.info.run_id, f"{key}.trial")
        ours = {t["trial"]: t["value"] for t in doc["trials"]
                if (t["setting"], t["method"], t["metric"]) == (row["setting"], row["method"], row["metric"])}
        assert {m.step: m.value for m in history} == pytest.approx(ours, rel=1e-12)
        n_test = next(s["values"] for s in doc["settings"] if s["label"] == row["setting"])["protocol.n_test"]
        assert child.data.params["setting.protocol.n_test"] == str(n_test)


def test_the_command_line_logs_a_run_and_a_second_export_adds_a_second_parent(runs, tmp_path, cli):
    store = tmp_path / "store"
    for _ in range(2):
        res = cli("export", runs["sweep"], "--format", "mlflow", "--out", store)
        assert res.exit_code == 0, res.output
        assert f"logged to the MLflow store {store}" in res.output
    _, parents, children = _read(store)
    assert len(parents) == 2 and len(children) == 12


def test_names_and_parameters_in_mlflows_alphabet():
    assert mlflow_name("cmc@1") == "cmc_at_1"
    assert mlflow_name("pair_acc/Smiling") == "pair_acc/Smiling"
    assert mlflow_name("ap@100/a+b") == "ap_at_100/a_b"
    assert flat_params({"protocol": {"name": "reid", "ranks": [1, 5]}, "seed": 0, "x": None}) == \
        {"protocol.name": "reid", "protocol.ranks": "[1, 5]", "seed": "0"}


def test_without_mlflow_installed_one_line_says_how_to_get_it(monkeypatch, tmp_path, runs):
    real = builtins.__import__

    def no_mlflow(name, *args, **kwargs):
        if name == "mlflow" or name.startswith("mlflow."):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_mlflow)
    with pytest.raises(ConfigError, match=r"MLflow is not installed; install the extra: pip install 'rankbench\[mlflow\]'"):
        app.mlflow_ready()
    with pytest.raises(ConfigError, match="MLflow is not installed"):
        app.export(runs["one"], "mlflow", tmp_path / "store")
    assert not (tmp_path / "store").exists()


def test_five_exports_into_one_new_store_at_once_make_one_experiment(runs, tmp_path):
    """Five processes exporting into one new store at once: each succeeds and the store holds one
    experiment of the run's name with five parent runs (MLflow alone failed or made it twice)."""
    import os
    import subprocess
    import sys

    store = tmp_path / "store"
    env = {**os.environ, "MLFLOW_ALLOW_FILE_STORE": "true"}
    procs = [subprocess.Popen([sys.executable, "-m", "rankbench", "export", str(runs["one"]), "--format", "mlflow",
                               "--out", str(store)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True) for _ in range(5)]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    assert [p.returncode for p in procs] == [0] * 5, outs
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=store.resolve().as_uri())
    names = [e.name for e in client.search_experiments()]
    (exp,) = [e for e in client.search_experiments() if e.name.startswith("rankbench/")]
    assert names.count(exp.name) == 1
    parents = [r for r in client.search_runs([exp.experiment_id]) if "mlflow.parentRunId" not in r.data.tags]
    assert len(parents) == 5 and not (store / ".rankbench.lock").exists()


@pytest.mark.parametrize("text", ["{", "just text", "", "name: x\n"])
def test_a_corrupt_experiment_file_is_one_line_naming_it(runs, tmp_path, cli, text):
    store = tmp_path / "store"
    assert cli("export", runs["one"], "--format", "mlflow", "--out", store).exit_code == 0
    (meta,) = [p for p in store.glob("*/meta.yaml") if "rankbench/" in p.read_text()]
    meta.write_text(text)
    res = cli("export", runs["one"], "--format", "mlflow", "--out", store)
    lines = res.output.strip().splitlines()
    assert res.exit_code == 1 and len(lines) == 1 and "Traceback" not in res.output, res.output
    assert lines[0].startswith(f"rankbench: error: {meta}: not a usable MLflow experiment file")

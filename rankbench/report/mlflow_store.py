"""A run folder logged to a local MLflow tracking store (``rankbench export RUN --format mlflow``).

MLflow is an optional extra (``pip install 'rankbench[mlflow]'``, the ``mlflow-skinny`` client). The
layout follows MLflow's own conventions for a sweep:

* one MLflow *experiment* per rankbench config name (``rankbench/<name>``);
* one *parent run* per run folder, tagged with the rankbench version, commit, command and folder,
  with the resolved config's scalar parameters as params (``trials``, ``seed``,
  ``protocol.n_test``...) and the run's own files as artifacts (``config.yaml``, ``results.json``,
  ``summary.md``, ``manifest.json`` and ``plots/``);
* one nested *child run* per (setting, method): the method's ranker parameters and the setting's
  swept values as params, every metric's mean over trials as a metric and each trial's value as
  that metric's history (step = trial), plus ``<metric>.std``.

MLflow's metric and parameter names allow letters, digits and ``_-. :/``; rankbench's ``cmc@1``
becomes ``cmc_at_1`` and anything else outside that set ``_`` (:func:`mlflow_name`). The store is a
folder (MLflow's file store, which MLflow keeps in maintenance mode: it is what a folder of runs
without a database server is). Logging the same run folder twice makes a second parent run: MLflow
runs are records of events, not a mirror. Several exports into one store at once take turns to find
or make their experiment (a lock file in the store), so it is made once; an experiment file MLflow
cannot read is one line naming it.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

import yaml

from ..errors import ConfigError, DataError
from ..utils.fileio import FileLock

#: the run folder's files copied into the parent run's artifacts (when present)
ARTIFACT_FILES = ("config.yaml", "results.json", "summary.md", "manifest.json")


def mlflow_name(key: str) -> str:
    """A rankbench metric or parameter name in MLflow's alphabet (``cmc@1`` -> ``cmc_at_1``)."""
    return re.sub(r"[^A-Za-z0-9_\-. :/]", "_", key.replace("@", "_at_"))


def flat_params(data: Any, prefix: str = "") -> dict[str, str]:
    """The scalar leaves of a nested mapping as ``a.b.c: value`` strings (lists written whole),
    as MLflow params take them (at most 6,000 characters each)."""
    out: dict[str, str] = {}
    if isinstance(data, dict):
        for k, v in data.items():
            out.update(flat_params(v, f"{prefix}{k}."))
    elif data is not None:
        out[mlflow_name(prefix[:-1])] = str(data)[:6000]
    return out


def require_mlflow() -> None:
    """A ConfigError line when the MLflow client is not installed (checked before a run starts)."""
    try:
        import mlflow.tracking  # noqa: F401
    except ImportError:
        raise ConfigError("mlflow: MLflow is not installed; install the extra: pip install 'rankbench[mlflow]' "
                          "(or mlflow-skinny)") from None


def _client(store: Path):
    require_mlflow()
    from mlflow.tracking import MlflowClient

    # a folder store: MLflow's file backend, in maintenance mode but supported on request
    os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    store.mkdir(parents=True, exist_ok=True)
    return MlflowClient(tracking_uri=store.resolve().as_uri())


def _check_experiments(store: Path) -> None:
    """Each experiment's ``meta.yaml`` in the store is a mapping naming its experiment (what MLflow
    reads to find one by name); else a DataError naming the file, instead of MLflow's traceback."""
    for meta in sorted(store.glob("*/meta.yaml")):
        try:
            data = yaml.safe_load(meta.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise DataError(f"{meta}: not a usable MLflow experiment file "
                            f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__}); "
                            "repair or remove it, or log into another store") from None
        if not isinstance(data, dict) or not {"name", "experiment_id"} <= set(data):
            raise DataError(f"{meta}: not a usable MLflow experiment file (expected a mapping with name and "
                            "experiment_id); repair or remove it, or log into another store")


def _experiment(store: Path, name: str):
    """(client, the id of experiment ``name``, made if missing). Several exports into one store at
    once take turns here (a lock file in the store), so an experiment is made once."""
    store.mkdir(parents=True, exist_ok=True)
    with FileLock(store / ".rankbench.lock", store):
        _check_experiments(store)
        client = _client(store)
        found = client.get_experiment_by_name(name)
        return client, found.experiment_id if found is not None else client.create_experiment(name)


def _log(client, run_id: str, params: dict[str, str], metrics: list) -> None:
    """``params`` and ``metrics`` logged in the batches MLflow takes (at most 100 params and 1,000
    metrics per call)."""
    from mlflow.entities import Param

    items = [Param(k, v) for k, v in params.items()]
    for i in range(0, len(items), 100):
        client.log_batch(run_id, params=items[i:i + 100])
    for i in range(0, len(metrics), 1000):
        client.log_batch(run_id, metrics=metrics[i:i + 1000])


def log_run(doc: dict[str, Any], config: dict[str, Any], folder: Path, store: Path) -> str:
    """Log a run (its results document ``doc``, resolved ``config`` and run ``folder``) into the
    MLflow store at ``store``; the parent run's id. A store MLflow cannot read is a DataError
    naming it (one line), never MLflow's traceback."""
    require_mlflow()
    from mlflow.exceptions import MlflowException

    try:
        return _log_run(doc, config, folder, store)
    except (MlflowException, yaml.YAMLError) as exc:
        line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise DataError(f"{store}: not a usable MLflow store ({type(exc).__name__}: {line})") from None


def _log_run(doc: dict[str, Any], config: dict[str, Any], folder: Path, store: Path) -> str:
    from mlflow.entities import Metric

    run = doc["run"]
    client, exp_id = _experiment(store, f"rankbench/{run['name']}")
    tags = {"rankbench.version": doc["rankbench"].get("version") or "", "rankbench.folder": run["folder"],
            "rankbench.protocol": run.get("protocol") or "", "rankbench.dataset": run.get("dataset") or "",
            "rankbench.complete": str(run.get("complete")), "mlflow.source.git.commit": doc["rankbench"].get("commit") or ""}
    if run.get("command"):
        tags["rankbench.command"] = run["command"][:5000]
    parent = client.create_run(exp_id, run_name=Path(run["folder"]).name, tags=tags)
    pid = parent.info.run_id
    top = {k: v for k, v in config.items() if k not in ("rankers", "expected", "claims", "known_gaps", "sweep",
                                                      "features", "description", "regress")}
    _log(client, pid, flat_params(top), [])
    for fname in ARTIFACT_FILES:
        if (folder / fname).is_file():
            client.log_artifact(pid, str(folder / fname))
    if (folder / "plots").is_dir() and any((folder / "plots").iterdir()):
        client.log_artifacts(pid, str(folder / "plots"), artifact_path="plots")

    rankers = {r.get("name"): r for r in config.get("rankers") or [] if isinstance(r, dict)}
    values = {s["label"]: s.get("values") or {} for s in doc["settings"]}
    trials: dict[tuple[str, str], list[dict]] = {}
    for t in doc["trials"]:
        trials.setdefault((t["setting"], t["method"]), []).append(t)
    children: dict[tuple[str, str], list[dict]] = {}
    for s in doc["summary"]:
        children.setdefault((s["setting"], s["method"]), []).append(s)
    for (setting, method), rows in children.items():
        child_params = {**flat_params({k: v for k, v in rankers.get(method, {}).items() if k != "name"}, "ranker."),
                        **flat_params(values.get(setting, {}), "setting.")}
        done = trials.get((setting, method), [])
        child = client.create_run(exp_id, run_name=f"{method}" + (f" [{setting}]" if setting else ""),
                                  tags={"mlflow.parentRunId": pid, "rankbench.method": method,
                                        "rankbench.setting": setting, "rankbench.trials": str(len({t["trial"] for t in done}))})
        cid = child.info.run_id
        now = int(time.time() * 1000)
        metrics = [Metric(mlflow_name(r["metric"]) + suffix, float(r[field]), now, 0)
                   for r in rows for field, suffix in (("mean", ""), ("std", ".std")) if r.get(field) is not None]
        metrics += [Metric(f"{mlflow_name(t['metric'])}.trial", float(t["value"]), now, int(t["trial"]))
                    for t in done if t.get("value") is not None]
        _log(client, cid, child_params, metrics)
        client.set_terminated(cid)
    client.set_terminated(pid)
    return pid

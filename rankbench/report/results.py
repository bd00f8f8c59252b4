"""``results.json``: one run's results as a machine-readable document a leaderboard can ingest.

Written by every report (so every run folder has one) and by ``rankbench export RUN --format json``.
The document (``SCHEMA_VERSION`` 1; a field is only ever added within a version, never renamed
or removed)::

    schema_version   1
    rankbench        {version, commit, dirty}: what computed the numbers
    run              {name, folder, config, started, ended, complete, trials, seed, dataset,
                      protocol, headline, command}
    settings         [{label, values}]: the sweep's settings in order ("" without a sweep)
    methods          the compared methods, in config order
    metrics          {name: {label, unit, rate, higher_is_better, cost}} of every metric present
                     (a per-task metric ``ap@100/<concept>`` by its family ``ap@100``; rates are
                     fractions in this file, as in every run file)
    summary          [{setting, method, metric, mean, std, n_trials}] (std null for one trial)
    trials           [{setting, trial, method, metric, value}]
    published        graded published numbers: [{method, metric, setting, published, tolerance,
                      ours, diff, grade, reason, source, ...}]
    claims           graded claims: [{kind, method, grade, reason, ...}]

Numbers that are not finite (a metric undefined in a trial) are null.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd

from ..metrics import metric_info, metric_label
from .tables import trials_frame

SCHEMA_VERSION = 1
RESULTS = "results.json"


def _clean(value: Any) -> Any:
    """JSON-safe: numpy scalars as Python numbers, NaN / inf as null, containers recursively."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def metric_declarations(names: set[str]) -> dict[str, dict[str, Any]]:
    """What each metric name is, from :mod:`rankbench.metrics`."""
    out = {}
    for name in sorted(names):
        info = metric_info(name)
        if info is not None:
            out[name] = {"label": metric_label(name, unit=False), "unit": "fraction" if info.rate else info.unit,
                         "rate": info.rate, "higher_is_better": info.higher_is_better, "cost": info.cost}
    return out


def results_document(run, summary: pd.DataFrame, headline: str | None, grades: list[dict],
                     claims: list[dict]) -> dict[str, Any]:
    """The document described in the module docstring, from a report's pieces (``run`` a
    :class:`~rankbench.report.build.RunData`)."""
    prov = run.provenance()
    trials = run.ordered(trials_frame(run.records))
    doc = {
        "schema_version": SCHEMA_VERSION,
        "rankbench": {"version": prov["version"], "commit": prov["commit"], "dirty": prov["dirty"]},
        "run": {"name": run.name, "folder": str(run.folder.concrete.path), "config": prov["config"],
                "started": prov["start"], "ended": prov["end"], "complete": run.complete,
                "trials": run.n_trials, "seed": run.config.get("seed", 0),
                "dataset": run.dataset_name, "protocol": run.protocol_name, "headline": headline,
                "command": prov["command"]},
        "settings": [{"label": s.label, "values": s.values} for s in run.settings],
        "methods": list(run.methods),
        "metrics": metric_declarations({m.split("/", 1)[0] for m in summary["metric"]}),
        "summary": summary.to_dict("records"),
        "trials": trials.to_dict("records"),
        "published": grades,
        "claims": claims,
    }
    return _clean(doc)


def results_json(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=1, allow_nan=False, ensure_ascii=False) + "\n"

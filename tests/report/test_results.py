"""results.json's pieces (report/results.py) that stand on their own: what each metric is declared
to be, and a document that never holds a NaN."""

import json
import math

import pytest

from rankbench.report.results import SCHEMA_VERSION, metric_declarations, results_json


def test_metric_declarations_by_hand():
    got = metric_declarations({"mae", "cmc@1", "train_s", "peak_mb", "not_a_metric"})
    assert list(got) == ["cmc@1", "mae", "peak_mb", "train_s"]          # sorted, unknown names left out
    assert got["cmc@1"] == {"label": "Matching rate at rank 1", "unit": "fraction", "rate": True,
                            "higher_is_better": True, "cost": False}
    assert got["mae"]["higher_is_better"] is False and got["mae"]["rate"] is False
    assert (got["train_s"]["unit"], got["train_s"]["cost"]) == ("s", True)
    assert (got["peak_mb"]["unit"], got["peak_mb"]["cost"]) == ("MB", True)


def test_results_json_round_trips_and_refuses_a_nan():
    doc = {"schema_version": SCHEMA_VERSION, "run": {"name": "café"}, "summary": [{"mean": 0.25, "std": None}]}
    text = results_json(doc)
    assert text.endswith("}\n") and "café" in text
    assert json.loads(text) == doc
    with pytest.raises(ValueError):
        results_json({"summary": [{"mean": math.nan}]})

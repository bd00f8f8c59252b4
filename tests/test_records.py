"""rankbench.records: the typed files of a run folder. Each rule of the module docstring is checked
on a hand-written file: what is accepted, and what is refused with one line naming the field."""

from __future__ import annotations

import json

import pytest

from rankbench.records import (SCHEMA_VERSION, Manifest, SettingSplits, Splits, TrialRecord, TrialSplit,
                               config_fingerprint)


def _trial(**change):
    base = {"setting": "p=5", "trial": 0, "method": "l1", "seed": 3, "wall_s": 0.5,
            "metrics": {"cmc@1": 0.25, "train_s": 1.5}}
    return {**base, **change}


def _refusal(model, data) -> str:
    with pytest.raises(ValueError) as err:
        model.parse(json.dumps(data)) if isinstance(data, dict) else model.parse(data)
    line = str(err.value)
    assert "\n" not in line
    return line


def test_a_built_trial_is_versioned_and_reads_back_equal():
    rec = TrialRecord.build(_trial())
    assert rec.schema_version == SCHEMA_VERSION and rec.ok and rec.key == ("p=5", 0, "l1")
    assert TrialRecord.parse(rec.to_json()) == rec


@pytest.mark.parametrize("change, field", [
    ({"metrics": {"cmc@1": 1.5}}, "metrics.cmc@1"),               # a rate above 1
    ({"metrics": {"train_s": -1.0}}, "metrics.train_s"),          # a negative cost
    ({"metrics": {"cmc@1": float("nan")}}, "metrics.cmc@1"),      # not finite
    ({"metrics": {"made_up": 0.1}}, "metrics.made_up"),           # not a declared metric
    ({"metrics": {}}, "metrics"),                                 # a finished trial holds one
    ({"trial": -1}, "trial"),
    ({"seed": "3"}, "seed"),                                      # strict: no coercion
    ({"method": ""}, "method"),
    ({"wall_s": -0.1}, "wall_s"),
    ({"status": "failed"}, "error"),                              # a failure names its error
    ({"error": "boom"}, "no error"),                              # a finished trial holds none
    ({"colour": "red"}, "colour: unknown field"),
])
def test_a_trial_that_breaks_a_rule_is_refused_naming_the_field(change, field):
    with pytest.raises(ValueError) as err:
        TrialRecord.build(_trial(**change))
    assert field in str(err.value) and "\n" not in str(err.value)


def test_a_failed_trial_holds_its_error_and_no_metrics():
    rec = TrialRecord.build(_trial(status="failed", metrics={}, error="ValueError: x", phase="fit"))
    assert not rec.ok and rec.phase == "fit"
    assert "no metrics" in _refusal(TrialRecord, {**json.loads(rec.to_json()), "metrics": {"cmc@1": 0.1}})
    assert "phase" in _refusal(TrialRecord, {**json.loads(rec.to_json()), "phase": "drying"})


def test_versions_legacy_files_read_newer_refused_current_complete():
    legacy = _trial()  # no schema_version: version 0, legacy keys only
    assert TrialRecord.parse(json.dumps(legacy)).schema_version == 0
    assert "status" in _refusal(TrialRecord, {**legacy, "status": "ok"})            # a newer key in a v0 file
    assert "newer rankbench" in _refusal(TrialRecord, {**legacy, "schema_version": SCHEMA_VERSION + 1})
    full = json.loads(TrialRecord.build(_trial()).to_json())
    del full["warnings"]
    assert _refusal(TrialRecord, full) == "warnings: missing field"
    v1 = json.loads(TrialRecord.build(_trial()).to_json())
    del v1["reused"]                                                                  # added in version 2
    assert TrialRecord.parse(json.dumps({**v1, "schema_version": 1})).reused is None
    assert "reused" in _refusal(TrialRecord, v1)
    assert _refusal(TrialRecord, "{").startswith("(top level): invalid JSON")


def _setting(**change):
    return {"label": "p=5", "values": {}, "n_items": 10, "dataset_fingerprint": None, "data_content": None,
            "protocol_files": None, "trials": [{"trial": 0, "seed": 1, "probe": [0, 1], "gallery": [2, 9], "extra": "kept"},
                       {"trial": 1, "seed": 2, "train": [3, 4]}], **change}


def test_splits_keep_protocol_keys_and_know_their_top_row():
    s = Splits.build({"settings": [_setting()]})
    old = {k: v for k, v in _setting().items() if k not in ("data_content", "protocol_files")}
    assert Splits.parse(json.dumps({"schema_version": 2, "settings": [old]})).setting("p=5").data_content is None
    with pytest.raises(ValueError, match="settings.0.data_content: missing field"):   # written since version 3
        Splits.parse(json.dumps({"schema_version": 3, "settings": [old]}))
    assert s.setting("p=5").top_row() == 9 and s.setting("other") is None
    assert s.setting("p=5").trials[0].extra == "kept"
    assert TrialSplit.model_validate({"trial": 0, "seed": 0}).top_row() == -1


@pytest.mark.parametrize("drawn", [
    {"base": [0], "boost": [1], "test": [2], "concepts": ["a"], "bank_seed": 3},   # stacked retrieval
    {"train": [0], "probe": [1], "gallery": [2, 3]},                               # re-identification
    {"train": [0], "test": [1], "train_sequences": [4], "constraints": [[0, 1, 1]], "kinds": ["active"]},
])
def test_a_split_is_typed_and_written_as_drawn(drawn):
    """Rows and the protocol's own keys read as attributes; splits.json holds exactly the keys
    drawn, in the order drawn (no row list a protocol did not draw)."""
    split = TrialSplit.drawn(drawn, trial=0, seed=5, ranker_seed=6)
    assert (split.fit_seed, split.probe is None or split.probe == [1]) == (6, True)
    assert all(getattr(split, k) == v for k, v in drawn.items())
    text = Splits.build({"settings": [_setting(trials=[split.model_dump()])]}).to_json()
    written = json.loads(text)["settings"][0]["trials"][0]
    assert list(written.items()) == list({"trial": 0, "seed": 5, "ranker_seed": 6, **drawn}.items())
    assert TrialSplit.model_validate({"trial": 0, "seed": 5}).fit_seed == 5


@pytest.mark.parametrize("setting, shown", [
    (_setting(n_items=9), "trials.0: row 9 is beyond the dataset's 9 items"),
    (_setting(trials=[{"trial": 1, "seed": 0}]), "trials.0.trial: expected 0"),
    (_setting(trials=[{"trial": 0, "seed": 0, "probe": [-1]}]), "trials.0.probe.0"),
    (_setting(trials=[]), "trials"),
])
def test_a_split_that_breaks_a_rule_is_refused_naming_the_trial(setting, shown):
    with pytest.raises(ValueError) as err:
        Splits.build({"settings": [setting]})
    assert shown in str(err.value) and "\n" not in str(err.value)


def test_a_setting_twice_is_refused():
    with pytest.raises(ValueError, match="'p=5' appears twice"):
        Splits.build({"settings": [_setting(), _setting()]})
    assert SettingSplits.model_validate(_setting()).n_items == 10


def test_the_config_fingerprint_ignores_key_order_and_sees_values():
    a = {"x": 1, "y": {"b": 2.0, "a": [1, 2]}}
    assert config_fingerprint(a) == config_fingerprint({"y": {"a": [1, 2], "b": 2.0}, "x": 1})
    assert config_fingerprint(a) != config_fingerprint({**a, "x": 2})
    m = Manifest.build({"rankbench_version": "1", "start": "now", "config": a,
                        "config_fingerprint": config_fingerprint(a)})
    assert m.config == a
    with pytest.raises(ValueError, match="config_fingerprint: does not match"):
        Manifest.build({"rankbench_version": "1", "start": "now", "config": {**a, "x": 2},
                        "config_fingerprint": config_fingerprint(a)})


@pytest.mark.parametrize("curve, said", [
    # series of 3 and 2 points were stored; check then failed with an IndexError traceback
    ({"x": [1.0, 2.0, 3.0], "ap": [0.1, 0.2]}, "curves.c: series of different lengths (x: 3, ap: 2)"),
    # a NaN in named series was 'curves.c.list[float]: input should be a valid array, got dict'
    ({"x": [1.0, 2.0], "ap": [0.1, float("nan")]}, "curves.c.ap.1: input should be a finite number, got nan"),
    ([0.1, float("nan")], "curves.c.1: input should be a finite number, got nan"),
])
def test_a_curve_is_one_series_or_named_series_of_one_length(curve, said):
    with pytest.raises(ValueError) as err:
        TrialRecord.build({"setting": "", "trial": 0, "method": "A", "seed": 0, "wall_s": 0.0,
                           "metrics": {"ap": 0.5}, "curves": {"c": curve}})
    assert str(err.value).startswith(said)

"""Tests."""


from pathlib import Path

import pytest

from rankbench.config import Overrides, load_experiment

CONFIGS = sorted((Path(__file__).resolve().parents[2] / "configs" / "yuli").glob("*.yaml"))
ROWS = {"umist_table2_s": 5, "umist_table3_K": 3, "umist_table4_d": 3, "umist_table5_n": 3,
        "fgnet_table6_K": 3, "fgnet_table7_n": 3}


def test_every_table_has_a_config():
    assert {p.stem for p in CONFIGS} == set(ROWS)


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_config_validates_and_grades_every_row(path):
    exp = load_experiment(path)
    cfg, settings = exp.config, exp.settings
    assert len(settings) == ROWS[path.stem]
    assert cfg.trials == 50
    labels = {s.label for s in settings}
    graded = {(e.method, e.setting) for e in cfg.expected if e.metric == "mae"}
    methods = [r.name for r in cfg.rankers if r.name in ("cMDS-DML", "LDMLR")]
    assert graded == {(m, s) for m in methods for s in labels}
    for e in cfg.expected:
        assert e.tolerance == (0.03 if path.stem.startswith("umist") else 0.08)
        assert "STD" in e.note
    if cfg.regress is not None:
        rcfg = load_experiment(path, Overrides(regress=True)).config
        assert rcfg.trials <= 10
        assert all(e.method == "cMDS-DML" for e in rcfg.expected)


def test_umist_configs_carry_the_derived_labels():
    for path in CONFIGS:
        if path.stem.startswith("umist"):
            labels = load_experiment(path).data["dataset"]["labels"]
            counts = {v: sum(1 for x in labels.values() if x == v) for v in (0, 1, 2)}
            assert len(labels) == 20 and counts == {0: 4, 1: 9, 2: 7}

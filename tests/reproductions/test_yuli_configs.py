"""Tests."""


from pathlib import Path

import pytest

from rankbench.config import Overrides, load_experiment

CONFIGS = sorted((Path(__file__).resolve().parents[2] / "configs" / "yuli").glob("*.yaml"))
ROWS = {"umist_table2_s": 5, "umist_table3_K": 3, "umist_table4_d": 3, "umist_table5_n": 3,
        "fgnet_table6_K": 3, "fgnet_table7_n": 3}
ROWS |= {f"authors_{k}": v for k, v in ROWS.items()}  # the authors' protocol beside the paper's text


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
        assert e.tolerance == (0.03 if "umist" in path.stem else 0.08)
        assert "STD" in e.note
    if cfg.regress is not None:
        rcfg = load_experiment(path, Overrides(regress=True)).config
        assert rcfg.trials <= 10
        # the paper-text LDMLR rows are known misses (its protocol, not the method); CI grades the
        # authors' protocol's LDMLR, which reproduces them
        methods = {e.method for e in rcfg.expected}
        assert methods == ({"cMDS-DML", "LDMLR"} if path.stem.startswith("authors") else {"cMDS-DML"})


def test_the_authors_protocol_is_what_their_code_and_data_say():
    for path in CONFIGS:
        if not path.stem.startswith("authors"):
            continue
        data = load_experiment(path).config
        assert data.protocol.params()["predict"] == "vote"
        feats = data.features[0].params()
        assert feats["transductive_pca"] in (80, 150, 200, 250)
        ld = [r.params() for r in data.rankers if r.name == "LDMLR"]
        for p in ld:
            assert (p["init"], p["p"], p["step_rule"], p["tol"]) == ("zero", 0.5, "fixed", 1e-3)
        cm = [r.params() for r in data.rankers if r.name == "cMDS-DML"][0]
        assert (cm["c_step"], cm["ftol"]) == ("authors", 5e-4)


def test_umist_configs_carry_the_derived_labels():
    for path in CONFIGS:
        if path.stem.startswith("umist"):
            labels = load_experiment(path).data["dataset"]["labels"]
            counts = {v: sum(1 for x in labels.values() if x == v) for v in (0, 1, 2)}
            assert len(labels) == 20 and counts == {0: 4, 1: 9, 2: 7}

"""Config loading: extends, --set, sweeps, and one-line errors naming file and key path."""

from pathlib import Path

import pytest

from rankbench.config import load_config, setting_configs, sweep_settings
from rankbench.errors import ConfigError

BASE = """
dataset: {name: synthetic_reid, n_people: 30}
features: [{name: colour, extractor: color_strips, bins: 8}]
protocol: {name: reid, trials: 2, n_test: 10}
rankers:
  - {name: L1, ranker: l1}
  - {name: Bha, ranker: bhattacharyya}
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_defaults_and_name_from_file(tmp_path):
    _, cfg = load_config(write(tmp_path, "exp.yaml", BASE))
    assert cfg.name == "exp" and cfg.protocol.trials == 2 and cfg.protocol.seed == 0
    assert cfg.rankers[0].combine == "concat"


def test_extends_merges_dicts_and_replaces_lists(tmp_path):
    write(tmp_path, "base.yaml", BASE)
    child = write(tmp_path, "child.yaml", "extends: base.yaml\nprotocol: {trials: 7}\n")
    _, cfg = load_config(child)
    assert cfg.protocol.trials == 7 and cfg.protocol.params()["n_test"] == 10
    assert cfg.name == "child"


def test_set_overrides_by_ranker_name_and_wildcard(tmp_path):
    p = write(tmp_path, "e.yaml", BASE.replace("{name: L1, ranker: l1}", "{name: E, ranker: euclidean, preprocess: [{name: pca, n_components: 5}]}"))
    data, cfg = load_config(p, ["protocol.n_test=12", "rankers.E.preprocess.0.n_components=3"])
    assert cfg.protocol.params()["n_test"] == 12
    assert cfg.rankers[0].preprocess[0]["n_components"] == 3


def test_sweep_settings_and_labels(tmp_path):
    p = write(tmp_path, "s.yaml", BASE + "sweep:\n  protocol.n_test: [5, 10]\n  features.colour.bins: [4, 8]\n")
    data, cfg = load_config(p)
    settings = setting_configs(data, cfg, str(p))
    assert [lbl for lbl, _ in settings] == [
        "protocol.n_test=5,features.colour.bins=4", "protocol.n_test=5,features.colour.bins=8",
        "protocol.n_test=10,features.colour.bins=4", "protocol.n_test=10,features.colour.bins=8"]
    assert settings[1][1].features[0].params()["bins"] == 8
    assert sweep_settings({}) == [("", {})]


@pytest.mark.parametrize("text, message", [
    (BASE + "bogus: 1\n", "bogus: unknown key"),
    (BASE.replace("trials: 2", "trials: two"), "protocol.trials: Input should be a valid integer"),
    (BASE.replace("ranker: l1", "ranker: nosuch"), "rankers.L1.ranker: unknown ranker 'nosuch'; valid rankers:"),
    (BASE.replace("name: reid", "name: nope"), "unknown protocol 'nope'"),
    (BASE.replace("n_people: 30", "n_peeple: 30"), "unknown parameter 'n_peeple'; allowed: n_people"),
    (BASE.replace("bins: 8", "binz: 8"), "features.colour: unknown parameter 'binz'"),
    (BASE + "sweep: {protocol.n_test: [1], protocol.trials: [1], protocol.seed: [1]}\n", "at most two"),
    (BASE.replace("ranker: l1}", "ranker: l1, features: nope}"), "unknown feature set 'nope'"),
])
def test_errors_are_one_line_with_file_and_key(tmp_path, text, message):
    p = write(tmp_path, "bad.yaml", text)
    with pytest.raises(ConfigError) as exc:
        load_config(p)
    msg = str(exc.value)
    assert message in msg and str(p) in msg and "\n" not in msg


def test_yaml_syntax_error_names_line(tmp_path):
    p = write(tmp_path, "syn.yaml", "dataset: {name: x\nprotocol: [\n")
    with pytest.raises(ConfigError, match=r"syn.yaml: YAML syntax error at line \d+"):
        load_config(p)


def test_missing_file_and_missing_set_key(tmp_path):
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "nope.yaml")
    p = write(tmp_path, "ok.yaml", BASE)
    with pytest.raises(ConfigError, match="no item named 'Nobody'"):
        load_config(p, ["rankers.Nobody.C=1"])
    with pytest.raises(ConfigError, match="unknown parameter 'nosuch'"):
        load_config(p, ["protocol.nosuch=3"])
    with pytest.raises(ConfigError, match="expected key.path=value"):
        load_config(p, ["protocol.n_test"])


def test_circular_extends(tmp_path):
    write(tmp_path, "a.yaml", "extends: b.yaml\n")
    write(tmp_path, "b.yaml", "extends: a.yaml\n")
    with pytest.raises(ConfigError, match="circular"):
        load_config(tmp_path / "a.yaml")


def test_every_shipped_config_validates():
    root = Path(__file__).resolve().parents[1] / "configs"
    configs = sorted(root.rglob("*.yaml"))
    assert configs
    for p in configs:
        data, cfg = load_config(p)
        setting_configs(data, cfg, str(p))
        if cfg.regress is not None:
            load_config(p, regress=True)


def test_exponent_without_dot_is_a_float(tmp_path):
    p = write(tmp_path, "f.yaml", BASE.replace("n_test: 10", "n_test: 10, ranks: [1e0]"))
    _, cfg = load_config(p, ["protocol.n_test=1e1"])
    assert cfg.protocol.params()["ranks"] == [1.0] and cfg.protocol.params()["n_test"] == 10.0

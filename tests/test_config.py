"""Config loading: extends, overrides, sweeps, and one-line errors naming file, key and expectation."""

import re
from pathlib import Path

import pytest
from toydata import synthetic_reid_config

from rankbench.config import ABSENT, Overrides, first_difference, load_experiment, sweep_settings
from rankbench.errors import ConfigError

BASE = "\n" + synthetic_reid_config(n_people=30, n_test=10, ranks=[1, 5], trials=2) + """\
rankers:
  - {name: L1, ranker: l1}
  - {name: Bha, ranker: bhattacharyya}
"""


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return p


def sets(*items):
    from rankbench.config import parse_set

    return Overrides([parse_set(i) for i in items])


def test_defaults_and_name_from_file(tmp_path):
    cfg = load_experiment(write(tmp_path, "exp.yaml", BASE)).config
    assert cfg.name == "exp" and cfg.trials == 2 and cfg.seed == 0
    assert cfg.rankers[0].combine == "concat"


def test_extends_merges_dicts_and_replaces_lists(tmp_path):
    write(tmp_path, "base.yaml", BASE)
    child = write(tmp_path, "child.yaml", "extends: base.yaml\ntrials: 7\nprotocol: {n_test: 12}\n")
    cfg = load_experiment(child).config
    assert cfg.trials == 7 and cfg.protocol.params() == {"n_test": 12, "ranks": [1, 5]}
    assert cfg.name == "child"


def test_a_plugin_file_is_taken_from_the_configs_folder(tmp_path, monkeypatch):
    # it was taken from the working folder: run from another folder holding a my_ranker.py of its
    # own, the config scored that file's class (cmc@1 3.33 where its own gives 16.67), at exit 0
    from rankbench.config import load_raw

    ranker = "class Mine:\n    pass\n"
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "my_ranker.py").write_text(ranker)
    write(tmp_path / "c", "base.yaml", "rankers: [{name: A, ranker: 'my_ranker.py:Mine'}]\n")
    cfg = write(tmp_path / "c", "mine.yaml", "extends: base.yaml\nfeatures: [{name: f, extractor: 'feat.py:F'}]\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    raw = load_raw(cfg)
    assert raw["rankers"][0]["ranker"] == f"{(tmp_path / 'c' / 'my_ranker.py').resolve()}:Mine"
    assert raw["features"][0]["extractor"] == "feat.py:F"   # not beside the config: the working folder's
    (elsewhere / "my_ranker.py").write_text(ranker + "# another file\n")
    with pytest.raises(ConfigError, match=r"base.yaml: 'my_ranker.py:Mine': my_ranker.py is both beside the config "
                                          r".* and in the working folder .*, two different files"):
        load_raw(cfg)
    monkeypatch.chdir(tmp_path / "c")
    assert load_raw(cfg)["rankers"][0]["ranker"].endswith("/c/my_ranker.py:Mine")   # the same file twice


def test_known_gaps_name_claims_of_a_shared_list_and_extend_with_the_config(tmp_path):
    """A shared claim list in a base, each config's documented gaps beside it (a mapping: it merges)."""
    write(tmp_path, "base.yaml", BASE + "claims:\n"
          "  - {kind: better, method: L1, than: Bha, metric: cmc@1, name: 'L1 wins'}\n"
          "  - {kind: better, method: Bha, than: L1, metric: cmc@5, name: 'Bha wins', known_gap: 'its own'}\n"
          "known_gaps: {'L1 wins': 'from the base'}\n")
    child = write(tmp_path, "child.yaml", "extends: base.yaml\nknown_gaps: {'Bha wins': 'from the child'}\n")
    exp = load_experiment(child)
    assert [c.known_gap for c in exp.config.claims] == ["from the base", "its own"]  # a claim's own gap wins
    assert exp.data["claims"][0]["known_gap"] == "from the base"                    # in the resolved config
    typo = write(tmp_path, "typo.yaml", "extends: base.yaml\nknown_gaps: {'L1 win': 'x'}\n")
    with pytest.raises(ConfigError, match="known_gaps: 'L1 win' is not the name of a claim of this config "
                                          "\\(claim names: 'L1 wins', 'Bha wins'\\)"):
        load_experiment(typo)
    none = write(tmp_path, "none.yaml", "extends: base.yaml\nclaims: []\nknown_gaps: null\n")
    assert load_experiment(none).config.claims == []


def test_set_overrides_by_ranker_name(tmp_path):
    p = write(tmp_path, "e.yaml", BASE.replace("{name: L1, ranker: l1}",
                                               "{name: E, ranker: euclidean, preprocess: [{name: pca, n_components: 5}]}"))
    exp = load_experiment(p, sets("protocol.n_test=12", "rankers.E.preprocess.0.n_components=3"))
    assert exp.config.protocol.params()["n_test"] == 12
    assert exp.config.rankers[0].preprocess[0]["n_components"] == 3


def test_trials_and_seed_overrides_are_typed(tmp_path):
    exp = load_experiment(write(tmp_path, "t.yaml", BASE), Overrides(trials=3, seed=9))
    assert (exp.config.trials, exp.config.seed) == (3, 9)
    assert (exp.data["trials"], exp.data["seed"]) == (3, 9)


def test_sweep_settings_keep_order_and_types(tmp_path):
    p = write(tmp_path, "s.yaml", BASE + "sweep:\n  protocol.n_test: [10, 5]\n  features.colour.bins: [8, 4]\n")
    exp = load_experiment(p)
    assert [s.label for s in exp.settings] == [
        "protocol.n_test=10,features.colour.bins=8", "protocol.n_test=10,features.colour.bins=4",
        "protocol.n_test=5,features.colour.bins=8", "protocol.n_test=5,features.colour.bins=4"]
    assert exp.settings[1].values == {"protocol.n_test": 10, "features.colour.bins": 4}
    assert exp.settings[1].config.features[0].params()["bins"] == 4
    assert sweep_settings({}) == [("", {})]


@pytest.mark.parametrize("text, message", [
    (BASE + "bogus: 1\n", "bogus: unknown key"),
    (BASE.replace("trials: 2", "trials: two"), "trials: expected a valid integer, got 'two'"),
    (BASE.replace("trials: 2", "trials: 0"), "trials: expected greater than or equal to 1, got 0"),
    (BASE.replace("trials: 2", "trials: 2\nseed: -1"), "seed: expected greater than or equal to 0, got -1"),
    (BASE.replace("ranker: l1", "ranker: nosuch"), "rankers.L1.ranker: unknown ranker 'nosuch'; valid rankers:"),
    (BASE.replace("name: reid", "name: nope"), "unknown protocol 'nope'"),
    (BASE.replace("n_people: 30", "n_peeple: 30"), "dataset: unknown parameter 'n_peeple'; allowed: n_people"),
    (BASE.replace("bins: 8", "binz: 8"), "features.colour: unknown parameter 'binz'"),
    (BASE.replace("bins: 8", "bins: sixteen"), "features.colour.bins: expected an integer"),
    (BASE.replace("bins: 8", "bins: 16.5"), "features.colour.bins: expected an integer"),
    (BASE.replace("bins: 8", "spaces: [rgb, xyz]"), "features.colour.spaces: expected a list (each one of 'rgb', 'hsv', 'ycrcb') with at least 1 item(s), got ['rgb', 'xyz']"),
    (BASE.replace("ranks: [1, 5]", "ranks: [0, 5]"), "protocol.ranks: expected a list"),
    (BASE.replace("{name: L1, ranker: l1}", "{name: L1, ranker: l1, C: 1}"), "rankers.L1: unknown parameter 'C'; allowed: (none"),
    (BASE.replace("{name: L1, ranker: l1}", "{name: P, ranker: prsvm, C: -1}"), "rankers.P.C: expected a number > 0 or a list (each a number > 0) with at least 1 item(s), got -1"),
    (BASE + "sweep: {protocol.n_test: [5], features.colour.bins: [4], seed: [1]}\n", "at most two"),
    (BASE.replace("ranker: l1}", "ranker: l1, features: nope}"), "unknown feature set 'nope'"),
    (BASE.replace("protocol: {name: reid,", "protocol: {name: reid, trials: 3,"), "protocol.trials: 'trials' is a run parameter now"),
    (BASE + "expected: [{method: L2, metric: cmc@1, value: 0.1, tolerance: 0.01}]\n", "expected.0.method: 'L2' is not a ranker"),
    (BASE + "expected: [{method: L1, metric: cmc1, value: 0.1, tolerance: 0.01}]\n", "expected.0.metric: unknown metric 'cmc1'"),
    (BASE + "expected: [{method: L1, metric: mae, value: 0.1, tolerance: 0.01}]\n", "expected.0.metric: unknown metric 'mae'"),
    (BASE + "expected: [{method: L1, metric: cmc@1, value: 0.1, tolerance: -0.01}]\n", "expected.0.tolerance: expected greater than or equal to 0"),
    (BASE + "expected: [{method: L1, metric: cmc@1, value: 0.1}]\n", "expected.0.tolerance: required key missing"),
    (BASE + "expected: {method: L1}\n", "expected: expected a valid list"),
    # a ranker's features: [a, a] was accepted (the block was concatenated twice)
    (BASE.replace("ranker: l1}", "ranker: l1, features: [colour, colour]}"),
     "rankers.L1.features: the feature set 'colour' is named twice"),
    # 'L1' and 'L1 ' were two rankers, told apart by a space
    (BASE.replace("{name: Bha,", "{name: 'L1 ',"), "expected a method name without leading or trailing spaces, got 'L1 '"),
    # a claim graded a method against itself
    (BASE + "claims: [{kind: better, method: L1, than: L1, metric: cmc@1}]\n",
     "claims.0: 'than' is the claim's own method 'L1'; expected another method"),
    # settings: [] was taken as every setting
    (BASE + "claims: [{kind: better, method: L1, than: Bha, metric: cmc@1, settings: []}]\n",
     "claims.0.settings: expected"),
])
def test_errors_are_one_line_with_file_and_key(tmp_path, text, message):
    p = write(tmp_path, "bad.yaml", text)
    with pytest.raises(ConfigError) as exc:
        load_experiment(p)
    msg = str(exc.value)
    assert message in msg and str(p) in msg and "\n" not in msg, msg


def test_published_only_rows_are_explicit(tmp_path):
    ok = BASE + "expected: [{method: PRDC, metric: cmc@1, value: 0.15, tolerance: 0.03, published_only: true}]\n"
    assert load_experiment(write(tmp_path, "ok.yaml", ok)).config.expected[0].published_only
    bad = BASE + "expected: [{method: L1, metric: cmc@1, value: 0.15, tolerance: 0.03, published_only: true}]\n"
    with pytest.raises(ConfigError, match="expected.0.published_only: 'L1' is run by this config"):
        load_experiment(write(tmp_path, "bad.yaml", bad))


def test_duplicate_keys_are_an_error(tmp_path):
    p = write(tmp_path, "dup.yaml", BASE + "trials: 3\n")
    with pytest.raises(ConfigError, match=r"dup.yaml: YAML error at line \d+.*duplicate key 'trials' \(first at line \d+\)"):
        load_experiment(p)


def test_non_utf8_and_overlong_paths(tmp_path):
    p = write(tmp_path, "latin.yaml", BASE.encode() + b"description: caf\xe9\n")
    with pytest.raises(ConfigError, match="latin.yaml: not UTF-8 text"):
        load_experiment(p)
    with pytest.raises(ConfigError) as exc:
        load_experiment(tmp_path / ("x" * 5000 + ".yaml"))
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("name", ['""', '"  "'])
def test_a_method_needs_a_name(tmp_path, name):
    p = write(tmp_path, "blank.yaml", BASE.replace("{name: L1, ranker: l1}", "{name: %s, ranker: l1}" % name))
    with pytest.raises(ConfigError, match=r"blank.yaml: rankers.\d+.name: expected a method name"):
        load_experiment(p)


def test_yaml_syntax_error_names_line(tmp_path):
    p = write(tmp_path, "syn.yaml", "dataset: {name: x\nprotocol: [\n")
    with pytest.raises(ConfigError, match=r"syn.yaml: YAML error at line \d+"):
        load_experiment(p)


def test_set_errors(tmp_path):
    with pytest.raises(ConfigError, match="config file not found"):
        load_experiment(tmp_path / "nope.yaml")
    p = write(tmp_path, "ok.yaml", BASE)
    with pytest.raises(ConfigError, match="no item named 'Nobody'"):
        load_experiment(p, sets("rankers.Nobody.C=1"))
    with pytest.raises(ConfigError, match="protocol: unknown parameter 'nosuch'"):
        load_experiment(p, sets("protocol.nosuch=3"))
    with pytest.raises(ConfigError, match="expected key.path=value"):
        sets("protocol.n_test")


def test_set_on_a_swept_key_is_refused(tmp_path):
    p = write(tmp_path, "sw.yaml", BASE + "sweep: {protocol.n_test: [5, 10]}\n")
    with pytest.raises(ConfigError, match=r"--set protocol.n_test: this key is swept \(sweep: protocol.n_test\)"):
        load_experiment(p, sets("protocol.n_test=7"))
    # before: a wildcard or a list index named the swept place otherwise, and the value was ignored
    # by every setting while config.yaml recorded it
    for sweep, key in (("features.colour.bins", "features.0.bins"), ("features.*.bins", "features.colour.bins"),
                       ("features.0", "features.colour.bins"), ("features.colour.bins", "features")):
        p = write(tmp_path, "sw2.yaml", BASE + f"sweep: {{{sweep}: [4, 16]}}\n")
        with pytest.raises(ConfigError, match=rf"--set {key}: this key is swept \(sweep: {re.escape(sweep)}\)"):
            load_experiment(p, sets(f"{key}=4" if key != "features" else "features=[]"))
    p = write(tmp_path, "sw3.yaml", BASE + "sweep: {features.colour.bins: [4, 16]}\n")
    assert len(load_experiment(p, sets("protocol.n_test=7")).settings) == 2   # another place: set
    # before: two sweep keys of one place ran the later's value under the earlier's label (the
    # 'features.0.bins=8' setting held bins=4's numbers), and --seed / --trials / regress.set on a
    # swept key were ignored while the report named them
    p = write(tmp_path, "sw4.yaml", BASE + "sweep: {features.0.bins: [4, 8], features.colour.bins: [4, 16]}\n")
    with pytest.raises(ConfigError, match=r"sweep: features.0.bins and features.colour.bins name one place"):
        load_experiment(p)
    p = write(tmp_path, "sw5.yaml", BASE + "sweep: {seed: [0, 5]}\nregress: {set: {protocol.n_test: 7}}\n")
    with pytest.raises(ConfigError, match=r"--seed 7: this run sweeps seed \(sweep: seed\)"):
        load_experiment(p, Overrides(seed=7))
    p = write(tmp_path, "sw6.yaml", BASE + "sweep: {protocol.n_test: [5, 8]}\nregress: {set: {protocol.n_test: 7}}\n")
    with pytest.raises(ConfigError, match=r"regress.set.protocol.n_test: this key is swept \(sweep: protocol.n_test\)"):
        load_experiment(p, Overrides(regress=True))



@pytest.mark.parametrize("sweep, said", [
    ("{rankers.1.name: [Bha, B2]}", "ranker 'Bha' is named 'B2' in this setting"),
    ("{rankers.*.name: [X]}", "ranker 'L1' is named 'X' in this setting"),
    ("{rankers: [[{name: L1, ranker: l1}]]}", "this setting has other rankers"),
    ("{description: [a, b]}", "sweep: description: the run's description labels it and changes no number"),
    ("{name: [a, b]}", "sweep: name: the run's name labels it and changes no number"),
])
def test_a_sweep_of_labels_is_refused(tmp_path, sweep, said):
    """Before: accepted, and a renamed method's settings were tabled and graded as two methods
    (or one run was written several times under other names)."""
    p = write(tmp_path, "sw.yaml", BASE + f"sweep: {sweep}\n")
    with pytest.raises(ConfigError, match=re.escape(said)):
        load_experiment(p)
    # what a ranker computes is swept, whole entries too, as long as each keeps its name
    p = write(tmp_path, "ok.yaml", BASE + "sweep: {rankers.1: [{name: Bha, ranker: bhattacharyya}, "
                                          "{name: Bha, ranker: euclidean}]}\n")
    assert len(load_experiment(p).settings) == 2

def test_circular_extends(tmp_path):
    write(tmp_path, "a.yaml", "extends: b.yaml\n")
    write(tmp_path, "b.yaml", "extends: a.yaml\n")
    with pytest.raises(ConfigError, match="circular"):
        load_experiment(tmp_path / "a.yaml")


def test_every_shipped_config_validates():
    root = Path(__file__).resolve().parents[1] / "configs"
    configs = sorted(p for p in root.rglob("*.yaml") if "base" not in p.parts)
    assert configs
    for p in configs:
        exp = load_experiment(p)
        assert exp.settings
        if exp.config.regress is not None:
            load_experiment(p, Overrides(regress=True))


def test_every_shipped_config_runs_one_of_its_methods():
    """--methods on every config (and its regress block): a single ranker (the first, the last)
    is accepted, the published rows and claims of the others stay in the config (graded NOT RUN)."""
    root = Path(__file__).resolve().parents[1] / "configs"
    for p in sorted(p for p in root.rglob("*.yaml") if "base" not in p.parts):
        whole = load_experiment(p)
        for regress in (False, True) if whole.config.regress is not None else (False,):
            whole = load_experiment(p, Overrides(regress=regress))
            for r in {whole.config.rankers[0].name: whole.config.rankers[0],
                      whole.config.rankers[-1].name: whole.config.rankers[-1]}.values():  # first and last
                exp = load_experiment(p, Overrides(regress=regress, methods=[r.name]))
                assert [m.name for m in exp.config.run_rankers()] == [r.name], (p, r.name)
                assert all([m.name for m in st.config.run_rankers()] == [r.name] for st in exp.settings)
                assert exp.config.expected == whole.config.expected and exp.config.claims == whole.config.claims


def test_exponent_without_dot_is_a_float(tmp_path):
    p = write(tmp_path, "f.yaml", BASE.replace("{name: L1, ranker: l1}", "{name: P, ranker: prsvm, C: 1e-3}"))
    assert load_experiment(p).config.rankers[0].params()["C"] == 1e-3



@pytest.mark.parametrize("value", ["040", "1:30", "1:30.5"])
def test_numbers_are_yaml_1_2s_a_leading_zero_or_colons_is_text(tmp_path, value):
    """YAML 1.1 read 040 as 32 and 1:30 as 90 (in a file, an extended file, a sweep, --set): a number never written."""
    refused = f"expected an integer >= 3, got '{value}'"
    p = write(tmp_path, "n.yaml", BASE.replace("n_people: 30", f"n_people: {value}"))
    with pytest.raises(ConfigError, match=f"n.yaml: dataset.n_people: {refused}"):
        load_experiment(p)
    with pytest.raises(ConfigError, match=f"dataset.n_people: {refused}"):
        load_experiment(write(tmp_path, "child.yaml", "extends: n.yaml\n"))
    with pytest.raises(ConfigError, match=f"dataset.n_people: {refused}"):
        load_experiment(write(tmp_path, "sw.yaml", BASE + f"sweep: {{dataset.n_people: [40, {value}]}}\n"))
    with pytest.raises(ConfigError, match=f"dataset.n_people: {refused}"):
        load_experiment(write(tmp_path, "ok.yaml", BASE), sets(f"dataset.n_people={value}"))
    # a name is kept as written: the distractor identity 0000 was the number 0
    p = write(tmp_path, "d.yaml", BASE.replace("ranks: [1, 5]", "ranks: [1, 5], distractors: [0000]"))
    assert load_experiment(p).config.protocol.params()["distractors"] == ["0000"]
    cfg = load_experiment(write(tmp_path, "x.yaml", BASE.replace("n_people: 30", "n_people: 0x20"))).config
    assert cfg.dataset.params()["n_people"] == 32 and cfg.trials == 2

def test_yaml_merge_keys_are_accepted_and_own_keys_override(tmp_path):
    """``<<: *base`` (YAML's merge key) brings a mapping's keys in; the mapping's own keys win,
    and a key given twice among its own keys is still an error (test_bad_inputs)."""
    path = tmp_path / "m.yaml"
    path.write_text("dataset: {name: synthetic_reid, n_people: 20}\n"
                    "features: [{name: c, extractor: color_strips}]\nprotocol: {name: reid, n_test: 5}\n"
                    "rankers:\n  - &p {name: P, ranker: prsvm, C: 1.0}\n  - {<<: *p, name: P10, C: 10.0}\n")
    rankers = load_experiment(path).data["rankers"]
    assert rankers == [{"name": "P", "ranker": "prsvm", "C": 1.0}, {"name": "P10", "ranker": "prsvm", "C": 10.0}]


def test_sweep_settings_are_counted_first_and_the_limit_can_be_raised(tmp_path):
    from rankbench.config import MAX_SETTINGS

    text = synthetic_reid_config(n_people=20, n_test=5, ranks=[1], trials=1) + \
        "rankers: [{name: L1, ranker: l1}]\nsweep: {protocol.n_test: [3, 4, 5], seed: [0, 1, 2, 3]}\n"
    path = write(tmp_path, "s.yaml", text)
    with pytest.raises(ConfigError, match="sweep: 12 settings, more than the limit of 10; .* --max-settings"):
        load_experiment(path, Overrides(max_settings=10))
    assert len(load_experiment(path, Overrides(max_settings=12)).settings) == 12
    assert MAX_SETTINGS == 10_000 and Overrides().max_settings == MAX_SETTINGS


def test_minmax_feature_range_from_yaml_reaches_the_scaler(tmp_path):
    """YAML has no tuples: scikit-learn's tuple parameters take a list."""
    import numpy as np

    from rankbench import app

    text = synthetic_reid_config(n_people=20, n_test=5, ranks=[1], trials=1) + \
        "rankers: [{name: L1, ranker: l1, preprocess: [{name: minmax, feature_range: [0, 2]}]}]\n"
    spec = app.validate(write(tmp_path, "m.yaml", text)).settings[0].methods[0]
    scaler = spec.make().steps[0][1]
    assert scaler.feature_range == (0, 2)
    assert scaler.fit_transform(np.arange(6.0).reshape(3, 2)).max() == 2.0


def test_first_difference_names_the_key_path_and_both_values():
    a = {"rankers": [{"name": "L1", "ranker": "l1"}, {"name": "E", "ranker": "euclid", "C": 1}], "protocol": {"k": 5},
         "sweep": {"rankers.E.C": [1, 2]}}
    b = {**a, "rankers": [a["rankers"][0], {**a["rankers"][1], "C": 2}]}
    assert first_difference(a, b) == ("rankers.E.C", 1, 2)
    assert first_difference(a, {**a, "sweep": {"rankers.E.C": [1, 3]}}) == ("sweep.rankers.E.C.1", 2, 3)
    assert first_difference(a, {**a, "seed": 7}) == ("seed", ABSENT, 7) and repr(ABSENT) == "absent"
    assert first_difference(a, {**a, "rankers": a["rankers"][:1]}) == ("rankers", a["rankers"], a["rankers"][:1])
    assert first_difference(a, dict(a)) is None


def test_a_folder_given_as_config_is_not_a_file(tmp_path):
    with pytest.raises(ConfigError, match=f"^{tmp_path}: not a file$"):
        load_experiment(tmp_path)

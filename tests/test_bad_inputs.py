"""A catalogue of user mistakes, each through the real command line.

Every case must give exactly one line on stderr that starts ``rankbench: error:``, names what was
wrong, a non-zero exit status, no traceback, and must leave no run folder behind. Add a case here
when a user finds a new way to go wrong. (The generated sweep over every component's parameters
is in test_conformance.py.)
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from toydata import synthetic_reid_config

GOOD = synthetic_reid_config(n_people=30, n_test=10, ranks=[1, 5], trials=2) + """\
rankers:
  - {name: L1, ranker: l1}
  - {name: P, ranker: prsvm, C: 1.0}
"""


def cfg(**replace) -> str:
    text = GOOD
    for old, new in replace.items():
        old = old.replace("__", " ")
        assert old in text, old
        text = text.replace(old, new)
    return text


BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{k}: &{k} [{', '.join(['*' + p] * 10)}]\n" for p, k in zip("abcdefgh", "bcdefghi"))


# (id, config text or None for the GOOD one, extra CLI args, expected substring)
CONFIG_CASES = [
    ("yaml alias bomb", BOMB, [], "more than 100,000 values once its aliases are expanded"),
    ("yaml recursive alias", "a: &a [*a]\n", [], "an alias refers to a value that contains it"),
    ("yaml nested too deep", "a: " + "[" * 3000 + "]" * 3000 + "\n", [], "nested too deeply"),
    ("yaml too large", "# " + "x" * 2**20 + "\n", [], "larger than 1 MB"),
    ("yaml complex key", GOOD + "? [a, b]\n: 1\n", [], "a key that is a list"),
    ("yaml duplicate after merge", GOOD.replace("{name: L1, ranker: l1}", "{<<: {name: L0}, name: L1, ranker: l1, name: L2}"),
     [], "duplicate key 'name'"),
    ("extends empty", 'extends: ""\n', [], "extends: expected a file path, got ''"),
    ("run name a path", GOOD + "name: ../../x\n", [], "name: expected a run name"),
    ("ranker C infinite", cfg(**{"C: 1.0": "C: .inf"}), [], "rankers.P.C: expected a finite number"),
    ("ranker C nan", cfg(**{"C: 1.0": "C: .nan"}), [], "rankers.P.C: expected a finite number"),
    ("yaml syntax", "dataset: {name: x\nprotocol: [\n", [], "YAML error at line"),
    ("top level list", "- a\n- b\n", [], "expected a mapping of config keys"),
    ("empty file", "", [], "expected a mapping of config keys"),
    ("duplicate key", GOOD + "trials: 3\n", [], "duplicate key 'trials'"),
    ("unknown top key", GOOD + "colour: red\n", [], "colour: unknown key"),
    ("missing dataset", GOOD.replace("dataset: {name: synthetic_reid, n_people: 30}\n", ""), [], "dataset: required key missing"),
    ("missing protocol", GOOD.replace("protocol: {name: reid, n_test: 10, ranks: [1, 5]}\n", ""), [], "protocol: required key missing"),
    ("rankers empty", GOOD.split("rankers:")[0] + "rankers: []\n", [], "rankers: expected a list of at least 1 item(s), got []"),
    ("rankers mapping", GOOD.split("rankers:")[0] + "rankers: {name: L1}\n", [], "rankers: expected a valid list"),
    ("ranker no name", cfg(**{"{name: L1, ranker: l1}": "{ranker: l1}"}), [], "name: required key missing"),
    ("duplicate rankers", cfg(**{"{name: P, ranker: prsvm, C: 1.0}": "{name: L1, ranker: prsvm}"}), [], "two rankers are named 'L1'"),
    ("duplicate features", GOOD.replace("features: [{name: colour, extractor: color_strips, bins: 8}]",
                                        "features: [{name: c, extractor: color_strips}, {name: c, extractor: hsv_hist}]"),
     [], "two feature sets are named 'c'"),
    ("trials zero", cfg(**{"trials: 2": "trials: 0"}), [], "trials: expected greater than or equal to 1"),
    ("trials float", cfg(**{"trials: 2": "trials: 2.5"}), [], "trials: expected a valid integer"),
    ("trials text", cfg(**{"trials: 2": "trials: many"}), [], "trials: expected a valid integer"),
    ("seed negative", cfg(**{"trials: 2": "trials: 2\nseed: -4"}), [], "seed: expected greater than or equal to 0"),
    ("trials under protocol", cfg(**{"ranks: [1, 5]}": "ranks: [1, 5], trials: 3}"}), [], "protocol.trials: 'trials' is a run parameter"),
    ("three sweep keys", GOOD + "sweep: {protocol.n_test: [5], trials: [1], seed: [1]}\n", [], "at most two key paths"),
    ("sweep not a list", GOOD + "sweep: {protocol.n_test: 5}\n", [], "sweep.protocol.n_test: expected a valid list"),
    ("sweep unknown path", GOOD + "sweep: {protocol.nope: [1, 2]}\n", [], "protocol: unknown parameter 'nope'"),
    ("sweep value twice", GOOD + "sweep: {protocol.n_test: [5, 8, 5]}\n", [],
     "sweep: protocol.n_test: the value 5 is given twice; expected each setting once"),
    ("sweep number twice", GOOD + "sweep: {protocol.n_test: [5, 8, 5.0]}\n", [],
     "sweep: protocol.n_test: the value 5 (as 5.0) is given twice; expected each setting once"),
    ("sweep bad value", GOOD + "sweep: {protocol.n_test: [5, 100]}\n", [], "protocol.n_test: expected 2..29"),
    ("extends missing", "extends: nothere.yaml\n", [], "nothere.yaml: config file not found"),
    ("extends not text", "extends: [a, b]\n", [], "extends: expected a file path"),
    ("expected missing tolerance", GOOD + "expected: [{method: L1, metric: cmc@1, value: 0.1}]\n", [], "expected.0.tolerance: required key missing"),
    ("expected negative tolerance", GOOD + "expected: [{method: L1, metric: cmc@1, value: 0.1, tolerance: -1}]\n", [], "expected.0.tolerance"),
    ("expected mapping", GOOD + "expected: {method: L1}\n", [], "expected: expected a valid list"),
    ("expected misspelt method", GOOD + "expected: [{method: L2, metric: cmc@1, value: 0.1, tolerance: 0.1}]\n", [], "'L2' is not a ranker"),
    ("expected unknown metric", GOOD + "expected: [{method: L1, metric: rank1, value: 0.1, tolerance: 0.1}]\n", [], "unknown metric 'rank1'"),
    ("expected wrong protocol metric", GOOD + "expected: [{method: L1, metric: mae, value: 0.1, tolerance: 0.1}]\n", [], "unknown metric 'mae'"),
    ("expected metric never reported", GOOD + "expected: [{method: L1, metric: cmc@10, value: 0.1, tolerance: 0.1}]\n", [],
     "expected.0.metric: expected a metric the run reports, got 'cmc@10'; protocol reid reports cmc@K at K = 1, 5"),
    ("expected unknown setting", GOOD + "expected: [{method: L1, metric: cmc@1, value: 0.1, tolerance: 0.1, setting: x}]\n", [], "is not a sweep setting"),
    ("expected value text", GOOD + "expected: [{method: L1, metric: cmc@1, value: high, tolerance: 0.1}]\n", [], "expected.0.value"),
    ("claim incomplete", GOOD + "claims: [{kind: better, method: L1}]\n", [], "claims.0: a 'better' claim needs 'than'"),
    ("claim unknown kind", GOOD + "claims: [{kind: wins, method: L1}]\n", [], "claims.0.kind"),
    ("claim unknown method", GOOD + "claims: [{kind: better, method: L1, than: Q, metric: cmc@1}]\n", [], "claims.0.than: 'Q' is not a ranker"),
    ("claim field of another kind", GOOD + "claims: [{kind: better, method: L1, than: P, metric: cmc@1, span: union}]\n",
     [], "claims.0: 'span' applies to dominates claims, not to a 'better' claim"),
    ("claim unit unknown", GOOD + "claims: [{kind: better, method: L1, than: P, metric: cmc@1, unit: concepts}]\n",
     [], "claims.0.unit: expected 'trials' or 'tasks'"),
    ("claim level above 1", GOOD + "claims: [{kind: speedup, method: L1, than: P, curve: c, x: a, y: cmc@1, "
     "at_least: 2, level: 1.5}]\n", [], "claims.0.level: expected less than or equal to 1"),
    ("claim baseline as percent", GOOD + "claims: [{kind: better, method: L1, than: P, metric: cmc@1, "
     "baseline_limit: 25}]\n", [], "claims.0.baseline_limit: expected a fraction in [0, 1]"),
    ("expected rate as percent", GOOD + "expected: [{method: L1, metric: cmc@1, value: 16.3, tolerance: 0.03}]\n",
     [], "expected.0.value: expected a fraction in [0, 1] (rates are stored as fractions: 25 % is 0.25), got 16.3"),
    ("expected tolerance as percent", GOOD + "expected: [{method: L1, metric: cmc@1, value: 0.163, tolerance: 3}]\n",
     [], "expected.0.tolerance: expected a fraction in [0, 1]"),
    ("expected std as percent", GOOD + "expected: [{method: L1, metric: cmc@1, value: 0.16, tolerance: 0.03, "
     "std: 2.5}]\n", [], "expected.0.std: expected a fraction in [0, 1]"),
    ("claim margin as percent", GOOD + "claims: [{kind: better, method: L1, than: P, metric: cmc@1, by: 5}]\n",
     [], "claims.0.by: expected a fraction in [0, 1]"),
    ("claim baseline of unknown method", GOOD + "claims: [{kind: better, method: L1, than: P, metric: cmc@1, "
     "baseline_limit: {method: Q, metric: cmc@1}}]\n", [], "claims.0.baseline_limit.method: 'Q' is not a ranker"),
    ("claim baseline of unknown metric", GOOD + "claims: [{kind: better, method: L1, than: P, metric: cmc@1, "
     "baseline_limit: {method: P, metric: rank1}}]\n", [], "claims.0.baseline_limit.metric: unknown metric 'rank1'"),
    ("claim from unknown method", GOOD + "claims: [{kind: improves, method: L1, metric: cmc@1, from: '', to: '', "
     "from_method: Q}]\n", [], "claims.0.from_method: 'Q' is not a ranker"),
    ("claim from other direction", GOOD + "claims: [{kind: improves, method: L1, metric: cmc@1, from: '', to: '', "
     "from_metric: train_s}]\n", [], "claims.0.from_metric: expected a metric measured like 'cmc@1'"),
    ("expected negative std", GOOD + "expected: [{method: L1, metric: cmc@1, value: 0.1, tolerance: 0.1, std: -1}]\n",
     [], "expected.0.std: expected greater than or equal to 0"),
    ("no regress block", None, ["--regress"], "declares no regress block"),
    ("regress trials zero", GOOD + "regress: {trials: 0}\n", ["--regress"], "regress.trials"),
    ("unknown dataset", cfg(**{"name: synthetic_reid": "name: synthetic_redi"}), [], "unknown dataset 'synthetic_redi'"),
    ("unknown extractor", cfg(**{"extractor: color_strips": "extractor: colour_strips"}), [], "unknown feature extractor 'colour_strips'"),
    ("unknown ranker", cfg(**{"ranker: l1}": "ranker: l7}"}), [], "unknown ranker 'l7'"),
    ("unknown protocol", cfg(**{"name: reid": "name: reidx"}), [], "unknown protocol 'reidx'"),
    ("unknown preprocessor", cfg(**{"ranker: l1}": "ranker: l1, preprocess: [{name: whiten}]}"}), [], "unknown preprocessor 'whiten'"),
    ("preprocess no name", cfg(**{"ranker: l1}": "ranker: l1, preprocess: [{n_components: 3}]}"}), [], "preprocess.0: missing 'name'"),
    ("preprocess bad param", cfg(**{"ranker: l1}": "ranker: l1, preprocess: [{name: pca, n_components: 0}]}"}), [], "n_components: expected an integer >= 1"),
    ("standardize bad param", cfg(**{"ranker: l1}": "ranker: l1, preprocess: [{name: standardize, with_mean: yes please}]}"}), [], "with_mean: expected boolean"),
    ("dataset unknown param", cfg(**{"n_people: 30": "n_peeple: 30"}), [], "unknown parameter 'n_peeple'"),
    ("dataset too small", cfg(**{"n_people: 30": "n_people: 2"}), [], "dataset.n_people: expected an integer >= 3"),
    ("extractor unknown param", cfg(**{"bins: 8": "binz: 8"}), [], "features.colour: unknown parameter 'binz'"),
    ("bins text", cfg(**{"bins: 8": "bins: sixteen"}), [], "features.colour.bins: expected an integer >= 2"),
    ("bins fraction", cfg(**{"bins: 8": "bins: 16.5"}), [], "features.colour.bins: expected an integer"),
    ("bins zero", cfg(**{"bins: 8": "bins: 0"}), [], "features.colour.bins"),
    ("bins huge", cfg(**{"bins: 8": "bins: 1000"}), [], "<= 256"),
    ("strips zero", cfg(**{"bins: 8": "n_strips: 0"}), [], "features.colour.n_strips: expected an integer >= 1"),
    ("unknown colour space", cfg(**{"bins: 8": "spaces: [rgb, xyz]"}), [], "features.colour.spaces"),
    ("size one number", cfg(**{"bins: 8": "size: [128]"}), [], "features.colour.size"),
    ("rank zero", cfg(**{"ranks: [1, 5]": "ranks: [0, 5]"}), [], "protocol.ranks"),
    ("rank negative", cfg(**{"ranks: [1, 5]": "ranks: [-1]"}), [], "protocol.ranks"),
    ("rank beyond gallery", cfg(**{"ranks: [1, 5]": "ranks: [1, 50]"}), [], "ranks <= the smallest gallery a trial can draw"),
    ("n_test one", cfg(**{"n_test: 10": "n_test: 1"}), [], "protocol.n_test: expected an integer >= 2"),
    ("n_test too big", cfg(**{"n_test: 10": "n_test: 30"}), [], "protocol.n_test: expected 2..29"),
    ("gallery mode", cfg(**{"ranks: [1, 5]": "ranks: [1, 5], gallery: both"}), [], "protocol.gallery"),
    ("probe camera unknown", cfg(**{"ranks: [1, 5]": "ranks: [1, 5], probe_cam: z"}), [],
     "protocol.probe_cam: expected one of dataset 'synthetic_reid''s cameras (a, b), got 'z'"),
    ("one camera for both", cfg(**{"ranks: [1, 5]": "ranks: [1, 5], gallery_cam: a"}), [],
     "protocol.gallery_cam: expected a camera other than probe_cam"),
    ("sweep too large", GOOD + "sweep: {protocol.n_test: [" + ", ".join(["5"] * 200) + "], seed: ["
     + ", ".join(map(str, range(100))) + "]}\n", [], "sweep: 20,000 settings, more than the limit of 10,000"),
    ("minmax range not a list", cfg(**{"ranker: l1}": "ranker: l1, preprocess: [{name: minmax, feature_range: 5}]}"}),
     [], "feature_range: expected a list"),
    ("minmax range reversed", cfg(**{"ranker: l1}": "ranker: l1, preprocess: [{name: minmax, feature_range: [1, 0]}]}"}),
     [], "minmax.feature_range: expected a range [low, high] with low < high, got [1, 0]"),
    ("minmax range of three", cfg(**{"ranker: l1}": "ranker: l1, preprocess: [{name: minmax, feature_range: [0, 1, 2]}]}"}),
     [], "minmax.feature_range: expected a list of 2 items (a number, a number), got [0, 1, 2]"),
    ("protocol unknown param", cfg(**{"ranks: [1, 5]": "ranks: [1, 5], n_tset: 3"}), [], "protocol: unknown parameter 'n_tset'"),
    ("ranker unknown param", cfg(**{"ranker: l1}": "ranker: l1, C: 1}"}), [], "rankers.L1: unknown parameter 'C'"),
    ("negative C", cfg(**{"C: 1.0": "C: -1"}), [], "rankers.P.C: expected a number > 0 or a list (each a number > 0) with at least 1 item(s), got -1"),
    ("C text", cfg(**{"C: 1.0": "C: lots"}), [], "rankers.P.C"),
    ("empty C grid", cfg(**{"C: 1.0": "C: []"}), [], "rankers.P.C: expected a number > 0 or a list (each a number > 0) with at least 1 item(s), got []"),
    ("cv one fold", cfg(**{"C: 1.0": "cv: 1"}), [], "rankers.P.cv: expected an integer >= 2"),
    ("negative seed in ranker", cfg(**{"C: 1.0": "random_state: -1"}), [], "rankers.P.random_state"),
    ("elf units", cfg(**{"{name: P, ranker: prsvm, C: 1.0}": "{name: E, ranker: elf, units: all}"}), [], "rankers.E.units: expected one of 'hist', 'bin', 'both'"),
    ("negatives per query zero", cfg(**{"{name: P, ranker: prsvm, C: 1.0}": "{name: R, ranker: rankboost, negatives_per_query: 0}"}),
     [], "rankers.R.negatives_per_query"),
    ("elf thresholds", cfg(**{"{name: P, ranker: prsvm, C: 1.0}": "{name: E, ranker: elf, n_thresholds: 300}"}), [], "<= 255"),
    ("ranker feature set", cfg(**{"ranker: l1}": "ranker: l1, features: nope}"}), [], "unknown feature set 'nope'"),
    ("combine mode", cfg(**{"ranker: l1}": "ranker: l1, combine: both}"}), [], "combine: expected 'concat' or 'views'"),
    ("views for one-matrix ranker", cfg(**{"ranker: l1}": "ranker: l1, combine: views}"}), [], "takes one feature matrix; use combine: concat"),
    ("ranker cannot run here", cfg(**{"ranker: l1}": "ranker: ranksvm}"}), [], "cannot run under protocol 'reid'"),
    ("booster outside stacking", cfg(**{"ranker: l1}": "ranker: imbalanced_rankboost}"}), [], "the ranker offers: model_booster"),
    ("import path module", cfg(**{"ranker: l1}": "ranker: 'nomodule_q:Thing'}"}), [], "cannot import 'nomodule_q'"),
    ("import path class", cfg(**{"ranker: l1}": "ranker: 'rankbench.metrics:Nope'}"}), [], "has no class 'Nope'"),
    ("import path file", cfg(**{"ranker: l1}": "ranker: '/nonexistent/r.py:R'}"}), [], "r.py not found"),
    ("protocol needs column", GOOD.replace("protocol: {name: reid, n_test: 10, ranks: [1, 5]}", "protocol: {name: ordinal}")
     .replace("{name: P, ranker: prsvm, C: 1.0}", "{name: P, ranker: euclidean}").replace("{name: L1, ranker: l1}", "{name: E2, ranker: euclidean}"),
     [], "protocol ordinal needs a 'label' column"),
    ("retrieval without relevance", GOOD.replace("protocol: {name: reid, n_test: 10, ranks: [1, 5]}", "protocol: {name: retrieval}")
     .replace("{name: P, ranker: prsvm, C: 1.0}", "{name: P, ranker: logistic}").replace("{name: L1, ranker: l1}", "{name: Q, ranker: logistic}"),
     [], "has no relevance judgements (arrays['relevance']"),
    ("missing data folder", cfg(**{"{name: synthetic_reid, n_people: 30}": "{name: viper}"}), ["--data-root", "/nonexistent-data"],
     "folder /nonexistent-data/viper not found"),
    ("misspelt ranker name", cfg(**{"ranker: prsvm": "ranker: prsv"}), [], "did you mean 'prsvm'?"),
    ("methods not a ranker", None, ["--methods", "L11"], "'L11' is not a ranker of this config; did you mean 'L1'? its rankers: L1, P"),
    ("methods key not a ranker", GOOD + "methods: [L1, Q]\n", [], "methods: 'Q' is not a ranker of this config"),
    ("methods key twice", GOOD + "methods: [L1, L1]\n", [], "methods: 'L1' is named twice"),
    ("methods key empty", GOOD + "methods: []\n", [], "methods: expected"),
]


def test_validate_reports_every_mistake_at_once(cli, tmp_path):
    """Independent mistakes (a parameter, a ranker name, another parameter, an expected row; and
    two schema mistakes) each get their own line; one value failing both members of a union
    (``features: str | list``) is one mistake."""
    path = tmp_path / "bad.yaml"
    path.write_text(cfg(**{"bins: 8": "bins: 1000", "ranker: l1}": "ranker: l7}", "C: 1.0": "C: -1"})
                    + "expected: [{method: L2, metric: cmc@1, value: 0.1, tolerance: 0.1}]\n")
    out = tmp_path / "results" / "run"
    for command in (["validate", path], ["run", path, "--out", out]):
        res = cli(*command)
        lines = res.output.strip().splitlines()
        assert res.exit_code == 1 and all(line.startswith("rankbench: error: ") for line in lines), res.output
        assert [n for n in ("features.colour.bins", "rankers.L1.ranker: unknown ranker 'l7'", "rankers.P.C",
                            "expected.0.method: 'L2'") if any(n in line for line in lines)] == \
            ["features.colour.bins", "rankers.L1.ranker: unknown ranker 'l7'", "rankers.P.C", "expected.0.method: 'L2'"]
        assert len(lines) == 4, res.output
    assert not out.exists()
    path.write_text(cfg(**{"trials: 2": "trials: many", "ranker: l1}": "ranker: l1, features: 5}"}) + "colour: red\n")
    lines = cli("validate", path).output.strip().splitlines()
    assert len(lines) == 3, lines
    assert "rankers.L1.features: expected a valid string or a valid list, got 5" in lines[0]
    assert "trials: expected a valid integer, got 'many'" in lines[1] and "colour: unknown key" in lines[2]


def assert_one_line(res, needle):
    assert res.exit_code not in (0, None), res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1, res.output
    assert lines[0].startswith("rankbench: error:") and "Traceback" not in res.output
    assert needle in lines[0], lines[0]


@pytest.mark.parametrize("case, text, args, needle", CONFIG_CASES, ids=[c[0] for c in CONFIG_CASES])
def test_config_mistakes(cli, tmp_path, case, text, args, needle):
    path = tmp_path / "bad.yaml"
    path.write_text(GOOD if text is None else text)
    out = tmp_path / "results" / "run"
    for command in (["validate", path, *args], ["run", path, "--out", out, *args]):
        assert_one_line(cli(*command), needle)
    assert not out.exists(), "a failed start must leave no folder"


@pytest.fixture
def done_run(cli, tmp_path):
    p = tmp_path / "good.yaml"
    p.write_text(GOOD + "expected: [{method: L1, metric: cmc@1, value: 0.5, tolerance: 0.5}]\n")
    out = tmp_path / "done"
    assert cli("run", p, "--out", out, "-q").exit_code == 0
    return p, out


def test_command_line_mistakes(cli, tmp_path, done_run):
    good, done = done_run
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    (tmp_path / "empty-dir").mkdir()
    exp_map = tmp_path / "exp_map.yaml"
    exp_map.write_text("expected: {method: L1}\n")
    exp_tol = tmp_path / "exp_tol.yaml"
    exp_tol.write_text("expected: [{method: L1, metric: cmc@1, value: 0.1}]\n")
    exp_meth = tmp_path / "exp_meth.yaml"
    exp_meth.write_text("expected: [{method: L2, metric: cmc@1, value: 0.1, tolerance: 0.1}]\n")
    # --expected files get exactly the cross-checks of a config's own expected: and claims:
    expected_files = []
    for i, (text, needle) in enumerate([
            ("expected: [{method: L1, metric: rank1, value: 0.1, tolerance: 0.1}]", "expected.0.metric: unknown metric 'rank1'"),
            ("expected: [{method: L1, metric: mae, value: 0.1, tolerance: 0.1}]", "unknown metric 'mae' for protocol 'reid'"),
            ("expected: [{method: L1, metric: cmc@1, value: 0.1, tolerance: 0.1, setting: x}]", "'x' is not a sweep setting"),
            ("expected: [{method: L1, metric: cmc@1, value: .nan, tolerance: 0.1}]", "expected.0.value"),
            ("claims: [{kind: better, method: L1, than: Q, metric: cmc@1}]", "claims.0.than: 'Q' is not a ranker"),
            # before: graded MISSING at exit 1, where the config's own is refused at validate
            ("expected: [{method: L1, metric: cmc@7, value: 0.1, tolerance: 0.1}]",
             "expected.0.metric: expected a metric the run measured, got 'cmc@7'; it measured cmc@1, cmc@5")]):
        expected_files.append((tmp_path / f"exp{i}.yaml", needle))
        expected_files[-1][0].write_text(text + "\n")
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(GOOD + "sweep: {protocol.n_test: [5, 10]}\n")
    fifo = tmp_path / "a-pipe"
    os.mkfifo(fifo)
    loop = tmp_path / "loop.yaml"
    loop.symlink_to(loop)
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(GOOD.encode() + b"description: caf\xe9\n")
    papers = tmp_path / "configs"
    (papers / "p").mkdir(parents=True)
    (papers / "p" / "good.yaml").write_text(good.read_text())
    cases = [
        (("run", tmp_path / "missing.yaml"), "missing.yaml: config file not found"),
        (("run", tmp_path), "is a directory"),
        (("run", tmp_path / ("x" * 4000 + ".yaml")), "x.yaml"),
        (("run", latin), "not UTF-8 text"),
        (("run",), "give a config file, or --resume RUN_DIR"),
        (("run", good, "--trials", "0"), "--trials"),
        (("run", good, "--seed", "-5"), "--seed"),
        (("run", good, "--jobs", "0"), "--jobs"),
        (("run", good, "--dask-timeout", "nan"), "--dask-timeout"),
        (("run", good, "--max-settings", "0"), "--max-settings"),
        (("run", good, "--set", "protocol.n_test"), "expected key.path=value"),
        (("run", good, "--set", "protocol.nope=1"), "protocol: unknown parameter 'nope'"),
        (("run", good, "--set", "rankers.Ghost.C=1"), "no item named 'Ghost'"),
        (("run", good, "--set", "rankers.P.C=-2"), "rankers.P.C: expected a number > 0 or a list (each a number > 0) with at least 1 item(s), got -2"),
        (("run", good, "--set", "trials.x=1"), "cannot be looked up inside a int"),
        # before: said of the config file, whose text holds another value there
        (("run", good, "--set", "seed=abc"), f"--set seed (on {good}): seed: expected a valid integer, got 'abc'"),
        (("run", sweep, "--set", "protocol.n_test=7"), "this key is swept"),
        (("run", good, "--out", done), "already holds a run"),
        (("run", good, "--out", blocker / "run"), "cannot create the run folder"),
        (("run", good, "--bogus"), "No such option '--bogus'"),
        (("run", "--resume", tmp_path / "nothere"), "no such run folder"),
        (("run", "--resume", tmp_path / "empty-dir"), "not a run folder"),
        (("run", good, "--resume", done, "--set", "protocol.n_test=12"), "protocol.n_test = 10, now 12"),
        (("run", "--resume", done, "--out", tmp_path / "elsewhere"), "--out: a resumed run stays in its own folder"),
        (("run", good, "--set", "name=../../x"), "name: expected a run name"),
        (("check", tmp_path / "empty-dir"), "not a run folder"),
        (("check", done, "--expected", tmp_path / "nothere.yaml"), "nothere.yaml: expected-numbers file not found"),   # not a config
        (("check", done, "--expected", exp_map), "expected: expected a list"),
        (("check", done, "--expected", exp_tol), "expected.0.tolerance: required key missing"),
        (("check", done, "--expected", exp_meth), "expected.0.method: 'L2' is not a ranker of this config"),
        *[(("check", done, "--expected", path), needle) for path, needle in expected_files],
        (("report", tmp_path / "empty-dir"), "not a run folder"),
        (("collect", tmp_path / "empty-dir", "--out", tmp_path / "R.md"), "not a run folder"),
        (("collect", done, "--out", blocker / "R.md"), f"{blocker}: exists and is not a folder"),
        (("collect", done, "--out", tmp_path / "R.html"), "--out"),
        (("features", good, "--out", fifo, "--force", "-q"), "not a regular file"),
        (("run", loop), "Too many levels of symbolic links"),
        (("features", good, "--out", blocker / "f.npz", "-q"), f"{blocker}: exists and is not a folder"),
        (("notes", "nosuch", done, "--configs", papers), "no such paper folder; expected one of: p"),
        (("notes", "p", tmp_path / "empty-dir", "--configs", papers), "not a run folder"),
        (("notes", "p", "--configs", papers), "no run folders; run make reproduce-p first"),
        (("notes", "p", done, "--configs", papers, "--out", blocker / "p.md"),
         f"{blocker}: exists and is not a folder"),
        (("features", good, "--out", blocker, "-q"), "already exists; choose another --out or add --force"),
        (("list", "rankers", "prsv"), "unknown ranker 'prsv'; did you mean 'prsvm'?"),
        (("cache", "--kind", "nosuchkind"), "--kind: expected one of the cache's kinds"),
        (("list", "rankers", "nosuch"), "unknown ranker 'nosuch'"),
        (("list", "widgets"), "'widgets' is not one of 'datasets'"),
        (("list", "prsvm"), "'prsvm' is not one of 'datasets'"),
        (("bogus-command",), "No such command 'bogus-command'"),
        (("report", done, "--style", tmp_path / "nothere.mplstyle"), "--style"),
        (("run", good, "--style", tmp_path / "nothere.mplstyle"), "expected a matplotlib style file"),
        (("export", done, "--format", "trec"), "expected a retrieval run, got protocol 'reid'"),
        (("export", done, "--format", "svmlight"), "svmlight: expected a run of protocol retrieval or comparison"),
        (("export", done, "--format", "csv"), "'csv' is not one of 'trec', 'svmlight', 'json'"),
        (("export", tmp_path / "empty-dir", "--format", "json"), "not a run folder"),
        (("export", done, "--format", "json", "--out", blocker / "r.json"), f"{blocker}: exists and is not a folder"),
        (("export", done, "--format", "json", "--out", ""), "export: --out: expected a file or folder path, got ''"),
        (("export", done, "--format", "json", "--out", good), "already exists; choose another --out or add --force"),
        (("export", done, "--format", "json", "--out", done / "config.yaml", "--force"),
         "inside the run folder, whose files are its results; choose a path outside it or under"),
        (("export", done, "--format", "mlflow", "--out", done / "trials"), "inside the run folder"),
        (("figures", tmp_path / "empty-dir"), "not a run folder"),
        (("figures", "prosser", done), "'prosser' is not a paper with figures (those are: merler, yan, yuli)"),
        (("figures", done), "figures: none drawn: no figure of any paper reads these runs"),
        (("figures", "yan", done, "--out", tmp_path / "figs"), "figures: none drawn: no figure of yan"),
    ]
    for args, needle in cases:
        assert_one_line(cli(*args), needle)
    assert (done / "trials.csv").is_file(), "nothing earlier is overwritten"
    assert not (tmp_path / "figs").exists(), "no figure drawn, no folder made"


def test_data_mistakes(cli, tmp_path):
    import cv2

    root = tmp_path / "data" / "viper"
    for cam in ("cam_a", "cam_b"):
        (root / cam).mkdir(parents=True)
    for pid in range(4):
        for cam in ("cam_a", "cam_b"):
            cv2.imwrite(str(root / cam / f"{pid:03d}_000.bmp"), np.zeros((128, 48, 3), np.uint8))
    text = GOOD.replace("{name: synthetic_reid, n_people: 30}", "{name: viper}").replace("n_test: 10", "n_test: 2") \
        .replace("ranks: [1, 5]", "ranks: [1]")
    path = tmp_path / "v.yaml"
    path.write_text(text)
    good = (root / "cam_b" / "001_000.bmp").read_bytes()
    (root / "cam_b" / "002_000.bmp").write_bytes(good[:200])
    assert_one_line(cli("run", path, "--data-root", tmp_path / "data", "--out", tmp_path / "o1"),
                    "002_000.bmp is unreadable or truncated")
    (root / "cam_b" / "002_000.bmp").write_bytes(good)
    cv2.imwrite(str(root / "cam_a" / "003_000.bmp"), np.zeros((100, 40, 3), np.uint8))
    assert_one_line(cli("run", path, "--data-root", tmp_path / "data", "--out", tmp_path / "o2"),
                    "003_000.bmp is 100x40 pixels, expected 128x48")
    (root / "cam_a" / "003_000.bmp").unlink()
    assert_one_line(cli("run", path, "--data-root", tmp_path / "data", "--out", tmp_path / "o3"),
                    "person 003 appears only in cam_b")
    (root / "cam_a" / "notes.txt").write_text("x")
    (root / "cam_a" / "weird.bmp").write_bytes(good)
    assert_one_line(cli("run", path, "--data-root", tmp_path / "data", "--out", tmp_path / "o4"),
                    "unexpected file name")
    (root / "cam_a" / "weird.bmp").unlink()
    (root / "cam_a" / "003_000.bmp").symlink_to(tmp_path / "moved.bmp")   # a link to nothing: not one person fewer
    assert_one_line(cli("run", path, "--data-root", tmp_path / "data", "--out", tmp_path / "o5"),
                    f"003_000.bmp is a symbolic link to {tmp_path / 'moved.bmp'}, which does not exist")
    assert not any((tmp_path / f"o{i}").exists() for i in range(1, 6))


def _ordinal_table(d, features):
    """A generated ordinal table: 4 labels x 6 items, features from ``features(X)`` saved as f.npy."""
    import pandas as pd

    y = np.repeat(np.arange(4), 6)
    pd.DataFrame({"id": [f"i{i}" for i in range(24)], "label": y}).to_csv(d / "t.csv", index=False)
    X = y[:, None] + np.random.default_rng(0).normal(0, 0.3, (24, 3))
    out = features(X)
    if isinstance(out, bytes):
        (d / "f.npy").write_bytes(out)
    else:
        np.save(d / "f.npy", out)


def _npz_bytes(X) -> bytes:
    import io

    buf = io.BytesIO()
    np.savez(buf, X=X)
    return buf.getvalue()


ORDINAL = """\
dataset: {name: table, file: t.csv, features: f.npy}
features: [{name: f, extractor: array}]
protocol: {name: ordinal, n_per_label: 2, k: 1}
trials: 1
rankers: [{name: E, ranker: euclidean}, {name: C, ranker: cmds_dml, s: 3, max_iter: 5}]
"""

# (id, how the features are made, config text, the words of the one line): what users bring in data
DATA_CASES = [
    ("features overflow", lambda X: X * 1e300 / 4, ORDINAL, "squared distances overflow to infinity"),
    # before: every distance 0, every ranking tied, scored at exit 0 (re-id cmc@1 at chance)
    ("features underflow", lambda X: X * 1e-200, ORDINAL, "every squared distance underflows to 0"),
    ("features nan", lambda X: np.where(np.arange(3) == 1, np.nan, X), ORDINAL, "expected finite numbers"),
    ("npy more rows", lambda X: np.vstack([X, X]), ORDINAL, "got 48 rows"),
    ("npy complex", lambda X: X + 1j, ORDINAL, "complex numbers"),
    ("npz named npy", _npz_bytes, ORDINAL, ".npz archive"),
    ("embedding above the input dimension", lambda X: X, ORDINAL.replace("s: 3", "s: 4"),
     "rankers.C.s: expected at most the input dimension 3"),
    ("column mapped onto a column", lambda X: X,
     ORDINAL.replace("features: f.npy}", "features: f.npy, columns: {label: id}}"), "would replace"),
]


@pytest.mark.parametrize("case, make, text, needle", DATA_CASES, ids=[c[0] for c in DATA_CASES])
def test_data_entering_a_run(cli, tmp_path, case, make, text, needle):
    _ordinal_table(tmp_path, make)
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    out = tmp_path / "results" / "run"
    assert_one_line(cli("run", path, "--data-root", tmp_path, "--out", out), needle)
    assert not out.exists(), "a failed start must leave no folder"

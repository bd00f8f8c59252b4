"""User mistakes in choosing what to run and in checking a config, through the real command line
(the style of test_bad_inputs.py: one ``rankbench: error:`` line per mistake, a non-zero exit, no
traceback, no run folder): ``--methods`` (empty, names holding a comma, repeated), ``validate``
reporting the data's mistakes with the config's, and a sweep with no values."""

from __future__ import annotations

import pandas as pd
import pytest
from toydata import synthetic_reid_config

GOOD = synthetic_reid_config(n_people=20, n_test=6, ranks=[1, 5], trials=1) + """\
rankers:
  - {name: L1, ranker: l1}
  - {name: "PCA, then L1", ranker: l1, preprocess: [{name: pca, n_components: 3}]}
  - {name: E, ranker: euclidean}
"""


def lines_of(res) -> list[str]:
    assert res.exit_code not in (0, None) and "Traceback" not in res.output, res.output
    lines = res.output.strip().splitlines()
    assert all(line.startswith("rankbench: error: ") for line in lines), res.output
    return lines


@pytest.fixture
def good(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(GOOD)
    return path


@pytest.mark.parametrize("args, needle", [
    (["--methods", ""], "expected ranker names (one per word, or separated by commas), got ''"),
    (["--methods", "L1,"], "got 'L1,'"),
    (["--methods", ",E"], "got ',E'"),
    (["--methods", "PCA"], "'PCA' is not a ranker of this config"),
    (["--methods", "--regress"], "--methods: expected a ranker name, got the option '--regress'"),
])
def test_methods_that_select_nothing_or_no_ranker_are_refused(cli, good, tmp_path, args, needle):
    for command in (["validate", good, *args], ["run", good, "--out", tmp_path / "run", *args]):
        lines = lines_of(cli(*command))
        assert len(lines) == 1 and needle in lines[0], lines
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("args, chosen", [
    (["--methods", "PCA, then L1"], ["PCA, then L1"]),                    # a name that holds a comma, quoted
    (["--methods", "PCA, then L1", "E"], ["PCA, then L1", "E"]),
    (["--methods", "L1,E"], ["L1", "E"]),
    (["--methods=E,L1"], ["L1", "E"]),
    (["--methods", "L1", "--methods", "PCA, then L1"], ["L1", "PCA, then L1"]),
    (["--methods", "E", "L1"], ["L1", "E"]),
])
def test_methods_selects_names_as_typed(cli, good, tmp_path, args, chosen):
    out = tmp_path / "run"
    res = cli("run", good, "--out", out, "--no-plots", "-q", *args)
    assert res.exit_code == 0, res.output
    assert list(dict.fromkeys(pd.read_csv(out / "trials.csv").method)) == chosen      # config order


def test_methods_help_says_how_to_give_a_name_with_a_comma(cli):
    text = " ".join(cli("run", "--help").output.split())
    assert "--methods PRSVM --methods L1-norm" in text and "quote a name that holds a comma" in text


def test_validate_reports_the_datas_mistakes_with_the_configs(cli, tmp_path):
    """A schema mistake no longer hides the dataset's: a missing data folder, a protocol value the
    dataset cannot satisfy, and a ranker that cannot run beside a missing folder."""
    path, out = tmp_path / "c.yaml", tmp_path / "run"
    missing = "folder " + str(tmp_path / "nodata" / "viper") + " not found"
    cases = [
        (GOOD.replace("trials: 1", "trials: many").replace("{name: synthetic_reid, n_people: 20}", "{name: viper}"),
         ["trials: expected a valid integer, got 'many'", missing]),
        (GOOD.replace("trials: 1", "trials: many").replace("n_test: 6", "n_test: 60"),
         ["trials: expected a valid integer, got 'many'", "protocol.n_test: expected 2..19"]),
        (GOOD.replace("{name: synthetic_reid, n_people: 20}", "{name: viper}")
         .replace("ranker: euclidean", "ranker: ranksvm"), [missing, "rankers.E: ranker 'ranksvm' cannot run"]),
    ]
    for text, needles in cases:
        path.write_text(text)
        for command in (["validate", path], ["run", path, "--out", out]):
            lines = lines_of(cli(*command, "--data-root", tmp_path / "nodata"))
            assert len(lines) == len(needles), lines
            assert all(any(n in line for line in lines) for n in needles), lines
    assert not out.exists()


@pytest.mark.parametrize("sweep", ["{protocol.n_test: []}", "{protocol.ranks: [[1]], protocol.n_test: []}"])
def test_a_sweep_without_values_is_one_line(cli, good, tmp_path, sweep):
    good.write_text(GOOD + f"sweep: {sweep}\n")
    for command in (["validate", good], ["run", good, "--out", tmp_path / "run"]):
        lines = lines_of(cli(*command))
        assert len(lines) == 1 and "sweep: protocol.n_test: expected a list of one value or more" in lines[0], lines
    assert not (tmp_path / "run").exists()


def test_a_sweep_of_list_values_is_reported(cli, good, tmp_path):
    good.write_text(GOOD + "sweep: {protocol.ranks: [[1], [1, 5]]}\n")
    res = cli("run", good, "--out", tmp_path / "run", "--no-plots", "-q", "--methods", "L1")
    assert res.exit_code == 0 and "ranks = [1], [1, 5]" in res.output, res.output

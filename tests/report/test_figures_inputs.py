"""``rankbench figures`` on a run folder that lacks what the figures read (its splits, a result):
one line naming the folder and the file, never a figure module's traceback."""

from __future__ import annotations

import shutil

import pytest

SPIRALS = """\
name: spirals
dataset: {name: two_spirals, n_positive: 30, n_negative: 30}
features: [{name: feat, extractor: array}]
protocol: {name: classification, n_train_per_class: 8, n_constraints: 2, constraint_type: same}
trials: 2
rankers:
  - {name: KLR, ranker: kernel_logreg, lam: 0.001}
"""


@pytest.fixture
def spirals(cli, tmp_path):
    cfg = tmp_path / "configs" / "yan" / "spirals.yaml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text(SPIRALS)
    out = tmp_path / "run"
    assert cli("run", cfg, "--out", out, "--no-plots", "-q").exit_code == 0
    return out


def _one_line(res) -> str:
    lines = res.output.strip().splitlines()
    assert res.exit_code == 1 and len(lines) == 1 and "Traceback" not in res.output, res.output
    return lines[0]


def test_a_run_without_its_splits_is_one_line(cli, spirals, tmp_path):
    (spirals / "splits.json").unlink()
    line = _one_line(cli("figures", spirals, "--out", tmp_path / "figs"))
    assert line.startswith(f"rankbench: error: {spirals}: splits.json is missing")
    assert not (tmp_path / "figs").exists()


@pytest.mark.parametrize("damage", ["missing", "unusable"])
def test_a_run_without_a_result_is_one_line_naming_the_file(cli, spirals, tmp_path, damage):
    first = sorted((spirals / "trials").glob("*.json"))[0]
    if damage == "missing":
        first.unlink()
    else:
        first.write_text("{")
    line = _one_line(cli("figures", spirals, "--out", tmp_path / "figs"))
    assert line.startswith(f"rankbench: error: {spirals}: trials/{first.name} is {damage} (KLR trial 0; 1 result(s)")
    assert f"rankbench run --resume {spirals}" in line
    shutil.rmtree(tmp_path / "figs", ignore_errors=True)
    assert cli("run", "--resume", spirals, "--no-plots", "-q").exit_code == 0
    assert cli("figures", spirals, "--out", tmp_path / "figs").exit_code == 0     # complete again: drawn

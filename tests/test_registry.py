"""Registries: discovery at any depth, users' classes by import path, installed plug-ins by entry point."""

import os
import subprocess
import sys
import textwrap

import pytest

from rankbench.errors import ConfigError
from rankbench.registry import load_by_path, parameter_table, rankers


def test_unknown_name_lists_valid_ones():
    with pytest.raises(ConfigError) as exc:
        rankers.get("nope", "rankers.X.ranker")
    msg = str(exc.value)
    assert "rankers.X.ranker: unknown ranker 'nope'; valid rankers:" in msg and "prsvm" in msg


def test_modules_in_family_folders_are_discovered():
    assert {"prsvm", "ensemble_ranksvm", "rankmkl", "rankboost", "elf", "cmds_dml", "pklr"} <= set(rankers.names())


def test_import_path_errors_are_one_line(tmp_path):
    for spec, msg in [("nomodule_xyz:Thing", "cannot import 'nomodule_xyz'"), ("rankbench.metrics:Nope", "no class"),
                      (f"{tmp_path}/missing.py:X", "not found"), ("justtext:", "expected an import path")]:
        with pytest.raises(ConfigError, match=msg):
            load_by_path(spec, "rankers.R.ranker: ")
    bad = tmp_path / "bad.py"
    bad.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(ConfigError, match="importing .*bad.py.* failed: RuntimeError: boom"):
        load_by_path(f"{bad}:X")


def test_a_plugin_that_changes_the_working_directory_on_import_gets_it_put_back(tmp_path, monkeypatch):
    # every relative path of the run (the run folder, the data root) is read against it
    monkeypatch.chdir(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "moves.py").write_text("import os\nos.chdir('elsewhere')\nclass X:\n    pass\n")
    with pytest.warns(RuntimeWarning, match=r"importing .*moves.py changed the working directory to .*elsewhere; "
                                            "rankbench put it back"):
        assert load_by_path("moves.py:X").__name__ == "X"
    assert os.getcwd() == str(tmp_path)


def test_parameter_table_shows_constraints_and_defaults():
    rows = {name: (want, default) for name, want, default in parameter_table(rankers.get("prsvm"))}
    assert rows["C"] == ("a number > 0 or a list (each a number > 0) with at least 1 item(s)",
                         "[0.0001, 0.001, 0.01, 0.1, 1.0, 10.0, 100.0, 1000.0]")
    assert rows["random_state"] == ("an integer >= 0 or null", "None")
    assert rows["cv"][0] == "an integer >= 2"


PLUGIN = '''
    from sklearn.base import BaseEstimator
    from scipy.spatial.distance import cdist

    from rankbench.params import PositiveFloat
    from rankbench.rankers.base import PairScorer
    from rankbench.registry import rankers


    @rankers.register("chebyshev_plugin")
    class Chebyshev(PairScorer, BaseEstimator):
        """Chebyshev-distance matching, from an installed plug-in."""

        def __init__(self, scale: PositiveFloat = 1.0):
            self.scale = scale

        def fit(self, X, y, cams=None):
            self.fitted_ = True
            return self

        def similarity(self, Q, G):
            return -self.scale * cdist(Q, G, "chebyshev")
'''


def test_installed_plugin_registers_through_the_entry_point_group(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "cheby_plugin.py").write_text(textwrap.dedent(PLUGIN))
    dist = site / "cheby_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: cheby-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[rankbench]\ncheby = cheby_plugin\n")
    (site / "broken_plugin-0.1.dist-info").mkdir()
    (site / "broken_plugin-0.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 0.1\n")
    (site / "broken_plugin-0.1.dist-info" / "entry_points.txt").write_text("[rankbench]\nbroken = no_such_module\n")
    env = {**os.environ, "PYTHONPATH": str(site)}
    res = subprocess.run([sys.executable, "-m", "rankbench", "list", "rankers"], capture_output=True, text=True,
                         env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    line = next(l for l in res.stdout.splitlines() if "chebyshev_plugin" in l)
    assert "Chebyshev-distance matching" in line and "[cheby-plugin (entry point)]" in line
    assert "plug-in not loaded: entry point broken = no_such_module" in res.stderr
    res = subprocess.run([sys.executable, "-m", "rankbench", "list", "rankers", "chebyshev_plugin"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0 and "scale" in res.stdout and "a number > 0" in res.stdout

"""rankbench.engine.plan: how to run is refused at once when it is wrong; a plan loads each dataset
once, counts its jobs, reports every method's mistake together, and bounds the dimension through
preprocessing steps as a hand count does."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.decomposition import PCA
from sklearn.preprocessing import StandardScaler
from toydata import synthetic_reid_config

from rankbench.components import ComponentSpec
from rankbench.config import load_experiment
from rankbench.engine.estimator import MethodSpec
from rankbench.engine.plan import EngineOptions, _step_dim, plan
from rankbench.errors import ConfigError
from rankbench.rankers.baselines.template import L1Norm


@pytest.mark.parametrize("given, line", [
    ({"jobs": 0}, "jobs: expected an integer >= 1, got 0"),
    ({"jobs": 2.0}, "jobs: expected an integer >= 1, got 2.0"),
    ({"jobs": True}, "jobs: expected an integer >= 1, got True"),
    ({"retries": -1}, "retries: expected an integer >= 0, got -1"),
    ({"executor": "slurm"}, "executor: expected 'local' or 'dask', got 'slurm'"),
    ({"dask_timeout": float("nan")}, "dask_timeout: expected a finite number of seconds > 0, got nan"),
    ({"dask_timeout": 0}, "dask_timeout: expected a finite number of seconds > 0, got 0"),
])
def test_options_a_command_line_would_refuse_are_refused_for_python_callers(given, line):
    with pytest.raises(ConfigError) as err:
        EngineOptions(**given)
    assert str(err.value) == line
    assert EngineOptions(jobs=np.int64(3)).jobs == 3 and type(EngineOptions(jobs=np.int64(3)).jobs) is int


def _experiment(tmp_path, extra=""):
    path = tmp_path / "c.yaml"
    path.write_text(synthetic_reid_config(n_people=12, n_test=6, ranks=[1], trials=3)
                    + "rankers:\n  - {name: A, ranker: l1}\n  - {name: B, ranker: l1}\n" + extra)
    return load_experiment(path)


def test_a_plan_counts_its_jobs_and_loads_a_dataset_once_for_its_settings(tmp_path):
    p = plan(_experiment(tmp_path, "sweep: {protocol.n_test: [4, 6]}\n"))
    assert [len(sp.methods) for sp in p.settings] == [2, 2]
    assert p.n_jobs == 2 * 3 * 2 and p.faults() == []
    assert p.settings[0].dataset is p.settings[1].dataset
    assert [sp.protocol.n_test for sp in p.settings] == [4, 6]


def test_every_methods_mistake_is_said_at_once_one_line_each(tmp_path):
    def obj(name, sets):
        return MethodSpec(name, ComponentSpec.of(L1Norm()), sets, "concat")

    with pytest.raises(ConfigError) as err:
        plan(_experiment(tmp_path), methods=[obj("X", ["nope"]), obj("Y", ["colour"]), obj("Z", ["gone"])])
    lines = str(err.value).splitlines()
    assert len(lines) == 2
    assert lines[0].endswith("estimator 'X': features: unknown feature set 'nope'; defined: colour")
    assert lines[1].endswith("estimator 'Z': features: unknown feature set 'gone'; defined: colour")


@pytest.mark.parametrize("step, d, n, want", [
    (("standardscaler_0", StandardScaler()), (10, "d"), (5, "n"), (10, "d")),         # column-wise: kept
    (("pca_0", PCA(n_components=3)), (10, "d"), (5, "n"), (3, "pca keeps n_components = 3")),
    (("pca_0", PCA(n_components=8)), (10, "d"), (5, "n"), (5, "n")),                 # rows bound it
    (("pca_0", PCA(n_components=12)), (10, "d"), None, (10, "d")),
    (("pca_0", PCA()), (10, "d"), (5, "n"), None),                                 # does not say
    (("pca_0", PCA(n_components=3)), None, (5, "n"), None),                        # unknown before
])
def test_the_dimension_after_a_step_is_the_smallest_of_its_bounds(step, d, n, want):
    assert _step_dim(step, d, n) == want

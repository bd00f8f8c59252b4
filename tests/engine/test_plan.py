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
    (("pca_0", PCA(n_components=8)), (10, "d"), (5, "n"),                            # centred rows bound it
     (4, "pca keeps at most one direction fewer than its rows (n)")),
    (("pca_0", PCA(n_components=12)), (10, "d"), None, (10, "d")),
    (("pca_0", PCA()), (10, "d"), (5, "n"), None),                                 # does not say
    (("pca_0", PCA(n_components=3)), None, (5, "n"), None),                        # unknown before
])
def test_the_dimension_after_a_step_is_the_smallest_of_its_bounds(step, d, n, want):
    assert _step_dim(step, d, n) == want


# ------------------------------------------------------------------ published metrics the run reports
def _published(tmp_path, protocol, extra):
    path = tmp_path / "c.yaml"
    path.write_text("dataset: {name: synthetic_reid, n_people: 12}\n"
                    "features: [{name: colour, extractor: color_strips, bins: 8}]\n"
                    f"protocol: {protocol}\ntrials: 1\nrankers:\n  - {{name: A, ranker: l1}}\n"
                    "  - {name: B, ranker: euclidean}\n" + extra)
    return load_experiment(path)


def _expect(metric, **more):
    fields = "".join(f", {k}: {v!r}" for k, v in more.items())
    return f"expected: [{{method: A, metric: {metric}, value: 0.5, tolerance: 0.1{fields}}}]\n"


REID = "{name: reid, n_test: 6, ranks: [1, 3]}"


@pytest.mark.parametrize("protocol, extra, line", [
    (REID, _expect("cmc@5"), "expected.0.metric: expected a metric the run reports, got 'cmc@5'; protocol reid "
                             "reports cmc@K at K = 1, 3"),
    (REID, _expect("cmc@03"), "expected.0.metric: expected a metric the run reports, got 'cmc@03'"),
    # no ranks: the usual ones that fit in the gallery of n_test = 6 people, 1 and 5
    ("{name: reid, n_test: 6}", _expect("cmc@10"),
     "got 'cmc@10'; protocol reid reports cmc@K at K = 1, 5"),
    (REID, "claims: [{kind: better, method: A, than: B, metric: map, baseline_limit: {method: A, metric: cmc@5}}]\n",
     "claims.0.baseline_limit.metric: expected a metric the run reports, got 'cmc@5'"),
    (REID + "\nsweep: {protocol.ranks: [[1], [1, 3]]}", _expect("cmc@3", setting="protocol.ranks=[1]"),
     "expected.0.metric: expected a metric the run reports, got 'cmc@3'; protocol reid reports cmc@K at K = 1"),
])
def test_a_published_number_the_run_never_measures_is_refused_before_any_work(tmp_path, protocol, extra, line):
    with pytest.raises(ConfigError) as err:
        plan(_published(tmp_path, protocol, extra))
    assert len(str(err.value).splitlines()) == 1
    assert str(err.value).startswith(f"{tmp_path / 'c.yaml'}: ") and line in str(err.value)


@pytest.mark.parametrize("protocol, extra", [
    (REID, _expect("cmc@3")),
    (REID, _expect("nauc") + "claims: [{kind: better, method: A, than: B, metric: map}]\n"),
    (REID, _expect("train_s")),
    ("{name: reid, n_test: 6}", _expect("cmc@5")),
    # in a sweep: at the setting it names, or, naming none, at some setting
    (REID + "\nsweep: {protocol.ranks: [[1], [1, 3]]}", _expect("cmc@3", setting="protocol.ranks=[1, 3]")),
    (REID + "\nsweep: {protocol.ranks: [[1], [1, 3]]}", _expect("cmc@3")),
])
def test_a_published_number_the_run_measures_is_accepted(tmp_path, protocol, extra):
    assert plan(_published(tmp_path, protocol, extra)).faults() == []


def test_depths_say_which_ap_and_map_a_retrieval_protocol_reports():
    """The protocol's own declaration (``metric_numbers``): ``ap@D`` / ``map@D`` at its ``depths``,
    per concept too; full depth always."""
    from types import SimpleNamespace

    from rankbench.engine.plan import check_reported
    from rankbench.registry import protocols

    proto = protocols.build("retrieval", {"depths": [100, 500]}, "protocol")
    assert proto.reported_numbers("map@D", None) == (100, 500) and proto.reported_numbers("map", None) is None
    settings = [SimpleNamespace(label="", protocol=proto, dataset=None)]

    def published(*metrics):
        return SimpleNamespace(expected=[SimpleNamespace(metric=m, setting=None) for m in metrics], claims=[])

    check_reported(published("map@100", "ap@500/car", "map", "ap/car"), settings, "c.yaml")
    with pytest.raises(ConfigError) as err:
        check_reported(published("map@100", "map@1000", "ap@50/car"), settings, "c.yaml")
    assert str(err.value).splitlines() == [
        "c.yaml: expected.1.metric: expected a metric the run reports, got 'map@1000'; protocol retrieval reports "
        "map@D at D = 100, 500",
        "c.yaml: expected.2.metric: expected a metric the run reports, got 'ap@50/car'; protocol retrieval reports "
        "ap@D at D = 100, 500"]

"""Components given by file path (``path/to/file.py:Class``) run in worker processes: joblib's
(``--jobs 2``) and a Dask cluster's, for every kind, with the numbers of a run in one process.

The protocol, the feature extractor and the loader are objects the run sends to its workers: they
come from a copy of the plug-in that imports only in this test's process, so the runs pass only
if those objects travel by value. Rankers and preprocessors travel by name; each worker loads
their file itself, and a file that does not load there fails the jobs with its name.
"""

import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import distributed
import pandas as pd
import pytest
from click.testing import CliRunner

from rankbench.cli import main
from rankbench.registry import load_by_path

PLUGIN = Path(__file__).resolve().parents[1] / "plugins" / "by_path.py"
CFG = """\
name: bypath
dataset: {name: synthetic_reid, n_people: 40}
features: [{name: colour, extractor: color_strips, bins: 8}]
protocol: {name: reid, n_test: 10, ranks: [1, 5]}
trials: 2
rankers:
  - {name: L1, ranker: l1}
  - {name: Std, ranker: euclidean, preprocess: [{name: standardize}]}
"""
# kind -> (the built-in in CFG, the plug-in's class that replaces it)
KINDS = {
    "protocol": ("name: reid", "name: '{}:ReId'"),
    "extractor": ("extractor: color_strips, bins: 8", "extractor: '{}:MeanColour'"),
    "loader": ("name: synthetic_reid", "name: '{}:People'"),
    "ranker": ("ranker: l1", "ranker: '{}:L1'"),
    "preprocessor": ("name: standardize", "name: '{}:Standardize'"),
}
BY_VALUE = ("protocol", "extractor", "loader")
TIMING = ["train_s", "test_s", "peak_mb"]


@pytest.fixture(scope="module")
def cluster():
    """The scheduler address of a two-worker loopback cluster (workers in processes of their own)."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None,
                                  scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                                  silence_logs=logging.CRITICAL) as cl:
        yield cl.scheduler_address


@pytest.fixture(scope="module")
def here_only(tmp_path_factory) -> Path:
    """A copy of the plug-in that no process but this one can import."""
    copy = tmp_path_factory.mktemp("plugin") / "here_only.py"
    copy.write_text(PLUGIN.read_text().replace("ONLY_IN_PID = None", f"ONLY_IN_PID = {os.getpid()}"))
    return copy


@pytest.fixture(scope="module")
def in_one_process(tmp_path_factory, here_only):
    """kind -> the values of its config run in this process alone (computed once per kind)."""
    done = {}

    def values_of(kind: str) -> pd.DataFrame:
        if kind not in done:
            tmp = tmp_path_factory.mktemp(kind)
            res = run(config(tmp, kind, here_only if kind in BY_VALUE else PLUGIN), tmp / "run")
            assert res.exit_code == 0, res.output
            done[kind] = values(tmp / "run")
        return done[kind]

    return values_of


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "cache"))


def config(tmp_path: Path, kind: str, plugin: Path) -> Path:
    builtin, mine = KINDS[kind]
    assert CFG.count(builtin) == 1
    cfg = tmp_path / f"{kind}.yaml"
    cfg.write_text(CFG.replace(builtin, mine.format(plugin)))
    return cfg


def run(cfg: Path, out: Path, *extra):
    return CliRunner().invoke(main, ["run", str(cfg), "--out", str(out), "-q", "--no-plots", "--no-cache",
                                     *map(str, extra)])


def values(out: Path) -> pd.DataFrame:
    t = pd.read_csv(out / "trials.csv", dtype=str, keep_default_na=False)
    return t[~t.metric.isin(TIMING)].reset_index(drop=True)


@pytest.mark.parametrize("executor", ["jobs", "dask"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_a_component_by_path_runs_in_workers(kind, executor, tmp_path, here_only, cluster, in_one_process):
    reference = in_one_process(kind)
    assert len(reference) == 2 * 2 * 4  # trials x methods x (cmc@1, cmc@5, nauc, map)
    where = ["--jobs", 2] if executor == "jobs" else ["--executor", "dask", "--scheduler", cluster]
    res = run(config(tmp_path, kind, here_only if kind in BY_VALUE else PLUGIN), tmp_path / "run", *where)
    assert res.exit_code == 0, res.output
    pd.testing.assert_frame_equal(values(tmp_path / "run"), reference)


@pytest.mark.parametrize("executor", ["jobs", "dask"])
def test_a_ranker_file_that_fails_in_the_workers_fails_its_jobs_naming_it(executor, tmp_path, here_only, cluster):
    where = ["--jobs", 2] if executor == "jobs" else ["--executor", "dask", "--scheduler", cluster]
    res = run(config(tmp_path, "ranker", here_only), tmp_path / "run", *where)
    assert res.exit_code == 1 and "Traceback" not in res.output, res.output
    assert res.output.strip().splitlines()[-1].startswith("rankbench: error: 2 of 4 jobs failed (L1;"), res.output
    failed = [line for line in res.output.splitlines() if "FAILED in build" in line]
    assert len(failed) == 2 and all(f"cannot import '{here_only}'" in line for line in failed), res.output
    assert len(values(tmp_path / "run")) == 2 * 4  # the other method's results are kept


def test_a_job_whose_code_a_dask_worker_cannot_load_is_one_line(tmp_path, cluster, monkeypatch):
    """The protocol's file imports a module that exists only in this process: not on the workers."""
    import types

    helper = types.ModuleType("rankbench_test_only_here")
    exec("def n_test(n):\n    return n\n", helper.__dict__)
    monkeypatch.setitem(sys.modules, helper.__name__, helper)
    plugin = tmp_path / "needs_helper.py"
    plugin.write_text(textwrap.dedent("""\
        from rankbench_test_only_here import n_test
        from rankbench.protocols.reid import ReIdentification


        class ReId(ReIdentification):
            def evaluate(self, *args, **kwargs):
                self.n_test = n_test(self.n_test)
                return super().evaluate(*args, **kwargs)
        """))
    cfg = config(tmp_path, "protocol", plugin)
    res = run(cfg, tmp_path / "run", "--executor", "dask", "--scheduler", cluster)
    assert res.exit_code == 1, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "cannot load a job (ModuleNotFoundError: No module named " \
        "'rankbench_test_only_here')" in lines[0] and lines[0].startswith("rankbench: error: dask worker tcp://"), \
        res.output


def test_a_files_module_has_the_same_name_in_every_process(tmp_path):
    """Another interpreter, with another hash seed, names the module of the same file the same."""
    copy = tmp_path / "plugin.py"
    copy.write_text("class Thing:\n    pass\n")
    here = load_by_path(f"{copy}:Thing").__module__
    code = f"from rankbench.registry import load_by_path; print(load_by_path({str(copy)!r} + ':Thing').__module__)"
    names = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120,
                            env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout.strip()
             for seed in (1, 2)}
    assert names == {here} and here.startswith("rankbench_user_")
    assert load_by_path(f"{PLUGIN}:L1").__module__ != here  # another file, another name

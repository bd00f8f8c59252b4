"""rankbench.engine.jobs: one job, a method fitted and scored on one trial's split, in this process.
A finished job's metrics equal a brute-force CMC; a failing one is contained in a failed record
that names its error and phase; warnings are kept once each with their count."""

from __future__ import annotations

import io
import os
import sys
import warnings

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.base import BaseEstimator
from toydata import synthetic_reid_config

from rankbench.components import ComponentSpec
from rankbench.config import load_experiment
from rankbench.engine.estimator import MethodSpec
from rankbench.engine.execute import draw_splits, method_matrix, setting_features
from rankbench.engine.jobs import Job, fault_line, run_job
from rankbench.engine.plan import EngineOptions, plan
from rankbench.errors import DataError
from rankbench.rankers.base import PairScorer


class Cityblock(PairScorer, BaseEstimator):
    """Negative L1 distance; ``fault``: raise in fit ("fit"), exit in fit ("exit"); warns in fit."""

    def __init__(self, fault: str = "off"):
        self.fault = fault

    def fit(self, X, y, cams=None):
        warnings.warn("said twice")
        warnings.warn("said twice")
        if self.fault == "fit":
            raise ValueError("broken\non purpose")
        if self.fault == "exit":
            raise SystemExit(3)
        if self.fault == "_exit":     # ended the run's own process (-j 1) at status 0, saying nothing
            os._exit(0)
        if self.fault == "close stdout":
            sys.stdout.close()
        if self.fault == "replace stderr":
            sys.stderr = io.StringIO()
        if self.fault == "chdir":
            os.chdir("/")
        self.n_features_in_ = np.asarray(X).shape[1]
        return self

    def similarity(self, Q, G):
        return -cdist(Q, G, "cityblock")


def _one_job(tmp_path, fault="off"):
    path = tmp_path / "c.yaml"
    path.write_text(synthetic_reid_config(n_people=12, n_test=6, ranks=[1, 3], trials=1)
                    + "rankers: [{name: L1, ranker: l1}]\n")
    spec = MethodSpec("C", ComponentSpec.of(Cityblock(fault)), ["colour"], "concat")
    sp = plan(load_experiment(path), methods=[spec]).settings[0]
    assert [m.name for m in sp.methods] == ["C"]
    feats = setting_features(sp, {}, EngineOptions(progress=False, use_cache=False), {})
    split = draw_splits(sp, run_seed=0, feats=feats)[0]
    X = method_matrix(sp.methods[0], feats)
    job = Job("", 0, "C", split.seed, split.ranker_seed)
    return run_job(job, sp.protocol, sp.methods[0], X, sp.dataset, split), X, sp.dataset, split


def test_a_finished_job_scores_as_a_brute_force_cmc(tmp_path):
    rec, X, data, split = _one_job(tmp_path)
    assert rec.ok and rec.key == ("", 0, "C") and rec.reused is None
    ids = data.column("identity")
    P, G = np.asarray(split.probe), np.asarray(split.gallery)
    D = cdist(X[P], X[G], "cityblock")
    # the rank of each probe's true match: 1 + gallery items strictly closer (no ties in these features)
    rank = np.array([1 + (D[i] < D[i][ids[G] == ids[p]].min()).sum() for i, p in enumerate(P)])
    for k in (1, 3):
        assert rec.metrics[f"cmc@{k}"] == pytest.approx(np.mean(rank <= k))
    assert rec.warnings[0].model_dump() == {"text": "UserWarning: said twice", "count": 2}


@pytest.mark.parametrize("fault, error", [("fit", "ValueError: broken on purpose"),
                                          ("exit", "SystemExit: the ranker's code called sys.exit(3)"),
                                          ("_exit", "SystemExit: the ranker's code called os._exit(0)")])
def test_a_failing_job_is_a_failed_record_not_the_end_of_the_run(tmp_path, fault, error):
    rec, *_ = _one_job(tmp_path, fault)
    assert not rec.ok and rec.metrics == {} and rec.error == error
    assert rec.phase == "fit" and {"fit": "broken", "exit": "SystemExit", "_exit": "ExitRefused"}[fault] in rec.traceback
    assert os._exit.__module__ == "posix"      # the real one back


@pytest.mark.parametrize("fault, said", [("replace stderr", "replaced sys.stderr"),
                                         ("chdir", "changed the working directory to /")])
def test_a_ranker_that_changes_a_stream_or_the_directory_gets_it_back_with_a_warning(tmp_path, monkeypatch, fault, said):
    # so that the run can still print its summary (a closed stdout gave a traceback at the very end)
    # and write its folder where it began (a chdir split it in two)
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.chdir(tmp_path)
    rec, *_ = _one_job(tmp_path, fault)
    assert rec.ok and f"RuntimeWarning: the ranker's code {said}; rankbench put it back" in [w.text for w in rec.warnings]
    assert not sys.stdout.closed and sys.stderr is err and os.getcwd() == str(tmp_path)
    print("still printing")


def test_a_ranker_that_closes_stdout_closes_only_what_it_was_given(tmp_path, monkeypatch):
    # a closed stdout gave a traceback at the very end; the ranker's stdout is its own now (its
    # prints go to stderr), so closing it closes nothing of the run's
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    rec, *_ = _one_job(tmp_path, "close stdout")
    assert rec.ok and sys.stdout is out and not out.closed
    assert not [w.text for w in rec.warnings if "sys.stdout" in w.text]


def test_fault_line_is_one_line():
    assert fault_line(DataError("dataset 'x': bad\n  rows")) == "dataset 'x': bad rows"
    assert fault_line(KeyError("k")) == "KeyError: 'k'"
    assert fault_line(ValueError("")) == "ValueError"
    assert len(fault_line(ValueError("x" * 2000))) == 500

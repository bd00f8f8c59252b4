"""rankbench.engine.manifest: a resumed run is the run its folder started (same config, same
rankbench, a manifest that vouches for it, splits within the data); anything else is refused in one
line, nothing mixed in. The manifest of a run records its config, its sessions and its counts."""

from __future__ import annotations

import json

import pytest
from toydata import synthetic_reid_config

from rankbench.config import set_path
from rankbench.engine.manifest import verify_resume
from rankbench.runfolder import RunFolder, RunFolderError, config_fingerprint
from rankbench.utils import diskcache

GOOD = synthetic_reid_config(n_people=16, n_test=6, ranks=[1, 5], trials=2) + \
    "rankers:\n  - {name: L1, ranker: l1}\n  - {name: P, ranker: prsvm, C: 1.0}\n"


@pytest.fixture
def half_done(cli, tmp_path):
    """A run with one of its four results deleted (as if interrupted): (config, run folder)."""
    path, out = tmp_path / "c.yaml", tmp_path / "run"
    path.write_text(GOOD)
    assert cli("run", path, "--out", out, "-q", "--no-plots").exit_code == 0
    next(iter(sorted((out / "trials").glob("*.json")))).unlink()
    return path, out


def one_line(res, needle: str, status: int = 1) -> str:
    lines = res.output.strip().splitlines()
    assert res.exit_code == status and len(lines) == 1 and lines[0].startswith("rankbench: error: "), res.output
    assert needle in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("key, value, shown", [
    ("seed", 7, "seed: absent then, 7 now"),
    ("rankers.P.C", 10.0, "rankers.P.C: 1.0 then, 10.0 now"),
    ("protocol.n_test", 5, "protocol.n_test: 6 then, 5 now"),
])
def test_resume_refuses_a_config_edited_after_the_start(cli, half_done, key, value, shown):
    _, out = half_done
    folder = RunFolder(out)
    cfg = folder.read_config()
    set_path(cfg, key, value, "test")
    folder.write_config(cfg)
    one_line(cli("run", "--resume", out), f"config.yaml was changed after the run started ({shown}); put it back")
    assert len(list(folder.trials_dir.glob("*.json"))) == 3     # nothing mixed in


def test_resume_refuses_a_run_whose_plug_in_code_changed(cli, tmp_path):
    """Trials of two versions of a user's ranker would be averaged together: refused, naming its file;
    an edit that leaves the code as it was (a comment) resumes."""
    ranker = tmp_path / "mine.py"
    ranker.write_text("from scipy.spatial.distance import cdist\nfrom sklearn.base import BaseEstimator\n"
                      "from rankbench.rankers.base import PairScorer\n\n\nclass Mine(PairScorer, BaseEstimator):\n"
                      "    def fit(self, X, y, cams=None):\n        return self\n\n"
                      "    def similarity(self, Q, G):\n        return -cdist(Q, G, 'cityblock')\n")
    path, out = tmp_path / "c.yaml", tmp_path / "run"
    path.write_text(GOOD.replace("{name: P, ranker: prsvm, C: 1.0}", f"{{name: M, ranker: '{ranker}:Mine'}}"))
    assert cli("run", path, "--out", out, "-q", "--no-plots", "--no-cache").exit_code == 0
    assert json.loads((out / "manifest.json").read_text())["plugin_code"]
    next(iter(sorted((out / "trials").glob("M-*.json")))).unlink()
    ranker.write_text(ranker.read_text() + "# a comment\n")
    assert cli("run", "--resume", out, "-q", "--no-plots").exit_code == 0
    next(iter(sorted((out / "trials").glob("M-*.json")))).unlink()
    ranker.write_text(ranker.read_text().replace("'cityblock'", "'euclidean'"))
    diskcache.module_fingerprint.cache_clear()   # as a new process would read it
    one_line(cli("run", "--resume", out), f"the code of plug-in Mine ({ranker}, or a module of its own package or "
                                          "folder) changed since the run started; put it back or start a new run")
    assert len(list((out / "trials").glob("*.json"))) == 3     # nothing mixed in


def test_resume_refuses_a_run_of_another_rankbench(cli, half_done):
    _, out = half_done
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["rankbench_version"] = "0.0.1"
    (out / "manifest.json").write_text(json.dumps(manifest))
    one_line(cli("run", "--resume", out), "the run was made by rankbench 0.0.1, this is rankbench")


@pytest.mark.parametrize("how", ["missing", "garbage", "fingerprint"])
def test_resume_refuses_a_run_whose_manifest_cannot_vouch_for_it(cli, half_done, how):
    _, out = half_done
    path = out / "manifest.json"
    if how == "missing":
        path.unlink()
    elif how == "garbage":
        path.write_text("{not json")
    else:
        manifest = json.loads(path.read_text())
        manifest["config_fingerprint"] = "0" * 32
        path.write_text(json.dumps(manifest))
    one_line(cli("run", "--resume", out), "manifest" if how != "fingerprint" else "config_fingerprint")


def test_resume_refuses_splits_beyond_the_dataset(cli, half_done):
    _, out = half_done
    splits = json.loads((out / "splits.json").read_text())
    splits["settings"][0]["trials"][0]["probe"][0] = 10_000
    (out / "splits.json").write_text(json.dumps(splits))
    one_line(cli("run", "--resume", out), "row 10000 is beyond the dataset's 32 items")
    one_line(cli("report", out), "splits.json: not a usable splits file")


def test_a_resumed_run_stays_in_its_own_folder(cli, half_done, tmp_path):
    _, out = half_done
    one_line(cli("run", "--resume", out, "--out", tmp_path / "elsewhere"), "--out", status=2)
    assert not (tmp_path / "elsewhere").exists()
    assert cli("run", "--resume", out, "-q", "--no-plots").exit_code == 0
    assert len(list((out / "trials").glob("*.json"))) == 4


def test_a_resumed_run_keeps_where_it_came_from(cli, half_done):
    # collect files a run under its config's folder: a resume recorded its own config.yaml instead
    path, out = half_done
    before = json.loads((out / "manifest.json").read_text())
    assert cli("run", "--resume", out, "-q", "--no-plots").exit_code == 0
    after = json.loads((out / "manifest.json").read_text())
    assert before["config_path"] == str(path) and len(after["sessions"]) == 2
    assert {k: after[k] for k in ("config_path", "cwd", "invocation")} == \
        {k: before[k] for k in ("config_path", "cwd", "invocation")}


def test_verify_resume_gives_the_folders_run_or_refuses_it_in_one_line(half_done):
    _, out = half_done
    folder = RunFolder(out)
    state = verify_resume(folder)
    assert state.config == folder.read_config() and len(state.records) == 3
    (out / "manifest.json").unlink()
    with pytest.raises(RunFolderError) as err:
        verify_resume(folder)
    assert str(err.value) == (f"--resume {out}: no manifest.json: the run's config and version cannot be "
                              "verified; start a new run")


def test_the_manifest_records_the_run_its_counts_and_its_time_per_method(cli, tmp_path):
    path, out = tmp_path / "c.yaml", tmp_path / "run"
    path.write_text(GOOD)
    assert cli("run", path, "--out", out, "-q", "--no-plots").exit_code == 0
    folder = RunFolder(out)
    m, (records, _) = folder.read_manifest(), folder.read_trials()
    assert m.config_fingerprint == config_fingerprint(folder.read_config())
    assert (m.n_results, m.n_failed, m.n_expected, m.complete) == (4, 0, 4, True)
    assert len(m.sessions) == 1 and m.sessions[0].end == m.end is not None
    for method in ("L1", "P"):
        want = sum(r.wall_s for r in records if r.method == method)
        assert m.wall_s_per_method[method] == pytest.approx(want, abs=1e-3)

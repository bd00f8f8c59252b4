"""The on-disk object cache: computed once, reloaded, corrupt entries recomputed."""

import numpy as np

from rankbench.utils.diskcache import cached, digest


def test_computed_once_then_loaded(tmp_path, monkeypatch):
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path))
    calls = []

    def compute():
        calls.append(1)
        return {"a": np.arange(3)}

    a, hit_a = cached("things", "k1", compute)
    b, hit_b = cached("things", "k1", compute)
    assert (hit_a, hit_b) == (False, True) and len(calls) == 1 and b["a"].tolist() == [0, 1, 2]
    (tmp_path / "things" / "k1.joblib").write_bytes(b"not a joblib file")
    c, hit_c = cached("things", "k1", compute)
    assert not hit_c and len(calls) == 2
    d, hit_d = cached("things", "k1", compute, enabled=False)
    assert not hit_d and len(calls) == 3
    # a whole, valid entry copied under another key's name is not that key's value
    cached("things", "k2", lambda: {"a": np.arange(5)})
    (tmp_path / "things" / "k1.joblib").write_bytes((tmp_path / "things" / "k2.joblib").read_bytes())
    e, hit_e = cached("things", "k1", compute)
    assert not hit_e and len(calls) == 4 and e["a"].tolist() == [0, 1, 2]
    # a write killed midway (SIGKILL) left its temporary file for ever, counted in the cache's size
    (tmp_path / "things" / ".k3.joblib.0123abcd.tmp").write_bytes(b"x" * 1000)
    cached("things", "k3", compute)
    assert not list((tmp_path / "things").glob("*.tmp"))


def test_a_wait_for_another_process_computing_the_entry_is_said(tmp_path, monkeypatch, caplog):
    """Before: a run waiting on another run's identical job showed 'running: RB trial 0 (60 s)'
    with no word of the wait, as long as the other run's fit took."""
    import threading
    import time

    from rankbench.utils.fileio import FileLock
    from rankbench.utils.progress import WAITING, FitReporter, describe_loops, reporting

    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path))
    cached("things", "seed", lambda: 1)          # makes the kind's folder
    held = FileLock(tmp_path / "things" / "k.lock", tmp_path)   # the other process, computing
    threading.Timer(0.3, held.release).start()
    states = []
    with caplog.at_level("INFO", logger="rankbench"), reporting(FitReporter("job", states.append, interval=60)):
        t0 = time.monotonic()
        value, hit = cached("things", "k", lambda: 7)
    assert time.monotonic() - t0 >= 0.25 and (value, hit) == (7, False)
    assert describe_loops(states[-1]["loops"]) == WAITING    # said at once, not after the interval
    assert "another process is computing this entry; waiting to take it" in caplog.text
    reporter = FitReporter("job", states.append)
    reporter.tick(WAITING, 0, None)
    reporter.tick("round", 1, 10)                 # computing after all: the wait is over
    assert describe_loops(reporter.loops) == "round 1/10"


def test_digest_sees_values_shapes_and_dtypes():
    x = np.arange(6.0)
    assert digest(x, {"C": 1}) == digest(x.copy(), {"C": 1})
    assert digest(x) != digest(x.reshape(2, 3)) != digest(x.astype(np.float32))
    assert digest({"a": x}) != digest({"b": x}) and digest(x, {"C": 1}) != digest(x, {"C": 2})


def test_usage_counts_entries_per_kind_and_clear_frees_only_what_is_named(tmp_path, monkeypatch):
    from rankbench.utils.diskcache import clear, usage

    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path))
    for k in ("k1", "k2"):
        cached("base_models", k, lambda: np.zeros(1000))
    (tmp_path / "features").mkdir()
    (tmp_path / "features" / "x.npy").write_bytes(b"0" * 10)
    (tmp_path / "features" / "x.json").write_text("{}")           # a side file, not an entry
    u = {c.kind: c for c in usage()}
    assert (u["base_models"].entries, u["features"].entries) == (2, 1)
    assert u["base_models"].bytes > 16000 and u["features"].bytes == 12
    assert clear(["features"]).freed == 12 and [c.kind for c in usage()] == ["base_models"]
    done = clear()
    assert done.freed > 16000 and done.kept == 0 and not done.errors and usage() == []



def test_only_rankbench_kinds_are_shown_and_cleared(tmp_path, monkeypatch):
    """RANKBENCH_CACHE=~/.cache: every sub-folder was taken as a kind, listed and deleted (other tools' caches)."""
    import re
    from pathlib import Path

    from rankbench.utils.diskcache import KINDS, clear, usage

    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path))
    cached("features", "k1", lambda: np.zeros(10))
    for other in ("photos", "Documents/deep"):
        (tmp_path / other).mkdir(parents=True)
        (tmp_path / other / "keep.joblib").write_bytes(b"mine")
    assert [u.kind for u in usage()] == ["features"]
    assert clear().freed > 0 and usage() == []
    assert (tmp_path / "photos" / "keep.joblib").read_bytes() == (tmp_path / "Documents/deep/keep.joblib").read_bytes()
    # every kind rankbench writes is one the cache shows and clears
    src = Path(__file__).parents[2] / "rankbench"
    written = {k for f in src.rglob("*.py") for k in re.findall(r'\bcached\("(\w+)"', f.read_text())}
    assert written and written <= set(KINDS), written

def test_code_fingerprint_follows_the_code_and_the_family_modules_it_imports(tmp_path, monkeypatch):
    """Editing a docstring or a comment keeps the key; editing code, in the module or in a module
    of its family it imports, changes it; a module outside the family does not count."""
    import importlib
    import sys

    from rankbench.utils import diskcache

    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "fam").mkdir()
    (tmp_path / "other.py").write_text("K = 1\n")
    files = {"fam/__init__.py": "", "fam/feats/__init__.py": "", "fam/feats/_helper.py": "def h(x):\n    return x + 1\n",
             "fam/feats/plug.py": '"""Doc."""\nimport other\nfrom ._helper import h\n\nclass P:\n    """Doc."""\n'
                                  "    def f(self, x):\n        return h(x)\n"}

    def fingerprint(**edits):
        for name, text in {**files, **edits}.items():
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_text(text)
        for m in [m for m in sys.modules if m == "other" or m.startswith("fam")]:
            monkeypatch.delitem(sys.modules, m)
        diskcache.module_fingerprint.cache_clear()
        return diskcache.code_fingerprint(importlib.import_module("fam.feats.plug").P)

    base = fingerprint()
    plug = files["fam/feats/plug.py"]
    assert fingerprint(**{"fam/feats/plug.py": plug.replace("Doc.", "Other words.") + "# a comment\n"}) == base
    assert fingerprint(**{"other.py": "K = 2\n"}) == base
    assert fingerprint(**{"fam/feats/plug.py": plug.replace("h(x)", "h(x) * 2")}) != base
    assert fingerprint(**{"fam/feats/_helper.py": "def h(x):\n    return x + 2\n"}) != base
    assert fingerprint() == base


def test_a_plug_in_fingerprint_covers_its_package_or_the_files_beside_it(tmp_path, monkeypatch):
    """A plug-in's family is its own code: every module of its top-level package, or, for a file
    outside any package, the modules beside it; numpy and the like are not."""
    import importlib
    import sys

    from rankbench.utils import diskcache

    monkeypatch.syspath_prepend(str(tmp_path))
    files = {"mypkg/__init__.py": "", "mypkg/helpers.py": "def w(x):\n    return x\n",
             "mypkg/rankers.py": "import numpy\nfrom mypkg.helpers import w\n\nclass R:\n    pass\n",
             "helper.py": "def w(x):\n    return x\n", "my_ranker.py": "import numpy\nfrom helper import w\n\nclass R:\n    pass\n",
             # a file outside any package that imports a package of its own beside it
             "hpkg/__init__.py": "", "hpkg/dist.py": "def d(x):\n    return abs(x)\n",
             "my_dist.py": "import numpy\nfrom hpkg import dist\n\nclass R:\n    pass\n"}

    def fingerprint(module, **edits):
        for name, text in {**files, **edits}.items():
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_text(text)
        for m in [m for m in sys.modules if m.split(".")[0] in ("mypkg", "helper", "my_ranker", "hpkg", "my_dist")]:
            monkeypatch.delitem(sys.modules, m)
        diskcache.module_fingerprint.cache_clear()
        return diskcache.code_fingerprint(importlib.import_module(module).R)

    for module, helper in (("mypkg.rankers", "mypkg/helpers.py"), ("my_ranker", "helper.py"), ("my_dist", "hpkg/dist.py")):
        base = fingerprint(module)
        assert fingerprint(module, **{helper: "def w(x):\n    return 0 * x\n"}) != base, module
        assert fingerprint(module) == base


def test_a_plug_in_fingerprint_covers_the_files_it_may_read_beside_its_code(tmp_path, monkeypatch):
    """A ranker that reads weights.txt beside it: before, editing the file reused the results of the
    old weights (cmc@1 25.00 where --no-cache gives 5.00). Configs and sub-folders (run folders)
    beside it are not its inputs."""
    import importlib
    import os
    import sys

    from rankbench.utils import diskcache

    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "w_ranker.py").write_text("class R:\n    pass\n")
    (tmp_path / "weights.txt").write_text("1.0\n")
    (tmp_path / "run.yaml").write_text("trials: 1\n")

    def fingerprint():
        monkeypatch.delitem(sys.modules, "w_ranker", raising=False)
        diskcache.module_fingerprint.cache_clear()
        return diskcache.code_fingerprint(importlib.import_module("w_ranker").R)

    base = fingerprint()
    (tmp_path / "run.yaml").write_text("trials: 5\n")
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "summary.csv").write_text("a,b\n")
    assert fingerprint() == base
    (tmp_path / "weights.txt").write_text("0.0\n")
    os.utime(tmp_path / "weights.txt", ns=(0, 0))   # same size: the time tells
    assert fingerprint() != base


def test_an_extractor_fingerprint_covers_the_rankbench_code_it_calls(monkeypatch):
    """pixels' transductive_pca calls preprocess/pca.py: an edit there changed its features, and the
    cache served the old ones (its key covered rankbench.features only)."""
    import ast

    from rankbench.features.raw import Pixels
    from rankbench.utils import diskcache

    base = diskcache.code_fingerprint(Pixels)
    real = diskcache._syntax_tree
    monkeypatch.setattr(diskcache, "_syntax_tree", lambda m: ast.parse("WHITEN = True") if m == "rankbench.preprocess.pca"
                        else real(m))
    diskcache.module_fingerprint.cache_clear()
    try:
        assert diskcache.code_fingerprint(Pixels) != base
    finally:
        diskcache.module_fingerprint.cache_clear()


def test_two_clears_at_once_both_succeed(tmp_path):
    """``rankbench cache --clear`` twice at once: each exits 0 (they take turns; a file the other
    one removed is not an error) and the cache ends empty."""
    import os
    import subprocess
    import sys

    for kind in ("features", "base_models", "trials"):
        (tmp_path / kind).mkdir()
        for i in range(300):
            (tmp_path / kind / f"k{i}.joblib").write_bytes(b"0" * 100)
    env = {**os.environ, "RANKBENCH_CACHE": str(tmp_path)}
    procs = [subprocess.Popen([sys.executable, "-m", "rankbench", "cache", "--clear"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for _ in range(3)]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], outs
    assert "Traceback" not in "".join(outs) and sorted(os.listdir(tmp_path)) == []


def test_a_cache_folder_that_is_a_file_is_said_once_and_nothing_is_lost(tmp_path, monkeypatch, caplog):
    """A run asks the cache for every job: the warning came once per job (16 in one run)."""
    from rankbench.utils import diskcache

    (tmp_path / "cache").write_text("a file")
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(diskcache, "_SAID", set())
    got = [cached("trials", f"k{i}", lambda i=i: i) for i in range(5)]
    assert got == [(i, False) for i in range(5)]
    said = [r.getMessage() for r in caplog.records if "computing without the cache" in r.getMessage()]
    assert len(said) == 1 and "exists and is not a folder" in said[0]

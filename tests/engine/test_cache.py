"""The feature cache: reused when nothing changed, recomputed when anything did, never trusted corrupt."""

import sys
import types

import numpy as np
import pandas as pd

from rankbench.datasets.base import Dataset
from rankbench.engine.cache import get_features
from rankbench.features.base import Extractor
from rankbench.utils import diskcache


class Counting(Extractor):
    calls = 0
    execution_params = ("batch",)

    def __init__(self, scale=1.0, batch=4):
        self.scale = scale
        self.batch = batch

    def transform_image(self, img):
        Counting.calls += 1
        return img.reshape(-1).astype(float) * self.scale


Counting.registry_name = "counting"


def toy(fp="f1", n=5):
    imgs = np.arange(n * 4 * 4 * 3, dtype=np.uint8).reshape(n, 4, 4, 3)
    return Dataset("toy", pd.DataFrame({"id": [str(i) for i in range(n)]}), arrays={"images": imgs}, fingerprint=fp)


def test_feature_cache_reuses_and_is_keyed_by_params(tmp_path, monkeypatch):
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path))
    ds = toy()
    Counting.calls = 0
    a = get_features(ds, Counting())
    assert Counting.calls == 5
    b = get_features(ds, Counting(batch=2))  # an execution parameter does not key the cache
    assert Counting.calls == 5 and np.array_equal(a, b)
    c = get_features(ds, Counting(scale=2.0))
    assert Counting.calls == 10 and np.allclose(c, 2 * a)
    ds.fingerprint = "f2"  # other content: computed afresh
    get_features(ds, Counting())
    assert Counting.calls == 15


def test_corrupt_cache_entry_is_recomputed(tmp_path, monkeypatch):
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path))
    ds = toy("x", 1)
    get_features(ds, Counting())
    entries = list((tmp_path / "features").glob("*.joblib"))
    assert len(entries) == 1
    for p in entries:
        p.write_bytes(b"garbage")
    Counting.calls = 0
    assert get_features(ds, Counting()).shape == (1, 48) and Counting.calls == 1


def test_parallel_extraction_equals_serial():
    ds = toy("p", 70)
    assert np.array_equal(Counting().extract(ds, n_jobs=2), Counting().extract(ds, n_jobs=1))


def test_cache_reports_whether_it_was_used_and_the_extraction_time(tmp_path, monkeypatch):
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path))
    ds = toy("t", 3)
    first, second, uncached = {}, {}, {}
    get_features(ds, Counting(), info=first)
    get_features(ds, Counting(), info=second)
    get_features(ds, Counting(), use_cache=False, info=uncached)
    assert first["cached"] is False and first["extract_seconds"] >= 0
    assert second == {"cached": True, "extract_seconds": first["extract_seconds"]}   # kept beside the entry
    assert uncached["cached"] is False


def test_features_are_keyed_by_the_extractors_code(tmp_path, monkeypatch):
    """An extractor whose code changed computes afresh (no version to bump); one whose source
    cannot be read is never cached."""
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path))
    calls = []

    def load(name, body):
        path = tmp_path / f"{name}.py"
        path.write_text("from rankbench.features.base import Extractor\n"
                        "class Scaled(Extractor):\n"
                        "    def transform_image(self, img):\n"
                        f"        CALLS.append(1)\n        return {body}\n")
        module = types.ModuleType(name)
        module.__file__ = str(path)
        module.CALLS = calls
        monkeypatch.setitem(sys.modules, name, module)
        exec(compile(path.read_text(), str(path), "exec"), module.__dict__)
        module.Scaled.__module__ = name
        module.Scaled.registry_name = "scaled"
        diskcache.module_fingerprint.cache_clear()  # read once per process: here the code changes within one
        return module.Scaled()

    ds = toy("code", 2)
    a = get_features(ds, load("plug_a", "img.reshape(-1) * 1.0"))
    get_features(ds, load("plug_a", "img.reshape(-1) * 1.0  # a comment does not change the code"))
    assert len(calls) == 2
    b = get_features(ds, load("plug_a", "img.reshape(-1) * 2.0"))
    assert len(calls) == 4 and np.array_equal(b, 2 * a)
    get_features(ds, load("plug_a", "img.reshape(-1) * 2.0"))
    assert len(calls) == 4
    unreadable = load("plug_c", "img.reshape(-1) * 3.0")
    (tmp_path / "plug_c.py").unlink()
    get_features(ds, unreadable)
    get_features(ds, unreadable)
    assert len(calls) == 8


def _entry(tmp_path):
    (entry,) = (tmp_path / "features").glob("*.joblib")
    return entry


def test_a_feature_entry_that_still_loads_but_holds_other_values_is_recomputed(tmp_path, monkeypatch, caplog):
    """A zeroed block inside the array, or other values written over the entry by an older
    rankbench (a plain joblib dump of its own), used to load and be reused: the entry's digest
    says they are not what was stored, so the features are computed again (said once)."""
    import io

    import joblib

    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path))
    ds = toy("z", 40)
    truth = Counting().extract(ds)
    get_features(ds, Counting())
    entry = _entry(tmp_path)
    data = bytearray(entry.read_bytes())
    data[len(data) // 2:len(data) // 2 + 512] = bytes(512)   # a zeroed block in the middle of X
    entry.write_bytes(bytes(data))
    other = io.BytesIO()
    joblib.dump({"X": truth * 0 + 0.123, "extract_seconds": 0.0}, other)
    for damaged in (bytes(data), other.getvalue()):
        entry.write_bytes(damaged)
        Counting.calls = 0
        with caplog.at_level("WARNING", logger="rankbench.cache"):
            caplog.clear()
            got = get_features(ds, Counting())
        assert Counting.calls == 40 and np.array_equal(got, truth)          # computed again: the true values
        assert [r.getMessage() for r in caplog.records] == [
            f"cache: {entry}: an entry whose bytes do not match their digest (damaged, another key's entry, or "
            "written by an earlier rankbench); computing it again"]
        Counting.calls = 0
        assert np.array_equal(get_features(ds, Counting()), truth) and Counting.calls == 0   # and kept, verified


def test_a_link_or_a_pipe_in_the_cache_is_never_followed_nor_waited_on(tmp_path, monkeypatch):
    """An entry, a sub-folder or a lock file replaced by a link: what the link names is untouched
    and the features are still right (computed without the cache, or kept beside the link)."""
    import os

    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "cache"))
    ds = toy("l", 6)
    truth = Counting().extract(ds)
    get_features(ds, Counting())
    entry = _entry(tmp_path / "cache")
    sentinel = tmp_path / "sentinel"
    for planted in (entry, entry.with_suffix(".lock"), entry.parent):
        for make in ("link", "fifo"):
            if planted == entry.parent and make == "fifo":
                continue
            sentinel.write_bytes(b"precious")
            get_features(ds, Counting())
            if planted.is_dir() and not planted.is_symlink():
                os.rename(planted, tmp_path / "moved")
            else:
                planted.unlink(missing_ok=True)
            if make == "link":
                planted.symlink_to(sentinel)
            else:
                os.mkfifo(planted)
            assert np.array_equal(get_features(ds, Counting()), truth), (planted, make)
            assert sentinel.read_bytes() == b"precious" and sentinel.is_file()
            if planted.is_symlink() or planted.is_fifo():
                planted.unlink()
            if planted == entry.parent:
                os.rename(tmp_path / "moved", planted)

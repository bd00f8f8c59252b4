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

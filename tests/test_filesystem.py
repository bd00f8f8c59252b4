"""The file system cannot hurt: permission errors, a full disk, a read-only mount and symbolic-link
loops are one line naming the path (nothing written earlier is lost); nothing that is not a
regular file is ever replaced; the feature cache is keyed by the files' contents; clearing a cache
that cannot be cleared says so.

Tests run as root here, so a full disk or a read-only mount is simulated by making the write
itself fail with that error (what the kernel would return), at the one place files are written.
"""

from __future__ import annotations

import errno
import os

import numpy as np
import pytest
from toydata import synthetic_reid_config

from rankbench.runfolder import RunFolder

GOOD = synthetic_reid_config(n_people=16, n_test=6, ranks=[1, 5], trials=2) + \
    "rankers:\n  - {name: L1, ranker: l1}\n  - {name: E, ranker: euclidean}\n"


def one_line(res, *needles: str) -> str:
    lines = res.output.strip().splitlines()
    assert res.exit_code == 1 and lines[-1].startswith("rankbench: error: ") and "Traceback" not in res.output, \
        res.output
    for needle in needles:
        assert needle in lines[-1], lines[-1]
    return lines[-1]


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES])
def test_a_failing_write_during_a_run_is_one_line_and_keeps_what_was_written(cli, tmp_path, monkeypatch, code):
    path, out = tmp_path / "c.yaml", tmp_path / "run"
    path.write_text(GOOD)
    real = RunFolder.write_trial
    calls = []

    def write_trial(self, record):
        calls.append(record.key)
        if len(calls) == 3:
            raise OSError(code, os.strerror(code), str(self.trial_path(*record.key)))
        return real(self, record)

    monkeypatch.setattr(RunFolder, "write_trial", write_trial)
    line = one_line(cli("run", path, "--out", out, "--no-plots"), os.strerror(code), str(out / "trials"))
    assert line.count(": ") >= 2
    records, problems = RunFolder(out).read_trials()
    assert len(records) == 2 and not problems                   # the results before it are intact
    monkeypatch.setattr(RunFolder, "write_trial", real)
    assert cli("run", "--resume", out, "--no-plots", "-q").exit_code == 0
    assert len(RunFolder(out).read_trials()[0]) == 4


def test_a_read_only_report_is_one_line(cli, tmp_path, monkeypatch):
    path, out = tmp_path / "c.yaml", tmp_path / "run"
    path.write_text(GOOD)
    assert cli("run", path, "--out", out, "--no-plots", "-q").exit_code == 0

    def read_only(self, name, text):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self.path / name))

    monkeypatch.setattr(RunFolder, "write_text", read_only)
    one_line(cli("report", out, "--no-plots"), "Read-only file system")


def test_symbolic_link_loops_are_one_line(cli, tmp_path):
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    path = tmp_path / "c.yaml"
    path.write_text(GOOD)
    one_line(cli("run", loop), "loop", "Too many levels of symbolic links")
    one_line(cli("run", path, "--out", loop / "run"), "cannot create the run folder")
    one_line(cli("features", path, "--out", loop, "--force", "-q"), "not a regular file")
    assert loop.is_symlink()


def test_nothing_but_a_regular_file_is_replaced(cli, tmp_path):
    """As root, ``features --out /dev/null --force`` replaced the device with a file: a pipe, a
    folder and a link stand in for the device here."""
    path = tmp_path / "c.yaml"
    path.write_text(GOOD)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    target = tmp_path / "elsewhere.npz"
    target.write_bytes(b"mine")
    link = tmp_path / "link.npz"
    link.symlink_to(target)
    for out in (fifo, link):
        one_line(cli("features", path, "--out", out, "--force", "-q"), "not a regular file")
    assert fifo.is_fifo() and link.is_symlink() and target.read_bytes() == b"mine"


def test_collect_never_writes_its_two_reports_to_one_file(cli, tmp_path):
    path, out = tmp_path / "c.yaml", tmp_path / "run"
    path.write_text(GOOD)
    assert cli("run", path, "--out", out, "--no-plots", "-q").exit_code == 0
    (tmp_path / "R.md").write_text("my report")
    one_line(cli("collect", out, "--out", tmp_path / "R.html"), "--out", "R.md")
    assert (tmp_path / "R.md").read_text() == "my report" and not (tmp_path / "R.html").exists()


def test_the_feature_cache_is_keyed_by_the_files_contents(tmp_path, monkeypatch):
    """Two images that swap contents keep their names, sizes and modification times: the cache
    must still see the change (it returned stale features before)."""
    import cv2

    from rankbench.engine.cache import get_features
    from rankbench.registry import datasets, features

    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "data" / "viper"
    rng = np.random.default_rng(0)
    for cam in ("cam_a", "cam_b"):
        (root / cam).mkdir(parents=True)
        for pid in range(4):
            cv2.imwrite(str(root / cam / f"{pid:03d}_000.bmp"), rng.integers(0, 256, (128, 48, 3), dtype=np.uint8))
    loader = datasets.build("viper", {})
    extractor = features.build("color_strips", {"bins": 8})
    before = get_features(loader.load(tmp_path / "data"), extractor)
    a, b = root / "cam_a" / "000_000.bmp", root / "cam_a" / "001_000.bmp"
    times = [(p.stat().st_atime_ns, p.stat().st_mtime_ns) for p in (a, b)]
    data_a, data_b = a.read_bytes(), b.read_bytes()
    a.write_bytes(data_b)
    b.write_bytes(data_a)
    for p, t in zip((a, b), times):
        os.utime(p, ns=t)
    swapped = loader.load(tmp_path / "data")
    info: dict = {}
    after = get_features(swapped, extractor, info=info)
    assert info["cached"] is False
    np.testing.assert_array_equal(after, extractor.extract(swapped))
    np.testing.assert_array_equal(after[[0, 1]], before[[1, 0]])


def test_clearing_a_cache_that_cannot_be_cleared_says_what_is_left(cli, tmp_path, monkeypatch):
    from pathlib import Path

    path = tmp_path / "c.yaml"
    path.write_text(GOOD)
    assert cli("run", path, "--out", tmp_path / "run", "-q", "--no-plots").exit_code == 0
    real = Path.unlink

    def read_only(self, missing_ok=False):
        if self.suffix == ".joblib":
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))
        return real(self, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", read_only)
    res = cli("cache", "--clear")
    line = one_line(res, "could not free", "MB", ".joblib: Read-only file system")
    assert "could not free 0.0 MB" not in line
    assert (tmp_path / "cache" / "features").is_dir() and any((tmp_path / "cache" / "features").glob("*.joblib"))


def test_a_cache_that_cannot_be_locked_for_clearing_is_named(cli, tmp_path, monkeypatch):
    """A read-only cache said '.clear.lock: Read-only file system', naming no folder."""
    from rankbench.utils import fileio

    (tmp_path / "cache" / "features").mkdir(parents=True)
    real = os.open

    def read_only(path, flags, *args, **kwargs):
        if path == ".clear.lock":
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(fileio.os, "open", read_only)
    one_line(cli("cache", "--clear"), f"{tmp_path / 'cache' / '.clear.lock'}: Read-only file system")

"""Atomic writes: nothing half-written, normal permissions."""

import os

import pytest

from rankbench.utils.fileio import atomic_write_text


def test_atomic_write_leaves_no_partial_file(tmp_path, monkeypatch):
    target = tmp_path / "x.txt"
    atomic_write_text(target, "old")

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        atomic_write_text(target, "new")
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["x.txt"]


def test_files_get_the_umask_permissions_not_private(tmp_path):
    target = tmp_path / "y.json"
    atomic_write_text(target, "{}")
    mask = os.umask(0)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask

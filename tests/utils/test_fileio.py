"""Atomic writes: nothing half-written, normal permissions, no link followed; lock files."""

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


def test_no_link_below_the_root_is_followed(tmp_path):
    """A link at the file, or at a folder between the root and the file, is refused naming it;
    what it names is untouched. The root itself may be a link (the user named it)."""
    from rankbench.utils.fileio import NotRegularFile

    root, sentinel, elsewhere = tmp_path / "run", tmp_path / "sentinel", tmp_path / "elsewhere"
    sentinel.write_text("precious")
    elsewhere.mkdir()
    (root / "trials").mkdir(parents=True)
    (root / "trials" / "a.json").symlink_to(sentinel)
    (root / "plots").symlink_to(elsewhere)
    for target, link in ((root / "trials" / "a.json", root / "trials" / "a.json"),
                         (root / "plots" / "p.png", root / "plots"), (root / "plots" / "new" / "p.png", root / "plots")):
        with pytest.raises(NotRegularFile, match="symbolic link") as err:
            atomic_write_text(target, "x", root=root)
        assert err.value.filename == str(link)
    assert sentinel.read_text() == "precious" and not any(elsewhere.iterdir())
    assert sorted(p.name for p in (root / "trials").iterdir()) == ["a.json"]   # no temporary file left
    (tmp_path / "named").symlink_to(root)
    atomic_write_text(tmp_path / "named" / "trials" / "b.json", "{}", root=tmp_path / "named")
    assert (root / "trials" / "b.json").read_text() == "{}"


def test_a_lock_file_is_removed_when_released_and_never_a_link(tmp_path):
    from rankbench.utils.fileio import FileLock, NotRegularFile

    with FileLock(tmp_path / "k.lock"):
        assert (tmp_path / "k.lock").is_file()
        with pytest.raises(BlockingIOError):
            FileLock(tmp_path / "k.lock", blocking=False)
    assert not (tmp_path / "k.lock").exists()
    (tmp_path / "sentinel").write_text("precious")
    (tmp_path / "k.lock").symlink_to(tmp_path / "sentinel")
    with pytest.raises(NotRegularFile, match="symbolic link"):
        FileLock(tmp_path / "k.lock")
    assert (tmp_path / "sentinel").read_text() == "precious"


def test_a_file_where_a_folder_is_needed_is_named_as_such(tmp_path):
    from rankbench.utils.fileio import NotRegularFile

    (tmp_path / "export").write_text("mine")
    with pytest.raises(NotRegularFile, match="exists and is not a folder") as err:
        atomic_write_text(tmp_path / "export" / "trec" / "a.qrels", "x", root=tmp_path)
    assert err.value.filename == str(tmp_path / "export") and (tmp_path / "export").read_text() == "mine"


def test_a_failed_write_names_the_file_being_written(tmp_path, monkeypatch):
    """A full disk names no file (and the temporary file is not the user's): the error names the
    file being written; a file where its folder should be is named as not a folder."""
    import errno

    from rankbench.utils.fileio import NotRegularFile

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    target = tmp_path / "out" / "x.txt"
    with monkeypatch.context() as m:
        m.setattr(os, "fsync", full)
        with pytest.raises(OSError) as err:
            atomic_write_text(target, "data")
    assert err.value.errno == errno.ENOSPC and err.value.filename == str(target)
    assert not target.exists() and list((tmp_path / "out").iterdir()) == []
    (tmp_path / "a-file").write_text("")
    with pytest.raises(NotRegularFile, match="exists and is not a folder") as err:
        atomic_write_text(tmp_path / "a-file" / "x.txt", "data")
    assert err.value.filename == str(tmp_path / "a-file")

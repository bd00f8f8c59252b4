"""The run folder: exclusive creation and the ``latest`` link to the newest run of a config."""

import os

from rankbench.runfolder import RunFolder


def test_new_folders_are_exclusive_and_latest_points_at_the_newest(tmp_path):
    a = RunFolder.create(root=tmp_path, name="cfg")
    b = RunFolder.create(root=tmp_path, name="cfg")
    assert a.path != b.path and a.path.parent == b.path.parent
    latest = tmp_path / "cfg" / "latest"
    assert latest.is_symlink() and os.readlink(latest) == b.path.name      # relative: the tree can move
    assert sorted(p.name for p in (tmp_path / "cfg").iterdir()) == sorted([a.path.name, b.path.name, "latest"])
    explicit = RunFolder.create(tmp_path / "mine")
    assert explicit.path.is_dir() and not (tmp_path / "latest").exists()

import os
from pathlib import Path

import pytest
from toydata import make_fgnet_points, make_umist_folder

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("RANKBENCH_SHARED_DATA", REPO.parent / "shared" / "datasets"))


@pytest.fixture(autouse=True)
def _no_reuse(monkeypatch):
    """Every test computes its results: a result reused from another test's identical job (or an
    earlier session's, through the shared cache) would hide what the test exercises. The tests of
    reuse itself (tests/engine/test_reuse.py) switch it back on."""
    monkeypatch.setenv("RANKBENCH_REUSE", "0")


@pytest.fixture
def shared_data() -> Path:
    """The real datasets folder, or a skip with the reason when it is absent."""
    if not SHARED.is_dir():
        pytest.skip(f"real datasets not found at {SHARED} (set RANKBENCH_SHARED_DATA)")
    return SHARED


def shared_dataset(name: str) -> Path:
    path = SHARED / name
    if not path.is_dir():
        pytest.skip(f"real dataset {name} not found at {path}")
    return path


@pytest.fixture
def umist_root(tmp_path) -> Path:
    """A fake UMIST folder in tmp_path (toydata.make_umist_folder)."""
    return make_umist_folder(tmp_path)


@pytest.fixture
def fgnet_root(tmp_path) -> Path:
    """A fake FG-NET points folder in tmp_path (toydata.make_fgnet_points)."""
    return make_fgnet_points(tmp_path)


@pytest.fixture
def cli(tmp_path, monkeypatch):
    """rankbench's command line in-process, its cache in tmp_path: cli("run", path, ...) -> click Result."""
    from click.testing import CliRunner

    from rankbench.cli import main

    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "cache"))
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(main, [str(a) for a in args], catch_exceptions=False)

    return invoke

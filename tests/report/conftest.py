"""Small real run folders (generated data, a few seconds each), made once per test session."""

from pathlib import Path

import pytest

from rankbench import app

REID = """
name: {name}
description: Generated re-identification for report tests.
dataset: {{name: synthetic_reid, n_people: 40}}
features: [{{name: colour, extractor: color_strips, bins: 8}}]
protocol: {{name: reid, n_test: 15, ranks: [1, 5, 10]}}
trials: {trials}
seed: {seed}
rankers:
{rankers}
expected:
  - {{method: L1, metric: cmc@10, value: 0.9, tolerance: 0.5, source: "made up, always OK"}}
  - {{method: L1, metric: cmc@1, value: 0.99, tolerance: 0.01, source: "made up, a known gap", known_gap: "made-up number"}}
  - {{method: RelTree, metric: cmc@1, value: 0.5, tolerance: 0.1, source: "published only", published_only: true}}
claims:
  - {{kind: better, method: L1, than: Euclidean, metric: nauc, source: "made up"}}
"""
RANKERS = {"L1": "{name: L1, ranker: l1}", "Euclidean": "{name: Euclidean, ranker: euclidean}",
           "Bhattacharyya": "{name: Bhattacharyya, ranker: bhattacharyya}"}


def reid_config(folder: Path, name: str, trials: int = 3, seed: int = 0,
                methods=("L1", "Euclidean", "Bhattacharyya"), extra: str = "") -> Path:
    text = REID.format(name=name, trials=trials, seed=seed,
                       rankers="\n".join(f"  - {RANKERS[m]}" for m in methods)) + extra
    if "Euclidean" not in methods:
        text = text.split("claims:")[0]
    if "sweep" in extra:  # published numbers are per setting; these runs need none
        text = text.split("expected:")[0] + extra
    path = folder / "configs" / "papera" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture(scope="session")
def runs(tmp_path_factory):
    """Run folders: ``a`` (3 trials, seed 0), ``b`` (4 trials, seed 0, two methods: shares a's
    splits), ``c`` (seed 1: other splits), ``sweep`` (n_test 15, 10, 12 typed ints), ``one`` (1 trial)."""
    root = tmp_path_factory.mktemp("runs")
    import os

    old = os.environ.get("RANKBENCH_CACHE")
    os.environ["RANKBENCH_CACHE"] = str(root / "cache")
    opts = app.EngineOptions(progress=False)
    try:
        out = {}
        specs = {
            "a": reid_config(root, "reid_a"),
            "b": reid_config(root, "reid_b", trials=4, methods=("L1", "Bhattacharyya")),
            "c": reid_config(root, "reid_c", seed=1),
            "sweep": reid_config(root, "reid_sweep", trials=2, methods=("L1", "Euclidean"),
                                 extra="sweep: {protocol.n_test: [15, 10, 12]}\n"),
            "one": reid_config(root, "reid_one", trials=1),
        }
        for key, cfg in specs.items():
            out[key] = app.run(cfg, out=root / "results" / key, options=opts).folder.path
        return out
    finally:
        if old is None:
            os.environ.pop("RANKBENCH_CACHE", None)
        else:
            os.environ["RANKBENCH_CACHE"] = old

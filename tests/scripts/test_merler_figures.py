"""scripts/merler_figures.py on a small real run: a stacked run end to end, then Figures 6 and 7."""

import importlib.util
from pathlib import Path

from rankbench import app

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "merler_figures.py"


def test_figures_from_a_small_stacked_run(tmp_path, monkeypatch):
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "cache"))
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(
        "dataset: {name: synthetic_collection, n_items: 4000, feature_types: [[8, 0.8], [8, 1.5]]}\n"
        "features: [{name: a, extractor: array, key: feat/type00}, {name: b, extractor: array, key: feat/type01}]\n"
        "protocol: {name: stacked_retrieval, concepts: [Meeting, Computer_TV-screen],\n"
        "           base_models: {ranker: svm_bank, C: [1.0], gamma: [1.0], max_bag: 100}}\n"
        "trials: 1\n"
        "rankers:\n"
        "  - {name: RankBoost, ranker: bipartite_rankboost, combine: views, n_rounds: 8}\n"
        "  - {name: IRB, ranker: imbalanced_rankboost, combine: views, n_rounds: 8, lam: 0.0}\n"
        "claims:\n"
        "  - {kind: dominates, method: IRB, than: RankBoost, curve: staged, x: evals, y: map}\n")
    results = tmp_path / "results"
    res = app.run(cfg, out=results / "tiny", options=app.EngineOptions(progress=False), plots=False)
    assert res.outcome.n_done == 2
    spec = importlib.util.spec_from_file_location("merler_figures", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = tmp_path / "figs"
    assert mod.main([str(results), str(out)]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["fig6_tiny.png", "fig6_tiny.svg", "fig7_tiny.png", "fig7_tiny.svg"]
    assert all((out / n).stat().st_size > 1000 for n in names)
    assert mod.main([str(tmp_path / "cache"), str(out)]) == 1  # no run folder there: says so, exit 1

"""configs/merler: every config validates, states the paper's claims, and the regression variants
grade only deterministic claims (base-model evaluations and final models, never wall time)."""

from pathlib import Path

import pytest

from rankbench.config import Overrides, load_experiment

CONFIGS = sorted((Path(__file__).resolve().parents[2] / "configs" / "merler").glob("*.yaml"))


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_config_validates_and_states_the_claims(path):
    cfg = load_experiment(path).config
    assert cfg.protocol.name == "stacked_retrieval"
    assert all(r.combine == "views" for r in cfg.rankers)
    if path.stem == "synthetic_fig9_regularizers":
        assert len(load_experiment(path).settings) == 9 and [r.name for r in cfg.rankers] == ["IRB"]
        return
    kinds = {(c.kind, c.x, c.y or c.metric) for c in cfg.claims}
    for depth in ("map@100", "map@500", "map"):
        assert ("dominates", "rank_s", depth) in kinds and ("better", None, depth) in kinds
    assert ("speedup", "rank_s", "map@100") in kinds
    assert all(c.source for c in cfg.claims)


@pytest.mark.parametrize("path", [p for p in CONFIGS if "regress:" in p.read_text()], ids=lambda p: p.stem)
def test_regression_grades_no_wall_time(path):
    cfg = load_experiment(path, Overrides(regress=True)).config
    assert cfg.trials <= 2 and cfg.claims
    assert all(c.x != "rank_s" for c in cfg.claims)


def test_fig9_shares_the_synthetic_collection_split_and_base_models():
    main = load_experiment(CONFIGS[[p.stem for p in CONFIGS].index("synthetic_trecvid")]).data
    fig9 = load_experiment(CONFIGS[[p.stem for p in CONFIGS].index("synthetic_fig9_regularizers")]).data
    for key in ("dataset", "features", "protocol", "seed"):
        assert fig9[key] == main[key]

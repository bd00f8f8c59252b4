"""Merler et al.'s figures: which staged methods are drawn, in which order, and the per-concept AP
of Figure 7 at a ranking time (hand-computed linear interpolation)."""

from __future__ import annotations

import pytest

from rankbench.report.figures.merler import (_concept_ap_at, _lambda_settings, _same_splits, _staged_methods, figure7,
                                             figure_lambda)

from .runs import record, run

STAGED = {"staged": {"evals": [1.0, 2.0], "map": [0.1, 0.2]}}


def test_staged_methods_paper_algorithms_first_unit_range_after_symmetric_then_by_name():
    # the names sort against the rule (a before b), so only the rule gives this order
    entries = {"IRB-a": {"ranker": "imbalanced_rankboost", "weak_range": "unit"},
               "IRB-b": {"ranker": "imbalanced_rankboost"},
               "RB-a": {"ranker": "bipartite_rankboost", "weak_range": "unit"},
               "RB-b": {"ranker": "bipartite_rankboost"},
               "B-peer": {"ranker": "xgb_pairwise"}, "A-peer": {"ranker": "lgbm_lambdarank"}}
    records = [record(m, curves=STAGED) for m in ("A-peer", "IRB-a", "B-peer", "RB-a", "IRB-b", "RB-b")]
    records += [record("RB-b", trial=1, curves=STAGED),                   # seen once
                record("Flat"),                                         # no staged curve
                record("Other", setting="lam=1", curves=STAGED)]        # another setting
    assert _staged_methods(records, entries) == ["RB-b", "RB-a", "IRB-b", "IRB-a", "A-peer", "B-peer"]
    assert _staged_methods(records, entries, "lam=1") == ["Other"]


def test_concept_ap_at_interpolates_each_trials_curve_and_averages_over_trials():
    def staged(rank_s, ap, other_ap):
        return {"staged": {"rank_s": rank_s, "map": [0.0, 0.0]},          # the MAP curve: not a concept
                "staged/Meeting": {"rank_s": rank_s, "ap": ap},
                "staged/Sky": {"rank_s": rank_s, "ap": other_ap}}
    records = [record("IRB", 0, curves=staged([1.0, 3.0], [0.2, 0.6], [0.5, 0.5])),
               record("IRB", 1, curves=staged([0.0, 4.0], [0.0, 1.0], [0.1, 0.3])),
               record("RankBoost", 0, curves=staged([1.0, 3.0], [0.9, 0.9], [0.9, 0.9])),
               record("IRB", 0, setting="lam=1", curves=staged([1.0, 3.0], [0.9, 0.9], [0.9, 0.9]))]
    # t = 2: trial 0 halfway from 0.2 to 0.6 = 0.4; trial 1 half of 0 -> 1 = 0.5; mean 0.45
    got = _concept_ap_at(records, "IRB", 2.0)
    assert got == pytest.approx({"Meeting": 0.45, "Sky": (0.5 + 0.2) / 2})
    # before the first ranking, a curve holds its first value; after the last, its last
    assert _concept_ap_at(records, "IRB", 0.5)["Meeting"] == pytest.approx((0.2 + 0.125) / 2)
    assert _concept_ap_at(records, "IRB", 99.0)["Meeting"] == pytest.approx((0.6 + 1.0) / 2)
    assert _concept_ap_at(records, "nobody", 2.0) == {}


def test_lambda_settings_read_the_swept_lambda_and_regulariser():
    r = run([record("IRB", setting=s) for s in ("a", "b", "c")],
            settings={"a": {"rankers.IRB.lam": 0.5, "rankers.IRB.regularizer": "l1"},
                      "b": {"rankers.IRB.lam": 2},
                      "c": {"rankers.IRB.n_rounds": 10}})                # no lambda: not a lambda setting
    assert _lambda_settings(r) == {"a": ("l1", 0.5), "b": (None, 2.0)}
    assert isinstance(_lambda_settings(r)["b"][1], float)


def test_a_figure_whose_method_the_run_lacks_is_named(tmp_path, caplog):
    curves = {"staged": {"rank_s": [1.0, 2.0], "evals": [1.0, 2.0], "map": [0.1, 0.2]}}
    only_rb = run([record("RankBoost", curves=curves)])
    lam = run([record("RB", setting="a", curves=curves)], settings={"a": {"rankers.RB.lam": 0.5}})
    # before: Figure 7 left out, and a lambda trade-off drawn without a line, without a word
    with caplog.at_level("WARNING", logger="rankbench"):
        assert figure7(only_rb, tmp_path, None) == [] and figure_lambda(lam, None, tmp_path) == []
    assert [r.getMessage() for r in caplog.records] == [
        "nowhere: Figure 7 needs the method(s) RankBoost, IRB; the run has no IRB: not drawn",
        "nowhere: The lambda trade-off needs the method(s) IRB; the run has no IRB: not drawn"]


def test_a_reference_is_kept_only_on_the_runs_data_and_splits(caplog):
    fig9 = run([record("IRB", setting="a")], settings={"a": {"rankers.IRB.lam": 0.5}})
    ref = run([record("RankBoost")], settings={"": {}})
    assert _same_splits(fig9, ref, "Figure 9") is ref                 # trial 0's split the same, no data recorded
    for r, n in ((fig9, 6000), (ref, 3000)):
        r.settings[0] = r.settings[0].model_copy(update={"n_items": n})
    with caplog.at_level("WARNING", logger="rankbench"):
        assert _same_splits(fig9, ref, "Figure 9") is None
        assert _same_splits(fig9, run([record("L1")], settings={"": {}}), "Figure 9") is None
    assert [r.getMessage() for r in caplog.records] == [
        "nowhere: Figure 9 leaves out RankBoost of nowhere for reference: 6000 vs 3000 items",
        "nowhere: Figure 9 leaves out RankBoost of nowhere for reference: it has no RankBoost"]

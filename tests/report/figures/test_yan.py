"""Yan et al.'s Figure 6 numbers: one row per result with its swept values, and the mean and
standard deviation (ddof 1) per series and K, against Python's statistics module."""

from __future__ import annotations

import statistics

import numpy as np
import pandas as pd
import pytest

from rankbench.report.figures.yan import curves, figure6, records

from .runs import record, run


def test_records_carry_the_settings_swept_values_by_their_last_key():
    r = run([record("PKLR", 0, "s1", {"error_rate": 0.25, "vote_error_rate": 0.2}, extra={"n_pairs": 3}),
             record("PKLR", 1, "s1", {"error_rate": 0.35, "vote_error_rate": 0.1}),
             record("KLR", 0, "s2", {"error_rate": 0.5, "vote_error_rate": 0.4}, extra={"n_pairs": 0})],
            settings={"s1": {"protocol.strategy": "temporal", "protocol.n_constraints": 2},
                      "s2": {"protocol.strategy": "active", "protocol.n_constraints": 0}})
    df = records(r)
    assert list(df.method) == ["PKLR", "PKLR", "KLR"] and list(df.trial) == [0, 1, 0]
    assert list(df.strategy) == ["temporal", "temporal", "active"] and list(df.n_constraints) == [2, 2, 0]
    assert df.error_rate.tolist() == [0.25, 0.35, 0.5]
    assert df.n_pairs.iloc[0] == 3 and np.isnan(df.n_pairs.iloc[1]) and df.n_pairs.iloc[2] == 0


@pytest.mark.parametrize("by", ["strategy", "method"])
def test_curves_are_mean_and_sample_std_per_series_and_k(by):
    rng = np.random.default_rng(0)
    rows = [{"strategy": s, "method": m, "n_constraints": k, "error_rate": float(rng.random()),
             "vote_error_rate": float(rng.random()), "n_pairs": float(rng.integers(0, 9))}
            for s, m in (("temporal", "PKLR"), ("active", "KLR")) for k in (0, 2, 4) for _ in range(3)]
    rows.append({"strategy": "temporal", "method": "PKLR", "n_constraints": 6, "error_rate": 0.3,
                 "vote_error_rate": 0.2, "n_pairs": 5.0})                 # one trial: no std
    got = curves(pd.DataFrame(rows), by)
    assert len(got) == 7 and set(got.series) == ({"temporal", "active"} if by == "strategy" else {"PKLR", "KLR"})
    for _, g in got.iterrows():
        mine = [r for r in rows if r[by] == g.series and r["n_constraints"] == g.n_constraints]
        for metric in ("error_rate", "vote_error_rate"):
            values = [r[metric] for r in mine]
            assert g[f"{metric}_mean"] == pytest.approx(statistics.mean(values))
            assert g[f"{metric}_count"] == len(values)
            if len(values) > 1:
                assert g[f"{metric}_std"] == pytest.approx(statistics.stdev(values))
            else:
                assert np.isnan(g[f"{metric}_std"])
        assert g.pairs == pytest.approx(statistics.mean(r["n_pairs"] for r in mine))


def _panel(settings: dict[str, dict], methods=("PKLR",)):
    """A Town Centre panel run: each setting, two trials of each method."""
    recs = [record(m, t, s, {"error_rate": 0.2 + 0.1 * t, "vote_error_rate": 0.1 + 0.1 * t}, extra={"n_pairs": 2})
            for s in settings for m in methods for t in (0, 1)]
    return run(recs, settings=settings)


def test_figure6_leaves_out_a_panel_whose_run_does_not_sweep_k(tmp_path, caplog):
    nok = _panel({"t": {"protocol.strategy": "temporal"}, "b": {"protocol.strategy": "both"}})
    # before: KeyError: 'n_constraints'
    with caplog.at_level("WARNING", logger="rankbench"):
        assert figure6({"towncentre6_types": nok}, tmp_path) == []
    assert [r.getMessage() for r in caplog.records] == \
        ["nowhere: Figure 6's panel (a) needs the run to sweep protocol.n_constraints; left blank"]
    assert not (tmp_path / "figure6.md").exists()
    methods = _panel({"k0": {"protocol.n_constraints": 0}, "k2": {"protocol.n_constraints": 2}}, ("PKLR", "KLR"))
    assert [p.name for p in figure6({"towncentre6_types": nok, "towncentre6_methods": methods}, tmp_path)] == \
        ["figure6.png", "figure6.svg", "figure6.pdf", "figure6.md"]
    assert "(a) 6 people" not in (tmp_path / "figure6.md").read_text()


def test_figure6_leaves_out_the_baseline_of_a_panel_without_klr_at_k_0(tmp_path, caplog):
    noklr = _panel({"k0": {"protocol.n_constraints": 0}, "k2": {"protocol.n_constraints": 2}}, ("PKLR", "RCA+KLR"))
    with caplog.at_level("WARNING", logger="rankbench"):
        figure6({"towncentre5_methods": noklr}, tmp_path)
    assert [r.getMessage() for r in caplog.records] == ["nowhere: Figure 6's panel (d) has no KLR at K = 0: its "
                                                        "baseline, KLR with the per-sequence majority vote, is left out"]
    md = (tmp_path / "figure6.md").read_text()
    # before: 'KLR with the per-sequence majority vote (K = 0): nan +- nan %', and a dashed line at nan
    assert "nan" not in md and "majority vote" not in md and "| 2 | 25.0 +- 7.1 (2.0) | 25.0 +- 7.1 (2.0) |" in md
    assert "KLR + majority vote" not in (tmp_path / "figure6.svg").read_text()

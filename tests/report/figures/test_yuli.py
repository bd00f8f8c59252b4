"""Yu & Li's figures are drawn from the first setting that agrees with the paper's figures
(n = 30 UMIST / 40 FG-NET faces, K = 5, s = 3) wherever the run sweeps those values."""

from __future__ import annotations

import pytest

from rankbench.report.figures.yuli import figure_setting

from .runs import record, run


def _run(dataset, settings):
    return run([record("cMDS-DML", setting=s) for s in settings], settings=settings,
               config={"name": "r", "dataset": {"name": dataset}})


@pytest.mark.parametrize("dataset, n, chosen", [("umist", 10, "c"), ("fgnet", 8, "d")])
def test_the_first_setting_agreeing_with_the_paper_is_chosen(dataset, n, chosen):
    settings = {"a": {"protocol.n_per_label": 5, "rankers.cMDS-DML.K": 5},
                "b": {"protocol.n_per_label": 10, "rankers.cMDS-DML.K": 7},
                "c": {"protocol.n_per_label": 10, "rankers.cMDS-DML.K": 5, "rankers.LDMLR.C": 1.0},
                "d": {"protocol.n_per_label": 8, "rankers.cMDS-DML.K": 5}}
    r = _run(dataset, settings)
    assert r.dataset_name == dataset
    assert figure_setting(r) == chosen


def test_no_agreeing_setting_falls_back_to_the_first_and_unswept_values_do_not_matter():
    assert figure_setting(_run("umist", {"x": {"rankers.cMDS-DML.s": 2}, "y": {"rankers.cMDS-DML.s": 4}})) == "x"
    assert figure_setting(_run("umist", {"x": {"rankers.cMDS-DML.s": 2}, "y": {"rankers.LDMLR.C": 9}})) == "y"

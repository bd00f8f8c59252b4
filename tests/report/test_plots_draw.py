"""rankbench.report.plots.draw: a report's figures, drawn from its run: readable file names, a
CMC axis ended at a chosen rank, a user's style on top of the house style, every figure passing the
layout check, figures reused only while nothing they are drawn from changed, and the same files
from two processes as from one."""

import re

import matplotlib
import pytest

from rankbench.report.plots.draw import PLOTS_INDEX

matplotlib.use("Agg")


def test_run_folder_figures_have_readable_names(runs):
    names = sorted(p.name for p in (runs["a"] / "plots").iterdir() if p.name != PLOTS_INDEX)
    assert names == ["cmc.pdf", "cmc.png", "cmc.svg"]
    names = sorted(p.name for p in (runs["sweep"] / "plots").iterdir())
    assert "cmc1_vs_n_test.png" in names and "cmc_n_test-10.png" in names


def test_report_ends_the_cmc_axis_at_a_chosen_rank_in_a_file_of_its_own(runs):
    from rankbench import app

    plots = runs["one"] / "plots"
    app.report(runs["one"])
    standard = (plots / "cmc.png").read_bytes()
    built = app.report(runs["one"], max_rank=5)
    captions = {p.name: p.caption for p in built.plots}
    assert "up to rank 5;" in captions["cmc_rank5.png"] and "cmc_rank5.svg" in captions
    assert "up to rank 10;" in captions["cmc.png"]   # largest tabulated: the standard figure is unchanged
    assert (plots / "cmc.png").read_bytes() == standard
    app.report(runs["one"], max_rank=3)
    app.report(runs["one"])   # figures asked for by their rank are kept by later reports
    assert {"cmc_rank5.png", "cmc_rank3.png", "cmc.png"} <= {p.name for p in plots.iterdir()}
    for p in plots.glob("cmc_rank*"):  # the run is shared with other tests
        p.unlink()


def test_a_style_file_of_ones_own_goes_over_the_house_style(runs, tmp_path):
    from rankbench import app
    from rankbench.errors import ConfigError

    mine = tmp_path / "paper.mplstyle"
    mine.write_text("axes.titlesize: 13\nfont.family: serif\nfigure.figsize: 4.0, 3.0\n")
    before = dict(matplotlib.rcParams)

    def width(svg: str) -> float:
        return float(re.search(r'<svg[^>]*? width="([\d.]+)pt"', svg).group(1))

    app.report(runs["one"], style=mine)
    svg = (runs["one"] / "plots" / "cmc.svg").read_text()
    assert "13px" in svg and "serif" in svg and width(svg) < 4.5 * 72
    app.report(runs["one"])
    house = (runs["one"] / "plots" / "cmc.svg").read_text()
    assert "13px" not in house and width(house) > 5.5 * 72
    assert dict(matplotlib.rcParams) == before                       # the caller's settings untouched
    with pytest.raises(ConfigError, match="--style .*nothere.mplstyle: expected a matplotlib style file"):
        app.report(runs["one"], style=tmp_path / "nothere.mplstyle")


def test_a_reports_figures_pass_the_layout_check(runs, caplog):
    import logging

    from rankbench import app

    with caplog.at_level(logging.WARNING, logger="rankbench.report"):
        for key in ("a", "sweep"):
            built = app.report(runs[key])
            assert built.plots
    assert not [r for r in caplog.records if r.name == "rankbench.report"]


def test_a_report_from_the_same_trials_reuses_its_figures_and_redraws_after_any_change(runs, tmp_path, monkeypatch):
    import json
    import shutil

    from rankbench import app
    from rankbench.report.plots import draw as plots_module

    run = tmp_path / "one"
    shutil.copytree(runs["one"], run)
    first = app.report(run).plots
    drawn = []
    real_save = plots_module.save
    monkeypatch.setattr(plots_module, "save", lambda *a, **k: drawn.append(a[2]) or real_save(*a, **k))

    again = app.report(run).plots          # same records, config, options and code: nothing drawn
    assert drawn == [] and [(p.name, p.caption) for p in again] == [(p.name, p.caption) for p in first]

    (run / "plots" / "cmc.pdf").unlink()      # a figure gone: drawn again
    app.report(run)
    assert drawn == ["cmc"] and (run / "plots" / "cmc.pdf").is_file()

    trial = sorted((run / "trials").glob("*.json"))[0]  # a trial's numbers changed: drawn again
    rec = json.loads(trial.read_text())
    rec["metrics"] = {k: v * 0.5 if k.startswith("cmc@") else v for k, v in rec["metrics"].items()}
    trial.write_text(json.dumps(rec))
    app.report(run)
    assert drawn == ["cmc", "cmc"]
    app.report(run, max_rank=5)               # other options: drawn again
    assert drawn.count("cmc") == 3 and "cmc_rank5" in drawn

    (run / "plots" / PLOTS_INDEX).write_text("{not json")   # an unreadable index is never trusted
    n = len(drawn)
    app.report(run)
    assert len(drawn) > n


def test_figures_drawn_in_two_processes_are_the_files_one_process_draws(runs, tmp_path, monkeypatch):
    import shutil

    from rankbench.report.plots import draw as plots_module
    from rankbench.report.build import build_report

    monkeypatch.setattr(plots_module, "PARALLEL_FIGURES", 1)   # a small run, drawn in parallel all the same
    one, two = tmp_path / "one", tmp_path / "two"
    shutil.copytree(runs["sweep"], one)
    shutil.copytree(runs["sweep"], two)
    a = build_report(one, n_jobs=1).plots
    b = build_report(two, n_jobs=2).plots
    assert len(a) > 3 and [(p.name, p.caption) for p in a] == [(p.name, p.caption) for p in b]
    assert all((one / "plots" / p.name).read_bytes() == (two / "plots" / p.name).read_bytes() for p in a)
    assert (one / "plots" / PLOTS_INDEX).read_text() == (two / "plots" / PLOTS_INDEX).read_text()

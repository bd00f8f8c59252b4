"""``rankbench figures``: a paper's own figures from small generated runs, through the command line.

The runs are real (generated data, a few seconds each): a stacked retrieval run and a lambda sweep
beside it (merler), the two spirals and a constraint-type sweep on tiny tracks (yan), and, with the
real datasets, a UMIST ordinal run (yuli).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankbench import app
from rankbench.report.build import load_run
from rankbench.report.figures import figure_paper

PLUGIN = Path(__file__).resolve().parents[1] / "plugins" / "faulty.py"

STACKED = """\
name: {name}
dataset: {{name: synthetic_collection, n_items: 4000, feature_types: [[8, 0.8], [8, 1.5]]}}
features: [{{name: a, extractor: array, key: feat/type00}}, {{name: b, extractor: array, key: feat/type01}}]
protocol: {{name: stacked_retrieval, concepts: [Meeting, Computer_TV-screen],
           base_models: {{ranker: svm_bank, C: 1.0, gamma: 1.0, max_bag: 100}}}}
trials: 1
rankers:
{rankers}
"""
RANKBOOST = "  - {name: RankBoost, ranker: bipartite_rankboost, combine: views, n_rounds: 8}"
IRB = "  - {name: IRB, ranker: imbalanced_rankboost, combine: views, n_rounds: 8, lam: 0.0}"

SPIRALS = """\
name: spirals
dataset: {name: two_spirals, n_positive: 40, n_negative: 40}
features: [{name: feat, extractor: array}]
protocol: {name: classification, n_train_per_class: 10, n_constraints: 2, constraint_type: same}
trials: 2
rankers:
  - {name: KLR, ranker: kernel_logreg, lam: 0.001}
  - {name: PKLR, ranker: pklr, lam: 0.001, mu: 1.0}
"""

TYPES = f"""\
name: towncentre6_types
dataset: {{name: '{PLUGIN}:TinyTracks'}}
features: [{{name: f, extractor: array, key: feat}}]
protocol: {{name: video_classification}}
trials: 3
rankers:
  - {{name: PKLR, ranker: logistic}}
sweep:
  protocol.strategy: [temporal, active]
  protocol.n_constraints: [0, 2]
"""


def _run(root: Path, folder: str, text: str, name: str) -> Path:
    cfg = root / folder / f"{name}.yaml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(text)
    res = app.run(cfg, out=root / "results" / name, options=app.EngineOptions(progress=False), plots=False)
    assert not res.outcome.failed and res.outcome.n_done == res.outcome.n_total
    return res.folder.path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Run folders by name: the merler ones from a folder named after no paper (so their paper is
    known by their protocol), the yan ones from configs/yan/."""
    root = tmp_path_factory.mktemp("figures")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RANKBENCH_CACHE", str(root / "cache"))
        return {
            "tiny": _run(root, "mine", STACKED.format(name="tiny", rankers=f"{RANKBOOST}\n{IRB}"), "tiny"),
            "tiny_lambda": _run(root, "mine", STACKED.format(name="tiny_lambda", rankers=IRB)
                                + "sweep: {rankers.IRB.lam: [0.0, 0.5]}\n", "tiny_lambda"),
            "spirals": _run(root, "configs/yan", SPIRALS, "spirals"),
            "towncentre6_types": _run(root, "configs/yan", TYPES, "towncentre6_types"),
        }


def _stems(lines: list[str]) -> set[str]:
    return {Path(p).stem for p in lines}


def test_each_run_is_drawn_by_its_own_paper(runs):
    assert figure_paper(load_run(runs["tiny"])) == "merler"        # by its protocol
    assert figure_paper(load_run(runs["spirals"])) == "yan"        # by its config's folder


def test_merler_figures_6_7_and_the_lambda_trade_off(cli, runs, tmp_path):
    out = tmp_path / "figs"
    res = cli("figures", runs["tiny"], runs["tiny_lambda"], "--out", out)
    assert res.exit_code == 0, res.output
    lines = res.output.split()
    assert _stems(lines) == {"fig6_tiny", "fig7_tiny", "lambda_tiny_lambda"}
    assert {Path(p).suffix for p in lines} == {".png", ".svg", ".pdf"}
    assert all(Path(p).stat().st_size > 1000 for p in lines)
    # the lambda figure has one line per swept lambda (typed values of splits.json) and RankBoost's
    # reference from the run beside it
    svg = (out / "lambda_tiny_lambda.svg").read_text()
    assert "IRB, lambda = 0" in svg and "IRB, lambda = 0.5" in svg and "RankBoost final map" in svg


def test_a_reference_run_on_other_splits_is_left_out_and_named(cli, runs, tmp_path):
    import shutil

    other = tmp_path / "tiny"
    shutil.copytree(runs["tiny"], other)
    splits = other / "splits.json"
    splits.write_text(re.sub(r'"bank_seed": \d+', '"bank_seed": 1', splits.read_text()))  # other base models
    res = cli("figures", runs["tiny_lambda"], other, "--out", tmp_path / "figs")
    assert res.exit_code == 0, res.output
    # before: RankBoost of the other base models drawn beside IRB, without a word
    assert f"warning: {runs['tiny_lambda']}: The lambda trade-off leaves out RankBoost of {other} for reference: " \
           "its splits of trial(s) 0 differ from the run's or are missing" in res.output
    svg = (tmp_path / "figs" / "lambda_tiny_lambda.svg").read_text()
    assert "RankBoost final" not in svg and "RankBoost on the same" not in svg


def test_figure7_at_the_end_of_the_curves_counts_the_recorded_final_aps(cli, runs, tmp_path):
    res = cli("figures", "merler", runs["tiny"], "--out", tmp_path, "--fig7-time", 1e9)
    assert res.exit_code == 0, res.output
    records = load_run(runs["tiny"]).records
    final = {r.method: {k.split("/", 1)[1]: v for k, v in r.metrics.items() if k.startswith("ap/")} for r in records}
    better = sum(final["IRB"][c] >= final["RankBoost"][c] - 1e-12 for c in final["IRB"])
    title = re.search(r"IRB better or equal on (\d+) of (\d+)", (tmp_path / "fig7_tiny.svg").read_text())
    assert title and (int(title[1]), int(title[2])) == (better, len(final["IRB"]))


def test_yan_figure3_refits_the_recorded_split_and_figure6_tabulates_the_trials(cli, runs, tmp_path):
    res = cli("figures", runs["spirals"], runs["towncentre6_types"], "--out", tmp_path)
    assert res.exit_code == 0, res.output
    assert _stems(res.output.split()) == {"figure3_spirals", "figure6"}
    svg = (tmp_path / "figure3_spirals.svg").read_text()
    for r in load_run(runs["spirals"]).records:   # each panel's title: the trial's recorded error rate
        if r.trial == 0:
            assert f"{r.method}: error {100 * r.metrics['error_rate']:.1f} % (trial 0)" in svg
    md = (tmp_path / "figure6.md").read_text()
    run = load_run(runs["towncentre6_types"])
    values = run.setting_values()
    df = pd.DataFrame([{"strategy": values[r.setting]["protocol.strategy"],
                        "K": values[r.setting]["protocol.n_constraints"], "e": r.metrics["error_rate"]}
                       for r in run.records])
    row = next(line for line in md.splitlines() if line.startswith("| 2 |"))
    header = next(line for line in md.splitlines() if line.startswith("| K |"))
    series = [c.strip() for c in header.strip("|").split("|")][1:]
    cells = [c.strip() for c in row.strip("|").split("|")][1:]
    for name, cell in zip(series, cells):
        e = df[(df.strategy == name) & (df.K == 2)].e
        assert cell.startswith(f"{100 * e.mean():.1f} +- {100 * e.std(ddof=1):.1f}")
    assert sorted(series) == ["active", "temporal"]


def test_figure6_of_one_trial_gives_means_without_a_std(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "cache"))
    run = _run(tmp_path, "configs/yan", TYPES.replace("trials: 3", "trials: 1"), "towncentre6_types")
    res = cli("figures", run, "--out", tmp_path / "figs")
    assert res.exit_code == 0, res.output
    md = (tmp_path / "figs" / "figure6.md").read_text()
    # before: 'nan' for every std of a single trial
    assert "nan" not in md
    row = next(line for line in md.splitlines() if line.startswith("| 2 |"))
    assert all(re.fullmatch(r"\d+\.\d \(\d+\.\d\)", c.strip()) for c in row.strip("|").split("|")[1:]), row


def test_a_model_is_refitted_on_trial_0s_recorded_split_with_the_data_root_given(runs, tmp_path, monkeypatch):
    import rankbench.engine.refit as refit_module

    seen, real = [], refit_module.refit

    def spy(experiment, data_root, setting, method, split):
        seen.append((data_root, setting, method, split))
        return real(experiment, data_root, setting, method, split)

    monkeypatch.setattr(refit_module, "refit", spy)
    app.figures([runs["spirals"]], out=tmp_path, data_root=str(tmp_path))
    trial0 = load_run(runs["spirals"]).splits_of("")[0]
    assert [(root, setting, method) for root, setting, method, _ in seen] == \
        [(str(tmp_path), "", "KLR"), (str(tmp_path), "", "PKLR")]
    assert all(split == trial0 for *_, split in seen)


def test_data_changed_since_the_run_is_refused(cli, runs, tmp_path):
    import shutil

    copy = tmp_path / "spirals"
    shutil.copytree(runs["spirals"], copy)
    splits = copy / "splits.json"
    splits.write_text(re.sub(r'"dataset_fingerprint": "[^"]+"', '"dataset_fingerprint": "0123"', splits.read_text()))
    res = cli("figures", copy, "--out", tmp_path / "figs")
    assert res.exit_code == 1
    assert res.output.startswith("rankbench: error: ") and "changed since the run" in res.output
    assert "point --data-root at it" in res.output and len(res.output.strip().splitlines()) == 1


def test_a_refit_that_measures_otherwise_than_its_trial_is_named(runs, tmp_path, monkeypatch, caplog):
    import rankbench.engine.refit as refit_module

    real = refit_module.refit

    def off(*args):
        fitted = real(*args)
        fitted.metrics["error_rate"] += 0.01
        return fitted

    monkeypatch.setattr(refit_module, "refit", off)
    with caplog.at_level("WARNING", logger="rankbench"):
        app.figures([runs["spirals"]], out=tmp_path)
    said = [r.getMessage() for r in caplog.records if "refitted on trial 0" in r.getMessage()]
    assert len(said) == 2 and "the figure shows a model the run did not score" in said[0]


def test_a_paper_given_draws_only_its_figures(cli, runs, tmp_path):
    res = cli("figures", "yan", runs["tiny"], "--out", tmp_path)
    assert res.exit_code == 1
    assert res.output.strip().splitlines()[-1].startswith("rankbench: error: figures: none drawn")
    # a run of another paper is named (before: left out without a word)
    res = cli("figures", "yan", runs["tiny"], runs["towncentre6_types"], "--out", tmp_path)
    assert res.exit_code == 0 and _stems([p for p in res.output.split() if p.startswith(str(tmp_path))]) == {"figure6"}, res.output
    assert f"warning: {runs['tiny']}: a run of merler, not of yan: left out (its figures: rankbench figures merler " \
           "RUN_DIR...)" in res.output


def test_two_runs_of_one_config_are_refused(cli, runs, tmp_path):
    import shutil

    copy = tmp_path / "again"
    shutil.copytree(runs["tiny"], copy)
    # before: exit 0, the second run's fig6_tiny / fig7_tiny written over the first's
    res = cli("figures", runs["tiny"], copy, "--out", tmp_path / "figs")
    assert res.exit_code == 1 and len(res.output.strip().splitlines()) == 1, res.output
    assert f"rankbench: error: figures: {runs['tiny']} and {copy} are both runs of 'tiny': give one" in res.output
    assert not (tmp_path / "figs").exists()


def test_a_run_no_paper_draws_is_named(cli, tmp_path):
    from toydata import synthetic_reid_config

    cfg = tmp_path / "reid.yaml"
    cfg.write_text(synthetic_reid_config(n_people=20, n_test=8, ranks=[1], trials=1)
                   + "rankers: [{name: L1, ranker: l1}]\n")
    assert cli("run", cfg, "--out", tmp_path / "reid", "--no-plots", "-q").exit_code == 0
    res = cli("figures", tmp_path / "reid", "--out", tmp_path / "figs")
    assert res.exit_code == 1
    assert "rankbench: error: figures: none drawn" in res.output


@pytest.mark.parametrize("args, needle", [
    (["{cache}"], "not a run folder (no config.yaml)"),
    (["prosser", "{tiny}"], "'prosser' is not a paper with figures (those are: merler, yan, yuli)"),
    (["{tiny}", "--out", "{file}/figs"], "figs: Not a directory"),
])
def test_mistakes_are_one_line(cli, runs, tmp_path, args, needle):
    (tmp_path / "file").write_text("a file, not a folder")
    given = [a.format(cache=runs["tiny"].parent, tiny=runs["tiny"], file=tmp_path / "file") for a in args]
    res = cli("figures", *given)
    assert res.exit_code == 1
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rankbench: error:") and needle in lines[0], res.output


# ----------------------------------------------------------------------------- yuli, real data
@pytest.mark.realdata
def test_yuli_figures_draw_the_model_of_the_recorded_split(cli, shared_data, tmp_path, monkeypatch):
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "cache"))
    config = Path(__file__).resolve().parents[2] / "configs" / "yuli" / "umist_table3_K.yaml"
    res = app.run(config, out=tmp_path / "umist_table3_K", overrides=app.Overrides(trials=1, methods=["cMDS-DML"]),
                  options=app.EngineOptions(progress=False, data_root=str(shared_data)), plots=False)
    assert not res.outcome.failed
    out = cli("figures", "yuli", res.folder.path, "--out", tmp_path / "figs")
    assert out.exit_code == 0, out.output
    assert _stems(out.output.split()) == {f"fig{k}_umist_table3_K" for k in (2, 3, 4)}
    # the paper's figures are at K = 5; their titles say so and count the split's training faces
    svg = (tmp_path / "figs" / "fig2_umist_table3_K.svg").read_text()
    split = load_run(res.folder.path).splits_of("rankers.*.K=5")[0]
    assert f"n = {len(split.train)}, rankers.*.K=5" in svg
    assert len(split.train) == 30 and np.unique(split.train).size == 30

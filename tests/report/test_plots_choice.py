"""rankbench.report.plots.choice: which figures a run gets, named and titled from the run: file
names, titles, the sweeps drawn and the rank a CMC axis ends at, on hand-written summaries."""

from rankbench.report.plots.choice import context, setting_slug


def test_titles_and_file_names_say_what_and_on_what():
    cfg = {"dataset": {"name": "viper"}, "protocol": {"name": "reid", "n_test": 316, "gallery": "cam", "seed": 3}}
    assert context(cfg, "", None, 5) == "viper, Test people = 316, 5 trials, mean ± 1 std"
    assert context(cfg, "protocol.n_test=432", {"protocol.n_test": 432}, 1) == "viper, Test people = 432, 1 trial"
    assert context(cfg, "", None, 5, spread=False) == "viper, Test people = 316, mean of 5 trials"
    assert setting_slug("rankers.*.K=4", {"rankers.*.K": 4}) == "K-4"

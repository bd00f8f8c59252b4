"""rankbench.report.plots.choice: which figures a run gets, named and titled from the run: file
names, titles, the sweeps drawn and the rank a CMC axis ends at, on hand-written summaries."""

import pandas as pd

from rankbench.report.plots.choice import context, default_max_rank, setting_slug, slug, sweep_groups
from rankbench.report.tables import setting_title, short_names


def summary(rows):
    return pd.DataFrame(rows, columns=["setting", "method", "metric", "mean", "std", "n_trials"])


def test_titles_and_file_names_say_what_and_on_what():
    cfg = {"dataset": {"name": "viper"}, "protocol": {"name": "reid", "n_test": 316, "gallery": "cam", "seed": 3}}
    assert context(cfg, "", None, 5) == "viper, Test people = 316, 5 trials, mean ± 1 std"
    assert context(cfg, "protocol.n_test=432", {"protocol.n_test": 432}, 1) == "viper, Test people = 432, 1 trial"
    assert context(cfg, "", None, 5, spread=False) == "viper, Test people = 316, mean of 5 trials"
    assert setting_slug("rankers.*.K=4", {"rankers.*.K": 4}) == "K-4"


def test_a_file_name_part_keeps_letters_digits_dashes_and_underscores():
    assert slug("cmc@1") == "cmc1" and slug("a b/c") == "a_b_c" and slug("..") == "all"
    assert len(slug("x" * 100)) == 60
    assert setting_slug("p=0.5", {"protocol.p": 0.5}) == "p-0_5" and setting_slug("lab el", None) == "lab_el"
    # before: sweeping rankers.A.C and rankers.B.C wrote cmc1_vs_C_C-0_1 twice (a figure lost), and
    # C = 0.1 and C = 0.1000001 shared one file
    two = {"rankers.A.C": 0.1, "rankers.B.C": 100.0}
    assert setting_slug("", two) == "A_C-0_1_B_C-100"
    assert setting_slug("", {"rankers.A.C": 0.1000001}) == "C-0_1000001" != setting_slug("", {"rankers.A.C": 0.1})
    assert short_names(["rankers.*.K", "protocol.k"]) == {"rankers.*.K": "K", "protocol.k": "k"}
    # and in the tables: before, '## C = 0.1, C = 0.01' with columns '| C | C |'
    assert setting_title("", {"rankers.A.C": 0.1, "rankers.B.C": 0.01}) == "A.C = 0.1, B.C = 0.01"


def test_each_numeric_swept_key_is_drawn_once_per_value_of_the_others():
    values = {"a": {"k": 1, "c": 10.0, "kind": "x"}, "b": {"k": 2, "c": 10.0, "kind": "x"},
              "c": {"k": 1, "c": 20.0, "kind": "x"}, "d": {"k": 2, "c": 20.0, "kind": "x"}}
    s = summary([(lab, "M", "map", 0.5, 0.0, 1) for lab in values])
    got = sweep_groups(s, values)
    want = [("k", {"c": 10.0, "kind": "x"}, [("a", 1), ("b", 2)]),
            ("k", {"c": 20.0, "kind": "x"}, [("c", 1), ("d", 2)]),
            ("c", {"k": 1, "kind": "x"}, [("a", 10.0), ("c", 20.0)]),
            ("c", {"k": 2, "kind": "x"}, [("b", 10.0), ("d", 20.0)])]
    assert got == want                                                  # the text key "kind" is never an axis
    assert sweep_groups(s[s.setting == "a"], values) == []              # one setting: no sweep
    fixed = {"a": {"k": 1, "c": 10.0}, "b": {"k": 2, "c": 10.0}}
    assert sweep_groups(s[s.setting.isin(["a", "b"])], fixed) == [("k", {"c": 10.0}, [("a", 1), ("b", 2)])]


def test_a_cmc_axis_ends_at_the_largest_tabulated_rank():
    assert default_max_rank({"cmc@1", "cmc@20", "cmc@5", "map"}) == 20
    assert default_max_rank({"map", "cmc@x"}) == 50

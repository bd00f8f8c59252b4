"""Every long fit reports how far it is (rankbench.utils.progress.tick): the rounds of the boosting
rankers, the models of the SVM bank, the cross-validation grids of PRSVM, RankMKL and cMDS-DML."""

import numpy as np
import pytest
from toydata import bipartite_scores, three_level_ordinal, toy_ranking_pairs, two_camera_people

from rankbench.rankers.boosting.bipartite_rankboost import BipartiteRankBoost
from rankbench.rankers.boosting.elf import ELFAdaBoost
from rankbench.rankers.boosting.imbalanced_rankboost import ImbalancedRankBoost
from rankbench.rankers.boosting.rankboost import RankBoost
from rankbench.rankers.boosting.svm_bank import SVMBank
from rankbench.rankers.metric_learning.cmds_dml import CMDSDML
from rankbench.rankers.metric_learning.ldmlr import LDMLR
from rankbench.rankers.ranksvm.ensemble import EnsembleRankSVM
from rankbench.rankers.ranksvm.prsvm import PRSVM
from rankbench.rankers.ranksvm.rankmkl import RankMKL
from rankbench.utils.progress import FitReporter, reporting


def reid():
    return two_camera_people(12, 8, noise=0.4, seed=1)


def boosted():
    O, y = bipartite_scores(40, 5, 0, positive_rate=0.3, spread=0.6, lift=0.5)[:2]
    return O, y


def bank():
    rng = np.random.default_rng(0)
    y = (rng.random(200) < 0.2).astype(int)
    return {"a": rng.normal(size=(200, 4)) + y[:, None]}, y


def pairs():
    X, P, s, _ = toy_ranking_pairs(n=40)
    return {"a": X[:, :4], "b": X[:, 4:]}, P, s


CASES = [
    ("elf", lambda: ELFAdaBoost(n_rounds=5, n_bins=4), reid, {"round": 5}),
    ("rankboost", lambda: RankBoost(n_rounds=5), reid, {"round": 5}),
    ("prsvm", lambda: PRSVM(C=[0.01, 1.0], cv=2, cv_patience=5, random_state=0), reid, {"cv fold": 2, "C": None}),
    ("ensemble_ranksvm", lambda: EnsembleRankSVM(n_groups=2, weak_C=(0.01, 1.0), n_rounds=4, random_state=0), reid,
     {"group": 2, "round": 4}),
    ("bipartite_rankboost", lambda: BipartiteRankBoost(n_rounds=6), boosted, {"round": 6}),
    ("imbalanced_rankboost", lambda: ImbalancedRankBoost(n_rounds=6, tol=0.0), boosted, {"round": 6}),
    ("svm_bank", lambda: SVMBank(bags_per_type=3, max_bag=40, C=[0.5, 5.0], gamma=[0.3, 3.0],
                                 random_state=0), bank, {"model": 3, "gamma": 2}),
    ("rankmkl", lambda: RankMKL(kernels={"a": "linear", "b": "linear"}, C=[0.1, 1.0], cv=2, random_state=0), pairs,
     {"cv point": 2, "cv fold": 2, "mkl step": ...}),
    ("cmds_dml", lambda: CMDSDML(gamma=0.1, tol=0.0, max_iter=[5, 20], cv=3, random_state=0),
     lambda: three_level_ordinal(n_per=10, d=4), {"cv fold": 3, "iteration": 20}),
    ("ldmlr", lambda: LDMLR(K=3, T_max=8, tol=0.0), lambda: three_level_ordinal(n_per=10, d=4), {"iteration": 8}),
]


@pytest.mark.parametrize("name, make, data, loops", CASES, ids=[c[0] for c in CASES])
def test_long_fits_report_their_loops(name, make, data, loops):
    """Each named loop is reported from its first step to its total (``loops``: name -> total)."""
    states = []
    with reporting(FitReporter("job", states.append, interval=0.0)):
        make().fit(*data())
    seen: dict[str, list] = {}
    for s in states:
        for what, (done, total) in s["loops"].items():
            seen.setdefault(what, []).append((done, total))
    for what, total in loops.items():
        assert what in seen, (name, what, list(seen))
        dones = [d for d, _ in seen[what]]
        assert min(dones) <= 2  # (IRB's round 1 precedes its loop)
        if total is not ...:  # ...: any total (an iteration cap); None: no total (a loop that may stop early)
            assert {t for _, t in seen[what]} == {total}, (name, what)
        if isinstance(total, int):
            assert max(dones) == total, (name, what, max(dones))

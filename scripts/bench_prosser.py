"""Speed and memory of Prosser et al.'s rankers on real VIPeR, side by side with peers and the paper.

One run prints, for one VIPeR p = 316 split (316 training people):

* ELF strip features for all 1264 images (target: under 20 s on 2 cores);
* PRSVM (streaming, C by cross-validation) training time and peak traced memory (target: under
  15 s and 1 GB; the paper: about 11 min and 5.6 GB in Matlab) and its CMC;
* PRSVM against scikit-learn's LinearSVC (squared hinge, the same C) on the explicit pairwise
  transform of the *same* triples (target: at least 10x faster at equal or better CMC). The
  explicit transform of all 316 people needs about 13 GB in LinearSVC, so this comparison trains
  both on ``--svc-people`` people (default 100) and tests on the same 316;
* peak memory of Ensemble RankSVM against materialised PRSVM (target: at most 1/5; the paper:
  740 MB vs 5.6 GB), both with materialised weak learners (the paper's code) and streaming ones;
* RankBoost and ELF training time per trial (targets: 10 min and 5 min; the paper: 10 days and
  over 5 hours).

Usage: python scripts/bench_prosser.py --data-root ../shared/datasets [--quick]
(--quick skips the materialised runs and the boosting baselines.) Memory is the peak of
Python-traced allocations (numpy included), as the engine's meter reports it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rankbench.datasets.viper import VIPeR  # noqa: E402
from rankbench.features.elf_strips import ELFStrips  # noqa: E402
from rankbench.metrics import cmc_curve  # noqa: E402

#: Prosser et al.'s grid for C (Sec. 3), as the viper configs give it
PAPER_C_GRID = (0.0001, 0.001, 0.005, 0.05, 0.1, 0.5, 1.0, 10.0, 100.0, 1000.0)

PAPER = {  # Prosser et al. Sec. 3 "Computation time": Matlab, one fold, VIPeR, 316 training
    "PRSVM": "11 min, 5.6 GB", "Ensemble-RankSVM": "13 min, 740 MB",
    "ELF": "> 5 h", "RankBoost": "10 days",
}


CPU = {}  # label -> process CPU seconds of the last measure() (wall time suffers on a busy machine)


def measure(fn):
    """(result, wall seconds, peak MB of traced allocations); CPU seconds go to CPU['last']."""
    tracemalloc.start()
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    secs = time.perf_counter() - t
    CPU["last"] = time.process_time() - c
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return out, secs, peak


def cmc(ranker, X, y, cams, test):
    pa, pb = test & (cams == "a"), test & (cams == "b")
    c = cmc_curve(ranker.similarity(X[pa], X[pb]), y[pa], y[pb])
    return c[[0, 9, 19]] * 100


def row(name, secs, peak, c=None, paper="", cpu=None):
    cm = "" if c is None else f"r1 {c[0]:5.1f}  r10 {c[1]:5.1f}  r20 {c[2]:5.1f}"
    print(f"{name:<34} {secs:8.1f} s {CPU['last'] if cpu is None else cpu:7.1f} s {peak:9.0f} MB   {cm:<34} {paper}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-root", default=os.environ.get("RANKBENCH_DATA", "../shared/datasets"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--svc-people", type=int, default=100)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()

    from rankbench.rankers.boosting.elf import ELFAdaBoost
    from rankbench.rankers.boosting.rankboost import RankBoost
    from rankbench.rankers.ranksvm.ensemble import EnsembleRankSVM
    from rankbench.rankers.ranksvm.prsvm import PRSVM

    if not (Path(args.data_root) / "viper").is_dir():
        print(f"bench_prosser: no VIPeR under {args.data_root}; skipped")
        return
    ds = VIPeR(check_images=False).load(args.data_root)
    t, c = time.perf_counter(), time.process_time()
    X = ELFStrips().extract(ds, n_jobs=1)
    t_feat, c_feat = time.perf_counter() - t, time.process_time() - c
    y, cams = ds.column("identity"), ds.column("cam")
    rng = np.random.default_rng(args.seed)
    people = rng.permutation(np.unique(y))
    test = np.isin(y, people[:316])
    tr = np.isin(y, people[316:])
    print(f"VIPeR: {len(ds)} images, d = {X.shape[1]}; split seed {args.seed}: 316 train / 316 test people")
    print(f"ELF features, all {len(ds)} images: {t_feat:.1f} s wall, {c_feat:.1f} s CPU (target < 20 s)\n")
    print(f"{'method':<34} {'train wall':>10} {'CPU':>9} {'peak mem':>12}   {'CMC (%)':<34} paper (Matlab)")

    prsvm, t_pr, m_pr = measure(lambda: PRSVM(C_grid=PAPER_C_GRID, random_state=0).fit(X[tr], y[tr], cams[tr]))
    c_pr = cmc(prsvm, X, y, cams, test)
    row(f"PRSVM stream, CV (C={prsvm.C_:g})", t_pr, m_pr, c_pr, PAPER["PRSVM"])
    fixed, t_fx, m_fx = measure(lambda: PRSVM(C=prsvm.C_).fit(X[tr], y[tr], cams[tr]))
    row(f"PRSVM stream, fixed C={prsvm.C_:g}", t_fx, m_fx, cmc(fixed, X, y, cams, test))
    print(f"   {fixed.n_triples_} triples, {fixed.n_passes_} passes over them")

    results = {"prsvm": (t_pr, m_pr)}
    if not args.quick:
        mat, t_mat, m_mat = measure(lambda: PRSVM(C=prsvm.C_, materialize=True).fit(X[tr], y[tr], cams[tr]))
        row("PRSVM materialised (eq. 5)", t_mat, m_mat, cmc(mat, X, y, cams, test))
        ens, t_en, m_en = measure(lambda: EnsembleRankSVM(C_grid=PAPER_C_GRID, random_state=0).fit(X[tr], y[tr], cams[tr]))
        row("Ensemble RankSVM, streaming", t_en, m_en, cmc(ens, X, y, cams, test), PAPER["Ensemble-RankSVM"])
        ensm, t_em, m_em = measure(lambda: EnsembleRankSVM(C_grid=PAPER_C_GRID, random_state=0, materialize=True)
                                   .fit(X[tr], y[tr], cams[tr]))
        row("Ensemble RankSVM, materialised", t_em, m_em, cmc(ensm, X, y, cams, test))
        rb, t_rb, m_rb = measure(lambda: RankBoost().fit(X[tr], y[tr], cams[tr]))
        row(f"RankBoost ({rb.n_rounds} rounds)", t_rb, m_rb, cmc(rb, X, y, cams, test), PAPER["RankBoost"])
        # the configs' ELF: histogram and single-dimension units, weighted-distance score (viper_p316.yaml)
        elf, t_el, m_el = measure(lambda: ELFAdaBoost(units="both", n_thresholds=32, score="distance")
                                  .fit(X[tr], y[tr], cams[tr]))
        row(f"ELF AdaBoost ({elf.n_rounds} rounds)", t_el, m_el, cmc(elf, X, y, cams, test), PAPER["ELF"])
        results.update(mat=(t_mat, m_mat), ens=(t_en, m_en), ensm=(t_em, m_em), rb=(t_rb, m_rb), elf=(t_el, m_el))

    # ---- LinearSVC on the explicit pairwise transform of the same triples, smaller training set
    from sklearn.svm import LinearSVC

    from rankbench.rankers._pair_grid import build_pair_grid as build_pairs

    small = np.isin(y, people[316:316 + args.svc_people])
    C = prsvm.C_
    ours, t_o, m_o = measure(lambda: PRSVM(C=C).fit(X[small], y[small], cams[small]))
    A = build_pairs(X[small], y[small], cams[small]).materialize(np.float64)  # rows x- - x+
    sign = np.where(np.random.default_rng(0).random(len(A)) < 0.5, 1.0, -1.0)
    # label +1 for x+ - x-; flipping half the rows keeps eq. 4 unchanged and gives two classes
    svc = LinearSVC(C=C, loss="squared_hinge", fit_intercept=False, tol=1e-4, max_iter=5000)
    c_ours = CPU["last"]
    _, t_svc, m_svc = measure(lambda: svc.fit(-A * sign[:, None], sign))
    del A

    class _W:  # score pairs with LinearSVC's w exactly as PRSVM does
        def __init__(self, w):
            self.coef_ = w

        similarity = PRSVM.similarity

    print(f"\nSame {len(sign)} triples ({args.svc_people} training people), C = {C:g}, tested on the 316:")
    c_o, c_s = cmc(ours, X, y, cams, test), cmc(_W(svc.coef_.ravel()), X, y, cams, test)
    row("PRSVM (streaming Newton-CG)", t_o, m_o, c_o, cpu=c_ours)
    row("sklearn LinearSVC, explicit pairs", t_svc, m_svc, c_s)

    print("\nRatios (measured in this run; paper's Matlab figures for comparison)")
    print(f"  LinearSVC time / PRSVM time, same triples:      {t_svc / t_o:6.1f}x wall, "
          f"{CPU['last'] / max(c_ours, 1e-9):.1f}x CPU  (target >= 10x; "
          f"CMC r1 {c_o[0]:.1f} vs {c_s[0]:.1f}, r20 {c_o[2]:.1f} vs {c_s[2]:.1f})")
    print(f"  PRSVM p=316 training:                           {t_pr:6.1f} s, {m_pr:.0f} MB "
          f"(targets < 15 s, < 1 GB; paper 11 min, 5.6 GB)")
    if not args.quick:
        print(f"  Ensemble (materialised) / materialised PRSVM memory: {results['ensm'][1] / m_mat:6.3f} "
              f"(target <= 0.2; paper 740 MB / 5.6 GB = 0.13)")
        print(f"  Ensemble (streaming) / materialised PRSVM memory:    {results['ens'][1] / m_mat:6.3f}")
        print(f"  materialised / streaming PRSVM memory:               {m_mat / max(m_fx, 1e-9):6.1f}x")
        print(f"  RankBoost per trial: {results['rb'][0] / 60:.1f} min (target < 10; paper 10 days);"
              f"  ELF per trial: {results['elf'][0] / 60:.1f} min (target < 5; paper > 5 h)")


if __name__ == "__main__":
    main()

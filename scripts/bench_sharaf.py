"""Speed of the sharaf rankers (Sharaf, Hussein & Ismail, BMVC 2015), side by side with peers.

1. Scoring every OSR test pair (~1.8 million per attribute): item scores from a fitted ranker,
   then the grouped pair count of rankbench.metrics (no pair list). Target: < 1 s. The paper:
   RankMKL scores about a million pairs in about a minute.
2. Training linear RankSVM on 20,000 PubFig pairs (the release's 542-d features) against
   scikit-learn's LinearSVC on the explicit pairwise transform (the same squared-hinge primal,
   no intercept), same pairs, same C. Target: >= 10x faster at equal or better test accuracy, on
   a loaded machine. The same fit's BLAS work (a Gram matrix and its eigendecomposition when the
   features outnumber the items) on one thread (as the rankers pin it) and on two, side by side.

Usage: python scripts/bench_sharaf.py --data-root ../shared/datasets [--attributes 11] [--busy 1] [--quick]
(--busy 1: the PubFig comparison with one other core kept busy, the loaded machine of the target.)
(--quick: 20 OSR images per category, one PubFig attribute; exits 0 whatever the targets.)
"""

from __future__ import annotations

import warnings

import numpy as np
from benchtools import arguments, busy_cores, have_data, ratio, side_by_side, timed



def strengths(ds, attr):
    return ds.info["strength"][attr].reindex(ds.column("category")).to_numpy(float)


def bench_osr_scoring(data_root, quick, repeats):
    from rankbench.engine.cache import get_features
    from rankbench.metrics import grouped_pair_accuracy
    from rankbench.protocols.comparison import Comparison, training_pairs
    from rankbench.rankers.ranksvm.linear import RankSVM
    from rankbench.rankers.ranksvm.rankmkl import RankMKL
    from rankbench.registry import datasets, features

    ds = datasets.build("osr", {}).load(data_root)
    if quick:  # 20 images of each category
        cat = ds.column("category")
        ds = ds.subset(np.concatenate([np.flatnonzero(cat == c)[:20] for c in np.unique(cat)]))
    print(f"OSR: {len(ds)} images; features (cached after the first run) ...", flush=True)
    # the extractors of configs/sharaf/osr.yaml (their defaults), so the run's cache is reused
    views = {name: get_features(ds, features.build(ex, {}))
             for name, ex in [("gist", "gist"), ("color", "lab_hist"), ("gabor", "gabor_energy"),
                              ("hog", "hog"), ("lbp", "lbp")]}
    split = Comparison(n_train_per_category=5 if quick else 30).split(ds, np.random.default_rng(0))
    tr, te = np.asarray(split["train"]), np.asarray(split["test"])
    attr = ds.info["attributes"][0]
    st = strengths(ds, attr)
    pairs, sign = training_pairs(st[tr], 20000, True, np.random.default_rng(0))
    print(f"attribute {attr!r}: {len(pairs)} training pairs, {len(te)} test images")
    rows = []
    lin = RankSVM(C=1.0).fit(views["gist"][tr], pairs, sign)
    mkl = RankMKL(kernels={"gist": "chi2", "color": "chi2"}, C=1.0).fit({k: v[tr] for k, v in views.items()},
                                                                       pairs, sign)
    for name, score in [
        ("linear RankSVM (GIST)", lambda: lin.decision_function(views["gist"][te])),
        ("RankMKL (5 kernels, as the paper)", lambda: mkl.decision_function({k: v[te] for k, v in views.items()})),
    ]:
        t = timed(lambda: grouped_pair_accuracy(score(), st[te]), repeats=repeats)
        acc, n = t.result
        rows.append((name, n, t.wall, acc))
    print(f"\n{'scoring all OSR test pairs':<42} {'pairs':>10} {'time':>9} {'pairs/s':>12} {'acc':>7}")
    for name, n, t, acc in rows:
        print(f"{name:<42} {n:>10,} {t:>8.3f}s {n / t:>12,.0f} {acc:>7.4f}")
    print(f"{'paper: RankMKL, ~1M pairs (2.8 GHz i7)':<42} {1_000_000:>10,} {'~60 s':>9} {1e6 / 60:>12,.0f}")
    ok = all(t < 1.0 for _, _, t, _ in rows)
    print(f"target < 1 s for every ranker: {'MET' if ok else 'NOT MET'}")
    return ok


def bench_pubfig_training(data_root, n_attributes, repeats):
    from sklearn.svm import LinearSVC

    from rankbench.metrics import grouped_pair_accuracy
    from rankbench.protocols.comparison import training_pairs
    from rankbench.rankers.ranksvm.linear import RankSVM, fit_linear
    from rankbench.registry import datasets
    from rankbench.utils.threads import blas_threads

    ds = datasets.build("pubfig", {}).load(data_root)
    X = ds.arrays["feat"]
    tr = np.flatnonzero(ds.items.train)
    te = np.flatnonzero(~ds.items.train)
    C = 0.1
    print(f"\nPubFig: linear RankSVM vs LinearSVC on the explicit pairwise transform "
          f"({X.shape[1]}-d release features, C={C}, ordered pairs only so both solve the same problem)")
    print(f"{'attribute':<16} {'pairs':>6} {'ours s':>8} {'sklearn s':>10} {'speed-up':>9} {'ours acc':>9} {'sk acc':>7}")
    t_ours = t_sk = 0.0
    acc_ours, acc_sk = [], []
    rng = np.random.default_rng(0)
    for attr in ds.info["attributes"][:n_attributes]:
        st = strengths(ds, attr)
        pairs, sign = training_pairs(st[tr], 20000, False, np.random.default_rng(0))
        Xtr = X[tr]
        t1 = timed(lambda: RankSVM(C=C, tol=1e-4).fit(Xtr, pairs, sign), repeats=max(3, repeats))
        t1, ours = t1.wall, t1.result

        def sk_fit():
            # the explicit transform: one row per pair, random half flipped so both classes occur
            flip = rng.random(len(pairs)) < 0.5
            D = Xtr[pairs[:, 0]] - Xtr[pairs[:, 1]]
            D[flip] *= -1
            y = np.where(flip, -1, 1)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return LinearSVC(C=C, loss="squared_hinge", fit_intercept=False, tol=1e-4,
                                 max_iter=10000).fit(D, y)

        t2 = timed(sk_fit)
        t2, sk = t2.wall, t2.result
        a1, n = grouped_pair_accuracy(ours.decision_function(X[te]), st[te])
        a2, _ = grouped_pair_accuracy(X[te] @ sk.coef_.ravel(), st[te])
        t_ours += t1
        t_sk += t2
        acc_ours.append(a1)
        acc_sk.append(a2)
        print(f"{attr:<16} {len(pairs):>6} {t1:>8.3f} {t2:>10.3f} {t2 / t1:>8.1f}x {a1:>9.4f} {a2:>7.4f}")
    speedup = t_sk / t_ours
    mo, ms = float(np.mean(acc_ours)), float(np.mean(acc_sk))
    print(f"{'total / mean':<16} {'':>6} {t_ours:>8.3f} {t_sk:>10.3f} {speedup:>8.1f}x {mo:>9.4f} {ms:>7.4f}")
    ok = speedup >= 10 and mo >= ms - 1e-3
    print(f"target >= 10x at equal or better accuracy: {'MET' if ok else 'NOT MET'}; "
          f">= 100x on a loaded machine (run with --busy 1): {'MET' if speedup >= 100 and ok else 'NOT MET'}")

    def solve_on(n_threads):
        with blas_threads(n_threads):
            return fit_linear(Xtr, pairs, sign, C, 1e-4, 50)
    print(f"\nthe last attribute's fit ({len(tr)} items, {X.shape[1]}-d: a Gram matrix and its eigendecomposition) "
          "on one BLAS thread (as the rankers pin whole fits) and on two:")
    for busy in (0, 1):
        with busy_cores(busy):
            one, two = side_by_side(lambda: solve_on(1), lambda: solve_on(2), max(3, repeats))
        print(f"   {busy} other core(s) kept busy: one thread {one}, two {two}: two / one {ratio(two, one)}")
    return ok


def main():
    ap = arguments(__doc__.splitlines()[0])
    ap.add_argument("--attributes", type=int, default=11, help="PubFig attributes to time (default all 11)")
    ap.add_argument("--busy", type=int, default=0,
                    help="other cores kept busy during the PubFig comparison (a loaded machine; default 0)")
    args = ap.parse_args()
    ok1 = ok2 = True
    if have_data(args.data_root, "osr", "bench_sharaf (OSR scoring)"):
        ok1 = bench_osr_scoring(args.data_root, args.quick, args.repeats)
    if have_data(args.data_root, "pubfig", "bench_sharaf (PubFig training)"):
        with busy_cores(args.busy):
            if args.busy:
                print(f"\n(PubFig comparison with {args.busy} other core(s) kept busy)")
            ok2 = bench_pubfig_training(args.data_root, 1 if args.quick else args.attributes, args.repeats)
    raise SystemExit(0 if args.quick or (ok1 and ok2) else 1)


if __name__ == "__main__":
    main()

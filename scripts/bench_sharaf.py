"""Speed of the sharaf rankers (Sharaf, Hussein & Ismail, BMVC 2015), side by side with peers.

1. Scoring every OSR test pair (~1.8 million per attribute): item scores from a fitted ranker,
   then the grouped pair count of rankbench.metrics (no pair list). Target: < 1 s. The paper:
   RankMKL scores about a million pairs in about a minute.
2. Training linear RankSVM on 20,000 PubFig pairs (the release's 542-d features) against
   scikit-learn's LinearSVC on the explicit pairwise transform (the same squared-hinge primal,
   no intercept), same pairs, same C. Target: >= 10x faster at equal or better test accuracy.

Usage: python scripts/bench_sharaf.py --data-root ../shared/datasets [--attributes 11]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np


def best_of(fn, repeat=3):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def strengths(ds, attr):
    return ds.info["strength"][attr].reindex(ds.column("category")).to_numpy(float)


def bench_osr_scoring(data_root):
    from rankbench.engine.cache import get_features
    from rankbench.metrics import grouped_pair_accuracy
    from rankbench.protocols.comparison import Comparison, training_pairs
    from rankbench.rankers.ranksvm.linear import RankSVM
    from rankbench.rankers.ranksvm.rankmkl import RankMKL
    from rankbench.registry import datasets, features

    ds = datasets.build("osr", {}).load(data_root)
    print(f"OSR: {len(ds)} images; features (cached after the first run) ...", flush=True)
    # the extractors of configs/sharaf/osr.yaml (their defaults), so the run's cache is reused
    views = {name: get_features(ds, features.build(ex, {}))
             for name, ex in [("gist", "gist"), ("color", "lab_hist"), ("gabor", "gabor_energy"),
                              ("hog", "hog"), ("lbp", "lbp")]}
    split = Comparison(n_train_per_category=30).split(ds, np.random.default_rng(0))
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
        t, (acc, n) = best_of(lambda: grouped_pair_accuracy(score(), st[te]))
        rows.append((name, n, t, acc))
    print(f"\n{'scoring all OSR test pairs':<42} {'pairs':>10} {'time':>9} {'pairs/s':>12} {'acc':>7}")
    for name, n, t, acc in rows:
        print(f"{name:<42} {n:>10,} {t:>8.3f}s {n / t:>12,.0f} {acc:>7.4f}")
    print(f"{'paper: RankMKL, ~1M pairs (2.8 GHz i7)':<42} {1_000_000:>10,} {'~60 s':>9} {1e6 / 60:>12,.0f}")
    ok = all(t < 1.0 for _, _, t, _ in rows)
    print(f"target < 1 s for every ranker: {'MET' if ok else 'NOT MET'}")
    return ok


def bench_pubfig_training(data_root, n_attributes):
    from sklearn.svm import LinearSVC

    from rankbench.metrics import grouped_pair_accuracy
    from rankbench.protocols.comparison import training_pairs
    from rankbench.rankers.ranksvm.linear import RankSVM
    from rankbench.registry import datasets

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
        t1, ours = best_of(lambda: RankSVM(C=C, tol=1e-4).fit(Xtr, pairs, sign))

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

        t2, sk = best_of(sk_fit, repeat=1)
        a1, n = grouped_pair_accuracy(ours.decision_function(X[te]), st[te])
        a2, _ = grouped_pair_accuracy(X[te] @ sk.coef_.ravel(), st[te])
        t_ours += t1
        t_sk += t2
        acc_ours.append(a1)
        acc_sk.append(a2)
        print(f"{attr:<16} {len(pairs):>6} {t1:>8.3f} {t2:>10.3f} {t2 / t1:>8.1f}x {a1:>9.4f} {a2:>7.4f}")
    ratio = t_sk / t_ours
    mo, ms = float(np.mean(acc_ours)), float(np.mean(acc_sk))
    print(f"{'total / mean':<16} {'':>6} {t_ours:>8.3f} {t_sk:>10.3f} {ratio:>8.1f}x {mo:>9.4f} {ms:>7.4f}")
    ok = ratio >= 10 and mo >= ms - 1e-3
    print(f"target >= 10x at equal or better accuracy: {'MET' if ok else 'NOT MET'}")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-root", default="../shared/datasets")
    ap.add_argument("--attributes", type=int, default=11, help="PubFig attributes to time (default all 11)")
    args = ap.parse_args()
    ok1 = bench_osr_scoring(args.data_root)
    ok2 = bench_pubfig_training(args.data_root, args.attributes)
    raise SystemExit(0 if ok1 and ok2 else 1)


if __name__ == "__main__":
    main()

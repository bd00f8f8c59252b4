"""Speed of KLR and PKLR (Yan et al.) at the paper's sizes, beside scikit-learn, and Town Centre counts.

One run prints:

* the Town Centre settings by most crops (6 and 5 people): sequences and crops with the loader's
  defaults, next to the paper's 63 sequences / 363 images and 156 / 1118;
* fit times of ``kernel_logreg`` and ``pklr`` (RBF rho 0.08, lambda 0.001, mu 1; Newton in the dual,
  O(m'^3)) on HSV histograms (``hsv_hist``, 96-d) of those crops: a random half of the crops
  labelled, and 20 / 40 image constraints (half same-person, half different) among the rest; target
  well under a second per fit; the same on the two spirals (80 labelled points, 4 constraints);
* KLR against scikit-learn's LogisticRegression on Nystroem features with as many components as
  training points, one-vs-rest (the same model: C = 1 / (2 lambda), no intercept; argmax decoding
  equals KLR's loss-based decoding for one-vs-all logistic losses): error rates and time ratio.

Usage: python scripts/bench_yan.py --data-root ../shared/datasets [--repeats 5]
Times are the median over ``--repeats`` fits, wall clock and process CPU.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rankbench.protocols.classification import draw_pairs  # noqa: E402
from rankbench.registry import datasets, features, rankers  # noqa: E402

PAPER = {6: (63, 363), 5: (156, 1118)}  # people: (sequences, images), Section 4.1


def timed(fn, repeats):
    walls, cpus, out = [], [], None
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    return out, float(np.median(walls)), float(np.median(cpus))


def constrained_fit_data(X, y, n_constraints, rng):
    """Half the rows labelled; constraints (half same, half different) among the others, as the
    classification protocol hands them to a ranker: labelled rows, then constrained ones (y = -1)."""
    lab = np.sort(rng.choice(len(y), len(y) // 2, replace=False))
    unl = np.setdiff1d(np.arange(len(y)), lab)
    C = np.vstack([draw_pairs(y, unl, n_constraints // 2, "same", rng),
                   draw_pairs(y, unl, n_constraints - n_constraints // 2, "different", rng)])
    extra = np.unique(C[:, :2])
    rows = np.r_[lab, extra]
    pos = np.full(len(y), -1)
    pos[rows] = np.arange(len(rows))
    test = np.setdiff1d(np.arange(len(y)), lab)
    return (X[rows], np.r_[y[lab], -np.ones(len(extra), int)],
            np.column_stack([pos[C[:, 0]], pos[C[:, 1]], C[:, 2]]), test, len(lab))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-root", default="../shared/datasets")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    print("== Town Centre settings (defaults max_gap 18, sequence_length 8) vs the paper")
    sets = {}
    for k in (6, 5):
        ds = datasets.build("towncentre", {"top_k": k}).load(args.data_root)
        sets[k] = ds
        print(f"  {k} people (tracks {ds.info['tracks']}): {ds.info['n_sequences']} sequences, {len(ds)} crops"
              f"   | paper: {PAPER[k][0]} sequences, {PAPER[k][1]} images")

    print("\n== fit times (median of %d; wall / CPU seconds)" % args.repeats)
    ext = features.build("hsv_hist", {})
    for k, ds in sets.items():
        X = ext.extract(ds)
        y = np.unique(ds.items.identity.to_numpy(), return_inverse=True)[1]
        for nc in (20, 40):
            Xf, yf, C, test, n_lab = constrained_fit_data(X, y, nc, rng)
            klr, tk, ck = timed(lambda: rankers.build("kernel_logreg", {}).fit(Xf[yf >= 0], yf[yf >= 0]),
                                args.repeats)
            pk, tp, cp = timed(lambda: rankers.build("pklr", {}).fit(Xf, yf, constraints=C), args.repeats)
            ek = np.mean(klr.predict(X[test]) != y[test])
            ep = np.mean(pk.predict(X[test]) != y[test])
            print(f"  {k} people, {n_lab} labelled, {nc} constraints (m' = {len(pk.X_fit_)}, {k} classes):"
                  f" KLR {tk:.3f} / {ck:.3f} s ({klr.n_iter_.sum()} Newton steps), PKLR {tp:.3f} / {cp:.3f} s"
                  f" ({pk.n_iter_.sum()} steps); image error KLR {ek:.1%}, PKLR {ep:.1%}")
    sp = datasets.build("two_spirals", {}).load()
    Xs, ys = sp.arrays["points"], sp.items.label.to_numpy()
    lab = np.r_[rng.choice(np.flatnonzero(ys == 0), 40, replace=False), rng.choice(np.flatnonzero(ys == 1), 40,
                                                                                   replace=False)]
    unl = np.setdiff1d(np.arange(len(ys)), lab)
    C = draw_pairs(ys, unl, 4, "same", rng)
    extra = np.unique(C[:, :2])
    pos = np.full(len(ys), -1)
    pos[np.r_[lab, extra]] = np.arange(len(lab) + len(extra))
    Cf = np.column_stack([pos[C[:, 0]], pos[C[:, 1]], C[:, 2]])
    _, tk, ck = timed(lambda: rankers.build("kernel_logreg", {}).fit(Xs[lab], ys[lab]), args.repeats)
    _, tp, cp = timed(lambda: rankers.build("pklr", {}).fit(Xs[np.r_[lab, extra]], np.r_[ys[lab], -np.ones(
        len(extra), int)], constraints=Cf), args.repeats)
    print(f"  spirals, 80 labelled, 4 constraints: KLR {tk:.4f} / {ck:.4f} s, PKLR {tp:.4f} / {cp:.4f} s")

    print("\n== KLR vs scikit-learn LogisticRegression on Nystroem features (n_components = n_train)")
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import LogisticRegression
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.pipeline import make_pipeline

    for k, ds in sets.items():
        X = ext.extract(ds)
        y = ds.items.identity.to_numpy()
        tr = np.sort(rng.choice(len(y), len(y) // 2, replace=False))
        te = np.setdiff1d(np.arange(len(y)), tr)
        ours, t_ours, _ = timed(lambda: rankers.build("kernel_logreg", {}).fit(X[tr], y[tr]), args.repeats)
        peer, t_peer, _ = timed(lambda: make_pipeline(
            Nystroem(gamma=0.08, n_components=len(tr), random_state=0),
            OneVsRestClassifier(LogisticRegression(C=1 / (2 * 0.001), fit_intercept=False, max_iter=10000))
        ).fit(X[tr], y[tr]),
            args.repeats)
        print(f"  {k} people, {len(tr)} training crops: KLR {t_ours:.3f} s, error {np.mean(ours.predict(X[te]) != y[te]):.1%};"
              f" Nystroem + LogisticRegression {t_peer:.3f} s, error {np.mean(peer.predict(X[te]) != y[te]):.1%};"
              f" time ratio {t_peer / t_ours:.1f}x")


if __name__ == "__main__":
    main()

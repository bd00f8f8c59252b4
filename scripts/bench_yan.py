"""Speed of KLR and PKLR (Yan et al.) at the paper's sizes, beside scikit-learn, and Town Centre counts.

One run prints:

* the Town Centre settings by most crops (6 and 5 people): sequences and crops with the loader's
  defaults, next to the paper's 63 sequences / 363 images and 156 / 1118, and the training / test
  split of the ``video_classification`` protocol;
* fit times of ``kernel_logreg``, ``pklr`` (RBF rho 0.08, lambda 0.001, mu 1; Newton in the dual,
  O(m'^3)) and ``rca_klr`` on HSV histograms (``hsv_hist``, 96-d) under that protocol, with the
  constraints of both kinds from the paper's largest K (20 sequences for 6 people, 40 for 5):
  the sizes of the paper's experiments; the target is well under a second per fit. The same on the
  two spirals (80 labelled points, 4 constraints);
* KLR against scikit-learn's LogisticRegression on Nystroem features with as many components as
  training points, one-vs-rest (the same model: the Nystroem map of all training points spans the
  same functions, ||w||^2 = alpha^T K alpha, C = 1 / (2 lambda), no intercept; argmax decoding
  equals KLR's loss-based decoding for one-vs-all logistic losses): error rates, the share of test
  predictions on which they agree, and the time ratio.

Usage: python scripts/bench_yan.py --data-root ../shared/datasets [--repeats 5] [--quick]
(--quick: one fit per figure.)
Times are the median over ``--repeats`` fits, wall clock and process CPU, one BLAS thread.
"""

from __future__ import annotations


import numpy as np
from benchtools import arguments, have_data, timed
from rankbench.protocols.classification import extended_rows
from rankbench.registry import datasets, features, protocols, rankers
from rankbench.utils.threads import blas_threads

PAPER = {6: (63, 363, 20), 5: (156, 1118, 40)}  # people: (sequences, images, largest K), Section 4.1 / Fig. 6


def fit_inputs(X, codes, split):
    """What the protocol hands a constraint-taking fit: labelled rows, then the other rows and
    sequence means named by constraints (y = -1), and the constraints as positions."""
    train = np.asarray(split["train"])
    C = np.asarray(split["constraints"], dtype=int).reshape(-1, 3)
    n = len(codes)
    extra = np.setdiff1d(np.unique(C[:, :2]), train)
    rows = np.r_[train, extra]
    pos = np.full(n + len(split["means"]), -1)
    pos[rows] = np.arange(len(rows))
    return (extended_rows(X, rows, split["means"], n), np.r_[codes[train], -np.ones(len(extra), int)],
            np.column_stack([pos[C[:, 0]], pos[C[:, 1]], C[:, 2]]))


def main() -> None:
    ap = arguments(__doc__.splitlines()[0], repeats=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if not have_data(args.data_root, "towncentre", "bench_yan"):
        return
    repeats = 1 if args.quick else args.repeats
    ext = features.build("hsv_hist", {})
    print("== Town Centre settings (defaults max_gap 18, sequence_length 8) vs the paper")
    sets = {}
    for k in (6, 5):
        ds = datasets.build("towncentre", {"top_k": k}).load(args.data_root)
        X = ext.extract(ds)
        codes = np.unique(ds.items.identity.to_numpy(), return_inverse=True)[1]
        p = protocols.build("video_classification", {"n_constraints": PAPER[k][2], "strategy": "both"})
        p.check_dataset(ds)
        split = p.split(ds, np.random.default_rng(args.seed), features={"hsv": X})
        sets[k] = (ds, X, codes, split)
        kinds = {c: split["kinds"].count(c) for c in ("temporal", "negative", "active")}
        print(f"  {k} people (tracks {ds.info['tracks']}): {ds.info['n_sequences']} sequences, {len(ds)} crops"
              f"   | paper: {PAPER[k][0]} sequences, {PAPER[k][1]} images")
        print(f"    split by time: {len(split['train_sequences'])} training sequences / {len(split['train'])} crops, "
              f"{ds.info['n_sequences'] - len(split['train_sequences'])} test sequences / {len(split['test'])} crops;"
              f" K = {PAPER[k][2]}: {len(split['constraints'])} constraints {kinds}")

    print(f"\n== fit times at the paper's sizes (median of {repeats}; wall / CPU seconds, one BLAS thread)")
    with blas_threads(1):
        for k, (ds, X, codes, split) in sets.items():
            tr, te = np.asarray(split["train"]), np.asarray(split["test"])
            Xf, yf, C = fit_inputs(X, codes, split)
            klr, tk, ck = timed(lambda: rankers.build("kernel_logreg", {}).fit(X[tr], codes[tr]), repeats=repeats)
            pk, tp, cp = timed(lambda: rankers.build("pklr", {}).fit(Xf, yf, constraints=C), repeats=repeats)
            rc, tr_, cr = timed(lambda: rankers.build("rca_klr", {}).fit(Xf, yf, constraints=C), repeats=repeats)
            err = {n: np.mean(m.predict(X[te]) != codes[te]) for n, m in (("KLR", klr), ("PKLR", pk), ("RCA+KLR", rc))}
            print(f"  {k} people, K = {PAPER[k][2]}: {len(tr)} labelled crops, {len(C)} constraints, m' = "
                  f"{len(pk.X_fit_)} basis points, {k} one-vs-all problems")
            print(f"    KLR {tk:.3f} / {ck:.3f} s ({klr.n_iter_.sum()} Newton steps); PKLR {tp:.3f} / {cp:.3f} s "
                  f"({pk.n_iter_.sum()} steps); RCA+KLR {tr_:.3f} / {cr:.3f} s; test error "
                  + ", ".join(f"{n} {100 * e:.1f} %" for n, e in err.items()))
        sp = datasets.build("two_spirals", {"noise": 0.3}).load()
        Xs = sp.arrays["points"]
        ys = sp.items.label.to_numpy()
        p = protocols.build("classification", {"n_train_per_class": 40, "n_constraints": 4, "constraint_type": "same"})
        split = p.split(sp, np.random.default_rng(args.seed))
        split["means"] = []
        Xf, yf, C = fit_inputs(Xs, ys, split)
        lab = np.asarray(split["train"])
        _, tk, ck = timed(lambda: rankers.build("kernel_logreg", {}).fit(Xs[lab], ys[lab]), repeats=repeats)
        _, tp, cp = timed(lambda: rankers.build("pklr", {}).fit(Xf, yf, constraints=C), repeats=repeats)
        print(f"  spirals, 80 labelled, 4 constraints: KLR {tk:.4f} / {ck:.4f} s, PKLR {tp:.4f} / {cp:.4f} s")

        print("\n== KLR vs scikit-learn LogisticRegression on Nystroem features (n_components = n_train)")
        from sklearn.kernel_approximation import Nystroem
        from sklearn.linear_model import LogisticRegression
        from sklearn.multiclass import OneVsRestClassifier
        from sklearn.pipeline import make_pipeline

        cases = [(f"{k} people", X, codes, np.asarray(s["train"]), np.asarray(s["test"]))
                 for k, (ds, X, codes, s) in sets.items()]
        cases.append(("spirals", Xs, ys, lab, np.asarray(split["test"])))
        for name, X, y, tr, te in cases:
            ours, t_ours, _ = timed(lambda: rankers.build("kernel_logreg", {}).fit(X[tr], y[tr]), repeats=repeats)
            peer, t_peer, _ = timed(lambda: make_pipeline(
                Nystroem(gamma=0.08, n_components=len(tr), random_state=0),
                OneVsRestClassifier(LogisticRegression(C=1 / (2 * 0.001), fit_intercept=False, max_iter=10000,
                                                       tol=1e-8))).fit(X[tr], y[tr]), repeats=repeats)
            a, b = ours.predict(X[te]), peer.predict(X[te])
            print(f"  {name}, {len(tr)} training points: KLR {t_ours:.3f} s, error {np.mean(a != y[te]):.1%};"
                  f" Nystroem + LogisticRegression {t_peer:.3f} s, error {np.mean(b != y[te]):.1%};"
                  f" same prediction on {np.mean(a == b):.1%} of {len(te)}; time ratio {t_peer / t_ours:.1f}x")


if __name__ == "__main__":
    main()

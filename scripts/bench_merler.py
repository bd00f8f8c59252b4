"""Speed of the Merler et al. reproduction, side by side, with ratios (no timed tests).

On the generated collection at the paper's scale (52,347 items, 50 / 20 / 30 % split) with
``--types`` feature types (default 100, 16-64 dims, as the paper's 100) and 2 RBF-SVMs per type
(200 base models, the paper's count) for one frequent concept, so that bags hold 800 rows and
models up to 800 support vectors:

1. base-model evaluation throughput: svm_bank's blockwise single-precision RBF expansion against
   scikit-learn's ``SVC.decision_function`` (libsvm, one row at a time) on the same model, in
   evaluations (item x model) per second;
2. the wall time of evaluating all 200 models on the ~15,700 test items (the cost of a RankBoost
   that uses every model) and of the ranking a 200-round RankBoost actually does;
3. training time of Imbalanced RankBoost against RankBoost on the same boosting outputs
   (~10,500 x 200), same number of rounds (target: within 2x; one IRB round is one product over
   the items still above the threshold, plus O(M log M + M K) for the M rows its pruned threshold
   search cannot rule out; RankBoost's round is one N x K product), over a range of lambda;
4. the peers (LightGBM lambdarank, xgboost rank:pairwise, stumps) on the same outputs: training
   and ranking time (lazy, from their trees) beside RankBoost's;
5. the staged evaluation (AP at depths 100, 500 and full after every RankBoost round, as the
   stacked protocol computes it): ``metrics.average_precisions``, which ranks only the relevant
   items, against the whole ranked list sorted by (score, index) (its earlier form), alternating,
   with the values compared; and against trec_eval (pytrec_eval) on the final scores;
6. ranking time per base-model evaluation, the premise of the paper's ranking time: RankBoost and
   Imbalanced RankBoost fitted to convergence as in configs/merler (tol 1e-3, at most 1500
   rounds, lambda 1e5), each ranking the test items round by round as the stacked protocol times
   it (one BLAS thread, the bank's evaluation state built before the clock), alternating, medians
   of ``--repeats``: seconds per evaluation and their ratio, split into the time inside the
   base models' evaluations (which depends on which models a method chose: their support vectors
   and dimensions) and the rest (combining the rounds, the scores yielded after each round).

The SVMs here skip cross-validation (one C, gamma point): this measures evaluation and boosting,
not model selection. Usage: python scripts/bench_merler.py [--types 100] [--rounds 100] [--quick]
[--ranking-only] [--data-root ...] (the data root is not needed; accepted for ``make bench``).
``--quick``: 8 feature types, 5 rounds, one fit per figure.
"""

from __future__ import annotations

import time

import numpy as np
from benchtools import arguments, side_by_side, timed
from rankbench.datasets.synthetic_collection import SyntheticCollection
from rankbench.metrics import average_precisions
from rankbench.rankers.base import LazyColumns
from rankbench.registry import rankers
from rankbench.utils.threads import blas_threads


def best_of(n, make, *args):
    """(fitted model, shortest wall time of n fits): fits of 0.1-0.2 s vary by tens of percent."""
    runs = [timed(make().fit, *args) for _ in range(n)]
    return runs[0].result, min(t.wall for t in runs)


def main(argv=None) -> int:
    ap = arguments(__doc__.splitlines()[0], repeats=5)
    ap.add_argument("--types", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--concept", default="Computer_TV-screen", help="a frequent concept: bags of 800")
    ap.add_argument("--ranking-only", action="store_true", help="section 6 alone (ranking time per evaluation)")
    args = ap.parse_args(argv)
    if args.quick:
        args.types, args.rounds, args.repeats = 8, 5, 1

    rng = np.random.default_rng(0)
    dims = np.array([16, 32, 48, 64])[np.arange(args.types) % 4]
    noise = np.geomspace(0.4, 2.0, args.types)
    ds, t_gen, _ = timed(SyntheticCollection(feature_types=[[int(d), float(s)] for d, s in zip(dims, noise)]).load)
    views = {k[5:]: v for k, v in ds.arrays.items() if k.startswith("feat/")}
    c = ds.info["concepts"].index(args.concept)
    y = ds.arrays["relevance"][:, c].astype(int)
    perm = rng.permutation(len(y))
    base, boost, test = np.sort(perm[:26174]), np.sort(perm[26174:36643]), np.sort(perm[36643:])
    print(f"collection: {len(y)} items, {args.types} feature types, generated in {t_gen:.1f} s; concept "
          f"{args.concept}: {y[base].sum()} / {y[boost].sum()} / {y[test].sum()} relevant in base / boost / test")

    bank = rankers.build("svm_bank", {"bags_per_type": 2, "C": [1.0], "gamma": [1.0], "random_state": 0})
    _, t_fit, _ = timed(bank.fit, {k: v[base] for k, v in views.items()}, y[base])
    n_sv = np.array([len(s) for s in bank.support_])
    print(f"base models: {bank.n_models_} RBF-SVMs on bags of {bank.diagnostics_['bag_size']}, support vectors "
          f"{n_sv.min()}-{n_sv.max()} (mean {n_sv.mean():.0f}); trained in {t_fit:.1f} s (no CV)")

    X_test = {k: v[test] for k, v in views.items()}
    X_boost = {k: v[boost] for k, v in views.items()}
    H_boost = np.stack([bank.model_output(X_boost, k, np.arange(len(boost))) for k in range(bank.n_models_)], 1)
    yb = y[boost]
    if args.ranking_only:
        ranking_per_evaluation(bank, X_test, len(test), H_boost, yb, args.repeats)
        return 0

    # 1. throughput on one model, against libsvm's own row-by-row decision function
    from sklearn.svm import SVC

    j = int(np.argmax(n_sv))
    V = views[bank.views_[j]]
    svc = SVC(C=bank.C_[j], gamma=bank.gamma_[j]).fit(V[bank.bags_[j]], y[bank.bags_[j]])
    rows = np.arange(len(test))
    _, t_ours, _ = timed(bank.model_output, X_test, j, rows)
    _, t_sk, _ = timed(svc.decision_function, V[test])
    print(f"\n1. one model ({n_sv[j]} support vectors, {V.shape[1]} dims) on {len(test)} items: svm_bank "
          f"{len(test) / t_ours:,.0f} evaluations/s, SVC.decision_function {len(test) / t_sk:,.0f}/s "
          f"({t_sk / t_ours:.1f}x)")

    # 2. all models on the test part; boosting outputs for 3. and 4.
    H_test, t_all, _ = timed(lambda: np.stack([bank.model_output(X_test, k, rows) for k in range(bank.n_models_)], 1))
    n_eval = H_test.size
    print(f"2. all {bank.n_models_} models on the {len(test)} test items: {t_all:.1f} s "
          f"({n_eval / t_all:,.0f} evaluations/s over {n_eval:,} evaluations)")

    def ranking(model):
        cols = LazyColumns(lambda k, r: bank.model_output(X_test, k, r), (len(test), bank.n_models_))
        _, t, _ = timed(model.decision_function, cols)
        return t, cols.n_evals / len(test)

    n = args.repeats
    rb, t_rb = best_of(n, lambda: rankers.build("bipartite_rankboost", {"n_rounds": args.rounds}), H_boost, yb)
    irb, t_irb = best_of(n, lambda: rankers.build("imbalanced_rankboost", {"n_rounds": args.rounds, "tol": 0.0}),
                         H_boost, yb)
    rb_rank, rb_evals = ranking(rb)
    irb_rank, irb_evals = ranking(irb)
    print(f"   RankBoost, {args.rounds} rounds: ranking {rb_rank:.1f} s ({rb_evals:.1f} models per item)")
    print(f"\n3. training on the same {H_boost.shape[0]} x {H_boost.shape[1]} boosting outputs, {args.rounds} rounds "
          f"(shortest of {args.repeats} fits each):")
    print(f"   RankBoost {t_rb:.2f} s, Imbalanced RankBoost {t_irb:.2f} s: ratio {t_irb / t_rb:.2f} (target <= 2); "
          f"IRB ranking {irb_rank:.1f} s ({irb_evals:.1f} models per item, {rb_rank / irb_rank:.1f}x faster)")
    # IRB's cost depends on lambda: the items still active, and the rows its pruned threshold search
    # must sort and sum (lambda = 0: all active rows; a large lambda: almost none, but every item
    # stays active). The worst of these is the figure against the target.
    print("   IRB's training against lambda (the regulariser's weight; the paper's 1e5):")
    worst = 0.0
    for lam in (0.0, 1e3, 1e5, 1e6, 1e7, 1e8, 1e12):
        m, t = best_of(n, lambda: rankers.build("imbalanced_rankboost",
                                                {"n_rounds": args.rounds, "tol": 0.0, "lam": lam}), H_boost, yb)
        worst = max(worst, t / t_rb)
        print(f"     lambda {lam:7.0e}: {t:6.2f} s, ratio {t / t_rb:.2f}; items active {m.n_active_.mean() / len(yb):6.1%}"
              f" of the rows on average, threshold search over {m.diagnostics_['searched_fraction']:6.1%} of them")
    print(f"   worst ratio over lambda: {worst:.2f} (target <= 2)")

    print("\n4. peers on the same outputs (training / ranking, models read per item):")
    print(f"   {'RankBoost':22s} {t_rb:7.2f} s / {rb_rank:6.1f} s  {rb_evals:6.1f}")
    print(f"   {'Imbalanced RankBoost':22s} {t_irb:7.2f} s / {irb_rank:6.1f} s  {irb_evals:6.1f}")
    # xgb_pairwise has no random_state: with depth-1 trees and no subsampling its fit is deterministic
    for name, params in (("lgbm_lambdarank", {"n_estimators": args.rounds, "random_state": 0}),
                         ("xgb_pairwise", {"n_estimators": args.rounds})):
        try:
            m, t, _ = timed(rankers.build(name, params).fit, H_boost, yb)
        except ImportError as exc:  # an absent optional peer (pip install '.[peers]')
            print(f"   {name:22s} not run: {exc}")
            continue
        r, e = ranking(m)
        print(f"   {name:22s} {t:7.2f} s / {r:6.1f} s  {e:6.1f}   (training {t / t_rb:.1f}x RankBoost's)")

    # 5. staged AP: one call per round of a RankBoost ranking
    rel = y[test] > 0
    stages = list(rb.staged_decision_function(H_test))
    depths = [100, 500, None]
    new, old = side_by_side(lambda: [average_precisions(s, rel, depths) for s in stages],
                            lambda: [_whole_list_aps(s, rel, depths) for s in stages], repeats=n)
    same = new.result == old.result
    print(f"\n5. staged AP over {len(stages)} rounds x {len(test)} test items ({rel.sum()} relevant), depths 100 / 500 / "
          f"full: {new.wall / len(stages) * 1e3:.2f} ms per round against {old.wall / len(stages) * 1e3:.2f} ms sorting "
          f"the whole list ({old.wall / new.wall:.1f}x); identical values: {same}")
    try:
        import pytrec_eval
    except ImportError:
        print("   trec_eval: not run (pip install pytrec_eval-terrier)")
    else:
        docs = [f"d{i:06d}" for i in range(len(test))]
        ev = pytrec_eval.RelevanceEvaluator({"q": {d: int(r) for d, r in zip(docs, rel)}}, {"map", "map_cut"})
        ref, t_trec, _ = timed(ev.evaluate, {"q": {d: float(v) for d, v in zip(docs, stages[-1])}})
        ours, t_ours, _ = timed(average_precisions, stages[-1], rel, depths)
        agree = np.allclose(ours, [ref["q"]["map_cut_100"], ref["q"]["map_cut_500"], ref["q"]["map"]], atol=1e-4)
        print(f"   trec_eval on the final scores: {t_trec * 1e3:.1f} ms against {t_ours * 1e3:.2f} ms "
              f"({t_trec / t_ours:.0f}x; trec_eval's 4 decimals agree: {agree})")
    ranking_per_evaluation(bank, X_test, len(test), H_boost, yb, n)
    return 0 if same else 1


def ranking_per_evaluation(bank, X_test, n_test, H_boost, yb, repeats):
    """Section 6: seconds per base-model evaluation of RankBoost's and IRB's staged ranking."""
    fitted = {"RankBoost": rankers.build("bipartite_rankboost", {"n_rounds": 1500, "tol": 1e-3}),
              "IRB": rankers.build("imbalanced_rankboost", {"n_rounds": 1500, "tol": 1e-3, "lam": 1e5})}
    fitted = {name: model.fit(H_boost, yb) for name, model in fitted.items()}

    def rank(model, staged):
        inside = [0.0]

        def evaluate(k, rows):
            t = time.process_time()
            out = bank.model_output(X_test, k, rows)
            inside[0] += time.process_time() - t
            return out

        cols = LazyColumns(evaluate, (n_test, bank.n_models_))
        t = time.process_time()
        if staged:
            for _ in model.staged_decision_function(cols):
                pass
        else:
            model.decision_function(cols)
        return time.process_time() - t, inside[0], cols.n_evals

    with blas_threads(1):
        for j in range(bank.n_models_):            # the evaluation state of every model, as the protocol builds it
            bank.model_output(X_test, j, np.arange(0))
        runs = {(name, staged): [] for name in fitted for staged in (True, False)}
        for _ in range(max(3, repeats)):
            for name, staged in runs:
                runs[name, staged].append(rank(fitted[name], staged))
    print(f"\n6. ranking time per base-model evaluation on {n_test} test items (process CPU seconds, one BLAS thread, "
          f"median of {max(3, repeats)} alternating runs):")
    for staged in (True, False):
        print("   " + ("round by round (staged_decision_function, as the protocol times it):" if staged else
                      "final scores only (decision_function: no copy of the scores after each round):"))
        per = {}
        for name, model in fitted.items():
            total, inside, evals = np.median(np.array(runs[name, staged]), axis=0)
            per[name] = (total / evals, inside / evals, (total - inside) / evals)
            print(f"     {name:10s} {len(model.models_):5d} rounds, {evals / n_test:5.2f} evaluations per item: "
                  f"{total:6.3f} s, {per[name][0] * 1e6:6.3f} us per evaluation ({per[name][1] * 1e6:6.3f} inside the models, "
                  f"{per[name][2] * 1e6:6.3f} the rest)")
        ratio = [per["IRB"][i] / per["RankBoost"][i] for i in range(3)]
        print(f"     IRB / RankBoost per evaluation: {ratio[0]:.2f} (inside the models {ratio[1]:.2f}, "
              f"the rest {ratio[2]:.2f})")

def _whole_list_aps(scores, rel, depths):
    """AP at ``depths`` by sorting every item by (score, index) descending and summing TP_k / k
    down the whole list (how ``average_precisions`` computed it before it ranked only the relevant)."""
    order = np.lexsort((-np.arange(len(scores)), -scores))
    hits = rel[order]
    csum = np.cumsum(np.cumsum(hits) / np.arange(1, len(hits) + 1) * hits)
    tp = int(rel.sum())
    return [float(csum[(len(hits) if d is None else min(d, len(hits))) - 1] / tp) for d in depths]


if __name__ == "__main__":
    raise SystemExit(main())

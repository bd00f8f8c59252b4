"""Fit time and peak memory of every re-identification learner as the training set grows.

Generated two-camera people (the synthetic_reid dataset, one image per person and camera) and the
real 2784-d elf_strips feature; 200, 400, 800 and 1,600 training people. Each (learner, size) fit
runs in a fresh subprocess, so its peak memory is the process's own (the child's high-water
resident memory, VmHWM: the imports and the features included, which is what a job costs; not
``ru_maxrss``, which Linux carries over from the forking parent).
Learners, one fixed C for the SVMs:

* ELF, as the configs run it (units "both", 32 thresholds, 200 rounds), and RankBoost (100
  rounds): every pair's codes held up to ``max_held_pairs`` (VIPeR's size), streamed beyond it;
* PRSVM (streamed pair grid) and Ensemble RankSVM (5 groups, streamed weak learners);
* scikit-learn's LinearSVC on the explicit difference vectors of the same triples (the peer of
  the ranking SVMs), at the sizes where they fit in 2 GB.

Printed: a table of fit wall time, CPU time, peak MB and the fit's own MB (the peak above the
process's before the fit: the imports and the features left out) per size, the fitted growth
exponents (the slope of log time and log memory against log people, the memory's both as the peak
and as the fit's own), and Ensemble RankSVM's memory against PRSVM's at every size. Targets: ELF and RankBoost <= 600 MB at 800 people; every learner <= 2 GB
and <= 10 min at 1,600; memory exponent <= 1.2 for the pair-based learners.

Usage: python scripts/bench_scale.py [--quick] [--sizes 200 400] [--learners elf rankboost]
[--negatives-per-query K] [--threads T]
(--quick: 100 and 200 people, fewer rounds, the boosters made to stream at 200: checks that it runs;
--negatives-per-query: ELF and RankBoost on K sampled wrong matches per query instead of all;
--threads: each rankbench learner's n_jobs, 1 by default: the CPU time is the figure to compare, and
the wall time with --threads 2 is what a fit takes on both cores of a 2-core machine.)
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from benchtools import REPO, arguments

sys.path.insert(0, str(REPO))  # this checkout's rankbench, in every child too, whichever one is installed

LEARNERS = ("elf", "rankboost", "prsvm", "ensemble_ranksvm", "linearsvc")
C = 0.005  # the C PRSVM's cross-validation chose on VIPeR p = 316 seed 0 (scripts/bench_prosser.py)
SVC_LIMIT_MB = 2048


def make(learner: str, quick: bool, negatives=None, threads: int = 1):
    from rankbench.rankers.boosting.elf import ELFAdaBoost
    from rankbench.rankers.boosting.rankboost import RankBoost
    from rankbench.rankers.ranksvm.ensemble import EnsembleRankSVM
    from rankbench.rankers.ranksvm.prsvm import PRSVM

    stream = dict(max_held_pairs=20000) if quick else {}  # quick: the 200-people fits stream
    stream["negatives_per_query"] = negatives
    return {"elf": lambda: ELFAdaBoost(units="both", n_thresholds=32, score="distance",
                                       n_rounds=20 if quick else 200, n_jobs=threads, **stream),
            "rankboost": lambda: RankBoost(n_rounds=10 if quick else 100, random_state=0, n_jobs=threads, **stream),
            "prsvm": lambda: PRSVM(C=C, n_jobs=threads),
            "ensemble_ranksvm": lambda: EnsembleRankSVM(weak_C=(C,), random_state=0, n_jobs=threads)}[learner]()


def svc_mb(n_people: int, d: int) -> float:
    """The explicit triples' float64 matrix LinearSVC trains on (two-camera, one shot)."""
    return 2 * n_people * (n_people - 1) * d * 8 / 2**20


def peak_mb() -> float:
    """This process's peak resident memory: VmHWM, which a new program starts afresh (Linux's
    ``ru_maxrss`` keeps the high-water mark of the process that forked it across exec, here the
    parent's, features and all); ``ru_maxrss`` where /proc is absent."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(learner: str, n_people: int, feats: str, quick: bool, threads: int, negatives=None) -> None:
    """Fit one learner on the first ``n_people`` people; print one JSON line."""
    data = np.load(feats)
    X, y, cams = data["X"], data["y"], data["cams"]
    keep = y < n_people
    X, y, cams = X[keep], y[keep], cams[keep]
    if learner != "linearsvc":  # load the compiled loops before the clock starts (6 people)
        few = y < 6
        make(learner, quick).fit(X[few], y[few], cams[few])
    before = peak_mb()
    t, c = time.perf_counter(), time.process_time()
    if learner == "linearsvc":
        from sklearn.svm import LinearSVC

        from rankbench.rankers._pair_grid import build_pair_grid

        A = build_pair_grid(X, y, cams).materialize(np.float64)  # rows |x - x-| - |x - x+|
        sign = np.where(np.random.default_rng(0).random(len(A)) < 0.5, 1.0, -1.0)
        A *= -sign[:, None]
        LinearSVC(C=C, loss="squared_hinge", fit_intercept=False, tol=1e-4, max_iter=5000).fit(A, sign)
    else:
        make(learner, quick, negatives, threads).fit(X, y, cams)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    peak = peak_mb()
    print(json.dumps({"wall": wall, "cpu": cpu, "peak_mb": peak, "start_mb": before}))


def features(n_people: int, path: Path) -> None:
    from rankbench.datasets.synthetic_reid import SyntheticReId
    from rankbench.features.elf_strips import ELFStrips

    t = time.perf_counter()
    ds = SyntheticReId(n_people=n_people, random_state=0).load()
    X = ELFStrips().extract(ds, n_jobs=1)
    np.savez(path, X=X, y=ds.column("identity").astype(int), cams=ds.column("cam").astype(str))
    print(f"{n_people} generated people, {len(X)} images, d = {X.shape[1]}: {time.perf_counter() - t:.1f} s")


def warm_up(feats: Path, learners, quick: bool) -> None:
    """Fit each booster on 12 people, held and streamed, so that its compiled loops are in numba's
    disk cache: a child then loads them instead of compiling (LLVM's memory is no fit's)."""
    data = np.load(feats)
    keep = data["y"] < 12
    X, y, cams = data["X"][keep], data["y"][keep], data["cams"][keep]
    for learner in set(learners) & {"elf", "rankboost"}:
        for held in (10 ** 6, 1):
            make(learner, quick).set_params(n_rounds=2, max_held_pairs=held).fit(X, y, cams)


def slope(sizes, values) -> float:
    ok = [(s, v) for s, v in zip(sizes, values) if v and v > 0]
    if len(ok) < 2:
        return float("nan")
    s, v = np.log(np.array(ok, dtype=float)).T
    return float(np.polyfit(s, v, 1)[0])


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        learner, n, feats, quick, threads = sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5] == "1", int(sys.argv[6])
        return child(learner, n, feats, quick, threads, int(sys.argv[7]) if len(sys.argv) > 7 else None)
    ap = arguments(__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", help="training people (default 200 400 800 1600; quick 100 200)")
    ap.add_argument("--learners", nargs="+", choices=LEARNERS, default=list(LEARNERS))
    ap.add_argument("--negatives-per-query", type=int, help="ELF's and RankBoost's sampled wrong matches per query")
    ap.add_argument("--threads", type=int, default=1, help="each learner's n_jobs (default 1)")
    args = ap.parse_args()
    sizes = args.sizes or ([100, 200] if args.quick else [200, 400, 800, 1600])
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        feats = Path(tmp) / "features.npz"
        features(max(sizes), feats)
        d = 2784
        warm_up(feats, args.learners, args.quick)
        print(f"\n{'learner':<18} {'people':>6} {'wall s':>8} {'CPU s':>8} {'peak MB':>8} {'fit MB':>7}", flush=True)
        for learner in args.learners:
            for n in sizes:
                limit = SVC_LIMIT_MB // 4 if args.quick else SVC_LIMIT_MB
                if learner == "linearsvc" and svc_mb(n, d) > limit:
                    print(f"{learner:<18} {n:>6}   not run: its triples take {svc_mb(n, d):,.0f} MB "
                          f"(more than {limit})")
                    continue
                cmd = [sys.executable, __file__, "--child", learner, str(n), str(feats), "1" if args.quick else "0",
                       str(args.threads), *([str(args.negatives_per_query)] if args.negatives_per_query else [])]
                out = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
                if out.returncode:
                    print(f"{learner:<18} {n:>6}   FAILED: {(out.stderr.strip().splitlines() or ['?'])[-1]}")
                    continue
                r = results.setdefault(learner, {})[n] = json.loads(out.stdout.strip().splitlines()[-1])
                print(f"{learner:<18} {n:>6} {r['wall']:8.1f} {r['cpu']:8.1f} {r['peak_mb']:8.0f} "
                      f"{r['peak_mb'] - r['start_mb']:7.0f}", flush=True)
    print(f"\ngrowth exponents (slope of log value against log people, {', '.join(map(str, sizes))})")
    print(f"{'learner':<18} {'time':>6} {'memory':>7} {'fit MB':>7}")
    for learner, rs in results.items():
        ns = sorted(rs)
        print(f"{learner:<18} {slope(ns, [rs[n]['cpu'] for n in ns]):6.2f} "
              f"{slope(ns, [rs[n]['peak_mb'] for n in ns]):7.2f} "
              f"{slope(ns, [rs[n]['peak_mb'] - rs[n]['start_mb'] for n in ns]):7.2f}")
    if "prsvm" in results and "ensemble_ranksvm" in results:
        print("\nEnsemble RankSVM's peak memory / PRSVM's:  " + "  ".join(
            f"{n}: {results['ensemble_ranksvm'][n]['peak_mb'] / results['prsvm'][n]['peak_mb']:.2f}"
            for n in sizes if n in results["prsvm"] and n in results["ensemble_ranksvm"]))
    if args.quick:
        print("(--quick: timings mean nothing)")


if __name__ == "__main__":
    main()

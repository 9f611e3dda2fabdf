"""Move-labeled training speed (Shigeto 2017, Table 4) against metric-learn's LMNN and ITML, and
how the closed form's cost grows with n and d.

    python benchmarks/move_speed.py            # digits PCA30 (1257 training points) + scaling
    python benchmarks/move_speed.py --quick    # 300 training points, LMNN/ITML capped at 20
                                               # iterations, small scaling grid

Part 1 fits every method on the same data (digits, centred, PCA to 30 fitted on the 70% training
part of holdout split 0) and prints each fit time (best of --repeats runs for the fast ones)
and the ratio to Move-labeled's. LMNN and ITML are metric-learn 0.7.0 with its defaults
(LMNN k = 3; ITML_Supervised gamma = 1, 20 c^2 random constraints); DML-eig is this package's
implementation with all dissimilar pairs and its defaults (mu = 1e-3, the factored L-BFGS
solver until the Frank-Wolfe gap is 1e-3 of f_mu, at most 200 iterations).
Move-labeled uses a fixed lambda (no CV), as the paper's Table 4 times a single training.
Times are CPU seconds of this process (BLAS on one thread), which load from other processes on
a shared machine inflates far less than wall time.

Part 2 times Move-labeled's fit on Gaussian data for growing n and d, in the primal regime
(d < n: O(n d^2 + d^3) for the closed form) and the dual regime (d > n: O(n^2 d + n^3)); the
target search adds O(sum_c n_c^2 d). It prints the total fit time, the closed form alone
(`RidgeMap` from the target list) and the log-log slopes.

BLAS runs on one thread (threadpoolctl) so the numbers compare algorithms, not cores.
Low-dimensional timings are dominated by fixed costs; the slope over the last two sizes is the
one to compare with the asymptotic exponent.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from dmlbench import data
from dmlbench.methods import DMLEig, MoveLabeled
from dmlbench.methods.move import RidgeMap, same_class_targets
from dmlbench.run import preprocessing, protocols


def timed(fn, repeats=1, clock=time.process_time):
    """Best time of `repeats` calls of fn (seconds) on `clock`: by default the CPU time of this
    process (one BLAS thread), which other load on the machine inflates far less than wall
    time; the best of several runs is the least disturbed."""
    times = []
    for _ in range(repeats):
        start = clock()
        fn()
        times.append(clock() - start)
    return float(np.min(times))


def digits_pca30(n_train=None):
    ds = data.build("digits")
    split = protocols.make_splits(ds.y, {"kind": "holdout", "repeats": 1, "train_fraction": 0.7},
                                  seed=0)[0]
    train = split.train if n_train is None else split.train[:n_train]
    X, _, _ = preprocessing.fit_transform(["center", {"pca": 30}], ds.X[train], ds.X[split.test])
    return X, ds.y[train]


def part1(args):
    import metric_learn

    X, y = digits_pca30(300 if args.quick else None)
    print(f"== Part 1: fit time on digits PCA30, {X.shape[0]} training points, d = {X.shape[1]}")
    repeats = 3 if args.quick else args.repeats
    results = {"Move-labeled (lambda = 1)": timed(lambda: MoveLabeled(lam=1.0).fit(X, y), repeats)}
    wall = timed(lambda: MoveLabeled(lam=1.0).fit(X, y), repeats, clock=time.perf_counter)
    # --quick caps the iterations of LMNN and ITML (their ratios are then lower bounds)
    cap = {"max_iter": 20} if args.quick else {}
    suffix = ", max_iter 20" if args.quick else ""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results[f"LMNN (metric-learn{suffix})"] = timed(
            lambda: metric_learn.LMNN(random_state=0, **cap).fit(X, y))
        results[f"ITML (metric-learn{suffix})"] = timed(
            lambda: metric_learn.ITML_Supervised(random_state=0, **cap).fit(X, y))
    dml = DMLEig(mu=1e-3, max_iter=50 if args.quick else 200)
    results["DML-eig (dmlbench)"] = timed(lambda: dml.fit(X, y))
    info = dml.fit_info()
    print(f"  DML-eig: {info['n_iter']} iterations, converged {info['converged']}, Frank-Wolfe gap "
          f"{info['fw_gap'] / max(abs(info['final_objective']), dml.mu):.1e} of f_mu")
    base = results["Move-labeled (lambda = 1)"]
    print(f"  (CPU seconds, best of {repeats} for Move-labeled, one run for the others; "
          f"Move-labeled wall time {wall:.4f} s)")
    for name, seconds in results.items():
        print(f"  {name:44s} {seconds:9.4f} s   {seconds / base:9.1f} x Move-labeled")
    fastest = min(v for k, v in results.items() if not k.startswith("Move"))
    print(f"  speed-up of Move-labeled over the fastest of LMNN, ITML, DML-eig: "
          f"{fastest / base:.0f}x")


def scaling(label, sizes, make_data, solver, repeats):
    rows = []
    for size in sizes:
        X, y = make_data(size)
        sources, targets = same_class_targets(X, y, 1)
        fit = timed(lambda: MoveLabeled(lam=1.0, solver=solver).fit(X, y), repeats)
        closed = timed(lambda: RidgeMap(X, targets, sources, 1.0, solver), repeats)
        rows.append((size, fit, closed))
        print(f"  {label} = {size:6d}: fit {fit:8.4f} s   closed form {closed:8.4f} s")
    sizes_, fits, closeds = (np.log(np.array(c, dtype=float)) for c in zip(*rows))
    top = np.diff(closeds[-2:]) / np.diff(sizes_[-2:])
    print(f"  log-log slope in {label}: fit {np.polyfit(sizes_, fits, 1)[0]:.2f}, "
          f"closed form {np.polyfit(sizes_, closeds, 1)[0]:.2f} (last two sizes {top[0]:.2f})")


def gaussian(n, d, classes=10, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % classes
    return rng.normal(size=(n, d)) + rng.normal(size=(classes, d))[y], y


def part2(args):
    q = args.quick
    repeats = 3
    print("== Part 2: Move-labeled fit time against n and d (Gaussian data, 10 classes)")
    print("-- primal (d < n): expect closed form ~ n d^2 + d^3")
    scaling("n (d = 50)", [500, 1000, 2000] if q else [1000, 2000, 4000, 8000, 16000],
            lambda n: gaussian(n, 50), "primal", repeats)
    scaling("d (n = 4000)", [25, 50, 100] if q else [50, 100, 200, 400, 800],
            lambda d: gaussian(4000, d), "primal", repeats)
    print("-- dual (d > n): expect closed form ~ n^2 d + n^3")
    scaling("n (d = 4000)", [100, 200, 400] if q else [250, 500, 1000, 2000],
            lambda n: gaussian(n, 4000), "dual", repeats)
    scaling("d (n = 500)", [1000, 2000, 4000] if q else [1000, 2000, 4000, 8000, 16000],
            lambda d: gaussian(500, d), "dual", repeats)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, seconds")
    parser.add_argument("--repeats", type=int, default=5, help="repeats of the fast fits")
    args = parser.parse_args()
    with threadpool_limits(limits=1):
        part1(args)
        part2(args)


if __name__ == "__main__":
    main()

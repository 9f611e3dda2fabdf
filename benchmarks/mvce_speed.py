"""Speed of the MVCE core and of RMVEM prediction, measured against references in the same run.

1. Titterington (`dmlbench.solvers.mvce.titterington`) against the CVXPY reference
   (`dmlbench.solvers.mvce.cvxpy_reference`, Clarabel) on the same random problems, m below and above d:
   time per problem, the ratio CVXPY / Titterington (Titterington to tol = 1e-7, and stopped as
   soon as its duality gap is as small as that of CVXPY's solution), and the log-det agreement.
2. RMVEM prediction on USPS-sized synthetic data (n = 7291, d = 256, m = 50): cost per query,
   all queries batched against one query at a time, and the peak memory added by the search
   for two query counts (bounded by the chunk, not by the number of queries).

    python benchmarks/mvce_speed.py            # the full run
    python benchmarks/mvce_speed.py --quick    # a smaller, faster run
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

from dmlbench.measure.evaluation import PeakMemory
from dmlbench.methods import make
from dmlbench.solvers import mvce


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def solver_comparison(shapes, problems: int, seed: int = 0) -> None:
    print("1. Titterington against CVXPY (Clarabel), per problem, eps = 1e-4")
    print(f"{'m':>4} {'d':>4} {'r':>4} {'T 1e-7 (s)':>11} {'T @gap (s)':>11} {'CVXPY (s)':>10} "
          f"{'ratio':>8} {'ratio@gap':>10} {'rel dlogdet':>12} {'T iters':>8}")
    rng = np.random.default_rng(seed)
    for m, d in shapes:
        Z = rng.normal(size=(problems, m, d)) * rng.uniform(0.5, 2.0, size=d)
        ref, t_ref = timed(lambda: mvce.cvxpy_reference(Z))
        ours, t_ours = timed(lambda: [mvce.titterington(z, tol=1e-7, max_iter=100000) for z in Z])
        _, t_gap = timed(lambda: [mvce.titterington(z, tol=max(g, 1e-12), max_iter=100000)
                                  for z, g in zip(Z, ref.gap)])
        logdet = np.array([o.logdet for o in ours])
        rel = np.max(np.abs(logdet - ref.logdet) / np.maximum(1, np.abs(ref.logdet)))
        iters = np.mean([o.n_iter for o in ours])
        print(f"{m:>4} {d:>4} {min(m, d):>4} {t_ours / problems:>11.4f} {t_gap / problems:>11.4f} "
              f"{t_ref / problems:>10.3f} {t_ref / t_ours:>8.1f} {t_ref / t_gap:>10.1f} "
              f"{rel:>12.1e} {iters:>8.0f}", flush=True)


def usps_like(n: int, d: int, classes: int = 10, seed: int = 1):
    """Class means plus noise in a 30-dimensional subspace per class, plus isotropic noise."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % classes
    means = rng.normal(size=(classes, d))
    bases = rng.normal(size=(classes, 30, d)) / np.sqrt(d)
    X = means[y] + np.einsum("nk,nkd->nd", rng.normal(size=(n, 30)) * 3, bases[y])
    return X + 0.3 * rng.normal(size=(n, d)), y


def rmvem_prediction(n: int, d: int, m: int, queries: list[int], single: int) -> None:
    print(f"\n2. RMVEM prediction, synthetic data n = {n}, d = {d}, m = {m} (1 BLAS thread)")
    X, y = usps_like(n, d)
    Q = usps_like(max(queries), d, seed=2)[0]
    with threadpool_limits(1):
        est, t_fit = timed(lambda: make("rmvem", {"m": m}).fit(X, y))
        print(f"fit (training neighbourhood lists only, m fixed): {t_fit:.1f} s")
        for q in queries:
            memory: dict = {}
            with PeakMemory(memory):
                _, t_batch = timed(lambda: est.kneighbors(Q[:q], 10))
            print(f"batched, {q:>4} queries: {1000 * t_batch / q:7.2f} ms per query, peak memory "
                  f"added {memory['peak_rss_delta_mb']:.0f} MiB")
        _, t_one = timed(lambda: [est.kneighbors(Q[i:i + 1], 10) for i in range(single)])
        per_one = t_one / single
        per_batch = t_batch / queries[-1]
        print(f"one query at a time ({single} queries): {1000 * per_one:7.2f} ms per query")
        print(f"ratio one-at-a-time / batched: {per_one / per_batch:.1f}")
        dist_b, ind_b = est.kneighbors(Q[:single], 10)
        ind_1 = np.vstack([est.kneighbors(Q[i:i + 1], 10)[1] for i in range(single)])
        print(f"batched and one-at-a-time neighbour lists equal: {np.array_equal(ind_b, ind_1)}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="smaller problems, fewer repeats")
    args = p.parse_args(argv)
    if args.quick:
        solver_comparison([(50, 10), (20, 60), (10, 256)], problems=2)
        rmvem_prediction(n=2000, d=256, m=50, queries=[200, 800], single=20)
    else:
        solver_comparison([(50, 10), (60, 30), (20, 60), (40, 60), (50, 256)], problems=3)
        rmvem_prediction(n=7291, d=256, m=50, queries=[1000, 3000], single=50)


if __name__ == "__main__":
    main()

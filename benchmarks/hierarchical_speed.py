"""What does the Bayesian hierarchical test (`dmlbench.measure.hierarchical`) cost per
comparison? One test alone, and the report's batch of one k: every method of the reality check
against Euclidean and against the best-ranked method (`--pairs`, default 33 = 17 + 16), on
`--sets` data sets (default 34) of `--folds` folds (default 10), synthetic fold accuracies. One
BLAS thread; wall and CPU seconds, best of `--repeats`. No time is asserted (the goal: under 1 s per
comparison; baycomp's Stan model, the reference, needs about 190 s to compile and then about a
minute per comparison on this machine under load, `tests/hierarchical_reference.py`).

    python benchmarks/hierarchical_speed.py
    python benchmarks/hierarchical_speed.py --quick
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

from dmlbench.measure.hierarchical import (CHAINS, N_SAMPLES, WARMUP, hierarchical_test,
                                           hierarchical_tests)


def pairs(n_pairs: int, sets: int, folds: int, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n_pairs):
        a = rng.uniform(0.6, 0.95, (sets, 1)) + rng.normal(0, 0.02, (sets, folds))
        shift = rng.normal(0.01 * (i % 5 - 2), 0.01, (sets, 1))
        out.append((a, a + shift + rng.normal(0, 0.015, (sets, folds))))
    return out


def best_of(repeats: int, fn) -> tuple[float, float]:
    """(wall, CPU) seconds of the fastest of `repeats` calls (CPU time: meaningful on a loaded
    machine, where wall time is not)."""
    times = []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        times.append((time.perf_counter() - wall, time.process_time() - cpu))
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=33)
    parser.add_argument("--sets", type=int, default=34)
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="8 pairs of 10 sets, best of 1")
    args = parser.parse_args()
    if args.quick:
        args.pairs, args.sets, args.repeats = 8, 10, 1
    batch = pairs(args.pairs, args.sets, args.folds)
    rho = 1 / args.folds
    with threadpool_limits(1):
        start = time.perf_counter()
        hierarchical_test(*batch[0], rho=rho, n_samples=400, chains=4, warmup=10)
        first = time.perf_counter() - start  # numba compiles, or loads its cache
        one = best_of(args.repeats, lambda: hierarchical_test(*batch[0], rho=rho))
        together = best_of(args.repeats, lambda: hierarchical_tests(batch, rho=rho))
    print(f"{args.sets} data sets x {args.folds} folds, {CHAINS} chains, {N_SAMPLES} draws "
          f"after {WARMUP} warm-up iterations per comparison "
          f"(first call, compiling or loading the compiled sampler: {first:.1f} s wall):")
    print(f"  one comparison alone: {one[0]:.2f} s wall, {one[1]:.2f} s CPU")
    print(f"  {args.pairs} comparisons in one batch: {together[0]:.2f} s wall, "
          f"{together[1]:.2f} s CPU; {together[1] / args.pairs:.3f} s CPU per comparison")


if __name__ == "__main__":
    main()

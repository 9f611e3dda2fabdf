"""Fit time and memory of BoostMDM-G (and BoostMDM-K) against LMNN, by data size.

    python benchmarks/boost_speed.py            # N = 200, 400, 800 digits (PCA 30)
    python benchmarks/boost_speed.py --quick    # N = 150, 300
    python benchmarks/boost_speed.py --sizes 200 1600

Same data for every method: stratified subsets of scikit-learn's digits, centred and reduced to
30 principal components (the speed anchor of the benchmarks). One BLAS thread each; the ratio is taken on
CPU seconds, which a shared machine disturbs less than wall seconds (both are printed). Peak
memory is the largest traced allocation during the fit (tracemalloc sees numpy buffers), beside
what one dense N x N float64 matrix takes; BoostMDM-G's distance blocks are capped at
`dmlbench.measure.neighbours.MAX_BLOCK_BYTES` (64 MiB) rows x N, so its memory stops growing with N^2 there.
LMNN is the `lmnn` method: metric-learn's algorithm, re-implemented since the ratios in
docs/performance.md were measured against metric-learn's own (10x-40x slower, `lmnn_speed.py`).
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
import warnings

from sklearn.datasets import load_digits
from sklearn.decomposition import PCA
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

from dmlbench.methods import make


def measure(name: str, params: dict, X, y) -> tuple[float, float, float, dict]:
    """(wall s, CPU s, peak traced MiB, fit_info) of one fit."""
    est = make(name, params)
    tracemalloc.start()
    wall, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return wall, cpu, peak, est.fit_info()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two small sizes only")
    parser.add_argument("--sizes", type=int, nargs="+", help="training-set sizes (<= 1797)")
    args = parser.parse_args(argv)
    sizes = args.sizes or ([150, 300] if args.quick else [200, 400, 800])
    digits = load_digits()
    X_all = PCA(30, svd_solver="full").fit_transform(digits.data - digits.data.mean(axis=0))
    methods = [("boostmdm_g", {}), ("boostmdm_k", {}), ("lmnn", {"n_neighbors": 3})]
    print(f"{'N':>5} {'method':>11} {'wall s':>8} {'CPU s':>8} {'T':>3} {'rank':>4} "
          f"{'peak MiB':>9} {'dense NxN MiB':>13} {'LMNN CPU / this':>15}")
    for n in sizes:
        X, _, y, _ = train_test_split(X_all, digits.target, train_size=n, stratify=digits.target,
                                      random_state=0)
        rows = {}
        with threadpool_limits(limits=1):
            for name, params in methods:
                rows[name] = measure(name, params, X, y)
        lmnn_cpu = rows["lmnn"][1]
        for name, (wall, cpu, peak, info) in rows.items():
            print(f"{n:>5} {name:>11} {wall:>8.2f} {cpu:>8.2f} {info.get('n_boost_iter', ''):>3} "
                  f"{info.get('rank', ''):>4} {peak:>9.1f} {8 * n * n / 2**20:>13.1f} "
                  f"{lmnn_cpu / cpu:>15.2f}")


if __name__ == "__main__":
    main()

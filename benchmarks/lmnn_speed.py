"""LMNN fit time: dmlbench's `lmnn` (metric-learn 0.7.0's algorithm re-implemented,
`dmlbench.methods.lmnn`) against metric-learn 0.7.0's `LMNN`, side by side in one run.

    python benchmarks/lmnn_speed.py              # n = 150, 500, 1000; d = 4 .. 60; 100 iterations
    python benchmarks/lmnn_speed.py --quick      # n = 150 and 500, 30 iterations
    python benchmarks/lmnn_speed.py --max-iter 1000   # the default iteration cap

KEEL-like data: three classes from `make_classification` (half the features informative),
min-max scaled to [0, 1] as the benchmark's configs preprocess them. Both fits start from the
same initialisation (the default, 'auto') with k = 3 and the same `max_iter` (min_iter = 50,
so with a short cap both run to it); the table gives CPU seconds (one BLAS thread), the
iterations each ran, the ratio and the relative Frobenius difference of the learnt maps.
Numba's compilation is cached (`make install` precompiles) and one warm-up fit precedes.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.datasets import make_classification
from sklearn.preprocessing import MinMaxScaler
from threadpoolctl import threadpool_limits

from dmlbench.methods import make

FULL = ((150, 4), (150, 13), (500, 13), (500, 60), (1000, 20), (1000, 60))
QUICK = ((150, 4), (500, 13))


def dataset(n: int, d: int, seed: int = 0):
    X, y = make_classification(n_samples=n, n_features=d, n_informative=max(2, d // 2),
                               n_redundant=0, n_classes=3, n_clusters_per_class=1,
                               random_state=seed)
    return MinMaxScaler().fit_transform(X), y


def timed(fit):
    start = time.process_time()
    model = fit()
    return time.process_time() - start, model


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--max-iter", type=int, help="iteration cap (default 100; quick 30)")
    args = parser.parse_args(argv)
    max_iter = args.max_iter or (30 if args.quick else 100)
    import metric_learn

    params = {"n_neighbors": 3, "max_iter": max_iter, "min_iter": 50}
    print(f"lmnn_speed: CPU seconds per fit, one BLAS thread, max_iter = {max_iter}")
    print(f"{'n':>5} {'d':>3} {'metric-learn':>13} {'dmlbench':>9} {'ratio':>7} "
          f"{'iterations':>11} {'|L - L_ml|/|L_ml|':>18}")
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        make("lmnn", params).fit(*dataset(60, 4))  # warm-up: imports, numba's cache
        for n, d in (QUICK if args.quick else FULL):
            X, y = dataset(n, d)
            t_ml, ref = timed(lambda: metric_learn.LMNN(**params).fit(X, y))
            t_ours, ours = timed(lambda: make("lmnn", params).fit(X, y))
            diff = (np.linalg.norm(ours.components_ - ref.components_)
                    / np.linalg.norm(ref.components_))
            print(f"{n:5d} {d:3d} {t_ml:13.3f} {t_ours:9.3f} {t_ml / t_ours:6.1f}x "
                  f"{ref.n_iter_:5d}/{ours.n_iter_:<5d} {diff:18.1e}")


if __name__ == "__main__":
    main()

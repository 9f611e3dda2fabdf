"""LMNN fit time: dmlbench's `lmnn` (metric-learn 0.7.0's algorithm re-implemented,
`dmlbench.methods.lmnn`) against metric-learn 0.7.0's `LMNN`, side by side in one run.

    python benchmarks/lmnn_speed.py           # whole fits (n = 150 .. 500), first 100 (n = 1000)
    python benchmarks/lmnn_speed.py --quick   # n = 150 and 500, the first 30 iterations

KEEL-like data: three classes from `make_classification` (half the features informative),
min-max scaled to [0, 1] as the benchmark's configs preprocess them, and scikit-learn's wine
min-max scaled. Both fits start from the same initialisation (the default, 'auto') with the
default parameters (k = 3, max_iter = 1000, min_iter = 50), or with a lower `max_iter` where
the table says so (the first iterations, while many triples are active, cost metric-learn the
most); the table gives CPU seconds (one BLAS thread), the iterations each ran, the ratio and
the relative Frobenius difference of the learnt maps. Numba's compilation is cached (`make
install` precompiles) and one warm-up fit precedes.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.datasets import load_wine, make_classification
from sklearn.preprocessing import MinMaxScaler
from threadpoolctl import threadpool_limits

from dmlbench.methods import make

#: (n, d, max_iter); n = 0: scikit-learn's wine (178 x 13)
FULL = ((0, 13, 1000), (150, 4, 1000), (150, 13, 1000), (500, 13, 1000), (500, 60, 1000),
        (1000, 20, 100), (1000, 60, 100))
QUICK = ((150, 4, 30), (500, 13, 30))


def dataset(n: int, d: int, seed: int = 0):
    if n == 0:
        X, y = load_wine(return_X_y=True)
        return MinMaxScaler().fit_transform(X), y
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
    args = parser.parse_args(argv)
    import metric_learn

    print("lmnn_speed: CPU seconds per fit, one BLAS thread, k = 3, min_iter = 50")
    print(f"{'data':>10} {'d':>3} {'max_iter':>8} {'metric-learn':>13} {'dmlbench':>9} "
          f"{'ratio':>7} {'iterations':>11} {'|L - L_ml|/|L_ml|':>18}")
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        make("lmnn", {}).fit(*dataset(60, 4))  # warm-up: imports, numba's cache
        for n, d, max_iter in (QUICK if args.quick else FULL):
            X, y = dataset(n, d)
            params = {"n_neighbors": 3, "max_iter": max_iter, "min_iter": 50}
            t_ml, ref = timed(lambda: metric_learn.LMNN(**params).fit(X, y))
            t_ours, ours = timed(lambda: make("lmnn", params).fit(X, y))
            diff = (np.linalg.norm(ours.components_ - ref.components_)
                    / np.linalg.norm(ref.components_))
            name = "wine" if n == 0 else f"n = {n}"
            print(f"{name:>10} {d:3d} {max_iter:8d} {t_ml:13.3f} {t_ours:9.3f} "
                  f"{t_ml / t_ours:6.1f}x {ref.n_iter_:5d}/{ours.n_iter_:<5d} {diff:18.1e}",
                  flush=True)


if __name__ == "__main__":
    main()

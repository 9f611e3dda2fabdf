"""NCA speed and memory, measured side by side in one run.

    python benchmarks/nca_speed.py            # full run (about an hour on a busy 2-core machine)
    python benchmarks/nca_speed.py --quick    # minutes: smaller magic subset, fewer repeats

1. digits, PCA to 30 (1257 training points): one objective + gradient evaluation and a
   50-iteration L-BFGS fit from the same initial A, dmlbench vs scikit-learn's
   NeighborhoodComponentsAnalysis and metric-learn's NCA (ratios = their time / ours).
2. magic (70/30 split, z-scored, d = 5): full NCA (conjugate gradients, RCA start) gives the
   reference test accuracy; each fast variant's iterates are replayed on the test set to find
   the time at which it first comes within one point of that accuracy (1-NN and NCA rule).
3. Peak memory of one objective + gradient evaluation against N (tracemalloc, numpy arrays):
   dmlbench's chunked evaluation vs scikit-learn's N x N one.

Every timing runs with one BLAS thread.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from dmlbench import data
from dmlbench.measure.neighbours import euclidean_kneighbors  # noqa: E402
from dmlbench.methods import make  # noqa: E402
from dmlbench.run import preprocessing  # noqa: E402
from dmlbench.solvers import nca_objective


def split(name: str, steps: list, seed: int = 0, limit: int | None = None):
    """Stratified 70/30 split of a registered data set, preprocessed on its training part."""
    from sklearn.model_selection import train_test_split

    ds = data.build(name)
    X, y = ds.X, ds.y
    if limit and limit < y.size:
        keep, _ = train_test_split(np.arange(y.size), train_size=limit, stratify=y,
                                   random_state=seed)
        X, y = X[keep], y[keep]
    tr, te = train_test_split(np.arange(y.size), train_size=0.7, stratify=y, random_state=seed)
    X_train, X_test, _ = preprocessing.fit_transform(steps, X[tr], X[te])
    return X_train, y[tr], X_test, y[te]


def best_of(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def digits_part(repeats: int) -> None:
    from metric_learn import NCA as MLNCA
    from sklearn.neighbors import NeighborhoodComponentsAnalysis

    X, y, _, _ = split("digits", ["center", {"pca": 30}])
    A0 = np.random.default_rng(0).standard_normal((30, 30)) / np.sqrt(30)
    mask = y[:, None] == y[None, :]
    sk = NeighborhoodComponentsAnalysis()
    sk.n_iter_, sk.verbose = 1, 0
    ml = MLNCA()
    ml.n_iter_, ml.verbose = 1, 0
    f_ours, _ = nca_objective.objective(A0, X, y)
    f_sk = sk._loss_grad_lbfgs(A0.ravel(), X, mask, 1.0)[0]
    f_ml = ml._loss_grad_lbfgs(A0.ravel(), X, mask, 1.0)[0]
    print(f"\n[1] digits-PCA30: N = {len(y)} training points, D = d = 30; f(A0) = {f_ours:.6f} "
          f"(scikit-learn {f_sk:.6f}, metric-learn {f_ml:.6f})")
    t_ours = best_of(lambda: nca_objective.objective(A0, X, y), repeats)
    t_sk = best_of(lambda: sk._loss_grad_lbfgs(A0.ravel(), X, mask, -1.0), repeats)
    t_ml = best_of(lambda: ml._loss_grad_lbfgs(A0.ravel(), X, mask, -1.0), repeats)
    print(f"  objective + gradient (best of {repeats}): dmlbench {t_ours * 1e3:.1f} ms | "
          f"scikit-learn {t_sk * 1e3:.1f} ms ({t_sk / t_ours:.2f}x ours) | "
          f"metric-learn {t_ml * 1e3:.1f} ms ({t_ml / t_ours:.2f}x ours)")

    fits = {
        "dmlbench": lambda: make("nca", {"n_components": 30, "optimizer": "lbfgs", "init": A0,
                                         "max_iter": 50, "tol": 1e-12}),
        "scikit-learn": lambda: NeighborhoodComponentsAnalysis(n_components=30, init=A0,
                                                               max_iter=50, tol=1e-12),
        "metric-learn": lambda: MLNCA(n_components=30, init=A0, max_iter=50, tol=1e-12),
    }
    result = {}
    for name, factory in fits.items():
        est = factory()
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y)
        elapsed = time.perf_counter() - start
        f_final = nca_objective.objective(est.components_, X, y)[0] / len(y)
        result[name] = elapsed
        print(f"  50-iteration L-BFGS fit: {name:12s} {elapsed:7.2f} s  "
              f"(iterations {est.n_iter_}, final f(A)/N = {f_final:.4f})")
    print(f"  fit ratios: scikit-learn / dmlbench = "
          f"{result['scikit-learn'] / result['dmlbench']:.2f}, metric-learn / dmlbench = "
          f"{result['metric-learn'] / result['dmlbench']:.2f}")


def _accuracy_over_time(est, X, y, X_test, y_test, max_points: int):
    """(time, 1-NN accuracy, NCA-rule accuracy) at up to `max_points` of the fit's iterates,
    spread evenly in log time."""
    history = est.history_
    times = np.array([t for t, _ in history])
    picks = np.unique(np.searchsorted(times, np.geomspace(max(times[0], 1e-3), times[-1],
                                                          max_points)))
    picks = np.unique(np.append(picks[picks < len(history)], len(history) - 1))
    out = []
    for i in picks:
        t, A = history[i]
        Z, Zq = X @ A.T, X_test @ A.T
        _, ind = euclidean_kneighbors(Zq, Z, 1)
        knn = float(np.mean(y[ind[:, 0]] == y_test))
        est.components_, est.embedding_ = A, Z
        rule = float(np.mean(est.predict_nca_rule(X_test) == y_test))
        out.append((t, knn, rule))
    return out


def magic_part(quick: bool) -> None:
    limit = 4000 if quick else None
    X, y, X_test, y_test = split("magic", ["zscore"], limit=limit)
    print(f"\n[2] magic: {len(y)} training / {len(y_test)} test points, D = 10, d = 5"
          + (" (quick: a stratified subset)" if quick else ""))
    full_iter = 15 if quick else 30
    variants = {
        "nca": {"optimizer": "cg", "max_iter": full_iter},
        "nca_ss": {"n_samples": 1000 if quick else 3000},
        "nca_mb": {"batch_size": 500 if quick else 2000, "t0": 100.0, "max_iter": 150,
                   "eval_every": 1},
        "nca_sl": {"batch_size": 50, "max_iter": 600 if quick else 3000, "eval_every": 20},
        "nca_sl_kd": {"batch_size": 50, "epsilon_max": 0.1, "max_iter": 300 if quick else 1500,
                      "eval_every": 20},
        "nca_cs": {"optimizer": "sgd", "batch_size": 50, "max_iter": 600 if quick else 3000,
                   "eval_every": 20, "validation_fraction": 0.05},
        "nca_cs_back": {"optimizer": "sgd", "batch_size": 50, "max_iter": 600 if quick else 3000,
                        "eval_every": 20, "validation_fraction": 0.05},
    }
    curves, fit_time = {}, {}
    for name, params in variants.items():
        est = make(name, {"n_components": 5, "random_state": 0, **params})
        start = time.perf_counter()
        est.fit(X, y)
        fit_time[name] = time.perf_counter() - start
        curves[name] = _accuracy_over_time(est, X, y, X_test, y_test, 12 if quick else 25)
        last = curves[name][-1]
        info = est.fit_info()
        print(f"  {name:12s} fit {fit_time[name]:8.1f} s, {info['n_iter']:5d} iterations, "
              f"visited {100 * info['visited_fraction']:5.1f}%, test 1-NN {100 * last[1]:.2f}%, "
              f"NCA rule {100 * last[2]:.2f}%  ({info['stop_reason']})", flush=True)
    ref_knn, ref_rule = curves["nca"][-1][1], curves["nca"][-1][2]
    print(f"  time to reach full NCA's test accuracy within one point (full NCA: 1-NN "
          f"{100 * ref_knn:.2f}%, NCA rule {100 * ref_rule:.2f}%, {fit_time['nca']:.1f} s):")
    for name, curve in curves.items():
        cells = []
        for col, ref in ((1, ref_knn), (2, ref_rule)):
            hit = next((t for t, *acc in curve if acc[col - 1] >= ref - 0.01), None)
            cells.append("not reached" if hit is None else
                         f"{hit:8.1f} s ({fit_time['nca'] / hit:6.1f}x faster)")
        print(f"    {name:12s} 1-NN: {cells[0]:30s} NCA rule: {cells[1]}")


def memory_part(quick: bool) -> None:
    from sklearn.neighbors import NeighborhoodComponentsAnalysis

    sizes = (1000, 2000, 4000) if quick else (1000, 2000, 4000, 8000)
    print("\n[3] peak memory of one objective + gradient evaluation (tracemalloc), D = 10, d = 5")
    rng = np.random.default_rng(0)
    sk = NeighborhoodComponentsAnalysis()
    sk.n_iter_, sk.verbose = 1, 0
    for n in sizes:
        X = rng.normal(size=(n, 10))
        y = rng.integers(0, 2, n)
        A = rng.normal(size=(5, 10)) / np.sqrt(10)
        peaks = []
        for fn in (lambda: nca_objective.objective(A, X, y),
                   lambda: sk._loss_grad_lbfgs(A.ravel(), X, y[:, None] == y[None, :], -1.0)):
            tracemalloc.start()
            fn()
            peaks.append(tracemalloc.get_traced_memory()[1] / 2**20)
            tracemalloc.stop()
        print(f"  N = {n:5d}: dmlbench {peaks[0]:8.1f} MiB | scikit-learn {peaks[1]:8.1f} MiB "
              f"({peaks[1] / peaks[0]:.1f}x)")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="minutes instead of an hour")
    parser.add_argument("--parts", default="digits,magic,memory",
                        help="comma-separated subset of digits,magic,memory")
    args = parser.parse_args(argv)
    parts = set(args.parts.split(","))
    print(f"nca_speed{' --quick' if args.quick else ''}: one BLAS thread")
    with threadpool_limits(1):
        if "digits" in parts:
            digits_part(3 if args.quick else 10)
        if "magic" in parts:
            magic_part(args.quick)
        if "memory" in parts:
            memory_part(args.quick)


if __name__ == "__main__":
    main()

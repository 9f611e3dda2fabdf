"""NCA speed and memory, measured side by side in one run.

    python benchmarks/nca_speed.py            # full run (about an hour on a busy 2-core machine)
    python benchmarks/nca_speed.py --quick    # minutes: smaller magic subset, fewer repeats

1. digits (1257 training points of a stratified 70 % split, centred), full rank D = d = 30
   (PCA) and D = d = 64 (all pixels): one objective + gradient evaluation against
   scikit-learn's `NeighborhoodComponentsAnalysis._loss_grad_lbfgs` (agreement printed) and
   metric-learn's; then L-BFGS from the same A_0 with the same settings (scipy's L-BFGS-B,
   `maxiter` 50, tol 1e-12) driving each objective, and the estimators' own fits: time to reach
   the lower of the final f(A)/N, read from each run's trace.
2. magic (70/30 split, z-scored, d = 5): full NCA (conjugate gradients, RCA start) gives the
   reference test accuracy; each fast variant's iterates are replayed on the test set to find
   the time at which it first comes within one point of that accuracy (1-NN and NCA rule).
3. Scaling: time and peak memory (tracemalloc) of one evaluation on magic subsets of N points
   up to the whole set (19 020), D = d = 10, against scikit-learn until it would need more than
   --max-gb (its peak grows as N^2, measured per pair at the smallest N).
4. Stochastic learning at MNIST's size (`--parts sl`): the generated `mnist_like(n)` scaled to
   [0, 1] and PCA to 100, N = 95 % of 6/7 of n fitting points (the NCA-SL job of
   config/mnist-sized.yaml; n = 70 000 gives 57 000): one step of 50 rows against all N (the
   own-shift path `nca_objective._rows`) against the class-sorted layout's row blocks
   (`_by_rows`, the path for N / 2 rows or more, which steps took before), and the train score
   `nca_objective.value` against the full objective (`objective`, f and gradient), agreement
   printed; at the fit's RCA start and after 100 steps (a sharper A: coefficients near the
   kernel's floor turn subnormal there, which the old path multiplied).

Timings are CPU seconds of this process (one BLAS thread), which other load on a shared machine
inflates far less than wall time; each is the best of several runs, ours and theirs in turns.
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


def cpu_best(fn, repeats: int) -> float:
    """Best CPU time of `repeats` consecutive calls (after one warm-up call), seconds."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def digits_data():
    """digits, stratified 70 % training part, centred: all 64 pixels and PCA to 30."""
    from sklearn.datasets import load_digits
    from sklearn.decomposition import PCA
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    train, _ = train_test_split(np.arange(digits.target.size), train_size=0.7,
                                stratify=digits.target, random_state=0)
    X, y = digits.data[train], digits.target[train]
    X = X - X.mean(axis=0)
    return {30: PCA(30).fit_transform(X), 64: X}, y


def lbfgs_trace(loss_grad, A0, max_iter: int):
    """scipy's L-BFGS-B on -f from A0; (CPU time, f) after every evaluation."""
    from scipy.optimize import minimize

    trace, start = [], time.process_time()

    def fun(a):
        f, g = loss_grad(a)
        trace.append((time.process_time() - start, f))
        return -f, -g

    minimize(fun, A0.ravel(), jac=True, method="L-BFGS-B", tol=1e-12,
             options={"maxiter": max_iter})
    return trace


def time_to(trace, target: float) -> float:
    return next(t for t, f in trace if f >= target)


def digits_part(repeats: int) -> None:
    from metric_learn import NCA as MLNCA
    from sklearn.neighbors import NeighborhoodComponentsAnalysis

    Xs, y = digits_data()
    n = y.size
    mask = y[:, None] == y[None, :]
    sk = NeighborhoodComponentsAnalysis()
    sk.n_iter_, sk.verbose = 1, 0
    ml = MLNCA()
    ml.n_iter_, ml.verbose = 1, 0
    print(f"\n[1] digits: N = {n} training points, full rank")
    for D, X in Xs.items():
        A0 = np.random.default_rng(0).standard_normal((D, D)) / np.sqrt(D)
        f, g = nca_objective.objective(A0, X, y)
        f_sk, g_sk = sk._loss_grad_lbfgs(A0.ravel(), X, mask, 1.0)
        print(f"  D = d = {D}: f(A0) = {f:.6f}; against scikit-learn: f {abs(f - f_sk) / f_sk:.1e}"
              f", gradient {np.abs(g.ravel() - g_sk).max() / np.abs(g_sk).max():.1e} relative")
        calls = {"dmlbench": lambda: nca_objective.objective(A0, X, y),
                 "scikit-learn": lambda: sk._loss_grad_lbfgs(A0.ravel(), X, mask, -1.0),
                 "metric-learn": lambda: ml._loss_grad_lbfgs(A0.ravel(), X, mask, -1.0)}
        best = {name: min(cpu_best(fn, repeats) for _ in range(3 if name != "metric-learn" else 1))
                for name, fn in calls.items()}
        print(f"    objective + gradient: dmlbench {best['dmlbench'] * 1e3:.1f} ms | scikit-learn "
              f"{best['scikit-learn'] * 1e3:.1f} ms ({best['scikit-learn'] / best['dmlbench']:.2f}x"
              f" ours) | metric-learn {best['metric-learn'] * 1e3:.1f} ms "
              f"({best['metric-learn'] / best['dmlbench']:.2f}x ours)")

        def ours(a):
            f, g = nca_objective.objective(a.reshape(D, D), X, y)
            return f / n, g.ravel() / n

        def theirs(a):
            f, g = sk._loss_grad_lbfgs(a, X, mask, 1.0)
            return f / n, g / n

        traces = {"dmlbench": lbfgs_trace(ours, A0, 50),
                  "scikit-learn": lbfgs_trace(theirs, A0, 50)}
        _report_fits("same L-BFGS-B driving each objective", traces)

        fits = {
            "dmlbench": make("nca", {"n_components": D, "optimizer": "lbfgs", "init": A0,
                                     "max_iter": 50, "tol": 1e-12}),
            "scikit-learn": NeighborhoodComponentsAnalysis(n_components=D, init=A0, max_iter=50,
                                                           tol=1e-12),
            "metric-learn": MLNCA(n_components=D, init=A0, max_iter=50, tol=1e-12),
        }
        traces = {}
        for name, est in fits.items():
            iterates = []
            if name == "scikit-learn":
                est.set_params(callback=lambda a, _: iterates.append(
                    (time.process_time() - start, a.copy())))
            start = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(X, y)
            elapsed = time.process_time() - start
            if name == "dmlbench":
                iterates = [(t, A) for t, A in est.history_]
            if not iterates:  # metric-learn: no trace, only the end point
                iterates = [(elapsed, est.components_)]
            traces[name] = [(t, nca_objective.objective(np.reshape(A, (-1, D)), X, y)[0] / n)
                            for t, A in iterates]
            traces[name][-1] = (elapsed, traces[name][-1][1])
        _report_fits("the estimators' fits (50 iterations at most)", traces)


def _report_fits(title: str, traces: dict) -> None:
    target = min(trace[-1][1] for trace in traces.values())
    reach = {name: time_to(trace, target) for name, trace in traces.items()}
    cells = ", ".join(f"{name} {trace[-1][0]:.2f} s to f/N = {trace[-1][1]:.6f}"
                      for name, trace in traces.items())
    ratios = ", ".join(f"{name} {reach[name]:.2f} s ({reach[name] / reach['dmlbench']:.2f}x ours)"
                       for name in traces)
    print(f"    L-BFGS, {title}: {cells}\n      time to f/N = {target:.6f}: {ratios}")


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


def _peak_mib(fn) -> float:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def scaling_part(quick: bool, max_gb: float) -> None:
    from sklearn.neighbors import NeighborhoodComponentsAnalysis

    ds = data.build("magic")
    X_all = (ds.X - ds.X.mean(axis=0)) / ds.X.std(axis=0)
    sizes = (2000, 4000, 8000) if quick else (2000, 4000, 8000, 12000, 16000, ds.y.size)
    print(f"\n[3] one objective + gradient evaluation on magic (z-scored, D = d = 10), N points "
          f"(a random subset; {ds.y.size} = the whole set); peak memory by tracemalloc")
    sk = NeighborhoodComponentsAnalysis()
    sk.n_iter_, sk.verbose = 1, 0
    A = np.random.default_rng(0).standard_normal((10, 10)) / np.sqrt(10)
    per_pair = None
    for n in sizes:
        pick = np.sort(np.random.default_rng(0).permutation(ds.y.size)[:n])
        X, y = X_all[pick], ds.y[pick]

        def ours():
            return nca_objective.objective(A, X, y)

        def theirs():
            return sk._loss_grad_lbfgs(A.ravel(), X, y[:, None] == y[None, :], -1.0)

        repeats = 3 if n <= 4000 else 1
        t_ours, m_ours = cpu_best(ours, repeats), _peak_mib(ours)
        line = f"  N = {n:5d}: dmlbench {t_ours:8.3f} s, {m_ours:6.1f} MiB | scikit-learn "
        need_gb = None if per_pair is None else per_pair * n * n / 2**30
        if need_gb is not None and need_gb > max_gb:
            print(line + f"skipped, needs {need_gb:.1f} GB (> {max_gb:g} GB)", flush=True)
            continue
        m_sk = _peak_mib(theirs)
        per_pair = per_pair or m_sk * 2**20 / n**2
        t_sk = cpu_best(theirs, repeats)
        print(line + f"{t_sk:8.3f} s, {m_sk:8.1f} MiB  ({t_sk / t_ours:.1f}x time, "
              f"{m_sk / m_ours:.0f}x memory)", flush=True)


def sl_part(quick: bool) -> None:
    from sklearn.decomposition import PCA

    from dmlbench.data.generators import mnist_like

    sizes = (10000,) if quick else (10000, 70000)
    print("\n[4] NCA stochastic learning on mnist_like(n) (/255, PCA 100, N fitting points): one "
          "step of 50 rows at the RCA start A_0 and after 100 steps; the train score f(A)")
    for n in sizes:
        raw = mnist_like(n)
        n_fit = int(round(0.95 * (n - n // 7)))
        X = PCA(100, random_state=0).fit_transform(raw.X[:n_fit] / 255.0)
        y = np.unique(raw.y[:n_fit], return_inverse=True)[1]
        sl = make("nca_sl", {"max_iter": 100, "validation_fraction": 0.0, "random_state": 0})
        sl.fit(X, y)
        rng = np.random.default_rng(0)
        batches = [rng.choice(n_fit, 50, replace=False) for _ in range(4)]
        for label, A in (("A_0", sl.init_components_), ("A_100", sl.components_)):
            state = {"i": 0}

            def rows_path():
                state["i"] += 1
                return nca_objective.objective(A, X, y, rows=batches[state["i"] % 4])

            def layout_path():
                state["i"] += 1
                rows = batches[state["i"] % 4]
                lay = nca_objective._Layout(nca_objective.project(A, X), y)
                f, T = nca_objective._by_rows(lay, np.sort(lay.rank[rows]),
                                              max(1, nca_objective.BLOCK_ENTRIES // n_fit))
                Y = lay.unsort(T[:, lay.d:] * lay.Z - T[:, :lay.d])
                return f, 2.0 * (Y.T @ X)

            f_new, g_new = nca_objective.objective(A, X, y, rows=batches[0])
            state["i"] = -1
            f_old, g_old = layout_path()
            t_new, t_old = cpu_best(rows_path, 5), cpu_best(layout_path, 5)
            print(f"  N = {n_fit:5d}, {label:5s}: step {t_new:.3f} s against {t_old:.3f} s "
                  f"({t_old / t_new:.1f}x); f within {abs(f_new - f_old) / abs(f_old):.1e}, "
                  f"gradient within {np.abs(g_new - g_old).max() / np.abs(g_old).max():.1e} of "
                  "its largest entry", flush=True)
        A = sl.components_
        t_value = cpu_best(lambda: nca_objective.value(A, X, y), 1)
        if n_fit > 20000:
            print(f"    train score at A_100: value {t_value:.1f} s (the full objective is not "
                  "run at this N)", flush=True)
            continue
        t_full = cpu_best(lambda: nca_objective.objective(A, X, y), 1)
        f_val, f_full = nca_objective.value(A, X, y), nca_objective.objective(A, X, y)[0]
        print(f"    train score at A_100: value {t_value:.1f} s against objective {t_full:.1f} s "
              f"({t_full / t_value:.1f}x); within {abs(f_val - f_full) / abs(f_full):.1e}",
              flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="minutes instead of an hour")
    parser.add_argument("--parts", default="digits,magic,scaling",
                        help="comma-separated subset of digits,magic,scaling,sl")
    parser.add_argument("--max-gb", type=float, default=8.0,
                        help="skip scikit-learn where its N x N arrays would need more memory")
    args = parser.parse_args(argv)
    parts = set(args.parts.split(","))
    print(f"nca_speed{' --quick' if args.quick else ''}: one BLAS thread")
    with threadpool_limits(1):
        if "digits" in parts:
            digits_part(3 if args.quick else 10)
        if "magic" in parts:
            magic_part(args.quick)
        if "scaling" in parts:
            scaling_part(args.quick, args.max_gb)
        if "sl" in parts:
            sl_part(args.quick)


if __name__ == "__main__":
    main()

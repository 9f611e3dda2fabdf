"""DML-eig convergence: the Frank-Wolfe gap against time for Algorithm 1 (Frank-Wolfe) and the
factored L-BFGS solver, measured side by side in one run.

    python benchmarks/dml_eig_speed.py            # four UCI sets x mu in {1e-4, 1e-3, 1e-2}
    python benchmarks/dml_eig_speed.py --quick    # ionosphere and wine, mu = 1e-3
    python benchmarks/dml_eig_speed.py --png out/dml_eig.png   # also plot the curves

Data as in config/repro/shigeto-2017.yaml: the 70 % training part of holdout split 0, centred
(wine z-scored); pairs and whitening as `DMLEig` builds them (3 similar pairs per point, every
dissimilar pair). For each set and mu it prints the time and the gap (relative to
max(|f_mu|, mu), the stopping rule) of: 200 Frank-Wolfe iterations (the former default),
Frank-Wolfe until tol = 1e-3 (at most 5000 iterations) and L-BFGS until tol = 1e-3 and 1e-6;
then the gap of both solvers at a few times (the curve). CPU seconds, one BLAS thread.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

from dmlbench import data
from dmlbench.methods.dml_eig import (
    dissimilar_pairs,
    inverse_sqrt,
    pair_scatter,
    similar_pairs,
    solve_dml_eig,
)
from dmlbench.run import preprocessing, protocols


def problem(name: str):
    ds = data.build(name)
    split = protocols.make_splits(ds.y, {"kind": "holdout", "repeats": 1, "train_fraction": 0.7},
                                  seed=0)[0]
    steps = ["zscore"] if name == "wine" else ["center"]
    X, _, _ = preprocessing.fit_transform(steps, ds.X[split.train], ds.X[split.test])
    y = ds.y[split.train]
    whiten, _ = inverse_sqrt(pair_scatter(X, similar_pairs(X, y, 3)))
    return X @ whiten, dissimilar_pairs(X, y, "all")


def relative_gaps(sol, mu):
    return np.array(sol.gaps) / np.maximum(np.abs(sol.objective), mu)


def cell(sol, mu) -> str:
    return (f"{sol.times[-1]:7.3f} s {len(sol.objective) - 1:5d} it gap "
            f"{relative_gaps(sol, mu)[-1]:.1e}")


def curve(sol, mu, at):
    """Relative gap of the last iterate reached by each time in `at` (nan before the first)."""
    times, gaps = np.array(sol.times), relative_gaps(sol, mu)
    index = np.searchsorted(times, at, side="right") - 1
    return np.where(index >= 0, gaps[np.maximum(index, 0)], np.nan)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--png", help="save the gap-against-time curves to this file")
    args = parser.parse_args(argv)
    sets = ("ionosphere", "wine") if args.quick else ("ionosphere", "balance-scale", "iris",
                                                       "wine")
    mus = (1e-3,) if args.quick else (1e-4, 1e-3, 1e-2)
    curves = {}
    print("dml_eig_speed: CPU seconds, one BLAS thread; gap relative to max(|f_mu|, mu)")
    with threadpool_limits(1):
        for name in sets:
            Xw, dis = problem(name)
            print(f"\n{name}: n = {Xw.shape[0]}, d = {Xw.shape[1]}, |D| = {len(dis)}")
            for mu in mus:
                runs = {label: solve_dml_eig(Xw, dis, mu, max_iter, tol, solver,
                                             clock=time.process_time)
                        for label, max_iter, tol, solver in (
                            ("FW 200", 200, 0.0, "frank_wolfe"),
                            ("FW to 1e-3", 5000, 1e-3, "frank_wolfe"),
                            ("L-BFGS to 1e-3", 5000, 1e-3, "lbfgs"),
                            ("L-BFGS to 1e-6", 5000, 1e-6, "lbfgs"))}
                print(f"  mu = {mu:g}")
                for label, sol in runs.items():
                    print(f"    {label:15s} {cell(sol, mu)}  f_mu = {sol.objective[-1]:.8g}")
                base = runs["FW 200"].times[-1]
                print(f"    L-BFGS to 1e-3 takes {runs['L-BFGS to 1e-3'].times[-1] / base:.2f}x "
                      f"the time of 200 Frank-Wolfe iterations")
                curves[name, mu] = (runs["FW to 1e-3"], runs["L-BFGS to 1e-6"])
    print("\ngap against time (relative gap of the latest iterate at each time)")
    at = np.array([0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0])
    print(f"  {'':24s}" + "".join(f"{t:>9g}s" for t in at))
    for (name, mu), (fw, lb) in curves.items():
        for label, sol in (("FW", fw), ("L-BFGS", lb)):
            row = "".join(f"{g:10.1e}" for g in curve(sol, mu, at))
            print(f"  {name:13s} {mu:<6g} {label:6s}{row}")
    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, len(curves), figsize=(3.2 * len(curves), 3), squeeze=False)
        for ax, ((name, mu), (fw, lb)) in zip(axes[0], curves.items()):
            for label, sol in (("Frank-Wolfe", fw), ("L-BFGS", lb)):
                ax.loglog(np.maximum(sol.times, 1e-4), relative_gaps(sol, mu), label=label)
            ax.set_title(f"{name}, mu = {mu:g}", fontsize=8)
            ax.set_xlabel("CPU s")
        axes[0][0].set_ylabel("gap / max(|f_mu|, mu)")
        axes[0][0].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(args.png, dpi=120)
        print(f"\ncurves saved to {args.png}")


if __name__ == "__main__":
    main()

"""Where an RMVEM job's time goes beyond an RMLE job's: the MVCE solves against the rest.

One fold of the abou-moustafa-2017 protocol (10-fold, seed 0) of a data set; RMLE and RMVEM
with their defaults (literal form, m over d+1..3d) on the estimator path of a job: fit (the
leave-one-out selection of m over every training point), the test part's neighbour lists for
k = 1, 3, 5 and the training set's leave-one-out lists. Printed per method: its CPU seconds
(one BLAS thread), the CPU seconds spent inside `mvce.solve`, the neighbourhoods solved and
their mean Newton steps.

    python benchmarks/local_solver_share.py                  # satimage, fold 0
    python benchmarks/local_solver_share.py segment --fold 3
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from dmlbench.data import cache
from dmlbench.methods.local import RMLE, RMVEM, metrics
from dmlbench.run import protocols

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", nargs="?", default="satimage")
    parser.add_argument("--fold", type=int, default=0)
    parser.add_argument("--cache", default=str(ROOT / "resources"), help="data cache directory")
    args = parser.parse_args(argv)
    ds = cache.ensure(args.dataset, args.cache, offline=True)
    X, y = np.asarray(ds.X, dtype=float), ds.y
    split = protocols.make_splits(y, {"kind": "kfold", "folds": 10}, 0,
                                  dataset=args.dataset)[args.fold]
    X_train, y_train, X_test = X[split.train], y[split.train], X[split.test]
    print(f"{args.dataset}: {X_train.shape[0]} training points, d = {X.shape[1]}, fold "
          f"{args.fold}; CPU seconds, one BLAS thread")
    spent = {"s": 0.0, "n": 0, "steps": 0}
    solve = metrics.mvce.solve

    def timed(*a, **kw):
        start = time.process_time()
        res = solve(*a, **kw)
        spent["s"] += time.process_time() - start
        spent["n"] += res.weights.shape[0]
        spent["steps"] += int(np.sum(res.n_iter))
        return res

    metrics.mvce.solve = timed
    with threadpool_limits(1):
        RMVEM().fit(X_train[:200], y_train[:200])  # loads numba and the compiled kernel
        for label, est in (("rmle", RMLE()), ("rmvem", RMVEM())):
            spent.update(s=0.0, n=0, steps=0)
            start = time.process_time()
            est.fit(X_train, y_train)
            est.kneighbors_per_k(X_test, [1, 3, 5], 10)
            est.train_kneighbors(10)
            total = time.process_time() - start
            print(f"  {label:5s} {total:7.2f} s; MVCE solves {spent['s']:6.2f} s "
                  f"({spent['n']} neighbourhoods, {spent['steps'] / max(spent['n'], 1):.2f} "
                  f"Newton steps each); the rest {total - spent['s']:6.2f} s; m chosen "
                  f"{sorted(set(m for m, _ in est.selected_.values()))}", flush=True)


if __name__ == "__main__":
    main()

"""Speed of the local metrics' model selection and jobs, this tree against an earlier commit, in
one run (each measurement in its own process, one BLAS thread, CPU time, after an untimed small
fit that loads numba's kernels).

1. Selection phase: `fit` of rmvem and rmle with their defaults (m over d+1..3d, 12 values,
   every training point a leave-one-out query; fit is the neighbour lists plus the selection)
   on the first fold of the abou-moustafa-2017 protocol (10-fold, seed 0) of segment and
   satimage: before (`--before`, default cf35ec0: Titterington at tol 1e-3) / after.
2. Jobs: rmle and rmvem on every fold of wdbc and segment with that protocol (fit, then the
   test part's neighbour lists for k = 1, 3, 5 and hubness at 10, and the training set's
   leave-one-out lists for its hubness, as `dmlbench run` does with the default
   `train_hubness: true`):
   the ratio RMVEM / RMLE, after and before. Also the m chosen per k, to show what changed.

    python benchmarks/local_speed.py            # everything (before: an hour or more)
    python benchmarks/local_speed.py --quick    # segment selection, 2 folds of each job

The earlier commit is exported with `git archive` into a temporary directory and imported from
there (the data cache, `--cache`, is shared; embedded data sets are built into it if missing).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def worker(task: dict) -> dict:
    """Runs inside the measured tree: one selection or one job; times in CPU seconds."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    from dmlbench import data
    from dmlbench.measure.evaluation import evaluate
    from dmlbench.methods import make
    from dmlbench.run import protocols

    ds = data.ensure(task["dataset"], task["cache"])
    X, y = ds.X.astype(float), ds.y
    splits = protocols.make_splits(y, {"kind": "kfold", "folds": 10}, seed=0)[:task["folds"]]
    out = {"fit_s": 0.0, "total_s": 0.0, "chosen": []}
    with threadpool_limits(1):
        # untimed: the first selection of a process imports numba and loads its compiled
        # kernels (about 0.3 s; compiles them, about 8 s, if `make install` has not); a random
        # subset, so that it holds several classes whatever the order of the rows
        d = X.shape[1]
        few = np.random.default_rng(0).permutation(len(y))[:4 * d + 4]
        make(task["method"], {"m_grid": [d + 1, d + 2]}).fit(X[few], y[few])
        for split in splits:
            start = time.process_time()
            est = make(task["method"], {}).fit(X[split.train], y[split.train])
            fitted = time.process_time()
            if task["evaluate"]:
                evaluate(est, X[split.test], y[split.train], y[split.test], [1, 3, 5], 10, {},
                         train_hubness=True)
            out["fit_s"] += fitted - start
            out["total_s"] += time.process_time() - start
            info = est.fit_info()
            out["chosen"].append([int(info.get(f"m_k{k}", 0)) for k in (1, 3, 5)])
            out["solver"] = info.get("mvce_solver", "titterington" if "mvce_iterations_mean"
                                     in info else "-")
    return out


def run(tree: Path, task: dict) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-W", "ignore", __file__, "--worker", json.dumps(task)],
                          env=env, capture_output=True, text=True, cwd=tree)
    if proc.returncode:
        raise RuntimeError(f"{task} failed in {tree}:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def export(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "src"], check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="segment only, 2 folds per job")
    p.add_argument("--before", default="cf35ec0", help="the earlier commit (default cf35ec0)")
    p.add_argument("--cache", default=str(ROOT / "resources"), help="data cache directory")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"after": ROOT, "before": export(args.before, Path(tmp))}
        print(f"before: {args.before}; after: this tree. CPU seconds, one BLAS thread.")
        print("\n1. Selection phase (fit, first fold, all training points as queries)")
        print(f"{'data set':>10} {'method':>6} {'before':>9} {'after':>8} {'ratio':>6}  "
              "chosen m (k = 1, 3, 5) before / after")
        for name in (["segment"] if args.quick else ["segment", "satimage"]):
            for method in ("rmle", "rmvem"):
                task = {"dataset": name, "method": method, "folds": 1, "evaluate": False,
                        "cache": args.cache}
                res = {k: run(tree, task) for k, tree in trees.items()}
                print(f"{name:>10} {method:>6} {res['before']['fit_s']:>9.1f} "
                      f"{res['after']['fit_s']:>8.1f} "
                      f"{res['before']['fit_s'] / res['after']['fit_s']:>6.1f}  "
                      f"{res['before']['chosen'][0]} / {res['after']['chosen'][0]}", flush=True)
        folds = 2 if args.quick else 10
        print(f"\n2. Jobs: {folds} folds of abou-moustafa-2017's protocol, fit + evaluate")
        print(f"{'data set':>10} {'tree':>7} {'rmle':>8} {'rmvem':>8} {'ratio':>6}  solver; "
              "folds whose chosen m differ from before (rmle, rmvem)")
        for name in ("wdbc", "segment"):
            res = {}
            for label, tree in trees.items():
                res[label] = {method: run(tree, {"dataset": name, "method": method,
                                                 "folds": folds, "evaluate": True,
                                                 "cache": args.cache})
                              for method in ("rmle", "rmvem")}
            for label in ("after", "before"):
                r = res[label]
                differ = [sum(a != b for a, b in zip(r[mth]["chosen"], res["before"][mth]["chosen"]))
                          for mth in ("rmle", "rmvem")]
                print(f"{name:>10} {label:>7} {r['rmle']['total_s']:>8.1f} "
                      f"{r['rmvem']['total_s']:>8.1f} "
                      f"{r['rmvem']['total_s'] / r['rmle']['total_s']:>6.1f}  "
                      f"{r['rmvem'].get('solver', '-')}; {differ if label == 'after' else ''}",
                      flush=True)
            chosen = [(a, b) for a, b in zip(res["before"]["rmvem"]["chosen"],
                                             res["after"]["rmvem"]["chosen"]) if a != b]
            if chosen:
                print(f"{'':>10} rmvem chosen m (k = 1, 3, 5) before -> after where they differ: "
                      + ", ".join(f"{a} -> {b}" for a, b in chosen))


if __name__ == "__main__":
    main()

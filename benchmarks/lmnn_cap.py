"""LMNN's active set with and without `max_impostors` on shuttle (Statlog's shuttle.trn /
shuttle.tst, the four classes under 200 points left out, min-max scaled on the training part, as
config/at-scale.yaml runs it): fit CPU seconds, peak resident memory, 1-NN test accuracy and the
active set's figures, one fit per process with one BLAS thread, the uncapped form (the
reference, Weinberger & Saul's exact active set) and the capped one on the same training points.

    python benchmarks/lmnn_cap.py --cache resources/datasets --mirror MIRROR   # n = 4000
    python benchmarks/lmnn_cap.py --cache ... --mirror ... --sizes 43314 --forms capped

At the whole training part the uncapped form holds about 3.4e8 candidate pairs and takes about
2.5 h (docs/performance.md); `--cap-cpu` (default 1 800 s, the at-scale budget) ends a fit
that runs longer, reported as over with the CPU time and peak memory it had used.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

THREADS = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                  "NUMBA_NUM_THREADS")}
DROP_BELOW = 200


def shuttle(cache: str, mirror: str | None):
    """Training and test parts of shuttle (its given split), the small classes left out,
    min-max scaled on the training part."""
    from sklearn.preprocessing import MinMaxScaler

    from dmlbench import data

    ds = data.ensure("shuttle", cache, mirror=mirror, offline=mirror is not None)
    split = ds.given_split
    counts = np.bincount(ds.y)
    keep = counts[ds.y] >= DROP_BELOW
    train = np.intersect1d(split["train"], np.flatnonzero(keep))
    test = np.intersect1d(split["test"], np.flatnonzero(keep))
    scaler = MinMaxScaler().fit(ds.X[train])
    return scaler.transform(ds.X[train]), ds.y[train], scaler.transform(ds.X[test]), ds.y[test]


def child(args) -> None:
    """One fit: prints its figures as one JSON line."""
    from sklearn.neighbors import KNeighborsClassifier

    from dmlbench.methods import make

    X, y, X_test, y_test = shuttle(args.cache, args.mirror)
    if args.n < len(y):
        rng = np.random.default_rng(0)
        chosen = np.sort(rng.choice(len(y), args.n, replace=False))
        X, y = X[chosen], y[chosen]
    params = {"impostors": "active_set", "random_state": 0}
    if args.cap:
        params.update(max_impostors=args.cap, resample_after=args.resample_after)
    est = make("lmnn", params)
    resource.setrlimit(resource.RLIMIT_CPU, (args.cap_cpu, args.cap_cpu + 5))
    start = time.process_time()
    est.fit(X, y)
    seconds = time.process_time() - start
    knn = KNeighborsClassifier(1).fit(est.transform(X), y)
    accuracy = float(np.mean(knn.predict(est.transform(X_test)) == y_test))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"n": len(y), "cap": args.cap, "fit_cpu_s": round(seconds, 1),
                      "peak_mb": round(peak), "accuracy": round(accuracy, 5),
                      "n_iter": est.n_iter_, **est.fit_info()}))


def run_child(cmd: list[str]):
    """Run one fit's process; returns its exit code (negative: the signal), output, error
    output and resource usage (`os.wait4`: its own CPU time and peak memory, also when the CPU
    limit ended it)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        child = subprocess.Popen(cmd, stdout=out, stderr=err, text=True,
                                 env={**os.environ, **THREADS})
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return child.returncode, out.read(), err.read(), usage


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cache", required=True, help="the data sets' cache folder")
    p.add_argument("--mirror", help="an offline mirror of the downloads")
    p.add_argument("--sizes", default="4000", help="training sizes, comma-separated")
    p.add_argument("--cap", type=int, default=500_000, help="max_impostors of the capped fit")
    p.add_argument("--resample-after", type=int, default=15,
                   help="resample_after of the capped fit (accepted steps a sample is kept)")
    p.add_argument("--cap-cpu", type=int, default=1800, help="CPU seconds per fit")
    p.add_argument("--forms", default="uncapped,capped",
                   help="which fits: uncapped, capped or both (comma-separated)")
    p.add_argument("--n", type=int, help=argparse.SUPPRESS)  # the child's size
    args = p.parse_args()
    if args.n is not None:
        child(args)
        return
    print(f"{'n':>6} {'max_impostors':>13} {'fit CPU s':>9} {'peak MB':>7} {'1-NN acc':>8} "
          f"{'iters':>5} {'refreshes':>9} {'candidates':>11} {'sample':>8}")
    for n in (int(s) for s in args.sizes.split(",")):
        forms = args.forms.split(",")
        for cap in [0] * ("uncapped" in forms) + [args.cap] * ("capped" in forms):
            cmd = [sys.executable, __file__, "--cache", args.cache, "--n", str(n), "--cap",
                   str(cap), "--cap-cpu", str(args.cap_cpu), "--resample-after",
                   str(args.resample_after)]
            if args.mirror:
                cmd += ["--mirror", args.mirror]
            returncode, stdout, stderr, usage = run_child(cmd)
            if returncode != 0:
                if returncode in (-24, -9):  # SIGXCPU, SIGKILL: the CPU limit
                    cpu = usage.ru_utime + usage.ru_stime
                    why = (f"over: {cpu:.0f} process CPU s (limit {args.cap_cpu}), "
                           f"peak {usage.ru_maxrss / 1024:.0f} MB")
                else:
                    why = stderr[-300:]
                print(f"{n:>6} {cap or 'none':>13} {why}", flush=True)
                continue
            r = json.loads(stdout.splitlines()[-1])
            print(f"{r['n']:>6} {cap or 'none':>13} {r['fit_cpu_s']:>9} {r['peak_mb']:>7} "
                  f"{r['accuracy']:>8.4f} {r['n_iter']:>5} {r['impostor_refreshes']:>9} "
                  f"{r['impostor_candidates_max']:>11} {r.get('impostor_sample_max', '-'):>8}",
                  flush=True)


if __name__ == "__main__":
    main()

"""Fit CPU seconds and peak memory of every registered method as the training set grows to
60 000 points (issue 47: each method fits 60 000 x 50 training points in 10 classes within 30 CPU
minutes and 8 GB on one core), today's default form beside its large-data form, in one run.

    python benchmarks/scale.py                               # n = 1000, 4000, 16000, 60000
    python benchmarks/scale.py --sizes 1000,4000             # while developing
    python benchmarks/scale.py --methods lmnn,boostmdm_g --forms large

Data: `dmlbench.data.generators.mnist_like(n + 1000)` (10 balanced classes, 784 integer pixels),
scaled to [0, 1] and reduced to 50 principal components fitted on the n training points, as
`config/mnist-sized.yaml` preprocesses it; the last 1000 points are the test part (a draw of
its own at each n, seed 0). Each fit runs in a fresh
process with one BLAS/OpenMP thread: fit CPU seconds (`time.process_time` around `fit`), the
process's peak resident memory (the kernel's VmHWM, the interpreter and data included) and the
1-NN test accuracy (not timed).

Forms: `today` is the method's default parameters; `large` the large-data form its own literature
gives (`LARGE`; docs/methods.md, "Large data"), run only where it differs from today's. A fit
that exceeds its CPU cap (`--cap-large`, the budget, for a large-data form and for a method's
only form; `--cap-today` for today's form beside a large-data one; the kernel's RLIMIT_CPU ends
it) or the memory cap (`--cap-mb`, watched every 0.2 s) is reported as over; a fit the last two
measured sizes predict (a power law in n through them, exponent at least 1) to exceed a cap is
skipped with the prediction ("skipped: would take ~X").
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SIZES = (1000, 4000, 16000, 60000)
N_TEST, N_COMPONENTS = 1000, 50
#: the large-data form of each method whose default does not scale (docs/methods.md)
LARGE: dict[str, dict] = {
    "lmnn": {"impostors": "active_set"},
    "dml_eig": {"dissimilar": 20},
    "boostmdm_g": {"set_size": 50},
    "gi_relief": {"set_size": 50},
    "rmvem": {"max_selection_queries": 2000, "grid_size": 4},
    "rmle": {"max_selection_queries": 2000, "grid_size": 4},
    "minivenn": {"max_selection_queries": 2000, "grid_size": 4},
    "lfda": {"affinity_neighbors": 20},
    "itml": {"bound_pairs": 100000},
}
THREADS = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                  "NUMBA_NUM_THREADS")}
MiB = 2**20

#: runs in the child: fit one method on one cached data set, print a JSON line of what it measured
_CHILD = r"""
import json, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
from dmlbench.methods import make
from dmlbench.measure.evaluation import test_accuracies
path, name, params = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
data = np.load(path)
est = make(name, params)
base = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) / 1024
start = time.process_time()
est.fit(data["X_train"], data["y_train"])
cpu = time.process_time() - start
peak = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) / 1024
acc = test_accuracies(est, data["X_test"], data["y_train"], data["y_test"], [1], 1)[1]
info = est.fit_info()
print(json.dumps({"cpu": cpu, "peak": peak, "base": base, "acc": acc,
                  "form": info.get("scale_form")}))
"""


def prepare(n: int, directory: Path) -> Path:
    """mnist_like(n + N_TEST), minmax to [0, 1], PCA 50 fitted on the n training points."""
    from sklearn.decomposition import PCA

    from dmlbench.data.generators import mnist_like

    raw = mnist_like(n + N_TEST)
    X = raw.X / 255.0
    y = np.unique(raw.y, return_inverse=True)[1]
    pca = PCA(N_COMPONENTS, svd_solver="full", random_state=0).fit(X[:n])
    path = directory / f"n{n}.npz"
    np.savez(path, X_train=pca.transform(X[:n]), y_train=y[:n], X_test=pca.transform(X[n:]),
             y_test=y[n:])
    return path


def run(path: Path, name: str, params: dict, cap_s: float, cap_mb: float) -> dict:
    """One fit in a fresh process: {'cpu', 'peak', 'base' (the peak before the fit), 'acc',
    'form'} or {'over': reason}."""
    def limit_cpu():
        margin = 30  # imports and loading the data count too
        resource.setrlimit(resource.RLIMIT_CPU, (int(cap_s) + margin, int(cap_s) + margin + 5))

    proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(path), name, json.dumps(params)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **THREADS}, preexec_fn=limit_cpu)
    peak_rss = 0.0
    while proc.poll() is None:
        try:
            status = Path(f"/proc/{proc.pid}/status").read_text()
            peak_rss = max(peak_rss, int(status.split("VmRSS:")[1].split()[0]) / 1024)
        except (OSError, IndexError):
            pass
        if peak_rss > cap_mb:
            proc.kill()
            proc.wait()
            return {"over": f"over {cap_mb:.0f} MB"}
        time.sleep(0.2)
    out, err = proc.communicate()
    if proc.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        return {"over": f"over {cap_s:.0f} CPU s"}
    if proc.returncode != 0:
        lines = err.strip().splitlines() or ["(no message)"]
        return {"over": f"failed: {lines[-1][:120]}"}
    return json.loads(out.strip().splitlines()[-1])


def predicted(history: list[tuple[int, float]], n: int) -> float | None:
    """A power law through the last two (size, value) measurements, exponent at least 1,
    evaluated at n (None with fewer than one measurement; linear from one)."""
    if not history:
        return None
    if len(history) == 1:
        (n0, v0), = history
        return v0 * n / n0
    (n0, v0), (n1, v1) = history[-2:]
    slope = max(1.0, np.log(max(v1, 1e-3) / max(v0, 1e-3)) / np.log(n1 / n0))
    return v1 * (n / n1) ** slope


def human(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else (
        f"{seconds / 60:.0f} min" if seconds >= 120 else f"{seconds:.0f} s")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--methods", help="comma-separated registry names (default: all)")
    parser.add_argument("--forms", default="today,large", help="today, large or both")
    parser.add_argument("--cap-today", type=float, default=600.0,
                        help="CPU seconds a fit of today's form may take where the method has "
                        "a large-data form (default 600)")
    parser.add_argument("--cap-large", type=float, default=1800.0,
                        help="CPU seconds a fit of the large-data form, or of a method's only "
                        "form, may take (default 1800: the budget)")
    parser.add_argument("--cap-mb", type=float, default=8192.0, help="peak MiB (default 8192)")
    args = parser.parse_args(argv)
    from dmlbench.methods import REGISTRY

    sizes = [int(s) for s in args.sizes.split(",")]
    names = args.methods.split(",") if args.methods else list(REGISTRY)
    unknown = sorted(set(names) - set(REGISTRY))
    if unknown:
        parser.error(f"unknown method(s) {unknown}")
    forms = args.forms.split(",")
    jobs = [(name, form) for name in names for form in forms
            if form == "today" or name in LARGE]
    print(f"scale: mnist_like + minmax + PCA {N_COMPONENTS}, 10 classes, {N_TEST} test points; "
          f"one thread; caps: today's form beside a large one {human(args.cap_today)}, "
          f"others {human(args.cap_large)}, "
          f"{args.cap_mb:.0f} MiB", flush=True)
    print(f"{'method':<13} {'form':<6} {'n':>6} {'fit CPU s':>10} {'peak MiB':>9} "
          f"{'acc 1-NN':>8}  form run / note", flush=True)
    history: dict = {job: {"cpu": [], "fit_mb": [], "base": 0.0} for job in jobs}
    with tempfile.TemporaryDirectory(prefix="dmlbench-scale-") as tmp:
        for n in sizes:
            path = prepare(n, Path(tmp))
            for name, form in jobs:
                params = LARGE[name] if form == "large" else {}
                # today's form is held to the budget where it is the only form
                cap = args.cap_today if form == "today" and name in LARGE else args.cap_large
                seen = history[(name, form)]
                cpu_guess = predicted(seen["cpu"], n)
                mb_guess = predicted(seen["fit_mb"], n)  # above the interpreter and data
                mb_guess = None if mb_guess is None else mb_guess + seen["base"]
                if seen.get("over"):
                    note = f"skipped: {seen['over']} at a smaller n"
                elif cpu_guess is not None and cpu_guess > cap:
                    note = f"skipped: would take ~{human(cpu_guess)}"
                elif mb_guess is not None and mb_guess > args.cap_mb:
                    note = f"skipped: would need ~{mb_guess / 1024:.0f} GiB"
                else:
                    note = None
                if note is None:
                    got = run(path, name, params, cap, args.cap_mb)
                    if "over" in got:
                        seen["over"] = got["over"]
                        note = got["over"]
                if note is not None:
                    print(f"{name:<13} {form:<6} {n:>6} {'-':>10} {'-':>9} {'-':>8}  {note}",
                          flush=True)
                    continue
                seen["cpu"].append((n, got["cpu"]))
                seen["fit_mb"].append((n, got["peak"] - got["base"]))
                seen["base"] = got["base"]
                print(f"{name:<13} {form:<6} {n:>6} {got['cpu']:>10.1f} {got['peak']:>9.0f} "
                      f"{got['acc']:>8.3f}  {got['form'] or ''}", flush=True)


if __name__ == "__main__":
    main()

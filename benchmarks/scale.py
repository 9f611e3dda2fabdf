"""Fit CPU seconds and peak memory of every registered method as the training set grows to
60 000 points (issue 47: each method fits 60 000 x 50 training points in 10 classes within 30 CPU
minutes and 8 GB on one core), today's default form beside its large-data form, in one run.

    python benchmarks/scale.py                               # n = 1000, 4000, 16000, 60000
    python benchmarks/scale.py --sizes 1000,4000             # while developing
    python benchmarks/scale.py --methods lmnn,boostmdm_g --forms large
    python benchmarks/scale.py --forms scalable --sizes 1000,4000,16000 --predict 60000

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
only form; `--cap-today` for today's form beside a large-data one; the kernel's RLIMIT_CPU,
set by the child just before `fit`, ends it) or the memory cap (`--cap-mb`, watched every 0.2 s)
is reported as over; a fit the last two measured sizes predict (a power law in n through them,
exponent at least 1) to exceed a cap is skipped with the prediction ("skipped: would take ~X").
The caps hold the fit alone: the accuracy that follows gets a CPU cap of its own (the same
seconds) and, if it runs over, the fit's figures stand with the accuracy shown as "-".
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

#: runs in the child: fit one method on one cached data set under a CPU limit of cap seconds,
#: print a JSON line of the fit, then (under a fresh limit) a JSON line of the 1-NN accuracy
_CHILD = r"""
import json, resource, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
from dmlbench.methods import make
from dmlbench.measure.evaluation import test_accuracies
path, name, params, cap = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), float(sys.argv[4])

def limit_cpu(seconds):
    # RLIMIT_CPU counts the process's CPU time since it started, as process_time does
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    resource.setrlimit(resource.RLIMIT_CPU, (int(time.process_time() + seconds) + 1, hard))

def vm_hwm():
    return int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) / 1024

data = np.load(path)
est = make(name, params)
base = vm_hwm()
limit_cpu(cap)
start = time.process_time()
est.fit(data["X_train"], data["y_train"])
cpu = time.process_time() - start
peak = vm_hwm()
print("scale-fit", json.dumps({"cpu": cpu, "peak": peak, "base": base,
                               "form": est.fit_info().get("scale_form")}), flush=True)
limit_cpu(cap)
acc = test_accuracies(est, data["X_test"], data["y_train"], data["y_test"], [1], 1)[1]
print("scale-acc", json.dumps({"acc": acc}), flush=True)
"""
#: CPU seconds the child may spend outside the fit and the accuracy (imports, loading the data)
CHILD_OVERHEAD_S = 60


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
    """One fit in a fresh process: {'cpu', 'peak', 'base' (the peak before the fit), 'acc'
    (None if the accuracy ran over), 'form', 'note'} or, if the fit ran over or failed,
    {'over': reason}."""
    def backstop():
        # the child's own soft limits end the fit and the accuracy; the hard limit (SIGKILL)
        # only a process that survives SIGXCPU; no core files
        hard = int(2 * cap_s) + CHILD_OVERHEAD_S + 10
        resource.setrlimit(resource.RLIMIT_CPU, (hard, hard))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        # files, not pipes: a chatty child never blocks on a full pipe while we poll
        proc = subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(path), name, json.dumps(params), str(cap_s)],
            stdout=out, stderr=err, text=True, env={**os.environ, **THREADS},
            preexec_fn=backstop)
        peak_rss, killed = 0.0, False
        while proc.poll() is None:
            try:
                status = Path(f"/proc/{proc.pid}/status").read_text()
                peak_rss = max(peak_rss, int(status.split("VmRSS:")[1].split()[0]) / 1024)
            except (OSError, IndexError):
                pass
            if peak_rss > cap_mb:
                proc.kill()
                proc.wait()
                killed = True
                break
            time.sleep(0.2)
        out.seek(0)
        err.seek(0)
        lines = [json.loads(line.split(" ", 1)[1]) for line in out.read().splitlines()
                 if line.startswith(("scale-fit ", "scale-acc "))]
        message = (err.read().strip().splitlines() or ["(no message)"])[-1][:120]
    if killed:
        reason = f"over {cap_mb:.0f} MB"
    elif proc.returncode == -signal.SIGXCPU:
        reason = f"over {cap_s:.0f} CPU s"
    elif proc.returncode == -signal.SIGKILL:
        reason = "killed (SIGKILL: out of memory, or the hard CPU limit)"
    elif proc.returncode != 0:
        reason = f"failed: {message}"
    else:
        reason = None
    if not lines:
        return {"over": reason or "failed: (no output)"}
    fit = lines[0]
    if reason is None:
        return {**fit, "acc": lines[1]["acc"], "note": None}
    return {**fit, "acc": None, "note": f"accuracy not measured: {reason}"}


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
    parser.add_argument("--forms", default="today,large",
                        help="today, large, both (today,large), or scalable: the large-data "
                        "form where a method has one, else today's")
    parser.add_argument("--predict", type=int, default=None, metavar="N",
                        help="after the run, each job's fit CPU seconds and peak MiB at N "
                        "training points as the last two measured sizes predict them (a "
                        "power law, exponent at least 1), marked as predicted")
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
    if args.forms == "scalable":
        jobs = [(name, "large" if name in LARGE else "today") for name in names]
    else:
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
                acc = "-" if got["acc"] is None else f"{got['acc']:.3f}"
                note = "; ".join(filter(None, (got["form"], got["note"])))
                print(f"{name:<13} {form:<6} {n:>6} {got['cpu']:>10.1f} {got['peak']:>9.0f} "
                      f"{acc:>8}  {note}", flush=True)
    if args.predict is not None:
        print(f"\npredicted at n = {args.predict} from the last two measured sizes (not run):",
              flush=True)
        for (name, form), seen in history.items():
            cpu = predicted(seen["cpu"], args.predict)
            mb = predicted(seen["fit_mb"], args.predict)
            if cpu is None or mb is None:
                print(f"{name:<13} {form:<6} {'-':>6}  {seen.get('over') or 'nothing measured'}")
                continue
            print(f"{name:<13} {form:<6} {args.predict:>6} {cpu:>10.0f} "
                  f"{mb + seen['base']:>9.0f}  predicted ({human(cpu)})", flush=True)


if __name__ == "__main__":
    main()

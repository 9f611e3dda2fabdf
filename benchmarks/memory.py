"""Peak memory of one benchmark job on MNIST-sized data (60000 training + 10000 test points,
784 features, z-score then PCA to 120), measured on the real job path (`dmlbench run`).

The data are synthetic and MNIST-shaped (10 classes, integer pixel values 0..255 from a
low-rank class model plus noise; MNIST itself arrives with the data-set registry). Each method
runs in a fresh process; we report the whole process's peak resident memory (the kernel's
VmHWM, including the interpreter, imports and loading the cached data set), the job's
own per-split figures from its record (`peak_rss_mb`, `peak_rss_delta_mb`), and compare them
against the raw data size and against the memory the workflow reserves for such a job
(`dmlbench.run.resources.job_mem_mb`, the stated budget).

    python benchmarks/memory.py            # full size (a few minutes on 2 cores)
    python benchmarks/memory.py --quick    # 14000 x 784 (12000 + 2000), seconds
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from dmlbench import config, data, records
from dmlbench.data.embedded import RawData
from dmlbench.run import plan, protocols, resources

MiB = 2**20


def mnist_like(n: int, d: int = 784, n_classes: int = 10, rank: int = 40, seed: int = 0):
    """n images of d 'pixels' in 0..255: class means and within-class variation in a random
    rank-`rank` subspace, plus pixel noise; built in chunks of rows."""
    rng = np.random.default_rng(seed)
    basis = rng.normal(size=(rank, d)) / np.sqrt(rank)
    centres = rng.normal(scale=0.6, size=(n_classes, rank))
    y = np.arange(n) % n_classes
    rng.shuffle(y)
    X = np.empty((n, d))
    for start in range(0, n, 5000):
        rows = slice(start, start + 5000)
        latent = centres[y[rows]] + rng.normal(size=(len(y[rows]), rank))
        X[rows] = np.clip(np.rint(60 * latent @ basis + 100 + rng.normal(scale=20, size=(len(y[rows]), d))),
                          0, 255)
    return X, y


def prepare(cache: Path, n_train: int, n_test: int) -> tuple[dict, int, int]:
    """Cache the synthetic data set and its split; return (config, n, d)."""
    X, y = mnist_like(n_train + n_test)
    Xv, yv, meta = data.cache.validate("synthetic-mnist", RawData(X, y))
    meta.update(source="generator", papers=[], notes="benchmarks/memory.py")
    data.save(data.Dataset("synthetic-mnist", Xv, yv, meta), cache)
    protocol = {"kind": "holdout", "repeats": 1, "train_size": n_train, "test_size": n_test}
    cfg = config.with_defaults({
        "benchmark": "memory", "protocol": protocol, "preprocess": ["zscore", {"pca": 120}],
        "data": {"cache": str(cache)}, "k": [1, 3, 5], "hubness_k": 10,
        "datasets": {"synthetic-mnist": None},
        "methods": {"euclidean": None, "lda": None},
    })
    splits = protocols.make_splits(yv, protocol, cfg["seed"])
    protocols.save_splits(plan.split_path(cfg, "synthetic-mnist"), splits, protocol,
                          cfg["seed"], meta["sha256"])
    return cfg, meta["n"], meta["d"]


#: runs `dmlbench run` (or only its imports) in a fresh process and prints the process's peak
#: resident memory (VmHWM: exec starts it afresh, so the forking parent's pages do not count)
_CHILD = """
import sys
if sys.argv[1:]:
    from dmlbench.cli import main
    code = main(sys.argv[1:])
else:
    import dmlbench.cli, dmlbench.run.job, dmlbench.methods
    code = 0
status = open('/proc/self/status').read().split('VmHWM:')[1].split()[0]
print('VmHWM', int(status), file=sys.stderr)
sys.exit(code)
"""


def _peak_process(args: list[str]) -> float:
    """Peak RSS (MiB) of `dmlbench <args>` (imports only when empty), run in a fresh process."""
    proc = subprocess.run([sys.executable, "-c", _CHILD, *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"dmlbench {' '.join(args[:1])} failed: {proc.stderr[-2000:]}")
    return int(proc.stderr.rsplit("VmHWM", 1)[1].split()[0]) / 1024


def run_job(cfg: dict, method: str, out: Path) -> tuple[float, float, dict]:
    """(peak RSS of the whole `dmlbench run` process in MiB, wall seconds, its record)."""
    spec = plan.job_spec(cfg, "synthetic-mnist", method, [0])
    start = time.perf_counter()
    peak = _peak_process(["run", "--job", json.dumps(spec), "--threads", "1", "--out", str(out)])
    return peak, time.perf_counter() - start, records.read(out)[0]


def interpreter_peak() -> float:
    """Peak RSS (MiB) of a process that only imports what `dmlbench run` imports."""
    return _peak_process([])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="14000 x 784 instead of 70000 x 784")
    args = parser.parse_args()
    n_train, n_test = (12000, 2000) if args.quick else (60000, 10000)
    with tempfile.TemporaryDirectory(prefix="dmlbench-memory-") as tmp:
        cfg, n, d = prepare(Path(tmp) / "cache", n_train, n_test)
        raw_mb = n * d * 8 / MiB
        budget = resources.job_mem_mb(n, d, cfg["preprocess"])
        base = interpreter_peak()
        print(f"data: {n} x {d} float64 = {raw_mb:.0f} MiB; train {n_train}, test {n_test}; "
              f"zscore + PCA 120")
        print(f"interpreter with dmlbench imported: {base:.0f} MiB peak RSS")
        print(f"reserved per job by the workflow (resources.job_mem_mb): {budget} MiB")
        print(f"{'method':<10} {'process peak':>13} {'split peak':>11} {'split rise':>11} "
              f"{'peak / data':>12} {'peak / reserved':>16} {'wall s':>7}")
        for method in cfg["methods"]:
            peak, wall, record = run_job(cfg, method, Path(tmp) / f"{method}.json")
            t = record["timings"]
            print(f"{method:<10} {peak:>10.0f} MiB {t['peak_rss_mb']:>7.0f} MiB "
                  f"{t['peak_rss_delta_mb']:>7.0f} MiB {peak / raw_mb:>12.2f} {peak / budget:>16.2f} "
                  f"{wall:>7.1f}   (accuracy k=1: {record['metrics']['accuracy_k1']:.3f})")


if __name__ == "__main__":
    main()

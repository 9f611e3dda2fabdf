"""Time and peak memory of the jobs of `config/mnist-sized.yaml` as the data grow to MNIST's
size: n = 1 000 ... 70 000 points of 784 features, split 6 : 1 into training and test points as
MNIST is (60 000 / 10 000 at full size), measured on the real job path (`dmlbench run`).

The data are `dmlbench.data.generators.mnist_like(n)` (10 classes, integer pixels 0..255 from a
low-rank class model plus noise; the registry's `mnist-like` is its full-size draw). Each job
(a method on a data-set entry of the config: Euclidean and Move-labeled on the pixels, NCA's
stochastic-learning variant and Euclidean after PCA to 100) runs in a fresh process with one
BLAS thread. Reported per job: the process's wall and CPU seconds (start-up, imports and
loading the cached set included), its peak resident memory (the kernel's VmHWM), the job's own
per-split peak from its record (`peak_rss_mb`), and the process peak against the raw data size
and against the memory the workflow reserves for the job (`dmlbench.run.resources.job_mem_mb`).

    python benchmarks/memory.py                         # n = 1000, 4000, 16000, 70000
    python benchmarks/memory.py --quick                 # n = 1000, 4000, 14000
    python benchmarks/memory.py --sizes 1000,8000 --methods euclidean,nca_sl
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dmlbench import config, data, records
from dmlbench import vocabulary as voc
from dmlbench.data.generators import mnist_like
from dmlbench.run import plan, protocols, resources

MiB = 2**20
CONFIG = Path(__file__).resolve().parents[1] / "config" / "mnist-sized.yaml"
FULL_SIZES, QUICK_SIZES = (1000, 4000, 16000, 70000), (1000, 4000, 14000)


def prepare(cache: Path, n: int) -> tuple[dict, int]:
    """Cache mnist_like(n) as `mnist-like-n<n>`, point the config's data-set entries at it with
    a 6 : 1 holdout, save the split; return (config, d)."""
    name = f"mnist-like-n{n}"
    Xv, yv, meta = data.cache.validate(name, mnist_like(n))
    meta.update(source="generator", papers=[], notes="benchmarks/memory.py")
    data.save(data.Dataset(name, Xv, yv, meta), cache)
    raw = config.read(CONFIG)
    n_test = n // 7
    protocol = {"kind": "holdout", "repeats": 1, "train_size": n - n_test, "test_size": n_test}
    raw.update(protocol=protocol, data={"cache": str(cache)})
    raw["datasets"] = {label: {**(entry or {}), "dataset": name}
                       for label, entry in raw["datasets"].items()}
    cfg = config.with_defaults(raw)
    splits = protocols.make_splits(yv, protocol, cfg["seed"])
    for label in cfg["datasets"]:
        protocols.save_splits(plan.split_path(cfg, label), splits, protocol, cfg["seed"],
                              meta["sha256"])
    return cfg, meta["d"]


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


def _peak_process(args: list[str]) -> tuple[float, float, float]:
    """(peak RSS in MiB, wall s, CPU s) of `dmlbench <args>` (imports only when empty), run in a
    fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _CHILD, *args], capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"dmlbench {' '.join(args[:1])} failed: {proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return int(proc.stderr.rsplit("VmHWM", 1)[1].split()[0]) / 1024, wall, cpu


def run_job(cfg: dict, dataset: str, method: str, out: Path) -> tuple[float, float, float, dict]:
    """(process peak RSS in MiB, wall s, CPU s, the record) of one job, one BLAS thread."""
    spec = plan.job_spec(cfg, dataset, method, [0])
    peak, wall, cpu = _peak_process(["run", "--job", json.dumps(spec), "--threads", "1",
                                     "--out", str(out)])
    return peak, wall, cpu, records.read(out)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"n = {', '.join(map(str, QUICK_SIZES))}")
    parser.add_argument("--sizes", help="comma-separated n (default: "
                        f"{', '.join(map(str, FULL_SIZES))})")
    parser.add_argument("--methods", help="comma-separated method labels of the config "
                        "(default: all)")
    args = parser.parse_args()
    sizes = ([int(s) for s in args.sizes.split(",")] if args.sizes
             else QUICK_SIZES if args.quick else FULL_SIZES)
    wanted = args.methods.split(",") if args.methods else None
    base = _peak_process([])[0]
    print(f"config: {CONFIG.name}; one BLAS thread per job; interpreter with dmlbench "
          f"imported: {base:.0f} MiB peak RSS")
    print(f"{'n':>6} {'d':>4} {'data set':<18} {'method':<13} {'wall s':>8} {'CPU s':>8} "
          f"{'peak MiB':>9} {'split MiB':>9} {'peak/data':>9} {'peak/rsv':>8} {'acc k=1':>7} "
          f"{'skew N5':>7}", flush=True)
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="dmlbench-memory-") as tmp:
            cfg, d = prepare(Path(tmp) / "cache", n)
            raw_mb = n * d * 8 / MiB
            jobs = [(ds, m) for ds in cfg["datasets"] for m in cfg["methods"]
                    if ds in config.method_datasets(cfg, m) and (not wanted or m in wanted)]
            for dataset, method in jobs:
                budget = resources.job_mem_mb(n, d, config.dataset_preprocess(cfg, dataset))
                peak, wall, cpu, record = run_job(cfg, dataset, method,
                                                  Path(tmp) / f"{dataset}-{method}.json")
                m = record["metrics"]
                print(f"{n:>6} {d:>4} {dataset:<18} {method:<13} {wall:>8.1f} "
                      f"{cpu:>8.1f} {peak:>9.0f} {record['timings']['peak_rss_mb']:>9.0f} "
                      f"{peak / raw_mb:>9.2f} {peak / budget:>8.2f} {m[voc.accuracy(1)]:>7.3f} "
                      f"{m['skewness_n5']:>7.2f}", flush=True)


if __name__ == "__main__":
    main()

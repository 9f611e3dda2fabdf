"""A machine's speed for the default benchmark: the CPU seconds of one fixed job of it (LMNN on
wine, the default config's settings, tuning included, and 4 splits: numpy, BLAS and a compiled
kernel, like the benchmark as a whole), best of a few runs, one BLAS thread.

    python benchmarks/reference_job.py
    python benchmarks/reference_job.py --dataset digits --method minivenn --repeats 1

Scale a time measured on another machine by the ratio of the two machines' reference times
(docs/performance.md, "Default benchmark"). Best of several CPU times is what load from other
processes inflates least; the data set is built in a temporary cache (offline: the default
config's data sets are embedded).
"""

from __future__ import annotations

import argparse
import copy
import os
import tempfile
import time
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from dmlbench import config, data  # noqa: E402  (after the BLAS thread limits)
from dmlbench.run import job, plan, protocols  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def reference_time(dataset: str, method: str, repeats: int,
                   configfile: Path = ROOT / "config/config.yaml") -> list[float]:
    """CPU seconds of each run of the config's job (dataset, method): the records' *_cpu_s
    timings summed over its splits (preprocessing, fit, prediction, training-set search)."""
    with tempfile.TemporaryDirectory() as tmp:
        cfg = copy.deepcopy(config.load(configfile))
        cfg["data"] = {"cache": str(Path(tmp) / "cache")}
        cfg["datasets"] = {dataset: cfg["datasets"][dataset]}
        cfg["methods"] = {method: cfg["methods"][method]}
        cfg = plan.check(cfg)
        name = config.dataset_name(cfg, dataset)
        ds = data.ensure(name, cfg["data"]["cache"], offline=True)
        protocol = config.dataset_protocol(cfg, dataset)
        protocols.save_splits(plan.split_path(cfg, dataset), protocols.make_splits(
            ds.y, protocol, cfg["seed"]), protocol, cfg["seed"], ds.meta["sha256"])
        [j] = plan.jobs(cfg)
        spec = plan.job_spec(cfg, j.dataset, j.method, j.splits)
        times = []
        for _ in range(repeats):
            split_records = job.run(spec, progress=False)
            times.append(sum(v for r in split_records for k, v in r["timings"].items()
                             if k.endswith("_cpu_s")))
        return times


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dataset", default="wine")
    p.add_argument("--method", default="lmnn")
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    start = time.perf_counter()
    times = reference_time(args.dataset, args.method, args.repeats)
    print(f"reference job {args.dataset} / {args.method} (default config, "
          f"{len(times)} runs): best {min(times):.2f} CPU s "
          f"(all: {', '.join(f'{t:.2f}' for t in times)}; "
          f"{time.perf_counter() - start:.0f} s wall in all)")


if __name__ == "__main__":
    main()

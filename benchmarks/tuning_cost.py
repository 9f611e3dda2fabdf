"""Cost of equal tuning (docs/tuning.md): each method of config/reality-check.yaml on one 70/30
split of small offline sets, untuned and then tuned with the config's `tuning` block (optionally
another budget), wall seconds per job and the tuned / untuned ratio. Used to size the reality
check's budget; no time is asserted.

    python benchmarks/tuning_cost.py --datasets housevotes --budget 6
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from dmlbench import config, data
from dmlbench.run import job, plan, protocols

ROOT = Path(__file__).resolve().parents[1]


def run(datasets: list[str], methods: list[str] | None, budget: int | None, cache: str) -> None:
    rc = config.load(ROOT / "config" / "reality-check.yaml")
    methods = methods or list(rc["methods"])
    totals = {False: 0.0, True: 0.0}
    seconds = {}
    for tuned in (False, True):
        cfg = {"benchmark": "tuning-cost", "data": {"cache": cache}, "k": rc["k"],
               "protocol": {"kind": "holdout", "repeats": 1, "train_fraction": 0.7},
               "preprocess": rc["preprocess"],
               "datasets": {s: rc["datasets"].get(s) for s in datasets},
               "methods": {m: rc["methods"][m] for m in methods}}
        if tuned:
            cfg["tuning"] = {**rc["tuning"], **({"budget": budget} if budget else {})}
        cfg = plan.check(cfg)
        for s in datasets:
            protocol = config.dataset_protocol(cfg, s)
            for m in methods:
                spec = plan.job_spec(cfg, s, m, [0])
                ds = data.ensure(spec["dataset"]["name"], cache)
                if not Path(spec["split_file"]).exists():
                    protocols.save_splits(spec["split_file"], protocols.make_splits(
                        ds.y, protocol, cfg["seed"]), protocol, cfg["seed"], ds.meta["sha256"])
                start = time.perf_counter()
                job.run(spec, progress=False)
                seconds[s, m, tuned] = time.perf_counter() - start
                totals[tuned] += seconds[s, m, tuned]
    for s in datasets:
        for m in methods:
            a, b = seconds[s, m, False], seconds[s, m, True]
            print(f"{s:14s} {m:14s} untuned {a:8.2f} s  tuned {b:8.2f} s  ratio {b / a:6.1f}")
    print(f"total untuned {totals[False]:.1f} s, tuned {totals[True]:.1f} s, "
          f"ratio {totals[True] / totals[False]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="housevotes")
    parser.add_argument("--methods", default=None, help="comma-separated (default all)")
    parser.add_argument("--budget", type=int, default=None, help="default the config's")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        run(args.datasets.split(","), args.methods and args.methods.split(","), args.budget,
            cache)


if __name__ == "__main__":
    main()

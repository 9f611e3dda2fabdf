"""Cost of equal tuning (docs/tuning.md): each method of a config (default
config/reality-check.yaml) on one 70/30 split of some of its data sets, untuned and then tuned
with the `tuning` block of the tuned config (default: the same config; `--budget` and `--folds`
override it), wall and CPU seconds per job and the tuned / untuned ratios. The tuned config may
differ from the untuned one in its method entries (e.g. an internal selection grid left out
under tuning, as docs/tuning.md asks). Used to size a budget; no time is asserted.

    python benchmarks/tuning_cost.py --datasets housevotes --budget 6
    python benchmarks/tuning_cost.py --config config/config.yaml \\
        --tuned-config my-tuned-default.yaml --datasets wdbc
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from dmlbench import config, data
from dmlbench.run import job, plan, protocols

ROOT = Path(__file__).resolve().parents[1]


def run(datasets: list[str], methods: list[str] | None, budget: int | None, folds: int | None,
        cache: str, untuned_path: Path, tuned_path: Path) -> None:
    sources = {False: config.load(untuned_path), True: config.load(tuned_path)}
    methods = methods or list(sources[False]["methods"])
    totals = {(tuned, clock): 0.0 for tuned in (False, True) for clock in ("wall", "cpu")}
    seconds = {}
    for tuned in (False, True):
        rc = sources[tuned]
        cfg = {"benchmark": "tuning-cost", "data": {"cache": cache}, "k": rc["k"],
               "hubness_k": rc["hubness_k"],
               "protocol": {"kind": "holdout", "repeats": 1, "train_fraction": 0.7},
               "preprocess": rc["preprocess"],
               "datasets": {s: rc["datasets"].get(s) for s in datasets},
               "methods": {m: rc["methods"][m] for m in methods}}
        if tuned:
            cfg["tuning"] = {**(rc.get("tuning") or {}),
                             **({"budget": budget} if budget else {}),
                             **({"folds": folds} if folds else {})}
        cfg = plan.check(cfg)
        for s in datasets:
            protocol = config.dataset_protocol(cfg, s)
            for m in methods:
                spec = plan.job_spec(cfg, s, m, [0])
                ds = data.ensure(spec["dataset"]["name"], cache)
                if not Path(spec["split_file"]).exists():
                    protocols.save_splits(spec["split_file"], protocols.make_splits(
                        ds.y, protocol, cfg["seed"]), protocol, cfg["seed"], ds.meta["sha256"])
                wall, cpu = time.perf_counter(), time.process_time()
                job.run(spec, progress=False)
                seconds[s, m, tuned] = (time.perf_counter() - wall, time.process_time() - cpu)
                totals[tuned, "wall"] += seconds[s, m, tuned][0]
                totals[tuned, "cpu"] += seconds[s, m, tuned][1]
    for s in datasets:
        for m in methods:
            (a, a_cpu), (b, b_cpu) = seconds[s, m, False], seconds[s, m, True]
            print(f"{s:14s} {m:14s} untuned {a:8.2f} s ({a_cpu:8.2f} CPU s)  tuned {b:8.2f} s "
                  f"({b_cpu:8.2f} CPU s)  ratio {b / a:6.1f} (CPU {b_cpu / a_cpu:6.1f})")
    print(f"total untuned {totals[False, 'wall']:.1f} s ({totals[False, 'cpu']:.1f} CPU s), "
          f"tuned {totals[True, 'wall']:.1f} s ({totals[True, 'cpu']:.1f} CPU s), ratio "
          f"{totals[True, 'wall'] / totals[False, 'wall']:.2f} "
          f"(CPU {totals[True, 'cpu'] / totals[False, 'cpu']:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=ROOT / "config" / "reality-check.yaml",
                        help="the untuned runs' config (default config/reality-check.yaml)")
    parser.add_argument("--tuned-config", type=Path, default=None,
                        help="the tuned runs' config (its methods and `tuning`; default --config)")
    parser.add_argument("--datasets", default="housevotes")
    parser.add_argument("--methods", default=None, help="comma-separated (default all)")
    parser.add_argument("--budget", type=int, default=None, help="default the tuned config's")
    parser.add_argument("--folds", type=int, default=None, help="default the tuned config's")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        run(args.datasets.split(","), args.methods and args.methods.split(","), args.budget,
            args.folds, cache, args.config, args.tuned_config or args.config)


if __name__ == "__main__":
    main()

"""Wall time of a run in pieces (`tools/run_in_pieces.py`) under its two ways of starting steps,
replayed from a published run's records: fixed groups of `--cores` steps, each group waiting for
its slowest (the tool until 2026-12-02), against a pool that starts a step as soon as one ends
(the tool now). A step is one workflow batch: a method's part of one data set's splits, every
training size, its time the sum of its records' wall seconds (`job_times.record_seconds`) plus
`--overhead` for Snakemake's start; steps in the tool's order (each data set's methods in the
config's order, part by part), data sets one after the other.

    python benchmarks/pieces_schedule.py reports/at-scale/records config/at-scale.yaml
"""

from __future__ import annotations

import argparse
import heapq
import re
from collections import defaultdict
from pathlib import Path

import yaml

from dmlbench import records
from job_times import record_seconds


def step_seconds(root: Path) -> dict[tuple[str, str, int], float]:
    """{(data set, method, part): wall seconds of the batch's records, every training size}."""
    seconds: dict[tuple[str, str, int], float] = defaultdict(float)
    for path in root.glob("runs/*/*/**/part*.json*"):
        dataset, method = path.relative_to(root / "runs").parts[:2]
        part = int(re.match(r"part(\d+)", path.name).group(1))
        seconds[dataset, method, part] += sum(record_seconds(r) for r in records.read(path))
    return seconds


def in_groups(durations: list[float], cores: int) -> float:
    """Wall time when `cores` steps start together and the next group waits for all of them."""
    return sum(max(durations[i:i + cores]) for i in range(0, len(durations), cores))


def in_pool(durations: list[float], cores: int) -> float:
    """Wall time when a step starts on the first core that comes free (in the given order)."""
    free = [0.0] * cores
    for seconds in durations:
        heapq.heappush(free, heapq.heappop(free) + seconds)
    return max(free)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("records", type=Path, help="a run's published records directory")
    p.add_argument("config", type=Path, help="its config (the order of its methods)")
    p.add_argument("--cores", type=int, default=2)
    p.add_argument("--overhead", type=float, default=10.0,
                   help="seconds added to each step (Snakemake's start; default 10)")
    args = p.parse_args(argv)
    methods = list(yaml.safe_load(args.config.read_text())["methods"])
    seconds = step_seconds(args.records)
    totals = [0.0, 0.0, 0.0]
    print(f"{'data set':14s} {'work s':>8s} {'groups s':>9s} {'pool s':>8s}")
    for dataset in sorted({d for d, _, _ in seconds}):
        steps = sorted((k for k in seconds if k[0] == dataset),
                       key=lambda k: (methods.index(k[1]), k[2]))
        durations = [seconds[k] + args.overhead for k in steps]
        row = (sum(durations), in_groups(durations, args.cores), in_pool(durations, args.cores))
        totals = [t + r for t, r in zip(totals, row)]
        print(f"{dataset:14s} {row[0]:8.0f} {row[1]:9.0f} {row[2]:8.0f}")
    work, groups, pool = totals
    print(f"{'all':14s} {work:8.0f} {groups:9.0f} {pool:8.0f}  (pool / groups {pool / groups:.2f}; "
          f"the least possible on {args.cores} cores {work / args.cores:.0f} s)")


if __name__ == "__main__":
    main()

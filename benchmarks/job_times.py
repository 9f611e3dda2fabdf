"""Job time of a finished run, from its records: per method and per data set, the sum over the
splits of the wall (or CPU, `--cpu`) times each record holds (preprocessing, fit, prediction,
training-set search, a leave-one-out job's share of its one pass; for a tuned job also the
tuning: inner fits and scores, and the default setting's fit on the training part), and the
local metrics' RMVEM / RMLE ratio per job (mean RMVEM form over mean RMLE form; issue goal: at
most 2x), per data set and for the whole run.

    python benchmarks/job_times.py reports/abou-moustafa-2017/records
    python benchmarks/job_times.py results/abou-moustafa-2017/records --datasets satimage wdbc
    python benchmarks/job_times.py results/hubness-reduction --datasets dexter --cpu

Reads the published record parts (`runs/<data set>/<method>/part*.json[.gz]`); times are those
of the machine that ran the jobs (`environment` in each record).
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

from dmlbench import records
from dmlbench.records.aggregation import tuning_seconds


def record_seconds(record: dict, clock: str = "wall") -> float:
    """A record's wall (or CPU) seconds: its timings plus, when tuned, what the tuning added
    (`records.aggregation.tuning_seconds`: the tuning's own time and the default setting's own
    fit when it was fitted apart): the figure a report's "At a glance" sums over the splits."""
    seconds = sum(value for name, value in record["timings"].items()
                  if name.endswith(f"_{clock}_s"))
    return seconds + (tuning_seconds(record["tuning"], clock) if record.get("tuning") else 0.0)


def job_seconds(root: Path, clock: str = "wall") -> dict[tuple[str, str], float]:
    """{(data set, method): wall (or, with `clock="cpu"`, CPU) seconds summed over the records
    of its parts (`record_seconds`)}."""
    times: dict[tuple[str, str], float] = defaultdict(float)
    parts = sorted(root.glob("runs/*/*/part*.json*"))
    if not parts:
        raise SystemExit(f"no record parts under {root}/runs/<data set>/<method>/")
    for part in parts:
        for record in records.read(part):
            key = (record["dataset"]["label"], record["method"]["label"])
            times[key] += record_seconds(record, clock)
    return times


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("records", type=Path, help="a run's records directory")
    p.add_argument("--datasets", nargs="*", help="print these data sets' rows (default: all)")
    p.add_argument("--cpu", action="store_true", help="CPU seconds instead of wall seconds")
    args = p.parse_args(argv)
    times = job_seconds(args.records, "cpu" if args.cpu else "wall")
    methods = sorted({m for _, m in times})
    per_method = {m: sum(t for (_, mm), t in times.items() if mm == m) for m in methods}
    print(f"job time {sum(times.values()):.0f} s over {len(times)} jobs")
    print("per method: " + ", ".join(f"{m} {t:.0f} s" for m, t in
                                      sorted(per_method.items(), key=lambda x: -x[1])))
    rmvem = [m for m in methods if m.startswith("rmvem")]
    rmle = [m for m in methods if m.startswith("rmle")]

    def per_job(seconds: dict[str, float]) -> str:
        """mean RMVEM form / mean RMLE form, when both ran"""
        a = [seconds[m] for m in rmvem if m in seconds]
        b = [seconds[m] for m in rmle if m in seconds]
        if not (a and b):
            return ""
        return f"; RMVEM / RMLE per job {(sum(a) / len(a)) / (sum(b) / len(b)):.2f}x"
    for name in sorted({d for d, _ in times}):
        if args.datasets and name not in args.datasets:
            continue
        row = dict(sorted(((m, t) for (d, m), t in times.items() if d == name),
                          key=lambda x: -x[1]))
        print(f"{name:>14} {sum(row.values()):7.0f} s: "
              + ", ".join(f"{m} {t:.0f}" for m, t in row.items()) + per_job(row))
    if rmvem and rmle:
        print(f"whole run: {len(rmvem)} RMVEM forms {sum(per_method[m] for m in rmvem):.0f} s, "
              f"{len(rmle)} RMLE forms {sum(per_method[m] for m in rmle):.0f} s"
              + per_job(per_method))


if __name__ == "__main__":
    main()

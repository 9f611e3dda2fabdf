"""Dry check of the tuning rule on a config's data sets (default config/reality-check.yaml),
without running its jobs: on every split each method's search space is resolved on the inner
training parts (`run.tuning.candidates`), giving the feasible points, the candidates of the
budget and what was dropped; with `--fit K`, K of the candidates of each (data set, method) on
split 0 are fitted on inner fold 0 and scored (`run.tuning.inner_accuracies`), each within
`--fit-limit` seconds, to count the candidates that fail (and why) and time one inner fit; with
`--records DIR` (a finished run under the old rule), the CPU time of the config's run is
estimated from the published per-candidate costs, or the sample fits' where measured
(`estimate`). No time is asserted.

    python benchmarks/tuning_rule_check.py --extra mirror.yaml
    python benchmarks/tuning_rule_check.py --extra mirror.yaml --fit 2 --costs costs.json \\
        --records reports/reality-check/records
    python benchmarks/tuning_rule_check.py --config config/reality-check-budget.yaml \\
        --extra mirror.yaml --costs costs.json --records reports/reality-check/records
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
from job_times import record_seconds  # a sibling script: benchmarks/ is on sys.path

from dmlbench import config, data, records
from dmlbench.run import job, plan, preprocessing, protocols, resources, tuning
from dmlbench.run.time_limit import TimeLimitExceeded, limit

ROOT = Path(__file__).resolve().parents[1]


def load(path: Path, extra: Path | None, budget: int | None) -> dict:
    """The checked config, with the `data` entry of `extra` (e.g. a mirror) and `budget`."""
    raw = config.read(path)
    if extra is not None:
        raw["data"] = {**(raw.get("data") or {}), **(config.read(extra).get("data") or {})}
    if budget is not None:
        raw["tuning"] = {**raw["tuning"], "budget": budget}
    return plan.check(raw, config_files=[path])


def training_parts(cfg: dict, label: str, splits: list[int]):
    """(split, preprocessed training part X, y) of data set `label`."""
    spec = plan.job_spec(cfg, label, next(iter(cfg["methods"])), splits)
    mirror, offline = config.data_source(cfg)
    ds = data.ensure(spec["dataset"]["name"], config.cache_dir(cfg), mirror=mirror,
                     offline=offline)
    made = protocols.make_splits(ds.y, spec["protocol"], spec["seed"], given=ds.given_split,
                                 dataset=ds.name,
                                 drop_classes_below=spec["drop_classes_below"] or 0,
                                 given_folds=ds.given_folds)
    for s in splits:
        X, _, _ = preprocessing.fit_transform_rows(spec["preprocess"], ds.X, made[s].train,
                                                   made[s].test)
        yield s, X, ds.y[made[s].train]


def fit_sample(spec: dict, tried: list[dict], X, y, fold, k: int, seconds: float, rng) -> list:
    """(candidate, reason or None, CPU seconds) of `k` candidates drawn from `tried`, each
    fitted on inner fold 0's training part and scored on its validation part within `seconds`
    of wall time, with one BLAS thread as the jobs have (more threads spin on 2 busy cores and
    count as CPU time)."""
    out = []
    for i in rng.choice(len(tried), size=min(k, len(tried)), replace=False):
        fit, val = fold != 0, fold == 0
        started = time.process_time()
        try:
            with limit(seconds, "sample fit"), resources.limit_threads(1):  # as the jobs
                tuning.inner_accuracies(job.build_estimator(spec, 0, tried[i])[0], X[fit],
                                        y[fit], X[val], y[val], spec["k"])
            reason = None
        except TimeLimitExceeded:
            reason = "time"
        except MemoryError:
            raise
        except Exception as err:  # noqa: BLE001 - what the rule would record
            reason = tuning.reason(err)
        out.append((tried[i], reason, time.process_time() - started))
    return out


def estimate(root: Path, tried: dict[tuple[str, str, int], list[int]],
             sampled: dict[tuple[str, str], float]) -> dict[str, tuple]:
    """{method: (CPU s of its jobs in the finished run at `root`, estimated under this rule)}:
    each published record's CPU (benchmarks/job_times.record_seconds) with its tuning's share
    replaced by a CPU per candidate times the candidates this rule tries on that (data set,
    method name, split), once per method entry of the config (`tried`: a budget study has
    several per method). The CPU per candidate is `sampled` (data set, method name) when the
    sample fits measured it (the current code on the new spaces), else the mean the record's
    tuning spent per candidate. A record of a method the config does not run counts 0."""
    out: dict[str, list] = defaultdict(lambda: [0.0, 0.0])
    for part in sorted(root.glob("runs/*/*/part*.json*")):
        for record in records.read(part):
            method, cpu = record["method"]["name"], record_seconds(record, "cpu")
            label = record["dataset"]["label"]
            out[method][0] += cpu
            entry = record.get("tuning")
            counts = tried.get((label, method, record["split"]["index"]))
            if entry is None or counts is None:
                continue
            per = entry["cpu_s"] / len(entry["candidates"])
            if entry.get("inner_scores") is None:  # a one-point space, not evaluated: as a fit
                per = 3 * record["timings"].get("fit_cpu_s", 0.0)
            per = sampled.get((label, method), per)
            out[method][1] += sum(cpu - entry["cpu_s"] + per * count for count in counts)
    return {m: tuple(v) for m, v in out.items()}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", type=Path, default=ROOT / "config" / "reality-check.yaml")
    p.add_argument("--extra", type=Path, help="a config whose `data` entry applies (a mirror)")
    p.add_argument("--budget", type=int, help="instead of the config's tuning budget")
    p.add_argument("--datasets", nargs="*", help="data-set labels (default: all)")
    p.add_argument("--methods", nargs="*", help="method labels (default: all)")
    p.add_argument("--fit", type=int, default=0, help="candidates fitted per (data set, method)")
    p.add_argument("--fit-limit", type=float, default=600.0,
                   help="wall seconds per sample fit (default 600)")
    p.add_argument("--records", type=Path, help="a finished run's records: estimate the CPU")
    p.add_argument("--costs", type=Path,
                   help="with --fit, write the sampled CPU per candidate (data set, method) to "
                        "this JSON file; without, read them from it for the estimate")
    args = p.parse_args(argv)
    cfg = load(args.config, args.extra, args.budget)
    labels = args.datasets or list(cfg["datasets"])
    methods = args.methods or list(cfg["methods"])
    jobs = {(j.dataset, j.method): list(j.splits) for j in plan.jobs(cfg)}
    tried: dict[tuple[str, str, int], list[int]] = defaultdict(list)
    totals, drops, failures = Counter(), Counter(), Counter()
    costs: dict[tuple[str, str], list[float]] = defaultdict(list)
    rng = np.random.default_rng(0)
    started = time.process_time()
    for label in labels:
        splits = sorted({s for m in methods for s in jobs.get((label, m), [])})
        grid: dict[str, list] = defaultdict(list)
        for s, X, y in training_parts(cfg, label, splits):
            spec0 = plan.job_spec(cfg, label, methods[0], [s])
            fold = tuning.make_inner_folds(y, spec0["tuning"]["folds"], spec0["tuning"]["seed"], s)
            parts = tuning.inner_parts(X, y, fold)
            for m in methods:
                if s not in jobs.get((label, m), []):
                    continue
                spec = plan.job_spec(cfg, label, m, [s])
                try:
                    _, chosen, fields = tuning.candidates(
                        spec["tuning"], job.method_class(spec), spec["method"]["params"], parts,
                        spec["dataset"]["name"], s)
                except ValueError as err:
                    print(f"{label} split {s} {m}: {err}")
                    totals["no feasible point"] += 1
                    continue
                tried[label, spec["method"]["name"], s].append(len(chosen))
                totals["tried"] += len(chosen)
                totals["dropped"] += len(fields["dropped"])
                for drop in fields["dropped"]:
                    drops[m, drop["reason"].split(":")[0].split(" exceeds")[0]] += 1
                grid[m].append((fields["grid_size"], len(chosen)))
                if s == splits[0] and args.fit:
                    for point, reason, seconds in fit_sample(spec, chosen, X, y, fold, args.fit,
                                                             args.fit_limit, rng):
                        totals["fitted"] += 1
                        print(f"  fit {label} {m} {point}: {reason or 'ok'} {seconds:.2f} CPU s")
                        if reason is not None:
                            failures[m, reason[:100]] += 1
                        else:  # one inner fold of `folds`: the candidate costs folds times it
                            costs[label, spec["method"]["name"]].append(
                                spec["tuning"]["folds"] * seconds)
        print(f"{label}: " + ", ".join(
            f"{m} {min(g for g, _ in v)}-{max(g for g, _ in v)}/{max(c for _, c in v)}"
            for m, v in grid.items()) + "  (feasible points min-max / candidates)")
    print(f"\n{totals['tried']} candidates to try, {totals['dropped']} values or points dropped, "
          f"{totals['no feasible point']} (data set, method, split) without a feasible point; "
          f"{time.process_time() - started:.0f} CPU s")
    for (m, what), count in sorted(drops.items(), key=lambda x: -x[1]):
        print(f"  dropped {count:5d}  {m}: {what}")
    if args.fit:
        failed = sum(failures.values())
        timed = sum(c for (_, why), c in failures.items() if why == "time")
        print(f"sample fits: {totals['fitted']}, failed {failed} ({timed} over the limit): "
              f"{100 * (failed - timed) / max(totals['fitted'], 1):.1f} % failed otherwise")
        for (m, why), count in sorted(failures.items(), key=lambda x: -x[1]):
            print(f"  failed {count:3d}  {m}: {why}")
    sampled = {key: float(np.mean(v)) for key, v in costs.items()}
    if args.costs and args.fit:
        args.costs.write_text(json.dumps({f"{d}|{m}": v for (d, m), v in sampled.items()}))
    elif args.costs:
        sampled = {tuple(key.split("|")): v for key, v in json.loads(args.costs.read_text()).items()}
    if args.records:
        rows = estimate(args.records, tried, sampled)
        old, new = sum(v[0] for v in rows.values()), sum(v[1] for v in rows.values())
        print(f"CPU of the run in {args.records}: {old:.0f} s; estimated under this rule "
              f"{new:.0f} s ({new / 7200:.1f} h on 2 cores)")
        for m, (a, b) in sorted(rows.items(), key=lambda x: -x[1][1]):
            print(f"  {m:>14} {a:8.0f} -> {b:8.0f} s")


if __name__ == "__main__":
    main()

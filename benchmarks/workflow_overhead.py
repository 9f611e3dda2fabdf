"""Where the CPU of a whole workflow run goes: inside the jobs (the records' own CPU seconds:
preprocessing, fit, prediction, training-set search) and outside them (each job process's
start-up and bookkeeping, the prepare steps (data sets and split files), ingest, publish,
report, Snakemake's own process and the job shells), as CPU seconds and as shares of the run.

    python benchmarks/workflow_overhead.py --configfile config/config.yaml --cores 2
    python benchmarks/workflow_overhead.py --log results/default/cpu.jsonl   # read again

The run is made in this checkout (`snakemake` of this interpreter's environment; arguments after
`--` go to it). Every Python process of the run, Snakemake's included, appends one line to the
CPU log when it exits (its own user + system CPU seconds, and those of the subprocesses it
waited for; the `sitecustomize.py` the script puts first on PYTHONPATH writes it), and the
script measures the whole tree (`os.wait4` on Snakemake). Non-Python processes (the job shells,
`git`) are the rest: whole tree minus every Python process's own CPU. Job time is the sum of the
`*_cpu_s` timings (and a tuned record's tuning time) of the records the run's jobs wrote (`results/<benchmark>/runs`). CPU seconds
depend far less on other load than wall time, but heavy load inflates them too (cache and memory
contention: LMNN's jobs took 1.5x the CPU seconds at a load average of 11 on 2 cores), so give
the load with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: written into a temporary folder put first on PYTHONPATH: each Python process of the run
#: appends its CPU seconds to $DMLBENCH_CPU_LOG at exit (Python runs `sitecustomize` at start-up)
SITECUSTOMIZE = '''\
import atexit, json, os, sys, time

def _dmlbench_cpu_log(start=time.time()):
    t = os.times()
    line = json.dumps({"argv": sys.argv[:3], "pid": os.getpid(), "ppid": os.getppid(),
                       "self": t.user + t.system,
                       "children": t.children_user + t.children_system,
                       "wall": time.time() - start})
    with open(os.environ["DMLBENCH_CPU_LOG"], "a") as fh:
        fh.write(line + "\\n")

if os.environ.get("DMLBENCH_CPU_LOG"):
    atexit.register(_dmlbench_cpu_log)
'''

#: the `dmlbench` verbs of the workflow's steps, as the breakdown names them
STEPS = {"run": "job processes (start-up, data loading, record writing)",
         "prepare": "prepare steps (data set and its split files)",
         "dataset": "dataset steps", "split": "split steps", "study": "study steps",
         "ingest": "ingest (track)", "publish": "publish", "report": "report"}


def run_workflow(log: Path, snakemake_args: list[str]) -> dict:
    """Run Snakemake with the CPU log on; {"cpu": CPU seconds of the whole process tree,
    "wall": seconds}."""
    with tempfile.TemporaryDirectory() as hook:
        (Path(hook) / "sitecustomize.py").write_text(SITECUSTOMIZE)
        path = os.environ.get("PYTHONPATH")
        env = {**os.environ, "DMLBENCH_CPU_LOG": str(log.resolve()),
               "PYTHONPATH": hook + (os.pathsep + path if path else "")}
        snakemake = Path(sys.executable).with_name("snakemake")
        start = time.perf_counter()
        proc = subprocess.Popen([str(snakemake), *snakemake_args], cwd=ROOT, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"snakemake failed (exit {os.waitstatus_to_exitcode(status)})")
    return {"cpu": usage.ru_utime + usage.ru_stime, "wall": wall}


def _verb(argv: list[str]) -> str | None:
    """The dmlbench verb of a process's argv (`python -m dmlbench.cli run ...` -> 'run'), or
    'snakemake' for Snakemake's own process, else None."""
    if argv and Path(argv[0]).parts[-2:] == ("dmlbench", "cli.py") and len(argv) > 1:
        return argv[1]  # `python -m dmlbench.cli VERB`: argv[0] is the module's file
    if argv and Path(argv[0]).name.startswith("snakemake"):
        return "snakemake"
    return None


def job_cpu(results: Path) -> tuple[float, int]:
    """(CPU seconds inside the jobs: the `*_cpu_s` timings of every record under
    `results/runs` and, for a tuned job, its tuning (`job_times.record_seconds`), number of
    records)."""
    from dmlbench import records
    from job_times import record_seconds

    total, count = 0.0, 0
    parts = sorted(results.glob("runs/*/*/part*.json"))
    for part in parts:
        for record in records.read(part):
            total += record_seconds(record, "cpu")
            count += 1
    return total, count


def breakdown(log: Path, results: Path, tree_cpu: float | None) -> list[tuple[str, float, int]]:
    """[(what, CPU seconds, processes)] of a run's CPU log; the first row is the jobs' own
    time, the rows after it what lies outside the jobs. A step's CPU is its process's own and
    that of the subprocesses it waited for (a pool's workers); a Python process started by
    another dmlbench process is counted in its parent's, Snakemake's process counts its own
    only (its children are the steps)."""
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    snakemake = {e["pid"] for e in entries if _verb(e["argv"]) == "snakemake"}
    python = {e["pid"] for e in entries} - snakemake
    per_verb: dict[str, float] = defaultdict(float)
    count: dict[str, int] = defaultdict(int)
    for entry in entries:
        verb = _verb(entry["argv"]) or "other Python"
        if entry.get("ppid") in python:
            continue  # in its parent's children's time
        per_verb[verb] += entry["self"] if verb == "snakemake" else entry["self"] + entry["children"]
        count[verb] += 1
    counted = sum(per_verb.values())
    inside, n_records = job_cpu(results)
    rows = [("inside the jobs (records' *_cpu_s, tuning)", inside, n_records)]
    rows.append((STEPS["run"], per_verb.pop("run", 0.0) - inside, count["run"]))
    for verb in ("prepare", "dataset", "split", "study", "ingest", "publish", "report"):
        if verb in per_verb:
            rows.append((STEPS[verb], per_verb.pop(verb), count[verb]))
    rows.append(("Snakemake's own process", per_verb.pop("snakemake", 0.0), count["snakemake"]))
    for verb, seconds in sorted(per_verb.items()):
        rows.append((f"other: {verb}", seconds, count[verb]))
    if tree_cpu is not None:
        # the job shells and other non-Python processes: the whole tree minus what is counted
        rows.append(("job shells and other non-Python processes", tree_cpu - counted, 0))
    return rows


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--log", type=Path, help="read this CPU log of an earlier run (no run)")
    p.add_argument("--results", type=Path,
                   help="the run's results/<benchmark> folder (default: from the config's "
                        "benchmark name)")
    p.add_argument("--configfile", default="config/config.yaml")
    p.add_argument("--cores", default="2")
    p.add_argument("snakemake_args", nargs="*", help="after `--`: more Snakemake arguments")
    args = p.parse_args(argv)
    from dmlbench import config as dmlconfig

    bench = dmlconfig.benchmark(dmlconfig.load(ROOT / args.configfile))
    results = args.results or ROOT / "results" / bench
    tree = None
    if args.log is None:
        results.mkdir(parents=True, exist_ok=True)
        log = results / "cpu.jsonl"
        log.unlink(missing_ok=True)
        measured = run_workflow(log, ["--cores", args.cores, "--configfile", args.configfile,
                                      *args.snakemake_args])
        tree = measured["cpu"]
        (results / "cpu-tree.json").write_text(json.dumps(measured))
        print(f"run: {measured['wall']:.0f} s wall, {tree:.0f} CPU s (whole process tree)")
    else:
        log = args.log
        saved = log.with_name("cpu-tree.json")
        tree = json.loads(saved.read_text())["cpu"] if saved.exists() else None
    rows = breakdown(log, results, tree)
    total = tree if tree is not None else sum(seconds for _, seconds, _ in rows)
    outside = total - rows[0][1]
    print(f"{'':48} {'CPU s':>8} {'share':>7} {'processes':>9}")
    for what, seconds, n in rows:
        print(f"{what:48} {seconds:8.0f} {seconds / total:7.1%} {n or '':>9}")
    print(f"{'outside the jobs':48} {outside:8.0f} {outside / total:7.1%}")
    print(f"{'total':48} {total:8.0f} {1:7.1%}")
    run_rows = [r for r in rows if r[0] == STEPS["run"]]
    if run_rows and run_rows[0][2]:
        print(f"per job process outside its records: {run_rows[0][1] / run_rows[0][2]:.2f} CPU s")


if __name__ == "__main__":
    main()

"""Run a long config one data set at a time and publish each finished piece.

A run of many hours (the reality check: 34 data sets, 578 jobs) does not fit one sitting: a
process still running when the session ends is killed. This runs the config in steps, each one
workflow batch (`plan.batches`: a method's part of one data set's splits, every training size
of a learning curve) by its own `snakemake --cores 1 --nolock` on that batch's record files, as
many steps at once as `--cores`, a new one started as soon as one ends (no step waits for a
slower neighbour); the cheapest sets first (registry size n x d, then label), each set's methods
in the config's order. When a step ends, every finished record file is put under
`reports/<benchmark>/records` with its manifest (`dmlbench publish`), optionally committed: a
killed session loses at most the steps it was running. Before it starts, record files already published
are restored into `results/<benchmark>/` (again, for each data set, after its prepare step),
so a rerun in a fresh clone skips them (`dmlbench run` skips a job whose record file is
current) and only the rest is computed. A data set is done when all its jobs are published with
the settings the config gives them now (parent key and splits): a published record of earlier
settings is not restored, so its job runs again. Failed jobs (`--keep-going`) are retried by
the next invocation, which exits non-zero naming the data sets whose jobs failed.

Only records the config asks for now are published: a record file that holds the results of
other settings (Snakemake puts back the previous version of a step's outputs when the step
fails) is named and left out (`dmlbench.run.job.stale_records`). One published run is one code
version (`dmlbench.records.code_version`): records of another code version than those published
(or computed) already stop the run, naming both versions, unless `--allow-mixed-code`.
The config needs `datasets_per_job: 1`, so that one data set's jobs are steps of their own.

    python tools/run_in_pieces.py config/reality-check.yaml --extra mirror.yaml --cores 2 --commit
    python tools/run_in_pieces.py config/reality-check.yaml --dry-run   # the order, no run

`--skip-methods lmnn` leaves a method's jobs out of this invocation (e.g. while its cost is
being decided); `--only keel-iris` runs the named sets. `--publish-only` starts nothing: it
publishes (and with `--commit` commits) the record files finished so far, those of a step
still running in another invocation too, e.g. before a session ends: a step is one Snakemake
job, whose outputs Snakemake removes, the finished ones with the rest, when it is killed.

With `--commit`, once every job of the config is published, the report is rebuilt from the
published records (`dmlbench report --records`), the scoreboard of the published reports
(`reports/index.html`) is written (`dmlbench scoreboard`: the one step that writes it), and both
are committed.
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import time
from pathlib import Path

import yaml
from snakemake.utils import update_config

from dmlbench import config as cfg
from dmlbench import records
from dmlbench.run import job, plan, sources

#: the virtual environment's commands, whatever PATH says
BIN = Path(sys.executable).parent
#: seconds between looks at the running steps
POLL_S = 5.0


def load(configfile: str, extra: list[str]) -> dict:
    """The checked config as Snakemake would build it (later files update earlier ones)."""
    raw = yaml.safe_load(Path(configfile).read_text())
    for path in extra:
        update_config(raw, yaml.safe_load(Path(path).read_text()))
    return plan.check(raw, config_files=[configfile, *extra])


def order(config: dict) -> list[str]:
    """The config's data-set labels, smallest registry size (n x d) first."""
    def size(label: str) -> tuple[int, str]:
        spec = sources.dataset_spec(config, label)
        return spec.n * spec.d, label
    return sorted(config["datasets"], key=size)


def published_path(results: Path, published: Path, record: str) -> Path:
    return (published / Path(record).relative_to(results)).with_suffix(".json.gz")


def wanted(config: dict, jobs: list[plan.Job]) -> dict[Path, tuple[str, list[int]]]:
    """Each job's record file (relative to the results folder) with the parent key and the
    splits its records must carry: what the config asks for now (`plan.job_spec`)."""
    return {Path(plan.record_path(config, j)).relative_to(Path("results", cfg.benchmark(config))):
            (plan.job_spec(config, j.dataset, j.method, j.splits, j.train_size)["parent_key"],
             list(j.splits))
            for j in jobs}


def holds(content: bytes, want: tuple[str, list[int]]) -> bool:
    """Whether a record file's content has the job's parent key and exactly its splits (a
    published record of earlier settings is not: its job runs again)."""
    key, splits = want
    split_records = json.loads(content)["records"]
    return (all(r["parent_key"] == key for r in split_records)
            and sorted(r["split"]["index"] for r in split_records) == sorted(splits))


def restore(results: Path, published: Path, label: str = "*",
            want: dict[Path, tuple[str, list[int]]] | None = None) -> int:
    """Copy the published record files (decompressed) and arrays files of data set `label`
    (default every one) that `results` lacks, and touch those it has with the published content:
    a job's record file counts as current only when newer than its split file
    (`dmlbench.run.job.is_current`), and a fresh clone's prepare step writes the split file after
    an earlier restore. A record file listed in `want` (`wanted`) whose records are of other
    settings or splits is not restored, so that its job runs. Returns the number of files
    copied."""
    restored = 0
    for path in published.glob(f"runs/{label}/**/*"):
        if not path.is_file():
            continue
        relative = path.relative_to(published)
        compressed = path.name.endswith(".json.gz")
        target = results / (relative.with_suffix("") if compressed else relative)
        content = gzip.decompress(path.read_bytes()) if compressed else path.read_bytes()
        job_want = (want or {}).get(target.relative_to(results)) if compressed else None
        if job_want and not holds(content, job_want):
            continue
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
            restored += 1
        elif target.read_bytes() == content:
            target.touch()
    return restored


def is_published(results: Path, published: Path, record: str,
                 want: dict[Path, tuple[str, list[int]]]) -> bool:
    """Whether the job of record file `record` is published with the settings it has now."""
    path = published_path(results, published, record)
    return path.exists() and holds(gzip.decompress(path.read_bytes()),
                                   want[Path(record).relative_to(results)])


def publish_report(bench: str, reports: Path, commit: bool) -> None:
    """Rebuild `reports/<bench>` from its published records, write the scoreboard of every
    published report, and (`commit`) commit both."""
    folder = reports / bench
    subprocess.run([str(BIN / "dmlbench"), "report", "--records", str(folder / "records"),
                    "--out", str(folder)], check=True)
    subprocess.run([str(BIN / "dmlbench"), "scoreboard", str(reports)], check=True)
    if commit:
        subprocess.run(["git", "add", "-A", str(folder), str(reports / "index.html"),
                        str(reports / "scoreboard.csv")], check=True)
        subprocess.run(["git", "commit", "-q", "-m", f"{bench}: report rebuilt from the "
                        "published records, scoreboard written"], check=False)
def set_aside_stale(config: dict, paths: list[str | Path]) -> list[tuple[Path, str]]:
    """Set aside (`<name>.stale`) the record files among `paths` that hold other results than
    the config asks of their jobs now (`job.stale_records`), e.g. the previous version
    Snakemake put back when the step that rewrote it failed: Snakemake, which recorded the new
    settings, would find nothing to do, so the next run computes them. Returns them with why."""
    stale = job.stale_records(config, paths)
    for path, _ in stale:
        records.set_aside(path, ".stale")
    return stale


def publishable(config: dict, results: Path) -> tuple[list[Path], list[tuple[Path, str]]]:
    """(the record files under `results` to publish, [(record file left out, why)]): every job
    of the config whose record file exists, holds the parent key and splits the config gives
    its job (`holds`) and is not of other settings, splits or data than the job asks for now
    (those are set aside, `set_aside_stale`)."""
    want = wanted(config, plan.jobs(config))
    present = [results / relative for relative in want if (results / relative).exists()]
    left_out = set_aside_stale(config, present)
    out = []
    for path in present:
        if not path.exists():  # set aside
            continue
        try:
            current = holds(path.read_bytes(), want[path.relative_to(results)])
        except (OSError, ValueError, KeyError):
            left_out.append((path, "unreadable"))
            continue
        if current:
            out.append(path)
        else:
            left_out.append((path, "other settings or splits"))
    return out, left_out


def code_versions(paths) -> dict[str, list[Path]]:
    """{code version: record files} of record files (plain or gzip-compressed JSON); a record
    written before code versions were recorded counts as 'unknown'."""
    out: dict[str, list[Path]] = {}
    for path in map(Path, paths):
        content = path.read_bytes()
        document = json.loads(gzip.decompress(content) if path.suffix == ".gz" else content)
        for version in {r["environment"].get("code_version", "unknown")
                        for r in document["records"]}:
            out.setdefault(version, []).append(path)
    return out


def mixed_code(versions: dict[str, list[Path]], current: str) -> str | None:
    """Why records of these code versions (`code_versions`) and this checkout's (`current`)
    cannot make one published run, naming the versions and a file of each; None when there is
    one version."""
    others = {v: paths for v, paths in versions.items() if v != current}
    if not others:
        return None
    shown = "; ".join(f"code version {v} ({len(paths)} record files, e.g. {paths[0]})"
                      for v, paths in others.items())
    return (f"records of another code version than this checkout's ({current}): {shown}. One "
            "published run comes from one code version: run from the commit that made them, or "
            "delete those records (published and under results/) to compute them again, or "
            "pass --allow-mixed-code (the report then warns)")


def steps(config: dict, label: str, methods: list[str]) -> list[tuple[str, list[plan.Job]]]:
    """Data set `label`'s jobs of `methods` as the steps run and published one by one: its
    workflow batches (`plan.batches`: one process each, a method's part of the splits at every
    training size), method by method in `methods`' order, part by part, each named by its
    batch (`<method>[_part<p>]_<data set>`, the step's rule less `run_`)."""
    batches = [(b.name, [j for j in b.jobs if j.dataset == label and j.method in methods])
               for b in plan.batches(config)]
    return sorted(((name, batch) for name, batch in batches if batch),
                  key=lambda b: (methods.index(b[1][0].method), b[1][0].part))


def publish_finished(config: dict, results: Path, published: Path, current: str,
                     args: argparse.Namespace, step: str) -> bool:
    """Publish every finished record file of the config (`publishable`) and, with `--commit`,
    commit them, naming the step just run. Returns True when records of several code
    versions stop the run (`mixed_code`, said on stderr)."""
    finished, left_out = publishable(config, results)
    for path, why in left_out:
        print(f"{path}: not published ({why}: not the results the config asks for now; "
              "set aside, the next invocation computes it)", flush=True)
    if not finished:
        return False
    mixed = mixed_code(code_versions(finished), current)
    if mixed and not args.allow_mixed_code:
        print(f"run_in_pieces: error: {mixed}", file=sys.stderr)
        return True
    bench = cfg.benchmark(config)
    subprocess.run([str(BIN / "dmlbench"), "publish", *map(str, finished), "--config-json",
                    json.dumps(config), "--results", str(results),
                    "--out", str(published.parent)], check=True)
    if args.commit:
        subprocess.run(["git", "add", "-A", str(published), str(published.parent /
                                                               "config.json")], check=True)
        subprocess.run(["git", "commit", "-q", "-m", f"{bench} records: {step} "
                        f"({len(finished)} record files in all)"], check=False)
    return False


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("configfile")
    p.add_argument("--extra", nargs="*", default=[], help="config files merged after it")
    p.add_argument("--cores", default="1")
    p.add_argument("--skip-methods", nargs="*", default=[])
    p.add_argument("--only", nargs="*", default=[], help="data-set labels to run")
    p.add_argument("--commit", action="store_true", help="git commit each published piece")
    p.add_argument("--dry-run", action="store_true", help="print the order and job counts")
    p.add_argument("--allow-mixed-code", action="store_true",
                   help="publish records of several code versions together")
    p.add_argument("--publish-only", action="store_true",
                   help="publish the record files finished so far and start nothing")
    args = p.parse_args(argv)
    config = load(args.configfile, args.extra)
    if config.get("datasets_per_job") != 1:
        p.error(f"{args.configfile}: set `datasets_per_job: 1` so each data set's jobs are "
                "steps of their own")
    bench = cfg.benchmark(config)
    results, published = Path("results", bench), Path("reports", bench, "records")
    jobs = [j for j in plan.jobs(config) if j.method not in args.skip_methods]
    methods = [m for m in config["methods"] if m not in args.skip_methods]
    sets = [s for s in order(config) if not args.only or s in args.only]
    if args.dry_run:
        for label in sets:
            print(label, sum(j.dataset == label for j in jobs))
        return 0
    if args.commit and subprocess.run(["git", "check-ignore", "-q", str(published)]).returncode == 0:
        p.error(f"--commit: {published} is ignored by .gitignore; add `!/{published.parent}/` "
                "to it (published reports are listed there)")
    current = records.code_version()
    if args.publish_only:
        return 2 if publish_finished(config, results, published, current, args,
                                     "finished so far") else 0
    want = wanted(config, jobs)
    print(f"restored {restore(results, published, want=want)} published files into {results}",
          flush=True)
    every = wanted(config, plan.jobs(config))
    present = [results / relative for relative in every if (results / relative).exists()]
    mixed = mixed_code(code_versions(present), current)
    if mixed and not args.allow_mixed_code:
        print(f"run_in_pieces: error: {mixed}", file=sys.stderr)
        return 2
    failed: list[str] = []
    running: dict[subprocess.Popen, tuple[str, float]] = {}

    def end_steps() -> bool:
        """Wait until a running step ends (polling every `POLL_S`), then publish what finished.
        True: records of several code versions stop the run (`mixed_code`); the steps still
        running are stopped (Snakemake removes their unfinished outputs)."""
        ended = [proc for proc in running if proc.poll() is not None]
        while not ended:
            time.sleep(POLL_S)
            ended = [proc for proc in running if proc.poll() is not None]
        for proc in ended:
            name, start = running.pop(proc)
            print(f"{time.strftime('%H:%M:%S')} {name}: snakemake exit {proc.returncode} after "
                  f"{time.time() - start:.0f} s", flush=True)
            if proc.returncode:
                failed.append(name)
            if publish_finished(config, results, published, current, args, name):
                for other in running:
                    other.terminate()
                for other in running:
                    other.wait()
                return True
        return False

    slots = int(args.cores)
    for label in sets:
        targets = [plan.record_path(config, j) for j in jobs if j.dataset == label]
        if all(is_published(results, published, t, want) for t in targets):
            continue
        prepared = [plan.split_path(config, label),
                    *plan.dataset_paths(config, cfg.dataset_name(config, label))]
        # beside the steps of the previous set still running: their outputs are apart
        prepare = subprocess.run([str(BIN / "snakemake"), "--cores", args.cores, "--nolock",
                                  "--configfile", args.configfile, *args.extra, "--", *prepared])
        if prepare.returncode:
            print(f"{label}: its prepare step failed (snakemake exit {prepare.returncode}; "
                  f"logs/prepare/ says why): skipped, the next invocation retries it", flush=True)
            failed.append(f"{label} (prepare step)")
            continue
        restore(results, published, label, want)  # after the prepare step: newer than the split file
        for path, why in set_aside_stale(config, [t for t in targets if Path(t).exists()]):
            print(f"{path}: {why}, set aside as {path.name}.stale: computed again", flush=True)
        for name, step in steps(config, label, methods):
            paths = [plan.record_path(config, j) for j in step]
            if all(is_published(results, published, t, want) for t in paths):
                continue
            if len(running) >= slots and end_steps():
                return 2
            # one Snakemake per step, several at once in this folder: `--nolock`, their
            # outputs are apart
            running[subprocess.Popen([str(BIN / "snakemake"), "--cores", "1", "--nolock",
                                      "--keep-going", "--configfile", args.configfile,
                                      *args.extra, "--", *paths])] = (name, time.time())
    while running:
        if end_steps():
            return 2
    if failed:
        print(f"run_in_pieces: error: jobs failed in {len(failed)} step(s): "
              f"{'; '.join(failed)} (their logs under logs/{bench}/ say why); their records "
              "are not published, the next invocation retries them", file=sys.stderr)
        return 1
    every = wanted(config, plan.jobs(config))
    if args.commit and all(is_published(results, published, str(results / record), every)
                           for record in every):
        publish_report(bench, published.parents[1], commit=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The `dmlbench` command: the workflow's rules call it, users can too.

    dmlbench datasets                 the data-set registry as a table
    dmlbench methods                  the registered methods
    dmlbench check-config FILE        validate a config (schema + names + parameters)
    dmlbench dataset NAME             build and cache one data set
    dmlbench split NAME ...           make and save one data set's splits
    dmlbench run --job JSON           run one job, write its record file
    dmlbench ingest FILE...           import record files into MLflow
    dmlbench report ...               build the HTML report from MLflow
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _datasets(args) -> None:
    from .data import PAPERS, REGISTRY, cache

    rows = []
    for spec in REGISTRY.values():
        if not spec.available:
            status = "unavailable"
        elif cache.paths(spec.name, args.cache)[1].exists():
            status = "cached"
        elif spec.embedded:
            status = "embedded"
        else:
            status = "needs download"
        papers = ", ".join(PAPERS[p] for p in spec.papers)
        rows.append((spec.name, spec.n, spec.d, spec.n_classes, spec.source, status, papers,
                     spec.notes or spec.reason))
    header = ("name", "n", "d", "classes", "source", "status", "papers", "notes")
    _print_table(header, rows, wrap_last=not args.full)


def _print_table(header, rows, wrap_last=True) -> None:
    import shutil
    import textwrap

    cols = list(zip(header, *rows))
    widths = [max(len(str(v)) for v in col) for col in cols[:-1]]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    indent = sum(widths) + 2 * len(widths)
    last = max(20, shutil.get_terminal_size((160, 20)).columns - indent) if wrap_last else 10**6
    for row in [header, *rows]:
        lines = textwrap.wrap(str(row[-1]), last) or [""]
        print(fmt.format(*map(str, row[:-1])) + "  " + lines[0])
        for line in lines[1:]:
            print(" " * indent + line)


def _methods(args) -> None:
    from .methods import REGISTRY

    rows = [(name, cls.family, cls.kind, ", ".join(sorted(cls._get_param_names())))
            for name, cls in sorted(REGISTRY.items())]
    _print_table(("name", "family", "kind", "parameters"), rows)


def _check_config(args) -> None:
    from . import config

    cfg = config.load(args.config)
    print(f"{args.config}: valid; {len(cfg['datasets'])} data sets, {len(cfg['methods'])} "
          f"methods, {len(config.jobs(cfg))} jobs")


def _dataset(args) -> None:
    from . import data

    ds = data.ensure(args.name, args.cache)
    print(f"{ds.name}: n = {ds.meta['n']}, d = {ds.meta['d']}, classes = {ds.meta['class_counts']}")


def _split(args) -> None:
    from . import data, protocols

    ds = data.load(args.name, args.cache)
    protocol = json.loads(args.protocol)
    splits = protocols.make_splits(ds.y, protocol, args.seed, given=ds.given_split,
                                   dataset=args.name, drop_classes_below=args.drop_classes_below)
    protocols.save_splits(args.out, splits, protocol, args.seed, ds.meta["sha256"])
    print(f"{args.name}: {len(splits)} splits -> {args.out}")


def _run(args) -> None:
    from . import job, records

    spec = json.loads(args.job)
    split_records = job.run(spec, threads=args.threads, progress=True)
    records.write(args.out, split_records)
    for record in split_records:
        acc = {k: round(v, 4) for k, v in record["metrics"].items() if k.startswith("accuracy")}
        print(f"{spec['dataset']['label']} / {spec['method']['label']} / split "
              f"{record['split']['index']}: {acc}", file=sys.stderr)


def _ingest(args) -> None:
    from . import tracking
    from .files import write_json

    paths = list(args.records)
    if args.records_from:
        paths += [line for line in Path(args.records_from).read_text().splitlines() if line]
    config = json.loads(args.config_json) if args.config_json else None
    summary = tracking.ingest(paths, experiment=args.experiment, config=config)
    if args.out:
        write_json(args.out, summary)
    print(f"MLflow {summary['tracking_uri']}, experiment '{summary['experiment']}': "
          f"{summary['counts']}", file=sys.stderr)


def _report(args) -> None:
    from . import report
    from .files import read_json

    keys = None
    experiment = args.experiment
    if args.tracking:
        tracked = read_json(args.tracking)
        keys = list(tracked["parents"])
        experiment = experiment or tracked["experiment"]
    if not experiment:
        raise ValueError("give --experiment NAME or --tracking FILE")
    out = args.out or f"reports/{experiment}"
    index = report.build(experiment, out, parent_keys=keys, title=args.title,
                         description=args.description or "")
    print(f"report: {index}", file=sys.stderr)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dmlbench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("datasets", help="list the registered data sets")
    s.add_argument("--cache", default="resources", help="data cache directory (default resources)")
    s.add_argument("--full", action="store_true", help="do not wrap the notes column")
    s.set_defaults(func=_datasets)

    s = sub.add_parser("methods", help="list the registered methods")
    s.set_defaults(func=_methods)

    s = sub.add_parser("check-config", help="validate a benchmark config")
    s.add_argument("config")
    s.set_defaults(func=_check_config)

    s = sub.add_parser("dataset", help="build and cache one data set")
    s.add_argument("name")
    s.add_argument("--cache", default="resources")
    s.set_defaults(func=_dataset)

    s = sub.add_parser("split", help="make and save the splits of one data set")
    s.add_argument("name")
    s.add_argument("--protocol", required=True, help="protocol as JSON")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--drop-classes-below", type=int, default=0)
    s.add_argument("--cache", default="resources")
    s.add_argument("--out", required=True)
    s.set_defaults(func=_split)

    s = sub.add_parser("run", help="run one job: a method on a data set, for some of its splits")
    s.add_argument("--job", required=True, help="job spec as JSON (dmlbench.config.job_spec)")
    s.add_argument("--threads", type=int, default=1, help="BLAS threads")
    s.add_argument("--out", required=True, help="record file to write")
    s.set_defaults(func=_run)

    s = sub.add_parser("ingest", help="import record files into MLflow")
    s.add_argument("records", nargs="*", help="record files (results/<benchmark>/runs/...)")
    s.add_argument("--records-from", help="file listing record files, one per line")
    s.add_argument("--experiment", help="MLflow experiment (default: the records' benchmark)")
    s.add_argument("--config-json", help="the benchmark config (JSON), kept in MLflow for reports")
    s.add_argument("--out", help="write the run ids as JSON here")
    s.set_defaults(func=_ingest)

    s = sub.add_parser("report", help="build the HTML report from MLflow")
    s.add_argument("--experiment", help="MLflow experiment (benchmark name)")
    s.add_argument("--tracking", help="tracking.json of the track job: report only those runs")
    s.add_argument("--out", help="output directory (default reports/<experiment>)")
    s.add_argument("--title")
    s.add_argument("--description")
    s.set_defaults(func=_report)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        args.func(args)
    except (ValueError, KeyError, FileNotFoundError, IndexError) as err:
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        print(f"dmlbench {args.command}: error: {message}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The `dmlbench` command: the workflow's rules call it, users can too.

    dmlbench datasets                 the data-set registry as a table
    dmlbench methods                  the registered methods
    dmlbench check-config FILE        validate a config (schema + names + parameters)
    dmlbench dataset NAME...          build and cache data sets (downloads: --mirror, --offline)
    dmlbench split NAME ...           make and save one data set's splits
    dmlbench run --job JSON           run one job, write its record file
    dmlbench mvce-validate --job JSON check the MVCE solvers on one data set (each vs CVXPY)
    dmlbench ingest FILE...           import record files (and MVCE validation files) into MLflow
    dmlbench report ...               build the HTML report from MLflow
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

PAPER_IDS = ("am07", "am17", "ch12", "on11", "sh17")  # dmlbench.data.PAPERS, without importing it


def _datasets(args) -> None:
    from .data import PAPERS, REGISTRY, cache, generators

    specs = [spec for spec in REGISTRY.values() if not args.paper or args.paper in spec.papers]
    if args.files:
        rows = [(spec.name, f"{spec.group}/{f.name}", " ".join(f.urls) or "(scikit-learn fetcher)")
                for spec in specs if spec.downloads for f in spec.files]
        _print_table(("name", "mirror path", "public homes"), rows, wrap_last=not args.full)
        return
    rows = []
    for spec in specs:
        if not spec.available:
            status = "unavailable"
        elif cache.paths(spec.name, args.cache)[1].exists():
            status = "cached"
        elif spec.embedded:
            status = "embedded"
        else:
            status = "needs download"
        papers = ",".join(spec.papers)
        notes = "; ".join(filter(None, [spec.reason, spec.notes, spec.origin if args.full else ""]))
        rows.append((spec.name, spec.n, spec.d, spec.n_classes, spec.source, status, papers, notes))
    if not args.paper:
        rows.append(("gauss-d<d>", 1000, "d", 2, "generator", "embedded", "",
                     "any d; also gauss-d<d>-n<n>-c<classes>-s<seed> (each part optional): "
                     f"classes N({generators.GAUSS_SEPARATION:g} e_c, I_d) for hubness studies"))
        rows.append(("<generator>-s<seed>", "", "", "", "generator", "embedded", "",
                     "another draw of monks-1/2/3, crings or waveform, e.g. crings-s3"))
    header = ("name", "n", "d", "classes", "source", "status", "papers", "notes")
    _print_table(header, rows, wrap_last=not args.full)
    print("\npapers: " + "; ".join(f"{k} = {v}" for k, v in PAPERS.items()))


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

    for name in args.names:
        ds = data.ensure(name, args.cache, mirror=args.mirror, offline=args.offline)
        print(f"{ds.name}: n = {ds.meta['n']}, d = {ds.meta['d']}, "
              f"classes = {ds.meta['class_counts']}")


def _split(args) -> None:
    from . import data
    from .run import protocols

    ds = data.load(args.name, args.cache)
    protocol = json.loads(args.protocol)
    splits = protocols.make_splits(ds.y, protocol, args.seed, given=ds.given_split,
                                   dataset=args.name, drop_classes_below=args.drop_classes_below)
    protocols.save_splits(args.out, splits, protocol, args.seed, ds.meta["sha256"])
    print(f"{args.name}: {len(splits)} splits -> {args.out}")


def _run(args) -> None:
    from . import records
    from .run import job

    spec = json.loads(args.job)
    split_records = job.run(spec, threads=args.threads, progress=True, record_path=args.out)
    records.write(args.out, split_records)
    for record in split_records:
        acc = {k: round(v, 4) for k, v in record["metrics"].items() if k.startswith("accuracy")}
        print(f"{spec['dataset']['label']} / {spec['method']['label']} / split "
              f"{record['split']['index']}: {acc}", file=sys.stderr)


def _mvce_validate(args) -> None:
    from . import data, records
    from .files import write_json
    from .run import preprocessing
    from .studies import mvce_validation

    spec = json.loads(args.job)
    ds = data.load(spec["dataset"]["name"], spec["cache"])
    X, _, _ = preprocessing.fit_transform(spec["preprocess"], ds.X, ds.X[:1])
    results = mvce_validation.run(X, spec["settings"])
    document = {
        "kind": mvce_validation.KIND, "schema_version": mvce_validation.SCHEMA_VERSION,
        "benchmark": spec["benchmark"],
        "dataset": {**spec["dataset"], "n": int(X.shape[0]), "d": int(X.shape[1]),
                    "sha256": ds.meta["sha256"]},
        "preprocess": spec["preprocess"], "settings": spec["settings"], "results": results,
        "environment": {"versions": records.package_versions(), "git_commit": records.git_commit()},
    }
    write_json(args.out, document)
    for row in results:
        status = "passed" if row["check_passed"] else f"FAILED ({row['reference_failures']} " \
            "reference failures)"
        print(f"{spec['dataset']['label']} m = {row['m']}: check {status}, rel. log-det diff "
              f"{row.get('rel_logdet_diff_max', float('nan')):.1e}, CVXPY / solver (auto) time "
              f"{row.get('speed_ratio', float('nan')):.1f}", file=sys.stderr)


def _ingest(args) -> None:
    from .files import write_json
    from .records import tracking

    paths = list(args.records)
    if args.records_from:
        paths += [line for line in Path(args.records_from).read_text().splitlines() if line]
    config = json.loads(args.config_json) if args.config_json else None
    summary = tracking.ingest(paths, experiment=args.experiment, config=config,
                              validation=args.validation)
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
    s.add_argument("--full", action="store_true",
                   help="do not wrap the notes column; add each set's origin")
    s.add_argument("--paper", choices=sorted(PAPER_IDS), help="only the sets of one paper")
    s.add_argument("--files", action="store_true",
                   help="list the downloaded files: mirror path and public homes")
    s.set_defaults(func=_datasets)

    s = sub.add_parser("methods", help="list the registered methods")
    s.set_defaults(func=_methods)

    s = sub.add_parser("check-config", help="validate a benchmark config")
    s.add_argument("config")
    s.set_defaults(func=_check_config)

    s = sub.add_parser("dataset", help="build and cache data sets (downloading them if needed)")
    s.add_argument("names", nargs="+", metavar="name")
    s.add_argument("--cache", default="resources")
    s.add_argument("--mirror", help="directory or base URL tried before the public homes")
    s.add_argument("--offline", action="store_true",
                   help="never contact the public homes (embedded, cached or mirror only)")
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

    s = sub.add_parser("mvce-validate", help="check the MVCE solvers on one data set")
    s.add_argument("--job", required=True,
                   help="validation spec as JSON (dmlbench.config.mvce_validation_spec)")
    s.add_argument("--out", required=True, help="JSON file to write")
    s.set_defaults(func=_mvce_validate)

    s = sub.add_parser("ingest", help="import record files into MLflow")
    s.add_argument("records", nargs="*", help="record files (results/<benchmark>/runs/...)")
    s.add_argument("--records-from", help="file listing record files, one per line")
    s.add_argument("--validation", nargs="*", default=[],
                   help="MVCE validation files (results/<benchmark>/mvce_validation/...)")
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
    from .data.download import DownloadError

    args = parser().parse_args(argv)
    try:
        args.func(args)
    except (ValueError, KeyError, FileNotFoundError, IndexError, DownloadError) as err:
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        print(f"dmlbench {args.command}: error: {message}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

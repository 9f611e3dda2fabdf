"""The `dmlbench` command: the workflow's rules call it, users can too.

    dmlbench datasets                 the data-set registry as a table
    dmlbench methods                  the registered methods
    dmlbench check-config FILE        validate a config (schema + names + parameters)
    dmlbench dataset NAME...          build and cache data sets (downloads: --mirror, --offline)
    dmlbench split NAME ...           make and save one data set's splits
    dmlbench prepare NAME...          both: data sets and their split files (the workflow)
    dmlbench run --job JSON           run one job, write its record file (--batch: several)
    dmlbench study KIND --job JSON    run one job of a side study (e.g. mvce_validation)
    dmlbench ingest FILE...           import record files (and study documents) into MLflow
    dmlbench report ...               build the HTML report from MLflow (or from published records)
    dmlbench publish FILE...          put the records a report was built from beside it
    dmlbench scoreboard [DIR]         write the published reports' entry page, DIR/index.html
"""

from __future__ import annotations

import argparse
import errno
import faulthandler
import json
import logging
import os
import shlex
import shutil
import sys
import textwrap
from pathlib import Path

from . import deferred
from ._version import __version__

# scikit-learn and some of these modules import pandas and pyarrow at start-up, which most verbs
# never use: imported when first used (dmlbench.deferred)
with deferred.deferring("pandas", "pyarrow"):
    from . import config, data, records, studies
    from .data import PAPERS, REGISTRY, cache, from_file, generators, lock
    from .data.download import DownloadError
    from .files import check_writable, read_json, write_json
    from .methods import REGISTRY as METHODS
    from .methods import plugins, search_spaces, space_resolution
    from .methods import registry as method_registry
    from .records import tracking
    from .run import job, plan, preprocessing, protocols, tuning

# `report` and `publish` (which rebuilds reports) are imported by their verbs only (and by
# `scoreboard`, a module of `report`): they load matplotlib and seaborn, which no other verb needs.


def _datasets(args) -> None:
    specs = [spec for spec in REGISTRY.values() if not args.paper or args.paper in spec.papers]
    if args.files:
        pins = {"published": "published checksum", "debian": "Debian index",
                "arrays": "array sha256", "lock": "lock", "unpinned": "UNPINNED"}
        rows = [(spec.name, f"{spec.group}/{f.name}", pins[lock.pin_of(spec, f)], _homes(f))
                for spec in specs if spec.downloads for f in spec.files]
        _print_table(("name", "mirror path", "pinned by", "public homes"), rows,
                     wrap_last=not args.full)
        print("\npinned by: the checksum its source publishes; Debian index: its content in a "
              "Debian package whose .deb has the sha256 of Debian's signed index (mirror path "
              "debian/<.deb>); the sha256 of the data set's "
              "arrays (registry); or the sha256 of a genuine copy in the download lock "
              f"{lock.lock_path()}. UNPINNED: no genuine copy could be pinned (the lock says "
              f"why); refused unless you pass {lock.TRUST_OPTION}, and then marked unpinned "
              "in every record.")
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


def _homes(file) -> str:
    """A downloaded file's public homes, its Debian package's (with the member) last."""
    homes = list(file.urls)
    if file.debian is not None:
        homes.append(f"{file.debian.package.urls[0]} ({file.debian.path})")
    return " ".join(homes)


def _print_table(header, rows, wrap_last=True) -> None:
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


def _spaces() -> None:
    """Every registered method's search space (`methods.search_spaces`), as declared: simplest
    value first, ranges and caps relative to the training part."""
    rows = []
    for name, cls in sorted(METHODS.items()):
        space = search_spaces.space_of(name, cls)
        values = "; ".join(f"{key}: {search_spaces.describe(entry)}"
                           for key, entry in space.items())
        rows.append((name, str(search_spaces.grid_size(space)), values or "(none)"))
    _print_table(("name", "grid", "search space (first value = simplest)"), rows)
    print("\nequal tuning (config `tuning`, docs/tuning.md) resolves each space on the inner "
          "training parts (n, d, classes, smallest_class, largest_class), drops what the method "
          "cannot take there, and tries all feasible points when they are at most `budget`, "
          "else the first and `budget - 1` drawn per data set and split; `search_space:` under "
          "a method replaces its space; --dataset NAME shows them resolved")


def _resolved_spaces(args) -> None:
    """Each method's search space resolved on the first training part of data set `args.
    dataset` (its label in `--config`, else a registered name under the defaults): the values
    taken, what was dropped and why, and the candidates of the budget."""
    if args.config:
        cfg = plan.check(config.load(args.config), config_files=[args.config])
        if args.dataset not in cfg["datasets"]:
            raise ValueError(f"--dataset: '{args.dataset}' is not a data-set label of "
                             f"{args.config}; its labels are {sorted(cfg['datasets'])}")
        if cfg.get("tuning") is None:
            raise ValueError(f"{args.config} has no `tuning` block: its methods are not tuned")
    else:
        cfg = plan.check({"benchmark": "spaces", "data": {"cache": args.cache},
                          "datasets": {args.dataset: None},
                          "methods": dict.fromkeys(sorted(METHODS)), "tuning": {}})
    labels = list(cfg["methods"])
    first = plan.job_spec(cfg, args.dataset, labels[0], [0])
    mirror, offline = config.data_source(cfg)
    ds = data.ensure(first["dataset"]["name"], config.cache_dir(cfg), mirror=mirror,
                     offline=offline)
    X_train, y_train = tuning_split(first, ds)
    settings = first["tuning"]
    fold = tuning.make_inner_folds(y_train, settings["folds"], settings["seed"], 0)
    parts = tuning.inner_parts(X_train, y_train, fold)
    facts = ", ".join(f"{k} = {v}" for k, v in space_resolution.facts_of(parts).as_dict().items())
    print(f"{args.dataset}: split 0, {y_train.size} training points; its {settings['folds']} "
          f"inner training parts have {facts}\n")
    for label in labels:
        spec = plan.job_spec(cfg, args.dataset, label, [0])
        points, tried, fields = tuning.candidates(spec["tuning"], job.method_class(spec),
                                                  spec["method"]["params"], parts,
                                                  spec["dataset"]["name"], 0)
        print(f"{label}: {fields['grid_size']} feasible points, {len(tried)} candidates "
              f"(budget {fields['budget']})")
        for name, values in fields["resolved"]:
            print(f"  {name}: {', '.join(map(str, values))}")
        for drop in fields["dropped"]:
            print(f"  dropped: {drop['reason']}")


def tuning_split(spec: dict, ds) -> tuple:
    """The preprocessed training part of split 0 of a job spec's data set (its protocol)."""
    splits = protocols.make_splits(ds.y, spec["protocol"], spec["seed"], given=ds.given_split,
                                   dataset=ds.name,
                                   drop_classes_below=spec["drop_classes_below"] or 0,
                                   given_folds=ds.given_folds)
    X_train, _, _ = preprocessing.fit_transform_rows(spec["preprocess"], ds.X, splits[0].train,
                                                     splits[0].test)
    return X_train, ds.y[splits[0].train]


def _methods(args) -> None:
    if args.dataset and not args.spaces:
        raise ValueError("--dataset goes with --spaces (the spaces resolved on its data)")
    if args.spaces:
        return _resolved_spaces(args) if args.dataset else _spaces()
    rows = [(name, ", ".join(dict.fromkeys([cls.__name__, method_registry.import_alias(name)])),
             cls.family, cls.kind, ", ".join(sorted(cls.parameter_names())))
            for name, cls in sorted(METHODS.items())]
    _print_table(("name", "from dmlbench import", "family", "kind", "parameters"), rows)
    entry_points = plugins.entry_point_names()
    if entry_points:
        print(f"\ninstalled plug-ins (entry points {plugins.ENTRY_POINT_GROUP}): "
              + ", ".join(f"{n} = {plugins.entry_point(n)}" for n in entry_points))
    print("\nyour own method: `class: <file>.py:<Class>` or `<module>:<Class>` in a config "
          "(docs/your-method.md); as a library: `from dmlbench import KLHP` (either name of its "
          "row: its class name, or its name upper-cased)")


def _check_config(args) -> None:
    cfg = plan.check(config.load(args.config), config_files=[args.config])
    print(f"{args.config}: valid; {plan.summary(cfg)}")


def _json_option(text: str, option: str, source: str = ""):
    """The JSON value of a command-line option; an error naming the option (and `source`,
    where the text came from, e.g. standard input) when it is not JSON."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        shown = text if len(text) <= 80 else text[:77] + "..."
        raise ValueError(f"{option}{source} is not JSON ({err.msg} at line {err.lineno}, "
                         f"column {err.colno}): {shown!r}") from None


def _ensure(name: str, args) -> data.Dataset:
    """Data set `name` from the cache, built (and downloaded) first if missing, with the
    options of `dmlbench dataset` / `prepare`; prints its size."""
    given = _json_option(args.files, "--files") if args.files else {}
    spec = from_file.spec(from_file.FileSource.from_json(given[name])) if name in given else None
    ds = data.ensure(name, args.cache, mirror=args.mirror, offline=args.offline,
                     trust_unpinned=args.trust_unpinned, spec=spec)
    print(f"{ds.name}: n = {ds.meta['n']}, d = {ds.meta['d']}, "
          f"classes = {ds.meta['class_counts']}")
    return ds


def _dataset(args) -> None:
    for name in args.names:
        _ensure(name, args)


def _write_splits(ds: data.Dataset, out: str, protocol: dict, seed: int,
                  drop_classes_below: int, train_size: int | None = None) -> None:
    """The splits of `protocol`, their training parts subsampled to `train_size` when given (a
    learning curve: `protocols.subsamples`)."""
    splits = protocols.make_splits(ds.y, protocol, seed, given=ds.given_split, dataset=ds.name,
                                   drop_classes_below=drop_classes_below,
                                   given_folds=ds.given_folds)
    if train_size is not None:
        splits = protocols.subsamples(splits, ds.y, train_size, seed, ds.name)
    protocols.save_splits(out, splits, protocol, seed, ds.meta["sha256"], train_size)
    size = "" if train_size is None else f" of {train_size} training points"
    print(f"{ds.name}: {len(splits)} splits{size} -> {out}")


def _split(args) -> None:
    _write_splits(data.load(args.name, args.cache), args.out, _json_option(args.protocol, "--protocol"),
                  args.seed, args.drop_classes_below, args.train_size)


def _prepare(args) -> None:
    """Each data set of `args.names` and its split files (`--splits`; an entry names its data
    set by `dataset`, which may be left out when there is one name). A split file that exists
    and was made with the same protocol and seed from the cached data set as it is is kept as
    it is (`protocols.is_split_file_of`): the workflow's prepare step touches its outputs, and
    the jobs count a split file by its content. A data set that fails does not stop the others;
    the error lists every one that failed."""
    files = _json_option(args.splits, "--splits")
    if not isinstance(files, dict):
        raise ValueError("--splits must be a JSON object {split file: {protocol, seed, "
                         f"drop_classes_below, dataset}}, got {args.splits[:200]}")
    names = list(dict.fromkeys(args.names))
    by_name: dict[str, dict] = {name: {} for name in names}
    for out, entry in files.items():
        unknown = set(entry) - {"protocol", "seed", "drop_classes_below", "dataset", "train_size"}
        if unknown or "protocol" not in entry:
            raise ValueError(f"--splits entry of {out} needs 'protocol' (and may give 'seed', "
                             f"'drop_classes_below', 'train_size', 'dataset'); unknown keys: "
                             f"{sorted(unknown)}")
        name = entry.get("dataset", names[0] if len(names) == 1 else None)
        if name not in by_name:
            raise ValueError(f"--splits entry of {out}: " + (
                f"'dataset' must be one of the names given ({', '.join(names)}), not '{name}'"
                if name is not None else "give its 'dataset' (several names are given)"))
        by_name[name][out] = entry
    failed = []
    for name, entries in by_name.items():
        try:
            ds = _ensure(name, args)
            for out, entry in entries.items():
                protocol, seed = entry["protocol"], int(entry.get("seed", 0))
                size = entry.get("train_size")
                if protocols.is_split_file_of(out, protocol, seed, ds.meta["sha256"], size):
                    print(f"{ds.name}: {out} is current, kept")
                    continue
                _write_splits(ds, out, protocol, seed, int(entry.get("drop_classes_below", 0)),
                              size)
        except (ValueError, KeyError, FileNotFoundError, IndexError, DownloadError) as err:
            if len(names) == 1:
                raise
            message = err.args[0] if isinstance(err, KeyError) and err.args else err
            print(f"dmlbench prepare: error: {name}: {message}", file=sys.stderr)
            failed.append(f"{name} ({message})")
    if failed:
        raise ValueError(f"{len(failed)} of {len(names)} data sets failed: {'; '.join(failed)}"
                         f"; the others were prepared")


_RUN_USAGE = ("give either --job SPEC with --out FILE, or --batch JSON (the workflow's steps); "
              "a benchmark config runs through Snakemake: snakemake --cores 2 --configfile "
              "CONFIG.yaml")


def _workflow_command(config_file: str) -> str:
    """How to run the benchmark of `config_file`: the snakemake command, from the folder of the
    Snakefile (this one, or the repository this package lies in)."""
    path = Path(config_file)
    content = config.read(path)  # FileNotFoundError, or a one-line YAML error
    if not isinstance(content, dict) or not {"benchmark", "datasets", "methods"} & set(content):
        raise ValueError(f"{config_file} is not a benchmark config (it has no `benchmark`, "
                         f"`datasets` or `methods`); {_RUN_USAGE}")
    here = Path.cwd()
    root = next((d for d in (here, Path(__file__).resolve().parents[2])
                 if (d / "Snakefile").is_file()), None)
    shown = shlex.quote(os.path.relpath(path.resolve(), root) if root is not None and
                        path.resolve().is_relative_to(root) else str(path.resolve()))
    command = f"snakemake --cores 2 --configfile {shown}"
    where = ("" if root == here else f"cd {shlex.quote(str(root))} && " if root is not None else
             "(in a clone of the dmlbench repository, the folder of its Snakefile) ")
    return (f"{config_file} is a benchmark config: configs run through Snakemake, which plans "
            f"the jobs and calls `dmlbench run --batch` for each step. Run it with\n  {where}"
            f"{command}\n(`--cores N`: as many jobs at once; `snakemake -n ...` lists the jobs "
            f"without running them; `dmlbench check-config {shlex.quote(config_file)}` checks it; "
            "docs/usage.md)")


def _run(args) -> None:
    if args.config is not None:
        if args.job is not None or args.batch is not None:
            raise ValueError("give a config (CONFIG.yaml) or --job / --batch, not both")
        raise ValueError(_workflow_command(args.config))
    if (args.job is None) == (args.batch is None):
        raise ValueError(_RUN_USAGE)
    _faulthandler()
    if args.batch is not None:
        # "-": the list comes on standard input (the workflow's steps: a batch of many jobs
        # outgrows the kernel's 128 KiB limit on one command-line argument)
        batch = (_json_option(sys.stdin.read(), "--batch", " (-: read from standard input)")
                 if args.batch == "-" else _json_option(args.batch, "--batch"))
        ran = job.run_batch(batch, threads=args.threads)
        missing = [entry for entry in batch if not Path(entry["out"]).exists()]
        if missing:  # every job ended well, yet: a bug, said in one line rather than by Snakemake
            raise ValueError(f"{job.what(missing[0]['job'])} did not write its record file "
                             f"{missing[0]['out']}" + (f" (nor {len(missing) - 1} other jobs "
                                                       "theirs)" if len(missing) > 1 else ""))
    else:
        if args.out is None:
            raise ValueError("--job needs --out FILE (the record file to write)")
        check_writable(args.out)
        spec = _json_option(args.job, "--job")
        records.write(args.out, job.run(spec, threads=args.threads, progress=True,
                                        record_path=args.out))
        ran = [{"job": spec, "out": args.out}]
    for entry in ran:
        spec = entry["job"]
        for record in records.read(entry["out"]):
            acc = {k: round(v, 4) for k, v in record["metrics"].items()
                   if k.startswith("accuracy")}
            print(f"{spec['dataset']['label']} / {spec['method']['label']} / split "
                  f"{record['split']['index']}: "
                  + ("over budget" if "over_budget" in record else str(acc)), file=sys.stderr)


def _faulthandler() -> None:
    """A crash in compiled code (a segmentation fault, an abort) prints where the interpreter
    was in every thread, to the process's standard error (the job's log)."""
    if not faulthandler.is_enabled():
        faulthandler.enable(file=2, all_threads=True)


def _study(args) -> None:
    _faulthandler()
    study = studies.get(args.kind)
    check_writable(args.out)
    document = study.run(_json_option(args.job, "--job"))
    studies.write(args.out, document)
    for line in study.summary_lines(document):
        print(line, file=sys.stderr)


def _ingest(args) -> None:
    paths = list(args.records)
    if args.records_from:
        paths += [line for line in Path(args.records_from).read_text().splitlines() if line]
    config = _json_option(args.config_json, "--config-json") if args.config_json else None
    if config:
        _set_aside_stale(config, paths)
    tracked = []
    for path in args.documents:
        try:
            tracked += studies.tracked_runs(records.load(path))
        except records.UnreadableRecord as err:  # the study job reruns, as for a record
            raise ValueError(f"{err}; set aside as {records.set_aside(path).name}: the next "
                             "workflow run reruns the job that writes it") from None
    _quiet_mlflow()
    summary = tracking.ingest(paths, experiment=args.experiment, config=config, tracked=tracked,
                              set_aside_unreadable=True, progress=True)
    if args.out:
        write_json(args.out, summary)
    print(f"MLflow {tracking.store_label(summary['tracking_uri'])}, experiment "
          f"'{summary['experiment']}': {summary['counts']}", file=sys.stderr)


def _set_aside_stale(config: dict, paths: list[str]) -> None:
    """Refuse to track record files that hold other results than their jobs ask for now
    (`run.job.stale_records`): each is set aside as `<name>.stale` and named, so the next
    workflow run computes it."""
    stale = job.stale_records(config, paths)
    if stale:
        raise ValueError("\n".join(
            f"{path}: not the results its job asks for now ({why}: the step that writes it "
            "failed or was stopped, and Snakemake put back its previous version); set aside "
            f"as {records.set_aside(path, '.stale').name}: the next workflow run computes it"
            for path, why in stale))


def _report(args) -> None:
    from . import publish, report  # matplotlib and seaborn: this verb only (see the imports)

    _quiet_mlflow()
    if args.settings and not args.records:
        raise ValueError("--settings updates a published config.json: give --records DIR too")
    if args.records:
        if args.settings:
            changed = publish.update_settings(args.records, config.load(args.settings))
            print(f"{Path(args.records).parent / publish.CONFIG}: "
                  + (f"updated {', '.join(changed)} from {args.settings}, manifest resealed"
                     if changed else f"report settings already those of {args.settings}"),
                  file=sys.stderr)
        missing = _check_published_records(args.records, publish.verified_files(args.records))
        tracked = read_json(args.tracking) if args.tracking else None
        publish.rebuild(args.records, args.out or "reports/rebuilt", progress=True,
                        workers=args.workers, tracked_summary=tracked, missing=missing)
        return
    keys = config_run_id = None
    experiment = args.experiment
    if args.tracking:
        tracked = read_json(args.tracking)
        keys = list(tracked["parents"])
        experiment = experiment or tracked["experiment"]
        config_run_id = tracked.get("config_run_id")
    if not experiment:
        raise ValueError("give --experiment NAME, --tracking FILE or --records DIR")
    out = args.out or f"reports/{experiment}"
    links = publish.record_links(Path(args.manifest).parent, out) if args.manifest else None
    report.build(report.runs.MlflowRuns(experiment), out, parent_keys=keys, title=args.title,
                 description=args.description or "", config_run_id=config_run_id,
                 manifest=args.manifest, record_links=links, workers=args.workers,
                 progress=True)


def _check_published_records(records_dir: str, verified: tuple) -> list[str]:
    """Refuse a published records folder holding a record that is not of the job its
    config.json gives it (`plan.record_mismatch`: other settings, another plug-in class, a
    data set or method the config lacks), naming the first one. Returns the config's
    "data set / method" pairs that have no record (a run still in progress)."""
    record_paths, _, published_config = verified
    published_config = config.with_defaults(published_config)  # one written by an older schema
    checked = set()  # the splits of one job: one check
    for path in record_paths:
        for record in records.load(path)["records"]:  # the manifest's sha256 vouches for it
            method = record["method"]
            job_of = json.dumps([record["parent_key"], record["dataset"]["label"],
                                 method["label"], method["config_params"],
                                 method.get("plugin")], sort_keys=True)
            if job_of in checked:
                continue
            checked.add(job_of)
            why = plan.record_mismatch(published_config, record)
            if why is not None:
                config_path = Path(records_dir).parent / "config.json"
                raise ValueError(f"{path}: not a record of the job {config_path} gives it "
                                 f"({why}); publish the records of one config together (the "
                                 "workflow's publish step)")
    present = {tuple(json.loads(job_of)[1:3]) for job_of in checked}
    return [f"{ds} / {method}" for method in published_config["methods"]
            for ds in config.method_datasets(published_config, method)
            if (ds, method) not in present]


def _quiet_mlflow() -> None:
    """Keep MLflow's INFO lines (the store's set-up, its migrations) and its download bars off
    the console: read when mlflow is imported, which these verbs do later."""
    os.environ.setdefault("MLFLOW_LOGGING_LEVEL", "WARNING")
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    for name in ("mlflow", "alembic"):  # in case mlflow is imported already
        logging.getLogger(name).setLevel(logging.WARNING)


def _publish(args) -> None:
    from . import publish  # imports `report` (matplotlib, seaborn) to rebuild reports

    manifest = publish.publish(args.records, args.documents,
                               _json_option(args.config_json, "--config-json"),
                               args.out, args.results)
    print(f"published {len(args.records)} record files and {len(args.documents)} documents: "
          f"{manifest}", file=sys.stderr)


def _scoreboard(args) -> None:
    from .report import scoreboard  # matplotlib and seaborn: this verb only (see the imports)

    print(f"wrote {scoreboard.write(args.reports)}", file=sys.stderr)


def _dataset_options(s: argparse.ArgumentParser) -> None:
    """The options of the verbs that build data sets (`dataset`, `prepare`)."""
    s.add_argument("--cache", default="resources",
                   help="data cache directory (default resources, the workflow's data.cache)")
    s.add_argument("--mirror", default=os.environ.get("DMLBENCH_MIRROR") or None,
                   help="directory or base URL tried before the public homes (default: "
                        "$DMLBENCH_MIRROR, which the workflow sets from data.mirror)")
    s.add_argument("--offline", action="store_true",
                   default=os.environ.get("DMLBENCH_OFFLINE") == "1",
                   help="never contact the public homes (embedded, cached or mirror only; "
                        "default: $DMLBENCH_OFFLINE = 1, which the workflow sets from data.offline)")
    s.add_argument("--trust-unpinned", action="store_true",
                   default=os.environ.get("DMLBENCH_TRUST_UNPINNED") == "1",
                   help="use downloaded files that have no pin (`dmlbench datasets --files`: "
                        "UNPINNED); their records are marked unpinned (default: "
                        "$DMLBENCH_TRUST_UNPINNED = 1, which the workflow sets from "
                        "data.trust_unpinned)")
    s.add_argument("--files", default=os.environ.get(from_file.ENVIRONMENT) or None,
                   help="the data sets given by a file in a config: JSON {cache name: source} "
                        f"(default: ${from_file.ENVIRONMENT}, which the workflow sets)")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dmlbench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}",
                   help="print dmlbench's version and exit")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("datasets", help="list the registered data sets")
    s.add_argument("--cache", default="resources", help="data cache directory (default resources)")
    s.add_argument("--full", action="store_true",
                   help="do not wrap the notes column; add each set's origin")
    s.add_argument("--paper", choices=sorted(PAPERS), help="only the sets of one paper")
    s.add_argument("--files", action="store_true",
                   help="list the downloaded files: mirror path and public homes")
    s.set_defaults(func=_datasets)

    s = sub.add_parser("methods", help="list the registered methods")
    s.add_argument("--spaces", action="store_true",
                   help="print each method's search space for equal tuning (docs/tuning.md)")
    s.add_argument("--dataset", metavar="NAME",
                   help="with --spaces: the spaces resolved on the first training part of this "
                        "data set (a label of --config, else a registered name)")
    s.add_argument("--config", metavar="FILE",
                   help="with --dataset: the config whose protocol, preprocessing, tuning and "
                        "methods apply (default: a registered set under the defaults)")
    s.add_argument("--cache", default="resources",
                   help="data cache directory without --config (default resources)")
    s.set_defaults(func=_methods)

    s = sub.add_parser("check-config", help="validate a benchmark config")
    s.add_argument("config", help="the config file (YAML), e.g. config/config.yaml")
    s.set_defaults(func=_check_config)

    s = sub.add_parser("dataset", help="build and cache data sets (downloading them if needed)")
    s.add_argument("names", nargs="+", metavar="name",
                   help="registered data sets (`dmlbench datasets`), or cache names of --files")
    _dataset_options(s)
    s.set_defaults(func=_dataset)

    s = sub.add_parser("prepare", help="build and cache data sets (downloading them if needed) "
                                       "and write their split files (the workflow's prepare "
                                       "steps)")
    s.add_argument("names", nargs="+", metavar="name",
                   help="registered data sets (`dmlbench datasets`), or cache names of --files")
    s.add_argument("--splits", default="{}",
                   help="the split files to write, as JSON {file: {\"protocol\": {...}, "
                        "\"seed\": 0, \"drop_classes_below\": 0, \"train_size\": null, "
                        "\"dataset\": name}}; \"dataset\" may be left out when one name is "
                        "given; \"train_size\": a learning curve's size")
    _dataset_options(s)
    s.set_defaults(func=_prepare)

    s = sub.add_parser("split", help="make and save the splits of one data set")
    s.add_argument("name", help="a data set in the cache (`dmlbench dataset NAME` puts it there)")
    s.add_argument("--protocol", required=True,
                   help="protocol as JSON, as a config's `protocol`, e.g. '{\"kind\": \"kfold\", "
                        "\"folds\": 5}'")
    s.add_argument("--seed", type=int, default=0, help="seed of the random splits (default 0)")
    s.add_argument("--drop-classes-below", type=int, default=0,
                   help="leave out the classes with fewer samples than this (default 0: none)")
    s.add_argument("--train-size", type=int, default=None,
                   help="subsample each training part to this many points (a learning curve's "
                        "size: nested and stratified, docs/usage.md)")
    s.add_argument("--cache", default="resources", help="data cache directory (default resources)")
    s.add_argument("--out", required=True, help="the split file (.npz) to write")
    s.set_defaults(func=_split)

    s = sub.add_parser("run", help="run one job (a method on a data set, for some of its "
                                   "splits), or a batch of jobs one after the other; a config "
                                   "runs through Snakemake (given one, says how)")
    s.add_argument("config", nargs="?", metavar="CONFIG.yaml",
                   help="not run here: a benchmark config runs through Snakemake, which calls "
                        "this verb for each step; given one, the command prints the snakemake "
                        "command that runs it and exits with status 2")
    s.add_argument("--job", help="job spec as JSON (dmlbench.run.plan.job_spec)")
    s.add_argument("--out", help="record file to write (with --job)")
    s.add_argument("--batch", help="jobs as a JSON list of {\"job\": spec, \"out\": record "
                                   "file}, run in this order, or - to read the list from "
                                   "standard input; a job whose record file is current is "
                                   "skipped (the workflow's run steps)")
    s.add_argument("--threads", type=int, default=1, help="BLAS threads")
    s.set_defaults(func=_run)

    s = sub.add_parser("study", help="run one job of a side study (e.g. the MVCE solver check)")
    s.add_argument("kind", help="the study (dmlbench.studies.STUDIES), e.g. mvce_validation")
    s.add_argument("--job", required=True, help="study spec as JSON (dmlbench.studies.spec)")
    s.add_argument("--out", required=True, help="document (JSON) to write")
    s.set_defaults(func=_study)

    s = sub.add_parser("ingest", help="import record files into MLflow")
    s.add_argument("records", nargs="*", help="record files (results/<benchmark>/runs/...)")
    s.add_argument("--records-from", help="file listing record files, one per line")
    s.add_argument("--documents", nargs="*", default=[],
                   help="study documents (results/<benchmark>/<study>/<data set>.json)")
    s.add_argument("--experiment", help="MLflow experiment (default: the records' benchmark)")
    s.add_argument("--config-json", help="the benchmark config (JSON), kept in MLflow for reports")
    s.add_argument("--out", help="write the run ids as JSON here")
    s.set_defaults(func=_ingest)

    s = sub.add_parser("publish", help="put the record files (and study documents) a report was "
                                       "built from beside it, with a manifest")
    s.add_argument("records", nargs="*", help="record files (results/<benchmark>/runs/...)")
    s.add_argument("--documents", nargs="*", default=[], help="study documents")
    s.add_argument("--config-json", required=True, help="the benchmark config (JSON)")
    s.add_argument("--results", required=True,
                   help="the results folder the files lie in (results/<benchmark>)")
    s.add_argument("--out", required=True, help="the report folder (reports/<benchmark>)")
    s.set_defaults(func=_publish)

    s = sub.add_parser("report", help="build the HTML report from MLflow or from the "
                                      "published records")
    s.add_argument("--experiment", help="MLflow experiment (benchmark name)")
    s.add_argument("--tracking", help="tracking.json of the track job: report only those runs "
                                      "(with --records: the page names their MLflow experiment)")
    s.add_argument("--records", help="a published records folder (reports/<benchmark>/records): "
                                     "build its report from the records alone, read as they "
                                     "are (no MLflow store)")
    s.add_argument("--out", help="output directory (default reports/<experiment>)")
    s.add_argument("--manifest", help="the published records' manifest.json, whose sha256 the "
                                      "page prints (the workflow's publish step writes it)")
    s.add_argument("--settings", help="with --records: a config file of the same run whose "
                                      "report settings (description, report, paper_tables) "
                                      "replace the published config.json's, which is sealed "
                                      "again; any other difference is refused")
    s.add_argument("--title", help="default: the config's report.title, else 'dmlbench: "
                                   "<experiment>'")
    s.add_argument("--description", help="default: the config's description")
    s.add_argument("--workers", type=int, help="processes drawing the figures (default: the "
                                                "CPUs this process may use, at most 4)")
    s.set_defaults(func=_report)

    s = sub.add_parser("scoreboard", help="write the scoreboard of the published reports "
                                          "(DIR/index.html and scoreboard.csv) from the tables "
                                          "each report exported; no run or report writes it")
    s.add_argument("reports", nargs="?", default="reports",
                   help="the folder of the published reports (default: reports)")
    s.set_defaults(func=_scoreboard)
    return p


#: errors of the place a file is written to, with the remedy (`main` reports them in one line)
_WRITE_ERRORS = {
    errno.ENOSPC: "no space left: free some, or write elsewhere, and run again",
    errno.EDQUOT: "disk quota exceeded: free some space, or write elsewhere, and run again",
    errno.EROFS: "read-only file system: write to a writable place and run again",
    errno.EACCES: "permission denied: make it writable, or write elsewhere, and run again",
}


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        args.func(args)
    except (ValueError, KeyError, FileNotFoundError, IndexError, DownloadError,
            job.BatchError, tracking.StoreError) as err:
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        print(f"dmlbench {args.command}: error: {message}", file=sys.stderr)
        return 2
    except OSError as err:
        if err.errno not in _WRITE_ERRORS:
            raise
        where = err.filename or "the output"
        print(f"dmlbench {args.command}: error: cannot write {where}: {_WRITE_ERRORS[err.errno]}"
              + (f" ({err.strerror})" if err.strerror and err.filename is None else ""),
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

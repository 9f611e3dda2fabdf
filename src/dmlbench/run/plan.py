"""The job planner: what a checked config runs, and whether it can run, before any job.

`check` refuses a config whose names, parameters or sizes cannot work (one `ConfigError` naming
the key); `jobs` lists the workflow's jobs (a method on a data set, for a batch of its splits);
`job_spec` is everything one job needs, self-contained, with its identity (`identity`,
`parent_key`); the paths, split arguments and resources the workflow's rules ask for follow
from them. The side studies plan their own jobs (`dmlbench.studies`).

Where each data set and method comes from (the registry, or a file or class of the user's:
`path`, `class`) is `run.sources`: the planner asks it for every spec and class.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from .. import config as cfg
from .. import vocabulary as voc
from ..config import ConfigError
from ..data import from_file
from ..data import registry as data_registry
from ..measure.evaluation import neighbour_depths
from ..methods import plugins
from ..methods import registry as method_registry
from ..methods import search_spaces
from ..methods.hubness_reduced import HubnessReduced
from ..methods.parameters import ParameterError
from . import preprocessing, protocols, resources, sources
from .sources import dataset_spec, method_class


def check(config: dict, config_files=()) -> dict:
    """Semantic checks beyond the schema: registered data sets and methods (or the user's own:
    the files of data sets given by `path`, read and checked; the classes of plug-in methods,
    imported and checked), protocols the data sets allow, method parameters, hubness
    reductions, data-set labels, and the limits each data set's training part sets
    (`check_data_limits`). Relative file paths are relative to the config file of
    `config_files` that gives them (`sources.resolve_files`). Returns the checked config, its
    defaults filled in (`config.with_defaults`), its file paths absolute and each data set
    given by a file named by its content (`dataset`: `data.from_file.FileSource.name`)."""
    config = cfg.with_defaults(config)
    sources.resolve_files(config, config_files)
    for label, entry in config["datasets"].items():
        spec = _checked_dataset(config, label)
        name = spec.name
        protocol = cfg.dataset_protocol(config, label)
        if protocol["kind"] == "holdout" and {"train_fraction", "train_size"} <= set(protocol):
            raise ConfigError(f"datasets.{label}.protocol",
                              "give either train_fraction or train_size, not both")
        if protocol["kind"] == "kfold" and "folds" not in protocol:
            raise ConfigError(f"datasets.{label}.protocol", "kind kfold needs `folds`")
        if protocol["kind"] == "given_folds" and not spec.extras.get("given_folds"):
            raise ConfigError(f"datasets.{label}.protocol",
                              f"kind given_folds needs a data set with published folds; '{name}' "
                              "has none (the keel-* data sets have them)")
        if protocol["kind"] == "loo" and entry.get("drop_classes_below"):
            raise ConfigError(f"datasets.{label}.drop_classes_below",
                              "leave-one-out makes one split per sample of the whole data set; "
                              "it cannot be combined with drop_classes_below")
        _check_train_sizes(config, label, spec)
    for label, entry in config["methods"].items():
        cls = _checked_method(config, label)
        name, params = cfg.method_name(config, label), cfg.method_params(config, label)
        try:
            if issubclass(cls, plugins.PluginMethod):  # names an unknown parameter by itself
                cls.check_parameters(params)
            method_registry.make(name, params, cls)
            cls.check_parameters(params)
        except ParameterError as err:
            raise ConfigError(f"methods.{label}.params.{err.parameter}", str(err)) from None
        except (TypeError, ValueError) as err:
            raise ConfigError(f"methods.{label}.params", str(err)) from None
        _check_reduction(config, label)
        _check_tuning(config, label, cls)
    for key, labels in cfg.label_lists(config):
        for ds in labels:
            if ds not in config["datasets"]:
                raise ConfigError(key, f"'{ds}' is not a data-set label of this config")
    check_job_groups(config)
    check_data_limits(config)
    check_tuning_folds(config)
    return config


def _check_train_sizes(config: dict, label: str, spec) -> None:
    """A learning curve (`train_sizes`) needs splits with a training part to subsample (not
    leave-one-out), and each size room for `protocols.CURVE_MIN_PER_CLASS` points of every
    class."""
    sizes = cfg.train_sizes(config, label)
    if not sizes:
        return
    key = (f"datasets.{label}.protocol.train_sizes"
           if "protocol" in config["datasets"][label] else "protocol.train_sizes")
    if cfg.dataset_protocol(config, label)["kind"] == "loo":
        raise ConfigError(key, "a learning curve subsamples each training part; leave-one-out "
                          "(one split per sample) has no training part to subsample")
    floor = protocols.CURVE_MIN_PER_CLASS * spec.n_classes
    if sizes[0] < floor:
        raise ConfigError(key, f"{sizes[0]} points cannot hold {protocols.CURVE_MIN_PER_CLASS} "
                          f"of each of the {spec.n_classes} classes of data set '{label}' "
                          f"(at least {floor})")


def curve_sizes(config: dict, label: str) -> list[int]:
    """The learning-curve sizes data set `label` runs besides its full training parts: those of
    `train_sizes` below its smallest training part (`training_part`)."""
    sizes = cfg.train_sizes(config, label)
    return [size for size in sizes if size < training_part(config, label)[0]] if sizes else []


def _checked_dataset(config: dict, label: str):
    """The spec of data set `label` (`dataset_spec`), a problem as a `ConfigError` at its key;
    a data set given by a file gets its cache name as `dataset`."""
    entry = config["datasets"][label]
    if "path" not in entry:
        try:
            return data_registry.get(cfg.dataset_name(config, label))
        except KeyError as err:
            raise ConfigError(f"datasets.{label}", err.args[0]) from None
    try:
        spec = dataset_spec(config, label)
    except from_file.FileDataError as err:
        raise ConfigError(f"datasets.{label}.{err.key}", str(err)) from None
    except ValueError as err:  # the checks every data set meets (data.cache.validate)
        raise ConfigError(f"datasets.{label}.path", str(err)) from None
    if entry.get("dataset", spec.name) != spec.name:
        raise ConfigError(f"datasets.{label}.dataset", "a data set given by `path` is named by "
                          "its content; leave `dataset` out")
    entry["dataset"] = spec.name
    return spec


def _checked_method(config: dict, label: str) -> type:
    """The class of method `label` (`method_class`), a problem as a `ConfigError` at its key."""
    entry = config["methods"][label]
    if "class" in entry and "method" in entry:
        raise ConfigError(f"methods.{label}", "give either `method` (a registered or entry-point "
                          "name) or `class` (a plug-in), not both")
    key = (f"methods.{label}.class" if "class" in entry else
           f"methods.{label}.method" if "method" in entry else f"methods.{label}")
    _check_name(config, label, key)
    try:
        return method_class(config, label)
    except plugins.PluginError as err:
        raise ConfigError(key, str(err)) from None
    except KeyError as err:
        raise ConfigError(key, err.args[0]) from None


def _check_name(config: dict, label: str, key: str) -> None:
    """A built-in method's name stands for it alone: a label that is one names that method
    (reports find the Euclidean baseline by it), and a name that an installed package also
    declares as an entry point is ambiguous (the built-in would silently win)."""
    name = cfg.method_name(config, label)
    if label in method_registry.REGISTRY and ("class" in config["methods"][label]
                                             or name != label):
        raise ConfigError(f"methods.{label}", f"'{label}' is the name of a built-in method, "
                          "which the label stands for in records and reports; give this "
                          "entry a label of its own")
    if "class" not in config["methods"][label] and name in method_registry.REGISTRY:
        clash = plugins.entry_point(name)
        if clash is not None:
            raise ConfigError(key, f"'{name}' names both the built-in method and the entry "
                              f"point '{clash}' an installed package declares in group "
                              f"'{plugins.ENTRY_POINT_GROUP}'; rename or uninstall the entry "
                              "point (or give its class as `class`, with a label of its own)")


def tuning_settings(config: dict, label: str) -> dict | None:
    """The `tuning` block for method `label` with its search space (as [parameter, entry]
    pairs, in declared order), seed, candidate time limit and budget (the method's own
    `tuning.budget` if given) filled in: what the job needs (`run.tuning`); None without
    tuning."""
    block = config.get("tuning")
    if block is None:
        return None
    name = cfg.method_name(config, label)
    entry = config["methods"][label]
    # a plug-in's space is its declared one: its class is not loaded (a published config
    # names its file without the folder, `record_mismatch`)
    cls = method_class(config, label) if name in method_registry.REGISTRY else None
    return {"folds": block["folds"],
            "budget": (entry.get("tuning") or {}).get("budget", block["budget"]),
            "seed": block.get("seed", config["seed"]), "time_limit": block.get("time_limit"),
            "space": search_spaces.as_pairs(search_spaces.space_of(
                name, cls, entry.get("search_space")))}


#: the most points a search space's grid may have (its points are all checked on each split)
MAX_GRID = 100_000


def _check_tuning(config: dict, label: str, cls: type) -> None:
    """A method's `search_space` (parameters and entries its class accepts; `search_spaces.
    check`), and every point of its literal parameters, with the method's `params` (a relative
    parameter at its `params` value), against the declared constraints. Under `tuning` a
    plug-in (a `class`, or an installed package's method) must give its space: left out, it
    would run untuned beside tuned methods; `search_space: {}` says so on purpose."""
    key = f"methods.{label}.search_space"
    entry = config["methods"][label]
    settings = tuning_settings(config, label)
    if settings is None:
        for what in ("search_space", "tuning"):
            if what in entry:
                raise ConfigError(f"methods.{label}.{what}",
                                  f"`{what}` needs the top-level `tuning` block")
        return
    if config["k_selection"] != "none":
        raise ConfigError("tuning", "equal tuning chooses the hyperparameters per k; it cannot "
                          "be combined with k_selection: loo")
    if "search_space" not in entry and (
            "class" in entry or cfg.method_name(config, label) not in method_registry.REGISTRY):
        raise ConfigError(key, "under `tuning` a plug-in method needs its search space, "
                          "{parameter: [values, simplest first]} over its parameters "
                          f"{sorted(cls.parameter_names())}, or `search_space: {{}}` to run it "
                          "untuned on purpose (docs/your-method.md)")
    params = cfg.method_params(config, label)
    space = search_spaces.from_pairs(settings["space"])
    try:
        search_spaces.check(space, cls)
    except ParameterError as err:
        raise ConfigError(f"{key}.{err.parameter}", str(err)) from None
    if search_spaces.grid_size(space) > MAX_GRID:
        raise ConfigError(key, f"the grid has {search_spaces.grid_size(space)} points, more "
                          f"than {MAX_GRID}; give fewer values")
    literal = {name: search_spaces.literal_values(entry) for name, entry in space.items()
               if not (search_spaces.is_relative(entry) and "from" in entry)}
    try:
        for values in itertools.product(*literal.values()):
            cls.check_parameters({**params, **dict(zip(literal, values))})
    except ParameterError as err:
        raise ConfigError(f"{key}.{err.parameter}", str(err)) from None


def check_tuning_folds(config: dict) -> None:
    """`tuning.folds` stratified inner folds put every class in each only when each class has
    that many training points: on every data set a method runs on, its split with the fewest
    training points of its smallest class (`protocols.smallest_training_class`; not checked for
    given splits and published folds, whose class counts are not pinned), and each subsample of
    a learning curve, whose smallest class is bounded from above for every protocol
    (`protocols.most_curve_points_of_class`)."""
    if config.get("tuning") is None:
        return
    folds = config["tuning"]["folds"]
    used = {ds for method in config["methods"] for ds in cfg.method_datasets(config, method)}
    for label in (ds for ds in config["datasets"] if ds in used):
        spec = dataset_spec(config, label)
        if spec.class_counts is None:
            continue
        drop = int(config["datasets"][label].get("drop_classes_below") or 0)
        counts = list(protocols.kept_counts(spec.class_counts, drop, spec.name).values())
        protocol = cfg.dataset_protocol(config, label)
        smallest = protocols.smallest_training_class(protocol, counts)
        if smallest is not None and folds > smallest:
            raise ConfigError("tuning.folds", f"{folds} stratified inner folds need {folds} "
                              f"training points of every class; a training part of data set "
                              f"'{label}' ({protocols.protocol_id(protocol, config['seed'])}) "
                              f"has {smallest} of its smallest class ({min(counts)} samples in "
                              f"all): use at most {smallest} folds, or leave the data set out")
        _check_curve_folds(config, label, spec, folds, drop)


def _check_curve_folds(config: dict, label: str, spec, folds: int, drop: int) -> None:
    """`check_tuning_folds` for the learning-curve subsamples of data set `label`: the
    smallest size's subsample must be able to hold `folds` points of every class kept."""
    sizes = curve_sizes(config, label)
    if not sizes:
        return
    protocol = cfg.dataset_protocol(config, label)
    counts = protocols.kept_counts(spec.class_counts, drop, spec.name)
    n, n_train = sum(counts.values()), training_part(config, label)[0]
    if protocol["kind"] == "given":     # the samples left out may all be training points
        n_train -= spec.n - n
    most, name = min((protocols.most_curve_points_of_class(protocol, c, n, n_train, sizes[0]),
                      name) for name, c in counts.items())
    if most < folds:
        raise ConfigError("tuning.folds", f"{folds} stratified inner folds need {folds} "
                          f"training points of every class; the learning-curve subsample of "
                          f"{sizes[0]} of data set '{label}' holds at most {most} of class "
                          f"'{name}' ({counts[name]} samples in all): start the curve at more "
                          f"points, leave small classes out (datasets.{label}."
                          f"drop_classes_below), or use fewer folds")


def _check_reduction(config: dict, label: str) -> None:
    """A method entry's `hubness_reduction` (`methods.hubness_reduced.HubnessReduced`): its
    settings and whether the method can be reduced."""
    settings = cfg.hubness_reduction(config, label)
    if settings is None:
        return
    key = f"methods.{label}.hubness_reduction"
    try:
        HubnessReduced.check_settings(method_class(config, label), settings)
    except ParameterError as err:
        raise ConfigError(f"{key}.{err.parameter}", str(err)) from None
    except ValueError as err:
        raise ConfigError(key, str(err)) from None


# --- jobs and their specs


@dataclass(frozen=True)
class Job:
    """One workflow job: a method on a data set, for a batch (`part`) of its splits, with their
    training parts subsampled to `train_size` (a learning curve's size; None: full)."""

    dataset: str  # data-set label
    method: str  # method label
    part: int
    splits: tuple[int, ...]
    train_size: int | None = None


def n_splits(config: dict, label: str) -> int:
    """How many splits data set `label` has under its protocol (leave-one-out: the registry's
    n; given folds: the registry's number of folds)."""
    spec = dataset_spec(config, label)
    return protocols.n_splits(cfg.dataset_protocol(config, label), n_samples=spec.n,
                              n_folds=spec.extras.get("given_folds"))


def jobs(config: dict) -> list[Job]:
    """Every job of the benchmark. A job runs `splits_per_job` splits of one (data set, method)
    (default: all of them) and writes one record file; the workflow runs a `Batch` of jobs per
    process (`batches`). A method's `max_splits` runs only the first splits of each data set (a slow method on a
    protocol with many repeats), or of the data sets it maps to a number; its parent run then
    aggregates that many. A learning curve (`train_sizes`) repeats each job for each of its sizes
    (`curve_sizes`): a job per size, with its own records and parent run."""
    out = []
    for ds in config["datasets"]:
        n = n_splits(config, ds)
        sizes = [None, *curve_sizes(config, ds)]
        for m in config["methods"]:
            if ds not in cfg.method_datasets(config, m):
                continue
            n_run = cfg.max_splits(config, m, ds, n)
            size = cfg.splits_per_job(config, m) or n_run
            for train_size in sizes:
                for part, start in enumerate(range(0, n_run, size)):
                    out.append(Job(ds, m, part, tuple(range(start, min(start + size, n_run))),
                                   train_size))
    return out


@dataclass(frozen=True)
class Batch:
    """The jobs one workflow step runs in one process, one after the other: the jobs of the
    same `part` of one method, or of the methods sharing a `job_group`, on `datasets_per_job`
    of their data sets (default all). A process costs about 2 s of CPU before its first job
    (Python, NumPy, SciPy, scikit-learn, and the method's own libraries), more than a whole job
    of a fast method on a small data set; each job still writes its own record file, and
    `dmlbench run --batch` skips a job whose record file is current (`run.job.is_current`), so
    changing one data set's or method's settings recomputes only its records. `name` is unique
    within the config, a word: the method label, or the group's name (`run_<name>` is the
    step's rule, `logs/<benchmark>/run/<name>.log` its log), with `_part<part>` for a later
    batch of splits and `_<first data set>` when `datasets_per_job` splits the data sets."""

    name: str
    jobs: tuple[Job, ...]


def check_job_groups(config: dict) -> None:
    """A `job_group` names its batches' steps (`run_<group>`), so it may not be a method label
    of the config (whose steps are `run_<label>`); its methods share processes, so they need
    the same `datasets_per_job`."""
    members: dict[str, list[str]] = {}
    for label in config["methods"]:
        group = cfg.job_group(config, label)
        if group is None:
            continue
        if group in config["methods"]:
            raise ConfigError(f"methods.{label}.job_group",
                              f"'{group}' is the label of a method of this config; a group of "
                              "methods sharing processes needs a name of its own")
        members.setdefault(group, []).append(label)
    for group, labels in members.items():
        sizes = {label: cfg.datasets_per_job(config, label) for label in labels}
        if len(set(sizes.values())) > 1:
            odd = next(label for label in labels if sizes[label] != sizes[labels[0]])
            shown = ", ".join(f"{label}: {sizes[label] or 'all'}" for label in labels)
            raise ConfigError(f"methods.{odd}.datasets_per_job",
                              f"the methods of job_group '{group}' share their processes, so "
                              f"they need the same datasets_per_job ({shown})")


def batches(config: dict) -> list[Batch]:
    """The `Batch`es of the benchmark: the jobs of `jobs` grouped by (method or its
    `job_group`, part), each group's data sets cut into runs of `datasets_per_job`; within a
    batch the jobs keep the order of `jobs` (data set by data set)."""
    groups: dict[tuple[tuple[str, str], int], list[Job]] = {}
    for job in jobs(config):
        group = cfg.job_group(config, job.method)
        key = ("group", group) if group is not None else ("method", job.method)
        groups.setdefault((key, job.part), []).append(job)
    out, names = [], set()
    for ((_, group), part), members in groups.items():
        labels = list(dict.fromkeys(job.dataset for job in members))
        size = cfg.datasets_per_job(config, members[0].method) or len(labels)
        for start in range(0, len(labels), size):
            chunk = set(labels[start:start + size])
            name = _word(group) + (f"_part{part}" if part else "")
            if size < len(labels):
                name += f"_{_word(labels[start])}"
            while name in names:  # labels that differ only in characters _word replaces
                name += "_"
            names.add(name)
            out.append(Batch(name, tuple(job for job in members if job.dataset in chunk)))
    return out


def _word(label: str) -> str:
    """A label as a word (rule names): characters other than letters, digits and _ become _."""
    return "".join(c if c.isalnum() or c == "_" else "_" for c in label)


def batch_resources(config: dict, batch: Batch) -> dict:
    """{threads, mem_mb, runtime} of a batch: the most threads and memory any of its jobs asks
    for (`job_resources`), and the sum of their time limits."""
    each = [job_resources(config, job) for job in batch.jobs]
    return {"threads": max(r["threads"] for r in each), "mem_mb": max(r["mem_mb"] for r in each),
            "runtime": sum(r["runtime"] for r in each)}


def summary(config: dict) -> str:
    """One line: how many data sets, methods and jobs the config has."""
    return (f"{len(config['datasets'])} data sets, {len(config['methods'])} methods, "
            f"{len(jobs(config))} jobs")


def job_spec(config: dict, dataset: str, method: str, splits: list[int],
             train_size: int | None = None) -> dict:
    """Everything one job needs, self-contained (the workflow passes it to `dmlbench run`): what
    identifies its results (`parent_key`), and its `limits` (`job_limits`), which do not;
    `train_size`: its splits' training parts subsampled to a learning curve's size."""
    spec = _identified_spec(config, dataset, method, splits, sources.method_entry(config, method),
                            train_size)
    spec["limits"] = job_limits(config, Job(dataset, method, 0, tuple(int(s) for s in splits),
                                            train_size))
    return spec


def _identified_spec(config: dict, dataset: str, method: str, splits: list[int],
                     method_entry: dict, train_size: int | None = None) -> dict:
    """A job spec but its limits, with `method_entry` as its `method`, and its `parent_key`."""
    spec = {
        "benchmark": cfg.benchmark(config),
        "dataset": {"label": dataset, "name": cfg.dataset_name(config, dataset)},
        "protocol": cfg.dataset_protocol(config, dataset),
        "train_size": None if train_size is None else int(train_size),
        "split_file": split_path(config, dataset, train_size),
        "splits": [int(s) for s in splits],
        "preprocess": cfg.dataset_preprocess(config, dataset),
        "method": method_entry,
        "method_class": config["methods"][method].get("class"),
        "k": cfg.method_ks(config, method),
        "hubness_k": int(config["hubness_k"]),
        "k_selection": config["k_selection"],
        "train_hubness": bool(config["train_hubness"]),
        "seed": int(config["seed"]),
        "cache": cfg.cache_dir(config),
        "drop_classes_below": config["datasets"][dataset].get("drop_classes_below"),
        "dimension_sweep": cfg.dimension_sweep(config, method),
        "hubness_reduction": cfg.hubness_reduction(config, method),
        "tuning": tuning_settings(config, method),
    }
    spec["parent_key"] = voc.digest(identity(spec))
    return spec


def job_limits(config: dict, job: Job) -> dict:
    """How long and how large job `job` may run, no part of its identity: `time_s`, its time
    limit (the `runtime` of `job_resources`, in seconds), enforced by `run.job.run_batch`
    wherever the job runs; `mem_mb`, the memory it reserves (MiB; enforced by a cluster's
    scheduler, and by `run.supervise` and `run.job.run_member` wherever the job runs); and `over_budget`, what a job over them ends with (the config's `over_budget`:
    'fail', or 'record': a record that says so)."""
    resources = job_resources(config, job)
    return {"time_s": 60 * int(resources["runtime"]), "mem_mb": int(resources["mem_mb"]),
            "over_budget": config.get("over_budget", cfg.default("over_budget"))}


#: the facts of a plug-in's identity that only its code gives (`sources.plugin_code`: an installed
#: distribution's name and version, or its file's sha256 and its local modules'), which its
#: records keep in `method.plugin`
PLUGIN_FILE_FACTS = ("package", "version", "sha256", "modules")


def recorded_method_entry(config: dict, label: str, record: dict) -> dict:
    """The job spec's `method` (`sources.method_entry`) of method `label` as a published config
    gives it, without the plug-in's files (a published config names them by file name only):
    what the config says, and the facts only the files give (`PLUGIN_FILE_FACTS`) from the
    record's `method.plugin`."""
    out = {"label": label, "name": cfg.method_name(config, label),
           "params": cfg.method_params(config, label)}
    plugin = record["method"].get("plugin") or {}
    class_path = config["methods"][label].get("class")
    if class_path is not None:
        out["name"] = out["class"] = plugins.shown(class_path)
    elif out["name"] not in method_registry.REGISTRY and plugin:  # an entry point's
        out["class"] = plugin["class"]
    out.update({key: plugin[key] for key in PLUGIN_FILE_FACTS if key in plugin})
    return out


def record_mismatch(config: dict, record: dict) -> str | None:
    """Why split record `record` is not a record of the job `config` gives its (data set,
    method), in one phrase naming the first thing that differs; None when it is one. `config`:
    a checked config, e.g. a published config.json (whose plug-in files are named by file name
    only: their sha256 is taken from the record, `recorded_method_entry`)."""
    ds, method = record["dataset"]["label"], record["method"]["label"]
    if ds not in config["datasets"]:
        return f"data set '{ds}' is not in the config"
    if method not in config["methods"]:
        return f"method '{method}' is not in the config"
    if ds not in cfg.method_datasets(config, method):
        return f"the config does not run method '{method}' on data set '{ds}'"
    entry = recorded_method_entry(config, method, record)
    recorded_class = (record["method"].get("plugin") or {}).get("class")
    if recorded_class != entry.get("class"):
        return (f"method '{method}': the config's class is {entry.get('class') or 'none'}, the "
                f"record's {recorded_class or 'none (a registered method)'}")
    spec = _identified_spec(config, ds, method, [record["split"]["index"]], entry,
                            record["split"].get("train_size"))
    for what, config_value, record_value in (
            ("parameters", entry["params"], record["method"]["config_params"]),
            ("protocol", spec["protocol"], record["split"]["protocol"]),
            ("preprocessing", spec["preprocess"], record["preprocess"]["steps"]),
            ("k", spec["k"], record["k"]), ("seed", spec["seed"], record["split"]["seed"])):
        if voc.digest(config_value) != voc.digest(record_value):
            return (f"method '{method}' on data set '{ds}': {what} {config_value} in the "
                    f"config, {record_value} in the record")
    if spec["parent_key"] != record["parent_key"]:
        return (f"method '{method}' on data set '{ds}': parent key {spec['parent_key']} in the "
                f"config, {record['parent_key']} in the record (other settings)")
    return None


#: the rule of `identity` (below). Version 1 keys carry no version field; a later version adds
#: `identity_version` to the identity, which changes every key (and reruns every job) once.
IDENTITY_VERSION = 1
#: what always identifies a job's results
IDENTITY_KEYS = ("benchmark", "dataset", "protocol", "preprocess", "method", "k", "hubness_k",
                 "seed", "drop_classes_below")
#: options that join the identity only when set away from their default (the schema's), so
#: that adding an option never changes the keys (and results) of configs that do not use it
IDENTITY_OPTIONS = {key: cfg.default(key) for key in ("dimension_sweep", "k_selection",
                                                      "train_hubness")} | {
    "hubness_reduction": None, "tuning": None, "train_size": None}


def identity(spec: dict) -> dict:
    """What identifies the results of a job spec (rule version `IDENTITY_VERSION`): the
    `IDENTITY_KEYS`, plus each of the `IDENTITY_OPTIONS` that differs from its default. Two
    specs with the same identity give the same records (up to timings); the parent key is its
    digest, a split's job key the digest of (parent key, split)."""
    out = {key: spec[key] for key in IDENTITY_KEYS}
    out.update({key: spec[key] for key, default in IDENTITY_OPTIONS.items()
                if spec[key] != default})
    return out


# --- the files and resources the workflow's rules ask for


def record_path(config: dict, job: Job) -> str:
    """results/<benchmark>/runs/<data set>/<method>/[train<size>/]part<i>.json"""
    size = "" if job.train_size is None else f"train{job.train_size}/"
    return (f"results/{cfg.benchmark(config)}/runs/{job.dataset}/{job.method}/{size}"
            f"part{job.part}.json")


def split_id(config: dict, label: str, train_size: int | None = None) -> str:
    """File stem of the data set's split file: protocol id, plus the class filter if any, plus
    the learning curve's size of subsampled training parts."""
    pid = protocols.protocol_id(cfg.dataset_protocol(config, label), config["seed"])
    drop = config["datasets"][label].get("drop_classes_below")
    pid = f"{pid}-drop{drop}" if drop else pid
    return pid if train_size is None else f"{pid}-train{train_size}"


def split_path(config: dict, label: str, train_size: int | None = None) -> str:
    return (f"{cfg.cache_dir(config)}/splits/{cfg.dataset_name(config, label)}/"
            f"{split_id(config, label, train_size)}.npz")


def dataset_paths(config: dict, name: str) -> tuple[str, str]:
    """The cached arrays and metadata of data set `name`."""
    base = f"{cfg.cache_dir(config)}/datasets/{name}"
    return f"{base}.npz", f"{base}.json"


@dataclass(frozen=True)
class PrepareStep:
    """One prepare step of the workflow (rule `rule`, log `logs/prepare/<log>.log`): data sets
    (cache names) built into the cache with their split files in one process."""

    rule: str
    log: str
    names: tuple[str, ...]


#: the rule and log of the prepare step of every data set that needs no download
LOCAL_PREPARE = "local"


def prepare_steps(config: dict) -> list[PrepareStep]:
    """The workflow's prepare steps, for the cache names of the config's data sets, in order (a
    data set given by a file has its cache name as `dataset` once `check`ed): one step,
    `prepare_local`, for all those that need no download (embedded, generated, given by a
    file; each a fraction of the 1.7 s of CPU a process costs to start), and one
    `prepare_<name as a word>` per downloaded set (a download of its own, retried and reported
    by itself), its log `logs/prepare/<name>.log`. The rule names and logs are unique."""
    local, downloaded = [], []
    for label in config["datasets"]:
        name = cfg.dataset_name(config, label)
        if name not in local and name not in downloaded:
            (downloaded if dataset_spec(config, label).downloads else local).append(name)
    out, rules = [], {f"prepare_{LOCAL_PREPARE}"} if local else set()
    if local:
        out.append(PrepareStep(f"prepare_{LOCAL_PREPARE}", LOCAL_PREPARE, tuple(local)))
    for name in downloaded:
        rule = f"prepare_{_word(name)}"
        while rule in rules:  # names that differ only in characters _word replaces
            rule += "_"
        rules.add(rule)
        log = name if name != LOCAL_PREPARE else rule.removeprefix("prepare_")
        out.append(PrepareStep(rule, log, (name,)))
    return out


def split_files(config: dict, name: str) -> dict[str, dict]:
    """{split file: its protocol, seed, class filter and learning-curve size (None: full), as
    `dmlbench prepare --splits` takes them} of every label of the config whose cache name is
    `name` (one file per distinct protocol, seed, filter and size)."""
    out = {}
    for label in config["datasets"]:
        if cfg.dataset_name(config, label) == name:
            for size in [None, *curve_sizes(config, label)]:
                out[split_path(config, label, size)] = {
                    "protocol": cfg.dataset_protocol(config, label),
                    "seed": int(config["seed"]),
                    "drop_classes_below": int(config["datasets"][label].get(
                        "drop_classes_below") or 0),
                    "train_size": size}
    return out


def dataset_resources(config: dict, name: str) -> dict:
    """{mem_mb, runtime} of building data set `name` (registered, or the cache name of a data
    set given by a file)."""
    labels = [label for label in config["datasets"] if cfg.dataset_name(config, label) == name]
    spec = dataset_spec(config, labels[0]) if labels else None
    return resources.for_dataset(name, spec)


def prepare_resources(config: dict, step: PrepareStep) -> dict:
    """{mem_mb, runtime} of a prepare step: the most memory any of its data sets needs, and the
    sum of their time limits (they are built one after the other)."""
    each = [dataset_resources(config, name) for name in step.names]
    return {"mem_mb": max(r["mem_mb"] for r in each), "runtime": sum(r["runtime"] for r in each)}


def job_resources(config: dict, job: Job) -> dict:
    """{threads, mem_mb, runtime} of a workflow job: estimated from the data set's registry size
    and preprocessing (`dmlbench.run.resources`); the method's config entry overrides each.
    Under `tuning` a split costs up to 2 + folds x candidates fits (the inner fits, the winner's
    and the default's, `job.tuned_default`), and its time limit grows so."""
    spec = dataset_spec(config, job.dataset)
    entry = config["methods"][job.method]
    overrides = {key: entry[key] for key in ("threads", "mem_mb", "runtime") if key in entry}
    fits = 1
    settings = tuning_settings(config, job.method)
    if settings is not None:
        tried = min(settings["budget"],
                    search_spaces.grid_size(search_spaces.from_pairs(settings["space"])))
        fits = 2 + settings["folds"] * tried
    return resources.for_job(spec.n, spec.d, cfg.dataset_preprocess(config, job.dataset),
                             len(job.splits) * fits, overrides)


# --- data-dependent limits, checked before any job


@dataclass(frozen=True)
class TrainingShape:
    """What a data set's split with the fewest training points gives its methods: `n_train`
    points with `d` features (after preprocessing) in `n_classes` classes, each exact or an
    upper bound, as `where` says (one line, for messages)."""

    n_train: int
    d: int
    n_classes: int
    where: str


def training_shape(config: dict, label: str) -> TrainingShape:
    """The `TrainingShape` of data set `label`, from the registry's n, d and class counts (where
    pinned), `drop_classes_below`, the protocol (`protocols.smallest_training_part`) and the
    preprocessing (`preprocessing.output_dim`). `ConfigError` at the responsible key when the
    class filter keeps fewer than two classes, a class is too small to split, the protocol's
    sizes are impossible or the preprocessing does not fit the data. With a learning curve
    (`curve_sizes`) the split with the fewest training points is one of its smallest size."""
    n_train, n_classes, exact_n, how = training_part(config, label)
    spec = dataset_spec(config, label)
    entry = config["datasets"][label]
    sizes = curve_sizes(config, label)
    if sizes:
        n_train, exact_n = sizes[0], True
        how = "the smallest size of train_sizes"
    steps = cfg.dataset_preprocess(config, label)
    key = f"datasets.{label}.preprocess" if "preprocess" in entry else "preprocess"
    try:
        d, exact_d = preprocessing.output_dim(steps, n_train, spec.d, spec.sparse)
    except ValueError as err:
        raise ConfigError(key, f"{err} (data set '{label}': n_train {'=' if exact_n else '<='} "
                               f"{n_train}, d = {spec.d})") from None
    name = f"'{label}'" + (f" ({spec.name})" if spec.name != label else "")
    where = (f"data set {name}: n_train {'=' if exact_n else '<='} {n_train} ({how}), "
             f"d {'=' if exact_d else '<='} {d}{' after preprocessing' if steps else ''}")
    return TrainingShape(n_train, d, n_classes, where)


def training_part(config: dict, label: str) -> tuple[int, int, bool, str]:
    """(n_train, n_classes, exact, how) of the full training part of data set `label`'s split
    with the fewest training points (`training_shape`, which says when it raises)."""
    spec = dataset_spec(config, label)
    entry = config["datasets"][label]
    drop = int(entry.get("drop_classes_below") or 0)
    protocol = cfg.dataset_protocol(config, label)
    given = protocol["kind"] in ("given", "given_folds")
    n, n_classes, exact_n = spec.n, spec.n_classes, protocol["kind"] != "given_folds"
    how = ""
    if spec.class_counts is not None:
        try:
            kept = protocols.kept_counts(spec.class_counts, drop, spec.name)
            if not given:
                protocols.check_stratifiable(kept, spec.name)
        except ValueError as err:
            raise ConfigError(f"datasets.{label}.drop_classes_below" if drop
                              else f"datasets.{label}", str(err)) from None
        n, n_classes = sum(kept.values()), len(kept)
        how = f"; drop_classes_below = {drop} keeps {n} of {spec.n} samples" if drop else ""
    elif drop:
        exact_n = False
        how = (f"; drop_classes_below = {drop} applies when the splits are made: the registry "
               f"pins no class counts of '{spec.name}'")
    key = f"datasets.{label}.protocol" if "protocol" in entry else "protocol"
    try:
        n_train = protocols.smallest_training_part(protocol, n, n_classes if exact_n else 2,
                                                   spec.given_train, spec.name)
    except ValueError as err:
        raise ConfigError(key, str(err)) from None
    if protocol["kind"] == "given_folds":
        how = "published folds: at most n - 1" + how
    elif given:
        exact_n = exact_n and n == spec.n
        n_train = min(n_train, n)
        how = "the given split's training part" + how
    elif protocol["kind"] == "holdout":
        how = ("holdout train_size" if "train_size" in protocol else
               f"holdout, round({protocol.get('train_fraction', 0.7)} x {n})") + how
    elif protocol["kind"] == "kfold":
        how = f"{protocol['folds']}-fold: {n} - ceil({n} / {protocol['folds']})" + how
    else:
        how = f"leave-one-out: {n} - 1" + how
    return n_train, n_classes, exact_n, how


def check_reduction_limits(config: dict, method: str, depth: int, shape: TrainingShape) -> None:
    """A method's `hubness_reduction` on a training part of `shape`: the reduction's own limits
    (`HubnessReduced.check_data_limits`: its local scale's k among the n_train - 1 others), and,
    above `exact_max` training points, `candidates` at least the `depth` neighbours the
    evaluation asks for."""
    settings = cfg.hubness_reduction(config, method)
    if settings is None:
        return
    key, n = f"methods.{method}.hubness_reduction", shape.n_train
    try:
        HubnessReduced.check_data_limits(settings, n, shape.d, shape.n_classes)
    except ParameterError as err:
        raise ConfigError(f"{key}.{err.parameter}", f"{err}; {shape.where}") from None
    if n > settings["exact_max"] and settings["candidates"] < depth:
        raise ConfigError(f"{key}.candidates", f"candidates = {settings['candidates']} is fewer "
                          f"than the {depth} neighbours asked (k, hubness_k) above exact_max = "
                          f"{settings['exact_max']} training points; {shape.where}")


def check_data_limits(config: dict) -> None:
    """Before any job: on every data set (its `training_shape`), the neighbours the evaluation
    asks for (`k`, `hubness_k`: at most n_train, n_train - 1 for leave-one-out searches), and
    each method's own limits (`check_data_limits` of its class) on the data sets it runs on.
    A refusal is one line naming the key; the split with the fewest training points would
    fail (the numbers are upper bounds where the config leaves them open)."""
    hubness_k = int(config["hubness_k"])
    for label in config["datasets"]:
        shape = training_shape(config, label)
        n = shape.n_train
        for method in config["methods"]:
            if label not in cfg.method_datasets(config, method):
                continue
            cls = method_class(config, method)
            ks = cfg.method_ks(config, method)
            if not cls.predicts_only:
                depth, loo = neighbour_depths(ks, hubness_k, config["k_selection"],
                                              bool(config["train_hubness"]))
                if depth > n:
                    key = "k" if max(ks) > n else "hubness_k"
                    raise ConfigError(key, f"{key} = {max(ks) if key == 'k' else hubness_k} "
                                      f"exceeds the n_train = {n} training points; {shape.where}")
                if loo > n - 1:
                    key = "hubness_k" if config["train_hubness"] and hubness_k > n - 1 else "k"
                    why = ("train_hubness" if key == "hubness_k" else "k_selection: loo")
                    raise ConfigError(key, f"{key} = {loo} exceeds the n_train - 1 = {n - 1} "
                                      f"other training points of a leave-one-out search "
                                      f"({why}); {shape.where}")
                check_reduction_limits(config, method, depth, shape)
            try:
                cls.check_data_limits(cls.with_defaults(cfg.method_params(config, method)), n,
                                      shape.d, shape.n_classes)
            except ParameterError as err:
                raise ConfigError(f"methods.{method}.params.{err.parameter}",
                                  f"{err}; {shape.where}") from None

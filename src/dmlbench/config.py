"""Benchmark configuration: schema validation, semantic checks, defaults, and the job list.

The Snakefile validates the config with `validate_schema` (against
`workflow/schemas/config.schema.yaml`), then calls `check` here; the CLI calls `load`, which reads
the file and does both. Every error is one line naming the config key that is wrong (or, for a
file that is not YAML, the file, line and column), before any job runs.
"""

from __future__ import annotations

import copy
import difflib
import math
from dataclasses import dataclass
from pathlib import Path

import yaml

from . import vocabulary as voc
from .run import protocols

SCHEMA_PATH = Path(__file__).parent / "schemas" / "config.schema.yaml"

DEFAULTS = {
    "seed": 0,
    "k": [1, 3, 5],
    "hubness_k": 10,
    "k_selection": "none",
    "train_hubness": True,
    "protocol": {"kind": "holdout", "repeats": 4, "train_fraction": 0.7},
    "preprocess": [],
    "data": {"cache": "resources"},
}


class ConfigError(ValueError):
    """A configuration problem at `key` (a dotted path such as ``methods.lmnn.params``)."""

    def __init__(self, key: str, message: str):
        self.key = key
        super().__init__(f"config error at '{key}': {message}")


def schema() -> dict:
    return yaml.safe_load(SCHEMA_PATH.read_text())


def validate_schema(config: dict, fill_defaults: bool = False) -> None:
    """JSON-schema validation; the first error (in key order) as a one-line `ConfigError` naming
    the key (an unknown key by its own name). `fill_defaults` writes the schema's defaults into
    `config` as Snakemake's `validate` does (the Snakefile's config keeps its former content)."""
    import jsonschema

    # a number of the schema is finite: NaN passes every bound (each comparison is false)
    finite = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
        "number", lambda checker, value: _is_number(value) and math.isfinite(value))
    cls = jsonschema.validators.extend(jsonschema.Draft202012Validator, type_checker=finite)
    if fill_defaults:
        def set_defaults(validator, properties, instance, subschema):
            for name, sub in properties.items():
                if "default" in sub and isinstance(instance, dict):
                    instance.setdefault(name, copy.deepcopy(sub["default"]))
            yield from jsonschema.Draft202012Validator.VALIDATORS["properties"](
                validator, properties, instance, subschema)
        cls = jsonschema.validators.extend(cls, {"properties": set_defaults})
    errors = sorted(cls(schema()).iter_errors(config),
                    key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        non_finite = _non_finite(errors[0])
        err = non_finite or errors[0]
        path = [str(p) for p in err.absolute_path]
        if non_finite is not None:
            raise ConfigError(".".join(path), f"must be a finite number, got {err.instance}")
        if err.validator == "additionalProperties" and isinstance(err.instance, dict):
            known = sorted(err.schema.get("properties", {}))
            unknown = sorted(set(err.instance) - set(known))[0]
            close = difflib.get_close_matches(unknown, known, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise ConfigError(".".join([*path, unknown]), f"unknown key{hint}; the keys here "
                              f"are {', '.join(known)}")
        raise ConfigError(".".join(path) or "<top level>", " ".join(err.message.split()))


def _non_finite(err):
    """The error (among `err` and the alternatives of a oneOf/anyOf) that refuses a NaN or an
    infinity, so the message names it rather than 'not valid under any of the schemas'."""
    if err.validator == "type" and _is_number(err.instance) and not math.isfinite(err.instance):
        return err
    return next(filter(None, map(_non_finite, err.context or ())), None)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def with_defaults(config: dict) -> dict:
    """A copy of `config` with the documented defaults filled in."""
    out = copy.deepcopy(config)
    for key, value in DEFAULTS.items():
        if key not in out:
            out[key] = copy.deepcopy(value)
    out["data"] = {**DEFAULTS["data"], **(out.get("data") or {})}
    out["datasets"] = {label: dict(entry or {}) for label, entry in out["datasets"].items()}
    out["methods"] = {label: dict(entry or {}) for label, entry in out["methods"].items()}
    return out


def check(config: dict) -> dict:
    """Semantic checks beyond the schema; returns the config with defaults filled in."""
    from .data import registry as data_registry
    from .methods import registry as method_registry
    from .methods.parameters import ParameterError
    from .run import job as run_job

    config = with_defaults(config)
    for label, entry in config["datasets"].items():
        name = entry.get("dataset", label)
        try:
            data_registry.get(name)
        except KeyError as err:
            raise ConfigError(f"datasets.{label}", err.args[0]) from None
        protocol = dataset_protocol(config, label)
        if protocol["kind"] == "holdout" and {"train_fraction", "train_size"} <= set(protocol):
            raise ConfigError(f"datasets.{label}.protocol",
                              "give either train_fraction or train_size, not both")
        if protocol["kind"] == "kfold" and "folds" not in protocol:
            raise ConfigError(f"datasets.{label}.protocol", "kind kfold needs `folds`")
        if (protocol["kind"] == "given_folds"
                and not data_registry.get(name).extras.get("given_folds")):
            raise ConfigError(f"datasets.{label}.protocol",
                              f"kind given_folds needs a data set with published folds; '{name}' "
                              "has none (the keel-* data sets have them)")
        if protocol["kind"] == "loo" and entry.get("drop_classes_below"):
            raise ConfigError(f"datasets.{label}.drop_classes_below",
                              "leave-one-out makes one split per sample of the whole data set; "
                              "it cannot be combined with drop_classes_below")
    for label, entry in config["methods"].items():
        name = entry.get("method", label)
        try:
            method_registry.make(name, entry.get("params"))
            method_registry.get(name).check_parameters(entry.get("params") or {})
        except KeyError as err:
            raise ConfigError(f"methods.{label}.method" if "method" in entry else f"methods.{label}",
                              err.args[0]) from None
        except ParameterError as err:
            raise ConfigError(f"methods.{label}.params.{err.parameter}", str(err)) from None
        except (TypeError, ValueError) as err:
            raise ConfigError(f"methods.{label}.params", str(err)) from None
        try:
            run_job.reduction_settings(name, entry.get("hubness_reduction"))
        except ValueError as err:
            raise ConfigError(f"methods.{label}.hubness_reduction", str(err)) from None
        limits = entry.get("max_splits")
        for key, labels in (("datasets", entry.get("datasets", [])),
                            ("max_splits", limits if isinstance(limits, dict) else [])):
            for ds in labels:
                if ds not in config["datasets"]:
                    raise ConfigError(f"methods.{label}.{key}",
                                      f"'{ds}' is not a data-set label of this config")
    from . import studies

    for kind in studies.STUDIES:
        for ds in (config.get(kind) or {}).get("datasets", []):
            if ds not in config["datasets"]:
                raise ConfigError(f"{kind}.datasets", f"'{ds}' is not a data-set label of this config")
    check_data_limits(config)
    return config


class ConfigFileError(ValueError):
    """A config file that cannot be read as YAML: the message names the file, line and column."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one mapping (YAML keeps the last one
    silently); merge keys (``<<: *anchor``) may still be overridden."""

    def construct_mapping(self, node, deep=False):
        seen = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, (str, int, float, bool)) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key '{key}' (first given on line {seen[key] + 1})",
                    key_node.start_mark)
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep)


def read(path: str | Path) -> dict:
    """The YAML content of a config file; `ConfigFileError` (one line: file, line, column and
    the problem) when it cannot be parsed, `FileNotFoundError` when it does not exist."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"config file {path} does not exist")
    try:
        content = yaml.load(path.read_text(), Loader=_UniqueKeyLoader)
    except yaml.MarkedYAMLError as err:
        def at(mark):
            return f"line {mark.line + 1}, column {mark.column + 1}"
        mark = err.problem_mark or err.context_mark
        message = f"{path}, {at(mark)}: {err.problem or err.context}"
        if err.context and err.problem and err.context_mark:
            message += f" ({err.context} that starts on {at(err.context_mark)})"
        raise ConfigFileError(" ".join(message.split())) from None
    except yaml.YAMLError as err:
        raise ConfigFileError(f"{path}: {' '.join(str(err).split())}") from None
    return content if content is not None else {}


def load(path: str | Path) -> dict:
    """Read, validate and check a config file."""
    config = read(path)
    validate_schema(config)
    return check(config)


def dataset_name(config: dict, label: str) -> str:
    return config["datasets"][label].get("dataset", label)


def dataset_protocol(config: dict, label: str) -> dict:
    """The data set's protocol; `max_repeats` (quick runs) caps its repeats."""
    protocol = dict(config["datasets"][label].get("protocol") or config["protocol"])
    cap = config.get("max_repeats")
    if cap and protocol["kind"] in ("holdout", "kfold"):
        protocol["repeats"] = min(int(protocol.get("repeats", 1)), int(cap))
    return protocol


def dataset_preprocess(config: dict, label: str) -> list:
    entry = config["datasets"][label]
    return entry["preprocess"] if "preprocess" in entry else config["preprocess"]


def split_id(config: dict, label: str) -> str:
    """File stem of the data set's split file: protocol id, plus the class filter if any."""
    pid = protocols.protocol_id(dataset_protocol(config, label), config["seed"])
    drop = config["datasets"][label].get("drop_classes_below")
    return f"{pid}-drop{drop}" if drop else pid


def split_path(config: dict, label: str) -> str:
    return f"{config['data']['cache']}/splits/{dataset_name(config, label)}/{split_id(config, label)}.npz"


def dataset_paths(config: dict, name: str) -> tuple[str, str]:
    base = f"{config['data']['cache']}/datasets/{name}"
    return f"{base}.npz", f"{base}.json"


@dataclass(frozen=True)
class Job:
    """One workflow job: a method on a data set, for a batch (`part`) of its splits."""

    dataset: str  # data-set label
    method: str  # method label
    part: int
    splits: tuple[int, ...]


def splits_per_job(config: dict, method: str) -> int | None:
    entry = config["methods"][method]
    return entry.get("splits_per_job", config.get("splits_per_job"))


def max_splits(entry: dict, dataset: str, n: int) -> int:
    """The splits a method entry runs on a data set of n splits (`max_splits`: a number for
    every data set, or a mapping from data-set labels to numbers)."""
    limit = entry.get("max_splits", n)
    if isinstance(limit, dict):
        limit = limit.get(dataset, n)
    return min(n, limit)


def jobs(config: dict) -> list[Job]:
    """Every job of the benchmark. A job runs `splits_per_job` splits of one (data set, method)
    in one process (default: all of them), which saves the ~3 s interpreter start-up per split.
    Leave-one-out has one split per sample: their number is the registry's n of the data set.
    A method's `max_splits` runs only the first splits of each data set (a slow method on a
    protocol with many repeats), or of the data sets it maps to a number; its parent run then
    aggregates that many."""
    from .data import registry as data_registry

    out = []
    for ds in config["datasets"]:
        spec = data_registry.get(dataset_name(config, ds))
        n = protocols.n_splits(dataset_protocol(config, ds), n_samples=spec.n,
                               n_folds=spec.extras.get("given_folds"))
        for m, entry in config["methods"].items():
            if "datasets" in entry and ds not in entry["datasets"]:
                continue
            n_run = min(n, max_splits(entry, ds, n))
            size = splits_per_job(config, m) or n_run
            for part, start in enumerate(range(0, n_run, size)):
                out.append(Job(ds, m, part, tuple(range(start, min(start + size, n_run)))))
    return out


def job_of(config: dict, dataset: str, method: str, part: int) -> Job:
    for job in jobs(config):
        if (job.dataset, job.method, job.part) == (dataset, method, part):
            return job
    raise KeyError(f"no job ({dataset}, {method}, part {part}) in this config")


def record_path(config: dict, job: Job) -> str:
    return f"results/{config['benchmark']}/runs/{job.dataset}/{job.method}/part{job.part}.json"


def job_spec(config: dict, dataset: str, method: str, splits: list[int]) -> dict:
    """Everything one job needs, self-contained (the workflow passes it to `dmlbench run`)."""
    from .run import job as run_job

    m_entry = config["methods"][method]
    spec = {
        "benchmark": config["benchmark"],
        "dataset": {"label": dataset, "name": dataset_name(config, dataset)},
        "protocol": dataset_protocol(config, dataset),
        "split_file": split_path(config, dataset),
        "splits": [int(s) for s in splits],
        "preprocess": dataset_preprocess(config, dataset),
        "method": {"label": method, "name": m_entry.get("method", method),
                   "params": m_entry.get("params") or {}},
        "k": list(m_entry.get("k", config["k"])),
        "hubness_k": int(config["hubness_k"]),
        "k_selection": config["k_selection"],
        "train_hubness": bool(config["train_hubness"]),
        "seed": int(config["seed"]),
        "cache": config["data"]["cache"],
        "drop_classes_below": config["datasets"][dataset].get("drop_classes_below"),
        "dimension_sweep": bool(m_entry.get("dimension_sweep", config.get("dimension_sweep", False))),
        "hubness_reduction": run_job.reduction_settings(m_entry.get("method", method),
                                                        m_entry.get("hubness_reduction")),
    }
    spec["parent_key"] = voc.digest(identity(spec))
    return spec


#: the rule of `identity` (below). Version 1 keys carry no version field; a later version adds
#: `identity_version` to the identity, which changes every key (and reruns every job) once.
IDENTITY_VERSION = 1
#: what always identifies a job's results
IDENTITY_KEYS = ("benchmark", "dataset", "protocol", "preprocess", "method", "k", "hubness_k",
                 "seed", "drop_classes_below")
#: options that join the identity only when set away from their default, so that adding an
#: option never changes the keys (and results) of configs that do not use it
IDENTITY_OPTIONS = {"dimension_sweep": False, "k_selection": DEFAULTS["k_selection"],
                    "train_hubness": DEFAULTS["train_hubness"], "hubness_reduction": None}


def identity(spec: dict) -> dict:
    """What identifies the results of a job spec (rule version `IDENTITY_VERSION`): the
    `IDENTITY_KEYS`, plus each of the `IDENTITY_OPTIONS` that differs from its default. Two
    specs with the same identity give the same records (up to timings); the parent key is its
    digest, a split's job key the digest of (parent key, split)."""
    out = {key: spec[key] for key in IDENTITY_KEYS}
    out.update({key: spec[key] for key, default in IDENTITY_OPTIONS.items()
                if spec[key] != default})
    return out


def study_jobs(config: dict) -> list[tuple[str, str]]:
    """(study kind, data-set label) of every study job: a study runs when its key is in the
    config, on the data sets its `datasets` list names (default all)."""
    from . import studies

    return [(kind, label) for kind in studies.STUDIES if kind in config
            for label in (config[kind] or {}).get("datasets") or config["datasets"]]


def study_path(config: dict, kind: str, label: str) -> str:
    return f"results/{config['benchmark']}/{kind}/{label}.json"


def study_spec(config: dict, kind: str, label: str) -> dict:
    """Everything one study job needs (the workflow passes it to `dmlbench study KIND`)."""
    from . import studies

    return studies.get(kind).spec(
        benchmark=config["benchmark"],
        dataset={"label": label, "name": dataset_name(config, label)},
        preprocess=dataset_preprocess(config, label), cache=config["data"]["cache"],
        config_value=config[kind])


# --- what the workflow, the resources and the report read from a config (nowhere else reads keys)


def benchmark(config: dict) -> str:
    return config["benchmark"]


def cache_dir(config: dict) -> str:
    return config["data"]["cache"]


def data_source(config: dict) -> tuple[str | None, bool]:
    """(mirror, offline) of the config's `data` entry: where downloads may come from."""
    return config["data"].get("mirror"), bool(config["data"].get("offline", False))


def public(config: dict) -> dict:
    """A copy of `config` fit to publish: a mirror is shown by its last folder (a local
    directory) or its scheme, host and path (a URL, without credentials or query); an absolute
    cache directory by its last folder."""
    import urllib.parse

    out = copy.deepcopy(config)
    cache = out.get("data", {}).get("cache")
    if cache and Path(cache).is_absolute():
        out["data"]["cache"] = f"<local directory>/{Path(cache).name}"
    mirror = out.get("data", {}).get("mirror")
    if mirror:
        parts = urllib.parse.urlsplit(mirror)
        if parts.scheme in ("http", "https"):
            host = parts.hostname + (f":{parts.port}" if parts.port else "")
            out["data"]["mirror"] = f"{parts.scheme}://{host}{parts.path}"
        else:
            out["data"]["mirror"] = f"<local directory>/{Path(parts.path).name}"
    return out


def trust_unpinned(config: dict) -> bool:
    """Whether the config's `data` entry accepts downloaded files without a pin."""
    return bool(config["data"].get("trust_unpinned", False))


def dataset_names(config: dict) -> list[str]:
    """Registry names of the config's data sets (each once, in config order)."""
    return list(dict.fromkeys(dataset_name(config, label) for label in config["datasets"]))


def split_arguments(config: dict, name: str, split: str) -> dict | None:
    """Protocol, seed and class filter of the split file `split` (`split_id`) of data set
    `name`, as `dmlbench split` takes them; None when no data set of the config has it."""
    for label in config["datasets"]:
        if dataset_name(config, label) == name and split_id(config, label) == split:
            return {"protocol": dataset_protocol(config, label), "seed": int(config["seed"]),
                    "drop_classes_below": int(config["datasets"][label].get("drop_classes_below") or 0)}
    return None


def job_resources(config: dict, job: Job) -> dict:
    """{threads, mem_mb, runtime} of a workflow job: estimated from the data set's registry size
    and preprocessing (`dmlbench.run.resources`); the method's config entry overrides each."""
    from .data import registry as data_registry
    from .run import resources

    spec = data_registry.get(dataset_name(config, job.dataset))
    entry = config["methods"][job.method]
    overrides = {key: entry[key] for key in ("threads", "mem_mb", "runtime") if key in entry}
    return resources.for_job(spec.n, spec.d, dataset_preprocess(config, job.dataset),
                             len(job.splits), overrides)


def report_title(config: dict | None, experiment: str) -> str:
    """The report's title: the config's `report.title`, else "dmlbench: <benchmark>"."""
    return ((config or {}).get("report") or {}).get("title") or f"dmlbench: {experiment}"


def report_rope(config: dict | None, default: float) -> float:
    """The region of practical equivalence of the Bayesian comparisons (`report.rope`)."""
    return float(((config or {}).get("report") or {}).get("rope", default))


def description(config: dict | None) -> str:
    return (config or {}).get("description", "")


def paper_tables(config: dict | None) -> list[dict]:
    """The config's `paper_tables` entries (published tables to put beside ours)."""
    return (config or {}).get("paper_tables") or []


def summary(config: dict) -> str:
    """One line: how many data sets, methods and jobs the config has."""
    return (f"{len(config['datasets'])} data sets, {len(config['methods'])} methods, "
            f"{len(jobs(config))} jobs")


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
    sizes are impossible or the preprocessing does not fit the data."""
    from .data import registry as data_registry
    from .run import preprocessing

    spec = data_registry.get(dataset_name(config, label))
    entry = config["datasets"][label]
    drop = int(entry.get("drop_classes_below") or 0)
    protocol = dataset_protocol(config, label)
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
    steps = dataset_preprocess(config, label)
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


def check_reduction_limits(method: str, entry: dict, depth: int, shape) -> None:
    """A method's `hubness_reduction` on a training part of `shape`: its local scale's k among
    the n_train - 1 others, and, above `exact_max` training points, `candidates` at least the
    `depth` neighbours the evaluation asks for."""
    from .run import job as run_job

    settings = run_job.reduction_settings(entry.get("method", method),
                                          entry.get("hubness_reduction"))
    if settings is None:
        return
    key, n = f"methods.{method}.hubness_reduction", shape.n_train
    if settings.get("k", 0) > n - 1:
        raise ConfigError(f"{key}.k", f"k = {settings['k']} exceeds the n_train - 1 = {n - 1} "
                          f"other training points; {shape.where}")
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
    from .methods import registry as method_registry
    from .methods.parameters import ParameterError
    from .run.job import neighbour_depths

    hubness_k = int(config["hubness_k"])
    for label in config["datasets"]:
        shape = training_shape(config, label)
        n = shape.n_train
        for method, entry in config["methods"].items():
            if "datasets" in entry and label not in entry["datasets"]:
                continue
            cls = method_registry.get(entry.get("method", method))
            ks = list(entry.get("k", config["k"]))
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
                check_reduction_limits(method, entry, depth, shape)
            try:
                cls.check_data_limits(cls.with_defaults(entry.get("params") or {}), n, shape.d,
                                      shape.n_classes)
            except ParameterError as err:
                raise ConfigError(f"methods.{method}.params.{err.parameter}",
                                  f"{err}; {shape.where}") from None

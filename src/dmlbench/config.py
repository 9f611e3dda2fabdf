"""Benchmark config files: reading, the schema, its defaults, and typed accessors of the keys.

The schema (`workflow/schemas/config.schema.yaml`) is the only source of the defaults of config
keys: `with_defaults` fills them in as Snakemake's `validate` does. Every error is one line
naming the config key that is wrong (or, for a file that is not YAML, the file, line and
column). A leaf: the checks that need data sets, methods or studies, and all a config implies
(jobs, specs, paths, identity, resources), live in `run.plan` and `studies`; the report reads
the checked config stored with the runs, never this module.
"""
from __future__ import annotations

import copy
import functools
import math
from pathlib import Path

import jsonschema
import yaml

from . import strict_yaml, suggestions

SCHEMA_PATH = Path(__file__).parent / "schemas" / "config.schema.yaml"


class ConfigError(ValueError):
    """A configuration problem at `key` (a dotted path such as ``methods.lmnn.params``)."""

    def __init__(self, key: str, message: str):
        self.key = key
        super().__init__(f"config error at '{key}': {message}")


class ConfigFileError(ValueError):
    """A config file that is not YAML: the message names the file, line and column."""


@functools.cache
def _schema() -> dict:
    return yaml.safe_load(SCHEMA_PATH.read_text())


def default(key: str):
    """The schema's default of top-level key `key` (a copy)."""
    return copy.deepcopy(_schema()["properties"][key]["default"])


def _set_defaults(validator, properties, instance, subschema):
    """`properties`, writing each missing property's default first (jsonschema FAQ, Snakemake)."""
    for name, sub in properties.items():
        if "default" in sub and isinstance(instance, dict):
            instance.setdefault(name, copy.deepcopy(sub["default"]))
    yield from jsonschema.Draft202012Validator.VALIDATORS["properties"](
        validator, properties, instance, subschema)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


#: the schema's validator with finite numbers only: NaN passes every bound (each comparison with
#: it is false), so `.nan` would slip through `minimum` / `exclusiveMinimum`
_FINITE = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
        "number", lambda checker, value: _is_number(value) and math.isfinite(value)))
_FILLING = jsonschema.validators.extend(_FINITE, {"properties": _set_defaults})


def _check_size(config: dict) -> None:
    """`strict_yaml.check_size` as a `ConfigError`, before anything walks the config."""
    try:
        strict_yaml.check_size(config)
    except strict_yaml.TooLarge as err:
        raise ConfigError(err.key, str(err)) from None


def validate_schema(config: dict, fill_defaults: bool = False) -> None:
    """JSON-schema validation; the first error (in key order) as a one-line `ConfigError` naming
    the key (an unknown key by its own name). `fill_defaults` writes the schema's defaults into
    `config` as Snakemake's `validate` does (the Snakefile's config keeps its former content).
    A config that YAML aliases make too large is refused first."""
    _check_size(config)
    cls = _FILLING if fill_defaults else _FINITE
    errors = sorted(cls(_schema()).iter_errors(config),
                    key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        raise ConfigError(*suggestions.schema_error(errors[0]))


def with_defaults(config: dict) -> dict:
    """A copy of `config` with every default of the schema filled in; an empty section
    (``mvce_validation:``) and an empty data-set or method entry become empty mappings first,
    so they get their defaults too. Run it on a config that passed `validate_schema`."""
    _check_size(config)
    out = copy.deepcopy(config)
    sections = _schema()["properties"]
    for key, value in out.items():
        if value is None and "object" in sections.get(key, {}).get("type", ()):
            out[key] = {}
    for key in ("datasets", "methods"):
        out[key] = {label: dict(entry or {}) for label, entry in out[key].items()}
    for _ in _FILLING(_schema()).iter_errors(out):  # fills while it validates
        pass
    return out


def read(path: str | Path) -> dict:
    """A config file's YAML content; `ConfigFileError` names file, line and column of an error."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"config file {path} does not exist")
    try:
        content = strict_yaml.load(path)
    except strict_yaml.YAMLFileError as err:
        raise ConfigFileError(str(err)) from None
    return content if content is not None else {}


def load(path: str | Path) -> dict:
    """A config file, validated against the schema, defaults filled in (then `run.plan.check`)."""
    config = read(path)
    validate_schema(config)
    return with_defaults(config)


# --- typed accessors: a config with its defaults filled in (`with_defaults`)


def benchmark(config: dict) -> str:
    return config["benchmark"]


def cache_dir(config: dict) -> str:
    return config["data"]["cache"]


def data_source(config: dict) -> tuple[str | None, bool]:
    """(mirror, offline) of the config's `data` entry: where downloads may come from."""
    return config["data"].get("mirror"), bool(config["data"]["offline"])


def dataset_name(config: dict, label: str) -> str:
    """The registered name of data-set label `label`."""
    return config["datasets"][label].get("dataset", label)


def trust_unpinned(config: dict) -> bool:
    """Whether the config's `data` entry accepts downloaded files without a pin."""
    return bool(config["data"].get("trust_unpinned", False))


def dataset_names(config: dict) -> list[str]:
    """Registry names of the config's data sets (each once, in order; not those given by path)."""
    return list(dict.fromkeys(dataset_name(config, label) for label, entry
                              in config["datasets"].items() if "path" not in entry))


def dataset_protocol(config: dict, label: str) -> dict:
    """The data set's protocol, which makes its full training parts and test parts (without
    `train_sizes`: `train_sizes` below); `max_repeats` (quick runs) caps its repeats."""
    protocol = dict(config["datasets"][label].get("protocol") or config["protocol"])
    protocol.pop("train_sizes", None)
    cap = config.get("max_repeats")
    if cap and protocol["kind"] in ("holdout", "kfold"):
        protocol["repeats"] = min(int(protocol.get("repeats", 1)), int(cap))
    return protocol


def train_sizes(config: dict, label: str) -> list[int]:
    """The learning-curve sizes of the data set's protocol below the full training part
    (`full` runs anyway), ascending; [] without a learning curve."""
    protocol = config["datasets"][label].get("protocol") or config["protocol"]
    return sorted(int(s) for s in protocol.get("train_sizes") or () if s != "full")


def dataset_preprocess(config: dict, label: str) -> list:
    entry = config["datasets"][label]
    return entry["preprocess"] if "preprocess" in entry else config["preprocess"]


def method_name(config: dict, label: str) -> str:
    """The registered name of method label `label`."""
    return config["methods"][label].get("method", label)


def method_params(config: dict, label: str) -> dict:
    return config["methods"][label].get("params") or {}


def method_ks(config: dict, label: str) -> list[int]:
    """The k of the k-NN rule a method entry is evaluated at (its own `k`, else the config's)."""
    return list(config["methods"][label].get("k", config["k"]))


def method_datasets(config: dict, label: str) -> list[str]:
    """The data-set labels a method entry runs on (its `datasets`, else all)."""
    entry = config["methods"][label]
    return [ds for ds in config["datasets"] if "datasets" not in entry or ds in entry["datasets"]]


def dimension_sweep(config: dict, label: str) -> bool:
    """Whether a method entry is evaluated on the dimension sweep (its own value wins)."""
    return bool(config["methods"][label].get("dimension_sweep", config["dimension_sweep"]))


def hubness_reduction(config: dict, label: str) -> dict | None:
    """A method entry's hubness reduction (its settings, defaults filled in), or None."""
    return config["methods"][label].get("hubness_reduction")


def splits_per_job(config: dict, label: str) -> int | None:
    """Splits per job of a method entry (its own value, else the config's; None: all)."""
    return config["methods"][label].get("splits_per_job", config.get("splits_per_job"))


def datasets_per_job(config: dict, label: str) -> int | None:
    """Data sets one process runs a method on (its own value, else the config's; None: all)."""
    return config["methods"][label].get("datasets_per_job", config.get("datasets_per_job"))


def job_group(config: dict, label: str) -> str | None:
    """Method `label`'s `job_group`; None: its own process (all under `job_groups: false`)."""
    if not config.get("job_groups", True):
        return None
    return config["methods"][label].get("job_group")


def max_splits(config: dict, label: str, dataset: str, n: int) -> int:
    """The splits a method runs of a data set's n (`max_splits`: a number or {label: number})."""
    limit = config["methods"][label].get("max_splits", n)
    if isinstance(limit, dict):
        limit = limit.get(dataset, n)
    return min(n, limit)


def label_lists(config: dict) -> list[tuple[str, list]]:
    """(key, labels) of every list of data-set labels in the config: each method entry's
    `datasets` and `max_splits` mapping, and the `datasets` of any top-level section the
    schema gives one (the side studies)."""
    out = []
    for label, entry in config["methods"].items():
        limits = entry.get("max_splits")
        out += [(f"methods.{label}.datasets", entry.get("datasets", [])),
                (f"methods.{label}.max_splits", list(limits) if isinstance(limits, dict) else [])]
    for key, sub in _schema()["properties"].items():
        if "datasets" in sub.get("properties", {}) and isinstance(config.get(key), dict):
            out.append((f"{key}.datasets", config[key].get("datasets", [])))
    return out

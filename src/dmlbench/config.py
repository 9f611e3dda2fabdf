"""Benchmark configuration: schema validation, semantic checks, defaults, and the job list.

The Snakefile validates the config with Snakemake's `validate` against
`workflow/schemas/config.schema.yaml`, then calls `check` here; the CLI calls `load`, which does
both. Every error names the config key that is wrong.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import yaml

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


def validate_schema(config: dict) -> None:
    """JSON-schema validation with an error that names the offending key."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema())
    errors = sorted(validator.iter_errors(config), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        key = ".".join(str(p) for p in err.absolute_path) or "<top level>"
        raise ConfigError(key, err.message)


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
        except KeyError as err:
            raise ConfigError(f"methods.{label}.method" if "method" in entry else f"methods.{label}",
                              err.args[0]) from None
        except (TypeError, ValueError) as err:
            raise ConfigError(f"methods.{label}.params", str(err)) from None
        for ds in entry.get("datasets", []):
            if ds not in config["datasets"]:
                raise ConfigError(f"methods.{label}.datasets",
                                  f"'{ds}' is not a data-set label of this config")
    for ds in (config.get("mvce_validation") or {}).get("datasets", []):
        if ds not in config["datasets"]:
            raise ConfigError("mvce_validation.datasets", f"'{ds}' is not a data-set label of this config")
    return config


def load(path: str | Path) -> dict:
    """Read, validate and check a config file."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"config file {path} does not exist")
    config = yaml.safe_load(path.read_text()) or {}
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


def jobs(config: dict) -> list[Job]:
    """Every job of the benchmark. A job runs `splits_per_job` splits of one (data set, method)
    in one process (default: all of them), which saves the ~3 s interpreter start-up per split.
    Leave-one-out has one split per sample: their number is the registry's n of the data set."""
    from .data import registry as data_registry

    out = []
    for ds in config["datasets"]:
        spec = data_registry.get(dataset_name(config, ds))
        n = protocols.n_splits(dataset_protocol(config, ds), n_samples=spec.n,
                               n_folds=spec.extras.get("given_folds"))
        for m, entry in config["methods"].items():
            if "datasets" in entry and ds not in entry["datasets"]:
                continue
            size = splits_per_job(config, m) or n
            for part, start in enumerate(range(0, n, size)):
                out.append(Job(ds, m, part, tuple(range(start, min(start + size, n)))))
    return out


def job_of(config: dict, dataset: str, method: str, part: int) -> Job:
    for job in jobs(config):
        if (job.dataset, job.method, job.part) == (dataset, method, part):
            return job
    raise KeyError(f"no job ({dataset}, {method}, part {part}) in this config")


def record_path(config: dict, job: Job) -> str:
    return f"results/{config['benchmark']}/runs/{job.dataset}/{job.method}/part{job.part}.json"


def _digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:16]


def job_key(parent_key: str, split: int) -> str:
    """Identity of one split's result: the parent's identity and the split index."""
    return _digest({"parent": parent_key, "split": int(split)})


def job_spec(config: dict, dataset: str, method: str, splits: list[int]) -> dict:
    """Everything one job needs, self-contained (the workflow passes it to `dmlbench run`)."""
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
    }
    identity = {key: spec[key] for key in ("benchmark", "dataset", "protocol", "preprocess",
                                           "method", "k", "hubness_k", "seed",
                                           "drop_classes_below")}
    if spec["dimension_sweep"]:  # only when set, so that other configs keep their keys
        identity["dimension_sweep"] = True
    # options added later join the identity only when set away from their default, so the
    # results of configs that do not use them keep their keys
    identity.update({key: spec[key] for key in ("k_selection", "train_hubness")
                     if spec[key] != DEFAULTS[key]})
    spec["parent_key"] = _digest(identity)
    return spec


def mvce_validation_datasets(config: dict) -> list[str]:
    """Labels of the data sets the MVCE validation runs on (none without `mvce_validation`)."""
    if "mvce_validation" not in config:
        return []
    return list((config["mvce_validation"] or {}).get("datasets") or config["datasets"])


def mvce_validation_path(config: dict, label: str) -> str:
    return f"results/{config['benchmark']}/mvce_validation/{label}.json"


def mvce_validation_spec(config: dict, label: str) -> dict:
    """Everything the validation of one data set needs (the workflow passes it to
    `dmlbench mvce-validate`)."""
    from .studies import mvce_validation

    settings = {k: v for k, v in (config["mvce_validation"] or {}).items() if k != "datasets"}
    return {
        "benchmark": config["benchmark"],
        "dataset": {"label": label, "name": dataset_name(config, label)},
        "preprocess": dataset_preprocess(config, label),
        "settings": mvce_validation.settings(settings),
        "cache": config["data"]["cache"],
    }

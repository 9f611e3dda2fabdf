"""Result records: one self-contained JSON document per job, checked against
`workflow/schemas/record.schema.json`.

Everything but `timings` and `environment` is a function of the config, the data and the code, so
rerunning a job gives the same record apart from those two sections.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import hashlib
import json
import os
import platform
import socket
import subprocess
import time
import zlib
from importlib import metadata
from pathlib import Path

import jsonschema
import psutil

from .._version import __version__
from .. import vocabulary as voc
from ..files import read_json, write_json

SCHEMA_VERSION = 1
SCHEMA_PATH = Path(__file__).parents[1] / "schemas" / "record.schema.json"
VOLATILE = ("timings", "environment")
_PACKAGES = ("numpy", "scipy", "scikit-learn", "metric-learn", "mlflow", "snakemake", "cvxpy")


@functools.cache
def package_versions() -> dict[str, str]:
    out = {"python": platform.python_version(), "dmlbench": __version__}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


@functools.cache
def machine() -> str:
    """The CPU model, its logical cores and the memory, e.g. 'AMD EPYC 7B13, 2 cores, 24 GB'."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            model = next(line.split(":", 1)[1].strip() for line in fh
                         if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    memory = psutil.virtual_memory().total / 2**30
    return f"{model}, {os.cpu_count()} cores, {memory:.0f} GB"


@functools.cache
def git_commit() -> str:
    """The commit of the dmlbench checkout, with '+dirty' when it has uncommitted changes."""
    root = Path(__file__).resolve().parents[3]
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                                text=True, check=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return commit + ("+dirty" if dirty else "")


#: what computes records, relative to the checkout: a commit that changes nothing here (one that
#: only adds records, reports, docs, configs or tests) keeps the code version (`code_version`)
CODE_PATHS = ("Snakefile", "src/dmlbench", "workflow")


@functools.cache
def code_version() -> str:
    """The version of the code that computes records: the first 12 hex digits of the sha256 of
    the git object ids of `CODE_PATHS` at HEAD (trees for the folders), so that a commit that
    only adds records or docs keeps it, with '+dirty.<8 hex digits>' when those paths have
    uncommitted changes (the digits a digest of the changes, untracked files included: two
    different edits are two versions); 'unknown' outside a git checkout. Published runs
    should come from one code version (`tools/run_in_pieces.py` refuses to mix them, the
    report warns)."""
    root = Path(__file__).resolve().parents[3]

    def git(*args: str) -> bytes:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, check=True,
                              timeout=30).stdout

    try:
        objects = git("rev-parse", *(f"HEAD:{path}" for path in CODE_PATHS))
        changed = git("diff", "HEAD", "--binary", "--", *CODE_PATHS)
        untracked = git("ls-files", "--others", "--exclude-standard", "-z", "--", *CODE_PATHS)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    version = hashlib.sha256(objects).hexdigest()[:12]
    if not changed and not untracked:
        return version
    changes = hashlib.sha256(changed)
    for name in sorted(filter(None, untracked.split(b"\0"))):
        changes.update(name + b"\0")
        with contextlib.suppress(OSError):
            changes.update((root / name.decode()).read_bytes())
    return f"{version}+dirty.{changes.hexdigest()[:8]}"


def _plain(value):
    """JSON-safe copy of a parameter value (numpy scalars to Python numbers)."""
    return json.loads(json.dumps(value, default=lambda v: getattr(v, "item", lambda: str(v))()))


def build(spec, job_key, dataset, split, pre_info, est, params, metrics, timings, threads) -> dict:
    """The record of one finished split of a job."""
    scalars, curves = split_curves(metrics)
    record = _identified(spec, job_key, dataset.name, dataset.meta, split, est, params)
    record["preprocess"].update(pre_info)
    return {**record, "metrics": scalars, "curves": curves, "fit_info": _plain(est.fit_info()),
            "timings": {**{key: float(v) for key, v in timings.items()}, "threads": threads},
            "environment": environment()}


def build_over_budget(spec, job_key, name: str, meta: dict, split, est, params,
                      over_budget: dict, threads: int) -> dict:
    """The record of a split of a job that went over its time limit or memory (the config's
    `over_budget: record`): what identifies it, no metrics, and `over_budget` (`reason`,
    `limit`, what the job `used`, `detail`). `name`, `meta`: the cached data set's name and
    metadata; `est`: the method as built for the split (not fitted)."""
    record = _identified(spec, job_key, name, meta, split, est, params)
    return {**record, "metrics": {}, "fit_info": {}, "timings": {"threads": threads},
            "environment": environment(), "over_budget": over_budget}


def _identified(spec, job_key, name: str, meta: dict, split, est, params) -> dict:
    """What a record of split `split` (its index, training and test points) of job `spec` says
    about its job, data, split, preprocessing steps and method."""
    return {
        "schema_version": SCHEMA_VERSION,
        "job_key": job_key,
        "parent_key": spec["parent_key"],
        "benchmark": spec["benchmark"],
        "dataset": {
            "label": spec["dataset"]["label"],
            "name": name,
            "source": meta["source"],
            "papers": meta["papers"],
            "n": meta["n"],
            "d": meta["d"],
            "n_classes": meta["n_classes"],
            "sha256": meta["sha256"],
            **({"unpinned": meta["unpinned"]} if meta.get("unpinned") else {}),
            **({"file": meta["file"]} if meta.get("file") else {}),
        },
        "split": {
            "protocol": spec["protocol"],
            "file": spec["split_file"],
            "index": int(split.index),
            "seed": spec["seed"],
            "n_train": int(split.train.size),
            "n_test": int(split.test.size),
            "drop_classes_below": spec.get("drop_classes_below"),
            # a learning curve's size (the training part subsampled); absent for full ones
            **({"train_size": spec["train_size"]} if spec.get("train_size") else {}),
        },
        "preprocess": {"steps": spec["preprocess"]},
        "method": {
            "label": spec["method"]["label"],
            "name": spec["method"]["name"],
            "family": est.family,
            "kind": est.kind,
            "papers": list(est.papers),
            "config_params": _plain(spec["method"]["params"]),
            "params": _plain(params),
        },
        "k": spec["k"],
        "hubness_k": spec["hubness_k"],
    }


def environment() -> dict:
    """Where and with what a record was computed: package versions, git commit and code
    version, host, machine, and when it finished."""
    return {
        "versions": package_versions(),
        "git_commit": git_commit(),
        "code_version": code_version(),
        "host": socket.gethostname(),
        "machine": machine(),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def split_curves(metrics: dict) -> tuple[dict[str, float], dict[str, list[float]]]:
    """Separate scalar metrics from curves (lists of numbers, e.g. accuracy per dimension)."""
    scalars = {k: float(v) for k, v in metrics.items() if not isinstance(v, (list, tuple))}
    curves = {k: [float(x) for x in v] for k, v in metrics.items() if isinstance(v, (list, tuple))}
    return scalars, curves


def job_key(parent_key: str, split: int) -> str:
    """Identity of one split's record: the parent's identity and the split index."""
    return voc.digest({"parent": parent_key, "split": int(split)})


def content_hash(record: dict) -> str:
    """sha256 of the record without its volatile parts (`VOLATILE` sections, and the `fit_info`
    entries whose key ends in `_s`: seconds a method measured itself, e.g. a CV search's time;
    likewise the `tuning` entry's times, and what an over-budget job `used`): equal for an
    identical rerun."""
    stable = {k: v for k, v in record.items() if k not in VOLATILE}
    for section in ("fit_info", "tuning"):
        if section in stable:
            stable[section] = {k: v for k, v in stable[section].items() if not k.endswith("_s")}
    if "over_budget" in stable:
        stable["over_budget"] = {k: v for k, v in stable["over_budget"].items() if k != "used"}
    return voc.digest(stable, None)


@functools.cache
def _validator():
    return jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text()))


def validate(document: dict) -> None:
    """Raise `ValueError` naming the first field that breaks the record-file schema."""
    errors = sorted(_validator().iter_errors(document), key=lambda e: list(e.absolute_path))
    if errors:
        where = ".".join(str(p) for p in errors[0].absolute_path) or "<top level>"
        raise ValueError(f"result record field '{where}': {errors[0].message}")


def write(path, split_records: list[dict]) -> None:
    """Write one job's records (one per split) as a record file, atomically."""
    document = {"schema_version": SCHEMA_VERSION, "records": split_records}
    validate(document)
    write_json(path, document)


class UnreadableRecord(ValueError):
    """A record file that is not complete JSON (or gzip): cut short, overwritten, corrupt."""

    def __init__(self, path, reason: str):
        self.path = Path(path)
        super().__init__(f"record file {path} cannot be read: {reason}")


def load(path):
    """A record file's (or study document's) JSON; `UnreadableRecord` naming the file when it
    cannot be parsed."""
    try:
        return read_json(path)
    except json.JSONDecodeError as err:
        raise UnreadableRecord(path, f"not valid JSON ({err})") from None
    except (EOFError, zlib.error, gzip.BadGzipFile) as err:
        raise UnreadableRecord(path, f"not a complete gzip file ({err or 'cut short'})") from None
    except UnicodeDecodeError as err:
        raise UnreadableRecord(path, f"not UTF-8 text ({err.reason})") from None


def read(path) -> list[dict]:
    """The split records of a record file; `UnreadableRecord` when it cannot be parsed, a
    `ValueError` naming the file and the field when it breaks the schema."""
    document = load(path)
    try:
        validate(document)
    except ValueError as err:
        raise ValueError(f"record file {path}: {err}") from None
    return document["records"]


SET_ASIDE_SUFFIX = ".unreadable"


def set_aside(path, suffix: str = SET_ASIDE_SUFFIX) -> Path:
    """Rename a record file that cannot be used (unreadable; `.stale`: not what its job asks
    for now) to `<name><suffix>` (replacing an older one), so the workflow's next run reruns
    the job that writes it (its output is missing) while the bytes stay for a look; returns
    the new path."""
    path = Path(path)
    target = path.with_name(path.name + suffix)
    os.replace(path, target)
    return target

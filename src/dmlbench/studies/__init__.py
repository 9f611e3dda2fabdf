"""Side studies: checks that run beside the benchmark's jobs and write their own documents (the
MVCE solver check; later the hubness-reduction and outside-reference studies).

A study is a module that owns everything about it:

    KIND                       its config key, document kind and MLflow run kind
    spec(...) -> dict          what one study job needs, from its checked config entry (defaults
                               filled in from the config schema)
    run(spec) -> dict          compute the document (`dmlbench study KIND --job ...`)
    SCHEMA                     the document's JSON schema (validated on write and on ingest)
    tracked_runs(doc)          the document as MLflow runs (`records.tracking.TrackedRun`: identity,
                               name, result, params, tags, and the volatile result fields that
                               do not enter its content hash)

This package plans the study jobs of a checked config (`jobs`, `path`, `spec`): a study runs
when its key is in the config, on the data sets its `datasets` list names (default all). The
workflow's `study` rule runs one job per (study, data set); `track` ingests the documents with
the records; report sections read the runs by kind (`report.runs.load_kind`).
"""

from __future__ import annotations

import difflib
import functools
import json

import jsonschema

from .. import config as cfg
from ..files import write_json
from . import mvce_validation

STUDIES = {module.KIND: module for module in (mvce_validation,)}


def get(kind: str):
    """The study module of `kind`; `KeyError` naming close matches when unknown."""
    try:
        return STUDIES[kind]
    except KeyError:
        close = difflib.get_close_matches(str(kind), STUDIES, n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise KeyError(f"unknown study '{kind}'.{hint} Known: {', '.join(sorted(STUDIES))}") from None


def jobs(config: dict) -> list[tuple[str, str]]:
    """(study kind, data-set label) of every study job of a checked config."""
    return [(kind, label) for kind in STUDIES if kind in config
            for label in config[kind].get("datasets") or config["datasets"]]


def path(config: dict, kind: str, label: str) -> str:
    """The document a study job writes."""
    return f"results/{cfg.benchmark(config)}/{kind}/{label}.json"


def spec(config: dict, kind: str, label: str) -> dict:
    """Everything one study job needs (the workflow passes it to `dmlbench study KIND`)."""
    return get(kind).spec(
        benchmark=cfg.benchmark(config),
        dataset={"label": label, "name": cfg.dataset_name(config, label)},
        preprocess=cfg.dataset_preprocess(config, label), cache=cfg.cache_dir(config),
        config_value=config[kind])


@functools.cache
def _validator(kind: str):
    return jsonschema.Draft202012Validator(json.loads(get(kind).SCHEMA.read_text()))


def validate(document: dict) -> None:
    """Raise `ValueError` naming the first field of a study document that breaks its schema."""
    kind = document.get("kind")
    if kind not in STUDIES:
        raise ValueError(f"not a study document (kind {kind!r}); known kinds: {sorted(STUDIES)}")
    errors = sorted(_validator(kind).iter_errors(document), key=lambda e: list(e.absolute_path))
    if errors:
        where = ".".join(str(p) for p in errors[0].absolute_path) or "<top level>"
        raise ValueError(f"{kind} document field '{where}': {errors[0].message}")


def write(path, document: dict) -> None:
    """Validate and write a study document atomically."""
    validate(document)
    write_json(path, document)


def tracked_runs(document: dict) -> list:
    """The MLflow runs of a study document (validated first)."""
    validate(document)
    return get(document["kind"]).tracked_runs(document)

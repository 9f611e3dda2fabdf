"""Result records -> MLflow, by one writer, idempotently.

Layout (DESIGN.md section 2): one experiment per benchmark; one parent run per (data set, method,
parameters) holding mean/std metrics; one child run per split holding that split's metrics, the
record as an artifact, and the record's content hash in a tag. Runs are found again by their
`dmlbench.key` tag, so ingesting the same records twice updates nothing, and a changed record
updates its run instead of adding one.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from . import records

DEFAULT_URI = "sqlite:///mlruns.db"
KEY, KIND, HASH = "dmlbench.key", "dmlbench.kind", "dmlbench.content_hash"
ARRAYS_ARTIFACT = "arrays.npz"


def tracking_uri() -> str:
    """`MLFLOW_TRACKING_URI` if set, else the embedded SQLite store `mlruns.db` in the cwd."""
    return os.environ.get("MLFLOW_TRACKING_URI") or DEFAULT_URI


def client():
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    import mlflow
    from mlflow.tracking import MlflowClient

    uri = tracking_uri()
    mlflow.set_tracking_uri(uri)
    return MlflowClient(tracking_uri=uri)


def _local_artifact_root(uri: str) -> str | None:
    """Absolute artifact directory next to a local SQLite store; None for servers."""
    if uri.startswith("sqlite:///"):
        db = Path(uri[len("sqlite:///"):]).resolve()
        return (db.parent / "mlartifacts").as_uri()
    return None


def experiment_id(mlclient, name: str) -> str:
    """Id of experiment `name`, created if missing (safe against a concurrent creator)."""
    from mlflow.exceptions import MlflowException

    exp = mlclient.get_experiment_by_name(name)
    if exp is not None:
        return exp.experiment_id
    try:
        return mlclient.create_experiment(name, artifact_location=_local_artifact_root(tracking_uri()))
    except MlflowException:
        return mlclient.get_experiment_by_name(name).experiment_id


def existing_runs(mlclient, exp_id: str) -> dict[str, object]:
    """The experiment's dmlbench runs by key (the oldest run wins if a key occurs twice)."""
    found: dict[str, object] = {}
    token = None
    while True:
        page = mlclient.search_runs([exp_id], filter_string=f"tags.`{KIND}` != ''",
                                    max_results=1000, page_token=token,
                                    order_by=["attributes.start_time ASC"])
        for run in page:
            found.setdefault(run.data.tags.get(KEY), run)
        token = page.token
        if not token:
            return found


def _batches(items, size):
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _fit_info_entries(fit_info: dict) -> tuple[dict, dict, dict]:
    """(metrics, histories, tags) of a record's fit_info, keyed `fit.<key>`."""
    metrics, histories, tags = {}, {}, {}
    for key, value in fit_info.items():
        name = f"fit.{key}"
        if _is_number(value):
            metrics[name] = value
        elif isinstance(value, list) and value and all(_is_number(v) for v in value):
            histories[name] = value
        else:
            tags[name] = json.dumps(value) if not isinstance(value, str) else value
    return metrics, histories, tags


def _log(mlclient, run_id: str, metrics: dict, params: dict | None = None,
         tags: dict | None = None, histories: dict | None = None):
    from mlflow.entities import Metric, Param, RunTag

    now = int(time.time() * 1000)
    metric_list = [Metric(k, float(v), now, 0) for k, v in sorted(metrics.items())
                   if v is not None and np.isfinite(v)]
    metric_list += [Metric(k, float(v), now, step) for k, values in sorted((histories or {}).items())
                    for step, v in enumerate(values) if np.isfinite(v)]
    for chunk in _batches(metric_list, 1000):
        mlclient.log_batch(run_id, metrics=chunk)
    for chunk in _batches([Param(k, str(v)[:6000]) for k, v in sorted((params or {}).items())], 100):
        mlclient.log_batch(run_id, params=chunk)
    for chunk in _batches([RunTag(k, str(v)[:5000]) for k, v in sorted((tags or {}).items())], 100):
        mlclient.log_batch(run_id, tags=chunk)


def _flat_params(record: dict) -> dict:
    method = record["method"]
    params = {f"method.{k}": json.dumps(v) for k, v in method["config_params"].items()}
    params.update({
        "dataset": record["dataset"]["name"],
        "method": method["name"],
        "preprocess": json.dumps(record["preprocess"]["steps"]),
        "protocol": json.dumps(record["split"]["protocol"], sort_keys=True),
        "k": json.dumps(record["k"]),
        "hubness_k": record["hubness_k"],
        "seed": record["split"]["seed"],
    })
    return params


def _tags(record: dict, kind: str) -> dict:
    tags = {
        KIND: kind,
        "dmlbench.benchmark": record["benchmark"],
        "dmlbench.dataset": record["dataset"]["label"],
        "dmlbench.dataset_source": record["dataset"]["source"],
        "dmlbench.dataset_papers": ",".join(record["dataset"]["papers"]),
        "dmlbench.method": record["method"]["label"],
        "dmlbench.method_name": record["method"]["name"],
        "dmlbench.family": record["method"]["family"],
        "dmlbench.method_papers": ",".join(record["method"]["papers"]),
        "dmlbench.parent_key": record["parent_key"],
        "dmlbench.git_commit": record["environment"]["git_commit"],
    }
    tags.update({f"version.{k}": v for k, v in record["environment"]["versions"].items()})
    return tags


def _split_metrics(record: dict) -> dict:
    out = dict(record["metrics"])
    out.update({k: v for k, v in record["timings"].items()})
    return out


def _summary(group: list[dict]) -> dict:
    """Mean and sample standard deviation (ddof 1; 0 for one split) of each metric."""
    keys = sorted({k for r in group for k in _split_metrics(r)})
    out = {"n_splits": float(len(group))}
    for key in keys:
        values = np.array([_split_metrics(r)[key] for r in group if key in _split_metrics(r)])
        out[f"{key}_mean"] = float(values.mean())
        out[f"{key}_std"] = float(values.std(ddof=1)) if values.size > 1 else 0.0
    return out


def _start(mlclient, exp_id: str, key: str, kind: str, name: str, parent_id: str | None = None):
    tags = {KEY: key, KIND: kind}
    if parent_id:
        tags["mlflow.parentRunId"] = parent_id
    return mlclient.create_run(exp_id, tags=tags, run_name=name).info.run_id


def ingest(paths: list[str | Path], experiment: str | None = None) -> dict:
    """Import the split records of record files into MLflow; returns {parent_key: {run_id, children: {job_key: id}}}."""
    loaded, folder = [], {}
    for path in paths:
        for record in records.read(path):
            loaded.append(record)
            folder[record["job_key"]] = Path(path).parent
    if not loaded:
        raise ValueError("no result records to ingest")
    experiment = experiment or loaded[0]["benchmark"]
    mlclient = client()
    exp_id = experiment_id(mlclient, experiment)
    known = existing_runs(mlclient, exp_id)
    groups: dict[str, list[dict]] = defaultdict(list)
    for record in loaded:
        groups[record["parent_key"]].append(record)
    out = {"experiment": experiment, "experiment_id": exp_id, "tracking_uri": tracking_uri(),
           "parents": {}}
    counts = {"created": 0, "updated": 0, "unchanged": 0}
    for parent_key, group in sorted(groups.items()):
        group.sort(key=lambda r: r["split"]["index"])
        first = group[0]
        name = f"{first['dataset']['label']} / {first['method']['label']}"
        summary = _summary(group)
        parent = known.get(parent_key)
        parent_id = parent.info.run_id if parent else _start(mlclient, exp_id, parent_key, "parent", name)
        stale = parent is None or any(
            parent.data.metrics.get(k) != v for k, v in summary.items())
        if stale:
            _log(mlclient, parent_id, summary, _flat_params(first), _tags(first, "parent"))
            mlclient.set_terminated(parent_id)
        children = {}
        for record in group:
            key, digest = record["job_key"], records.content_hash(record)
            run = known.get(key)
            if run is not None and run.data.tags.get(HASH) == digest:
                counts["unchanged"] += 1
                children[key] = run.info.run_id
                continue
            run_id = run.info.run_id if run else _start(
                mlclient, exp_id, key, "split", f"{name} / split {record['split']['index']}", parent_id)
            fit_metrics, fit_histories, fit_tags = _fit_info_entries(record["fit_info"])
            tags = {**_tags(record, "split"), **fit_tags, HASH: digest,
                    "dmlbench.split": record["split"]["index"]}
            curves = {f"curve.{k}": v for k, v in record.get("curves", {}).items()}
            _log(mlclient, run_id, {**_split_metrics(record), **fit_metrics},
                 _flat_params(record), tags, {**fit_histories, **curves})
            _log_record_artifact(mlclient, run_id, record)
            if "arrays" in record:
                _log_arrays_artifact(mlclient, run_id, folder[key], record["arrays"])
            mlclient.set_terminated(run_id)
            counts["updated" if run else "created"] += 1
            children[key] = run_id
        out["parents"][parent_key] = {"run_id": parent_id, "dataset": first["dataset"]["label"],
                                      "method": first["method"]["label"], "children": children}
    out["counts"] = counts
    return out


def _log_record_artifact(mlclient, run_id: str, record: dict) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "record.json"
        path.write_text(json.dumps(record, indent=2, sort_keys=True))
        mlclient.log_artifact(run_id, str(path))


def _log_arrays_artifact(mlclient, run_id: str, folder: Path, entry: dict) -> None:
    """The split's arrays (.npz next to its record file) as the run's artifact `arrays.npz`."""
    import hashlib
    import shutil

    source = folder / entry["file"]
    if not source.exists():
        raise FileNotFoundError(f"arrays file {source} named by a record is missing; rerun its job")
    if hashlib.sha256(source.read_bytes()).hexdigest() != entry["sha256"]:
        raise ValueError(f"arrays file {source} does not match its record (sha256); rerun its job")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / ARRAYS_ARTIFACT
        shutil.copyfile(source, path)
        mlclient.log_artifact(run_id, str(path))

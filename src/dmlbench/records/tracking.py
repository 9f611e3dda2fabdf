"""Result records -> MLflow, idempotently, also when several ingests run at once.

Layout (DESIGN.md section 2): one experiment per benchmark; one parent run per (data set, method,
parameters) holding mean/std metrics and the mean of each curve over the splits (metric history
`curve.<name>`); one child run per split holding that split's metrics, the
record as an artifact, and the record's content hash in a tag. Runs are found again by their
`dmlbench.key` tag, so ingesting the same records twice updates nothing, and a changed record
updates its run instead of adding one.

Concurrency. MLflow has no transactions and no unique constraint on tags, so two ingests of the
same key (two workflows tracking into one experiment, or a rerun next to a killed one) may both
create a run. Each ingest therefore (1) reuses an existing run of a key when it finds one, (2)
finishes every run it writes (status FINISHED last), and (3) then resolves duplicates among the
keys it wrote: the winner is the FINISHED run with the oldest start time (ties by run id), every
other run of that key is deleted, and the winner's children point to the winning parent. The rule
needs no coordination: the oldest finished run is never deleted by anyone, and the last ingest to
finish sees every finished run, so exactly one run per key remains. An ingest whose own run was
deleted under it (a sibling had finished first) adopts the winner. A run left RUNNING by a killed
ingest is reused by the next ingest of its key, or deleted once a finished sibling exists.
Readers (the report) take the winner among duplicates they may see meanwhile (`canonical_runs`).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from .. import records
from ..files import read_json

DEFAULT_URI = "sqlite:///mlruns.db"
KEY, KIND, HASH = "dmlbench.key", "dmlbench.kind", "dmlbench.content_hash"
#: bump when what is logged per record changes, so existing runs are updated on the next ingest
LAYOUT_VERSION = 2
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
        # the kind tag makes the MLflow 3 UI open the runs view (not the GenAI overview)
        return mlclient.create_experiment(name, artifact_location=_local_artifact_root(tracking_uri()),
                                          tags={"mlflow.experimentKind": "custom_model_development"})
    except MlflowException:
        return mlclient.get_experiment_by_name(name).experiment_id


def _rank(run) -> tuple:
    """Order of precedence among runs of one key: finished first, then the oldest, then by id."""
    return (run.info.status != "FINISHED", run.info.start_time or 0, run.info.run_id)


def existing_runs(mlclient, exp_id: str) -> dict[str, list]:
    """The experiment's active dmlbench runs by key, each list in order of precedence."""
    found: dict[str, list] = defaultdict(list)
    token = None
    while True:
        page = mlclient.search_runs([exp_id], filter_string=f"tags.`{KIND}` != ''",
                                    max_results=1000, page_token=token)
        for run in page:
            found[run.data.tags.get(KEY)].append(run)
        token = page.token
        if not token:
            return {key: sorted(runs, key=_rank) for key, runs in found.items()}


def canonical_runs(frame):
    """One row per `dmlbench.key` of a `mlflow.search_runs` DataFrame: the run that wins among
    duplicates (see `ingest`), so readers agree with writers while two ingests overlap."""
    column = f"tags.{KEY}"
    if frame.empty or column not in frame:
        return frame
    unfinished = frame["status"] != "FINISHED"
    order = frame.assign(_unfinished=unfinished).sort_values(["_unfinished", "start_time", "run_id"])
    return order.drop_duplicates(column).drop(columns="_unfinished").sort_index()


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
    """A split's metrics, timings and part sizes (`n_train`, `n_test`: counts for tests of
    proportions such as `dmlbench.measure.statistics.ztest_two_proportions`)."""
    out = dict(record["metrics"])
    out.update({k: v for k, v in record["timings"].items()})
    out.update(n_train=record["split"]["n_train"], n_test=record["split"]["n_test"])
    return out


def _summary(group: list[dict]) -> dict:
    """Mean and sample standard deviation (ddof 1; 0 for one split) of each metric and of each
    numeric `fit.<key>` (e.g. a hyper-parameter chosen per split)."""
    numbers = [{**_split_metrics(r), **_fit_info_entries(r["fit_info"])[0]} for r in group]
    keys = sorted({k for r in numbers for k in r})
    out = {"n_splits": float(len(group)),
           "n_test_total": float(sum(r["split"]["n_test"] for r in group))}
    for key in keys:
        values = np.array([r[key] for r in numbers if key in r], dtype=float)
        out[f"{key}_mean"] = float(values.mean())
        out[f"{key}_std"] = float(values.std(ddof=1)) if values.size > 1 else 0.0
    return out


def _mean_curves(group: list[dict]) -> dict[str, list[float]]:
    """Mean over the splits of each curve, position by position, as `curve.<name>`. A shorter
    curve is extended by its last value: a dimension sweep of a metric of lower rank on one
    split keeps its last rate at higher dimensionalities (extra components would be zero)."""
    names = sorted({name for r in group for name in r.get("curves", {})})
    out = {}
    for name in names:
        curves = [r["curves"][name] for r in group if r.get("curves", {}).get(name)]
        if not curves:
            continue
        length = max(len(c) for c in curves)
        padded = np.array([c + [c[-1]] * (length - len(c)) for c in curves], dtype=float)
        out[f"curve.{name}"] = padded.mean(axis=0).tolist()
    return out


def _start(mlclient, exp_id: str, key: str, kind: str, name: str, parent_id: str | None = None):
    tags = {KEY: key, KIND: kind}
    if parent_id:
        tags["mlflow.parentRunId"] = parent_id
    return mlclient.create_run(exp_id, tags=tags, run_name=name).info.run_id


def _write_child(mlclient, run_id: str, record: dict, digest: str, folder: Path) -> None:
    """Log a split record into its run (metrics, fit info, curves, the record and its arrays as
    artifacts), FINISHED last; `folder` holds the record file (arrays are named relative to it)."""
    fit_metrics, fit_histories, fit_tags = _fit_info_entries(record["fit_info"])
    tags = {**_tags(record, "split"), **fit_tags, HASH: digest,
            "dmlbench.split": record["split"]["index"]}
    curves = {f"curve.{k}": v for k, v in record.get("curves", {}).items()}
    _log(mlclient, run_id, {**_split_metrics(record), **fit_metrics},
         _flat_params(record), tags, {**fit_histories, **curves})
    _log_record_artifact(mlclient, run_id, record)
    if "arrays" in record:
        _log_arrays_artifact(mlclient, run_id, folder, record["arrays"])
    mlclient.set_terminated(run_id)


def _up_to_date(run, digest: str) -> bool:
    """The run exists, finished, and holds the content with this digest (nothing to log)."""
    return (run is not None and run.data.tags.get(HASH) == digest
            and run.info.status == "FINISHED")


def _deleted(mlclient, run_id: str) -> bool:
    return mlclient.get_run(run_id).info.lifecycle_stage == "deleted"


def _write(mlclient, exp_id: str, key: str, run_id: str, write) -> str:
    """`write(run_id)`; if a concurrent ingest deleted that run meanwhile (its sibling finished
    first), write into the key's winner instead. Returns the run written."""
    from mlflow.exceptions import MlflowException

    for _ in range(3):
        try:
            write(run_id)
            return run_id
        except MlflowException:
            if not _deleted(mlclient, run_id):
                raise
        runs = existing_runs(mlclient, exp_id).get(key)
        if not runs:
            raise RuntimeError(f"MLflow run {run_id} of key {key} was deleted and no other "
                               "run of that key exists")
        run_id = runs[0].info.run_id
    raise RuntimeError(f"could not write MLflow runs of key {key}: deleted three times")


def resolve_duplicates(mlclient, exp_id: str, keys: set[str]) -> dict[str, str]:
    """Keep one run per key of `keys` (the oldest FINISHED one), delete the others, point the
    winning children to the winning parent. Returns {key: winning run id}."""
    from mlflow.exceptions import MlflowException

    runs = existing_runs(mlclient, exp_id)
    winners = {}
    for key in keys:
        candidates = runs.get(key, [])
        if not candidates:
            continue
        winners[key] = candidates[0].info.run_id
        if candidates[0].info.status != "FINISHED":
            continue  # nothing finished yet: leave the writers alone
        for loser in candidates[1:]:
            try:
                mlclient.delete_run(loser.info.run_id)
            except MlflowException:
                pass  # deleted by a concurrent ingest already
    for key in keys:
        run = runs.get(key, [None])[0]
        if run is None or run.data.tags.get(KIND) != "split":
            continue
        parent = winners.get(run.data.tags.get("dmlbench.parent_key"))
        if parent and run.data.tags.get("mlflow.parentRunId") != parent:
            try:
                mlclient.set_tag(run.info.run_id, "mlflow.parentRunId", parent)
            except MlflowException:
                if not _deleted(mlclient, run.info.run_id):
                    raise  # deleted meanwhile by a concurrent ingest, which resolves it later
    return winners


def _config_key(config: dict) -> str:
    return "config:" + hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]


def log_benchmark_config(mlclient, exp_id: str, config: dict, known: dict) -> str:
    """One run (kind 'benchmark') per distinct config of the experiment, holding the config as an
    artifact, so a report built from MLflow alone knows e.g. the paper tables to compare with."""
    key = _config_key(config)
    run = known.get(key)
    if run is not None:
        return run.info.run_id
    run_id = _start(mlclient, exp_id, key, "benchmark", f"config {config.get('benchmark', '')}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "config.json"
        path.write_text(json.dumps(config, indent=2, sort_keys=True))
        mlclient.log_artifact(run_id, str(path))
    mlclient.set_terminated(run_id)
    return run_id


def ingest(paths: list[str | Path], experiment: str | None = None,
           config: dict | None = None, validation: list[str | Path] = ()) -> dict:
    """Import the split records of record files (and MVCE validation files, see
    `_ingest_validation`) into MLflow; returns {"parents": {parent_key: {run_id, children:
    {job_key: id}}}, "validation": {key: run_id}, ...}."""
    loaded, folder = [], {}
    for path in paths:
        for record in records.read(path):
            loaded.append(record)
            folder[record["job_key"]] = Path(path).parent
    documents = [read_json(path) for path in validation]
    if not loaded and not documents:
        raise ValueError("no result records to ingest")
    experiment = experiment or (loaded[0] if loaded else documents[0])["benchmark"]
    mlclient = client()
    exp_id = experiment_id(mlclient, experiment)
    known = {key: runs[0] for key, runs in existing_runs(mlclient, exp_id).items()}
    groups: dict[str, list[dict]] = defaultdict(list)
    for record in loaded:
        groups[record["parent_key"]].append(record)
    out = {"experiment": experiment, "experiment_id": exp_id, "tracking_uri": tracking_uri(),
           "parents": {}}
    if config is not None:
        out["config_run_id"] = log_benchmark_config(mlclient, exp_id, config, known)
    counts = {"created": 0, "updated": 0, "unchanged": 0}
    for parent_key, group in sorted(groups.items()):
        group.sort(key=lambda r: r["split"]["index"])
        first = group[0]
        name = f"{first['dataset']['label']} / {first['method']['label']}"
        summary = _summary(group)
        curves = _mean_curves(group)
        parent = known.get(parent_key)
        parent_id = parent.info.run_id if parent else _start(mlclient, exp_id, parent_key, "parent", name)
        stale = parent is None or parent.info.status != "FINISHED" or any(
            parent.data.metrics.get(k) != v for k, v in summary.items()) or any(
            k not in parent.data.metrics for k in curves)
        if stale:
            def write_parent(run_id, first=first, summary=summary, curves=curves):
                _log(mlclient, run_id, summary, _flat_params(first), _tags(first, "parent"),
                     histories=curves)
                mlclient.set_terminated(run_id)

            parent_id = _write(mlclient, exp_id, parent_key, parent_id, write_parent)
        children = {}
        for record in group:
            key = record["job_key"]
            digest = f"{LAYOUT_VERSION}:{records.content_hash(record)}"
            run = known.get(key)
            if _up_to_date(run, digest):
                counts["unchanged"] += 1
                children[key] = run.info.run_id
                continue
            run_id = run.info.run_id if run else _start(
                mlclient, exp_id, key, "split", f"{name} / split {record['split']['index']}", parent_id)
            children[key] = _write(mlclient, exp_id, key, run_id,
                                   lambda rid, record=record, digest=digest:
                                   _write_child(mlclient, rid, record, digest, folder[key]))
            counts["updated" if run else "created"] += 1
        out["parents"][parent_key] = {"run_id": parent_id, "dataset": first["dataset"]["label"],
                                      "method": first["method"]["label"], "children": children}
    out["validation"] = _ingest_validation(mlclient, exp_id, known, documents, counts)
    config_keys = {_config_key(config)} if config is not None else set()
    winners = resolve_duplicates(mlclient, exp_id, set(groups) | {r["job_key"] for r in loaded}
                                 | config_keys | set(out["validation"]))
    if config is not None:
        out["config_run_id"] = winners.get(_config_key(config), out["config_run_id"])
    for parent_key, entry in out["parents"].items():
        entry["run_id"] = winners.get(parent_key, entry["run_id"])
        entry["children"] = {k: winners.get(k, v) for k, v in entry["children"].items()}
    out["validation"] = {k: winners.get(k, v) for k, v in out["validation"].items()}
    out["counts"] = counts
    return out


#: result fields that change from run to run (left out of the content hash)
def _ingest_validation(mlclient, exp_id: str, known: dict, documents: list[dict],
                       counts: dict) -> dict:
    """One run (kind `mvce_validation`) per (data set, m) of each MVCE validation document
    (`dmlbench mvce-validate`); keyed and hashed like split runs, so re-ingesting is a no-op."""
    from ..studies import mvce_validation

    out = {}
    for doc in documents:
        if doc.get("kind") != mvce_validation.KIND:
            raise ValueError(f"not an MVCE validation file (kind {doc.get('kind')!r})")
        for row in doc["results"]:
            identity = {"benchmark": doc["benchmark"], "dataset": doc["dataset"],
                        "preprocess": doc["preprocess"], "settings": doc["settings"],
                        "m": row["m"]}
            key = _digest(identity)
            stable = {k: (None if mvce_validation.is_volatile(k) else v) for k, v in row.items()}
            digest = _digest({**identity, "result": stable}, 64)  # a new field updates the run
            run = known.get(key)
            if _up_to_date(run, digest):
                counts["unchanged"] += 1
                out[key] = run.info.run_id
                continue
            label = doc["dataset"]["label"]
            run_id = run.info.run_id if run else _start(
                mlclient, exp_id, key, mvce_validation.KIND, f"{label} / MVCE check m={row['m']}")
            params = {"eps": doc["settings"]["eps"], "tol": doc["settings"]["tol"],
                      "queries": doc["settings"]["queries"],
                      "preprocess": json.dumps(doc["preprocess"]), "dataset": doc["dataset"]["name"]}
            tags = {KIND: mvce_validation.KIND, HASH: digest, "dmlbench.dataset": label,
                    "dmlbench.benchmark": doc["benchmark"],
                    "dmlbench.git_commit": doc["environment"]["git_commit"]}
            def write_validation(rid, row=row, params=params, tags=tags):
                _log(mlclient, rid, {k: v for k, v in row.items() if _is_number(v)}, params, tags)
                mlclient.set_terminated(rid)

            out[key] = _write(mlclient, exp_id, key, run_id, write_validation)
            counts["updated" if run else "created"] += 1
    return out


def _digest(obj, length: int = 16) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:length]


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

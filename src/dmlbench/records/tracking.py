"""The single writer to MLflow: split records (and study documents) become runs, idempotently,
also when several ingests run at once.

Layout: one experiment per benchmark; one parent run per (data set, method, parameters) holding
the aggregation over its splits (`records.aggregation`: mean/std metrics, mean curves as metric
histories `curve.<name>`, but the N_k histograms together as one JSON artifact
`histograms.json`); one child run per split holding that split's metrics (its N_k histograms in
`histograms.json` likewise), the record as an artifact (and a tuned split's `tuning` entry as
`tuning.json`), and the record's content hash in a tag; one run per config (kind `benchmark`) holding
it as an artifact; one run per `TrackedRun` of a study document. Runs are found again by their
`dmlbench.key` tag, so ingesting the same records twice updates nothing, and a changed record
updates its run instead of adding one.

Concurrency. MLflow has no transactions and no unique constraint on tags, so two ingests of the
same key (two workflows tracking into one experiment, or a rerun next to a killed one) may both
create a run. Each ingest therefore (1) reuses the oldest existing run of a key when it finds one,
(2) finishes every run it writes (status FINISHED last), and (3) then resolves duplicates among the
keys it wrote: the winner is the key's oldest run (start time, ties by run id); once it is FINISHED
every younger run of the key is deleted, and while it is still RUNNING nothing of the key is
deleted. The winner's children are pointed to the winning parent. The rule needs no coordination
and holds with out-of-date views: a run is only ever deleted by someone who saw an older run
FINISHED, so the oldest run that ever finishes is deleted by nobody, and the last ingest to finish
sees it finished and deletes the rest: exactly one run per key remains. So an ingest resolves
only the keys it wrote, those it saw with several runs (left by a killed ingest) and splits it saw
pointing to another parent run, each with its parent and siblings; one that writes nothing and
sees one run per key (a rerun) makes no second search. (Preferring any FINISHED
run over an older RUNNING one, as this module once did, let two ingests delete each other's runs:
one saw the older run still RUNNING, the other saw it finished.) An ingest whose own run was
deleted under it (an older sibling had finished first) adopts the winner. A run left RUNNING by a
killed ingest is reused, finished and kept by the next ingest of its key when it is the oldest,
else deleted once an older sibling has finished. Readers (the report) prefer FINISHED runs among
duplicates they may see meanwhile (`canonical_runs`).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import hashlib
import json
import logging
import os
import re
import shutil
import socket
import sqlite3
import tempfile
import time
import urllib.parse
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

from .. import records
from .. import vocabulary as voc
from .aggregation import (
    fit_info_entries,
    is_number,
    mean_curves,
    split_metrics,
    summary,
)

# mlflow is imported inside the functions that talk to the store, not here: its import takes
# seconds, and the workflow (tracking_uri at parse time) and every `dmlbench` verb import this
# module without needing it; `client` also sets MLFLOW_DISABLE_TELEMETRY before the import.

DEFAULT_URI = "sqlite:///mlruns.db"
KEY, KIND, HASH = voc.Tag.KEY, voc.Tag.KIND, voc.Tag.CONTENT_HASH
#: bump when what is logged per record changes, so existing runs are updated on the next ingest
#: (4: N_k histograms as the artifact `histograms.json`, parents tagged with a content hash;
#: 5: a tuned split's `tuning` entry as the artifact `tuning.json`; 6: its tuning time as the
#: metrics `tuning_wall_s`, `tuning_cpu_s`, the code version as a tag and in the content hashes,
#: an over-budget record's tag)
LAYOUT_VERSION = 6
ARRAYS_ARTIFACT = "arrays.npz"


@dataclass
class TrackedRun:
    """One run of a study document, described generically: its `identity` (hashed into the
    run's key), `result` (numbers become metrics; hashed, but for the `volatile` fields, into
    its content hash, so an unchanged result is not logged again), params and tags."""

    kind: str
    benchmark: str
    identity: dict
    name: str
    result: dict
    volatile: tuple = ()
    params: dict = field(default_factory=dict)
    tags: dict = field(default_factory=dict)

    @property
    def key(self) -> str:
        return voc.digest(self.identity)

    @property
    def content_digest(self) -> str:
        stable = {k: (None if k in self.volatile else v) for k, v in self.result.items()}
        return voc.digest({**self.identity, "result": stable}, None)


def tracking_uri() -> str:
    """`MLFLOW_TRACKING_URI` if set, else the embedded SQLite store `mlruns.db` in the cwd."""
    return os.environ.get("MLFLOW_TRACKING_URI") or DEFAULT_URI


def store_label(uri: str | None = None) -> str:
    """How a report names the store: its scheme and name only, never credentials or local
    paths ('sqlite: mlruns.db', 'postgresql://host/db', 'https://host/path')."""

    uri = uri or tracking_uri()
    parts = urllib.parse.urlsplit(uri)
    scheme = parts.scheme.split("+", 1)[0]
    if scheme in ("sqlite", "file", ""):
        return f"{scheme or 'file'}: {Path(parts.path or uri).name}"
    host = parts.hostname or ""
    if scheme in ("http", "https") and parts.port:
        host += f":{parts.port}"
    return f"{scheme}://{host}{parts.path}"


def client():
    """A client of the store `tracking_uri()`, which answers (`check_reachable`) and has its
    tables (`create_schema_once`); a `StoreError` in one line when it cannot be used."""
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    import mlflow
    from mlflow.tracking import MlflowClient

    uri = tracking_uri()
    check_reachable(uri)
    create_schema_once(uri)
    mlflow.set_tracking_uri(uri)
    return MlflowClient(tracking_uri=uri)


class StoreError(RuntimeError):
    """The tracking store cannot be used (unreachable, refusing the connection, of an old
    schema): one line naming it by scheme and name (`store_label`), with the remedy."""


#: seconds a tracking server or database has to accept a connection (MLflow's own HTTP client
#: retries a refused connection for minutes, its database layer for tens of seconds)
CONNECT_TIMEOUT_S = 5
#: default ports of the stores that are reached over the network
_PORTS = {"http": 80, "https": 443, "postgresql": 5432, "mysql": 3306, "mssql": 1433}
#: what a store needs to be used again, by how it failed
_REMEDY = ("start it (or check its address), or set MLFLOW_TRACKING_URI to a store that "
           "answers; the default, sqlite:///mlruns.db, needs no server")


def check_reachable(uri: str) -> None:
    """A `StoreError` when the server or database of `uri` (http, https, postgresql, mysql,
    mssql) does not accept a TCP connection within `CONNECT_TIMEOUT_S` seconds."""
    parts = urllib.parse.urlsplit(uri)
    scheme = parts.scheme.split("+", 1)[0]
    if scheme not in _PORTS:
        return
    try:
        host, port = parts.hostname or "localhost", parts.port or _PORTS[scheme]
    except ValueError as err:  # a port that is not a number
        raise StoreError(f"the MLflow store {store_label(uri)}: {err}") from None
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as err:
        why = (f"no answer within {CONNECT_TIMEOUT_S} s" if isinstance(err, TimeoutError)
               else err.strerror or str(err))
        raise StoreError(f"cannot reach the MLflow store {store_label(uri)} ({why}): "
                         f"{_REMEDY}") from None


#: pg_advisory_lock key of the schema set-up (any constant shared by every dmlbench process)
_PG_SCHEMA_LOCK = 0x646D6C62  # "dmlb"


@functools.cache
def create_schema_once(uri: str) -> None:
    """Create (or migrate) MLflow's tables of a database store under a lock, so that several
    processes opening a new store at once do not run MLflow's schema set-up side by side (it
    has no lock of its own and fails with e.g. 'duplicate column name: step'). SQLite: an
    exclusive `flock` on `<database>.lock` beside the file (shared file systems included, where
    they support flock); PostgreSQL: a session advisory lock. Other stores (a tracking server)
    set up their own schema. Once per process and store."""
    scheme = uri.split(":", 1)[0].split("+", 1)[0]
    if scheme == "sqlite" and uri.startswith("sqlite:///") and ":memory:" not in uri:
        database = Path(uri[len("sqlite:///"):].split("?", 1)[0])
        database.parent.mkdir(parents=True, exist_ok=True)
        with open(database.with_name(database.name + ".lock"), "a") as guard:
            fcntl.flock(guard, fcntl.LOCK_EX)
            try:
                _open_store(uri)
            finally:
                fcntl.flock(guard, fcntl.LOCK_UN)
    elif scheme == "postgresql":
        import sqlalchemy  # MLflow's database layer: heavy like mlflow, so imported here only

        engine = sqlalchemy.create_engine(uri, poolclass=sqlalchemy.pool.NullPool,
                                          connect_args={"connect_timeout": CONNECT_TIMEOUT_S})
        try:
            with _opening(uri), engine.connect() as connection:
                connection.execute(sqlalchemy.text("SELECT pg_advisory_lock(:key)"),
                                   {"key": _PG_SCHEMA_LOCK})
                try:
                    _open_store(uri)
                finally:
                    connection.execute(sqlalchemy.text("SELECT pg_advisory_unlock(:key)"),
                                       {"key": _PG_SCHEMA_LOCK})
        finally:
            engine.dispose()


def _open_store(uri: str) -> None:
    """Open MLflow's store of `uri` once: it creates the tables of a new database. A SQLite
    database is switched to WAL first (`_use_wal`; a new one is created for it): MLflow keeps
    the connections it opens here in its pool for the whole process, and each takes
    `synchronous=NORMAL` only if the database is in WAL mode when it connects."""
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    _synchronous_normal_in_wal()
    _use_wal(uri)
    with _opening(uri):
        SqlAlchemyStore(uri, _local_artifact_root(uri) or "./mlartifacts")


@contextlib.contextmanager
def _opening(uri: str):
    """Turn what a database store says when it cannot be opened into a `StoreError` in one
    line: an old schema (the remedy: `mlflow db upgrade`), a refused connection or login."""
    from mlflow.exceptions import MlflowException
    from sqlalchemy.exc import DBAPIError

    try:
        yield
    except MlflowException as err:
        found = re.search(r"out-of-date database schema \(found version (\S+), but expected "
                          r"(\S+?)\)", str(err))
        if found is None:
            raise
        raise StoreError(f"the MLflow store {store_label(uri)} has an old schema (version "
                         f"{found[1]}; this MLflow needs {found[2]}): back it up, then run "
                         "`mlflow db upgrade \"$MLFLOW_TRACKING_URI\"`, or use a new store") \
            from None
    except DBAPIError as err:
        if store_error(err) is not None:  # full or read-only: `ingest` says so in one line
            raise
        raise StoreError(f"cannot open the MLflow store {store_label(uri)} "
                         f"({_first_line(err.orig or err)}): {_REMEDY}") from None


#: file systems on which SQLite's write-ahead log is unsafe (it needs shared memory between the
#: processes that open the database, which these do not give across machines)
_NETWORK_FS = ("nfs", "nfs4", "cifs", "smb3", "smbfs", "afs", "lustre", "gpfs", "beegfs",
               "ceph", "glusterfs", "fuse.sshfs", "9p")


def _use_wal(uri: str) -> None:
    """Switch a SQLite store on a local disk to write-ahead logging (WAL) and make every
    connection of this process to a store in WAL mode use `synchronous=NORMAL`: a commit then
    appends to the log without waiting for the disk, instead of writing, syncing and deleting a
    rollback journal (an ingest commits about ten times per run). Readers and the writer no
    longer block each other. A crash of the process loses nothing; a power cut may lose the
    last commits, never the database (SQLite's documentation on WAL), and the next ingest
    writes them again. WAL is a property of the database file; one on a network file system
    (`_NETWORK_FS`) keeps the rollback journal."""
    if not uri.startswith("sqlite:///") or ":memory:" in uri:
        return
    database = Path(uri[len("sqlite:///"):].split("?", 1)[0])
    if _file_system(database) in _NETWORK_FS:
        return
    connection = sqlite3.connect(database)
    try:
        connection.execute("PRAGMA journal_mode=WAL")
    except sqlite3.OperationalError:
        pass  # another process holds the database: this run keeps its journal mode
    finally:
        connection.close()


@functools.cache
def _synchronous_normal_in_wal() -> None:
    """`PRAGMA synchronous=NORMAL` on each new SQLite connection (MLflow's engines included) to
    a database in WAL mode; the setting is per connection, so it is set as each one opens."""
    from sqlalchemy import event  # MLflow's database layer: heavy like mlflow
    from sqlalchemy.engine import Engine

    @event.listens_for(Engine, "connect")
    def _normal(dbapi_connection, _record):
        if isinstance(dbapi_connection, sqlite3.Connection):
            mode = dbapi_connection.execute("PRAGMA journal_mode").fetchone()[0]
            if str(mode).lower() == "wal":
                dbapi_connection.execute("PRAGMA synchronous=NORMAL")


def _file_system(path: Path) -> str:
    """The type of the file system `path` lies on (/proc/self/mounts; '' when unknown)."""
    target = str(path.resolve())
    best, kind = "", ""
    try:
        with open("/proc/self/mounts") as fh:
            for line in fh:
                fields = line.split()
                if len(fields) < 3:
                    continue
                mount = fields[1].replace("\\040", " ")
                inside = target == mount or target.startswith(mount.rstrip("/") + "/")
                if inside and len(mount) >= len(best):
                    best, kind = mount, fields[2]
    except OSError:
        return ""
    return kind


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
        return mlclient.create_experiment(name, artifact_location=_local_artifact_root(tracking_uri()),
                                          tags=EXPERIMENT_TAGS)
    except MlflowException:
        return mlclient.get_experiment_by_name(name).experiment_id


#: the experiment's kind ("custom_model_development", a value of the MLflow 3 UI): the UIs that
#: read it (3.x before the sidebar's workflow switch) open it on its runs, not on the GenAI
#: overview. MLflow 3.17 reads the switch instead ("GenAI" / "Model training", kept by the
#: browser; `?workflowType=machine_learning` in a link sets it): see `report.base.MODEL_TRAINING`
EXPERIMENT_TAGS = {"mlflow.experimentKind": "custom_model_development"}
#: the experiment tag the MLflow UI shows as the experiment's description
DESCRIPTION_TAG = "mlflow.note.content"


def describe_experiment(mlclient, exp_id: str, description: str | None) -> None:
    """Give the experiment the kind tag (also one created before it was set) and the config's
    description, where they differ from what it has."""
    tags = mlclient.get_experiment(exp_id).tags
    wanted = {**EXPERIMENT_TAGS, **({DESCRIPTION_TAG: description} if description else {})}
    for key, value in wanted.items():
        if tags.get(key) != value:
            set_experiment_tag(mlclient, exp_id, key, value)


def set_experiment_tag(mlclient, exp_id: str, key: str, value: str) -> None:
    """Set an experiment tag, safe against a concurrent writer of the same new tag: MLflow's
    database store writes a tag by a read, then an insert or an update, so two ingests that both
    find the tag missing both insert and one fails on the key's uniqueness; the tag exists then,
    and writing it again updates it."""
    from mlflow.exceptions import MlflowException

    try:
        mlclient.set_experiment_tag(exp_id, key, value)
    except MlflowException:
        if key not in mlclient.get_experiment(exp_id).tags:
            raise
        mlclient.set_experiment_tag(exp_id, key, value)


#: the runs view the report's experiment link opens (`?viewStateShareKey=dmlbench`): an
#: experiment tag that the MLflow UI (2.9 and later, its "Share" of a runs view) reads as a view
#: state choosing the runs table's columns; a plain link shows no metric column (the UI's
#: default: Source, Models, Dataset) and no setting of MLflow changes that default
RUNS_VIEW_KEY = "dmlbench"
SHARED_VIEW_TAG = "mlflow.sharedViewState."


def runs_view_columns(k: int, tuned: bool) -> list[str]:
    """The parent runs' metrics the runs view shows: the k-NN test accuracy at the smallest k
    and the fit time (wall, s), means over the splits, and a tuned run's tuning time."""
    return [voc.mean(voc.accuracy(k)), voc.mean(voc.wall_seconds("fit"))] + (
        [voc.mean(voc.wall_seconds("tuning"))] if tuned else [])


def set_runs_view(mlclient, exp_id: str, columns: list[str]) -> None:
    """Make `RUNS_VIEW_KEY` the experiment's runs view with these metric columns (the tag is
    written only when it changes)."""
    state = json.dumps({"selectedColumns": [f"metrics.`{name}`" for name in columns]})
    key = SHARED_VIEW_TAG + RUNS_VIEW_KEY
    if mlclient.get_experiment(exp_id).tags.get(key) != state:
        set_experiment_tag(mlclient, exp_id, key, state)


def _rank(run) -> tuple:
    """Order of precedence among runs of one key: the oldest first, ties by id. Not the status:
    a run seen RUNNING may have finished since (see the module's note on concurrency)."""
    return (run.info.start_time or 0, run.info.run_id)


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
    """One row per `dmlbench.key` of a `mlflow.search_runs` DataFrame: the oldest FINISHED run
    among duplicates, which is the writers' winner once the writing is over (see the module's
    note); while ingests overlap, readers show a finished run rather than one still written."""
    column = f"tags.{KEY}"
    if frame.empty or column not in frame:
        return frame
    unfinished = frame["status"] != "FINISHED"
    order = frame.assign(_unfinished=unfinished).sort_values(["_unfinished", "start_time", "run_id"])
    return order.drop_duplicates(column).drop(columns="_unfinished").sort_index()


#: MLflow's limits of one `log_batch` call (mlflow.utils.validation): entities of each kind and in
#: all, and the JSON size of a request to a tracking server (kept with a margin for the envelope)
_MAX_PARAMS_TAGS, _MAX_METRICS, _MAX_ENTITIES, _MAX_REQUEST_CHARS = 100, 1000, 1000, 900_000


def _batches(metrics: list, params: list, tags: list):
    """Params, tags and metrics packed into as few `log_batch` calls as MLflow's limits allow
    (each call is one database transaction), in order; yields (metrics, params, tags)."""
    batch, size = {"params": [], "tags": [], "metrics": []}, 0
    limits = {"params": _MAX_PARAMS_TAGS, "tags": _MAX_PARAMS_TAGS, "metrics": _MAX_METRICS}
    for kind, items in (("params", params), ("tags", tags), ("metrics", metrics)):
        for item in items:
            cost = len(json.dumps(item.key)) + len(json.dumps(item.value)) + 128
            if (len(batch[kind]) == limits[kind] or size + cost > _MAX_REQUEST_CHARS
                    or sum(map(len, batch.values())) == _MAX_ENTITIES):
                yield batch["metrics"], batch["params"], batch["tags"]
                batch, size = {"params": [], "tags": [], "metrics": []}, 0
            batch[kind].append(item)
            size += cost
    if any(batch.values()):
        yield batch["metrics"], batch["params"], batch["tags"]


@dataclass
class RunContent:
    """What one run holds in MLflow, in the form the store keeps it: finite metrics (one value,
    step 0), metric histories as (step, value) pairs of their finite values, params and tags as
    text cut to MLflow's lengths. `ingest` logs it; `report.runs.RecordRuns` reads records
    through it, so a report from the records shows what one from MLflow would."""

    metrics: dict[str, float]
    params: dict[str, str]
    tags: dict[str, str]
    histories: dict[str, list[tuple[int, float]]]
    #: the N_k histograms (`voc.is_histogram`), one artifact `voc.HISTOGRAMS_ARTIFACT`
    histograms: dict[str, list[float]] = field(default_factory=dict)

    @classmethod
    def of(cls, metrics: dict, params: dict | None = None, tags: dict | None = None,
           histories: dict | None = None) -> "RunContent":
        """The run of these values; a history that is an N_k histogram goes to `histograms`
        (thousands of metric rows per benchmark otherwise, each a database row to write)."""
        histories = histories or {}
        return cls(
            metrics={k: float(v) for k, v in sorted(metrics.items())
                     if v is not None and np.isfinite(v)},
            params={k: str(v)[:6000] for k, v in sorted((params or {}).items())},
            tags={k: str(v)[:5000] for k, v in sorted((tags or {}).items())},
            histories={k: [(step, float(v)) for step, v in enumerate(values) if np.isfinite(v)]
                       for k, values in sorted(histories.items()) if not voc.is_histogram(k)},
            histograms={k: [float(v) for v in values] for k, values in sorted(histories.items())
                        if voc.is_histogram(k)})

    def curve(self, name: str) -> list[float]:
        """A history's finite values in step order, or a histogram; empty if the run has
        neither."""
        if name in self.histograms:
            return [v for v in self.histograms[name] if np.isfinite(v)]
        return [v for _, v in self.histories.get(name, [])]

    def latest(self) -> dict[str, float]:
        """The value MLflow shows per metric (its `latest_metrics`): the scalar metrics and
        each history's value at its highest step."""
        out = dict(self.metrics)
        out.update({k: points[-1][1] for k, points in self.histories.items() if points})
        return out


def _log(mlclient, run_id: str, metrics: dict, params: dict | None = None,
         tags: dict | None = None, histories: dict | None = None):
    _log_content(mlclient, run_id, RunContent.of(metrics, params, tags, histories))


def _log_content(mlclient, run_id: str, content: RunContent,
                 files: dict[str, Path | str] | None = None, tags: bool = True,
                 artifact_uri: str | None = None) -> None:
    """Log a run's content, and its artifacts in one call: the histograms and `files`
    ({artifact name: a file to copy, or text to write}). `tags=False`: the run has its tags
    already (`_start` gave them to the new run). `artifact_uri`: the run's artifact location,
    when the caller has it (`_artifact_repository`)."""
    from mlflow.entities import Metric, Param, RunTag

    now = int(time.time() * 1000)
    metric_list = [Metric(k, v, now, 0) for k, v in content.metrics.items()]
    metric_list += [Metric(k, v, now, step) for k, points in content.histories.items()
                    for step, v in points]
    param_list = [Param(k, v) for k, v in content.params.items()]
    tag_list = [RunTag(k, v) for k, v in content.tags.items()] if tags else []
    for metrics_now, params_now, tags_now in _batches(metric_list, param_list, tag_list):
        _log_batch(mlclient, run_id, metrics_now, params_now, tags_now)
    files = dict(files or {})
    if content.histograms:
        files[voc.HISTOGRAMS_ARTIFACT] = json.dumps(content.histograms, sort_keys=True)
    if not files:
        return
    with tempfile.TemporaryDirectory() as tmp:  # one call: each call looks the run up again
        for name, source in files.items():
            if isinstance(source, Path):
                shutil.copyfile(source, Path(tmp) / name)
            else:
                (Path(tmp) / name).write_text(source)
        if artifact_uri is None:
            mlclient.log_artifacts(run_id, tmp)
        else:
            _artifact_repository(mlclient, artifact_uri).log_artifacts(tmp)


def _log_batch(mlclient, run_id: str, metrics: list, params: list, tags: list) -> None:
    """`log_batch`, safe against a concurrent writer of the same run: MLflow's database store
    reads a run's params and then inserts the new ones, so two ingests writing into one run at
    once (the loser of a duplicate key writes into the winner, `_write`) both find a param
    missing and the second insert fails on the key's uniqueness (`UniqueViolation` on
    PostgreSQL). When every param of the batch is then on the run with the value sent, the batch
    is logged again: its params are skipped as present, its metrics and tags written."""
    from mlflow.exceptions import MlflowException

    try:
        mlclient.log_batch(run_id, metrics=metrics, params=params, tags=tags)
    except MlflowException:
        logged = mlclient.get_run(run_id).data.params
        if not params or any(logged.get(p.key) != p.value for p in params):
            raise
        mlclient.log_batch(run_id, metrics=metrics, params=params, tags=tags)


def _artifact_repository(mlclient, artifact_uri: str):
    """The artifact repository of a run whose artifact location is known: what
    `MlflowClient.log_artifacts` writes to, found as it finds it
    (`TrackingServiceClient._get_artifact_repo`) but without its `get_run` (the run loaded with
    all its metrics, params and tags: 14 % of the default benchmark's ingest into a new store,
    under cProfile)."""
    from mlflow.store.artifact.artifact_repository_registry import get_artifact_repository
    from mlflow.utils.uri import add_databricks_profile_info_to_artifact_uri

    uri = mlclient.tracking_uri
    return get_artifact_repository(add_databricks_profile_info_to_artifact_uri(artifact_uri, uri),
                                   tracking_uri=uri)


def _flat_params(record: dict) -> dict:
    method = record["method"]
    params = {f"method.{k}": json.dumps(v) for k, v in method["config_params"].items()}
    params.update({
        "dataset": record["dataset"]["name"],
        "method": method["name"],
        "preprocess": json.dumps(record["preprocess"]["steps"]),
        voc.PARAM_PROTOCOL: json.dumps(record["split"]["protocol"], sort_keys=True),
        voc.PARAM_K: json.dumps(record["k"]),
        voc.PARAM_HUBNESS_K: record["hubness_k"],
        "seed": record["split"]["seed"],
    })
    if record["split"].get("train_size"):
        params[voc.PARAM_TRAIN_SIZE] = record["split"]["train_size"]
    reduction = record["method"].get("hubness_reduction")
    if reduction:
        params[voc.PARAM_HUBNESS_REDUCTION] = json.dumps(
            {k: v for k, v in reduction.items() if k != "label"}, sort_keys=True)
    return params


def _tags(record: dict, kind: str) -> dict:
    tags = {
        KIND: kind,
        voc.Tag.BENCHMARK: record["benchmark"],
        voc.Tag.DATASET: record["dataset"]["label"],
        voc.Tag.DATASET_SOURCE: record["dataset"]["source"],
        voc.Tag.DATASET_PAPERS: ",".join(record["dataset"]["papers"]),
        voc.Tag.METHOD: record["method"]["label"],
        voc.Tag.METHOD_NAME: record["method"]["name"],
        voc.Tag.FAMILY: record["method"]["family"],
        voc.Tag.METHOD_PAPERS: ",".join(record["method"]["papers"]),
        voc.Tag.PARENT_KEY: record["parent_key"],
        voc.Tag.GIT_COMMIT: record["environment"]["git_commit"],
        voc.Tag.HOST: record["environment"]["host"],
        voc.Tag.FINISHED: record["environment"]["finished"],
    }
    if record["method"].get("hubness_reduction"):
        tags[voc.Tag.HUBNESS_REDUCTION] = record["method"]["hubness_reduction"]["label"]
    if record["dataset"].get("unpinned"):
        tags[voc.Tag.UNPINNED] = " ".join(f"{k} {v}" for k, v in
                                          sorted(record["dataset"]["unpinned"].items()))
    plugin = record["method"].get("plugin")
    if plugin:
        tags[voc.Tag.PLUGIN] = " ".join([plugin["class"], *(
            [f"{plugin['package']} {plugin['version']}"] if "version" in plugin else []), *(
            [f"sha256:{plugin['sha256']}"] if "sha256" in plugin else [])])
    if record["dataset"].get("file"):
        file = record["dataset"]["file"]
        tags[voc.Tag.DATASET_FILE] = f"{file['file']} sha256:{file['sha256']}"
    if "over_budget" in record:
        tags[voc.Tag.OVER_BUDGET] = over_budget_text(record["over_budget"])
    for key, tag in (("machine", voc.Tag.MACHINE), ("code_version", voc.Tag.CODE_VERSION)):
        if key in record["environment"]:  # records written before it was recorded lack it
            tags[tag] = record["environment"][key]
    tags.update({f"version.{k}": v for k, v in record["environment"]["versions"].items()})
    return tags


def over_budget_text(entry: dict) -> str:
    """A record's `over_budget` entry in one line (the runs' tag `voc.Tag.OVER_BUDGET`), e.g.
    'time: limit 600 s; used 612 s wall, 598 s CPU, peak 1234 MB'."""
    limit = (f"limit {entry['limit']['time_s']:g} s" if entry["reason"] == "time" else
             f"reserved {entry['limit']['mem_mb']:g} MB")
    used = entry["used"]
    return (f"{entry['reason']}: {limit}; used {used['wall_s']:.0f} s wall, "
            f"{used['cpu_s']:.0f} s CPU, peak {used['peak_rss_mb']:.0f} MB")


def _start(mlclient, exp_id: str, key: str, kind: str, name: str, parent_id: str | None = None,
           tags: dict | None = None):
    """A new run of `key`, with `tags` (its content's: written in the same transaction as the
    run, one commit fewer than a later `log_batch` of them); its `RunInfo`."""
    tags = {**(tags or {}), KEY: key, KIND: kind}
    if parent_id:
        tags[voc.Tag.PARENT_RUN] = parent_id
    return mlclient.create_run(exp_id, tags=tags, run_name=name).info


def split_content(record: dict, digest: str | None = None) -> RunContent:
    """A split run's metrics, fit info, curves, params and tags, with its content hash
    (`split_digest`, computed unless given)."""
    fit_metrics, fit_histories, fit_tags = fit_info_entries(record["fit_info"])
    tags = {**_tags(record, voc.RunKind.SPLIT), **fit_tags, HASH: digest or split_digest(record),
            voc.Tag.SPLIT: record["split"]["index"]}
    curves = {voc.curve(k): v for k, v in record.get("curves", {}).items()}
    return RunContent.of({**split_metrics(record), **fit_metrics}, _flat_params(record), tags,
                         {**fit_histories, **curves})


def parent_content(group: list[dict], digest: str | None = None) -> RunContent:
    """A parent run's aggregation over its split records (`group`, in split order), tagged with
    the content hash of the group (`parent_digest`, computed unless given)."""
    first = group[0]
    tags = {**_tags(first, voc.RunKind.PARENT), HASH: digest or parent_digest(group)}
    over = [r for r in group if "over_budget" in r]
    if over:  # its mean is not one of all its splits: the parent is over budget
        tags[voc.Tag.OVER_BUDGET] = (f"{len(over)} of {len(group)} splits; "
                                     + over_budget_text(over[0]["over_budget"]))
    return RunContent.of(summary(group), _flat_params(first), tags, mean_curves(group))


def parent_digest(group: list[dict]) -> str:
    """The content hash a parent run is tagged with: of its splits' content and code versions
    (`LAYOUT_VERSION` first), so the parent is logged again when a split, the code that
    computed it or the layout changes."""
    return f"{LAYOUT_VERSION}:" + voc.digest([_stable_and_code(r) for r in group], None)


def split_digest(record: dict) -> str:
    """The content hash a split run is tagged with (`LAYOUT_VERSION` first): of its content
    (`records.content_hash`) and its code version, so that a record computed again by other
    code, with the same numbers, still updates the run's code-version tag."""
    return f"{LAYOUT_VERSION}:" + voc.digest(_stable_and_code(record), None)


def _stable_and_code(record: dict) -> list[str]:
    return [records.content_hash(record), record["environment"].get("code_version", "")]


def _split_files(record: dict, folder: Path) -> dict[str, Path | str]:
    """The artifacts of a split run: the record, its `tuning` entry (what the report's tuning
    section reads, `report.runs`) and its arrays (the .npz next to its record file; `folder`
    holds the record file, the arrays are named relative to it)."""
    files = {"record.json": json.dumps(record, indent=2, sort_keys=True)}
    if "tuning" in record:
        files[voc.TUNING_ARTIFACT] = json.dumps(record["tuning"], sort_keys=True)
    if "arrays" in record:
        _check_arrays(folder, record["arrays"])
        files[ARRAYS_ARTIFACT] = folder / record["arrays"]["file"]
    return files


def _up_to_date(run, digest: str) -> bool:
    """The run exists, finished, and holds the content with this digest (nothing to log)."""
    return (run is not None and run.data.tags.get(HASH) == digest
            and run.info.status == "FINISHED")


def _deleted(mlclient, run_id: str) -> bool:
    return mlclient.get_run(run_id).info.lifecycle_stage == "deleted"


def _write(mlclient, exp_id: str, key: str, info, write, tagged: bool = False) -> str:
    """`write(info, tagged)` into the run of `info` (its `RunInfo`; `tagged`: the run was
    created with its content's tags); if a concurrent ingest deleted that run meanwhile (an
    older sibling had finished), write into the key's winner instead (its tags too). Returns the
    id of the run written. A run whose writing fails otherwise is ended FAILED
    (`_ended_failed`)."""
    from mlflow.exceptions import MlflowException

    for _ in range(3):
        try:
            with _ended_failed(mlclient, info.run_id):
                write(info, tagged)
            return info.run_id
        except MlflowException:
            if not _deleted(mlclient, info.run_id):
                raise
        runs = existing_runs(mlclient, exp_id).get(key)
        if not runs:
            raise RuntimeError(f"MLflow run {info.run_id} of key {key} was deleted and no "
                               "other run of that key exists")
        info, tagged = runs[0].info, False
    raise RuntimeError(f"could not write MLflow runs of key {key}: deleted three times")


@contextlib.contextmanager
def _ended_failed(mlclient, run_id: str):
    """Mark the run FAILED when the block fails (a full store, a full disk, a bug), so no run is
    left RUNNING; the next ingest of its key rewrites it. When the store cannot take even that
    update, the run stays RUNNING and the next ingest reuses it all the same."""
    try:
        yield
    except BaseException:
        with contextlib.suppress(Exception):
            if not _deleted(mlclient, run_id):
                mlclient.set_terminated(run_id, "FAILED")
        raise


@contextlib.contextmanager
def _quiet_store_errors():
    """Keep MLflow's database layer from logging the traceback of each failed statement (a
    full store would print it for every write tried): the exception itself says it all, and
    `ingest` reports a full store in one line."""
    logger = logging.getLogger("mlflow.store.db.utils")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


#: what MLflow's database stores say when they cannot take a write (SQLite, PostgreSQL)
_STORE_FULL = ("database or disk is full", "disk i/o error", "readonly database",
               "no space left on device", "could not extend file", "disk quota exceeded",
               "read-only file system", "diskfull")


def store_error(err: Exception) -> OSError | None:
    """The `OSError` (ENOSPC, or EROFS for a read-only store) to report instead of a store's
    exception that says it cannot take a write; None for other errors."""
    text = f"{err} {type(err).__name__} {getattr(err, 'orig', '')}".lower()
    if not any(phrase in text for phrase in _STORE_FULL):
        return None
    code = errno.EROFS if "read" in text and "only" in text else errno.ENOSPC
    return OSError(code, _first_line(err), f"the MLflow store {store_label()}")


def _first_line(err: Exception) -> str:
    """The line of the store's message that says why it cannot write."""
    lines = str(err).splitlines()
    said = [line for line in lines if any(p in line.lower() for p in _STORE_FULL)]
    return (said or lines or [type(err).__name__])[0].strip()[:200]


def resolve_duplicates(mlclient, exp_id: str, keys: set[str]) -> dict[str, str]:
    """Keep one run per key of `keys` (the oldest), deleting the younger ones once the oldest is
    FINISHED; point the winning children to the winning parent. Returns {key: winning run id}."""
    from mlflow.exceptions import MlflowException

    runs = existing_runs(mlclient, exp_id)
    winners = {}
    for key in keys:
        candidates = runs.get(key, [])
        if not candidates:
            continue
        winners[key] = candidates[0].info.run_id
        if candidates[0].info.status != "FINISHED":
            continue  # the oldest is still being written: leave every writer alone
        for loser in candidates[1:]:
            try:
                mlclient.delete_run(loser.info.run_id)
            except MlflowException:
                pass  # deleted by a concurrent ingest already
    for key in keys:
        run = runs.get(key, [None])[0]
        if run is None or run.data.tags.get(KIND) != voc.RunKind.SPLIT:
            continue
        parent = winners.get(run.data.tags.get(voc.Tag.PARENT_KEY))
        if parent and run.data.tags.get(voc.Tag.PARENT_RUN) != parent:
            try:
                mlclient.set_tag(run.info.run_id, voc.Tag.PARENT_RUN, parent)
            except MlflowException:
                if not _deleted(mlclient, run.info.run_id):
                    raise  # deleted meanwhile by a concurrent ingest, which resolves it later
    return winners


def _config_key(config: dict) -> str:
    return "config:" + voc.digest(config)


def log_benchmark_config(mlclient, exp_id: str, config: dict, known: dict) -> str:
    """One run (kind 'benchmark') per distinct config of the experiment, holding the config as an
    artifact, so a report built from MLflow alone knows e.g. the paper tables to compare with."""
    key = _config_key(config)
    run = known.get(key)
    if run is not None:
        return run.info.run_id
    run_id = _start(mlclient, exp_id, key, voc.RunKind.BENCHMARK,
                    f"config {config.get('benchmark', '')}").run_id
    with _ended_failed(mlclient, run_id), tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "config.json"
        path.write_text(json.dumps(config, indent=2))  # in its order: docs/tuning.md
        mlclient.log_artifact(run_id, str(path))
        mlclient.set_terminated(run_id)
    return run_id


class _Ingest:
    """One ingest into one experiment: what exists already, what was written, the counts."""

    def __init__(self, experiment: str):
        self.mlclient = client()
        self.exp_id = experiment_id(self.mlclient, experiment)
        seen = existing_runs(self.mlclient, self.exp_id)
        self.known = {key: runs[0] for key, runs in seen.items()}
        #: keys whose runs `resolve_duplicates` must look at: written by this ingest, seen with
        #: several runs, or a split's seen pointing to another parent run than its parent key's
        self.unsettled = {key for key, runs in seen.items() if len(runs) > 1}
        self.counts = {"created": 0, "updated": 0, "unchanged": 0}

    def run_for(self, key: str, digest: str, kind: str, name: str, content, files=None,
                parent_id: str | None = None, count: bool = True) -> str:
        """The run of `key`: left alone when it holds `digest` already, else (created with its
        tags if missing and) written: `content()` (a `RunContent`), the artifacts `files()`
        (`_log_content`), FINISHED last. Returns its id; `count`: in the counts."""
        run = self.known.get(key)
        if _up_to_date(run, digest):
            self.counts["unchanged"] += count
            if parent_id and run.data.tags.get(voc.Tag.PARENT_RUN) != parent_id:
                self.unsettled.add(key)
            return run.info.run_id
        self.counts["updated" if run else "created"] += count
        self.unsettled.add(key)
        logged = content()
        if run:
            info = run.info
        else:
            info = _start(self.mlclient, self.exp_id, key, kind, name, parent_id, logged.tags)

        def write(target, tagged):
            _log_content(self.mlclient, target.run_id, logged, files() if files else None,
                         tags=not tagged, artifact_uri=target.artifact_uri)
            self.mlclient.set_terminated(target.run_id)

        return _write(self.mlclient, self.exp_id, key, info, write, tagged=run is None)

    def parent(self, parent_key: str, group: list[dict]) -> str:
        """The parent run of one (data set, method, parameters): its splits' aggregation."""
        digest = parent_digest(group)
        return self.run_for(parent_key, digest, voc.RunKind.PARENT, _run_name(group[0]),
                            lambda: parent_content(group, digest), count=False)

    def split(self, record: dict, parent_id: str, folder: Path) -> str:
        digest = split_digest(record)
        name = f"{_run_name(record)} / split {record['split']['index']}"
        return self.run_for(record["job_key"], digest, voc.RunKind.SPLIT, name,
                            lambda: split_content(record, digest),
                            lambda: _split_files(record, folder), parent_id)

    def tracked(self, tracked: TrackedRun) -> str:
        content = tracked_content(tracked)
        return self.run_for(tracked.key, tracked.content_digest, tracked.kind, tracked.name,
                            lambda: content)


def tracked_content(tracked: TrackedRun) -> RunContent:
    """The run of a study document's `TrackedRun`: its numbers as metrics, its params and tags."""
    metrics = {k: v for k, v in tracked.result.items() if is_number(v)}
    return RunContent.of(metrics, tracked.params,
                         {KIND: tracked.kind, HASH: tracked.content_digest, **tracked.tags})


def _run_name(record: dict) -> str:
    return f"{record['dataset']['label']} / {record['method']['label']}"


def ingest(paths: list[str | Path], experiment: str | None = None,
           config: dict | None = None, tracked: list[TrackedRun] = (),
           set_aside_unreadable: bool = False, progress: bool = False) -> dict:
    """Import the split records of record files, and the runs of study documents
    (`studies.tracked_runs`), into MLflow; returns {"parents": {parent_key: {run_id, dataset,
    method, children: {job_key: run_id}}}, "tracked": {key: run_id}, "counts": ...}.

    Every file is read and checked before anything is written. A record file that cannot be
    read, or whose arrays file is missing or differs, stops the ingest with a `ValueError`
    naming each such file on a line; with `set_aside_unreadable` (the workflow's track step)
    each is renamed to `<name>.unreadable` first (`records.set_aside`), so the next run of the
    workflow reruns the jobs that write them. The config's `description` becomes the
    experiment's (`describe_experiment`); `progress` shows a progress bar on the console."""
    groups: dict[str, list[dict]] = defaultdict(list)
    folder = {}
    problems = []
    for path in paths:
        try:
            split_records = records.read(path)
            for record in split_records:
                if "arrays" in record:
                    _check_arrays(Path(path).parent, record["arrays"])
        except records.UnreadableRecord as err:
            problems.append((Path(path), str(err)))
            continue
        except ArraysMismatch as err:
            problems.append((Path(path), f"record file {path}: {err}"))
            continue
        for record in split_records:
            groups[record["parent_key"]].append(record)
            folder[record["job_key"]] = Path(path).parent
    if problems:
        lines = []
        for path, message in problems:
            if set_aside_unreadable:
                message += (f"; set aside as {records.set_aside(path).name}: the next workflow "
                            "run reruns the job that writes it")
            lines.append(message)
        raise ValueError("\n".join(lines))
    if not groups and not tracked:
        raise ValueError("no result records to ingest")
    experiment = experiment or (next(iter(groups.values()))[0]["benchmark"] if groups
                                else tracked[0].benchmark)
    try:
        with _quiet_store_errors():
            return _ingest(groups, folder, experiment, config, tracked, progress)
    except Exception as err:
        full = store_error(err)
        if full is None:
            raise
        raise full from None


def _ingest(groups: dict, folder: dict, experiment: str, config: dict | None,
            tracked, progress: bool) -> dict:
    session = _Ingest(experiment)
    out = {"experiment": experiment, "experiment_id": session.exp_id,
           "tracking_uri": tracking_uri(), "parents": {}}
    if config is not None:
        describe_experiment(session.mlclient, session.exp_id, config.get("description"))
        out["config_run_id"] = log_benchmark_config(session.mlclient, session.exp_id, config,
                                                    session.known)
        if _config_key(config) not in session.known:  # written now
            session.unsettled.add(_config_key(config))
    if groups:
        every = [r for group in groups.values() for r in group]
        set_runs_view(session.mlclient, session.exp_id, runs_view_columns(
            min(min(r["k"]) for r in every), any(r.get("tuning") for r in every)))
    for parent_key, group in tqdm(sorted(groups.items()), desc="ingest", unit="parent",
                                  disable=not progress or None, leave=False):
        group.sort(key=lambda r: r["split"]["index"])
        parent_id = session.parent(parent_key, group)
        children = {r["job_key"]: session.split(r, parent_id, folder[r["job_key"]]) for r in group}
        out["parents"][parent_key] = {"run_id": parent_id, "dataset": group[0]["dataset"]["label"],
                                      "method": group[0]["method"]["label"], "children": children}
    out["tracked"] = {t.key: session.tracked(t) for t in tracked}
    unsettled = set(out["tracked"]) & session.unsettled
    if config is not None:
        unsettled |= {_config_key(config)} & session.unsettled
    for parent_key, group in groups.items():  # a parent with its splits (children follow it)
        keys = {parent_key, *(r["job_key"] for r in group)}
        if keys & session.unsettled:
            unsettled |= keys
    # nothing written and one run per key seen: nothing to resolve (a duplicate made meanwhile
    # by a concurrent ingest is resolved by that ingest), so no second look at every run
    winners = resolve_duplicates(session.mlclient, session.exp_id, unsettled) if unsettled else {}
    if config is not None:
        out["config_run_id"] = winners.get(_config_key(config), out["config_run_id"])
    for entry in out["parents"].values():
        entry["children"] = {k: winners.get(k, v) for k, v in entry["children"].items()}
    for parent_key, entry in out["parents"].items():
        entry["run_id"] = winners.get(parent_key, entry["run_id"])
    out["tracked"] = {k: winners.get(k, v) for k, v in out["tracked"].items()}
    out["counts"] = session.counts
    return out


class ArraysMismatch(ValueError):
    """The arrays file a record names is missing or differs from the record's sha256."""


def _check_arrays(folder: Path, entry: dict) -> None:
    source = folder / entry["file"]
    if not source.exists():
        raise ArraysMismatch(f"arrays file {source} named by a record is missing")
    if hashlib.sha256(source.read_bytes()).hexdigest() != entry["sha256"]:
        raise ArraysMismatch(f"arrays file {source} does not match its record (sha256)")

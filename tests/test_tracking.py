"""Records -> MLflow: one parent per (data set, method), one child per split, idempotent."""

import copy
import json

import mlflow
import pytest

from dmlbench import config, data, records
from dmlbench.records import tracking
from dmlbench.run import job, plan, protocols

CFG = {
    "benchmark": "track-test",
    "k": [1, 3],
    "hubness_k": 3,
    "protocol": {"kind": "holdout", "repeats": 2},
    "datasets": {"iris": None},
    "methods": {"euclidean": None, "rca": None},
}


def run_jobs(cfg: dict, tmp_path, out_dir, keep_arrays: bool = False) -> list:
    """Run every job of `cfg` on iris (cache and splits under tmp_path); one record file per
    method in out_dir (with the methods' arrays beside it if keep_arrays)."""
    cfg["data"] = {"cache": str(tmp_path / "cache")}
    cfg = plan.check(cfg)
    ds = data.ensure("iris", cfg["data"]["cache"])
    protocol = config.dataset_protocol(cfg, "iris")
    protocols.save_splits(plan.split_path(cfg, "iris"),
                          protocols.make_splits(ds.y, protocol, 0), protocol, 0, ds.meta["sha256"])
    paths = []
    for j in plan.jobs(cfg):
        spec = plan.job_spec(cfg, j.dataset, j.method, j.splits)
        path = out_dir / f"{j.method}.json"
        records.write(path, job.run(spec, progress=False,
                                    record_path=path if keep_arrays else None))
        paths.append(path)
    return paths


@pytest.fixture
def record_files(tmp_path):
    return run_jobs(copy.deepcopy(CFG), tmp_path, tmp_path)


def _runs(kind):
    return mlflow.search_runs(experiment_names=["track-test"],
                              filter_string=f"tags.`dmlbench.kind` = '{kind}'")


def test_ingest_layout_and_idempotence(mlflow_uri, record_files):
    first = tracking.ingest(record_files)
    assert first["counts"] == {"created": 4, "updated": 0, "unchanged": 0}
    parents, splits = _runs("parent"), _runs("split")
    assert len(parents) == 2 and len(splits) == 4
    assert set(parents["tags.dmlbench.method"]) == {"euclidean", "rca"}
    assert set(splits["tags.mlflow.parentRunId"]) == set(parents["run_id"])
    for _, row in parents.iterrows():
        assert row["metrics.n_splits"] == 2
        assert 0 <= row["metrics.accuracy_k1_mean"] <= 1
    second = tracking.ingest(record_files)
    assert second["counts"] == {"created": 0, "updated": 0, "unchanged": 4}
    assert len(_runs("parent")) == 2 and len(_runs("split")) == 4
    assert second["parents"] == first["parents"]


def test_changed_record_updates_its_run(mlflow_uri, record_files):
    tracking.ingest(record_files)
    doc = json.loads(record_files[0].read_text())
    doc["records"][0]["metrics"]["accuracy_k1"] = 0.5
    record_files[0].write_text(json.dumps(doc))
    summary = tracking.ingest(record_files)
    assert summary["counts"] == {"created": 0, "updated": 1, "unchanged": 3}
    splits = _runs("split")
    assert len(splits) == 4 and 0.5 in set(splits["metrics.accuracy_k1"])


def test_record_artifact_and_timings_are_logged(mlflow_uri, record_files):
    summary = tracking.ingest(record_files)
    run_id = next(iter(next(iter(summary["parents"].values()))["children"].values()))
    client = tracking.client()
    run = client.get_run(run_id)
    assert run.data.metrics["fit_wall_s"] >= 0 and "peak_rss_mb" in run.data.metrics
    assert [a.path for a in client.list_artifacts(run_id)] == ["histograms.json", "record.json"]


def test_records_are_checked_against_the_schema(tmp_path):
    with pytest.raises(ValueError, match="result record field 'records'"):
        records.write(tmp_path / "x.json", [])


def test_fit_info_and_curves_become_metrics_histories_and_tags(mlflow_uri, record_files):
    doc = json.loads(record_files[0].read_text())
    doc["records"][0]["fit_info"] = {"n_iter": 5, "objective": [3.0, 2.0, 1.5], "solver": "cg"}
    doc["records"][0]["curves"] = {"accuracy_by_dim": [0.5, 0.75]}
    doc["records"][1]["curves"] = {"accuracy_by_dim": [0.25]}
    record_files[0].write_text(json.dumps(doc))
    summary = tracking.ingest(record_files)
    key = doc["records"][0]["job_key"]
    run_id = next(p["children"][key] for p in summary["parents"].values() if key in p["children"])
    client = tracking.client()
    run = client.get_run(run_id)
    assert run.data.metrics["fit.n_iter"] == 5
    assert run.data.tags["fit.solver"] == "cg"
    history = client.get_metric_history(run_id, "fit.objective")
    assert [(m.step, m.value) for m in sorted(history, key=lambda m: m.step)] == \
        [(0, 3.0), (1, 2.0), (2, 1.5)]
    curve = client.get_metric_history(run_id, "curve.accuracy_by_dim")
    assert sorted((m.step, m.value) for m in curve) == [(0, 0.5), (1, 0.75)]
    # the parent holds the mean over splits, a shorter curve extended by its last value
    parent = summary["parents"][doc["records"][0]["parent_key"]]["run_id"]
    mean = client.get_metric_history(parent, "curve.accuracy_by_dim")
    assert sorted((m.step, m.value) for m in mean) == [(0, 0.375), (1, 0.5)]


def test_nk_histograms_are_one_artifact_per_run_not_metric_rows(mlflow_uri, record_files):
    """The N_k histograms of a split run and their mean on its parent: the run's artifact
    `histograms.json`, read back by the report (`MlflowRuns.curves`); no metric history."""
    from dmlbench import vocabulary as voc
    from dmlbench.report import runs

    summary = tracking.ingest(record_files)
    record = records.read(record_files[0])[0]
    names = [voc.curve(n) for n in record["curves"] if voc.is_histogram(n)]
    assert voc.curve(voc.nk_histogram(3)) in names and voc.curve(voc.nk_histogram(3, True)) in names
    entry = summary["parents"][record["parent_key"]]
    run_id = entry["children"][record["job_key"]]
    client = tracking.client()
    assert not any(client.get_metric_history(run_id, name) for name in names)
    assert not any(name in client.get_run(run_id).data.metrics for name in names)
    stored = mlflow.artifacts.load_dict(f"{client.get_run(run_id).info.artifact_uri}/"
                                        f"{voc.HISTOGRAMS_ARTIFACT}")
    assert stored == {voc.curve(n): v for n, v in record["curves"].items() if voc.is_histogram(n)}
    source = runs.MlflowRuns("track-test")
    source.load([record["parent_key"]])
    name = voc.curve(voc.nk_histogram(3))
    assert source.curves([run_id], name) == {run_id: record["curves"][voc.nk_histogram(3)]}
    group = records.read(record_files[0])
    mean = [sum(v) / len(group) for v in zip(*(r["curves"][voc.nk_histogram(3)] for r in group))]
    lengths = {len(r["curves"][voc.nk_histogram(3)]) for r in group}
    if len(lengths) == 1:  # the mean of equal-length histograms, position by position
        assert source.curves([entry["run_id"]], name)[entry["run_id"]] == pytest.approx(mean)


def test_a_local_sqlite_store_logs_ahead_with_normal_sync(mlflow_uri, record_files, tmp_path):
    """WAL and synchronous=NORMAL on a store on a local disk: commits without waiting for the
    disk; a store on a network file system keeps its rollback journal."""
    import sqlite3

    from sqlalchemy import create_engine, text

    tracking.ingest(record_files)
    database = tmp_path / "mlruns.db"
    with sqlite3.connect(database) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    engine = create_engine(mlflow_uri)  # any engine of this process: NORMAL (1), not FULL (2)
    with engine.connect() as connection:
        assert connection.execute(text("PRAGMA synchronous")).scalar() == 1
    engine.dispose()
    # and the connections MLflow opened on the new store and keeps in its pool (the store was
    # switched to WAL before MLflow first connected to it)
    with tracking.client()._tracking_client.store.engine.connect() as connection:
        assert connection.execute(text("PRAGMA synchronous")).scalar() == 1
    assert tracking._file_system(database) not in tracking._NETWORK_FS


def test_a_store_on_a_network_file_system_keeps_its_journal(tmp_path, monkeypatch):
    import sqlite3

    database = tmp_path / "shared.db"
    sqlite3.connect(database).close()
    monkeypatch.setattr(tracking, "_file_system", lambda path: "nfs4")
    tracking._use_wal(f"sqlite:///{database}")
    with sqlite3.connect(database) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "delete"


def test_method_arrays_go_from_the_job_to_mlflow_and_back(mlflow_uri, tmp_path):
    """A d = 2 metric's test embedding: .npz beside the record -> MLflow artifact -> report."""
    import numpy as np

    from dmlbench.report import runs

    cfg = copy.deepcopy(CFG)
    cfg["methods"] = {"nca": {"params": {"n_components": 2, "max_iter": 5}},
                      "rca": None}  # rca keeps 4 components: no arrays
    paths = run_jobs(cfg, tmp_path, tmp_path / "runs", keep_arrays=True)
    nca_records = records.read(paths[0])
    assert all("arrays" not in r for r in records.read(paths[1]))
    entry = nca_records[1]["arrays"]
    assert entry["file"] == "nca.arrays/split1.npz"
    assert entry["names"] == ["test_embedding", "test_labels"]
    summary = tracking.ingest(paths)
    run_id = summary["parents"][nca_records[1]["parent_key"]]["children"][nca_records[1]["job_key"]]
    client = tracking.client()
    arrays = runs.split_arrays(client.get_run(run_id).info.artifact_uri)
    with np.load(tmp_path / "runs" / entry["file"]) as saved:
        np.testing.assert_array_equal(arrays["test_embedding"], saved["test_embedding"])
    assert arrays["test_embedding"].shape == (nca_records[1]["split"]["n_test"], 2)
    rca_run = next(iter(summary["parents"][records.read(paths[1])[0]["parent_key"]]
                        ["children"].values()))
    assert runs.split_arrays(client.get_run(rca_run).info.artifact_uri) is None
    # a stale arrays file (changed after its record was written) is refused at ingest
    np.savez(tmp_path / "runs" / entry["file"], test_embedding=np.zeros((3, 2)))
    doc = json.loads(paths[0].read_text())
    doc["records"][1]["metrics"]["accuracy_k1"] = 0.0  # force a re-log of that run
    paths[0].write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="does not match its record"):
        tracking.ingest(paths)


def test_duplicates_of_a_key_resolve_to_the_oldest_finished_run(mlflow_uri, record_files):
    """What two overlapping ingests leave: a second run per key. The next ingest keeps the oldest
    finished run per key, deletes the others, and points the children to the kept parents."""
    first = tracking.ingest(record_files)
    client = tracking.client()
    exp_id = first["experiment_id"]
    parent_key, entry = next(iter(first["parents"].items()))
    child_key = next(iter(entry["children"]))
    # a concurrent ingest's younger copies: a finished parent and child, and a child left
    # RUNNING by a killed ingest
    young_parent = tracking._start(client, exp_id, parent_key, "parent", "copy").run_id
    client.set_terminated(young_parent)
    young_child = tracking._start(client, exp_id, child_key, "split", "copy", young_parent).run_id
    client.set_tag(young_child, "dmlbench.parent_key", parent_key)
    client.set_terminated(young_child)
    orphan = tracking._start(client, exp_id, child_key, "split", "orphan", young_parent).run_id
    assert len(_runs("split")) == 6 and len(_runs("parent")) == 3
    # readers already see one run per key
    from dmlbench.report import runs as report_runs

    parents, splits = report_runs.load("track-test")
    assert len(parents) == 2 and len(splits) == 4
    assert set(parents["run_id"]) == {p["run_id"] for p in first["parents"].values()}

    second = tracking.ingest(record_files)
    assert second["parents"] == first["parents"]
    assert len(_runs("parent")) == 2 and len(_runs("split")) == 4
    for run_id in (young_parent, young_child, orphan):
        assert client.get_run(run_id).info.lifecycle_stage == "deleted"


def test_resolves_from_out_of_date_views_keep_one_run_per_key(mlflow_uri, record_files,
                                                               monkeypatch):
    """The race two workflows tracking into one server ran into: ingest B looks while A's older
    run is still RUNNING, A looks after it finished; then each resolves from its own view. Both
    views may delete only runs younger than a finished one, so the older run stays."""
    first = tracking.ingest(record_files)
    client = tracking.client()
    exp_id = first["experiment_id"]
    child_key, older = next(iter(next(iter(first["parents"].values()))["children"].items()))
    younger = tracking._start(client, exp_id, child_key, "split", "copy").run_id
    client.set_terminated(younger)
    client.update_run(older, status="RUNNING")
    view_of_b = tracking.existing_runs(client, exp_id)
    client.set_terminated(older)
    view_of_a = tracking.existing_runs(client, exp_id)
    for view in (view_of_b, view_of_a):
        monkeypatch.setattr(tracking, "existing_runs", lambda *_, view=view: view)
        tracking.resolve_duplicates(client, exp_id, {child_key})
    stages = {run_id: client.get_run(run_id).info.lifecycle_stage for run_id in (older, younger)}
    assert stages == {older: "active", younger: "deleted"}


def test_the_winning_parent_adopts_the_winning_children(mlflow_uri, record_files):
    first = tracking.ingest(record_files)
    client = tracking.client()
    parent_key, entry = next(iter(first["parents"].items()))
    # the kept parent is deleted and a child points elsewhere (an ingest that lost the race)
    client.delete_run(entry["run_id"])
    child = next(iter(entry["children"].values()))
    client.set_tag(child, "mlflow.parentRunId", "0" * 32)
    second = tracking.ingest(record_files)
    new_parent = second["parents"][parent_key]["run_id"]
    assert new_parent != entry["run_id"]
    assert client.get_run(child).data.tags["mlflow.parentRunId"] == new_parent
    assert len(_runs("parent")) == 2 and len(_runs("split")) == 4


def test_a_rerun_that_writes_nothing_looks_at_the_runs_once(mlflow_uri, record_files,
                                                            monkeypatch):
    """Up-to-date runs, one per key: the rerun neither writes nor resolves (no second search of
    every run); a split found pointing to another parent run is pointed back all the same."""
    first = tracking.ingest(record_files)
    searches = []
    search = tracking.existing_runs
    monkeypatch.setattr(tracking, "existing_runs", lambda *a: searches.append(1) or search(*a))
    again = tracking.ingest(record_files)
    assert again["counts"] == {"created": 0, "updated": 0, "unchanged": 4}
    assert again["parents"] == first["parents"] and len(searches) == 1
    parent_key, entry = next(iter(first["parents"].items()))
    child = next(iter(entry["children"].values()))
    client = tracking.client()
    client.set_tag(child, "mlflow.parentRunId", "0" * 32)  # the parent run itself is intact
    searches.clear()
    third = tracking.ingest(record_files)
    assert third["counts"]["unchanged"] == 4 and len(searches) == 2
    assert client.get_run(child).data.tags["mlflow.parentRunId"] == entry["run_id"]


def test_an_ingest_killed_mid_run_is_completed_by_the_next(mlflow_uri, record_files):
    summary = tracking.ingest(record_files)
    client = tracking.client()
    run_id = next(iter(next(iter(summary["parents"].values()))["children"].values()))
    # as if killed after create_run and part of the logging: RUNNING, no hash tag
    client.update_run(run_id, status="RUNNING")
    client.delete_tag(run_id, tracking.HASH)
    again = tracking.ingest(record_files)
    assert again["counts"] == {"created": 0, "updated": 1, "unchanged": 3}
    assert client.get_run(run_id).info.status == "FINISHED"
    assert len(_runs("split")) == 4


def test_content_hash_ignores_timings_and_self_measured_seconds_only():
    record = {"metrics": {"accuracy_k1": 0.9}, "timings": {"fit_wall_s": 1.0},
              "fit_info": {"lam": 1.0, "cv_s": 0.5}}
    other_times = {**record, "timings": {"fit_wall_s": 2.0},
                   "fit_info": {"lam": 1.0, "cv_s": 0.7}}
    assert records.content_hash(record) == records.content_hash(other_times)
    other_choice = {**record, "fit_info": {"lam": 10.0, "cv_s": 0.5}}
    assert records.content_hash(record) != records.content_hash(other_choice)


def test_a_reduced_method_carries_its_reduction_as_tag_and_parameter(mlflow_uri, tmp_path):
    from dmlbench.report import runs

    cfg = copy.deepcopy(CFG)
    cfg["methods"] = {"euclidean": None,
                      "euclidean+ls": {"method": "euclidean",
                                       "hubness_reduction": {"kind": "local_scaling", "k": 5}}}
    tracking.ingest(run_jobs(cfg, tmp_path, tmp_path))
    parents = _runs("parent").set_index("tags.dmlbench.method")
    assert parents.loc["euclidean+ls", "tags.dmlbench.hubness_reduction"] == "LS k=5"
    assert json.loads(parents.loc["euclidean+ls", "params.hubness_reduction"])["k"] == 5
    assert "params.hubness_reduction" not in parents or \
        parents["params.hubness_reduction"].isna()["euclidean"]
    assert parents.loc["euclidean+ls", "metrics.fit.reduction_exact_mean"] == 1
    frame = runs.load("track-test")[0].set_index("method")
    assert frame.loc["euclidean+ls", "hubness_reduction"] == "LS k=5"
    assert frame.loc["euclidean+ls", "method_params"] == frame.loc["euclidean", "method_params"]


class _Calls:
    """An MLflow client stand-in that keeps the log_batch calls."""

    def __init__(self):
        self.calls = []

    def log_batch(self, run_id, metrics, params, tags):
        self.calls.append((metrics, params, tags))


def test_a_runs_values_go_in_one_log_batch_call_when_mlflow_allows():
    client = _Calls()
    tracking._log(client, "r", {f"m{i}": i / 7 for i in range(60)},
                  params={f"p{i}": i for i in range(40)}, tags={f"t{i}": "x" for i in range(20)},
                  histories={"curve.a": [0.5] * 30})
    assert len(client.calls) == 1
    metrics, params, tags = client.calls[0]
    assert (len(metrics), len(params), len(tags)) == (90, 40, 20)


def test_large_runs_are_split_within_mlflows_batch_and_request_limits():
    """Every call passes MLflow's own checks (entity counts, the tracking server's 1 MB request
    size) and every value is logged exactly once."""
    from mlflow.protos.service_pb2 import LogBatch
    from mlflow.utils.proto_json_utils import message_to_json
    from mlflow.utils.validation import _validate_batch_log_api_req, _validate_batch_log_limits

    client = _Calls()
    metrics = {f"m{i}": float(i) for i in range(150)}
    params = {f"p{i:03d}": "v" * 7000 for i in range(250)}
    tags = {f"t{i:03d}": "w" * 5000 for i in range(120)}
    histories = {"curve.a": [float(s) for s in range(1500)], "curve.b": [0.25] * 700}
    tracking._log(client, "r", metrics, params=params, tags=tags, histories=histories)
    for m, p, t in client.calls:
        _validate_batch_log_limits(m, p, t)
        _validate_batch_log_api_req(message_to_json(LogBatch(
            run_id="r", metrics=[x.to_proto() for x in m], params=[x.to_proto() for x in p],
            tags=[x.to_proto() for x in t])))
    logged_metrics = [(x.key, x.step, x.value) for m, _, _ in client.calls for x in m]
    expected = [(k, 0, v) for k, v in metrics.items()] + [
        (k, s, v) for k, values in histories.items() for s, v in enumerate(values)]
    assert sorted(logged_metrics) == sorted(expected)
    assert sorted((x.key, x.value) for _, p, _ in client.calls for x in p) == sorted(
        (k, v[:6000]) for k, v in params.items())
    assert sorted(x.key for _, _, t in client.calls for x in t) == sorted(tags)


def test_ingest_prints_one_final_line_and_no_mlflow_log_lines(mlflow_uri, tmp_path, capfd):
    """`dmlbench ingest` into a new store (whose schema set-up MLflow and alembic log at INFO):
    the console gets the one line naming the store and the experiment, no log line."""
    import logging

    from dmlbench import cli

    logging.getLogger("alembic").setLevel(logging.INFO)  # as a fresh process has it
    logging.getLogger("mlflow").setLevel(logging.INFO)
    paths = run_jobs(copy.deepcopy(CFG), tmp_path, tmp_path)
    capfd.readouterr()
    assert cli.main(["ingest", *map(str, paths)]) in (0, None)
    out, err = capfd.readouterr()
    lines = [line for line in (out + err).splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("MLflow sqlite"), lines
    assert "track-test" in lines[0] and str(tmp_path) not in lines[0]


def test_the_experiment_is_described_and_opens_on_its_runs(mlflow_uri, tmp_path):
    """The experiment named after the benchmark carries the config's description (the tag the
    MLflow UI shows under its name) and the kind that opens it on its runs; a changed
    description replaces the old one at the next ingest."""
    paths = run_jobs(copy.deepcopy(CFG), tmp_path, tmp_path)
    checked = plan.check({**copy.deepcopy(CFG), "description": "Two methods on iris.",
                          "data": {"cache": str(tmp_path / "cache")}})
    summary = tracking.ingest(paths, config=checked)
    client = mlflow.MlflowClient(mlflow_uri)
    exp = client.get_experiment(summary["experiment_id"])
    assert exp.name == "track-test"
    assert exp.tags["mlflow.note.content"] == "Two methods on iris."
    assert exp.tags["mlflow.experimentKind"] == "custom_model_development"
    tracking.ingest(paths, config={**checked, "description": "Changed."})
    assert client.get_experiment(exp.experiment_id).tags["mlflow.note.content"] == "Changed."


def test_the_runs_view_shows_accuracy_at_the_smallest_k_and_the_fit_time(mlflow_uri, record_files):
    """The experiment's shared runs view (the tag the report's link names) selects metric
    columns the parent runs have: the accuracy at k = 1 and the fit time, means over the
    splits (an untuned run: no tuning column)."""
    summary = tracking.ingest(record_files)
    tags = mlflow.MlflowClient(mlflow_uri).get_experiment(summary["experiment_id"]).tags
    state = json.loads(tags[tracking.SHARED_VIEW_TAG + tracking.RUNS_VIEW_KEY])
    assert state["selectedColumns"] == ["metrics.`accuracy_k1_mean`", "metrics.`fit_wall_s_mean`"]
    parents = _runs("parent")
    for column in ("metrics.accuracy_k1_mean", "metrics.fit_wall_s_mean"):
        assert parents[column].notna().all()


class _RacedClient:
    """An MLflow client whose first tag write meets a concurrent writer of the same new tag:
    the other ingest's insert lands first and this one fails as the database's unique key makes
    it (`UniqueViolation` on PostgreSQL, reported as an `MlflowException`)."""

    def __init__(self, uri: str, rival_value: str | None):
        self.client, self.rival_value, self.raced = mlflow.MlflowClient(uri), rival_value, False

    def get_experiment(self, exp_id):
        return self.client.get_experiment(exp_id)

    def set_experiment_tag(self, exp_id, key, value):
        from mlflow.exceptions import MlflowException

        if not self.raced:
            self.raced = True
            if self.rival_value is not None:
                self.client.set_experiment_tag(exp_id, key, self.rival_value)
            raise MlflowException("duplicate key value violates unique constraint")
        self.client.set_experiment_tag(exp_id, key, value)


def test_a_tag_written_by_a_concurrent_ingest_first_is_written_again(mlflow_uri):
    """Two ingests that both find the runs view missing both insert it; the loser writes again
    (an update now) and ends with its own view, never with the database's duplicate-key error."""
    exp_id = tracking.experiment_id(mlflow.MlflowClient(mlflow_uri), "race-test")
    raced = _RacedClient(mlflow_uri, rival_value='{"selectedColumns": []}')
    tracking.set_runs_view(raced, exp_id, ["accuracy_k1_mean"])
    tags = mlflow.MlflowClient(mlflow_uri).get_experiment(exp_id).tags
    assert json.loads(tags[tracking.SHARED_VIEW_TAG + tracking.RUNS_VIEW_KEY]) == {
        "selectedColumns": ["metrics.`accuracy_k1_mean`"]}


def test_a_tag_write_that_fails_with_no_rival_raises(mlflow_uri):
    from mlflow.exceptions import MlflowException

    exp_id = tracking.experiment_id(mlflow.MlflowClient(mlflow_uri), "race-test")
    with pytest.raises(MlflowException, match="duplicate key"):
        tracking.set_runs_view(_RacedClient(mlflow_uri, rival_value=None), exp_id, ["x"])


class _RacedRunClient:
    """An MLflow client whose first `log_batch` meets a concurrent writer of the same run: the
    other ingest's params (`rival_params`) land first and this batch fails as the database's
    unique key makes it (`UniqueViolation` on PostgreSQL, reported as an `MlflowException`)."""

    def __init__(self, uri: str, rival_params: list | None):
        self.client, self.rival_params, self.raced = mlflow.MlflowClient(uri), rival_params, False

    def get_run(self, run_id):
        return self.client.get_run(run_id)

    def log_batch(self, run_id, metrics, params, tags):
        from mlflow.exceptions import MlflowException

        if not self.raced:
            self.raced = True
            if self.rival_params is not None:
                self.client.log_batch(run_id, params=self.rival_params)
            raise MlflowException('duplicate key value violates unique constraint "param_pk"')
        self.client.log_batch(run_id, metrics=metrics, params=params, tags=tags)


def _raced_run(uri: str):
    client = mlflow.MlflowClient(uri)
    return client, client.create_run(tracking.experiment_id(client, "race-test")).info.run_id


def test_a_run_whose_params_a_concurrent_ingest_logged_first_gets_its_metrics_and_tags(
        mlflow_uri):
    """Two ingests writing into one run both insert its params; the loser finds them there
    with its own values and logs its batch again, never failing on the duplicate key."""
    from mlflow.entities import Param

    client, run_id = _raced_run(mlflow_uri)
    content = tracking.RunContent.of({"accuracy_k1": 0.9}, {"lam": 0.5, "k": 3}, {"kind": "x"})
    tracking._log_content(_RacedRunClient(mlflow_uri, [Param("k", "3"), Param("lam", "0.5")]),
                          run_id, content)
    data = client.get_run(run_id).data
    assert data.params == {"k": "3", "lam": "0.5"}
    assert data.metrics == {"accuracy_k1": 0.9} and data.tags["kind"] == "x"


@pytest.mark.parametrize("rival", [None, [("k", "3"), ("lam", "0.25")], [("k", "3")]],
                         ids=["no rival", "other value", "other params"])
def test_a_run_write_failing_without_the_same_params_logged_raises(mlflow_uri, rival):
    from mlflow.entities import Param
    from mlflow.exceptions import MlflowException

    _, run_id = _raced_run(mlflow_uri)
    raced = _RacedRunClient(mlflow_uri, rival and [Param(k, v) for k, v in rival])
    with pytest.raises(MlflowException, match="param_pk"):
        tracking._log_content(raced, run_id,
                              tracking.RunContent.of({"a": 1.0}, {"lam": 0.5, "k": 3}))

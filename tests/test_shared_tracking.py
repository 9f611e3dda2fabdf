"""Shared tracking: an MLflow tracking server backed by PostgreSQL (both started by the test on
loopback ports). Two workflows track into one experiment at the same time, and several ingests
race on the same records: every run must end up there exactly once, finished, under the right
parent, and the reports must read them back."""

import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import mlflow
import pytest
import yaml
from conftest import SNAKEMAKE
from services import MlflowServer, PostgresServer, pg_bin, require_packages

pytestmark = [pytest.mark.slow, pytest.mark.cluster]


@pytest.fixture(scope="module")
def postgres():
    require_packages(["psql", str(pg_bin() / "initdb"), str(pg_bin() / "pg_ctl")])
    server = PostgresServer()
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture(scope="module")
def server(postgres, tmp_path_factory):
    mlflow_server = None
    try:
        root = tmp_path_factory.mktemp("mlflow-server")
        mlflow_server = MlflowServer(postgres.create_database("mlflow"), root / "artifacts").start()
        yield mlflow_server
    finally:
        if mlflow_server is not None:
            mlflow_server.stop()


def runs_of(uri: str, experiment: str):
    mlflow.set_tracking_uri(uri)
    return mlflow.search_runs(experiment_names=[experiment],
                              filter_string="tags.`dmlbench.kind` != ''")


def assert_exactly_once(runs, n_parents: int, n_splits: int) -> None:
    assert runs["tags.dmlbench.key"].is_unique, runs["tags.dmlbench.key"].value_counts().head()
    parents = runs[runs["tags.dmlbench.kind"] == "parent"]
    splits = runs[runs["tags.dmlbench.kind"] == "split"]
    assert len(parents) == n_parents and len(splits) == n_splits
    assert set(runs["status"]) == {"FINISHED"}
    # every split sits under the live parent of its (data set, method)
    parent_of_key = dict(zip(parents["tags.dmlbench.key"], parents["run_id"]))
    assert all(parent_of_key[k] == p for k, p in
               zip(splits["tags.dmlbench.parent_key"], splits["tags.mlflow.parentRunId"]))


def test_two_workflows_track_into_one_experiment_at_once(server, smoke_run, tmp_path):
    reference, _ = smoke_run
    env = {**os.environ, "MLFLOW_TRACKING_URI": server.uri}
    # two copies of a finished workflow whose track and report steps still have to run
    works = [tmp_path / "a", tmp_path / "b"]
    for work in works:
        shutil.copytree(reference, work, ignore=shutil.ignore_patterns(
            "mlruns.db", "mlartifacts", "reports", "tracking.json", "changed.yaml"))
    # a part of the smoke config (the race, not the amount of data, is under test)
    smoke = yaml.safe_load((reference / "config/smoke.yaml").read_text())
    smoke["methods"] = {name: smoke["methods"][name] for name in ("euclidean", "nca")}
    for work in works:
        (work / "config/shared.yaml").write_text(yaml.safe_dump(smoke))
    procs = [subprocess.Popen([SNAKEMAKE, "--cores", "1", "--configfile", "config/shared.yaml"],
                              cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
             for work in works]
    outputs = [p.communicate(timeout=600)[0] for p in procs]
    for proc, out in zip(procs, outputs):
        assert proc.returncode == 0, out[-3000:]
        assert "rule run_" not in out and "localrule track" in out
    n = len(smoke["datasets"]) * len(smoke["methods"])
    assert_exactly_once(runs_of(server.uri, "smoke"), n, 2 * n)
    for work in works:
        html = (work / "reports/smoke/index.html").read_text()
        assert server.uri in html and f"{n} (data set, method) runs · {2 * n} split runs" in html


def test_racing_ingests_leave_each_run_exactly_once(server, smoke_run):
    reference, _ = smoke_run
    files = sorted(str(p) for p in (reference / "results/smoke/runs").rglob("part*.json"))[:6]
    env = {**os.environ, "MLFLOW_TRACKING_URI": server.uri}
    cmd = [sys.executable, "-m", "dmlbench.cli", "ingest", *files, "--experiment", "race"]

    def ingest(_):
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(ingest, range(4)))
    for result in results:
        assert result.returncode == 0, result.stderr[-3000:]
    assert_exactly_once(runs_of(server.uri, "race"), len(files), 2 * len(files))
    # and a fifth ingest afterwards finds everything in place
    again = ingest(None)
    assert again.returncode == 0 and "'created': 0, 'updated': 0" in again.stderr


@pytest.mark.parametrize("n", [2, 4])
def test_concurrent_track_steps_on_a_new_postgresql_store(postgres, smoke_run, tmp_path, n):
    """Several track steps opening a new PostgreSQL store at the same instant: MLflow's schema
    set-up runs once, under the advisory lock (dmlbench.records.tracking.create_schema_once)."""
    from test_reliability import concurrent_ingests

    reference, _ = smoke_run
    files = sorted((reference / "results/smoke/runs").rglob("part*.json"))[:4]
    uri = postgres.create_database(f"fresh{n}")
    for code, _, err in concurrent_ingests(uri, files, n, tmp_path):
        assert code == 0, err[-3000:]
    assert_exactly_once(runs_of(uri, "race"), len(files), 2 * len(files))

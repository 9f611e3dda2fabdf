"""The local-metric family end to end: snakemake with RMVEM, KLHP and the MVCE validation rule;
the validation results reach MLflow only through the track job, and the report shows them."""

import json

import mlflow
import pytest
import yaml
from test_workflow import copy_project, snakemake

from dmlbench import studies
from dmlbench.records import tracking

pytestmark = [pytest.mark.workflow, pytest.mark.slow]

CONFIG = {
    "benchmark": "localsmoke",
    "k": [1, 3],
    "hubness_k": 3,
    "protocol": {"kind": "holdout", "repeats": 2, "train_fraction": 0.7},
    "preprocess": ["zscore"],
    "datasets": {"iris": None, "wine": None},
    "methods": {"euclidean": None,
                "rmvem": {"params": {"m_grid": [6, 10], "k_select": [1, 3]}},
                "klhp": {"params": {"K_grid": [2, 4], "lam_grid": [0.0, 1.0]}}},
    "mvce_validation": {"m": [3, 8], "queries": 1, "datasets": ["wine"]},
}


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    work = copy_project(tmp_path_factory.mktemp("wf_local"))
    (work / "config/local.yaml").write_text(yaml.safe_dump(CONFIG))
    env = {**__import__("os").environ, "MLFLOW_TRACKING_URI": f"sqlite:///{work / 'mlruns.db'}"}
    result = snakemake(work, "--cores", "2", "--configfile", "config/local.yaml", env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    return work, env


def test_validation_runs_come_from_the_track_job(local_run):
    work, env = local_run
    doc = json.loads((work / "results/localsmoke/mvce_validation/wine.json").read_text())
    assert [row["m"] for row in doc["results"]] == [3, 8]
    assert all(row["rel_logdet_diff_max"] < 1e-6 for row in doc["results"])
    assert not (work / "results/localsmoke/mvce_validation/iris.json").exists()
    mlflow.set_tracking_uri(env["MLFLOW_TRACKING_URI"])
    runs = mlflow.search_runs(experiment_names=["localsmoke"],
                              filter_string="tags.`dmlbench.kind` = 'mvce_validation'")
    assert sorted(runs["metrics.m"]) == [3, 8]
    tracked = json.loads((work / "results/localsmoke/tracking.json").read_text())
    assert set(tracked["tracked"].values()) == set(runs["run_id"])
    # ingesting the same files again changes nothing
    again = tracking.ingest(sorted((work / "results/localsmoke/runs").glob("*/*/part*.json")),
                            tracked=studies.tracked_runs(doc))
    assert again["counts"]["created"] == again["counts"]["updated"] == 0


def test_fit_info_and_report_sections(local_run):
    work, env = local_run
    mlflow.set_tracking_uri(env["MLFLOW_TRACKING_URI"])
    parents = mlflow.search_runs(experiment_names=["localsmoke"],
                                 filter_string="tags.`dmlbench.method` = 'rmvem'")
    parents = parents[parents["tags.dmlbench.kind"] == "parent"]
    assert set(parents["metrics.fit.m_k1_mean"]) <= {6.0, 8.0, 10.0}
    html = (work / "reports/localsmoke/index.html").read_text()
    assert "MVCE solver check" in html and "Local ellipsoid metrics" in html
    assert (work / "reports/localsmoke/tables/mvce_check.csv").exists()
    assert (work / "reports/localsmoke/tables/win_tie_loss_rmvem.csv").exists()
    assert (work / "reports/localsmoke/figures/mvce_check.png").exists()

"""The workflow's data path: a config of downloaded sets runs through data.mirror served on
loopback (the download rule end to end), and a config that cannot get its data stops before any
job with one message."""

import os

import pytest
import yaml
from conftest import copy_project, snakemake
from loopback import serve, uci_dir

pytestmark = [pytest.mark.workflow, pytest.mark.slow]
UCI_DIR = uci_dir()


def test_mirror_config_runs_end_to_end_over_loopback(tmp_path):
    if not UCI_DIR.is_dir():
        pytest.skip(f"UCI reference files not on this machine ({UCI_DIR}; set DMLBENCH_UCI_DIR)")
    work = copy_project(tmp_path)
    cfg = yaml.safe_load((work / "config/repro/datasets-mirror.yaml").read_text())
    env = {**os.environ, "MLFLOW_TRACKING_URI": f"sqlite:///{work / 'mlruns.db'}"}
    # the records of one method are enough to exercise the data path (MLflow and the report
    # are tested in test_workflow.py)
    targets = [f"results/datasets-mirror/runs/{name}/euclidean/part0.json"
               for name in cfg["datasets"]]
    with serve(UCI_DIR.parent) as (base, requests):
        cfg["data"]["mirror"] = f"{base}/ok/{UCI_DIR.name}/"
        (work / "config/mirror.yaml").write_text(yaml.safe_dump(cfg))
        result = snakemake(work, *targets, "--cores", "2", "--configfile", "config/mirror.yaml",
                           env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    fetched = sorted(path for method, path in requests if method == "GET")
    assert fetched == [f"/ok/{UCI_DIR.name}/{f}" for f in
                       ("ecoli/ecoli.data", "glass/glass.data", "yeast/yeast.data")]
    for name in cfg["datasets"]:
        assert (work / f"resources/datasets/{name}.json").exists()
        assert list((work / f"results/datasets-mirror/runs/{name}/euclidean").glob("part*.json"))
    assert (work / "resources/downloads/glass/glass.data").read_bytes() == (
        UCI_DIR / "glass/glass.data").read_bytes()
    # the data are cached now: no mirror (and no network) needed any more
    cfg["data"] = {"offline": True}
    (work / "config/cached.yaml").write_text(yaml.safe_dump(cfg))
    result = snakemake(work, *targets, "-n", "--configfile", "config/cached.yaml", env=env)
    assert result.returncode == 0 and "Nothing to be done" in result.stdout + result.stderr


def test_offline_without_mirror_stops_before_any_job(tmp_path):
    """Checked in the Snakefile's onstart handler, after the DAG and before the first job; a dry
    run lists the jobs without it (parsing the workflow probes nothing)."""
    work = copy_project(tmp_path)
    cfg = {"benchmark": "nodata", "datasets": {"iris": None, "glass": None, "ar": None},
           "methods": {"euclidean": None}, "data": {"offline": True}}
    (work / "config/nodata.yaml").write_text(yaml.safe_dump(cfg))
    result = snakemake(work, "--cores", "1", "--configfile", "config/nodata.yaml")
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert "2 data set(s) of this config cannot be obtained, so no job was started" in out
    assert "glass: needs glass/glass.data" in out and "set data.mirror" in out
    assert "ar: not available" in out
    assert not (work / "resources").exists() and not (work / "results").exists()
    dry = snakemake(work, "-n", "--configfile", "config/nodata.yaml")
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert "cannot be obtained" not in dry.stdout + dry.stderr
    assert "prepare_glass" in dry.stdout + dry.stderr

"""The workflow on a real one-node SLURM cluster, through workflow/profiles/slurm and Snakemake's
SLURM executor plugin. The test starts munge, slurmctld and slurmd on loopback ports itself
(services.SlurmCluster), runs a part of config/smoke.yaml (one data set, two methods: what is
tested is the way through sbatch, which the rest of the smoke run would not change), and checks
with `sacct` that every job but the local `track` and `report` went through sbatch."""

import re
from collections import Counter

import pytest
import yaml
from conftest import copy_project, snakemake
from services import SlurmCluster, require_packages

pytestmark = [pytest.mark.slow, pytest.mark.cluster, pytest.mark.workflow]


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    require_packages(SlurmCluster.BINARIES)
    cluster = SlurmCluster(tmp_path_factory.mktemp("slurm"))
    try:
        yield cluster.start()
    finally:
        cluster.stop()


def test_smoke_config_runs_through_the_slurm_profile(slurm, tmp_path):
    work = copy_project(tmp_path)
    smoke = yaml.safe_load((work / "config/smoke.yaml").read_text())
    smoke["datasets"] = {"iris": None}
    smoke["methods"] = {name: smoke["methods"][name] for name in ("euclidean", "lmnn")}
    (work / "config/cluster.yaml").write_text(yaml.safe_dump(smoke))
    env = {**slurm.env, "MLFLOW_TRACKING_URI": f"sqlite:///{work / 'mlruns.db'}"}
    # the profile as users run it, plus what this test cluster needs: no accounts (no slurmdbd),
    # job states from squeue (no accounting database), quick status checks
    result = snakemake(
        work, "--workflow-profile", "workflow/profiles/slurm", "--configfile", "config/cluster.yaml",
        "--slurm-no-account", "--slurm-status-command", "squeue",
        "--slurm-init-seconds-before-status-checks", "1", "--seconds-between-status-checks", "1",
        "--latency-wait", "5", "--jobs", "10", env=env, timeout=900)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    n_runs = len(smoke["datasets"]) * len(smoke["methods"])
    assert len(list((work / "results/smoke/runs").glob("*/*/part*.json"))) == n_runs
    assert (work / "reports/smoke/index.html").exists()

    jobs = slurm.completed_jobs()
    # one sbatch job per run step (one per method: its jobs on every data set); the data sets'
    # prepare steps, track and report ran locally
    expected = len(smoke["methods"])
    assert len(jobs) == expected, jobs
    assert Counter(j["State"] for j in jobs) == {"COMPLETED": expected}
    assert {j["Partition"] for j in jobs} == {"test"} and {j["NodeList"] for j in jobs} == {"localhost"}
    # the jobs Snakemake says it submitted are the jobs SLURM ran, all under this run's name
    submitted = set(re.findall(r"submitted with SLURM jobid (\d+)", result.stdout + result.stderr))
    assert submitted == {j["JobID"] for j in jobs}
    assert len({j["JobName"] for j in jobs}) == 1

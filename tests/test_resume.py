"""Kill and resume: `snakemake` on a part of config/smoke.yaml (`RESUME_METHODS`, both data sets;
the same job keys as in the smoke run) is interrupted mid-run (Ctrl-C, i.e. SIGINT
to its process group; or SIGKILL of the snakemake process alone, whose running jobs go on as
orphans), then the same command is run again. It must finish without redoing finished jobs, no
partial record, cache, report or MLflow artifact may appear at any point, each run must be in
MLflow exactly once, and the records must equal those of the uninterrupted run (`smoke_run`,
`--cores 2`) apart from timings and environment, also when resumed with `--cores 1`."""

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import mlflow
import pandas as pd
import pytest
import yaml
from conftest import REPO, SNAKEMAKE, copy_project, snakemake

from dmlbench import records

pytestmark = [pytest.mark.workflow, pytest.mark.slow]

CONFIG = ("--configfile", "config/resume.yaml")
#: the smoke methods run here: enough jobs to interrupt, in a part of the smoke run's time
RESUME_METHODS = ("euclidean", "lmnn", "move_labeled", "nca")
N_JOBS = 2 * len(RESUME_METHODS)  # (data set, method) pairs, one record file each
N_STEPS = len(RESUME_METHODS)  # one run step (process) per method: both data sets


def resume_project(tmp_path: Path) -> Path:
    """A copy of the project with config/resume.yaml: smoke.yaml restricted to RESUME_METHODS."""
    work = copy_project(tmp_path)
    smoke = yaml.safe_load((REPO / "config/smoke.yaml").read_text())
    assert len(smoke["datasets"]) == 2
    smoke["methods"] = {name: smoke["methods"][name] for name in RESUME_METHODS}
    (work / "config/resume.yaml").write_text(yaml.safe_dump(smoke))
    return work


def partial_files(work: Path) -> list[str]:
    """Files at their final paths that are not complete: invalid records, truncated data-set or
    split caches, PNG figures without their end chunk, unreadable CSV tables or reports."""
    bad = []
    for path in (work / "results").rglob("part*.json"):
        try:
            records.read(path)
        except (ValueError, OSError):
            bad.append(str(path))
    for path in (work / "resources").rglob("*.npz"):
        import numpy as np

        try:
            with np.load(path) as npz:
                [npz[k] for k in npz.files]
        except Exception:  # noqa: BLE001 - any failure to read is a partial file
            bad.append(str(path))
    for path in list((work / "resources").rglob("*.json")) + list(work.glob("results/*/tracking.json")):
        try:
            json.loads(path.read_text())
        except (ValueError, OSError):
            bad.append(str(path))
    for path in (work / "reports").rglob("*.png"):
        if not path.read_bytes().endswith(b"IEND\xaeB`\x82"):
            bad.append(str(path))
    for path in (work / "reports").rglob("*.csv"):
        try:
            pd.read_csv(path)
        except (ValueError, OSError):
            bad.append(str(path))
    for path in (work / "reports").rglob("index.html"):
        if not path.read_text().rstrip().endswith("</html>"):
            bad.append(str(path))
    return bad


def finished_jobs(log: str) -> set[str]:
    """Records of the run steps (`run_<method>`) Snakemake has reported finished in `log`: it
    says so only after it has stored the step's metadata, so a rerun never redoes them."""
    outputs, finished = {}, set()
    output = None
    for line in log.splitlines():
        line = line.strip()
        if line.startswith("output: results/"):
            # a run step's record files are update() outputs: "<path> (update)"
            output = [o.removesuffix(" (update)") for o in line.removeprefix("output: ").split(", ")]
        elif line.startswith("jobid: ") and output is not None:
            outputs[line.removeprefix("jobid: ")] = output
            output = None
        elif line.startswith("rule ") or line.startswith("localrule "):
            output = None
        match = re.fullmatch(r"Finished jobid: (\d+) \(Rule: run_\w+\)", line)
        if match and match.group(1) in outputs:
            finished.update(outputs[match.group(1)])
    return finished


def interrupt(work: Path, env: dict, sig: int, cores: str, after_jobs: int) -> set[str]:
    """Start the workflow, check for partial files while it runs, send `sig` once Snakemake has
    reported the records of `after_jobs` jobs finished (and some are left). Returns the records
    of the run steps it reported finished before the signal, relative to `work`."""
    log_path = work / "interrupted.log"
    log = open(log_path, "w")
    proc = subprocess.Popen([SNAKEMAKE, "--cores", cores, *CONFIG], cwd=work, env=env,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    finished: set[str] = set()
    deadline = time.monotonic() + 600
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            finished = finished_jobs(log_path.read_text())
            assert not partial_files(work)
            if len(finished) >= after_jobs:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the workflow ended before it could be interrupted"
        assert len(finished) < N_JOBS, "every job finished before the workflow could be interrupted"
        if sig == signal.SIGINT:
            os.killpg(proc.pid, sig)  # Ctrl-C: the whole foreground process group
        else:
            os.kill(proc.pid, sig)  # kill -9 of snakemake alone: its jobs go on
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()
    return finished


def wait_for_orphans(work: Path, timeout: float = 300) -> None:
    """Wait until no process runs in `work` (the jobs of a killed snakemake)."""
    import psutil

    def running():
        out = []
        for p in psutil.process_iter(["cwd"]):
            try:
                if p.info["cwd"] and Path(p.info["cwd"]) == work and p.pid != os.getpid():
                    out.append(p)
            except psutil.Error:
                pass
        return out

    deadline = time.monotonic() + timeout
    while running() and time.monotonic() < deadline:
        assert not partial_files(work)
        time.sleep(0.2)
    assert not running()


def mlflow_runs(uri: str) -> pd.DataFrame:
    mlflow.set_tracking_uri(uri)
    return mlflow.search_runs(experiment_names=["smoke"], filter_string="tags.`dmlbench.kind` != ''")


def stable_hashes(work: Path) -> dict[str, str]:
    return {r["job_key"]: records.content_hash(r)
            for path in (work / "results/smoke/runs").rglob("part*.json")
            for r in records.read(path)}


@pytest.mark.parametrize("sig, cores", [(signal.SIGINT, "2"), (signal.SIGKILL, "1")],
                         ids=["SIGINT", "SIGKILL"])
def test_killed_workflow_resumes_without_redoing_finished_jobs(sig, cores, tmp_path, smoke_run):
    work = resume_project(tmp_path)
    uri = f"sqlite:///{work / 'mlruns.db'}"
    env = {**os.environ, "MLFLOW_TRACKING_URI": uri}
    reported = interrupt(work, env, sig, cores, after_jobs=2)
    finished = {work / path: (work / path).read_bytes() for path in reported}
    if sig == signal.SIGKILL:
        wait_for_orphans(work)
    assert not partial_files(work)
    assert finished

    if sig == signal.SIGKILL:  # a killed snakemake leaves its lock (it cannot tell it died)
        unlock = snakemake(work, "--unlock", *CONFIG, env=env)
        assert unlock.returncode == 0, unlock.stderr[-2000:]
    rerun = snakemake(work, "--cores", cores, *CONFIG, env=env)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    log = rerun.stdout + rerun.stderr
    assert log.count("rule run_") <= N_STEPS - len(finished) // (N_JOBS // N_STEPS)
    for path, content in finished.items():
        assert Path(path).read_bytes() == content, f"{path} was redone"
    assert not partial_files(work)
    assert not [p for p in work.rglob("*.tmp")], "a temporary file was left behind"

    # MLflow: each parent and split run exactly once, its record artifact complete
    runs = mlflow_runs(uri)
    assert runs["tags.dmlbench.key"].is_unique
    assert (runs["tags.dmlbench.kind"] == "parent").sum() == N_JOBS
    splits = runs[runs["tags.dmlbench.kind"] == "split"]
    assert len(splits) == 2 * N_JOBS and set(splits["status"]) == {"FINISHED"}
    hashes = stable_hashes(work)
    client = mlflow.MlflowClient(uri)
    for run_id, key in zip(splits["run_id"], splits["tags.dmlbench.key"]):
        artifact = Path(client.download_artifacts(run_id, "record.json", str(tmp_path / run_id)))
        assert records.content_hash(json.loads(artifact.read_text())) == hashes[key]
    # determinism: the same records as the uninterrupted run with --cores 2
    reference, _ = smoke_run
    expected = stable_hashes(reference)
    assert hashes == {key: expected.get(key) for key in hashes}

"""Fewer processes (issue 34): the methods of a `job_group` share one run step per part, the
data sets that need no download one prepare step; a failing member of a shared step does not
lose the records of the others."""

import json
import os
import re

import pytest
import yaml
from conftest import copy_project, snakemake

pytestmark = [pytest.mark.workflow]

#: a plug-in method (docs/your-method.md) that fails on wine (13 features) while ./FAIL exists
FLAKY = '''
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin


class Flaky(TransformerMixin, BaseEstimator):
    def __init__(self, scale=1.0):
        self.scale = scale

    def fit(self, X, y=None):
        if Path("FAIL").exists() and X.shape[1] == 13:
            raise np.linalg.LinAlgError("flaky on wine")
        self.scale_ = self.scale / np.std(X, axis=0).clip(1e-12)
        return self

    def transform(self, X):
        return np.asarray(X) * self.scale_
'''

CONFIG = {"benchmark": "groups", "seed": 0, "k": [1], "hubness_k": 3,
          "protocol": {"kind": "holdout", "repeats": 2, "train_fraction": 0.7},
          "datasets": {"iris": None, "wine": None},
          "methods": {"euclidean": {"job_group": "fast"},
                      "flaky": {"class": "plugins/flaky.py:Flaky", "job_group": "fast"},
                      "rca": {"job_group": "fast"},
                      "lda": None}}


def _project(tmp_path, **changes):
    work = copy_project(tmp_path)
    (work / "config/plugins").mkdir()
    (work / "config/plugins/flaky.py").write_text(FLAKY)
    (work / "config/groups.yaml").write_text(yaml.safe_dump({**CONFIG, **changes}))
    env = {**os.environ, "MLFLOW_TRACKING_URI": f"sqlite:///{work / 'mlruns.db'}"}
    return work, env


def _steps(out: str) -> dict[str, int]:
    table = out[out.index("Job stats:"):]
    return {name: int(count) for name, count in re.findall(r"^(\w+)\s+(\d+)$", table, re.M)}


def test_a_dry_run_shows_one_step_per_group_and_one_prepare_step(tmp_path):
    work, env = _project(tmp_path)
    dry = snakemake(work, "-n", "--configfile", "config/groups.yaml", env=env)
    out = dry.stdout + dry.stderr
    assert dry.returncode == 0, out[-3000:]
    steps = _steps(out)
    assert {name: n for name, n in steps.items() if name.startswith(("run_", "prepare_"))} == {
        "prepare_local": 1, "run_fast": 1, "run_lda": 1}
    assert "log: logs/groups/run/fast.log" in out and "log: logs/prepare/local.log" in out
    # every method on its own, as on a cluster
    dry = snakemake(work, "-n", "--configfile", "config/groups.yaml", "--config",
                    "job_groups=False", env=env)
    steps = _steps(dry.stdout + dry.stderr)
    assert {name for name in steps if name.startswith("run_")} == {
        "run_euclidean", "run_flaky", "run_rca", "run_lda"}


@pytest.mark.slow
def test_a_failing_member_does_not_lose_the_records_of_the_others(tmp_path):
    work, env = _project(tmp_path)
    records = [f"results/groups/runs/{ds}/{m}/part0.json" for ds in ("iris", "wine")
               for m in ("euclidean", "flaky", "rca")]
    (work / "FAIL").touch()
    result = snakemake(work, *records, "--cores", "1", "--configfile", "config/groups.yaml",
                       env=env)
    assert result.returncode != 0
    log = (work / "logs/groups/run/fast.log").read_text()
    assert "LinAlgError: flaky on wine" in log
    assert ("1 of 6 jobs failed: wine / flaky (ValueError: method 'flaky' on data set 'wine', "
            "split 0: flaky on wine); the other 5 record files are written") in log
    kept = sorted(p.relative_to(work / "results/groups/runs").as_posix()
                  for p in (work / "results/groups/runs").rglob(".*.kept"))
    assert kept == [f"{ds}/{m}/.part0.json.kept" for ds in ("iris", "wine")
                    for m in ("euclidean", "flaky", "rca") if (ds, m) != ("wine", "flaky")]
    (work / "FAIL").unlink()
    result = snakemake(work, *records, "--cores", "1", "--configfile", "config/groups.yaml",
                       env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    log = (work / "logs/groups/run/fast.log").read_text()
    assert log.count("taken back from the run that failed") == 5
    assert all((work / path).exists() for path in records)
    assert not list((work / "results").rglob("*.kept"))
    dry = snakemake(work, *records, "-n", "--configfile", "config/groups.yaml", env=env)
    assert "Nothing to be done" in dry.stdout + dry.stderr

    # another protocol of iris: prepare_local runs again and touches every split file, and the
    # steps run again for the new jobs; the records there are kept as they are (Snakemake
    # touches a step's outputs)
    (work / "config/more.yaml").write_text(yaml.safe_dump({**CONFIG, "datasets": {
        **CONFIG["datasets"], "iris-3": {"dataset": "iris",
                                         "protocol": {"kind": "kfold", "folds": 3}}}}))
    before = {path: (work / path).read_bytes() for path in records}  # timings differ if rerun
    result = snakemake(work, *records, *[path.replace("/iris/", "/iris-3/") for path in records
                                         if "/iris/" in path],
                       "--cores", "1", "--configfile", "config/more.yaml", env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "prepare_local" in result.stdout + result.stderr
    assert {path: (work / path).read_bytes() for path in records} == before
    assert (work / "logs/groups/run/fast.log").read_text().count("is current, kept") == 6


@pytest.mark.slow
def test_a_record_put_back_by_a_failed_rerun_is_set_aside_and_computed_again(tmp_path):
    """A step that fails has its `update` outputs put back by Snakemake (their previous
    versions) while Snakemake records the new settings, so the next run finds nothing to do
    for the step: the track step tells such record files by content (`run.job.is_current`),
    sets them aside and fails naming them, and the run after computes them.

    The runs target the track step's output: the steps after it (publish, report) have no part
    in this (tests/test_reliability.py runs them after a rerun), and the group step alone
    (`lda` runs apart) is under test."""
    methods = {name: entry for name, entry in CONFIG["methods"].items() if name != "lda"}
    work, env = _project(tmp_path, methods=methods)
    run = ["results/groups/tracking.json", "--cores", "1", "--configfile", "config/groups.yaml"]
    assert snakemake(work, *run, env=env).returncode == 0
    flaky = {"iris": work / "results/groups/runs/iris/flaky/part0.json",
             "wine": work / "results/groups/runs/wine/flaky/part0.json"}
    before = {ds: path.read_bytes() for ds, path in flaky.items()}
    (work / "config/groups.yaml").write_text(yaml.safe_dump({**CONFIG, "methods": {
        **methods, "flaky": {**methods["flaky"], "params": {"scale": 2.0}}}}))
    (work / "FAIL").touch()
    assert snakemake(work, *run, env=env).returncode != 0
    assert {ds: path.read_bytes() for ds, path in flaky.items()} == before  # put back
    (work / "FAIL").unlink()
    result = snakemake(work, *run, env=env)
    assert result.returncode != 0
    log = (work / "logs/groups/track.log").read_text()
    for ds, path in flaky.items():
        assert f"{path.relative_to(work)}: not the results its job asks for now" in log
        assert path.with_name("part0.json.stale").read_bytes() == before[ds]
    result = snakemake(work, *run, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "taken back from the run that failed" in (work / "logs/groups/run/fast.log").read_text()
    records = [json.loads(path.read_text())["records"] for path in flaky.values()]
    assert all(r["method"]["config_params"]["scale"] == 2.0 for rs in records for r in rs)

"""The workflow end to end: `snakemake --cores 2` on config/smoke.yaml in a temporary copy of
the project, then MLflow, the report, no-op reruns, targeted reruns and config errors."""

import hashlib
import re

import mlflow
import pytest
import yaml
from conftest import REPO, copy_project, snakemake

pytestmark = [pytest.mark.workflow, pytest.mark.slow]


def test_mlflow_has_one_parent_per_dataset_and_method(smoke_run):
    work, env = smoke_run
    mlflow.set_tracking_uri(env["MLFLOW_TRACKING_URI"])
    parents = mlflow.search_runs(experiment_names=["smoke"],
                                 filter_string="tags.`dmlbench.kind` = 'parent'")
    smoke = yaml.safe_load((work / "config/smoke.yaml").read_text())
    expected = {(d, m) for d in smoke["datasets"] for m in smoke["methods"]}
    got = list(zip(parents["tags.dmlbench.dataset"], parents["tags.dmlbench.method"]))
    assert sorted(got) == sorted(expected)
    splits = mlflow.search_runs(experiment_names=["smoke"],
                                filter_string="tags.`dmlbench.kind` = 'split'")
    assert len(splits) == 2 * len(expected)
    nca = splits[splits["tags.dmlbench.method"] == "nca"]
    client = mlflow.tracking.MlflowClient(env["MLFLOW_TRACKING_URI"])
    for run_id in nca["run_id"]:
        assert "arrays.npz" in {a.path for a in client.list_artifacts(run_id)}
    assert all(len(client.get_metric_history(r, "fit.objective")) >= 1 for r in nca["run_id"])


def test_records_and_report_exist(smoke_run):
    work, _ = smoke_run
    from dmlbench import records

    smoke = yaml.safe_load((work / "config/smoke.yaml").read_text())
    files = sorted((work / "results/smoke/runs").glob("*/*/part*.json"))
    assert len(files) == len(smoke["datasets"]) * len(smoke["methods"])
    assert all(len(records.read(f)) == 2 for f in files)
    html = (work / "reports/smoke/index.html").read_text()
    for heading in ("Leaderboard", "Test accuracy", "Average error over data sets", "Hubness",
                    "Time and memory", "Dimension sweep and boosting",
                    "Hubness study (Shigeto 2017)", "speed-up of Move-labeled"):
        assert heading in html
    for figure in ("sweep_k1.png", "loss_vs_rank_i_mfa.png"):
        assert figure in html and (work / "reports/smoke/figures" / figure).exists()
    for heading in ("NCA and its fast variants",):
        assert heading in html
    assert (work / "reports/smoke/figures/nca_time_accuracy.png").exists()
    assert (work / "reports/smoke/figures/nca_projection_iris.png").exists()
    assert list((work / "reports/smoke/figures").glob("*.png"))
    assert (work / "reports/smoke/figures/nk_distribution_n5.png").exists()
    assert not list(work.rglob("*.tmp")), "a temporary file was left behind"


def test_rerun_after_completion_does_nothing(smoke_run):
    work, env = smoke_run
    result = snakemake(work, "-n", "--configfile", "config/smoke.yaml", env=env)
    assert result.returncode == 0
    assert "Nothing to be done" in result.stdout + result.stderr


def test_changing_one_methods_params_reruns_only_its_jobs(smoke_run, tmp_path):
    work, env = smoke_run
    cfg = yaml.safe_load((work / "config/smoke.yaml").read_text())
    cfg["methods"]["lmnn"]["params"]["max_iter"] = 21
    (work / "config/changed.yaml").write_text(yaml.safe_dump(cfg))
    result = snakemake(work, "-n", "--configfile", "config/changed.yaml", env=env)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-2000:]
    # run steps are batches (one per method and split part); their outputs name the records
    steps = [line for line in out.splitlines() if line.strip().startswith("output: results/")]
    reruns = {tuple(path.split("/")[3:5]) for line in steps
              for path in re.findall(r"results/smoke/runs/[^,\s]+/part\d+\.json", line)}
    assert {method for _, method in reruns} == {"lmnn"} and len(reruns) == 2, reruns


def test_another_protocol_on_the_shared_cache_reruns_nothing_of_this_benchmark(smoke_run,
                                                                               tmp_path):
    """A config that adds a split file of a cached data set reruns its prepare step
    (`prepare_local`), which touches the cached files: the smoke benchmark's steps stay done."""
    import shutil

    work = tmp_path / "work"
    shutil.copytree(smoke_run[0], work, symlinks=True)
    env = smoke_run[1]  # the same store: its URI is a param of the track step (no write here)
    cfg = yaml.safe_load((work / "config/smoke.yaml").read_text())
    cfg.update(benchmark="other", datasets={"iris": {"protocol": {"kind": "kfold", "folds": 3}}},
               methods={"euclidean": None})
    (work / "config/other.yaml").write_text(yaml.safe_dump(cfg))
    result = snakemake(work, "--cores", "1", "--configfile", "config/other.yaml",
                       "--until", "prepare_local", env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(list((work / "resources/splits/iris").glob("*.npz"))) == 2
    result = snakemake(work, "-n", "--configfile", "config/smoke.yaml", env=env)
    assert result.returncode == 0
    assert "Nothing to be done" in result.stdout + result.stderr, result.stdout[-3000:]


@pytest.mark.parametrize("patch, message", [
    ({"colour": "blue"}, "colour"),
    ({"datasets": {"nosuchset": None}}, "datasets.nosuchset"),
    ({"methods": {"nosuchmethod": None}}, "methods.nosuchmethod"),
    ({"hubness_k": "ten"}, "hubness_k"),
    ({"k": [500]}, "config error at 'k': k = 500 exceeds the n_train"),
    ({"methods": {"lmnn": {"params": {"n_neighbors": "three"}}}},
     "config error at 'methods.lmnn.params.n_neighbors'"),
])
def test_config_errors_stop_before_any_job(tmp_path, patch, message):
    work = copy_project(tmp_path)
    cfg = yaml.safe_load((work / "config/smoke.yaml").read_text())
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(cfg.get(key), dict):
            cfg[key].update(value)
        else:
            cfg[key] = value
    (work / "config/bad.yaml").write_text(yaml.safe_dump(cfg))
    result = snakemake(work, "--cores", "1", "--configfile", "config/bad.yaml")
    assert result.returncode != 0
    assert message in result.stderr + result.stdout
    assert len((result.stderr + result.stdout).splitlines()) < 8  # no schema dump
    assert not (work / "resources").exists() and not (work / "results").exists()


def test_a_bad_parameter_stops_a_dry_run_with_one_line_and_no_file(tmp_path):
    """Issue 13, section 4: refused before any job (even in a dry run), on one line naming the
    key (Snakemake frames it with 'WorkflowError in file ...' and the line of the raise), and
    no schema dump."""
    work = copy_project(tmp_path)
    before = sorted(p.relative_to(work) for p in work.rglob("*"))
    cfg = yaml.safe_load((work / "config/smoke.yaml").read_text())
    cfg["methods"]["rmvem"] = {"params": {"eps": 0}}
    (work / "config/bad.yaml").write_text(yaml.safe_dump(cfg))
    result = snakemake(work, "-n", "--configfile", "config/bad.yaml")
    out = result.stdout + result.stderr
    assert result.returncode != 0
    line = "config error at 'methods.rmvem.params.eps': eps must be a number > 0, got 0"
    assert [text for text in out.splitlines() if "config error" in text] == [line]
    assert len(out.splitlines()) < 8, out
    after = sorted(p.relative_to(work) for p in work.rglob("*") if p.name != "bad.yaml")
    assert after == before


def _tables(folder):
    import pandas as pd

    return {p.name: pd.read_csv(p, index_col=0) for p in sorted(folder.glob("*.csv"))}


def test_published_records_rebuild_the_same_tables(smoke_run, tmp_path):
    """`dmlbench report --records` rebuilds the report from the published records alone
    (read as they are, no MLflow store): every table equal to the workflow's (numbers to 1e-9
    relative)."""
    import numpy as np
    import pandas as pd

    from dmlbench import publish

    work, _ = smoke_run
    manifest = yaml.safe_load((work / "reports/smoke/records/manifest.json").read_text())
    assert len(manifest["records"]) == 12 and all(
        (work / "reports/smoke/records" / f).exists() for f in manifest["files"])
    assert all(f.endswith(".json.gz") for f in manifest["records"])
    rebuilt = publish.rebuild(work / "reports/smoke/records", tmp_path / "rebuilt")
    # both pages print the manifest's sha256; neither names a store's path (cells link to
    # record files, so the store is not named at all)
    sha = hashlib.sha256((work / "reports/smoke/records/manifest.json").read_bytes()).hexdigest()
    for page in (work / "reports/smoke/index.html", rebuilt):
        html = page.read_text()
        assert f"records manifest sha256 <code>{sha}</code>" in html
        assert "sqlite:/" not in html and str(work) not in html
    ours, theirs = _tables(work / "reports/smoke/tables"), _tables(rebuilt.parent / "tables")
    assert ours.keys() == theirs.keys()
    for name, table in ours.items():
        other = theirs[name]
        numeric = table.select_dtypes("number").columns
        pd.testing.assert_frame_equal(table.drop(columns=numeric), other.drop(columns=numeric))
        assert np.allclose(table[numeric], other[numeric], rtol=1e-9, equal_nan=True), name


def test_a_changed_published_record_is_refused(smoke_run, tmp_path):
    import shutil

    from dmlbench import publish

    work, _ = smoke_run
    copy = tmp_path / "smoke"
    shutil.copytree(work / "reports/smoke", copy)
    from dmlbench.files import read_json, write_json_gz

    record = next((copy / "records/runs").rglob("part0.json.gz"))
    document = read_json(record)
    document["records"][0]["metrics"]["accuracy_k1"] += 0.125
    write_json_gz(record, document)
    with pytest.raises(ValueError, match="does not match"):
        publish.rebuild(copy / "records", tmp_path / "rebuilt")


def test_a_committed_report_is_rebuilt_from_its_records(tmp_path):
    """The published Shigeto 2017 report, rebuilt from its committed records alone: the same
    tables (numbers to 1e-9 relative: the aggregation may sum in another order elsewhere)."""
    import numpy as np
    import pandas as pd

    from dmlbench import publish

    published = REPO / "reports" / "shigeto-2017"
    rebuilt = publish.rebuild(published / "records", tmp_path / "shigeto-2017")
    ours, theirs = _tables(published / "tables"), _tables(rebuilt.parent / "tables")
    assert ours.keys() == theirs.keys() and len(ours) > 10
    for name, table in ours.items():
        other = theirs[name]
        numeric = table.select_dtypes("number").columns
        text = [c for c in table.columns if c not in numeric]
        pd.testing.assert_frame_equal(table[text], other[text], obj=name)
        assert np.allclose(table[numeric], other[numeric], rtol=1e-9, equal_nan=True), name


def test_a_fresh_clone_with_a_committed_report_still_runs_the_benchmark(tmp_path):
    """A fresh clone holds the published report of the benchmark (reports/<benchmark>/, committed)
    but no results: `snakemake` must run the jobs, not say 'Nothing to be done' because the
    report it would write is already there (what `make run` did in a clean clone)."""
    work = copy_project(tmp_path)
    published = work / "reports" / "smoke"
    (published / "records").mkdir(parents=True)
    (published / "index.html").write_text("<html>published</html>")
    (published / "records" / "manifest.json").write_text("{}")
    result = snakemake(work, "-n", "--configfile", "config/smoke.yaml")
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout + result.stderr
    assert "Nothing to be done" not in out
    assert "run_euclidean" in out and "track" in out


@pytest.mark.slow
def test_a_batch_larger_than_one_command_line_argument_runs(tmp_path):
    """A step's batch of job specs goes to `dmlbench run --batch -` on standard input: 300 jobs
    in one step (`job_group`) make a JSON list of about 200 KiB, beyond the kernel's 128 KiB
    limit on one argument, which as an argument ended the step with "Argument list too long"
    (the default config's `fast` step, 144 tuned jobs, did)."""
    work = copy_project(tmp_path)
    labels = [f"euclidean_{i}" for i in range(300)]
    cfg = {"benchmark": "big", "seed": 0, "k": [1], "hubness_k": 5,
           "protocol": {"kind": "holdout", "repeats": 1, "train_fraction": 0.7},
           "preprocess": ["zscore"], "datasets": {"iris": None},
           "methods": {label: {"method": "euclidean", "job_group": "all"} for label in labels}}
    (work / "config/big.yaml").write_text(yaml.safe_dump(cfg))
    targets = [f"results/big/runs/iris/{label}/part0.json" for label in labels]
    result = snakemake(work, *targets, "--cores", "1", "--configfile", "config/big.yaml")
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    batch_log = (work / "logs/big/run/all.log").read_text()
    assert "Argument list too long" not in result.stderr + batch_log
    assert all((work / target).is_file() for target in targets)

"""The report read straight from record files (`report.runs.RecordRuns`) against the report read
from an MLflow store the same records were ingested into (`report.runs.MlflowRuns`): the same
runs, curves, arrays and tables."""

import copy
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dmlbench import config, data, publish, records, report
from dmlbench import vocabulary as voc
from dmlbench.records import tracking
from dmlbench.report import runs
from dmlbench.run import job, plan, protocols

CFG = {
    "benchmark": "records-test",
    "seed": 0,
    "k": [1, 3],
    "hubness_k": 3,
    "protocol": {"kind": "holdout", "repeats": 2, "train_fraction": 0.7},
    "preprocess": ["zscore"],
    "datasets": {"iris": None},
    "methods": {
        "euclidean": None,
        # a hubness reduction: its label and parameters are a tag and a param
        "euclidean+ls": {"method": "euclidean",
                         "hubness_reduction": {"kind": "local_scaling", "k": 5}},
        "i_mfa": {"params": {"k_h": 3, "k_m": 3}, "dimension_sweep": True},  # sweep curves
        "nca": {"params": {"n_components": 2, "max_iter": 5}},  # d = 2: arrays beside it
    },
}

#: a study's runs (another kind than parent/split), with a number that is not finite
TRACKED = [tracking.TrackedRun(kind=voc.RunKind.MVCE_VALIDATION, benchmark="records-test",
                               identity={"dataset": "iris", "m": m}, name=f"iris m={m}",
                               result={"m": float(m), "d": 4.0, "r": 4.0, "n_problems": 3.0,
                                       "reference_failures": 0.0, "check_passed": 1.0,
                                       "newton_gap_max": 1e-9 * m, "newton_speed_ratio": 30.0 * m,
                                       "newton_rel_logdet_diff_max": 1e-12 * m,
                                       "cvxpy_gap_max": float("nan")},
                               params={"eps": 1e-6}, tags={voc.Tag.DATASET: "iris"})
           for m in (5, 6)]

#: columns that name a run in its store, not what it holds
STORE_COLUMNS = ["run_id", "experiment_id", "artifact_uri", "start_time"]


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """The records of CFG's jobs on iris, published as a report folder would hold them
    (reports/records-test/records, with its config and manifest)."""
    tmp = tmp_path_factory.mktemp("records")
    cfg = copy.deepcopy(CFG)
    cfg["data"] = {"cache": str(tmp / "cache")}
    cfg = plan.check(cfg)
    ds = data.ensure("iris", cfg["data"]["cache"])
    protocol = config.dataset_protocol(cfg, "iris")
    protocols.save_splits(plan.split_path(cfg, "iris"),
                          protocols.make_splits(ds.y, protocol, 0), protocol, 0, ds.meta["sha256"])
    results = tmp / "results" / "records-test"
    paths = []
    for j in plan.jobs(cfg):
        spec = plan.job_spec(cfg, j.dataset, j.method, j.splits)
        path = results / "runs" / j.dataset / j.method / "part0.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        records.write(path, job.run(spec, progress=False, record_path=path))
        paths.append(path)
    out = tmp / "reports" / "records-test"
    manifest = publish.publish(paths, [], cfg, out, results)
    return manifest.parent


@pytest.fixture
def both(published, mlflow_uri):
    """(RecordRuns, MlflowRuns) of the same published records and study runs."""
    record_paths, _, cfg = publish.verified_files(published)
    from_records = runs.RecordRuns(record_paths, TRACKED, cfg)
    summary = tracking.ingest(record_paths, config=cfg, tracked=TRACKED)
    return from_records, runs.MlflowRuns(summary["experiment"]), summary


def _comparable(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame without the store's own columns, its columns by name, its rows in the order
    of their values."""
    shown = frame.drop(columns=[c for c in STORE_COLUMNS if c in frame])
    shown = shown[sorted(shown.columns)]
    order = shown.astype(str).apply(tuple, axis=1).sort_values().index
    return shown.loc[order].reset_index(drop=True)


def test_records_give_the_runs_an_mlflow_store_of_them_gives(both):
    from_records, from_store, summary = both
    keys = list(summary["parents"])
    mine, theirs = from_records.load(), from_store.load(keys)
    for ours, stored in zip(mine, theirs):
        assert len(ours) == len(stored) > 0
        pd.testing.assert_frame_equal(_comparable(ours), _comparable(stored), check_exact=True)
    # rows in MLflow's order too (newest first): a section taking the first of several rows
    # (e.g. the label of a registered method) takes the same one
    assert list(mine[0]["parent_key"]) == list(theirs[0]["parent_key"])
    assert [(r.parent_key, r.n_test, r.accuracy_k1) for r in mine[1].itertuples()] == \
        [(r.parent_key, r.n_test, r.accuracy_k1) for r in theirs[1].itertuples()]
    parents, splits = mine
    assert {voc.mean(voc.accuracy(1)), "fit.n_iter"} <= set(splits) | set(parents)
    assert parents["hubness_reduction"].notna().sum() == 1
    # every metric history of every run, as MLflow returns it
    names = {f"curve.{name}" for r in from_records._records.values() for name in r["curves"]}
    names |= {"fit.bound", "fit.rank_path", "curve.sweep_accuracy_k1"}
    id_of = {row.parent_key: row.run_id for row in theirs[0].itertuples()}
    id_of.update({key: run_id for entry in summary["parents"].values()
                  for key, run_id in entry["children"].items()})
    for name in sorted(names):
        ours = from_records.curves(list(id_of), name)
        stored = from_store.curves(list(id_of.values()), name)
        assert {id_of[k]: v for k, v in ours.items()} == stored, name
    assert from_records.load_config() == from_store.load_config(summary["config_run_id"])


def test_records_give_the_arrays_and_study_runs_of_the_store(both):
    from_records, from_store, summary = both
    _, splits = from_store.load(list(summary["parents"]))
    _, record_splits = from_records.load()
    kept = 0
    for row in record_splits.itertuples():
        ours = from_records.split_arrays(row.run_id)
        child = next(entry["children"][row.run_id] for entry in summary["parents"].values()
                     if row.run_id in entry["children"])
        stored = from_store.split_arrays(child)
        assert (ours is None) == (stored is None)
        if ours is not None:
            kept += 1
            assert ours.keys() == stored.keys()
            for name in ours:
                np.testing.assert_array_equal(ours[name], stored[name])
    assert kept == 2  # nca's two splits
    kind = voc.RunKind.MVCE_VALIDATION
    pd.testing.assert_frame_equal(_comparable(from_records.load_kind(kind)),
                                  _comparable(from_store.load_kind(kind)), check_exact=True)
    assert from_records.load_kind("no_such_kind").empty


def test_the_report_from_records_has_the_tables_of_the_report_from_mlflow(both, tmp_path):
    from_records, from_store, summary = both
    report.build(from_records, tmp_path / "records", workers=1)
    report.build(from_store, tmp_path / "mlflow", parent_keys=list(summary["parents"]),
                 config_run_id=summary["config_run_id"], workers=1)
    ours = sorted(p.name for p in (tmp_path / "records" / "tables").glob("*.csv"))
    theirs = sorted(p.name for p in (tmp_path / "mlflow" / "tables").glob("*.csv"))
    assert ours == theirs and len(ours) > 10
    assert "mvce_check.csv" in ours
    for name in ours:
        assert (tmp_path / "records/tables" / name).read_bytes() == \
            (tmp_path / "mlflow/tables" / name).read_bytes(), name


def test_a_rebuilt_page_names_the_mlflow_experiment_only_with_the_track_summary(published,
                                                                                tmp_path):
    page = publish.rebuild(published, tmp_path / "alone", workers=1).read_text()
    assert "Runs in MLflow" not in page
    summary = {"experiment": "records-test", "experiment_id": "7"}
    page = publish.rebuild(published, tmp_path / "tracked", workers=1,
                           tracked_summary=summary).read_text()
    assert "Runs in MLflow" in page and "#/experiments/7/runs" in page


def test_a_report_built_under_reports_leaves_the_published_scoreboard_alone(published, tmp_path):
    """A run writes under results/ and its own report folder only: building a report into
    reports/<name> leaves reports/index.html (the published scoreboard) and scoreboard.csv as
    they were; `dmlbench scoreboard` writes them, listing the report."""
    from dmlbench import cli

    reports = tmp_path / "reports"
    shutil.copytree(published.parent, reports / "records-test")
    scoreboard = reports / "index.html"
    scoreboard.write_text("the published scoreboard")
    publish.rebuild(reports / "records-test" / "records", reports / "records-test", workers=1)
    assert (reports / "records-test" / "index.html").exists()
    assert scoreboard.read_text() == "the published scoreboard"
    assert not (reports / "scoreboard.csv").exists()
    assert cli.main(["scoreboard", str(reports)]) == 0
    assert "records-test/index.html" in scoreboard.read_text()


def test_cells_link_to_a_readable_page_of_their_records(published, tmp_path):
    """A published report's (data set, method) cells link to the part of its data set's page
    under record-views/ (plain HTML, readable offline), which shows each split's test accuracy
    at every k as the record file holds it and links the record file itself."""
    import re

    page = publish.rebuild(published, tmp_path / "out", workers=1).read_text()
    record_paths, _, _ = publish.verified_files(published)
    view = (tmp_path / "out" / "record-views" / "iris.html").read_text()
    for path in record_paths:
        split_records = records.read(path)
        key = split_records[0]["parent_key"]
        assert f"record-views/iris.html#{key}" in page
        part = view.split(f'<h2 id="{key}">', 1)[1].split("<h2 ", 1)[0]
        target = re.search(r'Record files: <a href="([^"]+)"', part).group(1)
        assert (tmp_path / "out" / "record-views" / target).resolve() == path.resolve()
        for record in split_records:
            row = part.split(f"<tr><th>{record['split']['index']}</th>", 1)[1].split("</tr>")[0]
            for k in record["k"]:
                assert f"<td>{100 * record['metrics'][voc.accuracy(k)]:.2f}</td>" in row


def test_a_partly_published_run_says_so_and_names_what_is_missing(published, tmp_path):
    """A records folder holding some of its config's jobs (a run in pieces, still going): the
    page says at its top that it is partial and names the missing (data set, method) pairs; the
    complete folder's page does not."""
    from dmlbench import cli

    record_paths, _, cfg = publish.verified_files(published)
    left_out = sorted(record_paths)[-1]
    method = Path(left_out).parent.name
    partial = publish.publish([p for p in record_paths if p != left_out], [], cfg,
                              tmp_path / "partial", published)
    assert cli.main(["report", "--records", str(partial.parent), "--out",
                     str(tmp_path / "partial"), "--workers", "1"]) == 0
    page = (tmp_path / "partial" / "index.html").read_text()
    assert "<b>Partial run:</b> 1 of the" in page and f"iris / {method}" in page
    assert cli.main(["report", "--records", str(published), "--out",
                     str(tmp_path / "whole"), "--workers", "1"]) == 0
    assert "Partial run" not in (tmp_path / "whole" / "index.html").read_text()


def test_a_partial_run_names_its_data_sets_not_yet_run_once():
    """A data set with no record at all is named once, not with each of its methods; the other
    missing pairs stay listed one by one."""
    from dmlbench.report import _missing_data_sets

    missing = ["wine / lmnn", "wine / itml", "iris / lmnn", "digits / lmnn"]
    assert _missing_data_sets(missing, {"iris", "digits"}) == (
        ["wine"], ["iris / lmnn", "digits / lmnn"])
    assert _missing_data_sets([], {"iris"}) == ([], [])

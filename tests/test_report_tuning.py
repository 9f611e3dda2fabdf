"""The report's equal-tuning section (`report.sections.tuning`): the tuned-against-defaults
table and the sensitivity points against a hand computation on a tiny fake record set, and the
section read alike from record files and from an MLflow store they were ingested into."""

import copy
import re

import numpy as np
import pandas as pd
import pytest

from dmlbench import config, data, records, report
from dmlbench.records import tracking
from dmlbench.report import runs
from dmlbench.report.sections import tuning as section
from dmlbench.run import job, plan, protocols


def entry(default, chosen, scores=None, candidates=None, space=None, grid_size=2):
    """A split's `tuning` entry with what the section reads."""
    return {"grid_size": grid_size, "default_test_accuracy": default,
            "chosen": {k: {} for k in chosen}, "inner_scores": scores,
            "candidates": candidates or [], "space": space or {}}


def fake():
    """Two methods on two data sets, two splits each, k = 1 and 3; euclidean has nothing to
    tune; m's default could not be fitted on one split of b."""
    rows = [("a", "m", "0", 0.80, 0.90), ("a", "m", "1", 0.70, 0.70),
            ("b", "m", "0", 0.60, 0.50), ("b", "m", "1", 0.50, 0.40),
            ("a", "p", "0", 0.90, 0.90), ("a", "p", "1", 0.80, 0.80),
            ("b", "p", "0", 0.40, 0.60), ("b", "p", "1", 0.40, 0.30),
            ("a", "euclidean", "0", 0.5, 0.5)]
    splits = pd.DataFrame([{"run_id": f"{d}/{m}/{s}", "dataset": d, "method": m, "split": s,
                            "accuracy_k1": acc1, "accuracy_k3": acc3}
                           for d, m, s, acc1, acc3 in rows])
    entries = {
        "a/m/0": entry({"1": 0.70, "3": 0.90}, ["1", "3"]),
        "a/m/1": entry({"1": 0.70, "3": 0.80}, ["1", "3"]),
        "b/m/0": entry({"1": 0.50, "3": 0.50}, ["1", "3"]),
        "b/m/1": entry(None, ["1", "3"]),
        "a/p/0": entry({"1": 0.90, "3": 0.90}, ["1", "3"]),
        "a/p/1": entry({"1": 0.80, "3": 0.80}, ["1", "3"]),
        "b/p/0": entry({"1": 0.50, "3": 0.60}, ["1", "3"]),
        "b/p/1": entry({"1": 0.30, "3": 0.30}, ["1", "3"]),
        "a/euclidean/0": entry({"1": 0.5, "3": 0.5}, ["1", "3"], grid_size=1),
    }
    return splits, entries


def test_tuned_against_defaults_equals_a_hand_computation():
    splits, entries = fake()
    frame = section.tuned_and_default(splits, entries, [1, 3])
    assert "euclidean" not in set(frame["method"])  # a space of one point: nothing tuned
    k1 = section.against_defaults(frame, 1)
    # m at k = 1: pairs (a0 .80/.70, a1 .70/.70, b0 .60/.50); b1 has no default
    assert k1.at["m", "tuned (%)"] == pytest.approx(100 * (0.8 + 0.7 + 0.6) / 3)
    assert k1.at["m", "default (%)"] == pytest.approx(100 * (0.7 + 0.7 + 0.5) / 3)
    assert k1.at["m", "tuned - default (points)"] == pytest.approx(100 * 0.2 / 3)
    assert k1.loc["m", ["data sets helped", "hurt", "equal", "data sets", "splits"]].tolist() \
        == [2, 0, 0, 2, 3]  # a: mean gain +.05; b: +.10
    # p at k = 1: a equal (0, 0); b: (-.10 + .10) / 2 = 0 -> equal
    assert k1.at["p", "tuned (%)"] == pytest.approx(100 * 2.5 / 4)
    assert k1.at["p", "default (%)"] == pytest.approx(100 * 2.5 / 4)
    assert k1.loc["p", ["data sets helped", "hurt", "equal"]].tolist() == [0, 0, 2]
    assert list(k1.index) == ["m", "p"]  # the largest gain first
    k3 = section.against_defaults(frame, 3)
    # m at k = 3: a: (0 - .10) / 2 -> hurt; b: +0 (b1 without default) -> equal
    assert k3.at["m", "tuned - default (points)"] == pytest.approx(
        100 * ((0.9 + 0.7 + 0.5) - (0.9 + 0.8 + 0.5)) / 3)
    assert k3.loc["m", ["data sets helped", "hurt", "equal"]].tolist() == [0, 1, 1]
    # p at k = 3: a equal; b: (0 + 0) -> equal
    assert k3.loc["p", ["data sets helped", "hurt", "equal", "splits"]].tolist() == [0, 0, 2, 4]


def test_sensitivity_points_are_each_candidates_score_less_the_best():
    splits = pd.DataFrame([{"run_id": "r", "dataset": "a", "method": "m", "split": "0"}])
    space = {"q": [1, 2, 3], "w": [True, False]}
    candidates = [{"q": 1, "w": True}, {"q": 3, "w": True}, {"q": 2, "w": False}]
    entries = {"r": entry({"1": 0.5}, ["1"], {"1": [0.5, 0.75, None]}, candidates, space)}
    points = section.sensitivity(splits, entries)
    assert len(points) == 4  # 2 candidates scored x 2 parameters; the failed one left out
    got = sorted(zip(points["parameter"], points["value"], points["position"],
                     points["score"], points["relative"]))
    assert got == [("q", "1", 0, 0.5, -25.0), ("q", "3", 2, 0.75, 0.0),
                   ("w", "True", 0, 0.5, -25.0), ("w", "True", 0, 0.75, 0.0)]
    assert section._ticks(points) == [("q", "1"), ("q", "3"), ("w", "True")]


CFG = {"benchmark": "tuning-report-test", "seed": 0, "k": [1, 3], "hubness_k": 3,
       "protocol": {"kind": "holdout", "repeats": 2, "train_fraction": 0.7},
       "preprocess": ["zscore"], "datasets": {"iris": None, "wine": None},
       "tuning": {"folds": 2, "budget": 3},
       "methods": {"euclidean": None,
                   "pca": {"search_space": {"n_components": [1, 2, 3]}},
                   "lda": None}}


@pytest.fixture(scope="module")
def tuned_records(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tuned")
    cfg = copy.deepcopy(CFG)
    cfg["data"] = {"cache": str(tmp / "cache")}
    cfg = plan.check(cfg)
    paths = []
    for name in ("iris", "wine"):
        ds = data.ensure(name, cfg["data"]["cache"])
        protocol = config.dataset_protocol(cfg, name)
        protocols.save_splits(plan.split_path(cfg, name), protocols.make_splits(ds.y, protocol, 0),
                              protocol, 0, ds.meta["sha256"])
    for j in plan.jobs(cfg):
        path = tmp / "runs" / j.dataset / j.method / "part0.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        records.write(path, job.run(plan.job_spec(cfg, j.dataset, j.method, j.splits),
                                    progress=False, record_path=path))
        paths.append(path)
    return paths, cfg


def test_records_and_mlflow_give_the_same_tuning_section(tuned_records, mlflow_uri, tmp_path):
    paths, cfg = tuned_records
    from_records = runs.RecordRuns(paths, (), cfg)
    tracking.ingest(paths, config=cfg)
    from_mlflow = runs.MlflowRuns(cfg["benchmark"])
    tables = {}
    for name, source in (("records", from_records), ("mlflow", from_mlflow)):
        _, splits = source.load()
        entries = source.split_tuning(splits["run_id"])
        assert len(entries) == len(splits) == 12  # 2 sets x 3 methods x 2 splits
        by_key = {splits.set_index("run_id").loc[r, "parent_key"] + splits.set_index(
            "run_id").loc[r, "split"]: e for r, e in entries.items()}
        frame = section.tuned_and_default(splits, entries, [1, 3])
        tables[name] = (by_key, section.against_defaults(frame, 1),
                        section.sensitivity(splits, entries))
    page = report.build(from_records, tmp_path / "page", workers=1).read_text()
    assert "Tuned against defaults, 1-NN" in page and "tuning_sensitivity.png" in page
    assert (tmp_path / "page" / "tables" / "tuned_against_defaults_k3.csv").exists()
    assert tables["records"][0] == tables["mlflow"][0]
    pd.testing.assert_frame_equal(tables["records"][1], tables["mlflow"][1])
    assert sorted(tables["records"][1].index) == ["lda", "pca"]  # euclidean: nothing to tune
    records_points = tables["records"][2].sort_values(list(tables["records"][2].columns))
    mlflow_points = tables["mlflow"][2].sort_values(list(tables["mlflow"][2].columns))
    pd.testing.assert_frame_equal(records_points.reset_index(drop=True),
                                  mlflow_points.reset_index(drop=True))


def test_an_untuned_report_has_no_tuning_section():
    splits, _ = fake()

    class Untuned:
        def split_tuning(self, run_ids):
            return {}

    ctx = report.base.Context(pd.DataFrame(), splits, None, 3, [1, 3], runs=Untuned())
    assert section.section(ctx) is None


@pytest.fixture(scope="module")
def tuned_page(tuned_records, tmp_path_factory):
    """The report of `tuned_records` (2 data sets, 3 methods), built from the records."""
    paths, cfg = tuned_records
    out = tmp_path_factory.mktemp("page")
    return report.build(runs.RecordRuns(paths, (), cfg), out, workers=1).read_text()


def test_every_test_over_two_data_sets_is_shown_with_a_warning(tuned_page):
    """A report over 2 data sets: a warning under the summary and under each test over data
    sets (Friedman / Nemenyi with the leaderboard and the statistics, the Bayesian signed-rank
    and hierarchical tests, per k); the rope written one way; the hierarchical test cited
    once, to Corani et al. 2017."""
    warnings = re.findall(r"<p class='warning'>Only 2 data sets: ([^<]*?) over fewer than 10 "
                          r"data sets|<p class=\"warning\">Only 2 data sets: ([^<]*?) over "
                          r"fewer than 10 data sets", tuned_page)
    tests = [a or b for a, b in warnings]
    assert any(t.startswith("every test over data sets on this page") for t in tests)
    for name in ("the Friedman test, the Nemenyi critical difference",
                 "the Friedman, Nemenyi and Wilcoxon tests",
                 "the Bayesian signed-rank test", "the hierarchical test"):
        assert sum(t.startswith(name) for t in tests) >= 1, (name, tests)
    assert sum(t.startswith("the Friedman, Nemenyi and Wilcoxon tests") for t in tests) == 2
    assert "rope ±1 accuracy point" in tuned_page
    # a rope as a fraction ("±0.01") or in bare "points"; "±0.5 accuracy points" is the notation
    assert not re.search(r"±0\.0\d|±\d+(\.\d+)? points", tuned_page)
    assert tuned_page.count("Machine Learning 106") == 1 and "JMLR 18(77)" not in tuned_page


def test_at_a_glance_counts_fit_tuning_and_evaluation_cpu_time(tuned_records, mlflow_uri,
                                                               tuned_page):
    """The summary's compute figure is the CPU time of fit, tuning and evaluation summed over
    the splits: by hand from the records, every timing `*_cpu_s`, the tuning's `cpu_s` and the
    default setting's fit where it was fitted apart; the same read from MLflow."""
    from dmlbench.report import tables

    paths, cfg = tuned_records
    timings = tuning = 0.0
    for path in paths:
        for record in records.read(path):
            timings += sum(v for n, v in record["timings"].items() if n.endswith("_cpu_s"))
            tuning += record["tuning"]["cpu_s"] + (record["tuning"]["default_fit_cpu_s"]
                                                   if record["tuning"]["default_refit"] else 0.0)
    assert tuning > 0
    tracking.ingest(paths, config=cfg)
    for source in (runs.RecordRuns(paths, (), cfg), runs.MlflowRuns(cfg["benchmark"])):
        _, splits = source.load()
        assert tables.cpu_seconds(splits) == pytest.approx(timings + tuning, rel=1e-9)
    shown = re.search(r"([\d.]+) (s|min|h) of CPU time \(fit, tuning and evaluation, summed "
                      r"over the splits", tuned_page)
    number, unit = shown.group(1), {"s": 1, "min": 60, "h": 3600}[shown.group(2)]
    decimals = len(number.split(".")[1]) if "." in number else 0
    assert abs(float(number) * unit - (timings + tuning)) <= unit * 10.0 ** -decimals / 2 + 1e-9

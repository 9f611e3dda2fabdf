"""Learning curves (a protocol's `train_sizes`): nested stratified subsamples of each training
part with the same test part (`run.protocols.subsample`), a job, split file and parent run per
size (`run.plan`), records that carry n_train and the size, the report's section with its tests
per size (against scipy's Wilcoxon and statsmodels' Holm), and the workflow end to end."""

import copy
import json

import numpy as np
import pytest
import yaml
from conftest import copy_project, snakemake
from scipy import stats
from statsmodels.stats.multitest import multipletests

from dmlbench import cli, config, data, records, report
from dmlbench.config import ConfigError
from dmlbench.records import tracking
from dmlbench.report import runs as report_runs
from dmlbench.report.sections import learning_curves
from dmlbench.run import job, plan, protocols

PROTOCOLS = [{"kind": "holdout", "repeats": 3, "train_fraction": 0.7},
             {"kind": "kfold", "folds": 4, "repeats": 1}]


def unbalanced(n=1200, seed=1):
    return np.random.default_rng(seed).choice(5, size=n, p=[0.5, 0.25, 0.15, 0.08, 0.02])


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_subsamples_are_nested_stratified_and_keep_the_test_part(protocol):
    y = unbalanced()
    sizes = [10, 25, 60, 150, 400]
    for split in protocols.make_splits(y, protocol, seed=3):
        classes, counts = np.unique(y[split.train], return_counts=True)
        previous = None
        for size in sizes:
            sub = protocols.subsample(split, y, size, seed=3)
            assert sub.index == split.index and len(sub.train) == size
            np.testing.assert_array_equal(sub.test, split.test)
            assert np.all(np.diff(sub.train) > 0) and np.isin(sub.train, split.train).all()
            if previous is not None:  # nested: the smaller one inside the larger
                assert np.isin(previous, sub.train).all()
            previous = sub.train
            got = np.array([np.sum(y[sub.train] == c) for c in classes])
            assert np.all(got >= np.minimum(2, counts))  # the floor of 2 per class
            expected = size * counts / counts.sum()  # proportional allocation, by hand
            free = expected >= 3  # classes the floor does not hold up
            if size >= 60:
                assert np.all(np.abs(got - expected)[free] < 2), (size, got, expected)


def test_a_subsample_depends_on_the_seed_and_the_split_not_on_the_other_sizes():
    y = unbalanced()
    [split] = protocols.make_splits(y, {"kind": "holdout", "repeats": 1}, seed=0)
    alone = protocols.subsample(split, y, 100, seed=5)
    np.testing.assert_array_equal(alone.train, protocols.subsample(split, y, 100, seed=5).train)
    assert not np.array_equal(alone.train, protocols.subsample(split, y, 100, seed=6).train)
    other = protocols.Split(7, split.train, split.test)
    assert not np.array_equal(alone.train, protocols.subsample(other, y, 100, seed=5).train)


def test_impossible_sizes_are_named():
    y = np.repeat([0, 1, 2], 10)
    [split] = protocols.make_splits(y, {"kind": "holdout", "repeats": 1}, seed=0)
    for size in (5, len(split.train)):
        with pytest.raises(ValueError, match=f"data set 'toy', split 0: .*got train_sizes "
                                             f"entry {size}"):
            protocols.subsample(split, y, size, 0, "toy")


CFG = {
    "benchmark": "curve-test",
    "k": [1, 3],
    "hubness_k": 3,
    "protocol": {"kind": "holdout", "repeats": 2, "train_fraction": 0.7,
                 "train_sizes": [20, 40, 500, "full"]},
    "preprocess": ["zscore"],
    "datasets": {"iris": None, "wine": None, "balance-scale": None},
    "methods": {"euclidean": None, "lda": None, "rca": None},
}


def test_the_plan_has_a_job_split_file_and_identity_per_size():
    cfg = plan.check(copy.deepcopy(CFG))
    assert plan.curve_sizes(cfg, "iris") == [20, 40]  # 500 >= its 105 training points
    assert plan.curve_sizes(cfg, "balance-scale") == [20, 40]  # 500 >= 438
    jobs = plan.jobs(cfg)
    assert len(jobs) == 3 * 3 * 3
    assert len({plan.record_path(cfg, j) for j in jobs}) == len(jobs)
    specs = [plan.job_spec(cfg, j.dataset, j.method, j.splits, j.train_size) for j in jobs]
    assert len({s["parent_key"] for s in specs}) == len(jobs)
    assert len({records.job_key(s["parent_key"], 0) for s in specs}) == len(jobs)
    iris = plan.split_files(cfg, "iris")
    assert sorted(entry["train_size"] or 0 for entry in iris.values()) == [0, 20, 40]
    assert all(entry["protocol"] == {"kind": "holdout", "repeats": 2, "train_fraction": 0.7}
               for entry in iris.values())
    # the full size keeps the keys, split files and record paths of the config without a curve
    plain = copy.deepcopy(CFG)
    del plain["protocol"]["train_sizes"]
    plain = plan.check(plain)
    full = [s for j, s in zip(jobs, specs) if j.train_size is None]
    assert [s["parent_key"] for s in full] == [
        plan.job_spec(plain, j.dataset, j.method, j.splits)["parent_key"]
        for j in plan.jobs(plain)]
    assert {s["split_file"] for s in full} == {plan.split_path(plain, d) for d in CFG["datasets"]}
    assert plan.training_shape(cfg, "wine").n_train == 20
    assert "smallest size of train_sizes" in plan.training_shape(cfg, "wine").where


@pytest.mark.parametrize("protocol, key, message", [
    ({"kind": "loo", "train_sizes": [20]}, "datasets.iris.protocol.train_sizes",
     "leave-one-out"),
    ({"kind": "holdout", "train_sizes": [5, "full"]}, "datasets.iris.protocol.train_sizes",
     "5 points cannot hold 2 of each of the 3 classes"),
])
def test_the_config_check_refuses_curves_it_cannot_make(protocol, key, message):
    cfg = copy.deepcopy(CFG)
    cfg["datasets"] = {"iris": {"protocol": protocol}}
    with pytest.raises(ConfigError, match=message) as err:
        plan.check(cfg)
    assert err.value.key == key


@pytest.fixture(scope="module")
def curve_records(tmp_path_factory):
    """The jobs of `CFG` run through `dmlbench prepare` and `job.run`: {job: (spec, record
    file)}."""
    tmp = tmp_path_factory.mktemp("curves")
    cfg = copy.deepcopy(CFG)
    cfg["data"] = {"cache": str(tmp / "cache")}
    cfg = plan.check(cfg)
    for name in cfg["datasets"]:
        files = plan.split_files(cfg, name)
        assert cli.main(["prepare", name, "--cache", cfg["data"]["cache"],
                         "--splits", json.dumps(files)]) == 0
    out = {}
    for j in plan.jobs(cfg):
        spec = plan.job_spec(cfg, j.dataset, j.method, j.splits, j.train_size)
        path = tmp / plan.record_path(cfg, j)
        path.parent.mkdir(parents=True, exist_ok=True)
        records.write(path, job.run(spec, progress=False))
        out[j] = (spec, path)
    return cfg, out


def test_records_carry_n_train_the_size_and_the_full_test_part(curve_records):
    cfg, done = curve_records
    full = {(j.dataset, j.method): records.read(path) for j, (_, path) in done.items()
            if j.train_size is None}
    for j, (spec, path) in done.items():
        assert job.is_current(spec, path)
        found = records.read(path)
        if j.train_size is None:
            assert all("train_size" not in r["split"] for r in found)
            continue
        for record, whole in zip(found, full[(j.dataset, j.method)]):
            assert record["split"]["n_train"] == record["split"]["train_size"] == j.train_size
            assert record["split"]["n_test"] == whole["split"]["n_test"]
            assert record["split"]["protocol"] == whole["split"]["protocol"]
            assert tracking.split_content(record).params["train_size"] == str(j.train_size)
        sub, _ = protocols.load_split(spec["split_file"], 0)
        base, _ = protocols.load_split(full[(j.dataset, j.method)][0]["split"]["file"], 0)
        np.testing.assert_array_equal(sub.test, base.test)
        assert np.isin(sub.train, base.train).all()
    # a split file of another size is not current for the job
    j, (spec, path) = next((j, v) for j, v in done.items() if j.train_size == 20)
    other = dict(spec, split_file=spec["split_file"].replace("train20", "train40"))
    assert job.why_not_current(other, path) == "split file not of this protocol"


def test_the_report_section_tests_each_size_against_independent_references(curve_records,
                                                                          tmp_path):
    cfg, done = curve_records
    source = report_runs.RecordRuns([path for _, path in done.values()], config=cfg)
    (parents, splits), (curve, curve_splits) = report_runs.by_train_size(*source.load())
    assert len(parents) == 3 * 3 and parents["train_size"].isna().all()
    assert sorted(curve["train_size"].unique()) == [20, 40] and len(curve) == 3 * 3 * 2
    index = report.build(source, tmp_path / "report", workers=1)
    assert "Learning curves" in index.read_text()
    assert (tmp_path / "report/figures/learning_curves_k1.png").exists()
    assert (tmp_path / "report/figures/learning_curves_difference_k1.png").exists()
    import pandas as pd

    tests = pd.read_csv(tmp_path / "report/tables/learning_curves_tests_k1.csv")
    accuracy = pd.concat([curve, parents.assign(train_size="full")])
    assert list(tests["size"].astype(str)) == ["20", "20", "40", "40", "full", "full"]
    for size, rows in tests.groupby(tests["size"].astype(str)):
        part = accuracy[accuracy["train_size"].astype(str).str.removesuffix(".0") == size]
        table = part.pivot(index="dataset", columns="method", values="accuracy_k1_mean")
        p = []
        for _, row in rows.iterrows():
            d = (table[row["method"]] - table["euclidean"]).to_numpy()
            assert row["data sets"] == 3
            assert row["mean difference (points)"] == pytest.approx(100 * d.mean())
            p.append(1.0 if np.all(d == 0) else stats.wilcoxon(d, zero_method="zsplit").pvalue)
            assert row["Wilcoxon p"] == pytest.approx(p[-1])
        np.testing.assert_allclose(rows["p (Holm)"], multipletests(p, method="holm")[1])
        assert rows["Friedman p"].nunique() == 1
        assert rows["Friedman p"].iloc[0] == pytest.approx(stats.friedmanchisquare(
            *[table[m].to_numpy() for m in ("euclidean", "lda", "rca")]).pvalue)
    # the other sections see the full training parts only: one row per data set
    accuracy_table = pd.read_csv(tmp_path / "report/tables/accuracy_k1.csv")
    assert len(accuracy_table) == 3


def test_no_curve_no_section(tmp_path):
    import pandas as pd

    from dmlbench.report.base import Context

    ctx = Context(pd.DataFrame({"dataset": ["a"], "method": ["euclidean"]}), pd.DataFrame(),
                  tmp_path, 3, [1])
    assert learning_curves.section(ctx) is None


@pytest.mark.workflow
@pytest.mark.slow
def test_a_workflow_with_two_sizes_end_to_end(tmp_path):
    """snakemake on a tiny config with two sizes: a record file per size, the report's section
    and tests per size, and a second run with nothing to do. Two data sets and two methods: the
    fewest the section's tests take."""
    import os

    work = copy_project(tmp_path)
    cfg = {**copy.deepcopy(CFG), "benchmark": "curve-wf", "datasets": {"iris": None, "wine": None},
           "methods": {"euclidean": None, "rca": None}}
    cfg["protocol"]["train_sizes"] = [20, 40, "full"]
    (work / "config/curve.yaml").write_text(yaml.safe_dump(cfg))
    env = {**os.environ, "MLFLOW_TRACKING_URI": f"sqlite:///{work / 'mlruns.db'}"}
    result = snakemake(work, "--cores", "2", "--configfile", "config/curve.yaml", env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    runs = work / "results/curve-wf/runs"
    for dataset in cfg["datasets"]:
        for method in cfg["methods"]:
            for size in ("", "train20/", "train40/"):
                found = records.read(runs / dataset / method / f"{size}part0.json")
                assert {r["split"]["n_train"] for r in found} <= (
                    {int(size[5:-1])} if size else {105, 125})
    html = (work / "reports/curve-wf/index.html").read_text()
    assert "Learning curves" in html
    tests = (work / "reports/curve-wf/tables/learning_curves_tests_k1.csv").read_text()
    assert ",20,rca," in tests and ",40,rca," in tests and ",full,rca," in tests
    again = snakemake(work, "-n", "--configfile", "config/curve.yaml", env=env)
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr
    loaded = config.load(work / "config/curve.yaml")
    assert config.train_sizes(loaded, "iris") == [20, 40]
    assert data.load("iris", work / "resources").meta["n"] == 150

"""A job fails, naming the method, data set, split, cause and remedy, where its numbers would not
mean anything; it never writes such numbers as a record."""

import copy
import json
import os
from pathlib import Path

import numpy as np
import pytest

from dmlbench import config, data
from dmlbench.data.embedded import RawData
from dmlbench.methods import REGISTRY, make
from dmlbench.methods.base import LinearMetric
from dmlbench.run import job, plan, protocols


def wide(n=50, d=200, seed=0):
    """More features than points (the `gauss-d200-n50` case): every scatter matrix is singular."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    return rng.normal(size=(n, d)) + 3.0 * y[:, None] * (np.arange(d) == 0), y


def singleton(seed=0):
    """Four features and a class with one point, the only point where feature 3 is not 0 (the
    ecoli case: within the chunklets of two or more points feature 3 never varies)."""
    rng = np.random.default_rng(seed)
    y = np.array([0] * 30 + [1] * 29 + [2])
    X = rng.normal(size=(60, 4)) + y[:, None]
    X[:, 3] = np.where(y == 2, 1.0, 0.0)
    return X, y


@pytest.mark.parametrize("case, message", [
    (wide, r"rank 48 of 49: 50 training points in 2 classes"),
    (singleton, r"feature\(s\) \[3\] are constant within every class"),
])
def test_rca_with_a_singular_within_class_covariance_names_the_remedy(case, message):
    """metric-learn returns NaN here (or huge numbers, depending on the rounding of its
    eigenvalues); the wrapper checks the rank itself."""
    X, y = case()
    with pytest.raises(ValueError, match=f"rca: the within-class scatter is singular.*{message}"
                                         ".*drop_classes_below"):
        make("rca").fit(X, y)


def test_rca_leaves_out_directions_the_data_do_not_vary_in():
    """Two features that are a linear combination of the others up to the data's decimal
    rounding (as in segment): metric-learn whitens their round-off; here they are left out, so
    the metric equals RCA on the independent features."""
    X, y = singleton()
    X, y = X[:59, :3], y[:59]
    wider = np.column_stack([X, np.round(X[:, 0] + X[:, 1], 8), np.round(X[:, 2] - X[:, 0], 8)])
    L = make("rca").fit(wider, y).components_
    ref = make("rca").fit(X, y).components_
    assert L.shape == (3, 5)
    D = np.linalg.norm((wider[:, None] - wider[None]) @ L.T, axis=2)
    R = np.linalg.norm((X[:, None] - X[None]) @ ref.T, axis=2)
    np.testing.assert_allclose(D, R, rtol=1e-6, atol=1e-6 * R.max())


class NaNMetric(LinearMetric):
    """A global metric whose learning ended in NaN (what metric-learn's RCA returns on a
    singular covariance), to check the rule for every method: such a fit never gets measured."""

    registry_name = "nan_metric"

    def _learn_components(self, X, y):
        L = np.eye(X.shape[1])
        L[0, 0] = np.nan
        return L


def test_a_non_finite_metric_is_refused_by_the_method_and_by_the_search():
    X, y = singleton()
    est = NaNMetric().fit(X, y)
    with pytest.raises(ValueError, match="nan_metric: the fitted components_ contains NaN.*PCA "
                                         "step.*drop_classes_below"):
        est.check_finite()
    with pytest.raises(ValueError, match="k-NN search: .* NaN.*drop_classes_below"):
        est.kneighbors(X[:3], 3)
    with pytest.raises(ValueError, match="k-NN search: .* NaN"):
        est.train_kneighbors(3)


def test_finite_fits_pass_the_check():
    X, y = singleton()
    for name in ("euclidean", "lmnn", "move_labeled", "rca"):
        params = {"max_iter": 5, "min_iter": 1} if name == "lmnn" else {}
        make(name, params).fit(X[:59], y[:59]).check_finite()


def run_toy_job(tmp_path, monkeypatch, raw, method, **dataset_options):
    n, d = raw.X.shape
    spec = data.DatasetSpec("toy-job", "generator", n, d, np.unique(raw.y).size, lambda: raw,
                            keep_constant_features=True)
    monkeypatch.setitem(data.REGISTRY, "toy-job", spec)
    cfg = plan.check({"benchmark": "t", "data": {"cache": str(tmp_path)},
                        "protocol": {"kind": "holdout", "repeats": 2, "train_fraction": 0.7},
                        "datasets": {"toy-job": dataset_options or None},
                        "methods": {method: None}})
    ds = data.ensure("toy-job", tmp_path)
    protocol = config.dataset_protocol(cfg, "toy-job")
    splits = protocols.make_splits(ds.y, protocol, 0)
    protocols.save_splits(plan.split_path(cfg, "toy-job"), splits, protocol, 0,
                          ds.meta["sha256"])
    return job.run(plan.job_spec(cfg, "toy-job", method, [0, 1]), progress=False)


@pytest.mark.parametrize("method, cause", [
    ("nan_metric", "nan_metric: the fitted components_ contains NaN"),
    ("rca", "rca: the within-class scatter is singular"),
])
def test_a_job_with_a_non_finite_metric_fails_naming_method_data_set_and_split(
        tmp_path, monkeypatch, method, cause):
    monkeypatch.setitem(REGISTRY, "nan_metric", NaNMetric)
    X, y = wide(n=50, d=200)
    with pytest.raises(ValueError, match=f"method '{method}' on data set 'toy-job', split 0: "
                                         f"{cause}.*drop_classes_below"):
        run_toy_job(tmp_path, monkeypatch, RawData(X, y.astype(str)), method)


def run_loo_job(tmp_path, monkeypatch, X, y, method_entry, hubness_k=3, protocol=None,
                splits=None):
    spec = data.DatasetSpec("toy-loo", "generator", len(y), X.shape[1], 2,
                            lambda: RawData(X, y.astype(str)), keep_constant_features=True)
    monkeypatch.setitem(data.REGISTRY, "toy-loo", spec)
    cfg = plan.check({"benchmark": "t", "data": {"cache": str(tmp_path)}, "k": [1, 3],
                        "hubness_k": hubness_k, "protocol": protocol or {"kind": "loo"},
                        "datasets": {"toy-loo": None}, "methods": {"m": method_entry}})
    ds = data.ensure("toy-loo", tmp_path)
    protocol = config.dataset_protocol(cfg, "toy-loo")
    protocols.save_splits(plan.split_path(cfg, "toy-loo"), protocols.make_splits(ds.y, protocol, 0),
                          protocol, 0, ds.meta["sha256"])
    splits = list(range(protocols.n_splits(protocol, len(y)))) if splits is None else splits
    return job.run(plan.job_spec(cfg, "toy-loo", "m", splits), progress=False)


def test_leave_one_out_hubness_is_measured_on_the_pooled_lists(tmp_path, monkeypatch):
    from scipy.stats import skew
    from sklearn.neighbors import NearestNeighbors

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 30)), np.arange(40) % 2
    records = run_loo_job(tmp_path, monkeypatch, X, y, {"method": "euclidean"})
    ind = NearestNeighbors(n_neighbors=3).fit(X).kneighbors()[1]  # each point against the others
    nk = np.bincount(ind.ravel(), minlength=40)
    for record in records:
        metrics = record["metrics"]
        assert metrics["pooled_skewness_n3"] == pytest.approx(skew(nk), abs=1e-12)
        assert metrics["pooled_antihub_share_n3"] == pytest.approx(np.mean(nk == 0))
        assert metrics["pooled_max_n3"] == nk.max()
    # the pooled leave-one-out accuracy is the mean over the one-point splits
    votes = (y[ind].sum(axis=1) >= 2).astype(int)
    assert np.mean([r["metrics"]["accuracy_k3"] for r in records]) == pytest.approx(np.mean(votes == y))


def test_a_reduced_method_runs_as_its_own_entry_and_pools_its_reduced_lists(tmp_path, monkeypatch):
    """Empiric mutual proximity under leave-one-out: the test point i against the others, counting
    the points j other than i and y, is the formula on the whole set with i excluded."""
    from scipy.spatial.distance import cdist
    from scipy.stats import skew
    from test_hubness_reduction import reference, reference_lists

    from dmlbench import records as rec

    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 20)) * rng.uniform(0.5, 2.0, size=(30, 1))
    y = np.arange(30) % 2
    out = run_loo_job(tmp_path, monkeypatch, X, y,
                      {"method": "euclidean", "hubness_reduction": {"kind": "mutual_proximity"}})
    D = cdist(X, X)
    lists = reference_lists(reference("mutual_proximity", D, D, own=np.arange(30)), D, 3)[1]
    nk = np.bincount(lists.ravel(), minlength=30)
    assert out[0]["metrics"]["pooled_skewness_n3"] == pytest.approx(skew(nk), abs=1e-12)
    method = out[0]["method"]
    assert method["hubness_reduction"]["label"] == "MP empiric"
    assert method["hubness_reduction"]["kind"] == "mutual_proximity"
    assert out[0]["fit_info"]["reduction_exact"] == 1
    rec.validate({"schema_version": 1, "records": out})


def test_k_fold_hubness_is_pooled_over_the_folds_and_a_partial_job_pools_nothing(
        tmp_path, monkeypatch):
    from scipy.stats import skew
    from sklearn.neighbors import NearestNeighbors

    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(40, 30)), np.arange(40) % 2
    protocol = {"kind": "kfold", "folds": 4}
    records = run_loo_job(tmp_path, monkeypatch, X, y, {"method": "euclidean"}, protocol=protocol)
    splits = protocols.make_splits(y, protocol, 0)
    lists = np.empty((40, 3), dtype=int)
    for split in splits:  # each sample's 3 nearest in the training part of its fold
        found = NearestNeighbors(n_neighbors=3).fit(X[split.train]).kneighbors(X[split.test])[1]
        lists[split.test] = split.train[found]
    nk = np.bincount(lists.ravel(), minlength=40)
    for record in records:
        assert record["metrics"]["pooled_skewness_n3"] == pytest.approx(skew(nk), abs=1e-12)
    partial = run_loo_job(tmp_path / "p", monkeypatch, X, y, {"method": "euclidean"},
                          protocol=protocol, splits=[0, 1])
    assert not any(name.startswith("pooled_") for r in partial for name in r["metrics"])


# ---- batches: several jobs in one process, each with its own record file

BATCH_CFG = {"benchmark": "batch-test", "k": [1], "hubness_k": 3,
             "protocol": {"kind": "holdout", "repeats": 2},
             "datasets": {"iris": None, "wine": None},
             "methods": {"euclidean": None, "nca": {"params": {"n_components": 2, "max_iter": 5}},
                         "itml": {"splits_per_job": 1, "params": {"max_iter": 3}}}}


def test_a_batch_is_one_methods_part_on_its_data_sets():
    cfg = plan.check(copy.deepcopy(BATCH_CFG))
    found = {b.name: [(j.dataset, j.splits) for j in b.jobs] for b in plan.batches(cfg)}
    assert found == {"euclidean": [("iris", (0, 1)), ("wine", (0, 1))],
                     "nca": [("iris", (0, 1)), ("wine", (0, 1))],
                     "itml": [("iris", (0,)), ("wine", (0,))],
                     "itml_part1": [("iris", (1,)), ("wine", (1,))]}
    assert {j for b in plan.batches(cfg) for j in b.jobs} == set(plan.jobs(cfg))
    assert sum(len(b.jobs) for b in plan.batches(cfg)) == len(plan.jobs(cfg))
    one = copy.deepcopy(BATCH_CFG)
    one["datasets_per_job"] = 1
    one["methods"]["nca"]["datasets_per_job"] = 2
    names = [b.name for b in plan.batches(plan.check(one))]
    assert names == ["euclidean_iris", "euclidean_wine", "nca", "itml_iris", "itml_wine",
                     "itml_part1_iris", "itml_part1_wine"]


def _grouped(**changes):
    cfg = copy.deepcopy(BATCH_CFG)
    cfg["methods"]["euclidean"] = {"job_group": "fast"}
    cfg["methods"]["nca"]["job_group"] = "fast"
    cfg.update(changes)
    return plan.check(cfg)


def test_methods_of_a_job_group_share_one_batch_per_part():
    found = {b.name: [(j.dataset, j.method, j.splits) for j in b.jobs]
             for b in plan.batches(_grouped())}
    assert found == {"fast": [("iris", "euclidean", (0, 1)), ("iris", "nca", (0, 1)),
                              ("wine", "euclidean", (0, 1)), ("wine", "nca", (0, 1))],
                     "itml": [("iris", "itml", (0,)), ("wine", "itml", (0,))],
                     "itml_part1": [("iris", "itml", (1,)), ("wine", "itml", (1,))]}
    cfg = copy.deepcopy(BATCH_CFG)
    for method in cfg["methods"]:
        cfg["methods"][method] = {**(cfg["methods"][method] or {}), "job_group": "all3"}
    found = {b.name: [(j.dataset, j.method) for j in b.jobs]
             for b in plan.batches(plan.check(cfg))}
    assert found == {"all3": [("iris", "euclidean"), ("iris", "nca"), ("iris", "itml"),
                              ("wine", "euclidean"), ("wine", "nca"), ("wine", "itml")],
                     "all3_part1": [("iris", "itml"), ("wine", "itml")]}
    names = [b.name for b in plan.batches(_grouped(datasets_per_job=1))]
    assert names == ["fast_iris", "fast_wine", "itml_iris", "itml_wine", "itml_part1_iris",
                     "itml_part1_wine"]
    off = _grouped(job_groups=False)  # e.g. on a cluster: every method on its own
    assert [b.name for b in plan.batches(off)] == ["euclidean", "nca", "itml", "itml_part1"]
    for cfg in (_grouped(), _grouped(datasets_per_job=1), off):
        grouped = [j for b in plan.batches(cfg) for j in b.jobs]
        assert len(grouped) == len(plan.jobs(cfg)) and set(grouped) == set(plan.jobs(cfg))


@pytest.mark.parametrize("change, key, message", [
    ({"nca": {"job_group": "itml"}}, "methods.nca.job_group",
     "'itml' is the label of a method of this config"),
    ({"nca": {"datasets_per_job": 1}}, "methods.nca.datasets_per_job",
     "the methods of job_group 'fast' share their processes, so they need the same "
     "datasets_per_job (euclidean: all, nca: 1)"),
])
def test_check_refuses_a_job_group_that_cannot_work(change, key, message):
    cfg = copy.deepcopy(BATCH_CFG)
    cfg["methods"]["euclidean"] = {"job_group": "fast"}
    cfg["methods"]["nca"]["job_group"] = "fast"
    for method, entry in change.items():
        cfg["methods"][method].update(entry)
    with pytest.raises(config.ConfigError) as err:
        plan.check(cfg)
    assert err.value.key == key and message in str(err.value)


@pytest.mark.parametrize("entry, value", [("job_group", "2fast"), ("job_group", "fast-ones"),
                                           ("job_group", 3), ("job_groups", "no")])
def test_check_config_names_a_bad_job_group_value(tmp_path, capsys, entry, value):
    from dmlbench import cli

    cfg = copy.deepcopy(BATCH_CFG)
    if entry == "job_group":
        cfg["methods"]["euclidean"] = {"job_group": value}
    else:
        cfg[entry] = value
    path = tmp_path / "bad.yaml"
    path.write_text(json.dumps(cfg))
    assert cli.main(["check-config", str(path)]) == 2
    key = "methods.euclidean.job_group" if entry == "job_group" else "job_groups"
    assert f"'{key}'" in capsys.readouterr().err


def test_the_default_config_runs_its_fast_methods_in_one_process():
    """config/config.yaml: the twelve fast methods share one process (job_group fast); the five
    slow ones have one each, which `--cores 2` runs side by side."""
    cfg = plan.check(config.load(Path(__file__).parents[1] / "config/config.yaml"))
    found = {b.name: sorted({j.method for j in b.jobs}) for b in plan.batches(cfg)}
    slow = ["lmnn", "itml", "mmc", "dml_eig", "boostmdm_g"]
    assert sorted(found) == sorted(["fast", *slow])
    assert all(found[name] == [name] for name in slow)
    assert len(found["fast"]) == 12
    assert [step.rule for step in plan.prepare_steps(cfg)] == ["prepare_local"]


def test_batch_resources_take_the_most_memory_and_the_sum_of_the_time_limits():
    cfg = copy.deepcopy(BATCH_CFG)
    cfg["methods"]["euclidean"] = {"mem_mb": 3000, "runtime": 7, "threads": 2}
    cfg = plan.check(cfg)
    [batch] = [b for b in plan.batches(cfg) if b.name == "euclidean"]
    assert plan.batch_resources(cfg, batch) == {"threads": 2, "mem_mb": 3000, "runtime": 14}


def _batch(tmp_path, cfg=None, method="nca") -> list[dict]:
    """The batch of `method` under BATCH_CFG (cache and splits in tmp_path), as `dmlbench run
    --batch` takes it."""
    cfg = copy.deepcopy(cfg or BATCH_CFG)
    cfg["data"] = {"cache": str(tmp_path / "cache")}
    cfg = plan.check(cfg)
    for label in cfg["datasets"]:
        ds = data.ensure(label, tmp_path / "cache")
        path = Path(plan.split_path(cfg, label))
        if not path.exists():
            protocol = config.dataset_protocol(cfg, label)
            protocols.save_splits(path, protocols.make_splits(ds.y, protocol, 0), protocol, 0,
                                  ds.meta["sha256"])
    [batch] = [b for b in plan.batches(cfg) if b.name == method]
    return [{"job": plan.job_spec(cfg, j.dataset, j.method, j.splits),
             "out": str(tmp_path / "runs" / j.dataset / "part0.json")} for j in batch.jobs]


def _cut_short(entry):
    path = Path(entry["out"])
    path.write_text(path.read_text()[:500])


def _changed_arrays(entry):
    [arrays] = Path(entry["out"]).parent.glob("part0.arrays/split0.npz")
    arrays.write_bytes(arrays.read_bytes() + b"\0")


@pytest.mark.parametrize("change", [_cut_short, _changed_arrays])
def test_a_batch_keeps_current_record_files_and_recomputes_the_others(tmp_path, change):
    batch = _batch(tmp_path)
    assert job.run_batch(batch, progress=False) == batch
    before = {e["out"]: Path(e["out"]).read_bytes() for e in batch}
    assert job.run_batch(batch, progress=False) == []  # all current: nothing computed again
    assert {e["out"]: Path(e["out"]).read_bytes() for e in batch} == before
    change(batch[0])
    assert job.run_batch(batch, progress=False) == batch[:1]
    assert Path(batch[1]["out"]).read_bytes() == before[batch[1]["out"]]
    for entry in batch:
        assert job.is_current(entry["job"], entry["out"])


def test_a_record_file_of_other_settings_or_splits_is_not_current(tmp_path):
    batch = _batch(tmp_path)
    job.run_batch(batch, progress=False)
    changed = copy.deepcopy(BATCH_CFG)
    changed["methods"]["nca"]["params"]["max_iter"] = 6
    other = _batch(tmp_path, changed)
    assert [e["out"] for e in other] == [e["out"] for e in batch]
    assert not any(job.is_current(e["job"], e["out"]) for e in other)
    fewer = {**batch[0]["job"], "splits": [0]}
    assert not job.is_current(fewer, batch[0]["out"])
    assert not job.is_current(batch[0]["job"], tmp_path / "missing.json")
    # computed on other data: the data set's sha256 in the records differs from the cache's
    meta = Path(tmp_path / "cache/datasets/iris.json")
    text = meta.read_text()
    sha = json.loads(text)["sha256"]
    meta.write_text(text.replace(sha, "0" * len(sha)))
    os.utime(meta, (0, 0))  # older than the record file: only the checksum tells
    assert not job.is_current(batch[0]["job"], batch[0]["out"])


def test_a_record_file_stays_current_when_the_data_set_and_split_files_are_touched(tmp_path):
    """A prepare step touches all its outputs whenever it runs (Snakemake touches a step's
    outputs), e.g. `prepare_local` when the config adds a data set, or another config's that
    only adds a split file: the data set counts by its sha256, the split file by what it was
    made from (protocol, seed, data set), not their times."""
    batch = _batch(tmp_path)
    job.run_batch(batch, progress=False)
    later = Path(batch[0]["out"]).stat().st_mtime + 60
    for path in [*(tmp_path / "cache/datasets").iterdir(), batch[0]["job"]["split_file"]]:
        os.utime(path, (later, later))
    assert all(job.is_current(e["job"], e["out"]) for e in batch)
    spec = batch[0]["job"]
    ds = data.load("iris", tmp_path / "cache")
    protocols.save_splits(spec["split_file"], protocols.make_splits(ds.y, spec["protocol"], 0),
                          spec["protocol"], 0, ds.meta["sha256"])  # made again: the same
    assert job.is_current(spec, batch[0]["out"])
    protocols.save_splits(spec["split_file"], protocols.make_splits(ds.y, spec["protocol"], 1),
                          spec["protocol"], 1, ds.meta["sha256"])  # another seed's splits
    assert not job.is_current(spec, batch[0]["out"])
    assert job.is_current(batch[1]["job"], batch[1]["out"])  # wine's split file is its own
    Path(spec["split_file"]).write_bytes(b"not a split file")
    assert not job.is_current(spec, batch[0]["out"])


def test_a_failing_job_does_not_lose_the_records_of_the_others(tmp_path, monkeypatch):
    """The jobs after a failing one still run; Snakemake removes the record files of a failed
    step, so the next run takes back the copies kept aside and computes only the failed job."""
    batch = _batch(tmp_path)
    real_run = job.run

    def failing_on_iris(spec, **kwargs):
        if spec["dataset"]["label"] == "iris":
            raise np.linalg.LinAlgError("Singular matrix")
        return real_run(spec, **kwargs)

    monkeypatch.setattr(job, "run", failing_on_iris)
    with pytest.raises(job.BatchError, match=r"1 of 2 jobs failed: iris / nca \(LinAlgError: "
                                             r"Singular matrix\); the other 1 record files"):
        job.run_batch(batch, progress=False)
    iris, wine = batch
    assert not Path(iris["out"]).exists() and job.is_current(wine["job"], wine["out"])
    kept = job.kept_path(wine["out"])
    assert kept.read_bytes() == Path(wine["out"]).read_bytes()
    Path(wine["out"]).unlink()  # what Snakemake does with the outputs of a failed step
    monkeypatch.setattr(job, "run", real_run)
    assert job.run_batch(batch, progress=False) == [iris]  # wine's record taken back
    assert not kept.exists() and all(job.is_current(e["job"], e["out"]) for e in batch)


def test_a_crash_of_the_process_does_not_lose_the_finished_records(tmp_path, monkeypatch):
    """Each record file is copied aside as soon as it is written, not when the batch ends: a
    process that dies (here: interrupted) on the second job leaves the first one's copy, which
    the next run takes back after Snakemake removed the step's outputs; a batch that ends well
    leaves no copies."""
    batch = _batch(tmp_path)
    real_run = job.run

    def interrupted_on_wine(spec, **kwargs):
        if spec["dataset"]["label"] == "wine":
            raise KeyboardInterrupt
        return real_run(spec, **kwargs)

    monkeypatch.setattr(job, "run", interrupted_on_wine)
    with pytest.raises(KeyboardInterrupt):
        job.run_batch(batch, progress=False)
    iris, wine = batch
    assert job.kept_path(iris["out"]).read_bytes() == Path(iris["out"]).read_bytes()
    Path(iris["out"]).unlink()
    monkeypatch.setattr(job, "run", real_run)
    assert job.run_batch(batch, progress=False) == [wine]
    assert job.is_current(iris["job"], iris["out"]) and not list(tmp_path.rglob("*.kept"))


def test_stale_records_names_record_files_of_other_settings_only(tmp_path, monkeypatch):
    """What the track step refuses: a record file of its job's previous settings (what
    Snakemake puts back when the step rewriting it fails). An unreadable one is left to the
    reader (which sets it aside as unreadable); a path of no job is not checked."""
    monkeypatch.chdir(tmp_path)
    _batch(tmp_path)  # the cached data sets and split files
    settings = {**copy.deepcopy(BATCH_CFG), "data": {"cache": str(tmp_path / "cache")}}
    cfg = plan.check(copy.deepcopy(settings))
    batch = [{"job": plan.job_spec(cfg, j.dataset, j.method, j.splits),
              "out": plan.record_path(cfg, j)} for j in plan.jobs(cfg) if j.method == "nca"]
    job.run_batch(batch, progress=False)
    paths = [e["out"] for e in batch]
    assert job.stale_records(cfg, [*paths, "elsewhere.json"]) == []
    settings["methods"]["nca"]["params"]["max_iter"] = 6
    changed = plan.check(settings)
    assert job.stale_records(changed, paths) == [(Path(p), "other settings") for p in paths]
    _cut_short(batch[0])
    assert job.stale_records(changed, paths) == [(Path(paths[1]), "other settings")]
    assert job.why_not_current(batch[0]["job"], paths[0]) == "unreadable"


def test_a_kept_copy_that_is_not_current_is_computed_again(tmp_path):
    batch = _batch(tmp_path)
    kept = job.kept_path(batch[0]["out"])
    kept.parent.mkdir(parents=True)
    kept.write_text("{}")
    assert job.run_batch(batch, progress=False) == batch
    assert not kept.exists()


def test_run_takes_either_a_job_or_a_batch(capsys):
    from dmlbench import cli

    assert cli.main(["run"]) == 2
    assert "give either --job SPEC with --out FILE, or --batch JSON" in capsys.readouterr().err
    assert cli.main(["run", "--job", "{}"]) == 2
    assert "--job needs --out FILE" in capsys.readouterr().err


def test_a_json_option_that_is_not_json_is_named_in_one_line(capsys, monkeypatch):
    """`--batch -` reads standard input: text that is not JSON there (or in `--batch`, `--job`)
    is one error line naming the option and what the parser found, not a bare decoder error."""
    import io

    from dmlbench import cli

    monkeypatch.setattr("sys.stdin", io.StringIO("results/x/part0.json\n"))
    assert cli.main(["run", "--batch", "-"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dmlbench run: error: --batch (-: read from standard input) is not "
                          "JSON (Expecting value at line 1, column 1): 'results/x/part0.json")
    assert err.count("\n") == 1
    assert cli.main(["run", "--batch", "[{"]) == 2
    assert "--batch is not JSON" in capsys.readouterr().err
    assert cli.main(["run", "--job", "{'a': 1}", "--out", "x.json"]) == 2
    assert "--job is not JSON (Expecting property name enclosed in double quotes" in \
        capsys.readouterr().err

"""Leave-one-out in one pass (`dmlbench.run.loo`) against its definition, the per-split path:
the same records apart from timings, on small data full of ties (integer coordinates, duplicate
points), for the Euclidean metric, a fixed linear metric and every hubness reducer, exact and
with candidates; and the jobs it must leave to the per-split path."""

import numpy as np
import pytest

from dmlbench import config, data, records
from dmlbench.data.embedded import RawData
from dmlbench.methods import REGISTRY
from dmlbench.methods.base import LinearMetric, check_query
from dmlbench.run import job, loo, plan, protocols


class FixedScales(LinearMetric):
    """A fixed linear metric (not learned): feature r scaled by r + 1, an elementwise product,
    so a point's vector is computed from the point alone."""

    registry_name = "fixed_scales"
    learns_from_training = False
    min_classes = 1

    def _learn_components(self, X, y):
        return np.diag(np.arange(1.0, X.shape[1] + 1))

    def transform(self, X):
        X = check_query(X, self.n_features_in_)
        return X * np.arange(1.0, X.shape[1] + 1)


def tied(n=36, d=5, seed=0, levels=3):
    """Integer coordinates in 0 .. levels-1 (many equal distances) with duplicate points."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, d)).astype(float)
    X[[5, 9, 17]] = X[2]
    X[30] = X[11]
    return X, (np.arange(n) % 3 == 0).astype(int)


def run(tmp_path, monkeypatch, X, y, method_entry, one_pass=True, splits=None, **top):
    """Records of a leave-one-out job on (X, y), through the one pass or split by split."""
    name = "toy-loo-pass"
    monkeypatch.setitem(data.REGISTRY, name, data.DatasetSpec(
        name, "generator", len(y), X.shape[1], np.unique(y).size,
        lambda: RawData(X, y.astype(str)), keep_constant_features=True))
    monkeypatch.setitem(REGISTRY, "fixed_scales", FixedScales)
    dataset_entry = top.pop("dataset", None)
    cfg = plan.check({"benchmark": "t", "data": {"cache": str(tmp_path)}, "k": [1, 3],
                      "hubness_k": 3, "protocol": {"kind": "loo"},
                      "datasets": {name: dataset_entry}, "methods": {"m": method_entry}, **top})
    ds = data.ensure(name, tmp_path)
    protocol = config.dataset_protocol(cfg, name)
    protocols.save_splits(plan.split_path(cfg, name), protocols.make_splits(ds.y, protocol, 0),
                          protocol, 0, ds.meta["sha256"])
    n_splits = plan.n_splits(cfg, name)
    spec = plan.job_spec(cfg, name, "m", list(range(n_splits)) if splits is None else splits)
    if not one_pass:
        monkeypatch.setattr(loo, "prepare", lambda *args, **kw: None)
    out = job.run(spec, progress=False)
    monkeypatch.undo()
    return out


def stable(record):
    return {key: value for key, value in record.items() if key not in records.VOLATILE}


def assert_same_records(one, per_split):
    assert len(one) == len(per_split)
    assert all("one_pass_wall_s" in r["timings"] for r in one)  # the shortcut ran
    assert not any("one_pass_wall_s" in r["timings"] for r in per_split)
    for a, b in zip(one, per_split):
        assert stable(a) == stable(b)
        assert records.content_hash(a) == records.content_hash(b)
    records.validate({"schema_version": 1, "records": one})


REDUCTIONS = [
    {"kind": "mutual_proximity", "variant": "empiric"},
    {"kind": "mutual_proximity", "variant": "gaussian"},
    {"kind": "local_scaling", "k": 4},
    {"kind": "nicdm", "k": 4},
    {"kind": "dissim_local", "k": 4},
]
IDS = ["mp-empiric", "mp-gaussian", "ls", "nicdm", "dissim"]


@pytest.mark.parametrize("method", ["euclidean", "fixed_scales"])
@pytest.mark.parametrize("preprocess", [[], ["normalize"]])
def test_one_pass_gives_the_per_split_records(tmp_path, monkeypatch, method, preprocess):
    X, y = tied()
    entry = {"method": method}
    top = {"dataset": {"preprocess": preprocess}, "k_selection": "loo", "train_hubness": True}
    one = run(tmp_path, monkeypatch, X, y, entry, **dict(top))
    per_split = run(tmp_path, monkeypatch, X, y, entry, one_pass=False, **dict(top))
    assert_same_records(one, per_split)
    assert "pooled_skewness_n3" in one[0]["metrics"]


@pytest.mark.parametrize("method", ["euclidean", "fixed_scales"])
@pytest.mark.parametrize("reduction", REDUCTIONS, ids=IDS)
def test_one_pass_gives_the_per_split_records_of_every_reducer(tmp_path, monkeypatch, method,
                                                                reduction):
    X, y = tied()
    entry = {"method": method, "hubness_reduction": reduction}
    top = {"train_hubness": True, "k_selection": "loo"}
    one = run(tmp_path, monkeypatch, X, y, entry, **top)
    per_split = run(tmp_path, monkeypatch, X, y, entry, one_pass=False, **top)
    assert_same_records(one, per_split)
    assert one[0]["fit_info"]["reduction_exact"] == 1


@pytest.mark.parametrize("reduction", REDUCTIONS, ids=IDS)
def test_one_pass_gives_the_per_split_records_with_candidates(tmp_path, monkeypatch, reduction):
    """Candidate mode: each point keeps its 6 nearest (empiric mutual proximity cuts pairs)."""
    X, y = tied(n=40, d=4, seed=3)
    entry = {"method": "euclidean",
             "hubness_reduction": {**reduction, "exact_max": 0, "candidates": 6}}
    one = run(tmp_path, monkeypatch, X, y, entry, train_hubness=True)
    per_split = run(tmp_path, monkeypatch, X, y, entry, one_pass=False, train_hubness=True)
    assert_same_records(one, per_split)
    assert one[0]["fit_info"]["reduction_candidates"] == 6
    if reduction["variant" if "variant" in reduction else "kind"] == "empiric":
        assert any(r["fit_info"]["reduction_truncated_share"] > 0 for r in one)


def test_one_pass_with_image_steps_and_a_part_of_the_splits(tmp_path, monkeypatch):
    """Per-row image steps before the search; a job running some of the splits (which pools
    no hubness)."""
    rng = np.random.default_rng(4)
    X = rng.integers(0, 4, size=(30, 16)).astype(float)  # 4 x 4 images
    X[[3, 8]] = X[1]
    y = np.arange(30) % 2
    entry = {"method": "euclidean", "hubness_reduction": {"kind": "dissim_local", "k": 3}}
    dataset = {"preprocess": [{"image_crop": 1}, {"gaussian_blur": 0.8}, "normalize"]}
    one = run(tmp_path, monkeypatch, X, y, entry, splits=list(range(4, 15)),
              dataset=dict(dataset))
    per_split = run(tmp_path, monkeypatch, X, y, entry, one_pass=False,
                    splits=list(range(4, 15)), dataset=dict(dataset))
    assert_same_records(one, per_split)
    assert one[0]["split"]["n_train"] == 29 and one[0]["preprocess"]["d_out"] == 4
    assert not any(name.startswith("pooled_") for name in one[0]["metrics"])


def test_each_split_carries_its_share_of_the_pass(tmp_path, monkeypatch):
    X, y = tied()
    one = run(tmp_path, monkeypatch, X, y, {"method": "euclidean"})
    shares = {r["timings"]["one_pass_cpu_s"] for r in one}
    assert len(shares) == 1 and shares.pop() >= 0
    assert all(r["timings"]["peak_rss_mb"] > 0 for r in one)


@pytest.mark.parametrize("change", [
    {"preprocess": ["zscore"]},  # fitted on the training part
    {"preprocess": ["normalize", {"pca": 2}]},
    {"method": "lmnn"},  # learns from the training part
    {"dimension_sweep": True},
    {"hubness_reduction": {"kind": "mutual_proximity", "variant": "gaussian",
                           "distance": "cosine"}},
    {"protocol": {"kind": "kfold", "folds": 5}},
])
def test_the_shortcut_leaves_other_jobs_to_the_per_split_path(change):
    spec = {"protocol": {"kind": "loo"}, "preprocess": ["normalize"], "dimension_sweep": False,
            "hubness_reduction": None}
    method = change.pop("method", "euclidean")
    if "hubness_reduction" in change:
        change["hubness_reduction"] = {"candidates": 100, "exact_max": 2000, **change[
            "hubness_reduction"]}
    assert loo.applies(spec, REGISTRY["euclidean"]())
    assert not loo.applies({**spec, **change}, REGISTRY[method]())


def test_a_split_file_that_is_not_leave_one_out_is_refused(tmp_path):
    class Pass(loo.OnePass):
        def __init__(self):  # only the points of the pass
            self.points, self.split_file = np.arange(6), "splits.npz"

    one_pass = Pass()
    assert one_pass.position(protocols.Split(2, np.array([0, 1, 3, 4, 5]), np.array([2]))) == 2
    with pytest.raises(ValueError, match="split 3 of splits.npz does not hold out one point"):
        one_pass.position(protocols.Split(3, np.array([0, 1, 4, 5]), np.array([2, 3])))
    with pytest.raises(ValueError, match="not a leave-one-out split file"):
        one_pass.position(protocols.Split(3, np.array([0, 1, 3, 5]), np.array([2])))

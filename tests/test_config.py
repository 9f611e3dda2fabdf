"""Config validation: errors name the offending key, before any job runs."""

import copy

import pytest

from dmlbench import config

GOOD = {
    "benchmark": "t",
    "datasets": {"iris": None, "wine": {"preprocess": ["zscore"]}},
    "methods": {"euclidean": None, "lmnn": {"params": {"n_neighbors": 3}}},
}


def check(cfg):
    config.validate_schema(cfg)
    return config.check(cfg)


def test_good_config_gets_defaults_and_jobs():
    cfg = check(copy.deepcopy(GOOD))
    assert cfg["k"] == [1, 3, 5] and cfg["hubness_k"] == 10
    jobs = config.jobs(cfg)
    assert len(jobs) == 4 and all(j.splits == (0, 1, 2, 3) for j in jobs)


@pytest.mark.parametrize("mutate, key, message", [
    (lambda c: c.update(colour="blue"), "<top level>", "'colour' was unexpected"),
    (lambda c: c["datasets"].update(irs=None), "datasets.irs", "unknown data set 'irs'"),
    (lambda c: c["methods"].update(lmmn=None), "methods.lmmn", "unknown method 'lmmn'"),
    (lambda c: c.update(k="three"), "k", "is not of type 'array'"),
    (lambda c: c.update(k=[0]), "k.0", "less than the minimum"),
    (lambda c: c["methods"]["lmnn"]["params"].update(bogus=1), "methods.lmnn.params",
     "no parameter"),
    (lambda c: c["datasets"]["wine"].update(preprocess=["whiten"]), "datasets.wine.preprocess.0",
     "is not valid"),
    (lambda c: c["datasets"]["wine"].update(protocol={"kind": "kfold"}), "datasets.wine.protocol",
     "needs `folds`"),
    (lambda c: c["methods"]["lmnn"].update(datasets=["glass"]), "methods.lmnn.datasets",
     "'glass' is not a data-set label"),
])
def test_errors_name_the_key(mutate, key, message):
    cfg = copy.deepcopy(GOOD)
    mutate(cfg)
    with pytest.raises(config.ConfigError) as err:
        check(cfg)
    assert err.value.key == key
    assert message in str(err.value)


def test_max_repeats_caps_every_protocol():
    cfg = copy.deepcopy(GOOD)
    cfg["datasets"]["wine"]["protocol"] = {"kind": "holdout", "repeats": 40}
    cfg["max_repeats"] = 3
    cfg = check(cfg)
    assert config.dataset_protocol(cfg, "wine")["repeats"] == 3
    assert config.dataset_protocol(cfg, "iris")["repeats"] == 3
    assert {j.splits for j in config.jobs(cfg)} == {(0, 1, 2)}


def test_splits_per_job_batches_splits():
    cfg = copy.deepcopy(GOOD)
    cfg["splits_per_job"] = 3
    cfg["methods"]["lmnn"]["splits_per_job"] = 1
    jobs = config.jobs(check(cfg))
    by_method = {m: [j.splits for j in jobs if j.method == m and j.dataset == "iris"]
                 for m in ("euclidean", "lmnn")}
    assert by_method == {"euclidean": [(0, 1, 2), (3,)], "lmnn": [(0,), (1,), (2,), (3,)]}


def test_parent_key_changes_with_method_params_only_for_that_method():
    a = check(copy.deepcopy(GOOD))
    changed = copy.deepcopy(GOOD)
    changed["methods"]["lmnn"]["params"]["n_neighbors"] = 5
    b = check(changed)
    assert (config.job_spec(a, "iris", "euclidean", [0])["parent_key"]
            == config.job_spec(b, "iris", "euclidean", [0])["parent_key"])
    assert (config.job_spec(a, "iris", "lmnn", [0])["parent_key"]
            != config.job_spec(b, "iris", "lmnn", [0])["parent_key"])


@pytest.mark.parametrize("path", ["config/config.yaml", "config/smoke.yaml",
                                  "config/repro/oneata-2011.yaml"])
def test_shipped_configs_are_valid(path):
    from conftest import REPO

    cfg = config.load(REPO / path)
    assert config.jobs(cfg)

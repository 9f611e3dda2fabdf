"""Config validation: errors name the offending key, before any job runs."""

import copy

import pytest
from conftest import REPO

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


def test_max_splits_runs_the_first_splits_of_a_method_only():
    cfg = copy.deepcopy(GOOD)
    cfg["methods"]["lmnn"]["max_splits"] = 2
    cfg["methods"]["lmnn"]["splits_per_job"] = 1
    jobs = check(cfg)
    by_method = {m: sorted(s for j in config.jobs(jobs) if j.method == m and j.dataset == "iris"
                           for s in j.splits) for m in ("euclidean", "lmnn")}
    assert by_method == {"euclidean": [0, 1, 2, 3], "lmnn": [0, 1]}
    # the same split gives the same record key with or without the cap
    full = check(copy.deepcopy(GOOD))
    assert (config.job_spec(jobs, "iris", "lmnn", [1])["parent_key"]
            == config.job_spec(full, "iris", "lmnn", [1])["parent_key"])


def test_parent_key_changes_with_method_params_only_for_that_method():
    a = check(copy.deepcopy(GOOD))
    changed = copy.deepcopy(GOOD)
    changed["methods"]["lmnn"]["params"]["n_neighbors"] = 5
    b = check(changed)
    assert (config.job_spec(a, "iris", "euclidean", [0])["parent_key"]
            == config.job_spec(b, "iris", "euclidean", [0])["parent_key"])
    assert (config.job_spec(a, "iris", "lmnn", [0])["parent_key"]
            != config.job_spec(b, "iris", "lmnn", [0])["parent_key"])


@pytest.mark.parametrize("path", sorted(str(p.relative_to(REPO))
                                         for p in (REPO / "config").rglob("*.yaml")))
def test_shipped_configs_are_valid(path):
    cfg = config.load(REPO / path)
    assert config.jobs(cfg)


def test_leave_one_out_has_one_split_per_sample_of_the_registry():
    cfg = copy.deepcopy(GOOD)
    cfg["datasets"]["wine"]["protocol"] = {"kind": "loo"}
    cfg["methods"]["euclidean"] = {"splits_per_job": 100}
    jobs = [j for j in config.jobs(check(cfg)) if j.dataset == "wine" and j.method == "euclidean"]
    assert [len(j.splits) for j in jobs] == [100, 78]
    cfg["datasets"]["wine"]["drop_classes_below"] = 5
    with pytest.raises(config.ConfigError, match="cannot be combined"):
        check(cfg)


def test_new_evaluation_options_change_the_parent_key_only_when_set():
    base = check(copy.deepcopy(GOOD))
    key = config.job_spec(base, "iris", "lmnn", [0])["parent_key"]
    explicit = copy.deepcopy(GOOD)
    explicit.update(k_selection="none", train_hubness=True)
    assert config.job_spec(check(explicit), "iris", "lmnn", [0])["parent_key"] == key
    changed = copy.deepcopy(GOOD)
    changed.update(k_selection="loo")
    spec = config.job_spec(check(changed), "iris", "lmnn", [0])
    assert spec["parent_key"] != key and spec["k_selection"] == "loo"


def test_dimension_sweep_is_resolved_per_method_and_keys_only_change_when_set():
    base = check(copy.deepcopy(GOOD))
    cfg = copy.deepcopy(GOOD)
    cfg["dimension_sweep"] = True
    cfg["methods"]["euclidean"] = {"dimension_sweep": False}
    swept = check(cfg)
    assert config.job_spec(swept, "iris", "lmnn", [0])["dimension_sweep"] is True
    off = config.job_spec(swept, "iris", "euclidean", [0])
    assert off["dimension_sweep"] is False
    assert off["parent_key"] == config.job_spec(base, "iris", "euclidean", [0])["parent_key"]
    assert (config.job_spec(swept, "iris", "lmnn", [0])["parent_key"]
            != config.job_spec(base, "iris", "lmnn", [0])["parent_key"])


@pytest.mark.parametrize("method, value, key, message", [
    ("lmnn", {"kind": "mutual_proxmity"}, "methods.lmnn.hubness_reduction.kind", "is not one of"),
    ("lmnn", {"kind": "local_scaling", "variant": "empiric"}, "methods.lmnn.hubness_reduction",
     "has no key(s) ['variant']"),
    ("lmnn", {"kind": "nicdm", "k": 200, "candidates": 50}, "methods.lmnn.hubness_reduction",
     "k = 200 exceeds candidates = 50"),
    ("lmnn", {"kind": "dissim_local", "distance": "cosine"}, "methods.lmnn.hubness_reduction",
     "squared Euclidean"),
    ("rmvem", {"kind": "dissim_local"}, "methods.rmvem.hubness_reduction", "has none"),
    ("rmle", {"kind": "mutual_proximity", "distance": "cosine"}, "methods.rmle.hubness_reduction",
     "has none"),
    ("klhp", {"kind": "mutual_proximity"}, "methods.klhp.hubness_reduction", "a classifier"),
])
def test_a_bad_hubness_reduction_stops_the_config_naming_the_key(method, value, key, message):
    cfg = copy.deepcopy(GOOD)
    cfg["methods"][method] = {"hubness_reduction": value}
    with pytest.raises(config.ConfigError) as err:
        check(cfg)
    assert err.value.key == key and message in str(err.value)


def test_a_bad_hubness_reduction_stops_check_config_before_any_job(tmp_path):
    import subprocess
    import sys

    import yaml

    cfg = copy.deepcopy(GOOD)
    cfg["methods"]["lmnn"]["hubness_reduction"] = {"kind": "local_scaling", "k": 0}
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(cfg))
    run = subprocess.run([sys.executable, "-m", "dmlbench.cli", "check-config", str(path)],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode != 0
    assert "methods.lmnn.hubness_reduction.k" in run.stderr + run.stdout


def test_hubness_reduction_joins_the_identity_only_when_set():
    base = check(copy.deepcopy(GOOD))
    plain = config.job_spec(base, "iris", "lmnn", [0])
    assert plain["hubness_reduction"] is None
    assert "hubness_reduction" not in config.identity(plain)
    unset = copy.deepcopy(GOOD)
    unset["methods"]["lmnn"]["hubness_reduction"] = None
    assert config.job_spec(check(unset), "iris", "lmnn", [0])["parent_key"] == plain["parent_key"]
    keys = []
    for value in ({"kind": "local_scaling"}, {"kind": "local_scaling", "k": 10},
                  {"kind": "local_scaling", "k": 5}):
        cfg = copy.deepcopy(GOOD)
        cfg["methods"]["lmnn"]["hubness_reduction"] = value
        spec = config.job_spec(check(cfg), "iris", "lmnn", [0])
        keys.append(spec["parent_key"])
        assert spec["hubness_reduction"]["candidates"] == 100  # defaults filled in
    assert keys[0] == keys[1] != keys[2] and plain["parent_key"] not in keys

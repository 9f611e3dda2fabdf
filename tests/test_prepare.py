"""The workflow's prepare steps: one per data set (cache name), writing the cached data set and
every split file of the config in one process, the same files `dmlbench dataset` and
`dmlbench split` write."""

import json

import numpy as np

from dmlbench import cli, config, data
from dmlbench.run import plan, protocols


def check(cfg):
    config.validate_schema(cfg)
    return plan.check(cfg)


def test_one_prepare_step_per_cache_name_with_every_split_file_of_its_labels():
    cfg = check({"benchmark": "t", "seed": 3,
                 "datasets": {"iris": None, "iris-5": {"dataset": "iris",
                                                       "protocol": {"kind": "kfold", "folds": 5}},
                              "wine": {"drop_classes_below": 2}},
                 "methods": {"euclidean": None}})
    assert plan.prepare_steps(cfg) == [("prepare_iris", "iris"), ("prepare_wine", "wine")]
    iris = plan.split_files(cfg, "iris")
    assert list(iris) == [plan.split_path(cfg, "iris"), plan.split_path(cfg, "iris-5")]
    assert [entry["protocol"]["kind"] for entry in iris.values()] == ["holdout", "kfold"]
    assert all(entry["seed"] == 3 and entry["drop_classes_below"] == 0
               for entry in iris.values())
    [(path, wine)] = plan.split_files(cfg, "wine").items()
    assert path == plan.split_path(cfg, "wine") and wine["drop_classes_below"] == 2


def test_prepare_writes_what_dataset_and_split_write(tmp_path, capsys):
    protocol = {"kind": "holdout", "repeats": 3, "train_fraction": 0.6}
    splits = {str(tmp_path / "a/splits/one.npz"): {"protocol": protocol, "seed": 4},
              str(tmp_path / "a/splits/two.npz"): {"protocol": {"kind": "kfold", "folds": 3},
                                                   "seed": 1, "drop_classes_below": 0}}
    assert cli.main(["prepare", "iris", "--cache", str(tmp_path / "a"), "--offline",
                     "--splits", json.dumps(splits)]) == 0
    assert cli.main(["dataset", "iris", "--cache", str(tmp_path / "b"), "--offline"]) == 0
    for out, entry in zip(("one", "two"), splits.values()):
        assert cli.main(["split", "iris", "--cache", str(tmp_path / "b"),
                         "--protocol", json.dumps(entry["protocol"]), "--seed", str(entry["seed"]),
                         "--out", str(tmp_path / f"b/splits/{out}.npz")]) == 0
    a, b = data.load("iris", tmp_path / "a"), data.load("iris", tmp_path / "b")
    assert a.meta == b.meta and np.array_equal(a.X, b.X)
    for out, entry in zip(("one", "two"), splits.values()):
        for index in range(protocols.n_splits(entry["protocol"])):
            (sa, ia), (sb, ib) = (protocols.load_split(tmp_path / f"{side}/splits/{out}.npz", index)
                                  for side in "ab")
            assert ia == ib and np.array_equal(sa.train, sb.train)
            assert np.array_equal(sa.test, sb.test)
    assert "iris: 3 splits ->" in capsys.readouterr().out


def test_prepare_names_a_bad_splits_argument(tmp_path, capsys):
    assert cli.main(["prepare", "iris", "--cache", str(tmp_path), "--splits", "[]"]) == 2
    assert "--splits must be a JSON object" in capsys.readouterr().err
    bad = json.dumps({str(tmp_path / "s.npz"): {"seed": 1}})
    assert cli.main(["prepare", "iris", "--cache", str(tmp_path), "--splits", bad]) == 2
    assert f"--splits entry of {tmp_path / 's.npz'} needs 'protocol'" in capsys.readouterr().err

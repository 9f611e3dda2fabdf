"""The workflow's prepare steps: one for every data set that needs no download, one per
downloaded set (cache name), each writing its cached data sets and every split file of the
config in one process, the same files `dmlbench dataset` and `dmlbench split` write."""

import json
import os
from pathlib import Path

import numpy as np

from dmlbench import cli, config, data
from dmlbench.run import plan, protocols


def check(cfg):
    config.validate_schema(cfg)
    return plan.check(cfg)


def test_one_prepare_step_for_the_local_sets_and_one_per_downloaded_set():
    cfg = check({"benchmark": "t", "seed": 3,
                 "datasets": {"iris": None, "iris-5": {"dataset": "iris",
                                                       "protocol": {"kind": "kfold", "folds": 5}},
                              "glass": None, "wine": {"drop_classes_below": 2},
                              "monks-1-432": None},
                 "methods": {"euclidean": None}})
    assert plan.prepare_steps(cfg) == [
        plan.PrepareStep("prepare_local", "local", ("iris", "wine", "monks-1-432")),
        plan.PrepareStep("prepare_glass", "glass", ("glass",))]
    iris = plan.split_files(cfg, "iris")
    assert list(iris) == [plan.split_path(cfg, "iris"), plan.split_path(cfg, "iris-5")]
    assert [entry["protocol"]["kind"] for entry in iris.values()] == ["holdout", "kfold"]
    assert all(entry["seed"] == 3 and entry["drop_classes_below"] == 0
               for entry in iris.values())
    [(path, wine)] = plan.split_files(cfg, "wine").items()
    assert path == plan.split_path(cfg, "wine") and wine["drop_classes_below"] == 2
    [local, glass] = plan.prepare_steps(cfg)
    assert plan.prepare_resources(cfg, local)["runtime"] == sum(
        plan.dataset_resources(cfg, name)["runtime"] for name in local.names)


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


def _splits(tmp_path, names=("iris", "wine")):
    protocol = {"kind": "holdout", "repeats": 2, "train_fraction": 0.7}
    return {str(tmp_path / f"cache/splits/{name}/s.npz"): {"protocol": protocol, "seed": 0,
                                                           "dataset": name}
            for name in names}


def test_prepare_builds_several_data_sets_in_one_process(tmp_path, capsys):
    splits = _splits(tmp_path)
    assert cli.main(["prepare", "iris", "wine", "--cache", str(tmp_path / "cache"), "--offline",
                     "--splits", json.dumps(splits)]) == 0
    for out, entry in splits.items():
        ds = data.load(entry["dataset"], tmp_path / "cache")
        assert protocols.is_split_file_of(out, entry["protocol"], 0, ds.meta["sha256"])
    out = capsys.readouterr().out
    assert "iris: 2 splits ->" in out and "wine: 2 splits ->" in out


def test_prepare_keeps_current_split_files_and_remakes_the_others(tmp_path, capsys):
    splits = _splits(tmp_path)
    args = ["prepare", "iris", "wine", "--cache", str(tmp_path / "cache"), "--offline",
            "--splits", json.dumps(splits)]
    assert cli.main(args) == 0
    iris_file, wine_file = map(Path, splits)
    before = {path: path.stat().st_ino for path in (iris_file, wine_file)}
    ds = data.load("wine", tmp_path / "cache")
    protocol = splits[str(wine_file)]["protocol"]
    protocols.save_splits(wine_file, protocols.make_splits(ds.y, protocol, 5), protocol, 5,
                          ds.meta["sha256"])  # another seed's splits under this name
    capsys.readouterr()
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    assert f"iris: {iris_file} is current, kept" in out and "wine: 2 splits ->" in out
    assert iris_file.stat().st_ino == before[iris_file]
    assert protocols.is_split_file_of(wine_file, protocol, 0, ds.meta["sha256"])


def test_a_failing_data_set_does_not_stop_the_others(tmp_path, capsys):
    """`glass` needs a download, which `--offline` without a mirror refuses: iris is still
    prepared, and the error names glass; glass leaves no file behind."""
    splits = _splits(tmp_path, ("glass", "iris"))
    assert cli.main(["prepare", "glass", "iris", "--cache", str(tmp_path / "cache"),
                     "--offline", "--splits", json.dumps(splits)]) == 2
    err = capsys.readouterr().err
    assert "dmlbench prepare: error: 1 of 2 data sets failed: glass (" in err
    assert "the others were prepared" in err
    assert (tmp_path / "cache/datasets/iris.npz").exists()
    assert Path(str(tmp_path / "cache/splits/iris/s.npz")).exists()
    assert not list((tmp_path / "cache").rglob("*glass*"))
    assert not list((tmp_path / "cache").rglob("*.tmp*"))


def test_prepare_with_several_names_needs_each_split_files_data_set(tmp_path, capsys):
    splits = _splits(tmp_path)
    for entry in splits.values():
        del entry["dataset"]
    assert cli.main(["prepare", "iris", "wine", "--cache", str(tmp_path),
                     "--splits", json.dumps(splits)]) == 2
    assert "give its 'dataset' (several names are given)" in capsys.readouterr().err
    splits = _splits(tmp_path, ("glass",))
    assert cli.main(["prepare", "iris", "wine", "--cache", str(tmp_path),
                     "--splits", json.dumps(splits)]) == 2
    assert "'dataset' must be one of the names given (iris, wine), not 'glass'" in (
        capsys.readouterr().err)

"""Data sets given by a file (data/from_file.py): every format gives the arrays it was written
from, categorical columns become the indicator features built here by hand, the registered
sets' checks apply with the same messages (at check-config, naming the key), and the cache
follows the content."""

import io
import json
import os
from contextlib import redirect_stderr

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file, load_wine

from dmlbench import cli, config, data
from dmlbench.data import cache, from_file
from dmlbench.run import plan, sources


def table(rng, n=60):
    """A small mixed table: three numeric features, a categorical one, an identifier, labels."""
    X = rng.normal(size=(n, 3)).round(3)
    site = rng.choice(["north", "east", "west"], size=n)
    y = np.array(["a", "b", "c"])[np.arange(n) % 3]
    return X, site, y


def write_csv(path, X, site, y, sep=","):
    lines = [sep.join(["id", "f0", "f1", "site", "f2", "label"])]
    lines += [sep.join([str(i), repr(float(a)), repr(float(b)), s, repr(float(c)), t])
              for i, ((a, b, c), s, t) in enumerate(zip(X, site, y))]
    path.write_text("\n".join(lines) + "\n")


def expected(X, site):
    """The features the reader must give: numeric columns in file order, the categorical one
    replaced in place by one 0/1 column per value in sorted order."""
    levels = sorted(set(site))
    onehot = np.array([[float(s == level) for level in levels] for s in site])
    return np.column_stack([X[:, :2], onehot, X[:, 2]])


def check(tmp_path, entry, **extra):
    cfg = {"benchmark": "t", "data": {"cache": str(tmp_path / "cache")},
           "datasets": {"mine": entry}, "methods": {"euclidean": None}, **extra}
    config.validate_schema(cfg)
    return plan.check(cfg)


@pytest.mark.parametrize("fmt, sep", [("csv", ","), ("tsv", "\t")])
def test_a_table_gives_its_columns_with_categorical_ones_one_hot(tmp_path, fmt, sep):
    X, site, y = table(np.random.default_rng(0))
    path = tmp_path / f"mine.{fmt}"
    write_csv(path, X, site, y, sep)
    source = from_file.FileSource.of("mine", path, target="label", categorical=["site"],
                                     drop=["id"])
    ds = cache.build(source.name, spec=from_file.spec(source))
    assert np.array_equal(ds.X, expected(X, site))
    assert ds.meta["feature_names"] == ["f0", "f1", "site=east", "site=north", "site=west", "f2"]
    assert list(np.asarray(ds.meta["class_names"])[ds.y]) == list(y)
    assert ds.meta["file"] == {"file": f"mine.{fmt}", "sha256": data.cache.hashlib.sha256(
        path.read_bytes()).hexdigest(), "format": fmt, "target": "label",
        "categorical": ["site"], "drop": ["id"]}


def test_arff_nominal_attributes_are_categorical_and_the_last_is_the_target(tmp_path):
    X, site, y = table(np.random.default_rng(1), n=30)
    header = ["@relation mine", "@attribute f0 numeric", "@attribute f1 numeric",
              "@attribute site {north,east,west}", "@attribute f2 numeric",
              "@attribute label {a,b,c}", "@data"]
    rows = [f"{float(a)!r},{float(b)!r},{s},{float(c)!r},{t}" for (a, b, c), s, t in zip(X, site, y)]
    path = tmp_path / "mine.arff"
    path.write_text("\n".join(header + rows) + "\n")
    source = from_file.FileSource.of("mine", path)
    ds = cache.build(source.name, spec=from_file.spec(source))
    assert np.array_equal(ds.X, expected(X, site))
    assert list(np.asarray(ds.meta["class_names"])[ds.y]) == list(y)


def test_svmlight_and_npz_give_the_arrays_written(tmp_path):
    X, y = load_wine(return_X_y=True)
    dump_svmlight_file(X, y + 1, str(tmp_path / "wine.svm"))
    np.savez(tmp_path / "wine.npz", X=X, labels=y)
    for source in (from_file.FileSource.of("a", tmp_path / "wine.svm"),
                   from_file.FileSource.of("b", tmp_path / "wine.npz", target="labels")):
        ds = cache.build(source.name, spec=from_file.spec(source))
        assert np.allclose(ds.X, X) and np.array_equal(ds.y, y)


def test_an_npz_with_pickled_objects_is_refused(tmp_path):
    np.savez(tmp_path / "obj.npz", X=np.array([[1, 2], [3, 4]], dtype=object), y=np.array([0, 1]))
    with pytest.raises(config.ConfigError, match=r"datasets\.mine\.path.*pickled objects are "
                                                 "never loaded"):
        check(tmp_path, {"path": str(tmp_path / "obj.npz")})


# --- the checks, with the registered sets' messages, at check-config ---------------------------


def _csv(tmp_path, text, name="mine.csv"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("text, entry, key, message", [
    ("a,b,label\n1,2,x\n3,,y\n5,6,x\n7,8,y\n", {}, "datasets.mine.path",
     r"1 NaN or infinite values in columns \[1\] \(b\)"),
    ("a,b,label\n1,2,x\n3,4,\n5,6,x\n7,8,y\n", {}, "datasets.mine.path",
     r"1 labels are missing \(None, NaN or empty\) at rows \[1\]"),
    ("a,b,label\n1,2,x\n3,4,y\n5,6,x\n7,8,y\n9,1,z\n", {}, "datasets.mine",
     r"classes \['z'\] have fewer than 2 samples"),
    ("a,b,label\n1,u,x\n3,v,y\n5,u,x\n7,v,y\n", {}, "datasets.mine.categorical",
     r"column 'b' is not numeric \(values such as \['u', 'v'\]\); list it under `categorical`"),
    ("a,b,label\n1,2,x\n3,4,y\n", {"target": "class"}, "datasets.mine.target",
     r"has no column 'class'; its columns are \['a', 'b', 'label'\]"),
    ("a,b,label\n1,2,x\n3,4,y\n", {"drop": ["c"]}, "datasets.mine.drop", "has no column 'c'"),
    ("a,b,label\n1,u,x\n3,,y\n5,u,x\n7,v,y\n", {"categorical": ["b"]},
     "datasets.mine.categorical", "categorical column 'b' has 1 missing values"),
])
def test_bad_data_fails_at_check_naming_the_key(tmp_path, text, entry, key, message):
    with pytest.raises(config.ConfigError, match=f"config error at '{key}'.*{message}"):
        check(tmp_path, {"path": _csv(tmp_path, text), "target": "label", **entry})


def test_constant_columns_are_dropped_and_listed_as_for_registered_sets(tmp_path):
    path = _csv(tmp_path, "a,b,label\n1,5,x\n3,5,y\n5,5,x\n7,5,y\n")
    cfg = check(tmp_path, {"path": path, "target": "label"},
                protocol={"kind": "kfold", "folds": 2, "repeats": 1}, k=[1], hubness_k=1,
                train_hubness=False)
    spec = sources.dataset_spec(cfg, "mine")
    assert (spec.n, spec.d, spec.class_counts) == (4, 1, {"x": 2, "y": 2})
    ds = cache.build(spec.name, spec=spec)
    assert ds.meta["dropped_constant_features"] == [1]


def test_missing_keys_and_formats_name_what_to_give(tmp_path):
    with pytest.raises(config.ConfigError, match=r"'datasets\.mine\.target': give the label "
                                                 "column of mine.csv"):
        check(tmp_path, {"path": _csv(tmp_path, "a,label\n1,x\n")})
    with pytest.raises(config.ConfigError, match=r"'datasets\.mine\.format': cannot tell the "
                                                 "format of mine.data"):
        check(tmp_path, {"path": _csv(tmp_path, "1,x\n", "mine.data")})
    with pytest.raises(config.ConfigError, match=r"'datasets\.mine\.path': data file .*nothere"
                                                 r"\.csv not found"):
        check(tmp_path, {"path": str(tmp_path / "nothere.csv"), "target": "label"})
    with pytest.raises(config.ConfigError, match=r"'datasets\.mine\.categorical': a npz file "
                                                 "has no column names"):
        check(tmp_path, {"path": str(tmp_path / "x.npz"), "categorical": ["a"]})


def test_labels_that_are_none_or_nan_are_refused_by_the_shared_validation():
    X = np.ones((4, 2)) * np.arange(4)[:, None]
    for labels in (np.array(["a", None, "b", "a"], dtype=object), np.array([0.0, 1.0, np.nan, 1.0])):
        with pytest.raises(ValueError, match="1 labels are missing"):
            cache.validate("toy", data.embedded.RawData(X, labels))


# --- the workflow's view: relative paths, names by content, the dataset verb -------------------


def test_a_relative_path_is_relative_to_the_config_file_and_the_name_follows_the_content(
        tmp_path, monkeypatch):
    folder = tmp_path / "project"
    (folder / "data").mkdir(parents=True)
    X, site, y = table(np.random.default_rng(2))
    write_csv(folder / "data" / "mine.csv", X, site, y)
    path = folder / "bench.yaml"
    path.write_text("benchmark: t\ndatasets:\n  mine: {path: data/mine.csv, target: label, "
                    "categorical: [site], drop: [id]}\nmethods:\n  euclidean:\n")
    monkeypatch.chdir(tmp_path)
    cfg = plan.check(config.load(path), config_files=[path])
    entry = cfg["datasets"]["mine"]
    assert entry["path"] == str(folder / "data" / "mine.csv")
    name = entry["dataset"]
    assert name.startswith("mine-") and plan.job_spec(cfg, "mine", "euclidean", [0])[
        "dataset"] == {"label": "mine", "name": name}
    assert plan.dataset_paths(cfg, name)[0] == f"resources/datasets/{name}.npz"
    # the checked config checks again (the name is its own), and an edit renames the data set
    assert plan.check(cfg)["datasets"]["mine"]["dataset"] == name
    with open(folder / "data" / "mine.csv", "a") as fh:
        fh.write("60,0.1,0.2,north,0.3,a\n")
    assert plan.check(config.load(path), [path])["datasets"]["mine"]["dataset"] != name


def test_the_dataset_verb_builds_a_file_data_set_from_its_source(tmp_path, monkeypatch):
    X, site, y = table(np.random.default_rng(3))
    write_csv(tmp_path / "mine.csv", X, site, y)
    cfg = check(tmp_path, {"path": str(tmp_path / "mine.csv"), "target": "label",
                           "categorical": ["site"], "drop": ["id"]})
    files = sources.file_datasets(cfg)
    name = cfg["datasets"]["mine"]["dataset"]
    monkeypatch.setenv(from_file.ENVIRONMENT, json.dumps(files))
    assert cli.main(["dataset", name, "--cache", str(tmp_path / "cache")]) == 0
    ds = data.load(name, tmp_path / "cache")
    assert np.array_equal(ds.X, expected(X, site))
    # a file edited after the check is refused by name, not silently read
    (tmp_path / "mine.csv").write_text((tmp_path / "mine.csv").read_text() + "99,1,1,east,1,a\n")
    os.remove(data.cache.paths(name, tmp_path / "cache")[1])
    err = io.StringIO()
    with redirect_stderr(err):
        assert cli.main(["dataset", name, "--cache", str(tmp_path / "cache")]) == 2
    assert "changed since its config was checked" in err.getvalue()

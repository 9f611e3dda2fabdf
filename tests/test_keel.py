"""KEEL's .dat format and published folds: the reader (header, nominal values, class names,
missing values), the fold checks and index arrays, the keel-* registry entries, their download
(mirror directory and KEEL-style zip over loopback), protocol given_folds, and the data path
end to end against scikit-learn on the raw files."""

import dataclasses
import hashlib
import io
import zipfile
from pathlib import Path

import numpy as np
import pytest
from loopback import serve
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import MinMaxScaler

from dmlbench import cli, config, data
from dmlbench.data import downloaded, keel, registry
from dmlbench.data.download import DownloadError
from dmlbench.data.spec import DatasetSpec, RemoteFile
from dmlbench.measure.evaluation import evaluate
from dmlbench.methods import make
from dmlbench.run import plan, preprocessing, protocols

HEADER = """@relation  toy
@attribute Width real[0.5,9.0]
@attribute 'Colour' {red, green, blue}
@attribute Count integer [1, 7]
@attribute Class{no,yes}
@inputs Count, 'Colour', Width
@outputs Class
@data
"""


def keel_text(rows, header=HEADER) -> str:
    return header + "".join(", ".join(str(v) for v in row) + "\n" for row in rows)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# ---- the reader

def test_header_nominal_codes_input_order_and_class_names(tmp_path):
    text = keel_text([(1.5, "green", 3, "yes"), (2.0, "blue", 1, "no"), (9.0, "red", 7, "no")])
    text = text.replace("@data\n", "% a comment\n@data\n\n")
    table = keel.read(write(tmp_path / "toy.dat", text))
    assert table.relation == "toy"
    assert [a.name for a in table.features] == ["Count", "Colour", "Width"]  # @inputs order
    assert table.features[1] == keel.Attribute("Colour", "nominal", ("red", "green", "blue"))
    assert table.target == keel.Attribute("Class", "nominal", ("no", "yes"))
    # Count, Colour (red = 0, green = 1, blue = 2: header position), Width
    np.testing.assert_array_equal(table.X, [[3, 1, 1.5], [1, 2, 2.0], [7, 0, 9.0]])
    assert table.y.tolist() == ["yes", "no", "no"]


def test_without_inputs_and_outputs_the_last_attribute_is_the_class(tmp_path):
    header = ("@relation r\n@attribute a real\n@attribute b real\n@attribute c {x, y}\n"
              "@data\n")
    table = keel.read(write(tmp_path / "r.dat", keel_text([(1, 2, "y"), (3, 4, "x")], header)))
    assert [a.name for a in table.features] == ["a", "b"] and table.target.name == "c"
    assert table.y.tolist() == ["y", "x"]


@pytest.mark.parametrize("row, message", [
    ((1.5, "purple", 3, "yes"), r"toy.dat line 10: attribute 'Colour' has value 'purple'"),
    ((1.5, "red", 3, "maybe"), r"toy.dat line 10: class 'maybe' is not among"),
    (("wide", "red", 3, "yes"), r"toy.dat line 10: attribute 'Width' is numeric, got 'wide'"),
    ((1.5, "red", "yes"), r"toy.dat line 10: 3 values, the header declares 4"),
    ((1.5, "?", 3, "yes"), r"toy.dat line 10: missing value \('\?'\) in \['Colour'\]"),
])
def test_bad_rows_name_file_line_and_attribute(tmp_path, row, message):
    text = keel_text([(2.0, "red", 1, "no"), row])
    with pytest.raises(ValueError, match=message):
        keel.read(write(tmp_path / "toy.dat", text))


def test_missing_values_are_dropped_only_when_asked(tmp_path):
    path = write(tmp_path / "toy.dat", keel_text([(2.0, "red", 1, "no"), (1.0, "blue", "?", "yes")]))
    table = keel.read(path, missing="drop")
    assert table.y.tolist() == ["no"]
    with pytest.raises(ValueError, match="missing must be"):
        keel.read(path, missing="impute")


@pytest.mark.parametrize("header, message", [
    ("@relation r\n@attribute a string\n@attribute c {x, y}\n@data\n", "has type 'string'"),
    ("@relation r\n@attribute a real\n@attribute c {x, y}\n@inputs b\n@data\n", "'b', which no"),
    ("@relation r\n@attribute a real\n@attribute c {x, y}\n", "no @data line"),
])
def test_bad_headers_are_named(tmp_path, header, message):
    rows = "1, x\n" if "@data" in header else ""
    with pytest.raises(ValueError, match=message):
        keel.read(write(tmp_path / "r.dat", header + rows))


# ---- folds

def toy_points(n=24, seed=0):
    """Rows (width, colour, count, class) with two exact duplicates."""
    rng = np.random.default_rng(seed)
    rows = [(round(float(rng.uniform(0.5, 9)), 3), ["red", "green", "blue"][i % 3],
             int(rng.integers(1, 8)), "yes" if i % 3 == 0 else "no") for i in range(n)]
    rows[5] = rows[4]
    rows[11] = rows[4]
    return rows


def write_folds(directory: Path, name: str, rows, k=3, seed=1, header=HEADER):
    """k folds of `rows` (test part i = rows i, i + k, ...), each file in its own row order."""
    rng = np.random.default_rng(seed)
    paths = []
    for i in range(k):
        test = [r for j, r in enumerate(rows) if j % k == i]
        train = [r for j, r in enumerate(rows) if j % k != i]
        train = [train[j] for j in rng.permutation(len(train))]
        tra = write(directory / f"{name}-{k}dobscv-{i + 1}tra.dat", keel_text(train, header))
        tst = write(directory / f"{name}-{k}dobscv-{i + 1}tst.dat", keel_text(test, header))
        paths.append((tra, tst))
    return paths


def test_folds_map_every_file_row_to_the_same_point_in_file_order(tmp_path):
    pairs = write_folds(tmp_path, "toy", toy_points())
    raw = keel.read_folds(pairs)
    fold1 = [keel.read(p) for p in pairs[0]]
    np.testing.assert_array_equal(raw.X, np.vstack([fold1[0].X, fold1[1].X]))  # the rows
    assert raw.feature_names == ["Count", "Colour", "Width"]
    tested = []
    for fold, (tra, tst) in zip(raw.given_folds, pairs):
        for part, path in (("train", tra), ("test", tst)):
            table = keel.read(path)
            np.testing.assert_array_equal(raw.X[fold[part]], table.X)
            assert raw.y[fold[part]].tolist() == table.y.tolist()
        assert np.intersect1d(fold["train"], fold["test"]).size == 0
        tested.append(fold["test"])
    assert sorted(np.concatenate(tested).tolist()) == list(range(len(raw.y)))  # a partition


def test_a_fold_with_other_points_is_named(tmp_path):
    rows = toy_points()
    pairs = write_folds(tmp_path, "toy", rows)
    test_file = pairs[1][1]  # fold 2 tests rows 1, 4, 7, ...
    text = test_file.read_text().replace(f"{rows[1][0]}, {rows[1][1]}", "8.888, red", 1)
    assert text != test_file.read_text()
    test_file.write_text(text)
    with pytest.raises(ValueError, match=r"fold 2 \(toy-3dobscv-2tra.dat \+ toy-3dobscv-2tst"
                                         r".dat\): its training and test parts together"):
        keel.read_folds(pairs)


def test_overlapping_test_parts_are_an_error(tmp_path):
    pairs = write_folds(tmp_path, "toy", toy_points())
    for suffix in ("tra", "tst"):  # fold 2 repeats fold 1
        (tmp_path / f"toy-3dobscv-2{suffix}.dat").write_text(
            (tmp_path / f"toy-3dobscv-1{suffix}.dat").read_text())
    with pytest.raises(ValueError, match="fold 2 .*tested more often .* overlap"):
        keel.read_folds(pairs)


def test_folds_whose_headers_differ_are_an_error(tmp_path):
    pairs = write_folds(tmp_path, "toy", toy_points())
    path = pairs[2][1]
    path.write_text(path.read_text().replace("{red, green, blue}", "{blue, green, red}"))
    with pytest.raises(ValueError, match="toy-3dobscv-3tst.dat: its header .* differs"):
        keel.read_folds(pairs)


# ---- registry entries and download

KEEL_SETS = ["appendicitis", "balance", "bupa", "cleveland", "glass", "hepatitis", "ionosphere",
             "iris", "monk-2", "newthyroid", "sonar", "wine", "movement_libras", "pima",
             "vehicle", "vowel", "wdbc", "wisconsin"]


def test_the_eighteen_keel_sets_are_registered_with_pinned_files():
    for name in KEEL_SETS:
        spec = registry.get(f"keel-{name}")
        assert spec.source == "download" and spec.papers == ("su21",)
        assert spec.extras["given_folds"] == 10 and spec.group == name
        assert len(spec.files) == 20 and len({f.name for f in spec.files}) == 20
        assert spec.mirror_paths()[0] == f"{name}/{name}-10dobscv-1tra.dat"
        for f in spec.files:
            assert f.checksum.startswith("sha256:") and len(f.checksum) == 7 + 64
            assert f.urls[0] == f"{registry.KEEL}{name}-10-dobscv.zip"
        assert sum(spec.class_counts.values()) == spec.n
    assert registry.get("wine").source == "sklearn"  # the UCI versions keep their names
    assert registry.get("glass").group == "glass" and registry.get("glass").files[0].name == \
        "glass.data"


def toy_keel_spec(directory: Path, urls=()) -> DatasetSpec:
    files = tuple(RemoteFile(p.name, urls, "sha256:" + hashlib.sha256(p.read_bytes()).hexdigest())
                  for p in sorted((directory / "toy").glob("*.dat")))
    return DatasetSpec("keel-toy", "download", 24, 3, 2, files=files, group="toy",
                       parse=downloaded.keel_folds("toy", folds=3),
                       class_counts={"no": 16, "yes": 8}, extras={"given_folds": 3})


@pytest.fixture
def toy_site(tmp_path, monkeypatch):
    """The toy folds as a mirror directory (<group>/<file>) and as a KEEL-style zip, served."""
    mirror = tmp_path / "mirror"
    write_folds(mirror / "toy", "toy", toy_points())
    site = tmp_path / "site"
    site.mkdir()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for path in sorted((mirror / "toy").glob("*.dat")):
            zf.write(path, f"toy-3-dobscv/{path.name}")  # in a folder of the archive
    (site / "toy-3-dobscv.zip").write_bytes(buffer.getvalue())
    with serve(site) as (base, requests):
        spec = toy_keel_spec(mirror, urls=(f"{base}/ok/toy-3-dobscv.zip",))
        monkeypatch.setitem(data.REGISTRY, spec.name, spec)
        yield mirror, requests


def test_given_folds_from_a_mirror_directory_survive_the_cache(toy_site, tmp_path):
    mirror, requests = toy_site
    ds = data.ensure("keel-toy", tmp_path / "cache", mirror=mirror, offline=True)
    assert requests == [] and len(ds.given_folds) == 3 and ds.meta["given_folds"] == 3
    reference = keel.read_folds([(mirror / "toy" / f"toy-3dobscv-{i}tra.dat",
                                  mirror / "toy" / f"toy-3dobscv-{i}tst.dat") for i in (1, 2, 3)])
    np.testing.assert_array_equal(ds.X, reference.X)
    for ours, ref in zip(ds.given_folds, reference.given_folds):
        np.testing.assert_array_equal(ours["train"], ref["train"])
        np.testing.assert_array_equal(ours["test"], ref["test"])
    assert ds.classes == ["no", "yes"]


def test_given_folds_from_the_public_zip_fetch_it_once(toy_site, tmp_path):
    _, requests = toy_site
    cache_dir = tmp_path / "cache"
    ds = data.ensure("keel-toy", cache_dir, retries=0)
    assert [r[0] for r in requests] == ["GET"]  # one zip for the six files
    assert len(ds.given_folds) == 3
    kept = sorted(p.name for p in (cache_dir / "downloads/toy").iterdir())
    assert kept == sorted(f.name for f in data.REGISTRY["keel-toy"].files)
    assert not list(cache_dir.rglob("*.zip"))


def test_a_zip_member_with_another_checksum_is_refused(toy_site, tmp_path, monkeypatch):
    spec = data.REGISTRY["keel-toy"]
    bad = (RemoteFile(spec.files[0].name, spec.files[0].urls, "sha256:" + "0" * 64),
           *spec.files[1:])
    monkeypatch.setitem(data.REGISTRY, "keel-toy", dataclasses.replace(spec, files=bad))
    with pytest.raises(DownloadError, match="sha256 mismatch"):
        data.ensure("keel-toy", tmp_path / "cache", retries=0)
    assert not list((tmp_path / "cache").rglob("*.dat"))


# ---- protocol given_folds

def test_protocol_given_folds_keeps_the_files_order(toy_site, tmp_path):
    mirror, _ = toy_site
    ds = data.ensure("keel-toy", tmp_path / "cache", mirror=mirror, offline=True)
    protocol = {"kind": "given_folds"}
    splits = protocols.make_splits(ds.y, protocol, seed=0, given_folds=ds.given_folds)
    assert len(splits) == 3 == protocols.n_splits(protocol, n_folds=3)
    assert protocols.protocol_id(protocol, 0) == "given_folds"
    for split, fold in zip(splits, ds.given_folds):
        np.testing.assert_array_equal(split.train, fold["train"])
        np.testing.assert_array_equal(split.test, fold["test"])
    # fold 1's training part is rows 0.. in file order; the others keep their files' order
    assert np.array_equal(splits[0].train, np.arange(16))
    assert not np.all(np.diff(splits[1].train) > 0)
    kept = protocols.make_splits(ds.y, protocol, 0, given_folds=ds.given_folds,
                                 drop_classes_below=10)  # drops class "yes" (8 points)
    assert set(ds.y[kept[0].train]) == {0}
    np.testing.assert_array_equal(kept[0].train, splits[0].train[ds.y[splits[0].train] == 0])
    with pytest.raises(ValueError, match="needs a data set with published folds; 'iris'"):
        protocols.make_splits(ds.y, protocol, 0, dataset="iris")


def test_split_command_saves_the_folds(toy_site, tmp_path):
    mirror, _ = toy_site
    cache_dir = tmp_path / "cache"
    data.ensure("keel-toy", cache_dir, mirror=mirror, offline=True)
    out = tmp_path / "splits.npz"
    assert cli.main(["split", "keel-toy", "--protocol", '{"kind": "given_folds"}',
                     "--cache", str(cache_dir), "--out", str(out)]) == 0
    split, info = protocols.load_split(out, 2)
    assert info["n_splits"] == 3
    np.testing.assert_array_equal(split.test, data.load("keel-toy", cache_dir).given_folds[2]["test"])


def test_config_given_folds_needs_a_data_set_with_folds():
    cfg = {"benchmark": "b", "datasets": {"iris": {"protocol": {"kind": "given_folds"}}},
           "methods": {"euclidean": None}}
    with pytest.raises(config.ConfigError, match="datasets.iris.protocol.*published folds"):
        plan.check(cfg)
    cfg["datasets"] = {"keel-iris": {"protocol": {"kind": "given_folds"}}}
    assert len(plan.jobs(plan.check(cfg))) == 1
    spec = plan.job_spec(plan.check(cfg), "keel-iris", "euclidean", list(range(10)))
    assert spec["splits"] == list(range(10))


# ---- the data path end to end: our Euclidean k-NN against scikit-learn on the raw files

def test_euclidean_knn_on_given_folds_with_minmax_equals_scikit_learn(tmp_path):
    rows = [(round(float(x), 4), ["red", "green", "blue"][i % 3], i % 7 + 1, "yes" if x > 5 else
             "no") for i, x in enumerate(np.random.default_rng(3).uniform(0.5, 9, 60))]
    pairs = write_folds(tmp_path / "raw", "toy", rows, k=4)
    raw = keel.read_folds(pairs)
    y = np.searchsorted(np.unique(raw.y), raw.y)
    for fold, (tra, tst) in zip(raw.given_folds, pairs):
        Xtr, Xte, _ = preprocessing.fit_transform_rows(["minmax"], raw.X, fold["train"],
                                                       fold["test"])
        est = make("euclidean").fit(Xtr, y[fold["train"]])
        metrics = evaluate(est, Xte, y[fold["train"]], y[fold["test"]], [1, 3, 5], 5, {})
        train_file, test_file = keel.read(tra), keel.read(tst)  # the files, read directly
        scaler = MinMaxScaler().fit(train_file.X)
        for k in (1, 3, 5):
            ref = KNeighborsClassifier(n_neighbors=k, algorithm="brute")
            ref.fit(scaler.transform(train_file.X), train_file.y)
            expected = ref.score(scaler.transform(test_file.X), test_file.y)
            assert metrics[f"accuracy_k{k}"] == pytest.approx(expected, abs=1e-12)


# ---- the team's mirror, when this machine has it (a reference only; nothing needs it)

SHARED = Path("/work/shared/data/keel-dobscv")


@pytest.mark.skipif(not SHARED.is_dir(), reason="the team's KEEL mirror is not on this machine")
@pytest.mark.parametrize("name", ["glass", "monk-2", "wisconsin"])
def test_registry_matches_the_team_mirror(name, tmp_path):
    ds = data.ensure(f"keel-{name}", tmp_path, mirror=SHARED, offline=True)
    assert len(ds.given_folds) == 10

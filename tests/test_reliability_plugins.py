"""Plug-ins and configs cannot publish wrong numbers (issue 45, reliability round four), each
fault reproduced and refused: outputs that break the method contract (1), plug-in code outside
the named file (2), YAML alias bombs (4), tuning folds larger than a class (6), data files that
pass the config check and fail in every job (7), NumPy's global generator (10), plug-ins named
like built-ins (11)."""

import hashlib
import io
import json
import math
import os
import textwrap
from contextlib import redirect_stderr
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import copy_project, snakemake

from dmlbench import cli, config, data, records, strict_yaml
from dmlbench.measure import contract
from dmlbench.methods import plugins
from dmlbench.run import job, plan, protocols, tuning

# ---- 1. the method contract on what a method returns ------------------------------------------

BROKEN = '''
import random

import numpy as np
from scipy.spatial.distance import cdist

from dmlbench.methods.base import Classifier, KNeighborsMethod


def brute_force(Q, T, k, exclude_self=False):
    D = cdist(Q, T)
    if exclude_self:
        np.fill_diagonal(D, np.inf)
    ind = np.argsort(D, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(D, ind, axis=1), ind


class Search:
    """An honest plug-in: exact Euclidean search of its own (the adapter's NeighboursPlugin)."""

    def __init__(self):
        pass

    def fit(self, X, y):
        self.X_ = np.asarray(X, dtype=float)
        return self

    def kneighbors(self, X, n_neighbors):
        return self.breaks(*brute_force(X, self.X_, n_neighbors))

    def breaks(self, dist, ind):
        return dist, ind


class NanDistances(Search):
    def breaks(self, dist, ind):
        return np.full(dist.shape, np.nan), ind


class SameIndex(Search):
    def breaks(self, dist, ind):
        return dist, np.repeat(ind[:, :1], ind.shape[1], axis=1)


class NanTransform:
    """An embedding whose queries (not its training points) come out NaN."""

    def __init__(self):
        pass

    def fit(self, X, y):
        self.n_ = len(X)
        return self

    def transform(self, X):
        Z = np.array(X, dtype=float)
        if len(X) != self.n_:
            Z[3, 1] = np.nan
        return Z


class Own(KNeighborsMethod):
    """A plug-in on the contract's base class: no adapter stands between it and the job."""

    def __init__(self):
        pass

    def fit(self, X, y):
        self.X_ = np.asarray(X, dtype=float)
        return self

    def kneighbors(self, X, n_neighbors, progress=False):
        return brute_force(X, self.X_, n_neighbors)

    def train_kneighbors(self, n_neighbors):
        return brute_force(self.X_, self.X_, n_neighbors, exclude_self=True)


class OutOfRange(Own):
    def kneighbors(self, X, n_neighbors, progress=False):
        dist, ind = super().kneighbors(X, n_neighbors)
        ind[:, -1] = self.X_.shape[0]
        return dist, ind


class WrongShape(Own):
    def kneighbors(self, X, n_neighbors, progress=False):
        dist, ind = super().kneighbors(X, n_neighbors)
        return dist[:-1], ind[:-1]


class FloatIndices(Own):
    def kneighbors(self, X, n_neighbors, progress=False):
        dist, ind = super().kneighbors(X, n_neighbors)
        return dist, ind.astype(float)


class ItselfLeftIn(Own):
    def train_kneighbors(self, n_neighbors):
        return brute_force(self.X_, self.X_, n_neighbors)


class UnknownLabel(Classifier):
    def __init__(self):
        pass

    def fit(self, X, y):
        self.n_classes_ = int(np.max(y)) + 1
        return self

    def predict(self, X, k=None):
        return np.full(len(X), self.n_classes_ + 3)


class GlobalRandom:
    """A random projection drawn from NumPy's and Python's global generators (no
    random_state), which its fit_info shows."""

    def __init__(self):
        pass

    def fit(self, X, y):
        self.L_ = np.random.rand(2, np.shape(X)[1])
        self.draw_ = random.random()
        return self

    def transform(self, X):
        return np.asarray(X) @ self.L_.T

    def fit_info(self):
        return {"numpy_draw": float(self.L_[0, 0]), "random_draw": self.draw_}
'''


@pytest.fixture
def broken(tmp_path):
    path = tmp_path / "plugins" / "broken.py"
    path.parent.mkdir()
    path.write_text(BROKEN)
    return path


def _iris_config(tmp_path, methods: dict, **extra) -> dict:
    """A checked config of iris (one holdout split, saved) with `methods`."""
    cfg = plan.check({"benchmark": "t", "data": {"cache": str(tmp_path / "cache")}, "k": [1, 3],
                      "protocol": {"kind": "holdout", "repeats": 1, "train_fraction": 0.7},
                      "datasets": {"iris": None}, "methods": methods, **extra})
    ds = data.ensure("iris", cfg["data"]["cache"])
    protocol = config.dataset_protocol(cfg, "iris")
    protocols.save_splits(plan.split_path(cfg, "iris"), protocols.make_splits(ds.y, protocol, 0),
                          protocol, 0, ds.meta["sha256"])
    return cfg


@pytest.mark.parametrize("cls, message", [
    ("NanDistances", "broken.py:NanDistances: kneighbors returned NaN or infinite distances "
                     "for 45 of 45 queries"),
    ("SameIndex", "broken.py:SameIndex: kneighbors returned training index"),
    ("OutOfRange", "OutOfRange: kneighbors returned training index 105 for query 0; indices "
                   "must lie in [0, 105)"),
    ("WrongShape", "WrongShape: kneighbors returned distances of shape (44, 10) and indices of "
                   "shape (44, 10); 10 neighbours of 45 queries are (45, 10)"),  # hubness_k 10
    ("FloatIndices", "FloatIndices: kneighbors returned indices of dtype float64"),
    ("NanTransform", "broken.py:NanTransform: transform returned NaN or infinite values for 1 "
                     "of 45 points (first: row 3)"),
    ("UnknownLabel", "UnknownLabel: predict returned 6 for query 0, which is none of the 3 "
                     "training labels"),
])
def test_a_plugin_breaking_the_contract_fails_its_job_naming_method_data_and_rule(
        tmp_path, broken, cls, message):
    cfg = _iris_config(tmp_path, {"bad": {"class": f"{broken}:{cls}"}})
    with pytest.raises(ValueError) as err:
        job.run(plan.job_spec(cfg, "iris", "bad", [0]), progress=False)
    text = str(err.value)
    assert text.startswith("method 'bad' on data set 'iris', split 0: ") and message in text, text
    assert "\n" not in text


def test_a_leave_one_out_list_holding_the_point_itself_is_refused(tmp_path, broken):
    cfg = _iris_config(tmp_path, {"bad": {"class": f"{broken}:ItselfLeftIn"}},
                       train_hubness=True)
    with pytest.raises(ValueError, match="ItselfLeftIn: train_kneighbors returned training "
                                         "point 0 as a leave-one-out neighbour of itself"):
        job.run(plan.job_spec(cfg, "iris", "bad", [0]), progress=False)


def test_an_honest_plugin_passes_and_gives_the_brute_force_accuracy(tmp_path, broken):
    """The checks refuse nothing a correct method returns: the honest search's accuracy is
    the 1-NN accuracy of brute-force Euclidean distances (scikit-learn's classifier)."""
    from sklearn.neighbors import KNeighborsClassifier

    cfg = _iris_config(tmp_path, {"good": {"class": f"{broken}:Search"}})
    [record] = job.run(plan.job_spec(cfg, "iris", "good", [0]), progress=False)
    split, _ = protocols.load_split(plan.split_path(cfg, "iris"), 0)
    ds = data.load("iris", cfg["data"]["cache"])
    knn = KNeighborsClassifier(1).fit(ds.X[split.train], ds.y[split.train])  # no preprocess
    assert math.isclose(record["metrics"]["accuracy_k1"],
                        knn.score(ds.X[split.test], ds.y[split.test]))


def test_the_tuning_rule_checks_each_candidate_s_inner_lists(broken):
    X = np.random.default_rng(0).normal(size=(30, 3))
    y = np.repeat([0, 1, 2], 10)
    estimator = plugins.load(f"{broken}:NanDistances")()
    with pytest.raises(contract.ContractError, match="NaN or infinite distances"):
        tuning.inner_accuracies(estimator, X[::2], y[::2], X[1::2], y[1::2], [1, 3])
    estimator = plugins.load(f"{broken}:UnknownLabel")()
    with pytest.raises(contract.ContractError, match="none of the 3 training labels"):
        tuning.inner_accuracies(estimator, X[::2], y[::2], X[1::2], y[1::2], [1])


# ---- 2. a plug-in's identity covers the code it runs ------------------------------------------

MAIN = '''
import numpy as np

import helper
from tools import scale


class Scaled:
    def __init__(self):
        pass

    def fit(self, X, y):
        from tools.lazy import LAZY  # imported inside a function: part of the identity too
        self.w_ = helper.WEIGHTS * scale.FACTOR * LAZY
        return self

    def transform(self, X):
        return np.asarray(X) * self.w_

    def fit_info(self):
        return {"first_weight": float(self.w_[0])}
'''


@pytest.fixture
def with_helpers(tmp_path):
    """A plug-in file importing a module and a package's modules beside it, and a file beside
    it that it does not import."""
    folder = tmp_path / "plugins"
    (folder / "tools").mkdir(parents=True)
    (folder / "main.py").write_text(MAIN)
    (folder / "helper.py").write_text("import numpy as np\nWEIGHTS = np.array([1.0, 1, 1, 1])\n")
    (folder / "tools" / "__init__.py").write_text("")
    (folder / "tools" / "scale.py").write_text("FACTOR = 1.0\n")
    (folder / "tools" / "lazy.py").write_text("LAZY = 1.0\n")
    (folder / "unrelated.py").write_text("X = 1\n")
    return folder


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_plugin_s_identity_covers_the_local_modules_it_imports(tmp_path, with_helpers):
    path = tmp_path / "bench.yaml"
    path.write_text(json.dumps({"benchmark": "t", "datasets": {"iris": None},
                                "methods": {"mine": {"class": "plugins/main.py:Scaled"}}}))

    def spec():
        return plan.job_spec(plan.check(config.load(path), [path]), "iris", "mine", [0])

    first = spec()
    assert first["method"]["sha256"] == _sha(with_helpers / "main.py")
    assert first["method"]["modules"] == {
        name: _sha(with_helpers / name) for name in (
            "helper.py", "tools/__init__.py", "tools/lazy.py", "tools/scale.py")}
    (with_helpers / "unrelated.py").write_text("X = 2\n")
    assert spec()["parent_key"] == first["parent_key"]  # what it does not import: no rerun
    keys = {first["parent_key"]}
    for name in ("helper.py", "tools/scale.py", "tools/lazy.py"):
        with open(with_helpers / name, "a") as fh:
            fh.write("# edited\n")
        keys.add(spec()["parent_key"])
    assert len(keys) == 4  # each edit: a new identity


@pytest.fixture
def installable(tmp_path, monkeypatch):
    """A distribution 'scaledplug' on sys.path declaring the entry points `whitening` and
    `euclidean` (= scaledplug_mod:Scaled); returns a function setting its version."""
    site = tmp_path / "site"
    info = site / "scaledplug.dist-info"
    info.mkdir(parents=True)
    (site / "scaledplug_mod.py").write_text(
        "class Scaled:\n    def __init__(self):\n        pass\n\n"
        "    def fit(self, X, y):\n        return self\n\n"
        "    def transform(self, X):\n        return X\n")
    (info / "entry_points.txt").write_text(
        f"[{plugins.ENTRY_POINT_GROUP}]\nwhitening = scaledplug_mod:Scaled\n"
        "euclidean = scaledplug_mod:Scaled\n")
    (info / "top_level.txt").write_text("scaledplug_mod\n")
    monkeypatch.syspath_prepend(str(site))

    def version(v: str) -> None:
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: scaledplug\nVersion: {v}\n")

    version("0.1")
    return version


def test_an_entry_point_s_identity_follows_its_distribution_s_version(installable):
    cfg = {"benchmark": "t", "datasets": {"iris": None}, "methods": {"whitening": None}}
    old = plan.job_spec(plan.check(cfg), "iris", "whitening", [0])
    assert {k: old["method"][k] for k in ("package", "version")} == {"package": "scaledplug",
                                                                      "version": "0.1"}
    installable("0.2")
    new = plan.job_spec(plan.check(cfg), "iris", "whitening", [0])
    assert new["method"]["version"] == "0.2" and new["parent_key"] != old["parent_key"]


@pytest.mark.slow
@pytest.mark.workflow
def test_editing_a_helper_module_reruns_the_plugin_s_job(tmp_path, with_helpers):
    """The workflow reruns a plug-in's job when a module it imports changes (it said
    "Nothing to be done" and kept the old record before)."""
    (tmp_path / "project").mkdir()
    project = copy_project(tmp_path / "project")
    (project / "config" / "plugins").symlink_to(with_helpers)
    (project / "config" / "helpers.yaml").write_text(yaml.safe_dump({
        "benchmark": "helpers", "k": [1], "hubness_k": 1,
        "protocol": {"kind": "holdout", "repeats": 1, "train_fraction": 0.7},
        "datasets": {"iris": None}, "methods": {"mine": {"class": "plugins/main.py:Scaled"}}}))
    target = "results/helpers/runs/iris/mine/part0.json"
    env = {**os.environ, "MLFLOW_TRACKING_URI": f"sqlite:///{project / 'mlruns.db'}"}

    def run() -> float:
        done = snakemake(project, target, "--cores", "1", "--configfile", "config/helpers.yaml",
                         env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        return records.read(project / target)[0]["fit_info"]["first_weight"]

    assert run() == 1.0
    (with_helpers / "helper.py").write_text("import numpy as np\n"
                                            "WEIGHTS = np.array([0.5, 1, 1, 1])\n")
    assert run() == 0.5


# ---- 4. YAML alias bombs ----------------------------------------------------------------------

BOMB = textwrap.dedent("""\
    benchmark: bomb
    datasets: {iris: }
    methods: {euclidean: }
    a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]
    """) + "".join(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 9)) + \
    "description: *a8\n"


def test_a_yaml_alias_bomb_is_refused_in_one_line_naming_the_key(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB)
    err = io.StringIO()
    with redirect_stderr(err):
        assert cli.main(["check-config", str(path)]) == 2
    text = err.getvalue()
    assert text.count("\n") == 1 and "key 'a5': YAML aliases (*name) expand this value to " \
        in text and f"more than the {strict_yaml.MAX_VALUES}" in text, text


def test_a_config_snakemake_read_is_refused_before_the_schema_walks_it():
    """Snakemake reads the config file with its own YAML loader (aliases stay shared) and the
    Snakefile hands it to `validate_schema`, which refuses it before walking it."""
    loaded = yaml.safe_load(BOMB)
    with pytest.raises(config.ConfigError, match="config error at 'a5': YAML aliases"):
        config.validate_schema(loaded, fill_defaults=True)
    with pytest.raises(config.ConfigError, match="config error at 'a5'"):
        config.with_defaults(loaded)  # the planner's first step (run_in_pieces, plan.check)
    looped = yaml.safe_load("benchmark: x\ndescription: &d [1, *d]\n")
    with pytest.raises(config.ConfigError, match="'description.1': a YAML alias .* contain itself"):
        config.validate_schema(looped)


@pytest.mark.workflow
def test_the_workflow_refuses_an_alias_bomb_before_parsing_further(tmp_path):
    (tmp_path / "project").mkdir()
    project = copy_project(tmp_path / "project")
    (project / "config" / "bomb.yaml").write_text(BOMB)
    dry = snakemake(project, "-n", "--configfile", "config/bomb.yaml", timeout=120)
    output = dry.stdout + dry.stderr
    assert dry.returncode != 0 and "config error at 'a5': YAML aliases" in output, output[-3000:]


def test_aliases_that_expand_a_little_are_kept():
    text = "a: &p {x: 1, y: [1, 2]}\nb: {<<: *p, x: 2}\nc: *p\n"
    assert strict_yaml.check_size(yaml.safe_load(text)) is None
    assert yaml.safe_load(text)["b"] == {"x": 2, "y": [1, 2]}


# ---- 6. tuning folds against the smallest class of every training part -------------------------


@pytest.mark.parametrize("protocol", [
    {"kind": "holdout", "repeats": 3, "train_fraction": 0.7},
    {"kind": "holdout", "repeats": 3, "train_size": 10},
    {"kind": "kfold", "folds": 4, "repeats": 2},
    {"kind": "kfold", "folds": 7},
    {"kind": "loo"},
])
@pytest.mark.parametrize("counts", [[50, 50, 50], [13, 40, 7], [3, 9]])
def test_the_smallest_training_class_bounds_that_of_every_split(protocol, counts):
    """Against the splits themselves: no split's training part has fewer points of a class
    than `smallest_training_class` says, and some split has at most one more."""
    y = np.repeat(np.arange(len(counts)), counts)
    found = min(np.bincount(y[s.train], minlength=len(counts)).min()
                for s in protocols.make_splits(y, protocol, seed=3))
    assert protocols.smallest_training_class(protocol, counts) in (found, found - 1)


def test_tuning_folds_beyond_a_class_of_a_training_part_are_refused_at_check_config(tmp_path):
    # iris: 50 per class, holdout 0.7 -> 105 training points, 35 of each class
    def checked(folds):
        return plan.check({"benchmark": "t", "tuning": {"folds": folds}, "datasets": {
            "iris": {"protocol": {"kind": "holdout", "repeats": 1, "train_fraction": 0.7}}},
            "methods": {"euclidean": None}})

    checked(35)
    with pytest.raises(config.ConfigError, match=r"config error at 'tuning.folds': 36 stratified "
                       r"inner folds need 36 training points of every class; a training part "
                       r"of data set 'iris' \(holdout-r1-p0.7-seed0\) has 35 of its smallest"):
        checked(36)


@pytest.mark.parametrize("protocol", [
    {"kind": "holdout", "repeats": 3, "train_fraction": 0.7},
    {"kind": "holdout", "repeats": 2, "train_size": 300},
    {"kind": "given"},
])
@pytest.mark.parametrize("counts", [[400, 60, 7], [150, 150, 3, 12], [500, 31]])
@pytest.mark.parametrize("size", [20, 64, 150])
def test_the_curve_bound_is_not_below_any_class_of_a_real_subsample(protocol, counts, size):
    """Against the subsamples themselves (`protocols.subsample` of each split): no class has
    more points in a curve's subsample than `most_curve_points_of_class` allows, so check-config
    refuses only folds that some subsample cannot hold."""
    y = np.repeat(np.arange(len(counts)), counts)
    rng = np.random.default_rng(len(counts) + size)
    if protocol["kind"] == "given":          # a given split of 2/3 that is not stratified
        order = rng.permutation(y.size)
        given_train = 2 * y.size // 3
        splits = [protocols.Split(0, np.sort(order[:given_train]), np.sort(order[given_train:]))]
        n_train = given_train
    else:
        splits = protocols.make_splits(y, protocol, seed=3)
        n_train = protocols.smallest_training_part(protocol, y.size, len(counts))
    for split in splits:
        part = protocols.subsample(split, y, size, seed=5)
        held = np.bincount(y[part.train], minlength=len(counts))
        for c, count in enumerate(counts):
            bound = protocols.most_curve_points_of_class(protocol, count, y.size, n_train, size)
            assert held[c] <= bound, (c, held, bound)


def test_curve_sizes_too_small_for_the_tuning_folds_are_refused_at_check_config():
    # iris, holdout 0.7: 105 training points, 35 of each class; a 6-point subsample holds 2
    def checked(folds, sizes):
        return plan.check({"benchmark": "t", "tuning": {"folds": folds}, "hubness_k": 3,
                           "k": [1], "datasets": {
            "iris": {"protocol": {"kind": "holdout", "repeats": 1, "train_fraction": 0.7,
                                  "train_sizes": sizes}}},
            "methods": {"euclidean": None}})

    checked(3, [30, "full"])
    with pytest.raises(config.ConfigError, match=r"config error at 'tuning.folds': 5 stratified "
                       r"inner folds need 5 training points of every class; the learning-curve "
                       r"subsample of 6 of data set 'iris' holds at most 4 of class"):
        checked(5, [6, 30, "full"])


# ---- 7. data files that would fail in every job ------------------------------------------------


def _data_config(folder: Path, rows: list[str]) -> Path:
    """A config of one data set, the CSV file of `rows` (columns a, b, c, label), in `folder`."""
    folder.mkdir()
    (folder / "mine.csv").write_text("\n".join(["a,b,c,label", *rows]) + "\n")
    path = folder / "bench.yaml"
    path.write_text(json.dumps({"benchmark": "t", "datasets": {
        "mine": {"path": "mine.csv", "target": "label"}}, "methods": {"euclidean": None}}))
    return path


def _check_config(path) -> tuple[int, str]:
    err = io.StringIO()
    with redirect_stderr(err):
        code = cli.main(["check-config", str(path)])
    return code, err.getvalue()


def test_a_data_file_of_constant_features_is_refused_at_check_config(tmp_path):
    code, text = _check_config(_data_config(tmp_path / "d", [f"1,2,3,{i % 2}" for i in range(20)]))
    assert code == 2 and text.count("\n") == 1
    assert "config error at 'datasets.mine.path'" in text and "all 3 features are constant" in text


def test_values_that_overflow_squared_distances_are_refused_naming_the_column(tmp_path):
    """20 points of 3 features: the bound is sqrt(max float / (4 x 20 x 3)), above which the
    worst case (sums over the points of squares of differences) overflows; below it the sums a
    method takes of these data stay finite."""
    bound = math.sqrt(np.finfo(np.float64).max / (4 * 20 * 3))

    def rows(top):
        return [f"{i},{top if i == 7 else i},{-i},{i % 2}" for i in range(20)]

    code, text = _check_config(_data_config(tmp_path / "above", rows(1.01 * bound)))
    assert code == 2 and text.count("\n") == 1
    assert "config error at 'datasets.mine.path'" in text and "column 1 (b)" in text and \
        "rescale that column" in text, text
    code, text = _check_config(_data_config(tmp_path / "below", rows(0.99 * bound)))
    assert code == 0, text
    X = np.array([[float(v) for v in r.split(",")[:3]] for r in rows(0.99 * bound)])
    assert np.isfinite(((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=(1, 2))).all()
    assert np.isfinite(X.T @ X).all() and np.isfinite(np.var(X, axis=0)).all()
    code, text = _check_config(_data_config(tmp_path / "far", rows(1e155)))  # its square overflows
    assert code == 2 and "column 1 (b) holds values up to 1e+155" in text, text


# ---- 10. determinism of plug-ins drawing from the global generators -----------------------------


def test_a_plugin_using_the_global_generators_repeats_its_numbers(tmp_path, broken):
    cfg = _iris_config(tmp_path, {"rand": {"class": f"{broken}:GlobalRandom"}})
    spec = plan.job_spec(cfg, "iris", "rand", [0])
    first = job.run(spec, progress=False)[0]
    np.random.rand(5)  # whatever else drew from them in between
    again = job.run(spec, progress=False)[0]
    assert first["fit_info"]["numpy_draw"] == again["fit_info"]["numpy_draw"]
    assert first["fit_info"]["random_draw"] == again["fit_info"]["random_draw"]
    assert first["metrics"]["accuracy_k3"] == again["metrics"]["accuracy_k3"]
    assert first["method"]["plugin"]["seeding"] == "global"  # the record says how
    records.write(tmp_path / "record.json", [first])  # the schema knows the note


# ---- 11. plug-ins and entry points named like built-ins -----------------------------------------


@pytest.mark.parametrize("label, entry", [
    ("lmnn", {"class": "plugins/broken.py:Search"}),
    ("euclidean", {"class": "plugins/broken.py:Search"}),
    ("euclidean", {"method": "lmnn"}),
])
def test_a_label_that_is_a_built_in_s_name_is_that_built_in(tmp_path, broken, label, entry):
    path = tmp_path / "bench.yaml"
    path.write_text(json.dumps({"benchmark": "t", "datasets": {"iris": None},
                                "methods": {label: entry}}))
    code, text = _check_config(path)
    assert code == 2 and text.count("\n") == 1
    assert f"config error at 'methods.{label}': '{label}' is the name of a built-in method" \
        in text, text


def test_an_entry_point_named_like_a_built_in_is_refused(installable):
    with pytest.raises(config.ConfigError, match=r"config error at 'methods.euclidean': "
                       r"'euclidean' names both the built-in method and the entry point "
                       r"'scaledplug_mod:Scaled'"):
        plan.check({"benchmark": "t", "datasets": {"iris": None}, "methods": {"euclidean": None}})

"""Plug-in methods (methods/plugins.py): a class named in a config (a file or a module), or an
entry point of an installed package. The adapter's neighbour lists are checked against brute
force, the config check's refusals name the key in one line, and the job identity follows the
plug-in file's content."""

import hashlib
import io
import json
import pickle
from contextlib import redirect_stderr
from importlib import metadata

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.base import clone
from sklearn.datasets import load_iris, load_wine
from sklearn.preprocessing import StandardScaler

from dmlbench import cli, config, data, records
from dmlbench.methods import plugins, search_spaces
from dmlbench.methods.euclidean import Euclidean
from dmlbench.run import job, plan, protocols, sources

WHITEN = '''
import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin


class Whiten(TransformerMixin, BaseEstimator):
    def __init__(self, shrinkage=0.1):
        self.shrinkage = shrinkage

    def fit(self, X, y=None):
        S = np.atleast_2d(np.cov(X, rowvar=False))
        D = X.shape[1]
        sigma = (1 - self.shrinkage) * S + self.shrinkage * np.trace(S) / D * np.eye(D)
        values, vectors = np.linalg.eigh(sigma)
        self.components_ = (vectors / np.sqrt(values)).T
        return self

    def transform(self, X):
        return np.asarray(X) @ self.components_.T


class Diagonal:
    """A Mahalanobis metric only: M = diag(1 / variance)."""

    def __init__(self):
        pass

    def get_params(self, deep=True):
        return {}

    def fit(self, X, y):
        self.M_ = np.diag(1 / np.var(X, axis=0))
        return self

    def get_mahalanobis_matrix(self):
        return self.M_


class NoFit:
    def transform(self, X):
        return X


class NoCapability:
    def fit(self, X, y):
        return self
'''


def brute_force(Q, T, k, exclude_self=False):
    """(dist, ind) of the k nearest rows of T, by (distance, index), from all distances."""
    D = cdist(Q, T)
    if exclude_self:
        np.fill_diagonal(D, np.inf)
    order = np.lexsort((np.broadcast_to(np.arange(T.shape[0]), D.shape), D), axis=1)[:, :k]
    return np.take_along_axis(D, order, axis=1), order


@pytest.fixture
def plugin_file(tmp_path):
    path = tmp_path / "plugins" / "whiten.py"
    path.parent.mkdir()
    path.write_text(WHITEN)
    return path


def scaled(loader):
    X, y = loader(return_X_y=True)
    return StandardScaler().fit_transform(X), y


# --- the adapter, against brute force ------------------------------------------------------


def test_a_transform_plugin_searches_its_embedding(plugin_file):
    X, y = scaled(load_wine)
    cls = plugins.load(f"{plugin_file}:Whiten")
    assert cls.capability == "transform" and cls.kind == "global"
    est = cls(shrinkage=0.2).fit(X[:120], y[:120])
    S = np.cov(X[:120], rowvar=False)
    sigma = 0.8 * S + 0.2 * np.trace(S) / 13 * np.eye(13)
    W = np.linalg.inv(np.linalg.cholesky(sigma))  # another square root of sigma^-1: W^T W
    dist, ind = est.kneighbors(X[120:], 7)
    ref_dist, ref_ind = brute_force(X[120:] @ W.T, X[:120] @ W.T, 7)
    assert np.array_equal(ind, ref_ind) and np.allclose(dist, ref_dist)
    loo_dist, loo_ind = est.train_kneighbors(5)
    ref = brute_force(X[:120] @ W.T, X[:120] @ W.T, 5, exclude_self=True)
    assert np.array_equal(loo_ind, ref[1]) and np.allclose(loo_dist, ref[0])
    assert est.fit_info() == {"capability": "transform", "embedding_dim": 13}


def test_a_mahalanobis_matrix_plugin_gives_its_distances(plugin_file):
    X, y = scaled(load_iris)
    est = plugins.load(f"{plugin_file}:Diagonal")().fit(X[::2], y[::2])
    M = np.diag(1 / np.var(X[::2], axis=0))
    dist, ind = est.kneighbors(X[1::2], 4)
    D = np.sqrt(cdist(X[1::2], X[::2], "mahalanobis", VI=M) ** 2)
    assert np.allclose(dist, np.take_along_axis(D, ind, axis=1))
    assert np.allclose(dist, np.sort(D, axis=1)[:, :4])


def test_a_plugin_with_its_own_search_keeps_its_lists_in_the_tie_order():
    """scikit-learn's KNeighborsClassifier as a plug-in; iris has duplicate points, so the
    leave-one-out lists must drop the point itself, not a twin at distance 0."""
    X, y = load_iris(return_X_y=True)
    cls = plugins.load("sklearn.neighbors:KNeighborsClassifier")
    assert cls.capability == "kneighbors" and cls.kind == "local"
    est = cls(algorithm="brute").fit(X[:100], y[:100])
    dist, ind = est.kneighbors(X[100:], 6)
    ref_dist, ref_ind = brute_force(X[100:], X[:100], 6)
    assert np.allclose(dist, ref_dist)
    assert np.array_equal(ind, ref_ind) or np.allclose(  # equal up to ties, which are ordered
        np.take_along_axis(cdist(X[100:], X[:100]), ind, axis=1), ref_dist)
    tied = np.lexsort((ind, dist), axis=1)
    assert np.array_equal(tied, np.broadcast_to(np.arange(6), tied.shape))
    loo_dist, loo_ind = est.train_kneighbors(4)
    assert not np.any(loo_ind == np.arange(100)[:, None])
    assert np.allclose(loo_dist, brute_force(X[:100], X[:100], 4, exclude_self=True)[0])


def test_an_adapted_method_clones_and_pickles_with_its_parameters(plugin_file):
    X, y = scaled(load_iris)
    est = plugins.load("metric_learn:LSML_Supervised")(random_state=0, max_iter=50).fit(X, y)
    again = pickle.loads(pickle.dumps(est))
    assert np.array_equal(again.kneighbors(X[:5], 3)[1], est.kneighbors(X[:5], 3)[1])
    assert clone(est).get_params() == {"random_state": 0, "max_iter": 50}
    assert repr(est) == "metric_learn:LSML_Supervised(max_iter=50, random_state=0)"


def test_a_method_of_the_package_is_its_own_plugin():
    assert plugins.load("dmlbench.methods.euclidean:Euclidean") is Euclidean


def test_the_code_identity_names_the_distribution_and_its_version_or_the_file(plugin_file):
    assert sources.plugin_code("metric_learn:LSML_Supervised") == {
        "package": "metric-learn", "version": metadata.version("metric-learn")}
    assert sources.plugin_code(f"{plugin_file}:Whiten") == {
        "sha256": hashlib.sha256(WHITEN.encode()).hexdigest()}


# --- config checks: one line naming the key --------------------------------------------------


def _config(tmp_path, method_entry):
    path = tmp_path / "bench.yaml"
    path.write_text(json.dumps({"benchmark": "t", "datasets": {"iris": None},
                                "methods": {"euclidean": None, "mine": method_entry}}))
    return path


def check_config_error(path) -> str:
    err = io.StringIO()
    with redirect_stderr(err):
        assert cli.main(["check-config", str(path)]) == 2
    return err.getvalue()


@pytest.mark.parametrize("entry, key, message", [
    ({"class": "no_such_module:Thing"}, "methods.mine.class",
     "module 'no_such_module' not found"),
    ({"class": "metric_learn:LSMLSupervised"}, "methods.mine.class",
     "'metric_learn' has no class 'LSMLSupervised' (did you mean 'LSML_Supervised'?)"),
    ({"class": "plugins/whiten.py:NoFit"}, "methods.mine.class", "has no fit(X, y) method"),
    ({"class": "plugins/whiten.py:NoCapability"}, "methods.mine.class",
     "has none of the methods a plug-in needs"),
    ({"class": "plugins/whiten.py:Whiten", "params": {"shrinkge": 0.5}},
     "methods.mine.params.shrinkge", "has no parameter 'shrinkge' (did you mean 'shrinkage'?)"),
    ({"class": "sklearn.decomposition:PCA", "params": {"n_components": "two"}},
     "methods.mine.params.n_components", "The 'n_components' parameter of PCA must be"),
    ({"class": "plugins/missing.py:Whiten"}, "methods.mine.class", "missing.py not found"),
    ({"class": "Whiten"}, "methods.mine.class", "is not '<file>.py:<Class>'"),
    ({"class": "plugins/whiten.py:Whiten", "method": "lmnn"}, "methods.mine",
     "give either `method`"),
])
def test_each_bad_plugin_fails_at_check_config_in_one_line(tmp_path, plugin_file, entry, key,
                                                            message):
    text = check_config_error(_config(tmp_path, entry))
    assert text.count("\n") == 1, text
    assert f"config error at '{key}'" in text and message in text, text


def _tuned_config(tmp_path, method_entry):
    path = _config(tmp_path, method_entry)
    path.write_text(json.dumps({**json.loads(path.read_text()), "tuning": {"budget": 3}}))
    return path


def test_a_tuned_config_refuses_a_plugin_without_its_search_space(tmp_path, plugin_file):
    """Left out, the plug-in would run untuned beside tuned methods: refused in one line at
    its `search_space`, naming the way out; the built-in methods need none (theirs is
    registered, or they have no hyperparameter)."""
    text = check_config_error(_tuned_config(tmp_path, {"class": "plugins/whiten.py:Whiten"}))
    assert text.count("\n") == 1, text
    assert "config error at 'methods.mine.search_space': under `tuning` a plug-in method " \
           "needs its search space" in text
    assert "['shrinkage']" in text and "`search_space: {}` to run it untuned on purpose" in text
    # given (or empty on purpose), the config is valid; empty: one candidate, its params
    for space, candidates in (({"shrinkage": [0.1, 0.5]}, 2), ({}, 1)):
        path = _tuned_config(tmp_path, {"class": "plugins/whiten.py:Whiten",
                                        "search_space": space})
        cfg = plan.check(config.load(path), config_files=[path])
        assert plan.job_spec(cfg, "iris", "mine", [0])["tuning"]["space"] == [
            [name, values] for name, values in space.items()]
        assert search_spaces.grid_size(space) == candidates


def test_a_typo_in_a_plugins_search_space_is_named_once_with_the_closest(tmp_path,
                                                                          plugin_file):
    entry = {"class": "plugins/whiten.py:Whiten", "search_space": {"shrinkge": [0.1, 0.5]}}
    text = check_config_error(_tuned_config(tmp_path, entry))
    assert text.count("\n") == 1, text
    assert "config error at 'methods.mine.search_space.shrinkge': " in text
    assert text.count("search_space") == 1, text  # the key once, not again in the message
    assert f"{plugin_file}:Whiten has no parameter 'shrinkge' (did you mean 'shrinkage'?)" \
        in text
    assert "WhitenPlugin" not in text and "Plugin " not in text  # not the adapter class
    # a registered method's typo alike (its class), and a params typo
    text = check_config_error(_tuned_config(tmp_path, {"method": "itml",
                                                       "search_space": {"gama": [1.0]}}))
    assert "'methods.mine.search_space.gama': ITML has no parameter 'gama' (did you mean " \
           "'gamma'?)" in text
    text = check_config_error(_config(tmp_path, {"method": "lmnn",
                                                 "params": {"n_neighbours": 3}}))
    assert "'methods.mine.params.n_neighbours': method 'lmnn' has no parameter(s) " \
           "['n_neighbours'] (did you mean 'n_neighbors'?)" in text


def test_a_plugin_file_that_does_not_import_is_one_line(tmp_path, plugin_file):
    plugin_file.with_name("broken.py").write_text("import numpy as np\n\nclass A(:\n")
    text = check_config_error(_config(tmp_path, {"class": "plugins/broken.py:A"}))
    assert text.count("\n") == 1 and "importing plug-in file" in text and "SyntaxError" in text


# --- paths, identity, records ----------------------------------------------------------------


def test_a_plugin_file_is_relative_to_the_config_file_giving_it(tmp_path, plugin_file,
                                                                monkeypatch):
    path = _config(tmp_path, {"class": "plugins/whiten.py:Whiten"})
    monkeypatch.chdir(plugin_file.parent)  # anywhere else
    cfg = plan.check(config.load(path), config_files=[path])
    assert cfg["methods"]["mine"]["class"] == f"{plugin_file}:Whiten"
    # a second config file that does not give the key leaves it to the first
    other = tmp_path / "elsewhere" / "more.yaml"
    other.parent.mkdir()
    other.write_text("k: [1]\n")
    cfg = plan.check({**config.load(path), "k": [1]}, config_files=[path, other])
    assert cfg["methods"]["mine"]["class"] == f"{plugin_file}:Whiten"


def test_editing_the_plugin_file_changes_its_jobs_identity_and_no_other(tmp_path, plugin_file):
    path = _config(tmp_path, {"class": "plugins/whiten.py:Whiten"})
    spec = plan.job_spec(plan.check(config.load(path), [path]), "iris", "mine", [0])
    base = plan.job_spec(plan.check(config.load(path), [path]), "iris", "euclidean", [0])
    assert spec["method"] == {"label": "mine", "name": "whiten.py:Whiten", "params": {},
                              "class": "whiten.py:Whiten",
                              "sha256": hashlib.sha256(WHITEN.encode()).hexdigest()}
    assert spec["method_class"] == f"{plugin_file}:Whiten"
    assert "method_class" not in plan.identity(spec)  # where it lies is no part of it
    # a registered method's identity has no plug-in key (its parent keys are unchanged)
    assert set(base["method"]) == {"label", "name", "params"}
    plugin_file.write_text(WHITEN + "\n# edited\n")
    edited = plan.job_spec(plan.check(config.load(path), [path]), "iris", "mine", [0])
    again = plan.job_spec(plan.check(config.load(path), [path]), "iris", "euclidean", [0])
    assert edited["parent_key"] != spec["parent_key"]
    assert again["parent_key"] == base["parent_key"]


def test_a_plugin_job_records_its_class_version_and_file(tmp_path, plugin_file, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = plan.check({"benchmark": "t", "data": {"cache": str(tmp_path / "cache")},
                      "protocol": {"kind": "holdout", "repeats": 1, "train_fraction": 0.7},
                      "datasets": {"iris": None},
                      "methods": {"whiten": {"class": "plugins/whiten.py:Whiten"},
                                  "lsml": {"class": "metric_learn:LSML_Supervised",
                                           "params": {"max_iter": 20}}}})
    ds = data.ensure("iris", cfg["data"]["cache"])
    protocol = config.dataset_protocol(cfg, "iris")
    protocols.save_splits(plan.split_path(cfg, "iris"), protocols.make_splits(ds.y, protocol, 0),
                          protocol, 0, ds.meta["sha256"])
    found = {}
    for label in ("whiten", "lsml"):
        out = tmp_path / f"{label}.json"
        result = job.run(plan.job_spec(cfg, "iris", label, [0]), progress=False, record_path=out)
        records.write(out, result)  # validates against the record schema
        found[label] = result[0]["method"]
    assert found["whiten"]["plugin"] == {
        "class": "whiten.py:Whiten", "sha256": hashlib.sha256(WHITEN.encode()).hexdigest(),
        "seeding": "global"}  # Whiten takes no random_state
    assert found["whiten"]["family"] == "plug-in" and found["whiten"]["kind"] == "global"
    assert found["lsml"]["plugin"] == {
        "class": "metric_learn:LSML_Supervised", "package": "metric-learn",
        "version": metadata.version("metric-learn"), "seeding": "random_state"}
    # the random_state the workflow gives a randomised method per split reaches the plug-in
    assert found["lsml"]["params"]["random_state"] == job.method_seed(0, 0)


# --- entry points ----------------------------------------------------------------------------


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """A distribution 'myplug' on sys.path declaring `whitening = myplug_mod:Whiten`."""
    site = tmp_path / "site"
    (site / "myplug-1.2.dist-info").mkdir(parents=True)
    (site / "myplug_mod.py").write_text(WHITEN)
    (site / "myplug-1.2.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: myplug\nVersion: 1.2\n")
    (site / "myplug-1.2.dist-info" / "entry_points.txt").write_text(
        f"[{plugins.ENTRY_POINT_GROUP}]\nwhitening = myplug_mod:Whiten\n")
    (site / "myplug-1.2.dist-info" / "top_level.txt").write_text("myplug_mod\n")
    monkeypatch.syspath_prepend(str(site))
    return site


def test_an_installed_package_registers_a_method_by_entry_point(installed):
    cfg = plan.check({"benchmark": "t", "datasets": {"iris": None},
                      "methods": {"whitening": {"params": {"shrinkage": 0.3}}}})
    spec = plan.job_spec(cfg, "iris", "whitening", [0])
    assert spec["method"]["class"] == "myplug_mod:Whiten" and spec["method_class"] is None
    cls = job.method_class(spec)
    assert cls.capability == "transform"
    assert {key: spec["method"][key] for key in ("package", "version")} == {
        "package": "myplug", "version": "1.2"}
    with pytest.raises(config.ConfigError, match="unknown method 'whitenin'. Did you mean "
                                                 "whitening"):
        plan.check({"benchmark": "t", "datasets": {"iris": None}, "methods": {"whitenin": None}})


def test_an_object_that_is_not_a_class_is_refused():
    with pytest.raises(plugins.PluginError, match="'os:sep' is not a class but a str"):
        plugins.load("os:sep")

"""Equal tuning (`run.tuning`, `methods.search_spaces`): the spaces are valid data, the rule's
inner scores and choices equal scikit-learn's GridSearchCV on the same inner folds, and a
config without `tuning` is planned exactly as before."""

import itertools
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.decomposition import PCA as SkPCA
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline

from dmlbench import MetricKNeighborsClassifier, config, data, records
from dmlbench.config import ConfigError
from dmlbench.data.embedded import RawData
from dmlbench.methods import REGISTRY, make, search_spaces
from dmlbench.methods.parameters import ParameterError
from dmlbench.run import job, plan, protocols, tuning

#: the methods issue 31 names, each with the parameters its space must cover
LISTED = {"lmnn": {"n_neighbors", "regularization", "learn_rate"}, "itml": {"gamma"},
          "mmc": {"diagonal"}, "lfda": {"k", "embedding_type"}, "nca": {"n_components", "init"},
          "move_labeled": {"lam"}, "dml_eig": {"mu"}, "boostmdm_g": {"mu_neighbor",
                                                                     "max_boost_iter"},
          "i_mfa": {"k_h", "k_m"}, "rmvem": {"m", "eps"}, "rmle": {"m", "eps"},
          "klhp": {"K", "lam"}, "minivenn": {"m", "rho", "tau"}}


def iris(jitter=1e-6):
    """Iris with a tiny deterministic jitter, so that no two distances tie (iris has duplicate
    rows, whose order scikit-learn's brute-force search does not fix)."""
    X, y = load_iris(return_X_y=True)
    return X + np.random.default_rng(0).normal(scale=jitter, size=X.shape), y


@pytest.mark.parametrize("name", sorted(search_spaces.SPACES))
def test_every_space_is_valid_for_its_method_and_every_point_is_accepted(name):
    cls = REGISTRY[name]
    space = search_spaces.SPACES[name]
    search_spaces.check(space, cls)
    for point in search_spaces.candidates(space, 10**6, 0):
        cls.check_parameters(point)


def test_every_listed_method_has_its_hyperparameters_in_its_space():
    for name, wanted in LISTED.items():
        assert set(search_spaces.SPACES[name]) == wanted, name


@pytest.mark.parametrize("name, off", [
    ("klhp", {"K", "lam"}), ("move_labeled", {"lam"}), ("dml_eig", {"mu"}),
    ("rmvem", {"m"}), ("rmle", {"m"}), ("minivenn", {"m", "rho"})])
def test_internal_selection_is_switched_off_by_fixing_what_it_would_choose(name, off):
    """With the selected parameters set, the method's own grid is not searched."""
    assert off <= set(search_spaces.SPACES[name])
    defaults = REGISTRY[name].with_defaults()
    for grid in ("lam_grid", "mu_grid"):
        if grid in defaults and name != "klhp":
            assert defaults[grid] is None  # the grid search only runs when a grid is given


def test_the_full_grid_is_tried_in_declared_order_when_it_fits_the_budget():
    space = {"a": [1, 2], "b": ["x", "y", "z"]}
    expected = [{"a": a, "b": b} for a, b in itertools.product([1, 2], ["x", "y", "z"])]
    assert search_spaces.candidates(space, 6, 0) == expected
    assert search_spaces.candidates({}, 3, 0) == [{}]


def test_a_larger_grid_is_sampled_reproducibly_and_in_declared_order():
    space = {"a": list(range(10)), "b": list(range(10))}
    drawn = search_spaces.candidates(space, 7, 5)
    assert drawn == search_spaces.candidates(space, 7, 5)
    flat = [10 * c["a"] + c["b"] for c in drawn]
    assert len(set(flat)) == 7 and flat == sorted(flat)
    assert drawn[0] == {"a": 0, "b": 0}  # the simplest setting is always among them
    assert search_spaces.candidates(space, 1, 5) == [{"a": 0, "b": 0}]


@pytest.mark.parametrize("space, parameter", [
    ({"gamma": [1.0, 1.0]}, "gamma"), ({"gamma": []}, "gamma"), ({"gama": [1.0]}, "gama"),
    ({"gamma": [-1.0]}, "gamma")])
def test_a_bad_space_is_refused_naming_the_parameter(space, parameter):
    with pytest.raises(ParameterError) as err:
        search_spaces.check(space, REGISTRY["itml"])
    assert err.value.parameter == parameter


def test_inner_folds_partition_the_training_part_stratified_and_are_saved(tmp_path):
    y = np.repeat([0, 1, 2], [20, 11, 7])
    spec = {"tuning": {"folds": 3, "seed": 4}, "split_file": str(tmp_path / "s.npz")}
    fold, entry = tuning.inner_folds(spec, y, 2)
    for c in range(3):
        counts = np.bincount(fold[y == c], minlength=3)
        assert counts.max() - counts.min() <= 1
    assert Path(entry["file"]).exists()
    again, second = tuning.inner_folds(spec, y, 2)  # read back and checked
    np.testing.assert_array_equal(again, fold)
    assert second["sha256"] == entry["sha256"]
    np.savez(entry["file"], fold=np.roll(fold, 1))
    with pytest.raises(ValueError, match="inner folds .* differ"):
        tuning.inner_folds(spec, y, 2)


def reference_cv(seed, split):
    return StratifiedKFold(n_splits=3, shuffle=True, random_state=tuning.inner_seed(seed, split))


def test_inner_scores_and_choice_equal_grid_search_cv_for_pca(tmp_path):
    """PCA's output dimension: GridSearchCV over scikit-learn's PCA + brute-force k-NN."""
    X, y = iris()
    space = {"n_components": [1, 2, 3, 4]}
    spec = {"tuning": {"folds": 3, "budget": 10, "seed": 3, "space": space},
            "split_file": str(tmp_path / "s.npz")}
    chosen, tried, entry = tuning.tune(spec, lambda p: make("pca", p), X, y, 1, [1, 5, 15])
    assert tried == [{"n_components": q} for q in (1, 2, 3, 4)]
    for k in (1, 5, 15):
        pipe = Pipeline([("pca", SkPCA()), ("knn", KNeighborsClassifier(k, algorithm="brute"))])
        ref = GridSearchCV(pipe, {"pca__n_components": [1, 2, 3, 4]}, cv=reference_cv(3, 1))
        ref.fit(X, y)
        np.testing.assert_allclose(entry["inner_scores"][str(k)],
                                   ref.cv_results_["mean_test_score"], atol=1e-12)
        assert chosen[k] == ref.best_index_  # the first of the best: ties to the simpler


def test_a_local_metric_is_tuned_by_its_own_neighbour_lists_as_grid_search_cv_does(tmp_path):
    """RMVEM's m: GridSearchCV over MetricKNeighborsClassifier (the k-NN rule per k of the
    local metric) on the same folds."""
    X, y = iris()
    X, y = X[::2], y[::2]
    space = {"m": [6, 12]}
    spec = {"tuning": {"folds": 3, "budget": 10, "seed": 0, "space": space},
            "split_file": str(tmp_path / "s.npz")}
    base = {"k_select": (1, 3), "eps": 1e-3}
    chosen, _, entry = tuning.tune(spec, lambda p: make("rmvem", {**base, **p}), X, y, 0, [1, 3])
    for k in (1, 3):
        ref = GridSearchCV(MetricKNeighborsClassifier(make("rmvem", base), n_neighbors=k),
                           {"metric__m": [6, 12]}, cv=reference_cv(0, 0)).fit(X, y)
        np.testing.assert_allclose(entry["inner_scores"][str(k)],
                                   ref.cv_results_["mean_test_score"], atol=1e-12)
        assert chosen[k] == ref.best_index_


def test_a_candidate_the_inner_training_part_cannot_take_is_skipped_with_its_reason(tmp_path):
    X, y = iris()
    spec = {"tuning": {"folds": 3, "budget": 10, "seed": 0, "space": {"k_h": [5, 200]}},
            "split_file": str(tmp_path / "s.npz")}
    chosen, _, entry = tuning.tune(spec, lambda p: make("i_mfa", p), X, y, 0, [1])
    assert chosen == {1: 0} and entry["inner_scores"]["1"][1] is None
    assert "k_h = 200" in entry["failed"]["1"]


def test_when_no_budgeted_candidate_fits_the_rest_of_the_grid_is_tried_in_order(tmp_path):
    # budget 2 draws k_h = 200 (the first) and 400 with seed 1: both too large for the inner
    # training parts; the rest of the grid in declared order: 300 fails too, 5 fits and wins
    X, y = iris()
    spec = {"tuning": {"folds": 3, "budget": 2, "seed": 1,
                       "space": {"k_h": [200, 300, 400, 5]}},
            "split_file": str(tmp_path / "s.npz")}
    chosen, tried, entry = tuning.tune(spec, lambda p: make("i_mfa", p), X, y, 0, [1, 3])
    assert tried == [{"k_h": 200}, {"k_h": 400}, {"k_h": 300}, {"k_h": 5}]
    assert entry["beyond_budget"] == 2 and sorted(entry["failed"]) == ["0", "1", "2"]
    assert chosen == {1: 3, 3: 3}
    # its inner scores are those the rule gives k_h = 5 when it is in the budget
    spec["tuning"].update(budget=2, space={"k_h": [5, 200]})
    _, _, alone = tuning.tune(spec, lambda p: make("i_mfa", p), X, y, 0, [1, 3])
    assert [entry["inner_scores"][k][3] for k in "13"] == [alone["inner_scores"][k][0]
                                                          for k in "13"]
    assert "beyond_budget" not in alone


def test_a_grid_none_of_whose_points_fits_fails_naming_the_first_reason(tmp_path):
    X, y = iris()
    spec = {"tuning": {"folds": 3, "budget": 2, "seed": 1, "space": {"k_h": [200, 300, 400]}},
            "split_file": str(tmp_path / "s.npz")}
    with pytest.raises(ValueError, match=r"whole grid of 3 tried.*k_h = 200"):
        tuning.tune(spec, lambda p: make("i_mfa", p), X, y, 0, [1])


def toy_config(tmp_path, **extra):
    return {"benchmark": "t", "data": {"cache": str(tmp_path)}, "k": [1, 3], "preprocess": [],
            "protocol": {"kind": "holdout", "repeats": 2, "train_fraction": 0.7},
            "datasets": {"toy-tune": None}, **extra}


@pytest.fixture
def toy(monkeypatch):
    X, y = iris()
    spec = data.DatasetSpec("toy-tune", "generator", *X.shape, 3,
                            lambda: RawData(X, y.astype(str)), keep_constant_features=True)
    monkeypatch.setitem(data.REGISTRY, "toy-tune", spec)


def test_without_tuning_the_job_identity_is_unchanged(tmp_path, toy):
    cfg = plan.check(toy_config(tmp_path, methods={"lmnn": None}))
    spec = plan.job_spec(cfg, "toy-tune", "lmnn", [0])
    assert spec["tuning"] is None and "tuning" not in plan.identity(spec)
    tuned = plan.check(toy_config(tmp_path, methods={"lmnn": None}, tuning={"budget": 4}))
    tuned_spec = plan.job_spec(tuned, "toy-tune", "lmnn", [0])
    assert tuned_spec["tuning"]["space"] == search_spaces.SPACES["lmnn"]
    assert tuned_spec["parent_key"] != spec["parent_key"]
    # the time limit of a tuned job covers its 2 + folds x candidates fits per split
    first = plan.jobs(cfg)[0]
    assert plan.job_resources(tuned, first)["runtime"] > plan.job_resources(cfg, first)["runtime"]


@pytest.mark.parametrize("extra, key", [
    ({"methods": {"itml": {"search_space": {"gamma": [0.0]}}}, "tuning": {}},
     "methods.itml.search_space.gamma"),
    ({"methods": {"itml": {"search_space": {"gamma": [1.0]}}}}, "methods.itml.search_space"),
    ({"methods": {"itml": None}, "tuning": {}, "k_selection": "loo"}, "tuning")])
def test_bad_tuning_configs_are_refused_at_their_key(tmp_path, toy, extra, key):
    with pytest.raises(ConfigError) as err:
        plan.check(toy_config(tmp_path, **extra))
    assert err.value.key == key


def test_a_tuned_job_records_its_tuning_and_evaluates_each_k_with_its_winner(tmp_path, toy):
    cfg = plan.check(toy_config(tmp_path, tuning={"folds": 3, "budget": 4},
                                methods={"pca": None, "euclidean": None}))
    ds = data.ensure("toy-tune", tmp_path)
    protocol = config.dataset_protocol(cfg, "toy-tune")
    protocols.save_splits(plan.split_path(cfg, "toy-tune"), protocols.make_splits(ds.y, protocol, 0),
                          protocol, 0, ds.meta["sha256"])
    out = {m: job.run(plan.job_spec(cfg, "toy-tune", m, [0, 1]), progress=False)
           for m in ("pca", "euclidean")}
    records.validate({"schema_version": 1, "records": out["pca"] + out["euclidean"]})
    for split in (0, 1):
        pca, euc = out["pca"][split], out["euclidean"][split]
        # the same inner folds for every method of the split
        assert pca["tuning"]["inner_folds"]["sha256"] == euc["tuning"]["inner_folds"]["sha256"]
        assert euc["tuning"]["inner_scores"] is None  # no hyperparameter
        split_obj, _ = protocols.load_split(plan.split_path(cfg, "toy-tune"), split)
        X, y = ds.X, ds.y
        for k in (1, 3):
            q = pca["tuning"]["chosen"][str(k)]["n_components"]
            Z = SkPCA(q).fit(X[split_obj.train]).transform(X)
            knn = KNeighborsClassifier(k, algorithm="brute").fit(Z[split_obj.train],
                                                                  y[split_obj.train])
            assert pca["metrics"][f"accuracy_k{k}"] == pytest.approx(
                knn.score(Z[split_obj.test], y[split_obj.test]))


def test_the_reality_check_config_is_valid():
    root = Path(__file__).resolve().parents[1]
    cfg = config.load(root / "config" / "reality-check.yaml")
    assert cfg["tuning"]["budget"] >= 1 and cfg["k"] == [1, 3, 5, 7]
    assert len(cfg["datasets"]) >= 30


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(n for n, s in search_spaces.SPACES.items() if s))
def test_every_value_of_every_space_fits(name):
    """Each value of each parameter (the others at their first value) fits and answers the k-NN
    rule on a small set: a space offers nothing its method cannot run (metric-learn's diagonal
    MMC, say, which keeps no iteration count)."""
    X, y = iris()
    X = X / X.max(axis=0)
    space = search_spaces.SPACES[name]
    first = {key: values[0] for key, values in space.items()}
    base = {"k_select": (1, 3)} if "k_select" in REGISTRY[name].parameter_names() else {}
    for key, values in space.items():
        for value in values:
            params = {**base, **first, key: value, **(
                {"m": 20} if key != "m" and "m" in space else {})}
            try:  # a size the data cannot take (5 components of 4 features) is the rule's skip
                REGISTRY[name].check_data_limits(REGISTRY[name].with_defaults(params), 75, 4, 3)
            except ParameterError:
                continue
            est = make(name, params)
            acc = tuning.inner_accuracies(est, X[::2], y[::2], X[1::2], y[1::2], [1, 3])
            assert 0.0 <= acc[3] <= 1.0, (key, value)


def test_a_plug_in_method_is_tuned_over_the_space_its_config_gives(tmp_path, toy):
    entry = {"class": "sklearn.neighbors:NeighborhoodComponentsAnalysis",
             "params": {"max_iter": 5}, "search_space": {"n_components": [2, 1]}}
    cfg = plan.check(toy_config(tmp_path, tuning={"budget": 4}, methods={"nca_sk": entry}))
    assert plan.job_spec(cfg, "toy-tune", "nca_sk", [0])["tuning"]["space"] == {
        "n_components": [2, 1]}
    entry = {**entry, "search_space": {"n_component": [2]}}
    with pytest.raises(ConfigError) as err:
        plan.check(toy_config(tmp_path, tuning={}, methods={"nca_sk": entry}))
    assert err.value.key == "methods.nca_sk.search_space.n_component"


def run_toy_jobs(tmp_path, methods, **extra):
    """Run the toy set's methods on two holdout splits; their records by method label."""
    cfg = plan.check(toy_config(tmp_path, tuning={"folds": 3, "budget": 4}, methods=methods,
                                **extra))
    ds = data.ensure("toy-tune", tmp_path)
    protocol = config.dataset_protocol(cfg, "toy-tune")
    protocols.save_splits(plan.split_path(cfg, "toy-tune"), protocols.make_splits(ds.y, protocol, 0),
                          protocol, 0, ds.meta["sha256"])
    out = {m: job.run(plan.job_spec(cfg, "toy-tune", m, [0, 1]), progress=False) for m in methods}
    records.validate({"schema_version": 1, "records": [r for rs in out.values() for r in rs]})
    return cfg, ds, out


def reference_pca_knn(ds, split, q, k):
    """scikit-learn's PCA with q components fitted on the training part, then brute k-NN."""
    Z = SkPCA(q).fit(ds.X[split.train]).transform(ds.X)
    knn = KNeighborsClassifier(k, algorithm="brute").fit(Z[split.train], ds.y[split.train])
    return knn.score(Z[split.test], ds.y[split.test])


@pytest.mark.parametrize("space, refit", [([1, 3], True), ([3, 1], False)])
def test_the_default_setting_is_evaluated_on_the_test_part_beside_the_tuned_one(
        tmp_path, toy, space, refit):
    """"Tuned against defaults": the first candidate's test accuracy at each k equals
    scikit-learn's PCA + k-NN at those parameters; when the rule chose it everywhere it is the
    main accuracy (no second fit); the main metrics stay those of the winners."""
    cfg, ds, out = run_toy_jobs(tmp_path, {"pca": {"search_space": {"n_components": space}}})
    for record in out["pca"]:
        entry = record["tuning"]
        split, _ = protocols.load_split(plan.split_path(cfg, "toy-tune"), record["split"]["index"])
        assert entry["candidates"][0] == {"n_components": space[0]}
        assert entry["default_refit"] is refit
        assert set(entry["chosen_index"].values()) == ({1} if refit else {0})
        assert entry["default_fit_wall_s"] >= 0 and entry["default_fit_cpu_s"] >= 0
        for k in (1, 3):
            default = entry["default_test_accuracy"][str(k)]
            assert default == pytest.approx(reference_pca_knn(ds, split, space[0], k))
            assert record["metrics"][f"accuracy_k{k}"] == pytest.approx(
                reference_pca_knn(ds, split, entry["chosen"][str(k)]["n_components"], k))
            if not refit:
                assert default == record["metrics"][f"accuracy_k{k}"]


def test_a_default_won_at_some_k_is_evaluated_at_the_others_without_a_second_fit():
    X, y = iris()
    train, test = np.arange(150) % 3 != 0, np.arange(150) % 3 == 0
    est = make("pca", {"n_components": 1}).fit(X[train], y[train])
    spec = {"k": [1, 3, 5], "hubness_k": 5}
    metrics = {"accuracy_k1": 0.5}  # the job's accuracy at the k the default won

    def no_refit():
        raise AssertionError("the default was fitted again")

    entry = job.tuned_default(spec, {1: 0, 3: 2, 5: 1}, metrics,
                              (est, {"fit_wall_s": 0.25, "fit_cpu_s": 0.5}), no_refit,
                              X[train], y[train], X[test], y[test])
    assert entry["default_refit"] is False and entry["default_fit_wall_s"] == 0.25
    assert entry["default_test_accuracy"]["1"] == 0.5
    Z = SkPCA(1).fit(X[train]).transform(X)
    for k in (3, 5):
        knn = KNeighborsClassifier(k, algorithm="brute").fit(Z[train], y[train])
        assert entry["default_test_accuracy"][str(k)] == pytest.approx(knn.score(Z[test], y[test]))


def test_a_default_the_training_part_cannot_take_is_recorded_as_failed():
    X, y = iris()
    entry = job.tuned_default({"k": [1], "hubness_k": 1}, {1: 1}, {}, None,
                              lambda: make("i_mfa", {"k_h": 200}), X[:90], y[:90], X[90:], y[90:])
    assert entry["default_test_accuracy"] is None and entry["default_refit"] is True
    assert "k_h = 200" in entry["default_failed"]


def test_a_local_metric_default_is_scored_by_its_own_neighbour_lists():
    """RMVEM's default fitted anew: its accuracy per k is MetricKNeighborsClassifier's (the
    k-NN rule on the local metric's list for that k)."""
    X, y = iris()
    train, test = np.arange(150) % 2 == 0, np.arange(150) % 2 == 1
    params = {"k_select": (1, 3), "eps": 1e-3, "m": 6}
    entry = job.tuned_default({"k": [1, 3], "hubness_k": 5}, {1: 1, 3: 1}, {}, None,
                              lambda: make("rmvem", params), X[train], y[train], X[test], y[test])
    assert entry["default_refit"] is True
    for k in (1, 3):
        ref = MetricKNeighborsClassifier(make("rmvem", params), n_neighbors=k)
        assert entry["default_test_accuracy"][str(k)] == pytest.approx(
            ref.fit(X[train], y[train]).score(X[test], y[test]))


PICKY = '''
import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin


class Picky(BaseEstimator, TransformerMixin):
    """Multiplies every feature by `scale` (the k-NN lists of every scale are the same); a
    scale other than 1 cannot be fitted on more than `most` points."""

    def __init__(self, scale=1.0, most=80):
        self.scale, self.most = scale, most

    def fit(self, X, y=None):
        if self.scale != 1.0 and len(X) > self.most:
            raise ValueError(f"Picky: {len(X)} points, at most {self.most}")
        self.n_features_in_ = np.asarray(X).shape[1]
        return self

    def transform(self, X):
        return self.scale * np.asarray(X, dtype=float)
'''


def test_a_winner_the_whole_training_part_cannot_take_gives_way_to_the_next_ranked(
        tmp_path, toy):
    """Candidate 0 (scale 2) ties with candidate 1 on the inner folds (70 training points) and
    wins the tie, but cannot be fitted on the whole training part (105 points): the
    next-ranked candidate takes its ks, the record says why, and the accuracies are those of
    the Euclidean k-NN (what scale 1 gives)."""
    plugin = tmp_path / "picky.py"
    plugin.write_text(PICKY)
    entry = {"class": f"{plugin}:Picky", "search_space": {"scale": [2.0, 1.0]}}
    cfg, ds, out = run_toy_jobs(tmp_path, {"picky": entry})
    for record in out["picky"]:
        tuning_entry = record["tuning"]
        assert tuning_entry["inner_scores"]["1"][0] == tuning_entry["inner_scores"]["1"][1]
        assert "at most 80" in tuning_entry["refit_failed"]["0"]
        assert tuning_entry["chosen_index"] == {"1": 1, "3": 1}
        assert tuning_entry["chosen"]["1"] == {"scale": 1.0}
        assert "at most 80" in tuning_entry["default_failed"]
        split, _ = protocols.load_split(plan.split_path(cfg, "toy-tune"), record["split"]["index"])
        for k in (1, 3):
            knn = KNeighborsClassifier(k, algorithm="brute").fit(ds.X[split.train],
                                                                  ds.y[split.train])
            assert record["metrics"][f"accuracy_k{k}"] == pytest.approx(
                knn.score(ds.X[split.test], ds.y[split.test]))


def test_a_job_fails_naming_the_reason_when_no_candidate_fits_the_training_part(tmp_path, toy):
    plugin = tmp_path / "picky.py"
    plugin.write_text(PICKY)
    entry = {"class": f"{plugin}:Picky", "search_space": {"scale": [2.0, 3.0]}}
    with pytest.raises(ValueError, match="no candidate could be fitted on the training part"):
        run_toy_jobs(tmp_path, {"picky": entry})

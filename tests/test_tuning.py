"""Equal tuning (`run.tuning`, `methods.search_spaces`): the spaces are valid data, the rule's
inner scores and choices equal scikit-learn's GridSearchCV on the same inner folds, and a
config without `tuning` is planned exactly as before."""

import itertools
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.decomposition import PCA as SkPCA
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline

from dmlbench import MetricKNeighborsClassifier, config, data, records
from dmlbench.config import ConfigError
from dmlbench.data.embedded import RawData
from dmlbench.methods import REGISTRY, make, search_spaces, space_resolution
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


#: facts of inner training parts to resolve the spaces on: iris-like, and wider, larger data
FACTS = [space_resolution.Facts(n=70, d=4, classes=3, smallest_class=23, largest_class=24),
         space_resolution.Facts(n=600, d=60, classes=2, smallest_class=250, largest_class=350)]


@pytest.mark.parametrize("name", sorted(search_spaces.SPACES))
def test_every_space_is_valid_for_its_method_and_every_point_is_accepted(name):
    cls = REGISTRY[name]
    space = search_spaces.SPACES[name]
    search_spaces.check(space, cls)
    assert search_spaces.grid_size(space) <= 40  # the budget study's full grid
    for facts in FACTS:
        values, _ = space_resolution.resolve(space, facts)
        points, dropped = space_resolution.feasible_points(space, values, cls, {}, facts)
        assert points and all(set(p) == set(space) for p in points)
        for point in points:
            cls.check_parameters(point)
            cls.check_data_limits(cls.with_defaults(point), facts.n, facts.d, facts.classes)
        for drop in dropped:  # only the point requirement of NCA's identity start
            assert drop["point"]["init"] == "identity" and drop["point"]["n_components"]


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


class Free:
    """A method that takes any parameters (to look at the grid and the draw alone)."""

    @staticmethod
    def check_parameters(params):
        pass

    @staticmethod
    def with_defaults(params):
        return params


def feasible(space, facts=FACTS[0]):
    values, _ = space_resolution.resolve(space, facts)
    return space_resolution.feasible_points(space, values, Free, {}, facts)[0]


def test_the_grid_is_walked_in_declared_order():
    space = {"b": [2, 1], "a": ["z", "x", "y"]}
    expected = [{"b": b, "a": a} for b, a in itertools.product([2, 1], ["z", "x", "y"])]
    assert feasible(space) == expected
    assert feasible({}) == [{}]
    assert space_resolution.draw(6, 6, 0) == list(range(6))  # the full grid within the budget


def test_a_larger_grid_is_drawn_reproducibly_nested_and_in_declared_order():
    drawn = space_resolution.draw(100, 7, 5)
    assert drawn == space_resolution.draw(100, 7, 5)
    assert len(set(drawn)) == 7 and drawn == sorted(drawn)
    assert drawn[0] == 0  # the declared default is always among them
    assert set(space_resolution.draw(100, 4, 5)) < set(drawn) < set(
        space_resolution.draw(100, 16, 5))  # a smaller budget's draw within a larger one's
    assert space_resolution.draw(100, 1, 5) == [0]
    # a uniform draw: each of the 99 others is drawn with probability 6 / 99 over seeds
    counts = np.bincount([i for seed in range(3000) for i in space_resolution.draw(100, 7, seed)],
                         minlength=100)
    assert counts[0] == 3000
    assert counts[1:].min() > 3000 * 6 / 99 * 0.6 and counts[1:].max() < 3000 * 6 / 99 * 1.4


def test_each_data_set_and_split_draws_its_own_candidates():
    seeds = {(ds, split): tuning.draw_seed(0, ds, split) for ds in ("iris", "wine")
             for split in range(5)}
    assert len(set(seeds.values())) == 10
    assert tuning.draw_seed(0, "iris", 3) == seeds["iris", 3]  # reproducible
    assert tuning.draw_seed(1, "iris", 3) != seeds["iris", 3]
    draws = {key: tuple(space_resolution.draw(40, 4, seed)) for key, seed in seeds.items()}
    assert len(set(draws.values())) > 5


@pytest.mark.parametrize("space, parameter", [
    ({"gamma": [1.0, 1.0]}, "gamma"), ({"gamma": []}, "gamma"), ({"gama": [1.0]}, "gama"),
    ({"gamma": [-1.0]}, "gamma"), ({"gamma": {"values": [1.0], "maximum": 3}}, "gamma"),
    ({"gamma": {"values": [1.0], "from": 1, "to": 2, "points": 2}}, "gamma"),
    ({"gamma": {"from": 1, "to": "d ** 2", "points": 2}}, "gamma"),
    ({"gamma": {"values": [1.0, 2.0], "max": "d"}}, "gamma"),
    ({"gamma": {"values": [1.0], "needs": {"sunshine": [1.0]}}}, "gamma")])
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


def run_tune(tmp_path, name, space, X, y, split, ks, budget=10, seed=0, params=None,
             build=None, time_limit=None):
    """`tuning.tune` of registered method `name` (its class judges the points; `build` makes
    the estimators, by default the method with `params` and the candidate) on data set 'iris'."""
    params = params or {}
    spec = {"tuning": {"folds": 3, "budget": budget, "seed": seed, "time_limit": time_limit,
                       "space": search_spaces.as_pairs(space)},
            "split_file": str(tmp_path / "s.npz"), "method": {"params": params},
            "dataset": {"name": "iris"}}
    build = build or (lambda p: make(name, {**params, **p}))
    return tuning.tune(spec, build, X, y, split, ks, REGISTRY[name])


def test_inner_scores_and_choice_equal_grid_search_cv_for_pca(tmp_path):
    """PCA's output dimension: GridSearchCV over scikit-learn's PCA + brute-force k-NN."""
    X, y = iris()
    space = {"n_components": [1, 2, 3, 4]}
    chosen, tried, entry = run_tune(tmp_path, "pca", space, X, y, 1, [1, 5, 15], seed=3)
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
    base = {"k_select": (1, 3), "eps": 1e-3}
    chosen, _, entry = run_tune(tmp_path, "rmvem", space, X, y, 0, [1, 3], params=base)
    for k in (1, 3):
        ref = GridSearchCV(MetricKNeighborsClassifier(make("rmvem", base), n_neighbors=k),
                           {"metric__m": [6, 12]}, cv=reference_cv(0, 0)).fit(X, y)
        np.testing.assert_allclose(entry["inner_scores"][str(k)],
                                   ref.cv_results_["mean_test_score"], atol=1e-12)
        assert chosen[k] == ref.best_index_


def test_a_value_the_inner_training_parts_cannot_take_is_dropped_not_tried(tmp_path):
    X, y = iris()
    chosen, tried, entry = run_tune(tmp_path, "i_mfa", {"k_h": [5, 200]}, X, y, 0, [1])
    assert tried == [{"k_h": 5}] and chosen == {1: 0} and entry["failed"] == {}
    assert entry["grid_size"] == 1
    assert entry["dropped"] == [{"point": {"k_h": 200}, "reason": "k_h = 200 exceeds the "
                                 "n_train - 1 = 99 other training points"}]


def fussy_build(refuse, error=ValueError):
    """Estimators of the rule's `build`: PCA with the candidate's n_components, whose fit raises
    `error` when n_components is in `refuse` (PCA's class judges the points: 1 .. 4 are all
    feasible on iris)."""
    def build(params):
        est = make("pca", params)
        if params["n_components"] in refuse:
            def fit(*args, **kwargs):
                raise error(f"Fussy: value {params['n_components']}")
            est.fit = fit
        return est
    return build


def test_when_no_budgeted_candidate_fits_the_rest_of_the_grid_is_tried_in_order(tmp_path):
    """Budget 2 over 1 .. 4: the default 1 and one drawn value both fail; the rest of the
    feasible grid in declared order until one fits (4, the only one that does)."""
    X, y = iris()
    space = {"n_components": [1, 2, 3, 4]}
    drawn = space_resolution.draw(4, 2, tuning.draw_seed(1, "iris", 0))
    chosen, tried, entry = run_tune(tmp_path, "pca", space, X, y, 0, [1, 3], budget=2, seed=1,
                                    build=fussy_build({1, 2, 3}))
    rest = [q for q in (1, 2, 3, 4) if q - 1 not in drawn]
    assert [c["n_components"] for c in tried] == [1 + i for i in drawn] + rest
    assert entry["beyond_budget"] == len(rest) and len(entry["failed"]) == len(tried) - 1
    assert tried[-1] == {"n_components": 4} and chosen == {1: len(tried) - 1, 3: len(tried) - 1}
    assert entry["failed"]["0"] == "ValueError: Fussy: value 1"


def test_a_grid_none_of_whose_points_fits_fails_naming_the_first_reason(tmp_path):
    X, y = iris()
    with pytest.raises(ValueError, match=r"all 4 feasible points tried.*Fussy: value 1"):
        run_tune(tmp_path, "pca", {"n_components": [1, 2, 3, 4]}, X, y, 0, [1], budget=2,
                 build=fussy_build({1, 2, 3, 4}))
    with pytest.raises(ValueError, match=r"no point of the search space fits.*k_h = 200"):
        run_tune(tmp_path, "i_mfa", {"k_h": [200, 300]}, X, y, 0, [1])


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
    assert tuned_spec["tuning"]["space"] == search_spaces.as_pairs(search_spaces.SPACES["lmnn"])
    assert tuned_spec["parent_key"] != spec["parent_key"]
    # the time limit of a tuned job covers its 2 + folds x candidates fits per split
    first = plan.jobs(cfg)[0]
    assert plan.job_resources(tuned, first)["runtime"] > plan.job_resources(cfg, first)["runtime"]


@pytest.mark.parametrize("extra, key", [
    ({"methods": {"itml": {"search_space": {"gamma": [0.0]}}}, "tuning": {}},
     "methods.itml.search_space.gamma"),
    ({"methods": {"itml": {"search_space": {"gamma": [1.0]}}}}, "methods.itml.search_space"),
    ({"methods": {"itml": None}, "tuning": {}, "k_selection": "loo"}, "tuning"),
    ({"methods": {"itml": {"tuning": {"budget": 4}}}}, "methods.itml.tuning"),
    ({"methods": {"rmvem": {"search_space": {"m": {"from": "d + x", "to": "3 * d",
                                                   "points": 4}}}}, "tuning": {}},
     "methods.rmvem.search_space.m"),
    ({"methods": {"klhp": {"search_space": {"K": {"values": [1, 2], "needs": {
        "regular_within_class_scatter": [3]}}}}}, "tuning": {}},
     "methods.klhp.search_space.K")])
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
        split_obj, _ = protocols.load_split(plan.split_path(cfg, "toy-tune"), split)
        X, y = ds.X, ds.y
        # no hyperparameter, but its inner scores per k (what choosing k by the inner folds
        # needs): scikit-learn's k-NN on the same inner folds
        assert euc["tuning"]["candidates"] == [{}] and euc["tuning"]["failed"] == {}
        for k in (1, 3):
            ref = cross_val_score(KNeighborsClassifier(k, algorithm="brute"), X[split_obj.train],
                                  y[split_obj.train], cv=reference_cv(0, split))
            assert euc["tuning"]["inner_scores"][str(k)] == [pytest.approx(ref.mean(), abs=1e-12)]
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
    """Each value of each parameter, as resolved on a small set (the others at their first
    value), fits and answers the k-NN rule: a space offers nothing its method cannot run
    (metric-learn's diagonal MMC, say, which keeps no iteration count)."""
    X, y = iris()
    X = X / X.max(axis=0)
    cls = REGISTRY[name]
    space = search_spaces.SPACES[name]
    parts = [(X[::2], y[::2])]
    facts = space_resolution.facts_of(parts)
    values, _ = space_resolution.resolve(space, facts, parts)
    points, _ = space_resolution.feasible_points(space, values, cls, {}, facts)
    base = {"k_select": (1, 3)} if "k_select" in cls.parameter_names() else {}
    for key, value in ((key, value) for key, vs in values.items() for value in vs):
        point = next((p for p in points if p[key] == value), None)
        assert point is not None, (key, value)  # every resolved value is in a feasible point
        est = make(name, {**base, **point})
        acc = tuning.inner_accuracies(est, X[::2], y[::2], X[1::2], y[1::2], [1, 3])
        assert 0.0 <= acc[3] <= 1.0, (key, value)


def test_a_plug_in_method_is_tuned_over_the_space_its_config_gives(tmp_path, toy):
    entry = {"class": "sklearn.neighbors:NeighborhoodComponentsAnalysis",
             "params": {"max_iter": 5}, "search_space": {"n_components": [2, 1]}}
    cfg = plan.check(toy_config(tmp_path, tuning={"budget": 4}, methods={"nca_sk": entry}))
    assert plan.job_spec(cfg, "toy-tune", "nca_sk", [0])["tuning"]["space"] == [
        ["n_components", [2, 1]]]
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

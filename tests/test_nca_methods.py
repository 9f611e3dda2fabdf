"""The NCA family's methods: each improves its own objective, initialisations, optimisers,
early stopping, annealing, the NCA rule, bad input and the documented non-finite handling."""

import numpy as np
import pytest

from dmlbench.methods import REGISTRY, make
from dmlbench.solvers import nca_objective

FAMILY = sorted(name for name, cls in REGISTRY.items() if cls.family == "nca")


def overlapping(n=90, D=4, seed=0):
    """Three overlapping classes separated along one direction, plus noise dimensions."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], n // 3)
    X = rng.normal(size=(n, D))
    X[:, 0] += 1.2 * y
    X[:, 1] *= 3.0  # a loud irrelevant feature
    return X, y


def test_the_family_has_the_thesis_variants():
    assert FAMILY == ["nca", "nca_cs", "nca_cs_back", "nca_mb", "nca_sl", "nca_sl_kd", "nca_ss"]


NO_HOLDOUT = {"validation_fraction": 0.0}  # 5% of 90 points is too noisy a stopping signal
VARIANT_PARAMS = {
    "nca": {}, "nca_ss": {"n_samples": 60},
    "nca_mb": {"batch_size": 30, "max_iter": 60, **NO_HOLDOUT},
    "nca_sl": {"batch_size": 10, "max_iter": 60, **NO_HOLDOUT},
    "nca_sl_kd": {"batch_size": 10, "max_iter": 40, "epsilon_max": 0.1, "leaf_size": 4,
                  **NO_HOLDOUT},
    "nca_cs": {"init_scale": 0.5}, "nca_cs_back": {"init_scale": 0.5},
}


@pytest.mark.parametrize("name", FAMILY)
def test_each_variant_improves_its_objective_from_its_initialisation(name):
    X, y = overlapping()
    est = make(name, {"n_components": 2, "init": "random", "random_state": 0,
                      **VARIANT_PARAMS[name]}).fit(X, y)
    start = est.model_objective(est.init_components_)
    assert est.model_objective() > start + 0.02
    info = est.fit_info()
    assert info["n_iter"] >= 1 and len(info["objective"]) >= 1
    assert info["time_to_convergence_s"] >= 0 and 0 < info["visited_fraction"] <= 1


def test_compact_support_visits_only_pairs_inside_the_support():
    X, y = overlapping()
    info = make("nca_cs", {"n_components": 2, "random_state": 0}).fit(X, y).fit_info()
    assert info["visited_fraction"] < 0.5


@pytest.mark.parametrize("optimizer", ["cg", "lbfgs", "bold_driver"])
def test_full_batch_optimisers_reach_a_stationary_point(optimizer):
    X, y = overlapping()
    est = make("nca", {"n_components": 2, "optimizer": optimizer, "max_iter": 300,
                       "tol": 1e-7}).fit(X, y)
    _, grad = nca_objective.objective(est.components_, X, y)
    _, grad0 = nca_objective.objective(est.init_components_, X, y)
    assert np.linalg.norm(grad) < 0.2 * np.linalg.norm(grad0)


def test_initialisations():
    X, y = overlapping(D=5)
    whitened = make("nca", {"n_components": 3, "init": "pca"})._initial(
        X, y, np.random.default_rng(0))
    Z = (X - X.mean(axis=0)) @ whitened.T
    np.testing.assert_allclose(np.cov(Z.T, bias=True), np.eye(3), atol=1e-8)  # eq. 3.15
    lda = make("nca", {"n_components": 4, "init": "lda"})._initial(X, y, np.random.default_rng(0))
    assert lda.shape == (4, 5)  # past the C - 1 = 2 discriminant directions
    for init in ("random", "rca", "identity"):
        d = 5 if init == "identity" else 2
        A0 = make("nca", {"n_components": d, "init": init})._initial(X, y, np.random.default_rng(0))
        assert A0.shape == (d, 5) and np.all(np.isfinite(A0))


def test_early_stopping_returns_the_best_held_out_iterate():
    X, y = overlapping(n=150)
    est = make("nca_sl", {"n_components": 2, "batch_size": 10, "max_iter": 3000, "eval_every": 1,
                          "validation_fraction": 0.2, "patience": 5, "eta": 5.0, "t0": 1.0,
                          "random_state": 0}).fit(X, y)
    info = est.fit_info()
    assert info["stop_reason"].startswith("early stopping")
    scores = info["validation_score"]
    assert len(scores) == info["n_iter"] and info["n_iter"] < 3000
    assert scores[info["best_iteration"] - 1] == max(scores)
    best_A = est.history_[info["best_iteration"] - 1][1]
    np.testing.assert_array_equal(est.components_, best_A)


def test_dimensionality_annealing_ends_at_rank_d():
    X, y = overlapping(D=4)
    est = make("nca", {"n_components": 1, "anneal": True, "anneal_steps": 2, "max_iter": 20,
                       "init": "rca"}).fit(X, y)
    assert est.init_components_.shape == (4, 4) and est.components_.shape == (1, 4)
    # the kept direction is the class-separating feature 0, not the loud feature 1
    direction = est.components_[0] / np.linalg.norm(est.components_[0])
    assert abs(direction[0]) > 0.9


def test_nca_rule_is_eq_3_25_against_the_training_set():
    X, y = overlapping()
    Xq = overlapping(seed=3)[0][:20]
    est = make("nca", {"n_components": 2, "max_iter": 10}).fit(X, y + 10)  # labels kept as given
    Z, Zq = est.transform(X), est.transform(Xq)
    K = np.exp(-np.sum((Zq[:, None] - Z[None]) ** 2, axis=2))
    expected = np.array([10, 11, 12])[np.argmax([K[:, y == c].sum(axis=1) for c in range(3)],
                                                axis=0)]
    np.testing.assert_array_equal(est.predict_nca_rule(Xq), expected)
    metrics = est.extra_metrics(Xq, expected)
    assert metrics["accuracy_nca_rule"] == 1.0 and 0 < metrics["nca_train_score"] <= 1


def test_two_dimensional_metrics_keep_the_test_embedding():
    X, y = overlapping()
    est = make("nca", {"n_components": 2, "max_iter": 5}).fit(X, y)
    arrays = est.artifacts(X[:7], y[:7])
    np.testing.assert_allclose(arrays["test_embedding"], est.transform(X[:7]))
    assert make("nca", {"n_components": 3, "max_iter": 5}).fit(X, y).artifacts(X, y) == {}


@pytest.mark.parametrize("clustering", ["random", "fpc", "rpc"])
def test_mini_batch_clusterings_run(clustering):
    X, y = overlapping()
    est = make("nca_mb", {"n_components": 2, "batch_size": 30, "clustering": clustering,
                          "max_iter": 12, "validation_fraction": 0.0, "random_state": 0})
    assert est.fit(X, y).fit_info()["n_iter"] == 12


# ---- bad input --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", FAMILY)
def test_more_components_than_features_is_an_error(name):
    X, y = overlapping(D=3)
    with pytest.raises(ValueError, match="n_components must be an integer in \\[1, 3\\]"):
        make(name, {"n_components": 4}).fit(X, y)


@pytest.mark.parametrize("name", FAMILY)
def test_a_class_with_one_sample_is_an_error(name):
    X, y = overlapping()
    y = y.copy()
    y[0] = 7
    with pytest.raises(ValueError, match="\\[7\\] have a single training sample"):
        make(name, {"n_components": 2}).fit(X, y)


def test_an_initial_A_that_overflows_is_an_error():
    X, y = overlapping()
    with pytest.raises(ValueError, match="initial A .* non-finite"):
        make("nca", {"n_components": 2, "init": np.full((2, 4), 1e200)}).fit(X, y)


@pytest.mark.parametrize("name, params", [("nca", {"optimizer": "cg"}),
                                          ("nca", {"optimizer": "lbfgs"}),
                                          ("nca_sl", {"batch_size": 10})])
def test_an_exploding_A_stops_with_the_last_finite_iterate(monkeypatch, name, params):
    real, calls = nca_objective.objective, {"n": 0}

    def exploding(A, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] > 6:
            raise nca_objective.NonFiniteObjective("the projection A x overflows: A exploded")
        return real(A, *args, **kwargs)

    monkeypatch.setattr(nca_objective, "objective", exploding)
    X, y = overlapping()
    est = make(name, {"n_components": 2, "max_iter": 50, "validation_fraction": 0.0,
                      "random_state": 0, **params})
    if name == "nca_sl":
        est.set_params(eval_every=1)
    est.fit(X, y)
    assert "non-finite objective" in est.fit_info()["stop_reason"]
    assert np.all(np.isfinite(est.components_))


def test_bold_driver_treats_an_overflowing_step_as_a_failed_one():
    X, y = overlapping()
    est = make("nca", {"n_components": 2, "optimizer": "bold_driver", "learning_rate": 1e160,
                       "max_iter": 600}).fit(X, y)
    assert np.all(np.isfinite(est.components_))
    assert est.model_objective() > est.model_objective(est.init_components_)


@pytest.mark.parametrize("name, params, message", [
    ("nca", {"optimizer": "newton"}, "optimizer must be one of"),
    ("nca_mb", {"clustering": "kmeans"}, "clustering must be one of"),
    ("nca_cs", {"optimizer": "sgd", "batch_size": None}, "needs a batch_size"),
    ("nca_sl", {"t0": 0}, "t0 must be a number > 0"),
    ("nca_sl_kd", {"epsilon_max": -1}, "epsilon_max must be a number >= 0"),
    ("nca", {"validation_fraction": 0.7}, "validation_fraction"),
    ("nca_cs_back", {"beta": 1.5}, "beta must be a number in \\[0, 1\\)"),
])
def test_bad_parameters_are_named(name, params, message):
    X, y = overlapping()
    with pytest.raises(ValueError, match=message):
        make(name, {"n_components": 2, **params}).fit(X, y)

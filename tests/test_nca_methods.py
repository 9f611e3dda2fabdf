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


def sklearn_f(A, X, y):
    """f(A) / N by scikit-learn's NCA loss, the independent reference."""
    from sklearn.neighbors import NeighborhoodComponentsAnalysis

    sk = NeighborhoodComponentsAnalysis()
    sk.n_iter_, sk.verbose = 1, 0
    return sk._loss_grad_lbfgs(np.ravel(A), X, y[:, None] == y[None, :], 1.0)[0] / y.size


def compact_support_f(A, X, y):
    """f_CS / N written from eq. 4.16-4.18: k_ij = (1 - d_ij^2)^2 inside the unit ball (c_d
    cancels in the ratio), p_i = own-class share of k_i. (0 for an isolated point)."""
    Z = X @ A.T
    d2 = np.sum((Z[:, None] - Z[None]) ** 2, axis=2)
    k = np.where(d2 < 1, (1 - d2) ** 2, 0.0)
    np.fill_diagonal(k, 0.0)
    total, own = k.sum(axis=1), (k * (y[:, None] == y[None])).sum(axis=1)
    return float(np.mean(np.where(total > 0, own / np.where(total > 0, total, 1), 0.0)))


@pytest.mark.parametrize("name", FAMILY)
def test_each_variant_improves_its_objective_from_its_initialisation(name):
    """Measured independently: scikit-learn's NCA loss on the points the metric is learnt from
    (the compact-support variants also by eq. 4.16-4.18 written out), at the start and the end."""
    X, y = overlapping()
    est = make(name, {"n_components": 2, "init": "random", "random_state": 0,
                      **VARIANT_PARAMS[name]}).fit(X, y)
    A0, A = est.init_components_, est.components_
    X_fit, y_fit = est._fit_data
    gain = sklearn_f(A, X_fit, y_fit) - sklearn_f(A0, X_fit, y_fit)
    assert gain > 0.15  # NCA's own criterion improves for every variant
    if name in ("nca", "nca_ss", "nca_mb", "nca_sl"):  # the exact Gaussian model
        for B in (A0, A):
            assert est.model_objective(B) == pytest.approx(sklearn_f(B, X_fit, y_fit), rel=1e-9)
    elif name == "nca_sl_kd":  # within the k-d tree's bound: class sums within epsilon
        eps = VARIANT_PARAMS[name]["epsilon_max"]
        assert abs(est.model_objective() - sklearn_f(A, X_fit, y_fit)) <= 2 * eps / (1 - eps)
    else:
        assert est.model_objective() > est.model_objective(A0) + 0.15
        if name == "nca_cs":
            for B in (A0, A):
                assert est.model_objective(B) == pytest.approx(compact_support_f(B, X_fit, y_fit),
                                                               rel=1e-9)
    info = est.fit_info()
    assert info["n_iter"] >= 1 and len(info["objective"]) >= 1
    assert info["time_to_convergence_s"] >= 0 and 0 < info["visited_fraction"] <= 1


def test_compact_support_visits_only_pairs_inside_the_support():
    X, y = overlapping()
    info = make("nca_cs", {"n_components": 2, "random_state": 0}).fit(X, y).fit_info()
    assert info["visited_fraction"] < 0.5


@pytest.mark.parametrize("optimizer", ["cg", "lbfgs", "bold_driver"])
def test_full_batch_optimisers_reach_the_regularised_optimum(optimizer):
    """With reg = 1 the maximiser of f - ||A||^2 is finite; each optimiser reaches the one that
    scipy's L-BFGS finds on scikit-learn's loss from the same start (independent objective,
    gradient and optimiser), and the independent gradient vanishes there."""
    from scipy.optimize import minimize

    X, y = overlapping()
    est = make("nca", {"n_components": 2, "optimizer": optimizer, "max_iter": 1000, "tol": 1e-10,
                       "reg": 1.0}).fit(X, y)
    n = y.size

    def f_and_grad(a):
        from sklearn.neighbors import NeighborhoodComponentsAnalysis

        sk = NeighborhoodComponentsAnalysis()
        sk.n_iter_, sk.verbose = 1, 0
        f, g = sk._loss_grad_lbfgs(a, X, y[:, None] == y[None, :], 1.0)
        return f - a @ a, g - 2 * a

    a0 = est.init_components_.ravel()
    ref = minimize(lambda a: tuple(-v for v in f_and_grad(a)), a0, jac=True,
                   method="L-BFGS-B", options={"maxiter": 5000, "ftol": 1e-15, "gtol": 1e-10})
    f, g = f_and_grad(est.components_.ravel())
    assert f == pytest.approx(-ref.fun, rel=1e-7)
    assert np.linalg.norm(g) < 1e-3 * np.linalg.norm(f_and_grad(a0)[1])
    assert est.model_objective() == pytest.approx((f + est.components_.ravel() @
                                                   est.components_.ravel()) / n, rel=1e-10)


def test_initialisations():
    """Section 3.3.2, each start by its defining property, computed independently."""
    X, y = overlapping(D=5)
    rng = np.random.default_rng(0)
    whitened = make("nca", {"n_components": 3, "init": "pca"})._initial(X, y, rng)
    Z = (X - X.mean(axis=0)) @ whitened.T
    np.testing.assert_allclose(np.cov(Z.T, bias=True), np.eye(3), atol=1e-8)  # eq. 3.15
    # LDA (eq. 3.16-3.17): generalised eigenvectors of (S_B, S_W), by decreasing eigenvalue,
    # continued past the C - 1 = 2 discriminant directions
    lda = make("nca", {"n_components": 4, "init": "lda"})._initial(X, y, rng)
    assert lda.shape == (4, 5)
    S_T = np.cov(X.T, bias=True)
    S_W = sum(np.mean(y == c) * np.cov(X[y == c].T, bias=True) for c in range(3))
    S_B = S_T - S_W
    ratio = np.array([a @ S_B @ a / (a @ S_W @ a) for a in lda])
    for a, lam in zip(lda, ratio):
        np.testing.assert_allclose(S_B @ a, lam * S_W @ a, atol=1e-9 * np.linalg.norm(S_W @ a))
    assert np.all(np.diff(ratio) <= 1e-12) and ratio[1] > 1e-3 > abs(ratio[2])
    # RCA (whole-class chunklets): the within-class scatter becomes isotropic
    rca = make("nca", {"n_components": 2, "init": "rca"})._initial(X, y, rng)
    W = rca @ S_W @ rca.T
    np.testing.assert_allclose(W, W[0, 0] * np.eye(2), atol=1e-9 * W[0, 0])
    random = make("nca", {"n_components": 2, "init": "random"})._initial(
        X, y, np.random.default_rng(7))
    np.testing.assert_array_equal(random,
                                  np.random.default_rng(7).standard_normal((2, 5)) / np.sqrt(5))
    identity = make("nca", {"n_components": 5, "init": "identity"})._initial(X, y, rng)
    np.testing.assert_array_equal(identity, np.eye(5))


def _row_space_projector(A):
    Q, _ = np.linalg.qr(A.T)
    return Q @ Q.T


def test_rca_starts_below_full_rank():
    """'rca' below full rank is RCA after the constrained Fisher discriminant (Bar-Hillel et al.
    2005): its rows span the leading generalised eigenvectors of (S_B, S_W); 'rca_top' is eq.
    3.17's S_W^(-1/2) on the leading eigenvectors of S_W (sect. 3.3.2's rule for PCA). Both
    against scipy's eigensolvers on scatter matrices summed class by class."""
    from scipy.linalg import eigh

    rng = np.random.default_rng(4)
    y = np.repeat([0, 1, 2], 60)
    X = rng.normal(size=(180, 5)) * np.array([1.0, 3.0, 0.5, 2.0, 0.2])
    X[:, 0] += 1.5 * y
    X[:, 2] += 0.8 * (y == 1)
    S_T = np.cov(X.T, bias=True)
    S_W = sum(np.mean(y == c) * np.cov(X[y == c].T, bias=True) for c in range(3))
    S_B = S_T - S_W
    rca = make("nca", {"n_components": 2, "init": "rca"})._initial(X, y, rng)
    _, fisher = eigh(S_B, S_W, subset_by_index=[3, 4])
    np.testing.assert_allclose(_row_space_projector(rca), _row_space_projector(fisher.T),
                               atol=1e-8)
    top = make("nca", {"n_components": 2, "init": "rca_top"})._initial(X, y, rng)
    np.testing.assert_allclose(top @ S_W @ top.T, np.eye(2), atol=1e-9)
    _, leading = eigh(S_W, subset_by_index=[3, 4])
    np.testing.assert_allclose(_row_space_projector(top), _row_space_projector(leading.T),
                               atol=1e-8)
    full = make("nca", {"n_components": None, "init": "rca_top"})._initial(X, y, rng)
    np.testing.assert_allclose(full.T @ full, np.linalg.inv(S_W), rtol=1e-8)
    # a feature constant within every class: S_W has rank 4, enough for d <= 4 only
    X[:, 4] = y
    assert make("nca", {"n_components": 4, "init": "rca_top"})._initial(X, y, rng).shape == (4, 5)
    with pytest.raises(ValueError, match="init='rca_top'.* rank 4, fewer than n_components = 5"):
        make("nca", {"n_components": 5, "init": "rca_top"})._initial(X, y, rng)


def test_random_unit_start_has_standard_normal_entries_and_the_random_start_is_scaled():
    """Scale of the two random starts (the thesis leaves it open): `random_unit` draws entries
    N(0, 1) as scikit-learn's init='random', so z-scored data project to coordinates of variance
    about D (= tr of their correlation matrix); `random` is the same draw divided by sqrt(D)."""
    D, n = 64, 400
    rng = np.random.default_rng(3)
    X = rng.normal(size=(n, D)) @ rng.normal(size=(D, D))
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    y = np.arange(n) % 2
    unit = make("nca", {"init": "random_unit"})._initial(X, y, np.random.default_rng(5))
    scaled = make("nca", {"init": "random"})._initial(X, y, np.random.default_rng(5))
    assert unit.shape == scaled.shape == (D, D)
    # mean square entry: 1 +- 0.025 (s.d. of a mean of D^2 squared normals) for random_unit
    assert abs(np.mean(unit ** 2) - 1.0) < 0.15
    assert abs(np.mean(scaled ** 2) - 1.0 / D) < 0.15 / D
    np.testing.assert_allclose(unit, scaled * np.sqrt(D), rtol=1e-12)
    # projected z-scored data: per-coordinate variance about D against about 1
    assert 0.6 * D < np.mean((X @ unit.T).var(axis=0)) < 1.5 * D
    assert 0.6 < np.mean((X @ scaled.T).var(axis=0)) < 1.5


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


@pytest.mark.parametrize("unit, stops_at", [("checks", 20), ("updates", 10)])
def test_patience_counts_checks_or_updates(unit, stops_at):
    """A held-out score that peaks at the first check (update 5) and never gains again, checked
    every 5 updates, patience 3: 3 checks without a gain stop at update 20, 3 updates since the
    best at the next check, update 10."""
    from dmlbench.methods.nca import Monitor

    mon = Monitor(lambda A: 1.0 if mon.n_iter == 5 else 0.5, 3, unit)
    for t in range(5, 1000, 5):
        mon.n_iter = t
        if mon.log(np.eye(2), 0.0):
            break
    assert (mon.best_iter, mon.n_iter) == (5, stops_at)
    assert mon.stop_reason.startswith("early stopping") and unit in mon.stop_reason


def _held_out(seed=0):
    X, y = overlapping(n=60, seed=seed)
    rng = np.random.default_rng(seed + 1)
    return X[:45], y[:45], X[45:], y[45:], rng.normal(size=(2, X.shape[1]))


def test_the_held_out_accuracy_by_the_nca_rule_and_by_1nn_against_written_out_rules():
    """`nca_rule`: argmax over classes of sum_j exp(-||A x - A x_j||^2) (eq. 3.25) written
    out; `1nn`: scikit-learn's 1-NN on the projected points; `mean_p` the mean p of the true
    class, the same sums."""
    from sklearn.neighbors import KNeighborsClassifier

    X_fit, y_fit, X_val, y_val, A = _held_out()
    est = make("nca_sl", {"n_components": 2})
    est.classes_ = np.unique(y_fit)
    P, Q = X_fit @ A.T, X_val @ A.T
    kernel = np.exp(-((Q[:, None, :] - P[None, :, :]) ** 2).sum(axis=2))
    sums = np.stack([kernel[:, y_fit == c].sum(axis=1) for c in range(3)], axis=1)
    expected = {
        "nca_rule": np.mean(sums.argmax(axis=1) == y_val),
        "1nn": np.mean(KNeighborsClassifier(1).fit(P, y_fit).predict(Q) == y_val),
        "mean_p": np.mean(sums[np.arange(y_val.size), y_val] / sums.sum(axis=1)),
    }
    for score, value in expected.items():
        est.validation_score = score
        got = est._validation_score(A, X_fit, y_fit, X_val, y_val)
        assert got == pytest.approx(value, rel=1e-12), score
    assert expected["nca_rule"] != expected["mean_p"]


@pytest.mark.parametrize("name", ["nca_mb", "nca_sl", "nca_sl_kd"])
def test_early_stopping_on_held_out_accuracy_with_patience_in_updates(name):
    """The reading of section 5.3.2: the held-out 1-NN accuracy watched every 2 updates, the fit
    stopped 10 updates after its best check, and the best iterate returned."""
    X, y = overlapping(n=150)
    params = {"n_components": 2, "batch_size": 10, "max_iter": 3000, "eval_every": 2,
              "validation_fraction": 0.2, "patience": 10, "eta": 5.0, "t0": 1.0,
              "validation_score": "1nn", "patience_unit": "updates", "random_state": 0}
    if name == "nca_sl_kd":
        params.update(epsilon_max=0.1, leaf_size=4)
    est = make(name, params).fit(X, y)
    info = est.fit_info()
    assert info["stop_reason"].startswith("early stopping") and "updates" in info["stop_reason"]
    assert info["n_iter"] - info["best_iteration"] == 10
    scores = info["validation_score"]
    assert scores[info["best_iteration"] // 2 - 1] == max(scores)
    counts = np.asarray(scores) * 30  # accuracies of the 30 held-out points
    np.testing.assert_allclose(counts, np.round(counts), atol=1e-9)
    np.testing.assert_array_equal(est.components_, est.history_[info["best_iteration"] // 2 - 1][1])


def test_an_unknown_validation_score_is_refused():
    with pytest.raises(ValueError, match="validation_score"):
        make("nca_sl", {"validation_score": "accuracy"}).fit(*overlapping())


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


def _batch_spread(Z, batches):
    return np.mean([np.mean(np.sum((Z[b] - Z[b].mean(axis=0)) ** 2, axis=1)) for b in batches])


@pytest.mark.parametrize("clustering", ["random", "fpc", "rpc"])
def test_mini_batch_steps_are_algorithm_4_1(monkeypatch, clustering):
    """Every epoch the batches partition the training set; with fpc / rpc they are compact in
    the projected space of the epoch's start (tighter than random batches); each step adds
    eta / (t + t0) times the NCA gradient of the batch alone (scikit-learn's)."""
    from sklearn.neighbors import NeighborhoodComponentsAnalysis

    X, y = overlapping()
    est = make("nca_mb", {"n_components": 2, "batch_size": 30, "clustering": clustering,
                          "max_iter": 12, "validation_fraction": 0.0, "random_state": 0})
    steps, real_step = [], est._step

    def spy(A, X_, y_, batch):
        steps.append((A.copy(), np.array(batch)))
        return real_step(A, X_, y_, batch)

    monkeypatch.setattr(est, "_step", spy)
    est.fit(X, y)
    assert est.fit_info()["n_iter"] == 12 == len(steps)
    sk = NeighborhoodComponentsAnalysis()
    sk.n_iter_, sk.verbose = 1, 0
    A_next = [A for A, _ in steps[1:]] + [est.components_]
    for t, ((A, batch), after) in enumerate(zip(steps, A_next)):
        Xb, yb = X[batch], y[batch]
        _, g = sk._loss_grad_lbfgs(A.ravel(), Xb, yb[:, None] == yb[None, :], 1.0)
        np.testing.assert_allclose(after, A + est.eta / (t + est.t0) * g.reshape(A.shape),
                                   rtol=1e-10, atol=1e-12)
    epochs, start = [], 0
    while start < len(steps):  # batches of one epoch cover the 90 points once
        size, batches = 0, []
        while size < y.size:
            batches.append(steps[start][1])
            size += batches[-1].size
            start += 1
        assert sorted(np.concatenate(batches)) == list(range(y.size))
        epochs.append(batches)
    Z = X @ steps[0][0].T
    spread = _batch_spread(Z, epochs[0])
    random_spread = np.mean([_batch_spread(Z, np.array_split(np.random.default_rng(s).permutation(
        y.size), len(epochs[0]))) for s in range(20)])
    if clustering == "random":
        assert spread > 0.7 * random_spread
    else:
        assert spread < 0.6 * random_spread


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

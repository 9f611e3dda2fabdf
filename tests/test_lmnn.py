"""LMNN (`dmlbench.methods.lmnn`): metric-learn 0.7.0's algorithm re-implemented. One evaluation
of the objective and gradient against metric-learn's own `_loss_grad` (an independent code path:
per-label impostor lists, `Counter` of edges, sums of outer products), the gradient against
finite differences, and whole fits against metric-learn's `LMNN.fit`."""

import itertools
import tracemalloc
import warnings

import numba
import numpy as np
import pytest
from sklearn.datasets import load_iris, load_wine
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import MinMaxScaler

from dmlbench.methods import make
from dmlbench.methods.lmnn import (BLOCK_ENTRIES, ActiveSetObjective, Objective, UniformSample,
                                   lmnn_fit, nearest_targets, select_targets)
from dmlbench.methods.parameters import ParameterError

metric_learn = pytest.importorskip("metric_learn")
from metric_learn.lmnn import _sum_outer_products  # noqa: E402


def wine_scaled():
    X, y = load_wine(return_X_y=True)
    return MinMaxScaler().fit_transform(X), y


def small_class(seed=0):
    """Two classes of 40 and a class of 4 points (3 target neighbours each at most)."""
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(size=(40, 5)), rng.normal(size=(40, 5)) + 1.5,
                   rng.normal(size=(4, 5)) - 2])
    return X, np.repeat([0, 1, 2], [40, 40, 4])


def balance_grid():
    """Balance-scale's definition: all 5^4 integer points, labelled by the heavier side (left
    weight x distance against right): integer distances, so at L = I many triples tie exactly
    (D_il = 1 + D_ij), which metric-learn does not count as active."""
    X = np.array(list(itertools.product(range(1, 6), repeat=4)), dtype=float)
    return X, np.sign(X[:, 0] * X[:, 1] - X[:, 2] * X[:, 3]).astype(int)


def reference_loss_grad(X, y, L, k, reg):
    """metric-learn's `_loss_grad` with the targets and dfG its `fit` builds."""
    learner = metric_learn.LMNN(n_neighbors=k, regularization=reg)
    _, label_inds = np.unique(y, return_inverse=True)
    learner.labels_ = np.arange(label_inds.max() + 1)
    targets = learner._select_targets(X, label_inds)
    dfG = _sum_outer_products(X, targets.flatten(), np.repeat(np.arange(X.shape[0]), k))
    return learner._loss_grad(X, L.copy(), dfG, k, reg, targets, label_inds), targets


def ours(X, y, k, reg):
    _, label_inds = np.unique(y, return_inverse=True)
    return Objective(X, label_inds, select_targets(X, label_inds, k), reg)


def random_maps():
    rng = np.random.default_rng(1)
    iris = load_iris(return_X_y=True)
    yield "iris, L = 0.001 R (every pair active)", iris, 1e-3 * rng.normal(size=(4, 4)), 3, 0.5
    for scale in (0.3, 1.0, 10.0):
        yield f"wine, L = {scale} R", wine_scaled(), scale * rng.normal(size=(13, 13)), 3, 0.5
    yield "wine, L 2 x 13, k = 5, reg 0.2", wine_scaled(), rng.normal(size=(2, 13)), 5, 0.2
    yield "small class, k = 3, reg 0.9", small_class(), rng.normal(size=(5, 5)), 3, 0.9
    yield "balance grid, L = I (exact ties)", balance_grid(), np.eye(4), 3, 0.5
    # classes 100 apart, L = 10 I: no impostor within any margin
    X, y = small_class()
    yield "separated classes (none active)", (X + 100.0 * y[:, None], y), 10 * np.eye(5), 3, 0.5


@pytest.mark.parametrize("case", list(random_maps()), ids=lambda case: case[0])
def test_one_evaluation_is_metric_learns_loss_grad(case):
    _, (X, y), L, k, reg = case
    (G_ref, obj_ref, active_ref), targets = reference_loss_grad(X, y, L, k, reg)
    objective = ours(X, y, k, reg)
    assert np.array_equal(objective.targets, targets)
    G, obj, active = objective(L)
    assert active == active_ref
    assert obj == pytest.approx(obj_ref, rel=1e-12)
    assert np.linalg.norm(G - G_ref) <= 1e-9 * np.linalg.norm(G_ref)
    if case[0].startswith("iris"):
        assert active == 150 * 3 * 100  # every (point, target, other-class point)
    if case[0].startswith("separated"):
        assert active == 0


def test_row_blocks_give_the_same_evaluation(monkeypatch):
    """Blocks of rows (the memory bound for large n) change no count and no sum beyond
    rounding."""
    X, y = wine_scaled()
    L = np.random.default_rng(3).normal(size=(13, 13))
    whole = ours(X, y, 3, 0.5)(L)
    monkeypatch.setattr("dmlbench.methods.lmnn.BLOCK_ENTRIES", 7 * len(X))  # 26 blocks
    blocked = ours(X, y, 3, 0.5)
    assert blocked.block == 7 < len(X) < BLOCK_ENTRIES
    G, obj, active = blocked(L)
    assert active == whole[2] and obj == pytest.approx(whole[1], rel=1e-12)
    np.testing.assert_allclose(G, whole[0], rtol=1e-10, atol=1e-10 * np.abs(G).max())


def test_gradient_is_the_objectives_derivative():
    """Central differences along random directions, where the active set does not change."""
    X, y = wine_scaled()
    rng = np.random.default_rng(4)
    objective = ours(X, y, 3, 0.5)
    L = rng.normal(size=(13, 13))
    G, _, active = objective(L)
    h = 1e-7
    for _ in range(5):
        E = rng.normal(size=L.shape)
        (_, up, active_up), (_, down, active_down) = objective(L + h * E), objective(L - h * E)
        assert active_up == active_down == active
        assert (up - down) / (2 * h) == pytest.approx(np.sum(G * E), rel=1e-6)


def held_out(X, y):
    test = np.arange(len(y)) % 4 == 0
    return X[~test], y[~test], X[test]


FITS = {"iris": load_iris(return_X_y=True), "wine min-max": wine_scaled(),
        "small class": small_class()}


@pytest.mark.parametrize("name", FITS)
def test_fit_is_metric_learns_fit(name):
    """The same descent: iterations, learnt map (relative Frobenius difference; the trajectories
    are stable to ~1e-7 here) and 1-NN predictions on held-out points. The small class keeps 3
    training points, so both fit with 2 target neighbours (metric-learn would take a point as
    its own third one; the wrapper's `target_neighbors_`)."""
    X_train, y_train, X_test = held_out(*FITS[name])
    params = {"n_neighbors": 3, "random_state": 0}
    method = make("lmnn", params).fit(X_train, y_train)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=FutureWarning)
        reference = metric_learn.LMNN(**{**params, "n_neighbors": method.target_neighbors_})
        reference.fit(X_train, y_train)
    assert method.target_neighbors_ == (2 if name == "small class" else 3)
    assert method.n_iter_ == reference.n_iter_
    L, R = method.components_, reference.components_
    assert np.linalg.norm(L - R) <= 1e-6 * np.linalg.norm(R)
    predictions = [KNeighborsClassifier(1).fit(X_train @ M.T, y_train).predict(X_test @ M.T)
                   for M in (L, R)]
    assert np.array_equal(*predictions)


def test_fit_counts_iterations_as_metric_learn():
    """n_iter_: 1 when max_iter <= 2 (only the evaluation at the start), else the last
    iteration; at the cap, max_iter - 1."""
    X, y = small_class()
    _, label_inds = np.unique(y, return_inverse=True)
    objective = Objective(X, label_inds, select_targets(X, label_inds, 3), 0.5)
    L0 = np.eye(5)
    for max_iter, expected in ((1, 1), (2, 1), (3, 2), (20, 19)):
        L, n_iter = lmnn_fit(objective, L0, 1e-7, max_iter, 50, 1e-3)
        assert n_iter == expected
        reference = metric_learn.LMNN(init="identity", max_iter=max_iter).fit(X, y)
        assert reference.n_iter_ == expected
        np.testing.assert_allclose(L, reference.components_, rtol=1e-12, atol=1e-14)


# --- the active-set form (Weinberger & Saul 2008, sect. 3.2) -----------------------------------

def brute_force_targets(X, y, k):
    """Each point's k nearest same-class points by brute force, ties to the smaller index."""
    D = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=2)
    targets = np.empty((len(y), k), dtype=int)
    for i in range(len(y)):
        same = np.flatnonzero((y == y[i]) & (np.arange(len(y)) != i))
        targets[i] = same[np.lexsort((same, D[i, same]))[:k]]
    return targets


@pytest.mark.parametrize("case", ["balance grid", "wine"])
def test_active_set_targets_are_the_brute_force_nearest(case):
    """The blocked exact search's targets (`nearest_targets`), ties (balance-scale's integer
    grid has many) ordered by index."""
    X, y = balance_grid() if case == "balance grid" else wine_scaled()
    _, label_inds = np.unique(y, return_inverse=True)
    assert np.array_equal(nearest_targets(X, label_inds, 3), brute_force_targets(X, y, 3))


@pytest.mark.parametrize("case", list(random_maps()), ids=lambda case: case[0])
def test_active_set_evaluations_equal_the_full_ones_along_a_path(case):
    """At the map of a refresh and at maps moved away from it step by step (certified without
    a refresh while the candidates provably hold every active triple, refreshed once they may
    not), the active-set objective, gradient and count equal the full evaluation's; the last
    case has a rank-2 map (its certificate needs the null-space term)."""
    _, (X, y), L, k, reg = case
    full = ours(X, y, k, reg)
    active = ActiveSetObjective(X, full.labels, full.targets, reg)
    rng = np.random.default_rng(5)
    direction = rng.normal(size=L.shape) * np.linalg.norm(L) / np.sqrt(L.size)
    for step in (0.0, 1e-4, 1e-3, 1e-2, 3e-2, 0.1, 0.3):
        M = L + step * direction
        G, obj, count = active(M)
        G_ref, obj_ref, count_ref = full(M)
        assert count == count_ref
        assert obj == pytest.approx(obj_ref, rel=1e-12, abs=1e-12)
        np.testing.assert_allclose(G, G_ref, rtol=1e-9, atol=1e-9 * np.abs(G_ref).max())
    assert active.evaluations == 7
    assert 1 <= active.refreshes < 7  # small steps are certified without a pass over all pairs


def test_active_set_certificate_refreshes_when_a_left_out_pair_could_enter():
    """Where the map moves far, the candidates of the last refresh would miss active triples:
    the evaluation refreshes (and so stays exact); a map scaled down makes every pair an
    impostor."""
    X, y = wine_scaled()
    full = ours(X, y, 3, 0.5)
    active = ActiveSetObjective(X, full.labels, full.targets, 0.5)
    L = 10 * np.eye(13)
    active(L)
    candidates = active.pairs[0].size
    _, _, count = active(1e-3 * L)
    assert active.refreshes == 2 and active.pairs[0].size > candidates
    assert count == full(1e-3 * L)[2]


def test_active_set_candidates_are_every_close_pair_in_order_in_16_bytes_each():
    """A map scaled down so far that every pair of different labels lies within its margin
    (shuttle min-max scaled came near that: 3.4e8 pairs) lists them all, by point then
    impostor, against the brute-force list; the refresh holds at most 16 bytes a pair at once
    in numpy arrays (int64 index arrays ordered by `np.lexsort` took 40)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 4))
    y = np.arange(3000) % 2
    targets = nearest_targets(X, y, 1)
    active = ActiveSetObjective(X, y, targets, 0.5)
    tracemalloc.start()
    try:
        active(1e-4 * np.eye(4))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    expected = np.argwhere(y[:, None] != y[None, :])  # row-major: by point, then impostor
    first, second = active.pairs
    assert first.dtype == second.dtype == np.int32
    assert np.array_equal(first, expected[:, 0]) and np.array_equal(second, expected[:, 1])
    # 16 bytes a pair, a block of the Gram matrix and the evaluation's arrays: 95.7 MB here,
    # 200.8 MB with the int64 arrays ordered by np.lexsort
    assert peak <= 24 * len(expected) + 8 * BLOCK_ENTRIES


def test_fits_pass_the_argument_types_that_make_install_precompiles(monkeypatch):
    """numba compiles (and caches) one machine-code version per argument type: every type an
    LMNN fit passes (either form) is one `lmnn_compiled.precompile` compiled, so no job
    compiles for seconds."""
    from dmlbench.solvers import lmnn_compiled

    passes = ("count_active", "impostor_candidates", "split_keys", "count_active_pairs")
    seen = {name: set() for name in passes}
    for name in passes:
        def record(*args, compiled=getattr(lmnn_compiled, name), name=name):
            seen[name].add(tuple(numba.typeof(a) for a in args))
            return compiled(*args)
        monkeypatch.setattr(lmnn_compiled, name, record)
    lmnn_compiled.precompile()
    precompiled = {name: set(types) for name, types in seen.items()}
    X, y = wine_scaled()
    for form in ("all", "active_set"):
        make("lmnn", {"n_neighbors": 3, "max_iter": 5, "impostors": form}).fit(X, y)
    for name in passes:
        assert seen[name] == precompiled[name], name


@pytest.mark.parametrize("name", FITS)
def test_active_set_descent_reaches_the_full_forms_objective(name):
    """The whole descent on the same targets: the same steps and so the same map to rounding,
    and a final objective (the full `Objective`, metric-learn's definition) no worse than the
    default form's; iris has tied distances, so both take the blocked search's targets."""
    X, y, _ = held_out(*FITS[name])
    _, label_inds = np.unique(y, return_inverse=True)
    k = 2 if name == "small class" else 3
    targets = nearest_targets(X, label_inds, k)
    L0 = np.eye(X.shape[1])
    full = Objective(X, label_inds, targets, 0.5)
    L_full, it_full = lmnn_fit(full, L0, 1e-7, 1000, 50, 1e-3)
    fast = ActiveSetObjective(X, label_inds, targets, 0.5)
    L_fast, it_fast = lmnn_fit(fast, L0, 1e-7, 1000, 50, 1e-3)
    assert full(L_fast)[1] <= full(L_full)[1] * (1 + 1e-9)
    assert it_fast == it_full
    assert np.linalg.norm(L_fast - L_full) <= 1e-6 * np.linalg.norm(L_full)
    assert fast.refreshes < fast.evaluations


@pytest.mark.parametrize("name", ["wine min-max", "small class"])
def test_active_set_fit_is_the_default_fit_where_targets_do_not_tie(name):
    """The method: without tied distances the blocked search's targets are metric-learn's, so
    `impostors='active_set'` learns the default form's map; the record says which form ran."""
    X_train, y_train, _ = held_out(*FITS[name])
    params = {"n_neighbors": 3, "random_state": 0}
    default = make("lmnn", params).fit(X_train, y_train)
    fast = make("lmnn", {**params, "impostors": "active_set"}).fit(X_train, y_train)
    assert fast.n_iter_ == default.n_iter_
    L, R = fast.components_, default.components_
    assert np.linalg.norm(L - R) <= 1e-6 * np.linalg.norm(R)
    assert default.fit_info()["scale_form"] == "impostors=all"
    info = fast.fit_info()
    assert info["scale_form"] == "impostors=active_set"
    assert info["impostor_refreshes"] < info["evaluations"]


def test_a_uniform_sample_keeps_every_key_and_every_pair_of_keys_equally_often():
    """`UniformSample` over 50 keys arriving in blocks of 7, 0, 30 and 13, 10 kept, 4 000 draws:
    each draw is 10 distinct keys of the 50, and each key (each pair of keys, across blocks or
    within one) is kept as often as a uniform sample without replacement keeps it, 10/50 (and
    10 * 9 / (50 * 49)) of the draws, within 6 standard deviations."""
    keys = np.arange(1000, 1050, dtype=np.int64)
    blocks = np.split(keys, [7, 7, 37])
    rng = np.random.default_rng(3)
    draws = 4000
    kept = np.zeros((draws, keys.size), dtype=bool)
    for draw in range(draws):
        sample = UniformSample(10, rng)
        for block in blocks:
            sample.add(block)
        assert sample.keys.size == 10 and np.unique(sample.keys).size == 10
        kept[draw, sample.keys - 1000] = True
    p = 10 / 50
    assert np.all(np.abs(kept.sum(axis=0) - draws * p) <= 6 * np.sqrt(draws * p * (1 - p)))
    q = 10 * 9 / (50 * 49)
    for a, b in [(0, 49), (7, 8), (10, 36), (40, 2)]:
        together = np.sum(kept[:, a] & kept[:, b])
        assert abs(together - draws * q) <= 6 * np.sqrt(draws * q * (1 - q)), (a, b)
    # fewer keys than the sample's size: all of them
    small = UniformSample(100, rng)
    for block in blocks:
        small.add(block)
    assert np.array_equal(np.sort(small.keys), keys)


def brute_force_objective(X, y, targets, L, reg, pairs=None):
    """Weinberger & Saul's eq. (13) with the hinge of eq. (14), term by term over every triple
    (i, j ~> i, l) with y_l != y_i and D_il < 1 + D_ij (only (i, l) in `pairs` when given), and
    its gradient 2 L (reg sum (x_i - x_j)(x_i - x_j)^T + (1 - reg) sum_active [(x_i - x_j)
    (x_i - x_j)^T - (x_i - x_l)(x_i - x_l)^T]); returns (gradient, objective, active count)."""
    M = L.T @ L
    pull = np.zeros_like(M)
    push = np.zeros_like(M)
    value, count = 0.0, 0
    for i in range(len(X)):
        for j in targets[i]:
            dij = X[i] - X[j]
            D_ij = dij @ M @ dij
            value += reg * D_ij
            pull += np.outer(dij, dij)
            for l in np.flatnonzero(y != y[i]):
                if pairs is not None and (i, l) not in pairs:
                    continue
                dil = X[i] - X[l]
                D_il = dil @ M @ dil
                if D_il < 1 + D_ij:
                    value += (1 - reg) * (1 + D_ij - D_il)
                    push += np.outer(dij, dij) - np.outer(dil, dil)
                    count += 1
    return 2 * L @ (reg * pull + (1 - reg) * push), value, count


def test_a_capped_active_set_is_the_objective_over_a_sample_of_the_candidates():
    """With `max_impostors` below the candidates a refresh finds (wine min-max scaled, L = I:
    most pairs of different labels are candidates), the set is that many distinct candidate
    pairs, and the evaluation is the brute-force objective, gradient and count over the triples
    whose (point, impostor) pair is in the sample; without a cap the brute force over every
    pair is the full evaluation (the brute force's own check)."""
    X, y = wine_scaled()
    _, labels = np.unique(y, return_inverse=True)
    targets = nearest_targets(X, labels, 3)
    L = np.eye(13)
    uncapped = ActiveSetObjective(X, labels, targets, 0.5)
    G, value, count = uncapped(L)
    G_ref, value_ref, count_ref = brute_force_objective(X, labels, targets, L, 0.5)
    assert count == count_ref and value == pytest.approx(value_ref, rel=1e-10)
    np.testing.assert_allclose(G, G_ref, rtol=1e-8, atol=1e-8 * np.abs(G_ref).max())
    candidates = set(zip(*uncapped.pairs))

    capped = ActiveSetObjective(X, labels, targets, 0.5, max_impostors=2000, random_state=0)
    G, value, count = capped(L)
    sample = set(zip(*capped.pairs))
    assert len(sample) == capped.pairs[0].size == 2000 and sample <= candidates
    assert capped.largest_set == len(candidates) > 2000 and capped.largest_sample == 2000
    G_ref, value_ref, count_ref = brute_force_objective(X, labels, targets, L, 0.5, sample)
    assert 0 < count == count_ref < uncapped(L)[2]
    assert value == pytest.approx(value_ref, rel=1e-10)
    np.testing.assert_allclose(G, G_ref, rtol=1e-8, atol=1e-8 * np.abs(G_ref).max())


def test_a_cap_above_the_candidates_is_the_uncapped_fit_and_a_capped_fit_is_seeded():
    X_train, y_train, _ = held_out(*FITS["wine min-max"])
    params = {"n_neighbors": 3, "random_state": 0, "impostors": "active_set"}
    uncapped = make("lmnn", params).fit(X_train, y_train)
    above = make("lmnn", {**params, "max_impostors": 10**8}).fit(X_train, y_train)
    assert above.n_iter_ == uncapped.n_iter_
    np.testing.assert_allclose(above.components_, uncapped.components_, rtol=1e-12, atol=0)
    info = above.fit_info()
    assert info["scale_form"] == ("impostors=active_set, max_impostors=100000000, "
                                  "resample_after=15")
    assert info["impostor_sample_max"] == info["impostor_candidates_max"]

    capped = [make("lmnn", {**params, "max_impostors": 500}).fit(X_train, y_train)
              for _ in range(2)]
    np.testing.assert_allclose(capped[0].components_, capped[1].components_, rtol=1e-12, atol=0)
    info = capped[0].fit_info()
    assert info["impostor_sample_max"] == 500 < info["impostor_candidates_max"]


class RefreshLog(ActiveSetObjective):
    """An active set that logs, at each refresh of a sample, the accepted steps the sample was
    kept for and whether the certificate held at the map of the refresh."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.log = []

    def _refresh(self, L, Lx, margins):
        if self.sampled:
            self.log.append((self.kept_for, self._certified(L, margins)))
        super()._refresh(L, Lx, margins)


def test_a_sample_is_kept_for_resample_after_accepted_steps_then_drawn_where_it_fails():
    """mLMNN's `correction`: a sampled set is drawn anew only after `resample_after` accepted
    steps, and only at a map where the certificate fails; a shorter period draws more often."""
    X, y = wine_scaled()
    _, labels = np.unique(y, return_inverse=True)
    targets = nearest_targets(X, labels, 3)
    L0 = np.eye(13)
    counts = {}
    for period in (1, 15):
        objective = RefreshLog(X, labels, targets, 0.5, max_impostors=200, random_state=0,
                               resample_after=period)
        lmnn_fit(objective, L0, 1e-3, 300, 50, 1e-3)
        assert len(objective.log) > 1, period  # the sample was drawn anew
        assert all(kept >= period and not certified for kept, certified in objective.log)
        counts[period] = objective.refreshes
    assert counts[1] > counts[15]


@pytest.mark.parametrize("params", [{"max_impostors": 100}, {"max_impostors": 0,
                                                             "impostors": "active_set"}])
def test_max_impostors_needs_the_active_set_and_a_positive_count(params):
    X, y = wine_scaled()
    with pytest.raises(ParameterError, match="max_impostors"):
        make("lmnn", params).fit(X, y)

"""The readings of Abou-Moustafa 2017 as parameters of the local metrics, each against an
independent dense computation on a tiny problem: whose matrix measures the distance (`owner`),
resubstitution instead of leave-one-out when choosing m (`selection`), Titterington's update as
printed with its step-norm stop (`update`), and the extended m grid (`m_range`)."""

import numpy as np
import pytest

import mvce_reference as reference
from dmlbench.measure.knn_rule import knn_vote
from dmlbench.methods import local, make
from dmlbench.methods.local import search as local_search
from test_local import blobs, dense_search, tie_rule

EPS = 1e-4


def nearest(X, x, m, exclude=None):
    """The m nearest rows of X to x by (Euclidean distance, index), row `exclude` left out."""
    e = np.linalg.norm(X - x, axis=1)
    if exclude is not None:
        e[exclude] = np.inf
    return np.lexsort((np.arange(len(X)), e))[:m]


def mvce_matrix(X, x, m, exclude=None):
    """Dense A = sum_j w_j z_j z_j^T + eps I of x's m nearest rows of X (reference weights)."""
    Z = X[nearest(X, x, m, exclude)] - x
    return reference.dense_matrix(Z, reference.weights(Z, EPS), EPS)


def owned_search(X, Q, m, owner, depth, exclude=None):
    """Per query: the squared GQD to every training point y_j with y_j's own A_j (from its m
    nearest other training points), or the mean of that and the query's one-sided squared GQD
    (A_q from the query's m nearest training points, its own row excluded when `exclude`);
    ordered by the tie rule (band 1e-4)."""
    own = np.array([mvce_matrix(X, X[j], m, exclude=j) for j in range(len(X))])
    dists, inds = [], []
    for i, q in enumerate(Q):
        v = X - q
        d2 = np.einsum("nd,nde,ne->n", v, own, v)
        if owner == "symmetric":
            A_q = mvce_matrix(X, q, m, None if exclude is None else exclude[i])
            d2 = (d2 + np.einsum("nd,de,ne->n", v, A_q, v)) / 2
        e2 = np.einsum("nd,nd->n", v, v)
        if exclude is not None:
            d2[exclude[i]] = np.inf
        dist, ind = tie_rule(d2, e2, 1e-4, depth)
        dists.append(dist)
        inds.append(ind)
    return np.array(dists), np.array(inds)


@pytest.mark.parametrize("m", [2, 6])  # m < d (span form) and m > d (Cholesky factor)
@pytest.mark.parametrize("owner", ["training", "symmetric"])
def test_owner_distances_equal_a_dense_computation(owner, m):
    X, y = blobs(n=30, d=3, seed=3)
    Q = blobs(n=6, d=3, seed=4)[0]
    est = make("rmvem", {"m": m, "owner": owner}).fit(X, y)
    dist, ind = est.kneighbors(Q, 8)
    ref_d, ref_i = owned_search(X, Q, m, owner, 8)
    np.testing.assert_allclose(dist, ref_d, rtol=1e-7)
    np.testing.assert_array_equal(ind, ref_i)
    # leave-one-out lists of the training points (each one's own row excluded)
    dist, ind = est.train_kneighbors(4)
    ref_d, ref_i = owned_search(X, X, m, owner, 4, exclude=np.arange(30))
    np.testing.assert_allclose(dist, ref_d, rtol=1e-7)
    np.testing.assert_array_equal(ind, ref_i)


def test_symmetric_distance_is_the_mean_of_the_two_one_sided_distances():
    """Squared symmetric distance = (query's + training point's one-sided squared distances) / 2,
    each computed by hand from its dense MVCE matrix, for every point of the lists."""
    X, y = blobs(n=30, d=3, seed=5)
    Q = blobs(n=5, d=3, seed=6)[0]
    dist, ind = make("rmvem", {"m": 5, "owner": "symmetric"}).fit(X, y).kneighbors(Q, 30)
    own = [mvce_matrix(X, X[j], 5, exclude=j) for j in range(len(X))]
    for i, q in enumerate(Q):
        A_q = mvce_matrix(X, q, 5)
        v = X[ind[i]] - q
        by_query = np.einsum("nd,de,ne->n", v, A_q, v)
        by_point = np.array([v[r] @ own[j] @ v[r] for r, j in enumerate(ind[i])])
        mean = (by_query + by_point) / 2
        # a tie group (equal reported values) reports its smallest member's value
        groups = np.cumsum(np.r_[True, np.diff(dist[i]) != 0])
        for g in np.unique(groups):
            inside = groups == g
            np.testing.assert_allclose(dist[i][inside] ** 2, mean[inside].min(), rtol=1e-7)
            assert mean[inside].max() <= mean[inside].min() * (1 + 1e-4) * (1 + 1e-7)


def test_owner_lists_do_not_depend_on_the_search_blocks(monkeypatch):
    X, y = blobs(n=40, d=3, seed=8)
    Q = blobs(n=9, d=3, seed=9)[0]
    est = make("rmvem", {"m": 6, "owner": "symmetric"}).fit(X, y)
    whole = est.kneighbors(Q, 6)
    monkeypatch.setattr(local_search, "MAX_BLOCK_BYTES", 1)  # one query per block
    est = make("rmvem", {"m": 6, "owner": "symmetric"}).fit(X, y)
    blocks = est.kneighbors(Q, 6)
    np.testing.assert_array_equal(blocks[1], whole[1])
    np.testing.assert_allclose(blocks[0], whole[0], rtol=1e-12)


@pytest.mark.parametrize("owner", ["query", "training"])
def test_leave_one_out_selection_with_each_owner_equals_brute_force(owner):
    """With the training point's metric, a leave-one-out query meets the other training
    points' metrics as fitted on the whole training part (itself among their neighbours)."""
    X, y = blobs(n=30, d=2, seed=7)
    grid = [3, 5, 8]
    est = make("rmvem", {"m_grid": grid, "k_select": [1, 3], "owner": owner}).fit(X, y)
    errors = np.zeros((len(grid), 2))
    for i, m in enumerate(grid):
        if owner == "query":
            _, ind = dense_search(X, X, m, EPS, "literal", 3, exclude=np.arange(30))
        else:
            _, ind = owned_search(X, X, m, owner, 3, exclude=np.arange(30))
        for j, k in enumerate((1, 3)):
            errors[i, j] = np.mean(knn_vote(y[ind[:, :k]], 3) != y)
    np.testing.assert_allclose(est.loo_error_[:, 0, :], errors)
    for j, k in enumerate((1, 3)):
        assert est.selected_[k][0] == grid[int(np.argmin(errors[:, j]))]


def test_resubstitution_selects_the_m_a_brute_force_loop_selects():
    """Each training point classified among all training points, itself included (its own
    neighbourhood holds it, at weight 0), for every m of the grid; the first smallest error."""
    X, y = blobs(n=30, d=2, seed=11)
    grid = [3, 5, 8]
    est = make("rmvem", {"m_grid": grid, "k_select": [1, 3, 5],
                         "selection": "resubstitution"}).fit(X, y)
    errors = np.zeros((len(grid), 3))
    for i, m in enumerate(grid):
        for p in range(len(X)):
            _, ind = dense_search(X, X[p:p + 1], m, EPS, "literal", 5)
            for j, k in enumerate((1, 3, 5)):
                errors[i, j] += (knn_vote(y[ind[:, :k]], 3)[0] != y[p]) / len(X)
    np.testing.assert_allclose(est.loo_error_[:, 0, :], errors)
    for j, k in enumerate((1, 3, 5)):
        best = min(range(len(grid)), key=lambda i: (errors[i, j], i))
        assert est.selected_[k][0] == grid[best]
    assert errors[0, 0] == 0  # 1-NN finds each point itself: resubstitution error 0


def printed_weights(Z, eps, tau):
    """Alg. 2 of Abou-Moustafa 2017 as printed: w_j <- w_j delta_j / d from w = 1/m until
    ||w(t+1) - w(t)||_2 <= tau (the last step taken)."""
    m, d = Z.shape
    w = np.full(m, 1.0 / m)
    while True:
        A = Z.T @ (Z * w[:, None]) + eps * np.eye(d)
        new = w * np.einsum("md,de,me->m", Z, np.linalg.inv(A), Z) / d
        if np.linalg.norm(new - w) <= tau:
            return new
        w = new


@pytest.mark.parametrize("m", [2, 7])
def test_printed_update_equals_the_update_written_out(m):
    X, y = blobs(n=30, d=3, seed=12)
    Q = blobs(n=6, d=3, seed=13)[0]
    tau = 1e-3
    est = make("rmvem", {"m": m, "solver": "titterington", "update": "printed",
                         "tol": tau}).fit(X, y)
    dist, ind = est.kneighbors(Q, 6)
    for i, q in enumerate(Q):
        Z = X[nearest(X, q, m)] - q
        w = printed_weights(Z, EPS, tau)
        A = Z.T @ (Z * w[:, None]) + EPS * np.eye(3)
        v = X - q
        ref_d, ref_i = tie_rule(np.einsum("nd,de,ne->n", v, A, v),
                                np.einsum("nd,nd->n", v, v), 1e-4, 6)
        np.testing.assert_allclose(dist[i], ref_d, rtol=1e-9)
        np.testing.assert_array_equal(ind[i], ref_i)
        if m < 3:  # the printed update leaves the simplex (docs: a shrunken ellipsoid)
            assert w.sum() < 0.9
    assert est.fit_info()["mvce_solver"] == "titterington-printed"


def test_extended_grid_runs_from_2_to_5d():
    assert local.default_m_grid(4, 100, 24, (0, 5)) == list(range(2, 21))
    assert local.default_m_grid(4, 100, 12, (1, 3)) == local.default_m_grid(4, 100, 12)
    X, y = blobs(n=40, d=3, seed=14)
    est = make("rmle", {"m_range": [0, 5], "grid_size": 24}).fit(X, y)
    assert est.m_grid_ == list(range(2, 16))


@pytest.mark.parametrize("name, params, message", [
    ("rmvem", {"owner": "both"}, "owner must be one of"),
    ("rmvem", {"selection": "cv"}, "selection must be one of"),
    ("rmvem", {"m_range": [3, 1]}, "m_range must be two numbers \\(lo, hi\\), lo < hi"),
    ("rmle", {"m_range": [1, 2, 3]}, "m_range must be two numbers"),
    ("rmvem", {"update": "printed"}, "set solver='titterington' with it, got solver='auto'"),
])
def test_bad_reading_parameters_are_named(name, params, message):
    X, y = blobs(n=30)
    with pytest.raises(ValueError, match=message):
        make(name, params).fit(X, y)

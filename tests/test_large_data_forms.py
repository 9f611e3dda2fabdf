"""The large-data forms of the baselines (docs/methods.md, "Large data"): ITML's bounds from a
sample of pairs, LFDA on a sparse nearest-neighbour affinity, DML-eig on k-nearest dissimilar
pairs, and full NCA refused above its size. (LMNN's active set: tests/test_lmnn.py; BoostMDM-G's
truncated sets: tests/test_boost.py; the local metrics: tests/test_local.py.)"""

import math

import numpy as np
import pytest
import scipy.linalg
from sklearn.datasets import load_wine
from sklearn.metrics import pairwise_distances
from sklearn.preprocessing import MinMaxScaler

from dmlbench.methods import make
from dmlbench.methods.baselines import distance_percentiles, local_fisher_scatters
from dmlbench.methods.parameters import ParameterError


def wine_scaled():
    X, y = load_wine(return_X_y=True)
    return MinMaxScaler().fit_transform(X), y


# --- ITML: the bounds from a sample of pairs ------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sampled_distance_percentiles_lie_within_the_dkw_band_of_the_exact_ones(seed):
    """The percentiles of M sampled entries of the u x u distance matrix against those of the
    whole matrix (metric-learn's `pairwise_distances`, zero diagonal and both orders): by the
    Dvoretzky-Kiefer-Wolfowitz inequality the sampled p-th percentile lies between the exact
    (p - 100 e)-th and (p + 100 e)-th with probability at least 1 - 2 exp(-2 M e^2) (here
    1 - 2e-9 for each)."""
    points = np.random.default_rng(seed).normal(size=(400, 5)) * [1, 2, 3, 4, 5]
    every = pairwise_distances(points).ravel()
    pairs = 20000
    e = math.sqrt(math.log(2 / 2e-9) / (2 * pairs))
    sampled = distance_percentiles(points, (5, 95), pairs, random_state=seed)
    for p, value in zip((5, 95), sampled):
        low, high = np.percentile(every, (p - 100 * e, p + 100 * e))
        assert low <= value <= high
    np.testing.assert_array_equal(distance_percentiles(points, (5, 95)),
                                  np.percentile(every, (5, 95)))


def test_itml_with_sampled_bounds_records_its_form_and_bounds_near_the_exact_ones():
    X, y = wine_scaled()
    exact = make("itml", {"random_state": 0}).fit(X, y)
    sampled = make("itml", {"random_state": 0, "bound_pairs": 50000}).fit(X, y)
    assert exact.fit_info()["scale_form"] == "bound_pairs=None"
    assert sampled.fit_info()["scale_form"] == "bound_pairs=50000"
    np.testing.assert_allclose(sampled.fit_info()["bounds"], exact.fit_info()["bounds"],
                               rtol=0.05)


# --- LFDA on a sparse nearest-neighbour affinity ------------------------------------------------

def dense_lfda_scatters(X, y, k, neighbors):
    """Sugiyama 2007's S_b and S_w (eqs. 12-13) by brute force: the local-scaling affinity of
    every same-class pair (sigma_i: the distance to x_i's k-th nearest same-class point), kept
    where either point is among the other's `neighbors` nearest, the weights A / n_c and
    A (1/n - 1/n_c) within a class, 1/n across, summed over all n^2 ordered pairs."""
    n = y.size
    D = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=2)
    A = np.zeros((n, n))
    for c in np.unique(y):
        own = np.flatnonzero(y == c)
        Dc = D[np.ix_(own, own)] + np.diag(np.full(own.size, np.inf))
        order = np.argsort(Dc, axis=1, kind="stable")
        sigma = np.sqrt(np.take_along_axis(Dc, order, axis=1)[:, k - 1])
        near = np.zeros(Dc.shape, dtype=bool)
        np.put_along_axis(near, order[:, :neighbors], True, axis=1)
        A[np.ix_(own, own)] = np.where(near | near.T, np.exp(-Dc / np.outer(sigma, sigma)), 0)
    sizes = np.array([np.sum(y == c) for c in y])
    same = y[:, None] == y[None, :]
    W_w = np.where(same, A / sizes[:, None], 0.0)
    W_b = np.where(same, A * (1 / n - 1 / sizes[:, None]), 1 / n)
    diff = X[:, None, :] - X[None, :, :]
    return tuple(0.5 * np.einsum("ij,ijk,ijl->kl", W, diff, diff) for W in (W_b, W_w))


@pytest.mark.parametrize("neighbors", [3, 10, 100])
def test_sparse_lfda_scatters_are_the_papers_on_the_same_affinity(neighbors):
    X, y = wine_scaled()
    for ours, reference in zip(local_fisher_scatters(X, y, 7, neighbors),
                               dense_lfda_scatters(X, y, 7, neighbors)):
        np.testing.assert_allclose(ours, reference, rtol=1e-10,
                                   atol=1e-12 * np.abs(reference).max())


@pytest.mark.parametrize("embedding_type", ["weighted", "plain"])
def test_lfda_with_every_neighbour_solves_the_dense_problem(embedding_type):
    """`affinity_neighbors` covering each class: the generalised eigenvectors of the dense
    problem (Sugiyama 2007, eq. 16, by scipy on the brute-force scatters), compared through the
    metric they define (unique where the eigenvalues are distinct: signs drop out)."""
    X, y = wine_scaled()
    est = make("lfda", {"affinity_neighbors": 100, "embedding_type": embedding_type}).fit(X, y)
    S_b, S_w = dense_lfda_scatters(X, y, 7, 100)
    vals, vecs = scipy.linalg.eigh(S_b, S_w)
    if embedding_type == "weighted":
        vecs = vecs * np.sqrt(np.clip(vals, 0, None))
    M_ref = vecs @ vecs.T
    M = est.components_.T @ est.components_
    np.testing.assert_allclose(M, M_ref, rtol=1e-6, atol=1e-8 * np.abs(M_ref).max())
    assert est.fit_info()["scale_form"] == "affinity_neighbors=100"
    assert make("lfda", {}).fit(X, y).fit_info()["scale_form"] == "affinity_neighbors=None"


# --- DML-eig on k-nearest dissimilar pairs, full NCA's size limit --------------------------------

def test_dml_eig_records_which_dissimilar_pairs_it_used():
    X, y = wine_scaled()
    info = make("dml_eig", {"dissimilar": 20, "max_iter": 20}).fit(X, y).fit_info()
    assert info["scale_form"] == "dissimilar=20"
    assert info["n_dissimilar_pairs"] <= 20 * y.size
    assert make("dml_eig", {"max_iter": 5}).fit(X, y).fit_info()["scale_form"] == "dissimilar=all"


def test_full_nca_refuses_a_training_part_above_its_size_naming_its_large_data_forms():
    X, y = wine_scaled()
    with pytest.raises(ParameterError, match="max_train_size.*nca_sl.*nca_ss"):
        make("nca", {"max_train_size": 100, "max_iter": 2}).fit(X, y)
    with pytest.raises(ParameterError, match="n_train = 60000 exceeds max_train_size = 20000"):
        type(make("nca", {})).check_data_limits(make("nca", {}).get_params(), 60000, 50, 10)
    make("nca", {"max_train_size": None, "max_iter": 2}).fit(X, y)
    make("nca_sl", {"max_iter": 2}).fit(X, y)  # the large-data forms have no such limit


def test_nca_subsampling_has_no_size_limit():
    assert "max_train_size" not in make("nca_ss", {}).get_params()
    type(make("nca_ss", {})).check_data_limits(make("nca_ss", {}).get_params(), 60000, 50, 10)

"""Chunked exact k-NN search against brute force, with deterministic tie breaking."""

import numpy as np
import pytest

from dmlbench.measure.neighbours import euclidean_kneighbors, smallest_k


def brute(Q, X, k, exclude_self=False):
    D = np.sqrt(((Q[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    if exclude_self:
        np.fill_diagonal(D, np.inf)
    ind = np.array([np.lexsort((np.arange(len(row)), row))[:k] for row in D])
    return np.take_along_axis(D, ind, 1), ind


@pytest.mark.parametrize("max_bytes", [8 * 40 * 7, 2**26])
def test_matches_brute_force(max_bytes):
    rng = np.random.default_rng(1)
    X, Q = rng.normal(size=(40, 3)), rng.normal(size=(25, 3))
    d, i = euclidean_kneighbors(Q, X, 6, max_bytes=max_bytes)
    bd, bi = brute(Q, X, 6)
    np.testing.assert_array_equal(i, bi)
    np.testing.assert_allclose(d, bd, atol=1e-12)


def test_leave_one_out_excludes_only_the_point_itself():
    X = np.array([[0.0], [0.0], [1.0], [3.0]])
    d, i = euclidean_kneighbors(X, X, 2, exclude_self=True)
    assert i.tolist() == [[1, 2], [0, 2], [0, 1], [2, 0]]
    assert d[0].tolist() == [0.0, 1.0]


def test_ties_are_broken_by_training_index_even_across_chunks():
    rng = np.random.default_rng(2)
    X = rng.integers(0, 2, size=(200, 3)).astype(float)  # many exact ties
    Q = rng.integers(0, 2, size=(50, 3)).astype(float)
    _, bi = brute(Q, X, 15)
    for max_bytes in (8 * 200, 8 * 200 * 13, 2**26):
        _, i = euclidean_kneighbors(Q, X, 15, max_bytes=max_bytes)
        np.testing.assert_array_equal(i, bi)


def test_smallest_k_with_spilling_ties():
    values = np.array([[3.0] * 20 + [1.0]])
    assert smallest_k(values, 3).tolist() == [[20, 0, 1]]


def test_bad_n_neighbors():
    X = np.zeros((5, 2))
    with pytest.raises(ValueError, match=r"n_neighbors must be in \[1, 4\]"):
        euclidean_kneighbors(X, X, 5, exclude_self=True)

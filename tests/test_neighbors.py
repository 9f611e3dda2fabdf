"""Chunked exact k-NN search against brute force, with deterministic tie breaking."""

import math
from fractions import Fraction

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


def reference(Q, X, k, exclude_self=False):
    """The tie rule written out in plain Python: squared differences summed in coordinate order,
    the square root, then (distance, index)."""
    out_d, out_i = [], []
    for a, q in enumerate(Q.tolist()):
        dist = []
        for j, x in enumerate(X.tolist()):
            if exclude_self and j == a:
                continue
            total = 0.0
            for u, v in zip(q, x):
                total += (u - v) * (u - v)
            dist.append((math.sqrt(total), j))
        dist.sort()
        out_d.append([t[0] for t in dist[:k]])
        out_i.append([t[1] for t in dist[:k]])
    return np.array(out_d), np.array(out_i)


#: one query per block, a few, and all in one block (bytes of blocks against 105 points)
BLOCKS = (8 * 105, 8 * 105 * 3, 8 * 105 * 8, 2**26)


def test_iris_near_tie_is_decided_by_the_exact_distance_for_any_block():
    """The issue's example: query 3 of iris (test_size 0.3, random_state 1) has x_6 and x_37 at
    0.21 apart from the decimal data's rounding; the expansion ordered them by the block."""
    from sklearn.datasets import load_iris
    from sklearn.model_selection import train_test_split

    X, y = load_iris(return_X_y=True)
    Xtr, Xte = train_test_split(X, y, test_size=0.3, random_state=1)[:2]
    exact = [sum((Fraction(a) - Fraction(b)) ** 2 for a, b in zip(Xtr[j], Xte[3])) for j in (6, 37)]
    assert exact[0] < exact[1]
    _, ref_i = reference(Xte, Xtr, 10)
    assert ref_i[3, :3].tolist() == [35, 68, 6]
    for max_bytes in BLOCKS:
        _, alone = euclidean_kneighbors(Xte[3:4], Xtr, 10, max_bytes=max_bytes)
        dist, ind = euclidean_kneighbors(Xte, Xtr, 10, max_bytes=max_bytes)
        np.testing.assert_array_equal(alone[0], ind[3])
        np.testing.assert_array_equal(ind, ref_i)


@pytest.mark.parametrize("exclude_self", [False, True])
def test_decimal_near_ties_far_from_the_origin_give_one_list_for_every_block(exclude_self):
    """One-decimal data offset by 1000: many distances are equal in decimal and differ only by
    the binary rounding of the data (about 1e-13), while the expansion's error is about
    1e6 x 1e-16; every block size gives the lists of the written-out rule."""
    rng = np.random.default_rng(3)
    X = 1000.0 + np.round(rng.uniform(0, 1, size=(105, 3)), 1)
    Q = X if exclude_self else 1000.0 + np.round(rng.uniform(0, 1, size=(40, 3)), 1)
    ref_d, ref_i = reference(Q, X, 12, exclude_self)
    for max_bytes in BLOCKS:
        dist, ind = euclidean_kneighbors(Q, X, 12, exclude_self=exclude_self, max_bytes=max_bytes)
        np.testing.assert_array_equal(ind, ref_i)
        np.testing.assert_allclose(dist, ref_d, rtol=1e-12)


def test_integer_exact_ties_go_to_the_smaller_index_for_every_block():
    rng = np.random.default_rng(4)
    X = rng.integers(-3, 4, size=(105, 4)).astype(float)
    Q = rng.integers(-3, 4, size=(30, 4)).astype(float)
    _, ref_i = reference(Q, X, 20)
    for max_bytes in BLOCKS:
        _, ind = euclidean_kneighbors(Q, X, 20, max_bytes=max_bytes)
        np.testing.assert_array_equal(ind, ref_i)

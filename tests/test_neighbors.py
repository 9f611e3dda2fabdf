"""Chunked exact k-NN search against brute force, with deterministic tie breaking."""

import math
from fractions import Fraction

import numpy as np
import pytest

from dmlbench.measure.neighbours import (TILE_BYTES, candidate_capacity, euclidean_kneighbors,
                                       paired_sq_distances, smallest_k, tile_shape)


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


def tied_data(kind: str, rng, n: int, d: int) -> np.ndarray:
    """Points with the ties a search must order by index: 0/1 coordinates, small integers,
    repeated rows, one-decimal values far from the origin, a single point repeated."""
    if kind == "gauss":
        return rng.normal(size=(n, d))
    if kind == "binary":
        return rng.integers(0, 2, size=(n, d)).astype(float)
    if kind == "integers":
        return rng.integers(-2, 3, size=(n, d)).astype(float)
    if kind == "duplicates":
        return rng.normal(size=(n // 4, d))[rng.integers(0, n // 4, size=n)]
    if kind == "decimal":
        return 1000.0 + np.round(rng.uniform(0, 1, size=(n, d)), 1)
    return np.tile(rng.normal(size=(1, d)), (n, 1))  # "identical"


KINDS = ("gauss", "binary", "integers", "duplicates", "decimal", "identical")
#: tiles of one entry, of one row of 7 columns, of a few rows, the default
TILE_BUDGETS = (8, 8 * 7, 8 * 60 * 3, 2**26)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("exclude_self", [False, True])
def test_lists_are_the_written_out_rule_for_every_tile_size(kind, exclude_self):
    rng = np.random.default_rng(KINDS.index(kind))
    X = tied_data(kind, rng, 70, 4)
    Q = X if exclude_self else tied_data(kind, rng, 30, 4)
    for k in (1, 7, 69):
        ref_d, ref_i = reference(Q, X, k, exclude_self)
        for max_bytes in TILE_BUDGETS:
            dist, ind = euclidean_kneighbors(Q, X, k, exclude_self=exclude_self,
                                             max_bytes=max_bytes)
            np.testing.assert_array_equal(ind, ref_i)
            np.testing.assert_array_equal(dist, ref_d)


@pytest.mark.parametrize("kind", ["binary", "duplicates", "gauss"])
def test_a_query_gets_the_same_list_alone_and_in_any_batch(kind):
    rng = np.random.default_rng(5)
    X, Q = tied_data(kind, rng, 300, 6), tied_data(kind, rng, 40, 6)
    _, whole = euclidean_kneighbors(Q, X, 9)
    for i in range(len(Q)):
        np.testing.assert_array_equal(euclidean_kneighbors(Q[i:i + 1], X, 9)[1][0], whole[i])
    subset = rng.permutation(len(Q))[:17]
    np.testing.assert_array_equal(euclidean_kneighbors(Q[subset], X, 9)[1], whole[subset])


def test_distances_tied_only_after_the_square_root_go_to_the_smaller_index():
    """Two iris points (x_54, x_58 of the split above, query 1) whose squared distances differ in
    the last bit and whose distances are the same double: the order is (distance, index), so
    the first one comes first although its square is the larger."""
    q = np.array([[5.1, 2.5, 3.0, 1.1]])
    X = np.array([[5.6, 2.9, 3.6, 1.3], [5.5, 2.4, 3.8, 1.1]])
    sq = paired_sq_distances(np.repeat(q, 2, axis=0), X)
    assert sq[0] > sq[1] and np.sqrt(sq[0]) == np.sqrt(sq[1])
    assert euclidean_kneighbors(q, X, 2)[1].tolist() == [[0, 1]]
    assert euclidean_kneighbors(q, X, 1)[1].tolist() == [[0]]
    assert euclidean_kneighbors(q, X[::-1], 1)[1].tolist() == [[0]]


def test_more_candidates_than_a_row_holds_are_decided_in_column_order():
    """Every point nearer the query than all before it (each one a candidate), and 300 equal
    points: the candidates overflow the row's buffer (`candidate_capacity`) many times."""
    X = np.arange(600.0)[::-1, None]
    q = np.array([[-1.0]])
    assert 600 > 3 * candidate_capacity(3, 600)
    assert euclidean_kneighbors(q, X, 3)[1].tolist() == [[599, 598, 597]]
    same = np.vstack([np.ones((300, 2)), np.zeros((1, 2))])
    dist, ind = euclidean_kneighbors(same, same, 4, exclude_self=True)
    assert ind[0].tolist() == [1, 2, 3, 4] and ind[5].tolist() == [0, 1, 2, 3]
    assert ind[300].tolist() == [0, 1, 2, 3] and dist[300].tolist() == [np.sqrt(2.0)] * 4


def test_distances_are_the_square_roots_of_the_coordinate_order_sums():
    """Bit for bit: the compiled sums add the rounded squares in coordinate order (a fused
    multiply-add would change about a third of them)."""
    rng = np.random.default_rng(6)
    X, Q = rng.normal(size=(500, 37)), rng.normal(size=(60, 37))
    for exclude_self, queries in ((False, Q), (True, X)):
        dist, ind = euclidean_kneighbors(queries, X, 11, exclude_self=exclude_self)
        rows = np.repeat(np.arange(len(queries)), 11)
        exact = np.sqrt(paired_sq_distances(queries[rows], X[ind.ravel()]))
        np.testing.assert_array_equal(dist.ravel(), exact)


def test_tiles_and_search_state_stay_within_their_budget():
    for n_queries, n_points, d, max_bytes, k in [
            (10**5, 10**5, 20, 2**26, 10), (10**5, 10**5, 784, 2**26, 10),
            (3, 10**5, 50, 2**26, 10), (10**5, 7, 5, 2**26, 3), (50, 200, 4, 8 * 13, 5),
            (50, 200, 4, 8, 5), (10**5, 10**5, 20, 2**26, 2000), (10**4, 10**4, 20, 2**26, 9999)]:
        rows, cols = tile_shape(n_queries, n_points, d, max_bytes, k)
        assert 1 <= rows <= n_queries and 1 <= cols <= n_points
        budget = max(8, min(max_bytes, 4 * TILE_BYTES))
        assert 8 * rows * cols <= budget
        state = 16 * (k + candidate_capacity(k, n_points))
        assert rows == 1 or rows * state <= budget
    assert np.prod(tile_shape(10**5, 10**5, 20)) * 8 == TILE_BYTES
    assert np.prod(tile_shape(10**5, 10**5, 784)) == 4 * np.prod(tile_shape(10**5, 10**5, 20))


def test_points_too_large_for_their_distances_are_an_error():
    X = np.array([[0.0, 0.0], [1e154, 0.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match=r"squared norms above 2e307.*PCA"):
        euclidean_kneighbors(X, X, 1, exclude_self=True)
    with pytest.raises(ValueError, match=r"1 query point\(s\) \(first: row 0\) are NaN"):
        euclidean_kneighbors(np.array([[np.nan, 0.0]]), X, 1)

"""Exact k-nearest-neighbour search with one tie rule, tile by tile.

Neighbours are ordered by (distance, training index), the distance being the square root of
`paired_sq_distances`: the squared differences summed coordinate by coordinate in coordinate
order. That value depends on the query and the training point only, so the lists do not depend
on which other queries share a tile, on the tile size or on the BLAS kernel.

`euclidean_kneighbors` computes the BLAS product q X^T one tile at a time (`tile_shape`) and
hands each tile to a compiled pass (`neighbours_compiled`) that keeps, per query, the k
smallest *upper* bounds of the squared distances seen so far and makes a training point a
candidate only if its *lower* bound does not exceed them; candidates get their exact
coordinate-order distance (about k per query far from ties; every tied point at the k-th
distance) and are inserted in index order. Nothing of size queries x n is ever built: memory is
one tile plus O(k) numbers per query of a tile. `nearest_within_band` is the same rule for a
block a caller computed.

The bounds (Higham, Accuracy and Stability, sect. 3.1; gamma_m = m u / (1 - m u), u = 2^-53;
N = |q|^2 + |x|^2): a dot product of length d computed in any order, with or without FMA, is
within gamma_d |q| |x| of its value, so the expansion |q|^2 - 2 q.x + |x|^2 is within
gamma_{d+3} (|q| + |x|)^2 <= 2 gamma_{d+3} N of ||q - x||^2, and the coordinate-order sum e
within gamma_{d+3} ||q - x||^2 <= 2 gamma_{d+3} N; the band of `expansion_error` is c N with
c = 8 gamma_{d+3}, twice their sum. The compiled pass evaluates lower = (sigma |q|^2 +
sigma |x|^2) - 2 q.x and upper = (tau |q|^2 + tau |x|^2) - 2 q.x with sigma, tau = 1 -+ c
(`bound_scales`), every operation rounded: the rounding of sigma, tau, the norms, the product
and the three operations adds at most 3 gamma_{d+3} N, so lower <= e - 3 gamma_{d+3} N <= e and
upper >= e + 3 gamma_{d+3} N >= e. Hence a point whose lower bound exceeds the k-th
smallest upper bound among earlier points (or the k-th exact value among them) is farther than k
earlier points and cannot be among the k nearest; and when candidates are decided against upper
bounds of later points, `neighbours_compiled.distinct_above` widens the bound so that a
rejected point's rounded distance is strictly larger (two squares can round to one distance:
the tie then goes to the smaller index). `check_finite_search` keeps every norm, product and
distance finite.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from tqdm.auto import tqdm


#: size of one block of distances (queries x training points, float64) for the code that
#: builds them (`chunk_rows`); the search's tiles stay under it too (`tile_shape`)
MAX_BLOCK_BYTES = 64 * 2**20
#: one tile of the matrix product (queries x training points, float64) at small d: 1 MiB, an L2
#: cache (`tile_shape`)
TILE_BYTES = 2**20
#: query rows of a tile at most (one pass over the training points serves them all), and the
#: training columns a tile aims at when n is large
TILE_ROWS, TILE_COLUMNS = 512, 512
UNIT_ROUNDOFF = np.finfo(float).eps / 2
#: what a non-finite metric, embedding or distance means and what to do about it
NON_FINITE_REMEDY = (
    "The metric or embedding is unusable, usually because a scatter or covariance matrix it "
    "inverts is singular: more features than training points, a feature constant within every "
    "class, or a class with a single training point. Reduce the features first (a PCA step in "
    "`preprocess`) or leave small classes out (`drop_classes_below`)")


def chunk_rows(n_columns: int, max_bytes: int = MAX_BLOCK_BYTES) -> int:
    """How many query rows fit in one block of `max_bytes` against `n_columns` points."""
    return max(1, max_bytes // (8 * max(1, n_columns)))


def gamma(m: int) -> float:
    """Higham's gamma_m = m u / (1 - m u): the relative error bound of m rounded operations."""
    return m * UNIT_ROUNDOFF / (1.0 - m * UNIT_ROUNDOFF)


def expansion_error(n_features: int) -> float:
    """c with |expansion - paired_sq_distances| <= c (|q|^2 + |x|^2) (module docstring)."""
    return 8.0 * gamma(n_features + 3)


def smallest_k(values: np.ndarray, k: int) -> np.ndarray:
    """Column indices of the k smallest entries of each row, ordered by (value, index).

    Exact and deterministic for the values given (rows whose k-th value is tied beyond the
    partitioned candidates fall back to a stable full sort). It decides near-ties by the values'
    own rounding: use it on values that depend on their row and column only.
    """
    n_rows, n_cols = values.shape
    if k >= n_cols:
        return np.argsort(values, axis=1, kind="stable")[:, :k]
    width = min(n_cols, k + 8)
    if width == n_cols:
        return np.argsort(values, axis=1, kind="stable")[:, :k]
    cand = np.argpartition(values, width - 1, axis=1)[:, :width]
    cand_vals = np.take_along_axis(values, cand, axis=1)
    order = np.lexsort((cand, cand_vals), axis=1)
    cand = np.take_along_axis(cand, order, axis=1)
    cand_vals = np.take_along_axis(cand_vals, order, axis=1)
    # candidates hold every value < the width-th smallest; ties at that value may lie outside
    spill = cand_vals[:, k - 1] >= cand_vals[:, width - 1]
    out = cand[:, :k]
    if spill.any():
        out[spill] = np.argsort(values[spill], axis=1, kind="stable")[:, :k]
    return out


def paired_sq_distances(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """||A[p] - B[p]||^2 for every row p, summed in coordinate order (0, 1, ..., d-1).

    The order is fixed so that the value depends on the two rows only (the dimension sweep of
    `dmlbench.measure.evaluation` accumulates in the same order)."""
    out = np.zeros(A.shape[0])
    for r in range(A.shape[1]):
        diff = A[:, r] - B[:, r]
        out += diff * diff
    return out


def nearest_within_band(block: np.ndarray, scale: np.ndarray, q_sq: np.ndarray,
                        x_sq: np.ndarray, k: int, exact: Callable, pair_bytes: int,
                        max_bytes: int = MAX_BLOCK_BYTES) -> tuple[np.ndarray, np.ndarray]:
    """The k nearest columns of each row of `block`, ordered by (exact distance, column).

    `block` (b x n) approximates squared distances within
    scale[i] (q_sq[i] + x_sq[j]); +inf marks an excluded pair. Every column whose approximation
    lies within that band of the row's k-th smallest is a candidate; `exact(rows, cols)` gives
    the exact squared distances of candidate pairs (in batches of at most `max_bytes` /
    `pair_bytes` pairs); returns (sqrt of the exact values, columns), each (b, k).
    """
    n_rows, n_cols = block.shape
    if np.isnan(block.min()):  # min propagates NaN: one pass, no mask
        raise ValueError(f"k-NN search: some distances are NaN. {NON_FINITE_REMEDY}")
    # the k-th smallest b is within its band of an exact value, so the k-th exact value is at
    # most T = t_k + s (q_sq + max x_sq); a point may be among the k nearest only if
    # b_j - s (q_sq + x_j) <= T
    t_k = (np.partition(block, k - 1, axis=1)[:, k - 1] if k < n_cols else block.max(axis=1))
    widest = float(x_sq.max())
    limit = t_k + scale * (2 * q_sq + widest)
    # first against the row's widest band (one pass, no block-sized temporary), then exactly on
    # the few pairs found
    rows, cols = np.nonzero(block <= (limit + scale * widest)[:, None])
    keep = block[rows, cols] - scale[rows] * x_sq[cols] <= limit[rows]
    rows, cols = rows[keep], cols[keep]
    value = np.empty(rows.size)
    step = max(1, max_bytes // max(1, pair_bytes))
    for start in range(0, rows.size, step):
        sl = slice(start, start + step)
        value[sl] = exact(rows[sl], cols[sl])
    if not np.all(np.isfinite(value)):
        raise ValueError(f"k-NN search: some distances are NaN or infinite. {NON_FINITE_REMEDY}")
    value = np.sqrt(np.maximum(value, 0.0))
    order = np.lexsort((cols, value, rows))
    rows, cols, value = rows[order], cols[order], value[order]
    first_of_row = np.searchsorted(rows, np.arange(n_rows))
    rank = np.arange(rows.size) - first_of_row[rows]
    keep = rank < k
    dist = np.empty((n_rows, k))
    ind = np.empty((n_rows, k), dtype=np.int64)
    dist[rows[keep], rank[keep]] = value[keep]
    ind[rows[keep], rank[keep]] = cols[keep]
    return dist, ind


def tile_shape(n_queries: int, n_points: int, n_features: int,
               max_bytes: int = MAX_BLOCK_BYTES, n_neighbors: int = 1) -> tuple[int, int]:
    """(query rows, training columns) of one tile of the matrix product.

    The compiled pass reads each entry of the tile once, a few operations, so at small d the
    tile stays in the L2 cache (`TILE_BYTES`); the product costs 2 d operations per entry, and
    larger tiles let BLAS spread its packing over more of them, so the budget grows with d up
    to 4 `TILE_BYTES` (d >= 256; 8 was no faster at d = 784, 2 slower). Never more than
    `max_bytes`; up to `TILE_ROWS` rows, and no more than the budget holds of the rows' search
    state (16 (k + candidates) bytes a row)."""
    budget = int(min(max_bytes, TILE_BYTES * min(4.0, max(1.0, n_features / 64))))
    entries = max(1, budget // 8)
    state = 16 * (n_neighbors + candidate_capacity(n_neighbors, n_points))
    rows = min(n_queries, TILE_ROWS, entries // min(n_points, TILE_COLUMNS), budget // state)
    rows = max(1, rows)
    return rows, min(n_points, max(1, entries // rows))


def bound_scales(n_features: int) -> tuple[float, float]:
    """(sigma, tau) with (sigma |q|^2 + sigma |x|^2) - 2 q.x at most, and (tau |q|^2 +
    tau |x|^2) - 2 q.x at least, the exact coordinate-order squared distance, all in floating
    point (module docstring)."""
    c = expansion_error(n_features)
    return 1.0 - c, 1.0 + c


def candidate_capacity(n_neighbors: int, n_points: int) -> int:
    """Candidates a row holds before their exact distances are computed: 8 k + 64 (about
    k (1 + ln(n / k)) points pass the running bound over a row in random order), at most n."""
    return min(8 * n_neighbors + 64, n_points)


def euclidean_kneighbors(Q: np.ndarray, X: np.ndarray, n_neighbors: int, *,
                         exclude_self: bool = False, progress: bool = False,
                         max_bytes: int = MAX_BLOCK_BYTES) -> tuple[np.ndarray, np.ndarray]:
    """For each row of `Q`, the `n_neighbors` nearest rows of `X` (Euclidean).

    Returns (dist, ind), each (len(Q), n_neighbors), sorted by (distance, index) as the module
    docstring defines them: the same for any tile size and any other queries. With
    `exclude_self`, `Q` must be `X` and each point's own row is left out (leave-one-out; a
    duplicate of the point is still a neighbour). Non-finite input is a `ValueError`.
    """
    same = Q is X
    X = np.ascontiguousarray(X, dtype=float)
    Q = X if same else np.ascontiguousarray(Q, dtype=float)
    n, d = X.shape
    k = n_neighbors
    limit = n - 1 if exclude_self else n
    if not 1 <= k <= limit:
        raise ValueError(f"n_neighbors must be in [1, {limit}] for {n} points, got {k}")
    if exclude_self and Q.shape[0] != n:
        raise ValueError("exclude_self needs the query set to be the training set")
    x_sq = np.einsum("ij,ij->i", X, X)
    q_sq = np.einsum("ij,ij->i", Q, Q)
    check_finite_search(x_sq, q_sq)
    sigma, tau = bound_scales(d)
    x_lower, x_upper = sigma * x_sq, np.multiply(x_sq, tau, out=x_sq)
    rows, cols = tile_shape(Q.shape[0], n, d, max_bytes, k)
    buffer = np.empty(rows * cols)
    capacity = candidate_capacity(k, n)
    bound, lower = np.empty((rows, k)), np.empty((rows, capacity))
    cand = np.empty((rows, capacity), dtype=np.int64)
    pending, filled = np.empty(rows, dtype=np.int64), np.empty(rows, dtype=np.int64)
    best_sq = np.empty((rows, k))
    dist, ind = np.empty((Q.shape[0], k)), np.empty((Q.shape[0], k), dtype=np.int64)
    # numba: loaded by the first search, not by every `dmlbench` verb (the CLI's start-up)
    from .neighbours_compiled import finish_nearest, update_nearest

    starts = range(0, Q.shape[0], rows)
    for start in tqdm(starts, desc="k-NN search", unit="chunk", disable=not progress or len(starts) < 2,
                      mininterval=2.0):
        stop = min(start + rows, Q.shape[0])
        r, q = stop - start, Q[start:stop]
        q_lower, q_upper = sigma * q_sq[start:stop], tau * q_sq[start:stop]
        bound[:r], pending[:r], filled[:r] = np.inf, 0, 0
        state = (bound[:r], lower[:r], cand[:r], pending[:r], best_sq[:r], dist[start:stop],
                 ind[start:stop], filled[:r])
        for first in range(0, n, cols):
            last = min(first + cols, n)
            tile = buffer[:r * (last - first)].reshape(r, last - first)
            np.matmul(q, X[first:last].T, out=tile)
            update_nearest(tile, q_lower, x_lower, q_upper, x_upper, q, X, first,
                           start if exclude_self else -1, *state)
        finish_nearest(q, X, *state)
    return dist, ind


def check_finite_search(x_sq: np.ndarray, q_sq: np.ndarray) -> None:
    """`ValueError` when a training or query point is not finite (NaN, inf) or so large that its
    squared norm overflows: no distance to it would be a number; also when a squared norm
    exceeds 1/8 of the largest float, the margin under which every product, bound and squared
    distance of the search is finite (|q.x| <= (|q|^2 + |x|^2) / 2, ||q - x||^2 <=
    2 (|q|^2 + |x|^2))."""
    for name, values in (("training", x_sq), ("query", q_sq)):
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            raise ValueError(
                f"k-NN search: {bad.size} {name} point(s) (first: row {int(bad[0])}) are NaN, "
                f"infinite or too large to square, so their distances are not numbers. "
                f"{NON_FINITE_REMEDY}")
    if max(np.max(x_sq, initial=0.0), np.max(q_sq, initial=0.0)) > np.finfo(float).max / 8:
        raise ValueError("k-NN search: some points are so large (squared norms above 2e307) "
                         f"that their distances could overflow. {NON_FINITE_REMEDY}")

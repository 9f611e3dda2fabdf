"""Batched, chunked exact k-nearest-neighbour search with one tie rule.

Neighbours are ordered by (distance, training index), the distance being `paired_sq_distances`:
the squared differences summed coordinate by coordinate in coordinate order, then the square
root. That value depends on the query and the training point only, so the lists do not depend on
which other queries share a block, on the chunk size or on the BLAS kernel.

The fast expansion |q|^2 - 2 q.x + |x|^2 only *selects candidates*: its error is at most
`expansion_error` (a bound proved below), so every training point whose expansion lies within
that band of the k-th smallest is recomputed exactly (`nearest_within_band`) before the order is
decided. Far from ties the band holds about k points; with exact ties it holds them all.
Memory is O(chunk x n): queries are processed in chunks whose block stays under
`MAX_BLOCK_BYTES`.

Error bound (Higham, Accuracy and Stability, sect. 3.1; gamma_m = m u / (1 - m u), u = 2^-53):
a dot product of length d computed in any order, with or without FMA, is within
gamma_d |q| |x| of its value, so the expansion is within gamma_{d+3} (|q| + |x|)^2 of
||q - x||^2 and the coordinate-order sum within gamma_{d+3} ||q - x||^2 <= gamma_{d+3}
(|q| + |x|)^2. The band uses twice their sum, 8 gamma_{d+3} (|q|^2 + |x|^2).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from tqdm.auto import tqdm

#: size of one chunk's distance block (queries x training points, float64)
MAX_BLOCK_BYTES = 64 * 2**20
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


def euclidean_kneighbors(Q: np.ndarray, X: np.ndarray, n_neighbors: int, *,
                         exclude_self: bool = False, progress: bool = False,
                         max_bytes: int = MAX_BLOCK_BYTES) -> tuple[np.ndarray, np.ndarray]:
    """For each row of `Q`, the `n_neighbors` nearest rows of `X` (Euclidean).

    Returns (dist, ind), each (len(Q), n_neighbors), sorted by (distance, index) as the module
    docstring defines them: the same for any chunk size and any other queries. With
    `exclude_self`, `Q` must be `X` and each point's own row is left out (leave-one-out).
    Non-finite input is a `ValueError`.
    """
    Q = np.asarray(Q, dtype=float)
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    limit = n - 1 if exclude_self else n
    if not 1 <= n_neighbors <= limit:
        raise ValueError(f"n_neighbors must be in [1, {limit}] for {n} points, got {n_neighbors}")
    if exclude_self and Q.shape[0] != n:
        raise ValueError("exclude_self needs the query set to be the training set")
    x_sq = np.einsum("ij,ij->i", X, X)
    q_sq_all = np.einsum("ij,ij->i", Q, Q)
    check_finite_search(x_sq, q_sq_all)
    c = expansion_error(d)
    step = chunk_rows(n, max_bytes)
    dist = np.empty((Q.shape[0], n_neighbors))
    ind = np.empty((Q.shape[0], n_neighbors), dtype=np.int64)
    starts = range(0, Q.shape[0], step)
    for start in tqdm(starts, desc="k-NN search", unit="chunk", disable=not progress or len(starts) < 2,
                      mininterval=2.0):
        q, q_sq = Q[start:start + step], q_sq_all[start:start + step]
        # |q|^2 - 2 q.x + |x|^2 in place (one block in memory)
        block = q @ X.T
        block *= -2.0
        block += q_sq[:, None]
        block += x_sq[None, :]
        if exclude_self:
            rows = np.arange(q.shape[0])
            block[rows, start + rows] = np.inf
        sl = slice(start, start + q.shape[0])
        dist[sl], ind[sl] = nearest_within_band(
            block, np.full(q.shape[0], c), q_sq, x_sq, n_neighbors,
            lambda i, j: paired_sq_distances(q[i], X[j]), 16 * d, max_bytes)
    return dist, ind


def check_finite_search(x_sq: np.ndarray, q_sq: np.ndarray) -> None:
    """`ValueError` when a training or query point is not finite (NaN, inf) or so large that its
    squared norm overflows: no distance to it would be a number."""
    for name, values in (("training", x_sq), ("query", q_sq)):
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            raise ValueError(
                f"k-NN search: {bad.size} {name} point(s) (first: row {int(bad[0])}) are NaN, "
                f"infinite or too large to square, so their distances are not numbers. "
                f"{NON_FINITE_REMEDY}")

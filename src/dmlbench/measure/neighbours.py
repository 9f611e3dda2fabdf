"""Batched, chunked exact k-nearest-neighbour search.

Ties are broken deterministically: neighbours are ordered by distance, then by training index.
Memory is O(chunk x n): the query set is processed in chunks whose distance block stays under
`MAX_BLOCK_BYTES`.
"""

from __future__ import annotations

import numpy as np
from tqdm.auto import tqdm

#: size of one chunk's distance block (queries x training points, float64)
MAX_BLOCK_BYTES = 64 * 2**20


def chunk_rows(n_columns: int, max_bytes: int = MAX_BLOCK_BYTES) -> int:
    """How many query rows fit in one block of `max_bytes` against `n_columns` points."""
    return max(1, max_bytes // (8 * max(1, n_columns)))


def smallest_k(values: np.ndarray, k: int) -> np.ndarray:
    """Column indices of the k smallest entries of each row, ordered by (value, index).

    Exact and deterministic under ties: rows whose k-th value is tied beyond the partitioned
    candidates fall back to a stable full sort.
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


def euclidean_kneighbors(Q: np.ndarray, X: np.ndarray, n_neighbors: int, *,
                         exclude_self: bool = False, progress: bool = False,
                         max_bytes: int = MAX_BLOCK_BYTES) -> tuple[np.ndarray, np.ndarray]:
    """For each row of `Q`, the `n_neighbors` nearest rows of `X` (Euclidean).

    Returns (dist, ind), each (len(Q), n_neighbors), sorted by (distance, index). With
    `exclude_self`, `Q` must be `X` and each point's own row is left out (leave-one-out).
    """
    Q = np.asarray(Q, dtype=float)
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    limit = n - 1 if exclude_self else n
    if not 1 <= n_neighbors <= limit:
        raise ValueError(f"n_neighbors must be in [1, {limit}] for {n} points, got {n_neighbors}")
    if exclude_self and Q.shape[0] != n:
        raise ValueError("exclude_self needs the query set to be the training set")
    x_sq = np.einsum("ij,ij->i", X, X)
    step = chunk_rows(n, max_bytes)
    ind = np.empty((Q.shape[0], n_neighbors), dtype=np.int64)
    starts = range(0, Q.shape[0], step)
    for start in tqdm(starts, desc="k-NN search", unit="chunk", disable=not progress or len(starts) < 2,
                      mininterval=2.0):
        q = Q[start:start + step]
        # |q|^2 - 2 q.x + |x|^2 in place (one block in memory, the same rounding as written)
        block = q @ X.T
        block *= 2.0
        np.subtract(np.einsum("ij,ij->i", q, q)[:, None], block, out=block)
        block += x_sq[None, :]
        if exclude_self:
            rows = np.arange(q.shape[0])
            block[rows, start + rows] = np.inf
        ind[start:start + step] = smallest_k(block, n_neighbors)
    return _resort(exact_distances(Q, X, ind, max_bytes), ind)


def exact_distances(Q: np.ndarray, X: np.ndarray, ind: np.ndarray,
                    max_bytes: int = MAX_BLOCK_BYTES) -> np.ndarray:
    """||Q[i] - X[ind[i, j]]|| computed directly (no expansion), in chunks of rows."""
    out = np.empty(ind.shape)
    rows = max(1, max_bytes // (8 * max(1, ind.shape[1] * Q.shape[1])))
    for start in range(0, Q.shape[0], rows):
        sl = slice(start, start + rows)
        out[sl] = np.linalg.norm(Q[sl, None, :] - X[ind[sl]], axis=2)
    return out


def _resort(dist: np.ndarray, ind: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Order each row by (exactly recomputed distance, index)."""
    order = np.lexsort((ind, dist), axis=1)
    return np.take_along_axis(dist, order, axis=1), np.take_along_axis(ind, order, axis=1)

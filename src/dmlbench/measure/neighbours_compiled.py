"""The per-tile pass of `neighbours.euclidean_kneighbors`, compiled (numba).

For each tile G = q X[c0:c1]^T of the matrix product, each query row keeps the k smallest
upper bounds of the squared distances seen so far (a max-heap) and takes as candidates the
columns whose lower bound exceeds neither them nor the k-th exact squared distance decided so
far (the bounds and why this is exact: `neighbours` module docstring). When a row's candidate
buffer is full, and after the last tile, the candidates still possible get their exact
coordinate-order distances and are merged into the row's k nearest by (distance, column).
Columns arrive in increasing order, so a merge never has to look back. Far from ties about
k (1 + ln(n / k)) columns of a row become candidates (in random order) and about k get an exact
distance, so the pass costs a few operations per entry of the product, against the 2 d of the
product itself.

No fast-math: the exact distance is summed in coordinate order, each square and sum rounded,
as `neighbours.paired_sq_distances` does (a fused multiply-add would change the last bits and
so the tie rule).
"""

from __future__ import annotations

import numba
import numpy as np

#: u, the unit roundoff of float64
UNIT_ROUNDOFF = np.finfo(float).eps / 2


@numba.njit(cache=True)
def distinct_above(t: float) -> float:
    """A value above which every square has a larger rounded square root than every square
    <= t: sqrt rounds within a factor (1 +- u), so squares more than (1 + 4u + O(u^2)) apart
    have distinct roots; the absolute 2^-1000 covers t so small that t (1 + 8u) rounds to t."""
    return t * (1.0 + 8.0 * UNIT_ROUNDOFF) + 2.0**-1000


@numba.njit(cache=True)
def coordinate_order_sq_distances(A: np.ndarray, i: int, B: np.ndarray,
                                  columns: np.ndarray) -> np.ndarray:
    """||A[i] - B[j]||^2 for each j of `columns`, the squared differences summed in coordinate
    order, four rows of B at a time: four independent sums keep the floating-point adder busy
    (one sum alone waits for its previous addition at every coordinate)."""
    count = columns.size
    out = np.empty(count)
    for start in range(0, count, 4):
        j0 = columns[start]
        j1 = columns[min(start + 1, count - 1)]
        j2 = columns[min(start + 2, count - 1)]
        j3 = columns[min(start + 3, count - 1)]
        t0 = t1 = t2 = t3 = 0.0
        for r in range(A.shape[1]):
            a = A[i, r]
            d0, d1, d2, d3 = a - B[j0, r], a - B[j1, r], a - B[j2, r], a - B[j3, r]
            t0 += d0 * d0
            t1 += d1 * d1
            t2 += d2 * d2
            t3 += d3 * d3
        out[start] = t0
        if start + 1 < count:
            out[start + 1] = t1
        if start + 2 < count:
            out[start + 2] = t2
        if start + 3 < count:
            out[start + 3] = t3
    return out


@numba.njit(cache=True)
def _merge(row: int, values: np.ndarray, columns: np.ndarray, best_sq: np.ndarray,
           best_dist: np.ndarray, best_ind: np.ndarray, filled: np.ndarray) -> None:
    """Merge new columns (ascending, all after the row's current ones; exact squared distances
    `values`) into the row's nearest, keeping the first k by (distance, column): a stable sort
    of the new ones by distance, then on equal distances the current ones first."""
    k = best_sq.shape[1]
    dist = np.sqrt(values)
    order = np.argsort(dist, kind="mergesort")
    old_count = filled[row]
    old_sq = best_sq[row, :old_count].copy()
    old_dist = best_dist[row, :old_count].copy()
    old_ind = best_ind[row, :old_count].copy()
    a = b = 0
    count = min(k, old_count + values.size)
    for pos in range(count):
        if b == values.size or (a < old_count and old_dist[a] <= dist[order[b]]):
            best_sq[row, pos], best_dist[row, pos], best_ind[row, pos] = (
                old_sq[a], old_dist[a], old_ind[a])
            a += 1
        else:
            m = order[b]
            best_sq[row, pos], best_dist[row, pos], best_ind[row, pos] = (
                values[m], dist[m], columns[m])
            b += 1
    filled[row] = count


@numba.njit(cache=True)
def _flush(row: int, Q: np.ndarray, X: np.ndarray, bound: np.ndarray, lower: np.ndarray,
           cand: np.ndarray, pending: np.ndarray, best_sq: np.ndarray, best_dist: np.ndarray,
           best_ind: np.ndarray, filled: np.ndarray) -> None:
    """Decide a row's pending candidates: those whose lower bound exceeds `distinct_above` of
    the k-th smallest upper bound have a larger distance than k columns (whichever their
    index); so do those above the k-th exact squared distance (of earlier columns). The others
    get their exact distances and are merged in (`_merge`)."""
    k = best_sq.shape[1]
    above = distinct_above(bound[row, 0])
    kth_sq = best_sq[row, k - 1] if filled[row] == k else np.inf
    columns = np.empty(pending[row], dtype=np.int64)
    count = 0
    for m in range(pending[row]):
        low = lower[row, m]
        if low <= above and low <= kth_sq:
            columns[count] = cand[row, m]
            count += 1
    pending[row] = 0
    if count:
        values = coordinate_order_sq_distances(Q, row, X, columns[:count])
        _merge(row, values, columns[:count], best_sq, best_dist, best_ind, filled)


@numba.njit(cache=True)
def update_nearest(G: np.ndarray, q_lower: np.ndarray, x_lower: np.ndarray,
                   q_upper: np.ndarray, x_upper: np.ndarray, Q: np.ndarray, X: np.ndarray,
                   first_column: int, own_column: int, bound: np.ndarray, lower: np.ndarray,
                   cand: np.ndarray, pending: np.ndarray, best_sq: np.ndarray,
                   best_dist: np.ndarray, best_ind: np.ndarray, filled: np.ndarray) -> None:
    """Merge the tile G = Q X[first_column:]^T (rows of `Q` x a run of columns of `X`) into
    each row's search state.

    `q_lower + x_lower - 2 G` and `q_upper + x_upper - 2 G` bound each exact squared distance
    from below and above (`neighbours.bound_scales`). `own_column`: row 0's own column when
    each point leaves itself out (row i's is `own_column` + i), else -1. A row's state:
    `bound` (rows x k), a max-heap of the k smallest upper bounds so far; `lower` / `cand`
    (rows x capacity), the `pending` candidates' lower bounds and columns, in column order,
    flushed (`_flush`) when full; `best_sq`, `best_dist`, `best_ind` (rows x k), the `filled`
    nearest columns decided so far by (distance, column). A column is a candidate unless its
    lower bound exceeds the k-th smallest upper bound of earlier columns or the k-th exact
    squared distance.
    """
    rows, cols = G.shape
    k, capacity = bound.shape[1], cand.shape[1]
    x_low = x_lower[first_column:first_column + cols]
    x_up = x_upper[first_column:first_column + cols]
    for i in range(rows):
        g = G[i]
        kth_sq = best_sq[i, k - 1] if filled[i] == k else np.inf
        threshold = min(bound[i, 0], kth_sq)
        own = own_column + i - first_column if own_column >= 0 else -1
        q_low, q_up = q_lower[i], q_upper[i]
        for c in range(cols):
            low = (q_low + x_low[c]) - 2.0 * g[c]
            if low > threshold or c == own:
                continue
            m = pending[i]
            lower[i, m], cand[i, m] = low, first_column + c
            pending[i] = m + 1
            up = (q_up + x_up[c]) - 2.0 * g[c]
            if up < bound[i, 0]:  # replace the heap's largest, sift down
                pos = 0
                while True:
                    child = 2 * pos + 1
                    if child >= k:
                        break
                    if child + 1 < k and bound[i, child + 1] > bound[i, child]:
                        child += 1
                    if bound[i, child] <= up:
                        break
                    bound[i, pos] = bound[i, child]
                    pos = child
                bound[i, pos] = up
            if m + 1 == capacity:
                _flush(i, Q, X, bound, lower, cand, pending, best_sq, best_dist, best_ind,
                       filled)
                kth_sq = best_sq[i, k - 1] if filled[i] == k else np.inf
            threshold = min(bound[i, 0], kth_sq)


@numba.njit(cache=True)
def finish_nearest(Q: np.ndarray, X: np.ndarray, bound: np.ndarray, lower: np.ndarray,
                   cand: np.ndarray, pending: np.ndarray, best_sq: np.ndarray,
                   best_dist: np.ndarray, best_ind: np.ndarray, filled: np.ndarray) -> None:
    """After the last tile: decide every row's pending candidates (`_flush`)."""
    for i in range(bound.shape[0]):
        _flush(i, Q, X, bound, lower, cand, pending, best_sq, best_dist, best_ind, filled)


def precompile() -> None:
    """Compile the passes for the argument types `neighbours.euclidean_kneighbors` gives them
    and write numba's cache (`make install` runs it, so that no job times the compilation;
    later processes load the cache)."""
    from .neighbours import euclidean_kneighbors

    X = np.arange(6.0).reshape(3, 2)
    euclidean_kneighbors(X, X, 1, exclude_self=True)

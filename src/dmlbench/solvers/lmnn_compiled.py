"""LMNN's active triples counted in one compiled pass (numba) over a row block of the squared
distances: the bookkeeping of metric-learn 0.7.0's `_loss_grad` (its per-label impostor lists,
`act1`/`act2` masks and `Counter` of (point, target) edges) without a pass of the interpreter,
or of numpy, per target neighbour (`methods.lmnn.Objective` uses it).

The active-set form (`methods.lmnn.ActiveSetObjective`, Weinberger & Saul's active set) uses two
more passes: `impostor_candidates` lists, from a block of the squared distances, the ordered
pairs (i, l) of different labels within a threshold of i (its candidate impostors), and
`count_active_pairs` counts the active triples over such a list only (held as sorted keys i n +
l, then as index arrays, `split_keys`), deciding each pair by its squared distance summed from
the differences, as `count_active` decides a pair near a margin.
"""

from __future__ import annotations

import numba
import numpy as np


#: a Gram-formula distance this close to a margin (relative to sq_i + sq_l + margin) is
#: recomputed from the differences: the Gram formula's rounding error is ~1e-15 of that scale
NEAR = 1e-8


@numba.njit(cache=True)
def count_active(gram: np.ndarray, Lx_rows: np.ndarray, Lx: np.ndarray, sq_rows: np.ndarray,
                 sq: np.ndarray, labels_rows: np.ndarray, labels: np.ndarray,
                 margins_rows: np.ndarray, X: np.ndarray, push_rows_X: np.ndarray,
                 pull_weight_rows: np.ndarray, push_cols: np.ndarray) -> None:
    """For the block's points i (rows) and every point l of another label, the triple (i, j, l)
    is active when D_il < margins_rows[i, j] (= 1 + D_ij for i's j-th target neighbour). D_il is
    sq_i + sq_l - 2 gram_il, or, within `NEAR` (times a bound of sq_i + sq_l + margin) of a
    margin, sum_r (Lx_ir - Lx_lr)^2 as
    metric-learn computes it (so exact ties, e.g. integer features at L = I, are not active, as
    in metric-learn). With c_il the pair's active triples, adds sum_l c_il X[l] to push_rows_X[i],
    c_il to pull_weight_rows[i, j] (active impostors of the target) and to push_cols[l] (zero
    them first): the push sum's A X, A 1 and A^T 1 for the block's rows of A = (c_il)."""
    b, n = gram.shape
    k = margins_rows.shape[1]
    r_dim, d_dim = Lx.shape[1], X.shape[1]
    row_pull = np.zeros(k)
    active = np.zeros(k)
    scale = sq.max()
    for r in range(b):
        label, margins = labels_rows[r], margins_rows[r]
        sq_r, furthest = sq_rows[r], margins.max()
        near_tol = NEAR * (sq_r + scale + furthest)  # bounds NEAR (sq_r + sq_l + margin)
        beyond = furthest + near_tol  # past every margin: inactive, whichever formula
        row_pull[:] = 0.0
        for l in range(n):
            d = sq_r + sq[l] - 2.0 * gram[r, l]
            if labels[l] != label and d <= beyond:
                c, near = 0.0, False
                for j in range(k):
                    gap = d - margins[j]
                    active[j] = 1.0 if gap < 0.0 else 0.0  # branch-free: a select
                    near |= abs(gap) <= near_tol
                if near:
                    d = 0.0
                    for q in range(r_dim):
                        diff = Lx_rows[r, q] - Lx[l, q]
                        d += diff * diff
                    for j in range(k):
                        active[j] = 1.0 if d < margins[j] else 0.0
                for j in range(k):
                    c += active[j]
                    row_pull[j] += active[j]
                if c > 0.0:
                    push_cols[l] += c
                    for q in range(d_dim):
                        push_rows_X[r, q] += c * X[l, q]
        for j in range(k):
            pull_weight_rows[r, j] += row_pull[j]


@numba.njit(cache=True)
def impostor_candidates(gram: np.ndarray, start: int, sq: np.ndarray, labels: np.ndarray,
                        limit: np.ndarray) -> np.ndarray:
    """The ordered pairs (i, l) of different labels with D_il <= limit[i], for the rows
    i = start .. start + b - 1 of a block whose columns are the points start .. n - 1 (`gram`
    (b, n - start): their inner products in L-space), each unordered pair visited once (l > i)
    and tested in both orientations. D_il is the Gram formula sq_i + sq_l - 2 gram_il, and a
    pair is listed when it lies within `NEAR` (times a bound of sq_i + sq_l + limit) above the
    limit, so no pair whose exact distance is within the limit is left out (a few beyond it may
    be listed). Returns each pair as one int64 key i n + l (n = len(sq)): 8 bytes a pair, and
    sorting the keys orders the pairs by point, then impostor."""
    b, width = gram.shape
    n = sq.shape[0]
    slack = NEAR * (2.0 * sq.max() + limit.max())
    reach = limit + slack - sq  # D_il <= limit_i + slack  <=>  sq_l - 2 g_il <= reach_i
    size = 1024
    keys = np.empty(size, dtype=np.int64)
    p = 0
    for r in range(b):
        i = start + r
        label, reach_i, sq_i = labels[i], reach[i], sq[i]
        if p + 2 * width > size:  # room for every pair of this row
            size = 2 * (p + 2 * width)
            keys_new = np.empty(size, dtype=np.int64)
            keys_new[:p] = keys[:p]
            keys = keys_new
        for c in range(r + 1, width):
            l = start + c
            twice = 2.0 * gram[r, c]
            if labels[l] != label:
                if sq[l] - twice <= reach_i:
                    keys[p] = i * n + l
                    p += 1
                if sq_i - twice <= reach[l]:
                    keys[p] = l * n + i
                    p += 1
    return keys[:p].copy()


@numba.njit(cache=True)
def split_keys(keys: np.ndarray, n: int, first: np.ndarray, second: np.ndarray) -> None:
    """Writes key i n + l (`impostor_candidates`) as first[p] = i, second[p] = l."""
    for p in range(keys.shape[0]):
        i = keys[p] // n
        first[p] = i
        second[p] = keys[p] - i * n


@numba.njit(cache=True)
def count_active_pairs(first: np.ndarray, second: np.ndarray, Lx: np.ndarray,
                       margins: np.ndarray, X: np.ndarray, push_X: np.ndarray,
                       pull_weight: np.ndarray, push_cols: np.ndarray) -> None:
    """`count_active` over a list of ordered pairs (i = first[p], l = second[p]) only: the
    triple (i, j, l) is active when D_il < margins[i, j], D_il = sum_r (Lx_ir - Lx_lr)^2. With
    c_il the pair's active triples, adds c_il X[l] to push_X[i], c_il to pull_weight[i, j]
    (active impostors of the target) and to push_cols[l] (zero them first)."""
    k = margins.shape[1]
    r_dim, d_dim = Lx.shape[1], X.shape[1]
    for p in range(first.shape[0]):
        i, l = first[p], second[p]
        d = 0.0
        for q in range(r_dim):
            diff = Lx[i, q] - Lx[l, q]
            d += diff * diff
        c = 0.0
        for j in range(k):
            if d < margins[i, j]:
                c += 1.0
                pull_weight[i, j] += 1.0
        if c > 0.0:
            push_cols[l] += c
            for q in range(d_dim):
                push_X[i, q] += c * X[l, q]


def precompile() -> None:
    """Compile the passes for the argument types `methods.lmnn` passes and write numba's cache
    (`make install` runs it, so that no job times the compilation)."""
    gram, ones, Lx = np.zeros((2, 2)), np.ones(2), np.eye(2)
    count_active(gram, Lx, Lx, ones, ones, np.arange(2), np.arange(2), np.full((2, 1), 2.0),
                 Lx, np.zeros((2, 2)), np.zeros((2, 1)), np.zeros(2))
    keys = impostor_candidates(gram, 0, ones, np.arange(2), ones)
    first, second = np.empty(keys.size, dtype=np.int32), np.empty(keys.size, dtype=np.int32)
    split_keys(keys, 2, first, second)
    count_active_pairs(first, second, Lx, np.full((2, 1), 2.0), Lx, np.zeros((2, 2)),
                       np.zeros((2, 1)), np.zeros(2))

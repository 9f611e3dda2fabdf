"""LMNN's active triples counted in one compiled pass (numba) over a row block of the squared
distances: the bookkeeping of metric-learn 0.7.0's `_loss_grad` (its per-label impostor lists,
`act1`/`act2` masks and `Counter` of (point, target) edges) without a pass of the interpreter,
or of numpy, per target neighbour (`methods.lmnn.Objective` uses it).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def count_active(gram: np.ndarray, sq_rows: np.ndarray, sq: np.ndarray,
                 labels_rows: np.ndarray, labels: np.ndarray, margins_rows: np.ndarray,
                 counts: np.ndarray, pull_weight_rows: np.ndarray,
                 push_cols: np.ndarray) -> None:
    """For the block's points i (rows) and every point l of another label: D_il = sq_i + sq_l -
    2 gram_il, and the triple (i, j, l) is active when D_il < margins_rows[i, j] (= 1 + D_ij for
    i's j-th target neighbour). Writes counts[i, l] (active triples of the pair, every entry),
    adds them to pull_weight_rows[i, j] (active impostors of the target; zero it first) and to
    push_cols[l]."""
    b, n = gram.shape
    k = margins_rows.shape[1]
    row_pull = np.zeros(k)
    for r in range(b):
        label, sq_r, margins = labels_rows[r], sq_rows[r], margins_rows[r]
        row_pull[:] = 0.0
        for l in range(n):
            c = 0.0
            if labels[l] != label:
                d = sq_r + sq[l] - 2.0 * gram[r, l]
                for j in range(k):
                    active = 1.0 if d < margins[j] else 0.0  # branch-free: a select
                    c += active
                    row_pull[j] += active
            counts[r, l] = c
            push_cols[l] += c
        for j in range(k):
            pull_weight_rows[r, j] += row_pull[j]


def precompile() -> None:
    """Compile `count_active` for the argument types `methods.lmnn` passes and write numba's
    cache (`make install` runs it, so that no job times the compilation)."""
    gram, ones = np.zeros((2, 2)), np.ones(2)
    count_active(gram, ones, ones, np.arange(2), np.arange(2), np.full((2, 1), 2.0),
                 np.empty((2, 2)), np.zeros((2, 1)), np.zeros(2))

"""Cheap clusterings that form NCA mini-batches (Oneata 2011, section 4.2).

Both return a list of index arrays that partition range(len(Z)).
"""

from __future__ import annotations

import numpy as np


def farthest_point_clustering(Z: np.ndarray, n_clusters: int, rng) -> list[np.ndarray]:
    """Algorithm 4.2 (Gonzalez 1985): a random first centre, then repeatedly the point farthest
    from all centres so far; every point joins its nearest centre. O(N K); cluster sizes are not
    controlled."""
    n = Z.shape[0]
    k = int(min(max(n_clusters, 1), n))
    centres = [int(rng.integers(n))]
    nearest = np.sum((Z - Z[centres[0]]) ** 2, axis=1)
    owner = np.zeros(n, dtype=np.intp)
    for c in range(1, k):
        centres.append(int(np.argmax(nearest)))
        d2 = np.sum((Z - Z[centres[-1]]) ** 2, axis=1)
        closer = d2 < nearest
        owner[closer], nearest[closer] = c, d2[closer]
    return [idx for idx in (np.flatnonzero(owner == c) for c in range(k)) if idx.size]


def recursive_projection_clustering(Z: np.ndarray, size: int, rng) -> list[np.ndarray]:
    """Algorithm 4.3 (Chalupka 2011): split at the median of the projections on the line through
    two random points, recursively, until a part has fewer than `size` points (the thesis' rule;
    clusters hold between size/2 and size - 1 points when N >= size). Ties at the median are split
    by position; identical projections (the two points coincide) split at random."""
    if size < 2:
        raise ValueError(f"mini-batch size must be >= 2, got {size}")
    out, stack = [], [np.arange(Z.shape[0])]
    while stack:
        idx = stack.pop()
        if idx.size < size:
            out.append(idx)
            continue
        a, b = rng.choice(idx.size, size=2, replace=False)
        t = Z[idx] @ (Z[idx[b]] - Z[idx[a]])
        if np.ptp(t) == 0:
            t = rng.random(idx.size)
        half = idx.size // 2
        order = np.argpartition(t, half)
        stack += [idx[order[:half]], idx[order[half:]]]
    return out

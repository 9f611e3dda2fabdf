"""NCA with k-d-tree approximate class-conditional KDE (Oneata 2011, section 4.4).

NCA's p_i is a ratio of class-conditional kernel sums (section 3.2): S_ic = sum_{j in c, j != i}
exp(-||z_i - z_j||^2), p_i = S_{i c_i} / sum_c S_ic. One k-d tree per class (Algorithm 4.5: split
the widest dimension, eq. 4.5, at the median; a node with fewer than `leaf_size` points is a leaf)
holds the projected points z = A x. A query walks each tree from the root; a node G whose kernel
values lie in [k_min, k_max] (from the distances to its bounding box) is replaced by N_G points
of value (k_min + k_max)/2 (eq. 4.9, error at most N_G (k_max - k_min)/2, eq. 4.10) when

    (k_max - k_min) / 2 <= epsilon * LB / N_c            (the cut-off of eq. 4.11, shared out)

where LB is a lower bound of S_ic from what has been seen so far (exact leaves, approximated nodes
and the k_min of the nodes still open) and N_c the number of points summed. Giving each node its
share N_G / N_c of epsilon (as in Gray & Moore 2003) instead of the whole epsilon of eq. 4.11 makes
the bound hold for the whole sum: |S^_ic - S_ic| <= epsilon S_ic. A node holding the query itself
is never approximated (p_ii = 0). All trees are built and walked level by level, for all queries
and classes at once (the thesis walks depth first, nearest child first; the bound is the same);
ties at the median are split by position so the trees stay balanced. With epsilon = 0 only nodes
whose kernel values are all equal in floating point (e.g. all 0) are approximated.

The gradient uses the same approximation: every point of an approximated node gets the kernel
value (k_min + k_max)/2 in eq. 3.14, so a node costs O(d) per query through its sum of z, and the
per-point terms are pushed down the trees once per evaluation. Kernel values are shifted by
L_i = min_{k != i} d_ik^2 (eq. 3.20), found with scipy's cKDTree.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

from .nca_objective import accumulate_pairs, check_inputs, project, regularise


@dataclass(frozen=True)
class KDForest:
    """One k-d tree with bounding boxes per class; node n holds the points
    `index[start[n]:end[n]]` (rows of the data), all of class `label[n]`."""

    index: np.ndarray  # forest position -> row of the data
    start: np.ndarray
    end: np.ndarray
    left: np.ndarray  # -1 for leaves
    right: np.ndarray
    lo: np.ndarray  # n_nodes x d bounding-box corners
    hi: np.ndarray
    label: np.ndarray
    roots: np.ndarray  # root node of each class


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Concatenation of arange(s, s + c) for each (s, c)."""
    offsets = np.repeat(starts - np.cumsum(counts) + counts, counts)
    return offsets + np.arange(int(counts.sum()))


def build_forest(Z: np.ndarray, y: np.ndarray, leaf_size: int = 32) -> KDForest:
    """Algorithm 4.5 for every class (labels 0..C-1) of the rows of Z, level by level."""
    if leaf_size < 1:
        raise ValueError(f"leaf_size must be >= 1, got {leaf_size}")
    order = np.argsort(y, kind="stable")
    counts = np.bincount(y)
    edges = np.concatenate([[0], np.cumsum(counts)])
    start, end = list(edges[:-1]), list(edges[1:])
    label = list(range(counts.size))
    left, right = [-1] * counts.size, [-1] * counts.size
    lo = [None] * counts.size
    hi = [None] * counts.size
    level = np.arange(counts.size)
    Zpad = np.vstack([Z, np.zeros((1, Z.shape[1]))])
    while level.size:
        s, e = np.asarray(start)[level], np.asarray(end)[level]
        level, s, e = level[e > s], s[e > s], e[e > s]
        Zs = Zpad[np.append(order, Z.shape[0])]
        bounds = np.stack([s, e], axis=1).ravel()
        lo_l = np.minimum.reduceat(Zs, bounds, axis=0)[::2]
        hi_l = np.maximum.reduceat(Zs, bounds, axis=0)[::2]
        for n, a, b in zip(level, lo_l, hi_l):
            lo[n], hi[n] = a, b
        split = (e - s) >= max(leaf_size, 2)
        level, s, e = level[split], s[split], e[split]
        if not level.size:
            break
        dim = np.argmax(hi_l[split] - lo_l[split], axis=1)
        sizes = e - s
        pos = _ranges(s, sizes)
        seg = np.repeat(np.arange(level.size), sizes)
        values = Z[order[pos], dim[seg]]
        order[pos] = order[pos][np.lexsort((values, seg))]
        half = sizes // 2
        nxt = []
        for n, a, h, b in zip(level, s, half, e):
            for cs, ce, side in ((a, a + h, left), (a + h, b, right)):
                side[n] = len(start)
                nxt.append(len(start))
                start.append(cs)
                end.append(ce)
                label.append(label[n])
                left.append(-1)
                right.append(-1)
                lo.append(None)
                hi.append(None)
        level = np.asarray(nxt)
    d = Z.shape[1]
    fill = lambda parts: np.array([p if p is not None else np.zeros(d) for p in parts])  # noqa: E731
    return KDForest(order, np.asarray(start), np.asarray(end), np.asarray(left),
                    np.asarray(right), fill(lo), fill(hi), np.asarray(label),
                    np.arange(counts.size))


@dataclass
class ClassSums:
    """Approximate class sums for a batch of queries, and how they were formed."""

    sums: np.ndarray  # queries x classes: S^_ic, shifted by exp(L_i)
    exact_q: np.ndarray  # pairs evaluated one by one: query, forest position, kernel value
    exact_pos: np.ndarray
    exact_k: np.ndarray
    approx_q: np.ndarray  # approximated nodes: query, node, kernel value per point
    approx_node: np.ndarray
    approx_k: np.ndarray


def forest_sums(forest: KDForest, Z: np.ndarray, Zq: np.ndarray, L: np.ndarray,
                self_row: np.ndarray, own: np.ndarray, epsilon: float) -> ClassSums:
    """S^_qc = sum over the class-c points j (but the query's own row `self_row[q]`, or -1) of
    exp(L_q - ||zq_q - z_j||^2), within a relative error epsilon; `own[q]` is the query's class
    (or -1)."""
    nq, n_classes = Zq.shape[0], forest.roots.size
    pos_of = np.full(Z.shape[0] + 1, -1)
    pos_of[forest.index] = np.arange(forest.index.size)
    self_pos = pos_of[self_row]
    class_n = (forest.end - forest.start)[forest.roots]
    zf = Z[forest.index]
    keys = nq * n_classes
    done_lb, exact_sum, approx_sum = np.zeros(keys), np.zeros(keys), np.zeros(keys)
    ex, ap = [], []
    fq = np.repeat(np.arange(nq), n_classes)
    fn = np.tile(forest.roots, nq)
    while fq.size:
        key = fq * n_classes + forest.label[fn]
        z, lo, hi = Zq[fq], forest.lo[fn], forest.hi[fn]
        dmin2 = np.sum(np.maximum(np.maximum(lo - z, z - hi), 0.0) ** 2, axis=1)
        dmax2 = np.sum(np.maximum(np.abs(z - lo), np.abs(z - hi)) ** 2, axis=1)
        kmin, kmax = np.exp(L[fq] - dmax2), np.exp(L[fq] - dmin2)
        s, e = forest.start[fn], forest.end[fn]
        holds_self = (self_pos[fq] >= s) & (self_pos[fq] < e)
        count = e - s
        lb = done_lb + exact_sum + np.bincount(key, (count - holds_self) * kmin, minlength=keys)
        n_eff = class_n[forest.label[fn]] - (own[fq] == forest.label[fn])
        prune = ~holds_self & (0.5 * (kmax - kmin) * n_eff <= epsilon * lb[key])
        kg = 0.5 * (kmin + kmax)
        done_lb += np.bincount(key[prune], count[prune] * kmin[prune], minlength=keys)
        approx_sum += np.bincount(key[prune], count[prune] * kg[prune], minlength=keys)
        ap.append((fq[prune], fn[prune], kg[prune]))
        leaf = ~prune & (forest.left[fn] < 0)
        if np.any(leaf):
            cnt = count[leaf]
            q = np.repeat(fq[leaf], cnt)
            pos = _ranges(s[leaf], cnt)
            keep = pos != self_pos[q]
            q, pos = q[keep], pos[keep]
            k = np.exp(L[q] - np.sum((Zq[q] - zf[pos]) ** 2, axis=1))
            exact_sum += np.bincount(q * n_classes + forest.label[np.repeat(fn[leaf], cnt)[keep]],
                                     k, minlength=keys)
            ex.append((q, pos, k))
        inner = ~prune & ~leaf
        fq = np.concatenate([fq[inner], fq[inner]])
        fn = np.concatenate([forest.left[fn[inner]], forest.right[fn[inner]]])
    cat = lambda parts, i, dt: (np.concatenate([p[i] for p in parts]) if parts  # noqa: E731
                                else np.zeros(0, dtype=dt))
    return ClassSums((exact_sum + approx_sum).reshape(nq, n_classes),
                     cat(ex, 0, np.intp), cat(ex, 1, np.intp), cat(ex, 2, float),
                     cat(ap, 0, np.intp), cat(ap, 1, np.intp), cat(ap, 2, float))


def nearest_shift(Z: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """L_i = min_{k != i} ||z_i - z_k||^2 for i in rows (eq. 3.20)."""
    dist, idx = cKDTree(Z).query(Z[rows], k=2)
    nearest = np.where(idx[:, 0] == rows, dist[:, 1], dist[:, 0])
    return nearest ** 2


def class_kde(Z: np.ndarray, y: np.ndarray, rows: np.ndarray, epsilon: float,
              leaf_size: int = 32) -> tuple[ClassSums, np.ndarray, KDForest]:
    """Approximate S_ic (shifted by exp(L_i)) for the training points i in `rows` (labels
    0..C-1), with |S^_ic - S_ic| <= epsilon S_ic; also the shift L and the forest."""
    if epsilon < 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon}")
    L = nearest_shift(Z, rows)
    forest = build_forest(Z, y, leaf_size)
    return forest_sums(forest, Z, Z[rows], L, rows, y[rows], epsilon), L, forest


def objective(A, X, y, rows=None, epsilon: float = 0.1, leaf_size: int = 32, reg=0.0):
    """Approximate NCA objective sum_{i in rows} p^_i (eq. 4.12, Algorithm 4.6), its gradient
    (eq. 3.14 with the approximated kernel values) and `info` {'pairs': kernel values computed
    one by one, 'candidates': len(rows) (N - 1), 'nodes': approximated (query, node) pairs}.
    Labels must be 0..C-1."""
    A, X, y = check_inputs(A, X, y)
    y = y.astype(np.intp)
    n = X.shape[0]
    rows = np.arange(n) if rows is None else np.asarray(rows, dtype=np.intp)
    Z = project(A, X)
    cs, _, forest = class_kde(Z, y, rows, epsilon, leaf_size)
    S = cs.sums.sum(axis=1)
    own = y[rows]
    p = cs.sums[np.arange(rows.size), own] / S
    Y = np.zeros_like(Z)
    # pairs evaluated one by one: c_ij = p_ij (p_i - [c_j = c_i])
    j = forest.index[cs.exact_pos]
    coef = cs.exact_k / S[cs.exact_q] * (p[cs.exact_q] - (y[j] == own[cs.exact_q]))
    accumulate_pairs(Y, Z, rows[cs.exact_q], j, coef)
    # approximated nodes: sum_{j in G} w (z_i - z_j)(x_i - x_j)^T through node sums of z
    q, node = cs.approx_q, cs.approx_node
    w = cs.approx_k / S[q] * (p[q] - (forest.label[node] == own[q]))
    count = (forest.end - forest.start)[node]
    cz = np.vstack([np.zeros(Z.shape[1]), np.cumsum(Z[forest.index], axis=0)])
    zq = Z[rows[q]]
    np.add.at(Y, rows[q], w[:, None] * (count[:, None] * zq - (cz[forest.end[node]]
                                                              - cz[forest.start[node]])))
    # ... and Y_j -= w (z_i - z_j) for every j in G, summed down the trees by difference arrays
    npos = forest.index.size
    dU = np.zeros((npos + 1, Z.shape[1]))
    dV = np.zeros(npos + 1)
    np.add.at(dU, forest.start[node], w[:, None] * zq)
    np.add.at(dU, forest.end[node], -w[:, None] * zq)
    np.add.at(dV, forest.start[node], w)
    np.add.at(dV, forest.end[node], -w)
    U, V = np.cumsum(dU, axis=0)[:-1], np.cumsum(dV)[:-1]
    Y[forest.index] -= U - V[:, None] * Z[forest.index]
    grad = 2.0 * (Y.T @ X)
    f, grad = regularise(A, float(p.sum()), grad, reg)
    return f, grad, {"pairs": int(cs.exact_q.size), "candidates": int(rows.size * (n - 1)),
                     "nodes": int(q.size)}

"""Nearest training points under one quadratic metric per query, with a stated tie rule.

Query q_i has its own metric d_i(y)^2 = (y - q_i)^T M_i (y - q_i), given spectrally:
M_i = V_i diag(g_i) V_i^T + g_perp_i (I - V_i V_i^T), V_i (d x r) orthonormal, or with unit
columns only when g_perp_i = 0 and r = d (a Cholesky factor, `metrics.gqd_factor`; the
error bounds below grow with sum_k g_k <= r max g_k, which their factor (r + 2) allows): the
local GQD metrics of `dmlbench.methods.local`. Distances to all n training points are first computed
fast and approximately, then exactly for the candidates that can reach the answer:

- fast: either a Gram form, one matrix product for a block of queries (y^T M y - 2 y^T M q +
  q^T M q, from the rows [y_a y_b, y, 1]; used when d (d + 1) / 2 <= 2 d r; the rows are
  precomputed when all n fit in `GRAM_BYTES`, else built for one chunk of training points at a
  time, `GRAM_CHUNK_BYTES`, and multiplied at once, so large training sets keep the Gram form's
  one matrix product instead of the span form's several passes), or the span form
  sum_k g_k (v_k^T (y - q))^2 + g_perp |y - q|^2_perp.
  Both come with a rigorous floating-point error bound (Higham, Accuracy and Stability of
  Numerical Algorithms, 2nd ed., sect. 3.1: |fl(a^T b) - a^T b| <= gamma_n |a|^T |b|), which
  gives a lower and an upper bound on each exact value; the Gram form's bound has the shape
  alpha_q (|y|^2 + |q|^2), so both bounds cost two passes over the block, not one per term.
- exact: (y - q) projected on V: sum_k g_k p_k^2 + g_perp |(y - q) - V p|^2, computed the same
  way for a pair whatever the other queries or training points, so results do not depend on
  batching or chunking.

A metric may also belong to the training point (`search_owned`): d_j(q)^2 = (q - y_j)^T M_j
(q - y_j) with y_j's own M_j, or the symmetric average (d_i(y_j)^2 + d_j(q_i)^2) / 2 of both
one-sided squared distances. The Gram form then takes its coefficients from M_j and its rows from
the queries (the same expansion with the roles of q and y exchanged), with the same bound.

Tie rule (the order is defined at the metric's resolution `band`, a relative tolerance on
squared distances): sorted by exact squared distance, the smallest remaining value v opens a
group holding every value <= v (1 + band); a group counts as tied, is ordered by Euclidean
distance |y - q|, then by training index, and all its members report the distance sqrt(v).
With MVCE weights, `certified_band(gap)` is the band the solver's duality gap certifies: every
squared GQD distance (literal A or inverse A^{-1}) lies within a factor [x_lo, x_hi] of its value
at the optimum, so values further apart than x_hi / x_lo keep their order at the optimum.
"""

from __future__ import annotations

import numpy as np

from ...measure.neighbours import MAX_BLOCK_BYTES

#: the narrowest tie band (relative, on squared distances); used as is without a solver
TIE_RTOL = 1e-4
#: at most this many bytes for the training points' pairwise products (Gram form), kept
GRAM_BYTES = 4 * MAX_BLOCK_BYTES
#: beyond `GRAM_BYTES`, the pairwise products of this many bytes of training points at a time
#: (built, multiplied and dropped while they are in the cache)
GRAM_CHUNK_BYTES = 4 * 2**20
_EPS = np.finfo(float).eps


def certified_band(gap) -> np.ndarray:
    """max(TIE_RTOL, x_hi / x_lo - 1), where log det within `gap` of the optimum bounds every
    eigenvalue x of A*^{-1/2} A A*^{-1/2} by x - 1 - log x <= gap (the optimality of A* over the
    convex set of feasible matrices gives tr(A*^{-1} (A - A*)) <= 0), hence
    x_lo = 1 - sqrt(2 gap) (from -t - log(1 - t) >= t^2 / 2) and x_hi = 1 + gap + sqrt(gap^2 +
    2 gap) (from t - log(1 + t) >= t^2 / (2 (1 + t)))."""
    gap = np.maximum(np.asarray(gap, dtype=float), 0.0)
    x_lo = np.maximum(1.0 - np.sqrt(2.0 * gap), 1e-300)
    x_hi = 1.0 + gap + np.sqrt(gap * gap + 2.0 * gap)
    return np.maximum(TIE_RTOL, x_hi / x_lo - 1.0)


class TrainingPoints:
    """The training points, centred (distances are translation invariant; centring shrinks the
    error bounds), their norms, and for the Gram form the rows [y_a y_b (a <= b), y, 1] when
    they fit in `GRAM_BYTES` (`gram_products` builds them chunk by chunk otherwise)."""

    def __init__(self, X: np.ndarray):
        self.mean = X.mean(axis=0)
        self.X = X - self.mean
        self.sq = np.einsum("nd,nd->n", self.X, self.X)
        n, d = X.shape
        self.upper = np.triu_indices(d)
        self.gram = None
        if n * (len(self.upper[0]) + d + 1) * 8 <= GRAM_BYTES:
            self.gram = np.hstack([self.X[:, self.upper[0]] * self.X[:, self.upper[1]], self.X,
                                   np.ones((n, 1))])

    def use_gram(self, r: int) -> bool:
        """Whether the Gram form costs fewer products than the span form for metrics of r
        directions: d (d + 1) / 2 <= 2 d r."""
        d = self.X.shape[1]
        return d * (d + 1) // 2 <= 2 * d * r

    def gram_products(self, coef: np.ndarray) -> np.ndarray:
        """coef @ rows^T (b x n) with the rows [y_a y_b (a <= b), y, 1] of every training point:
        the kept rows, or rows built for `GRAM_CHUNK_BYTES` of training points at a time (the
        same error bound holds; the lists come from the exact distances either way)."""
        if self.gram is not None:
            return coef @ self.gram.T
        n = self.X.shape[0]
        out = np.empty((coef.shape[0], n))
        step = max(1, GRAM_CHUNK_BYTES // (8 * coef.shape[1]))
        for start in range(0, n, step):
            rows = slice(start, min(start + step, n))
            out[:, rows] = coef @ gram_rows(self.X[rows], self.upper).T
        return out


def search(train: TrainingPoints, Q: np.ndarray, V: np.ndarray, g: np.ndarray,
           g_perp: np.ndarray, depth: int, band: np.ndarray,
           exclude: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(dist, ind) (b, depth): the `depth` nearest training points of each query Q[i] under its
    metric (V[i], g[i], g_perp[i]), ordered by the tie rule with relative band `band[i]`;
    `exclude[i]` is a training index left out for query i (leave-one-out)."""
    n, d = train.X.shape
    b, r = g.shape
    gram = train.use_gram(r)
    per_row = 8 * (4 * n + 2 * d * d if gram else (2 * r + 4) * n + d * r)
    # Gram rows built per chunk: their memory goes to larger query blocks, over which the
    # building is shared
    budget = MAX_BLOCK_BYTES + (GRAM_BYTES if gram and train.gram is None else 0)
    rows = max(1, budget // per_row)
    dist = np.empty((b, depth))
    ind = np.empty((b, depth), dtype=np.int64)
    Qc = Q - train.mean
    for s0 in range(0, b, rows):
        sl = slice(s0, min(s0 + rows, b))
        lower, upper = (_gram_bounds if gram else _span_bounds)(train, Qc[sl], V[sl], g[sl],
                                                                 g_perp[sl])
        if exclude is not None:
            each = np.arange(lower.shape[0])
            lower[each, exclude[sl]] = upper[each, exclude[sl]] = np.inf
        dist[sl], ind[sl] = _tie_ordered(
            lower, upper, depth, band[sl],
            lambda cand, s=sl: _exact_in_blocks(train, Qc[s], V[s], g[s], g_perp[s], cand))
    return dist, ind


def _common_error(train, Q, g, g_perp):
    """A bound on the round-off shared by both forms and by `exact_squared` (forming the
    metric from V and g, projecting y - q on V, squaring and summing): a modest multiple of
    (d + r) eps max|gain| (|y| + |q|)^2."""
    d, r = train.X.shape[1], g.shape[1]
    top = np.maximum(np.abs(g).max(axis=1), np.abs(g_perp))
    norm = np.sqrt(train.sq)[None, :] + np.linalg.norm(Q, axis=1)[:, None]
    return _common_bound(d, r) * top[:, None] * norm * norm


def _common_bound(d: int, r: int) -> float:
    """The constant of `_common_error`'s bound, c (|y| + |q|)^2 max|gain|."""
    return 8.0 * (d + r + 8) * (r + 2) * _EPS


def gram_coefficients(P: np.ndarray, V: np.ndarray, g: np.ndarray, g_perp: np.ndarray,
                      upper: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(coef, alpha) of the metrics M_i (V[i], g[i], g_perp[i]) centred at the points P[i]:
    coef_i . [x_a x_b (a <= b, `upper`), x, 1] = (x - p_i)^T M_i (x - p_i), one row (M_ab (2 off
    the diagonal), -2 M p, p^T M p) per metric, and alpha_i, the bound alpha_i (|x|^2 + |p_i|^2)
    on the round-off of that product and of `exact_squared` (`_gram_bounds`)."""
    d, r = P.shape[1], g.shape[1]
    M = (V * (g - g_perp[:, None])[:, None, :]) @ np.swapaxes(V, 1, 2)
    M[:, np.arange(d), np.arange(d)] += g_perp[:, None]
    a, c = upper
    Mp = np.einsum("bde,be->bd", M, P)
    coef = np.concatenate([M[:, a, c] * np.where(a == c, 1.0, 2.0), -2.0 * Mp,
                           np.einsum("bd,bd->b", Mp, P)[:, None]], axis=1)
    fro = np.sqrt(np.einsum("bde,bde->b", M, M))
    top = np.maximum(np.abs(g).max(axis=1), np.abs(g_perp))
    gamma = 2.0 * (a.size + 2 * d + 8) * _EPS
    return coef, 2.0 * (2.0 * gamma * fro + 2.0 * _common_bound(d, r) * top)


def gram_rows(X: np.ndarray, upper: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """[x_a x_b (a <= b), x, 1] for every row x of X: the rows `gram_coefficients` multiplies."""
    return np.hstack([X[:, upper[0]] * X[:, upper[1]], X, np.ones((X.shape[0], 1))])


def _gram_bounds(train, Q, V, g, g_perp):
    """Lower and upper bounds on every training point's exact squared distance: the Gram form
    y^T M y - 2 y^T M q + q^T M q, one product of (M_ab (2 off the diagonal), -2 M q, q^T M q)
    with the rows [y_a y_b, y, 1], -+ alpha (|y|^2 + |q|^2). alpha is twice a bound on the
    product's round-off (gamma_p times the sum of its terms' magnitudes, <= 2 ||M||_F (|y|^2 +
    |q|^2)) plus the common error (`_common_error`, with (|y| + |q|)^2 <= 2 (|y|^2 + |q|^2)):
    the factor 2 also covers the round-off of subtracting and adding it."""
    coef, alpha = gram_coefficients(Q, V, g, g_perp, train.upper)
    approx = train.gram_products(coef)
    spread = alpha[:, None] * (train.sq[None, :] + np.einsum("bd,bd->b", Q, Q)[:, None])
    upper = approx + spread
    return np.subtract(approx, spread, out=approx), upper


def _span_bounds(train, Q, V, g, g_perp):
    """Lower and upper bounds from the span form and its error bound."""
    approx, err = _span_form(train, Q, V, g, g_perp)
    return approx - err, approx + err


def _span_form(train, Q, V, g, g_perp):
    """sum_k (g_k - g_perp) (v_k^T y - v_k^T q)^2 + g_perp |y - q|^2 for all training points y
    (the Euclidean part expanded), and its error bound."""
    S = np.swapaxes(V, 1, 2) @ train.X.T - np.einsum("bdr,bd->br", V, Q)[:, :, None]
    approx = np.einsum("br,brn->bn", g - g_perp[:, None], S * S)
    q_sq = np.einsum("bd,bd->b", Q, Q)
    approx += g_perp[:, None] * (train.sq[None, :] - 2.0 * (Q @ train.X.T) + q_sq[:, None])
    return approx, _common_error(train, Q, g, g_perp)


def exact_squared(train, Q, V, g, g_perp, cand):
    """Squared metric and Euclidean distances of the training points `cand` (b, w) to each
    query: the difference projected on V, the rest measured directly (no cancellation)."""
    diff = train.X[cand] - Q[:, None, :]
    P = diff @ V
    perp = diff - P @ np.swapaxes(V, 1, 2)
    d2 = (np.einsum("br,bwr->bw", g, P * P)
          + g_perp[:, None] * np.einsum("bwd,bwd->bw", perp, perp))
    return np.maximum(d2, 0.0), np.einsum("bwd,bwd->bw", diff, diff)


def _tie_ordered(lower, upper, depth, band, exact):
    """The `depth` nearest by the tie rule, from lower and upper bounds on every squared distance
    and `exact(cand)`, the exact squared metric and Euclidean distances of the candidates."""
    upper.partition(depth - 1, axis=1)  # in place (np.partition would copy it first)
    kth = upper[:, depth - 1]
    # every point of the groups up to the depth-th has exact value <= kth (1 + band)
    inside = lower <= (kth * (1.0 + band))[:, None]
    cand, valid = _packed(inside)
    width = cand.shape[1]
    d2, e2 = exact(cand)
    d2 = np.where(valid, d2, np.inf)
    order = np.lexsort((cand, d2), axis=1)
    d2, e2, cand = (np.take_along_axis(a, order, axis=1) for a in (d2, e2, cand))
    group = np.zeros(d2.shape, dtype=np.int64)
    anchor = d2[:, 0].copy()
    value = np.empty_like(d2)
    value[:, 0] = anchor
    for j in range(1, width):
        opens = d2[:, j] > anchor * (1.0 + band)
        anchor = np.where(opens, d2[:, j], anchor)
        group[:, j] = group[:, j - 1] + opens
        value[:, j] = anchor
    final = np.lexsort((cand, e2, group), axis=1)[:, :depth]
    return (np.sqrt(np.take_along_axis(value, final, axis=1)),
            np.take_along_axis(cand, final, axis=1))


def _packed(inside: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The column indices of each row's True entries, left-aligned in a (b, width) array, width
    the largest count; (indices, valid), the padding index 0 and not valid. One pass over
    `inside` (a selection by partition costs several)."""
    rows, cols = np.divmod(np.flatnonzero(inside), inside.shape[1])  # 2-d nonzero: 10x slower
    counts = np.bincount(rows, minlength=inside.shape[0])
    slot = np.arange(rows.size) - np.repeat(np.cumsum(counts) - counts, counts)
    cand = np.zeros((inside.shape[0], int(counts.max())), dtype=np.int64)
    valid = np.zeros(cand.shape, dtype=bool)
    cand[rows, slot], valid[rows, slot] = cols, True
    return cand, valid


def _exact_in_blocks(train, Q, V, g, g_perp, cand):
    b, width = cand.shape
    d = train.X.shape[1]
    rows = max(1, MAX_BLOCK_BYTES // (8 * width * 3 * d))
    d2, e2 = np.empty(cand.shape), np.empty(cand.shape)
    for s in range(0, b, rows):
        sl = slice(s, s + rows)
        d2[sl], e2[sl] = exact_squared(train, Q[sl], V[sl], g[sl], g_perp[sl], cand[sl])
    return d2, e2


class OwnedMetrics:
    """Every training point's own metric M_j (V[j], g[j], g_perp[j]: (n, d, r), (n, r), (n,), in
    the spectral form `search` takes), centred at y_j, with its Gram coefficients
    (`gram_coefficients`) and the tie band its accuracy allows (the largest over the training
    points)."""

    def __init__(self, train: TrainingPoints, V: np.ndarray, g: np.ndarray, g_perp: np.ndarray,
                 band: float):
        n, d = train.X.shape
        p = len(train.upper[0]) + d + 1
        if n * p * 8 > GRAM_BYTES:
            raise ValueError(
                f"a metric per training point needs its Gram coefficients, n (d (d + 1) / 2 + d + "
                f"1) = {n} x {p} values ({n * p * 8 / 2**20:.0f} MB), more than the "
                f"{GRAM_BYTES / 2**20:.0f} MB allowed: use owner='query', or reduce the features "
                "(a PCA step in `preprocess`)")
        self.V, self.g, self.g_perp, self.band = V, g, g_perp, float(band)
        self.coef, self.alpha = np.empty((n, p)), np.empty(n)
        rows = max(1, MAX_BLOCK_BYTES // (8 * 3 * d * d))
        for s in range(0, n, rows):
            sl = slice(s, s + rows)
            self.coef[sl], self.alpha[sl] = gram_coefficients(train.X[sl], V[sl], g[sl],
                                                              g_perp[sl], train.upper)


def search_owned(train: TrainingPoints, Q: np.ndarray, own: OwnedMetrics, depth: int,
                 band: np.ndarray, exclude: np.ndarray | None = None,
                 query: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(dist, ind) (b, depth) as `search`, with the training point's metric: squared distance
    (q - y_j)^T M_j (q - y_j), M_j = `own`'s (owner 'training'), or with `query` (V, g, g_perp of
    each query's own metric) the average of the two one-sided squared distances,
    (q - y_j)^T ((M_q + M_j) / 2) (q - y_j) (owner 'symmetric'). The tie band of query i is the
    largest of `band[i]` and `own.band`."""
    n, d = train.X.shape
    b = Q.shape[0]
    per_row = 8 * (6 * n + own.coef.shape[1] + 2 * d * d)
    rows = max(1, MAX_BLOCK_BYTES // per_row)
    dist = np.empty((b, depth))
    ind = np.empty((b, depth), dtype=np.int64)
    Qc = Q - train.mean
    band = np.maximum(np.asarray(band, dtype=float), own.band)
    for s0 in range(0, b, rows):
        sl = slice(s0, min(s0 + rows, b))
        Qs = Qc[sl]
        approx = gram_rows(Qs, train.upper) @ own.coef.T
        spread = own.alpha[None, :] * (train.sq[None, :] + np.einsum("bd,bd->b", Qs, Qs)[:, None])
        lower, upper = approx - spread, approx + spread
        mine = None if query is None else tuple(x[sl] for x in query)
        if mine is not None:
            gram = train.use_gram(mine[1].shape[1])
            lq, uq = (_gram_bounds if gram else _span_bounds)(train, Qs, *mine)
            lower, upper = 0.5 * (lower + lq), 0.5 * (upper + uq)
            slack = 2.0 * _EPS * (np.abs(lower) + np.abs(upper))  # the average's own round-off
            lower, upper = lower - slack, upper + slack
        if exclude is not None:
            each = np.arange(lower.shape[0])
            lower[each, exclude[sl]] = upper[each, exclude[sl]] = np.inf
        dist[sl], ind[sl] = _tie_ordered(
            lower, upper, depth, band[sl],
            lambda cand, Qs=Qs, mine=mine: _exact_owned_in_blocks(train, Qs, own, cand, mine))
    return dist, ind


def exact_squared_owned(train: TrainingPoints, Q: np.ndarray, own: OwnedMetrics,
                        cand: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Squared distance of each query to the training points `cand` (b, w) under the training
    point's own metric (computed as `exact_squared` does), and the squared Euclidean distance."""
    diff = train.X[cand] - Q[:, None, :]
    V = own.V[cand]
    P = np.einsum("bwd,bwdr->bwr", diff, V)
    perp = diff - np.einsum("bwr,bwdr->bwd", P, V)
    d2 = (np.einsum("bwr,bwr->bw", own.g[cand], P * P)
          + own.g_perp[cand] * np.einsum("bwd,bwd->bw", perp, perp))
    return np.maximum(d2, 0.0), np.einsum("bwd,bwd->bw", diff, diff)


def _exact_owned_in_blocks(train, Q, own, cand, query):
    b, width = cand.shape
    d, r = train.X.shape[1], own.g.shape[1]
    rows = max(1, MAX_BLOCK_BYTES // (8 * width * (d * r + 4 * d)))
    d2, e2 = np.empty(cand.shape), np.empty(cand.shape)
    for s in range(0, b, rows):
        sl = slice(s, s + rows)
        d2[sl], e2[sl] = exact_squared_owned(train, Q[sl], own, cand[sl])
        if query is not None:
            V, g, g_perp = query
            d2[sl] = 0.5 * (d2[sl] + exact_squared(train, Q[sl], V[sl], g[sl], g_perp[sl],
                                                   cand[sl])[0])
    return d2, e2

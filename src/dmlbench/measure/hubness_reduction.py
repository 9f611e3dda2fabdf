"""Hubness reduction: the distances of a fitted metric rescaled by how each point sees the others
(the mathematics; `dmlbench.methods.hubness_reduced.HubnessReduced` puts a method behind it).

For a query x, a labelled (training) point y and the method's distance t = d(x, y), with d_x the
query's distances to the labelled points and d_y the labelled point's distances to the other
labelled points (its leave-one-out list, y queried as the method queries any point):

- mutual proximity (Schnitzer, Flexer, Schedl & Widmer 2012, section 3.2): the probability that
  y is closer to x than the others are to x and x closer to y than the others are to y,
  MP = P(D_x > t and D_y > t); secondary distance 1 - MP.
  ``empiric``: MP = |{j : d(x, j) > t and d(y, j) > t}| / N, j over the labelled points other
  than y (and than x, when x is one of them), N their number;
  ``gaussian``: D_x ~ N(mu_x, sd_x^2) and D_y ~ N(mu_y, sd_y^2) independent, with the mean and
  population standard deviation of d_x and d_y: MP = sf(t; mu_x, sd_x) sf(t; mu_y, sd_y);
- local scaling (Zelnik-Manor & Perona 2004, in the form of Schnitzer et al. 2012, section 3.1):
  1 - exp(-t^2 / (sigma_x sigma_y)), sigma = distance to the k-th nearest neighbour;
- NICDM (Jegou et al. 2007, non-iterative form of Schnitzer et al. 2012, section 3.1):
  t / sqrt(mu_x mu_y), mu = mean distance to the k nearest neighbours;
- DisSim local (Hara, Suzuki, Kobayashi, Fukumizu & Radovanovic 2016):
  ||x - y||^2 - ||x - c_k(x)||^2 - ||y - c_k(y)||^2, c_k = centroid of the k nearest labelled
  points. It needs vectors: the method's `search_vectors` (queries and labelled points in one
  space where its distance is Euclidean, e.g. a linear metric's embedding). y is the labelled
  point's vector there and c_k(y) the centroid of the k labelled vectors nearest to it.

The neighbours of a labelled point never include itself (leave-one-out), so sigma_y, mu_y, c_k(y)
and d_y describe y among the others. An asymmetric method (Move-labeled: ||x - W z||) gives one
distance t = d(x, y) per pair; d_y (hence sigma_y, mu_y) is y's leave-one-out list as a query,
the dissimilarity as the method defines it, while DisSim, whose formula lives in one vector space,
takes y as the labelled vector W z (the two coincide for a linear metric).

``distance: cosine`` replaces the method's distance by 1 - cosine similarity of its search vectors
(with unit rows and the Euclidean method, 1 - cos = ||x - y||^2 / 2 is the cosine distance of the
data; mutual proximity empiric and the order of local scaling do not change, NICDM and Gaussian
mutual proximity do).

Exact and candidate modes. With at most `exact_max` labelled points every pair is used: the
query's and each labelled point's distances to all labelled points (all pairs; queries in blocks
of `neighbours.MAX_BLOCK_BYTES`). Above that, each query and labelled point keeps its
`candidates` (k') nearest: the reduced lists are chosen among the query's k' candidates (a point
outside them cannot enter); local scaling, NICDM and DisSim are otherwise exact (k <= k');
Gaussian mutual proximity takes mu and sd over the k' nearest (as scikit-hubness does);
empiric mutual proximity counts over every labelled point, which is exact for a pair unless t is
beyond y's k'-th distance: y's count of points within t is then cut at k' (the secondary distance
a lower bound). The wrapper records the mode (`reduction_exact`), k' (`reduction_candidates`)
and the share of such cut pairs (`reduction_truncated_share`) in the method's fit_info.

Order: by (secondary distance, the method's distance, index): equal secondary distances (common
for empiric mutual proximity, whose values are counts) keep the method's order. Gaussian mutual
proximity and local scaling are ordered by -log MP and t^2 / (sigma_x sigma_y), the same order as
their secondary distances in exact arithmetic, without the ties rounding 1 - p to 1 makes. A zero
sigma or mu (duplicate points) scales t = 0 to 0 and any t > 0 to infinity. DisSim can be
negative; it is not shifted (a shift changes no order).
"""

from __future__ import annotations

import numpy as np
from scipy.special import log_ndtr

from .. import vocabulary as voc
from .neighbours import MAX_BLOCK_BYTES, euclidean_kneighbors

#: the reductions (`Reducer`), the variants of mutual proximity, the distances reduced
KINDS = ("mutual_proximity", "local_scaling", "nicdm", "dissim_local")
VARIANTS = ("empiric", "gaussian")
DISTANCES = ("euclidean", "cosine")


class Lists:
    """Sorted neighbour lists (dist, ind), rows = queries; `own[i]` is the labelled index of query
    i when the queries are the labelled points (-1 otherwise); `complete` when every row holds all
    labelled points but its own."""

    def __init__(self, dist, ind, own, complete: bool):
        self.dist, self.ind = np.asarray(dist, dtype=float), np.asarray(ind, dtype=np.int64)
        self.own, self.complete = own, complete


def _scale_keys(t: np.ndarray, scale: np.ndarray, power: int) -> np.ndarray:
    """t^power / scale with 0 for t = 0 and inf for t > 0 at scale 0 (duplicates)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        keys = t**power / scale
    keys[t == 0] = 0.0
    return keys


def _log_sf(t: np.ndarray, mu: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """log P(N(mu, sd^2) > t); a point mass (sd = 0) gives 0 below mu and -inf from mu on."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = log_ndtr((mu - t) / sd)
    point = sd == 0
    if np.any(point):
        out = np.where(point, np.where(t < mu, 0.0, -np.inf), out)
    return out


def local_spreads(points: np.ndarray, labelled: np.ndarray, near: np.ndarray) -> np.ndarray:
    """DisSim's ||x - c_k(x)||^2 of each row x of `points`, c_k(x) the centroid of the labelled
    vectors `labelled[near[r]]` (summed in the order of `near`, then divided by k). Each row's
    value depends on its own vectors only, not on the other rows (`run.loo` relies on it)."""
    centroids = labelled[near[:, 0]]  # a copy: fancy indexing
    for m in range(1, near.shape[1]):
        centroids += labelled[near[:, m]]
    centroids /= near.shape[1]
    diff = np.subtract(points, centroids, out=centroids)
    return np.einsum("ij,ij->i", diff, diff)


class Reducer:
    """One reduction of one fitted method's labelled points: `kind` (one of `KINDS`), its
    `variant` (mutual proximity) or `k` (the others), `train` the labelled points' leave-one-out
    lists, `vectors` the method's search vectors (queries of the training points, labelled
    points) when the reduction needs them; `spread_train` DisSim's `local_spreads` of the
    labelled points when the caller has them (else computed from `vectors`)."""

    def __init__(self, kind: str, train: Lists, n_labeled: int, *, variant: str | None = None,
                 k: int | None = None, vectors=None, spread_train=None,
                 max_bytes: int = MAX_BLOCK_BYTES):
        self.kind, self.variant, self.k = kind, variant, k
        self.train, self.n, self.max_bytes = train, n_labeled, max_bytes
        self.vectors = vectors
        self.pairs = self.truncated = 0
        td = train.dist
        if kind in ("local_scaling", "nicdm", "dissim_local") and k > td.shape[1]:
            raise ValueError(f"hubness_reduction.k = {k} needs {k} neighbours of each labelled "
                             f"point; only {td.shape[1]} are available (training points - 1 or "
                             "candidates)")
        if kind == "local_scaling":
            self.scale_train = td[:, k - 1]
        elif kind == "nicdm":
            self.scale_train = td[:, :k].mean(axis=1)
        elif kind == "mutual_proximity" and variant == "gaussian":
            self.mu_train, self.sd_train = td.mean(axis=1), td.std(axis=1)
        elif kind == "dissim_local" and spread_train is not None:
            self.spread_train = np.asarray(spread_train, dtype=float)
        elif kind == "dissim_local":
            labelled = vectors[1]
            near = euclidean_kneighbors(labelled, labelled, k, exclude_self=True)[1]
            self.spread_train = local_spreads(labelled, labelled, near)

    def keys(self, q: Lists, query_vectors=None) -> np.ndarray:
        """Ordering keys of every (query, candidate) pair of `q` (see the module docstring)."""
        kind, k, t, ind = self.kind, self.k, q.dist, q.ind
        if kind == "local_scaling":
            return _scale_keys(t, q.dist[:, k - 1, None] * self.scale_train[ind], 2)
        if kind == "nicdm":
            scale = np.sqrt(q.dist[:, :k].mean(axis=1)[:, None] * self.scale_train[ind])
            return _scale_keys(t, scale, 1)
        if kind == "dissim_local":
            spread = local_spreads(query_vectors, self.vectors[1], ind[:, :k])
            return t * t - spread[:, None] - self.spread_train[ind]
        if self.variant == "gaussian":
            mu, sd = t.mean(axis=1, keepdims=True), t.std(axis=1, keepdims=True)
            return -(_log_sf(t, mu, sd) + _log_sf(t, self.mu_train[ind], self.sd_train[ind]))
        return self._empiric(q)

    def values(self, keys: np.ndarray) -> np.ndarray:
        """The secondary distances of ordering keys (1 - MP, 1 - exp(-.), or the keys)."""
        if self.kind == "local_scaling":
            return -np.expm1(-keys)
        if self.kind == "mutual_proximity" and self.variant == "gaussian":
            return -np.expm1(-keys)
        return keys

    def _empiric(self, q: Lists) -> np.ndarray:
        """1 - MP empiric of every pair: N - |{j : d(x, j) <= t} u {j : d(y, j) <= t}| points
        farther from both, j over the labelled points but x and y."""
        n, td, ti = self.n, self.train.dist, self.train.ind
        rows, width = q.dist.shape
        others = n - 1 - (q.own >= 0)  # N per query
        # |A|: the query's points within t, but y (rows sorted: a search per row)
        near_x = np.stack([np.searchsorted(q.dist[r], q.dist[r], side="right")
                           for r in range(rows)]) - 1 if rows else np.zeros((0, width), int)
        out = np.empty((rows, width))
        block = max(1, self.max_bytes // (8 * (n + 2 * width)))
        for r0 in range(0, rows, block):
            rs = np.arange(r0, min(r0 + block, rows))
            dense = np.full((rs.size, n), np.inf)  # d(x, j) of each query of the block
            dense[np.arange(rs.size)[:, None], q.ind[rs]] = q.dist[rs]
            pair_r = np.repeat(np.arange(rs.size), width)
            pair_p = np.tile(np.arange(width), rs.size)
            step = max(1, self.max_bytes // (24 * td.shape[1]))
            for s in range(0, pair_r.size, step):
                pr, pp = pair_r[s:s + step], pair_p[s:s + step]
                y, t = q.ind[rs[pr], pp], q.dist[rs[pr], pp]
                y_ind, y_dist = ti[y], td[y]
                in_b = (y_dist <= t[:, None]) & (y_ind != q.own[rs[pr], None])
                near_y = in_b.sum(axis=1)
                both = (in_b & (dense[pr[:, None], y_ind] <= t[:, None])).sum(axis=1)
                union = near_x[rs[pr], pp] + near_y - both
                out[rs[pr], pp] = 1.0 - (others[rs[pr]] - union) / others[rs[pr]]
                if not self.train.complete:
                    self.truncated += int(np.count_nonzero(y_dist[:, -1] <= t))
            self.pairs += rs.size * width
        return out

    def reduce(self, q: Lists, depth: int, query_vectors=None) -> tuple[np.ndarray, np.ndarray]:
        """The `depth` nearest labelled points of each query of `q` under the reduced distance,
        (distances, indices), ordered by (secondary distance, method's distance, index); rows
        in blocks of about `max_bytes` per array."""
        rows, width = q.ind.shape
        if depth > width:
            raise ValueError(f"hubness reduction: {depth} neighbours asked, only {width} "
                             "candidates per query (raise `candidates`)")
        dist, ind = np.empty((rows, depth)), np.empty((rows, depth), dtype=np.int64)
        step = max(1, self.max_bytes // (8 * width))
        for start in range(0, rows, step):
            sl = slice(start, start + step)
            part = Lists(q.dist[sl], q.ind[sl], q.own[sl], q.complete)
            keys = self.keys(part, None if query_vectors is None else query_vectors[sl])
            if np.isnan(keys).any():
                raise ValueError("hubness reduction: a secondary distance is NaN (infinite "
                                 "distances from the method?)")
            order = np.lexsort((part.ind, part.dist, keys), axis=1)[:, :depth]
            dist[sl] = self.values(np.take_along_axis(keys, order, axis=1))
            ind[sl] = np.take_along_axis(part.ind, order, axis=1)
        return dist, ind

    def info(self) -> dict:
        return {voc.REDUCTION_TRUNCATED_SHARE: self.truncated / self.pairs} if (
            self.pairs and not self.train.complete) else {}


def _unit_rows(V: np.ndarray, what: str) -> np.ndarray:
    norms = np.linalg.norm(V, axis=1)
    if np.any(norms == 0):
        raise ValueError(f"hubness_reduction.distance = cosine: {int(np.sum(norms == 0))} "
                         f"{what} vector(s) are zero, whose cosine is undefined; use distance: "
                         "euclidean")
    return V / norms[:, None]


def cosine_kneighbors(Q, Z, n_neighbors: int, exclude_self: bool = False):
    """(1 - cosine similarity, indices) of each row of Q's nearest rows of Z, sorted (the
    Euclidean order of unit rows, 1 - cos = ||u - v||^2 / 2)."""
    dist, ind = euclidean_kneighbors(_unit_rows(Q, "query"), _unit_rows(Z, "labelled"),
                                     n_neighbors, exclude_self=exclude_self)
    return dist * dist / 2.0, ind

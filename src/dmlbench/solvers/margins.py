"""Hypothesis margins: neighbour sets, their scatter matrices and the generalised eigenproblem of
Chang 2012 (sections 2.1-2.6, Theorem 4, section 3.2). The numerical core of the BoostMDM family
and of marginal Fisher analysis (`dmlbench.methods.boost`); it imports no method.

A metric M = L L^T is represented by the mapped training points Z = X L (N x r): M-distances are
Euclidean distances between rows of Z. For every training sample i, a *set* gives weighted hits
H(x_i) = {(j, psi_ij)} (same class, j != i) or misses M(x_i) (other classes), the weights of each
sample summing to one:

- `NearestSets`: the k nearest, psi = 1/k (k = 1: eq. 2; k_h and k_m: BoostMDM-K, section 2.6.1);
  a sample whose class has fewer than k_h + 1 members takes all its hits, psi = 1/(N_c - 1) (the
  paper sets k_h = 5 on data sets such as Yeast, whose smallest class has 5 samples in all);
- `GaussianSets`: all of them with softmax weights exp(-mu ||z_i - z_j||^2) (BoostMDM-G, 2.6.2);
  truncated to each sample's `size` nearest hits (misses) with the same weights renormalised
  over them (`SetRule(size=...)`, a `NearestSets` with weights): the large-data form, O(N size)
  instead of N^2 per pass, an approximation whose error `truncation_bound` bounds.

From a set and sample weights c (summing to one):

- `f(F)`: f_M(x_i, S(x_i)) = sum_j psi_ij ||F_i - F_j||^2 in any coordinates F (section 2.1);
- `scatter(X, c)`: X L_P X^T of eqs. 13-16 (rows of X are samples here), the Laplacian form of
  P = R(i, j; c, S), i.e. sum_i c_i sum_j psi_ij (x_i - x_j)(x_i - x_j)^T.

Memory stays O(N k + chunk x N): nearest sets are neighbour lists (`dmlbench.measure.neighbours`), Gaussian
sets are rebuilt block by block from rows of the distance matrix (all temporaries of a block
within `MAX_BLOCK_BYTES`), never an N x N array once N x N exceeds that.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
from scipy.special import logsumexp

from ..measure.neighbours import MAX_BLOCK_BYTES, euclidean_kneighbors


def _row_chunks(n_rows: int, row_bytes: int, max_bytes: int = MAX_BLOCK_BYTES):
    step = max(1, max_bytes // max(1, row_bytes))
    for start in range(0, n_rows, step):
        yield slice(start, min(start + step, n_rows))


def squared_distances(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """||a_i - b_j||^2 by expansion (rounding below zero clipped to zero)."""
    block = (np.einsum("ij,ij->i", A, A)[:, None] - 2.0 * (A @ B.T)
             + np.einsum("ij,ij->i", B, B)[None, :])
    return np.maximum(block, 0.0)


@dataclass
class NearestSets:
    """The k nearest hits (or misses) of every sample: `index` (N x k), weights 1/k; or, where
    some samples have fewer than k members, `weight` (N x k): 1/k_i on their k_i members and 0
    on the padding columns (which repeat a member)."""

    index: np.ndarray
    weight: np.ndarray | None = None
    #: for truncated Gaussian sets: the largest share of a sample's full Gaussian weight that
    #: the truncation can have left out (`truncation_bound`); None otherwise
    dropped: float | None = None

    def f(self, F: np.ndarray) -> np.ndarray:
        """Average squared distance from each sample to its set members, in coordinates F."""
        n, k = self.index.shape
        out = np.empty(n)
        for rows in _row_chunks(n, 8 * k * max(1, F.shape[1])):
            diff = F[rows, None, :] - F[self.index[rows]]
            if self.weight is None:
                out[rows] = np.einsum("ijk,ijk->i", diff, diff) / k
            else:
                out[rows] = np.einsum("ijk,ijk,ij->i", diff, diff, self.weight[rows])
        return out

    def scatter(self, X: np.ndarray, c: np.ndarray) -> np.ndarray:
        """sum_i c_i sum_j psi_ij (x_i - x_j)(x_i - x_j)^T over the set members j of i."""
        n, k = self.index.shape
        m = X.shape[1]
        S = np.zeros((m, m))
        for rows in _row_chunks(n, 8 * k * max(1, m)):
            D = (X[rows, None, :] - X[self.index[rows]]).reshape(-1, m)
            psi = (np.repeat(c[rows] / k, k) if self.weight is None
                   else (c[rows, None] * self.weight[rows]).ravel())
            S += D.T @ (psi[:, None] * D)
        return (S + S.T) / 2


@dataclass
class GaussianSets:
    """All hits (`side='hits'`) or misses (`'misses'`) of each sample, with the weights
    exp(-mu ||z_i - z_j||^2) normalised over the set (section 2.6.2); mu = 0 gives plain
    averages over all hits (misses), mu -> infinity the nearest one."""

    Z: np.ndarray
    y: np.ndarray
    mu: float
    side: str

    def blocks(self, max_bytes: int = MAX_BLOCK_BYTES):
        """(rows, weights, squared distances) for blocks of rows; weights are (chunk x N)."""
        n = self.Z.shape[0]
        for rows in _row_chunks(n, 6 * 8 * n, max_bytes):  # ~6 (chunk x N) temporaries
            D2 = squared_distances(self.Z[rows], self.Z)
            same = self.y[rows, None] == self.y[None, :]
            if self.side == "hits":
                member = same
                member[np.arange(rows.stop - rows.start), np.arange(rows.start, rows.stop)] = False
            else:
                member = ~same
            logits = np.where(member, -self.mu * D2, -np.inf)
            W = np.exp(logits - logits.max(axis=1, keepdims=True))
            W /= W.sum(axis=1, keepdims=True)
            yield rows, W, D2

    def f(self, F: np.ndarray) -> np.ndarray:
        out = np.empty(self.Z.shape[0])
        for rows, W, D2 in self.blocks():
            if F is not self.Z:
                D2 = squared_distances(F[rows], F)
            out[rows] = np.einsum("ij,ij->i", W, D2)
        return out

    def scatter(self, X: np.ndarray, c: np.ndarray) -> np.ndarray:
        m = X.shape[1]
        S = np.zeros((m, m))
        col_weight = np.zeros(X.shape[0])
        for rows, W, _ in self.blocks():
            P = c[rows, None] * W
            PX = P @ X
            Xr = X[rows]
            S += Xr.T @ (P.sum(axis=1)[:, None] * Xr) - Xr.T @ PX - PX.T @ Xr
            col_weight += P.sum(axis=0)
        S += X.T @ (col_weight[:, None] * X)
        return (S + S.T) / 2


Sets = NearestSets | GaussianSets


@dataclass(frozen=True)
class SetRule:
    """How hits and misses are defined under a metric.

    `kind='nearest'`: the `k_hit` nearest hits and `k_miss` nearest misses (BoostMDM: 1 and 1,
    BoostMDM-K: 5 and 5, Table 2). `kind='gaussian'`: all hits and misses with Gaussian weights;
    `mu=None` takes mu = N / sum_i ||x_i - x_{i;q}||^2 under the metric at hand, x_{i;q} the
    `mu_neighbor`-th (Table 2: 7th) nearest neighbour of x_i; a number fixes mu. `size` (with
    'gaussian'): only each sample's `size` nearest hits and `size` nearest misses, weighted as
    the full sets weight them, renormalised over those kept (`truncated_gaussian_sets`).
    """

    kind: str = "nearest"
    k_hit: int = 1
    k_miss: int = 1
    mu: float | None = None
    mu_neighbor: int = 7
    size: int | None = None

    def check(self, y: np.ndarray, names: tuple[str, str] = ("k_h", "k_m")) -> None:
        """`ValueError` naming the parameter (`names` of k_hit and k_miss in the method) when
        the data cannot provide the sets."""
        _, counts = np.unique(y, return_counts=True)
        if counts.size < 2:
            raise ValueError("y has 1 class; hits and misses need at least 2 classes")
        if counts.min() < 2:
            raise ValueError(f"every class needs at least 2 samples (a hit); the smallest class "
                             f"has {counts.min()}")
        if self.kind == "nearest":
            for name, k in zip(names, (self.k_hit, self.k_miss)):
                if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
                    raise ValueError(f"{name} must be a positive integer, got {k!r}")
            if self.k_miss > y.size - counts.max():
                raise ValueError(f"{names[1]} = {self.k_miss} exceeds the misses available: the "
                                 f"largest class leaves {y.size - counts.max()} samples of "
                                 "other classes")
        elif self.kind == "gaussian":
            if self.mu is not None and not (np.isfinite(self.mu) and self.mu >= 0):
                raise ValueError(f"mu must be >= 0 (or None for Table 2's rule), got {self.mu}")
            if self.mu is None and not 1 <= self.mu_neighbor <= y.size - 1:
                raise ValueError(f"mu_neighbor must be in [1, {y.size - 1}] for {y.size} "
                                 f"samples, got {self.mu_neighbor}")
            if self.size is not None and self.mu is None and self.size < self.mu_neighbor:
                raise ValueError(f"set_size = {self.size} must be at least mu_neighbor = "
                                 f"{self.mu_neighbor} (Table 2's mu is read from the nearest "
                                 "hits and misses kept)")
        else:
            raise ValueError(f"set kind must be 'nearest' or 'gaussian', got {self.kind!r}")

    def bandwidth(self, Z: np.ndarray) -> float:
        """mu of the Gaussian sets under the metric of Z (Table 2's rule unless fixed)."""
        if self.mu is not None:
            return float(self.mu)
        dist, _ = euclidean_kneighbors(Z, Z, self.mu_neighbor, exclude_self=True)
        total = float(np.sum(dist[:, -1] ** 2))
        if total <= 0:
            raise ValueError(f"mu: every sample's {self.mu_neighbor}th nearest neighbour is at "
                             "distance 0 under this metric (duplicated samples); fix mu instead")
        return Z.shape[0] / total

    def sets(self, Z: np.ndarray, y: np.ndarray) -> tuple[Sets, Sets, float | None]:
        """(hits, misses, mu) of every sample under the metric whose mapped points are Z."""
        if self.kind == "gaussian" and self.size is not None:
            return truncated_gaussian_sets(Z, y, self.size, self.mu, self.mu_neighbor)
        if self.kind == "gaussian":
            mu = self.bandwidth(Z)
            return GaussianSets(Z, y, mu, "hits"), GaussianSets(Z, y, mu, "misses"), mu
        n = y.size
        hits = np.empty((n, self.k_hit), dtype=np.int64)
        misses = np.empty((n, self.k_miss), dtype=np.int64)
        weight = None
        for label in np.unique(y):
            own, other = np.flatnonzero(y == label), np.flatnonzero(y != label)
            k = min(self.k_hit, own.size - 1)  # a small class: all its hits
            _, ind = euclidean_kneighbors(Z[own], Z[own], k, exclude_self=True)
            hits[own] = own[np.pad(ind, ((0, 0), (0, self.k_hit - k)), mode="edge")]
            if k < self.k_hit:
                if weight is None:
                    weight = np.full((n, self.k_hit), 1.0 / self.k_hit)
                weight[own] = np.r_[np.full(k, 1.0 / k), np.zeros(self.k_hit - k)]
            _, ind = euclidean_kneighbors(Z[own], Z[other], self.k_miss)
            misses[own] = other[ind]
        return NearestSets(hits, weight), NearestSets(misses), None


def truncated_gaussian_sets(Z: np.ndarray, y: np.ndarray, size: int, mu: float | None,
                            mu_neighbor: int) -> tuple[NearestSets, NearestSets, float]:
    """(hits, misses, mu): each sample's `size` nearest hits and `size` nearest misses (all of
    them in a side with fewer; exact search, `measure.neighbours`), with BoostMDM-G's weights
    exp(-mu ||z_i - z_j||^2) renormalised over the members kept. mu None: Table 2's rule, its
    `mu_neighbor`-th nearest neighbour read from the nearest hits and misses (the overall
    nearest lie among them), so the same mu as the full sets'. Each set's `dropped` bounds the
    share of the full sets' weight left out (`truncation_bound`)."""
    n = y.size
    sides = {}
    for side in ("hits", "misses"):
        sides[side] = (np.zeros((n, size), dtype=np.int64), np.full((n, size), np.inf),
                       np.zeros(n, dtype=np.int64))  # members, squared distances, side sizes
    for label in np.unique(y):
        own, other = np.flatnonzero(y == label), np.flatnonzero(y != label)
        for side, pool, exclude in (("hits", own, True), ("misses", other, False)):
            k = min(size, pool.size - exclude)
            dist, ind = euclidean_kneighbors(Z[own], Z[pool], k, exclude_self=exclude)
            index, d2, total = sides[side]
            index[own] = pool[np.pad(ind, ((0, 0), (0, size - k)), mode="edge")]
            d2[own, :k] = dist ** 2
            total[own] = pool.size - exclude
    if mu is None:
        nearest = np.sort(np.hstack([sides["hits"][1], sides["misses"][1]]), axis=1)
        total = float(np.sum(nearest[:, mu_neighbor - 1]))
        if total <= 0:
            raise ValueError(f"mu: every sample's {mu_neighbor}th nearest neighbour is at "
                             "distance 0 under this metric (duplicated samples); fix mu instead")
        mu = n / total
    out = []
    for side in ("hits", "misses"):
        index, d2, total = sides[side]
        logits = np.where(np.isfinite(d2), -mu * d2, -np.inf)  # padding: weight 0
        weight = np.exp(logits - logits[:, :1])
        weight /= weight.sum(axis=1, keepdims=True)
        out.append(NearestSets(index, weight, truncation_bound(weight, d2, total, mu)))
    return out[0], out[1], float(mu)


def truncation_bound(weight: np.ndarray, d2: np.ndarray, total: np.ndarray, mu: float) -> float:
    """The largest share of a sample's full Gaussian weight that its truncated set leaves out:
    each of the total - kept members left out lies at least as far as the furthest kept one, so
    its weight is at most that one's, and the share left out is at most r / (1 + r) with
    r = (total - kept) x (the furthest kept member's renormalised weight). The truncated
    weights differ from the full ones by at most that share (in total variation), and so does
    f(x_i, S(x_i)) relative to the spread of the squared distances."""
    kept = np.isfinite(d2).sum(axis=1)
    last = weight[np.arange(weight.shape[0]), kept - 1]
    r = (total - kept) * last
    return float(np.max(r / (1.0 + r), initial=0.0))


def margins(hits: Sets, misses: Sets, F: np.ndarray) -> np.ndarray:
    """delta_i = f(x_i, H(x_i)) - f(x_i, M(x_i)) in coordinates F (eq. 4; > 0 = wrong side)."""
    return hits.f(F) - misses.f(F)


def bound(delta: np.ndarray) -> float:
    """B(M) = (1/N) sum_i exp(delta_i) (eq. 2 and its -K/-G versions), via log-sum-exp."""
    return float(np.exp(logsumexp(delta) - np.log(delta.size)))


def sample_weights(delta: np.ndarray) -> np.ndarray:
    """w'_i = exp(delta_i) / sum_j exp(delta_j) (eqs. 5 and 12), without overflow."""
    w = np.exp(delta - delta.max())
    return w / w.sum()


def graph_scatter(X: np.ndarray, W) -> np.ndarray:
    """X^T (D - W) X for a symmetric (sparse or dense) weight matrix W, D = diag(row sums):
    (1/2) sum_ij W_ij (x_i - x_j)(x_i - x_j)^T."""
    degree = np.asarray(W.sum(axis=1)).ravel()
    S = X.T @ (degree[:, None] * X) - X.T @ np.asarray(W @ X)
    return (S + S.T) / 2


def rounding_level(X: np.ndarray, w: np.ndarray) -> float:
    """Largest eigenvalue a weighted scatter of differences of rows of X can show from rounding
    alone: 100 m eps x its largest possible term, 4 max_i |x_i|^2 sum(w). A hit scatter C_t below
    it is zero (hits on top of their samples in the null space of M_{t-1}, e.g. on categorical
    features): Algorithm 1 has no direction to add (`generalized_eigenvectors(..., zero_below=)`)."""
    largest_term = 4.0 * float(np.max(np.einsum("ij,ij->i", X, X), initial=0.0)) * float(np.sum(w))
    return 100.0 * X.shape[1] * np.finfo(float).eps * largest_term


def generalized_eigenvectors(S: np.ndarray, C: np.ndarray, lam: float, positive_only: bool = True,
                             rtol: float = 1e-9, zero_below: float = 0.0
                             ) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvectors V of the pair (S, C + lam sigma_1(C) I), sorted by eigenvalue (descending),
    normalised so that V^T (C + lam sigma_1(C) I) V = I.

    Theorem 4 keeps those with positive eigenvalue (`positive_only`; eigenvalues below
    `rtol` x the largest magnitude count as zero): L = Pi Lambda maximises tr(L^T S L) subject to
    L^T C_reg L = I_0. The ridge lam sigma_1 I is section 3.2's regularisation, sigma_1 the
    largest singular value of C. A zero C (every sample on top of its hits) gives no vectors;
    C counts as zero when sigma_1 <= `zero_below` (the caller's rounding level of the scatter).
    C is positive semidefinite by construction: its negative eigenvalues are rounding and are
    set to zero, so the right-hand matrix is positive definite in floating point too.
    """
    if lam <= 0:
        raise ValueError(f"lam must be > 0 (the ridge lam * sigma_1 on the right-hand matrix), "
                         f"got {lam}")
    m = S.shape[0]
    S, C = (S + S.T) / 2, (C + C.T) / 2
    c_vals, c_vecs = np.linalg.eigh(C)
    sigma1 = float(c_vals[-1])
    if not sigma1 > max(zero_below, 0.0):
        return np.zeros((m, 0)), np.zeros(0)
    C_reg = (c_vecs * (np.maximum(c_vals, 0.0) + lam * sigma1)) @ c_vecs.T
    vals, vecs = scipy.linalg.eigh(S, (C_reg + C_reg.T) / 2)
    order = np.argsort(-vals, kind="stable")
    vals, vecs = vals[order], vecs[:, order]
    if positive_only:
        keep = vals > rtol * max(float(np.abs(vals).max()), np.finfo(float).tiny)
        vals, vecs = vals[keep], vecs[:, keep]
    return vecs, vals


def training_span(Xc: np.ndarray, rtol: float = 1e-10) -> np.ndarray | None:
    """Orthonormal basis (n x r) of the span of the centred training points when they cannot
    span R^n (N - 1 < n, section 3.2: PCA to N - 1 dimensions, no component dropped); None
    otherwise. Directions with singular value below rtol x the largest are numerically empty."""
    n_samples, n_features = Xc.shape
    if n_features <= n_samples - 1:
        return None
    _, s, Vt = np.linalg.svd(Xc, full_matrices=False)
    keep = s > rtol * s[0] if s.size and s[0] > 0 else np.zeros(s.size, dtype=bool)
    return Vt[keep].T


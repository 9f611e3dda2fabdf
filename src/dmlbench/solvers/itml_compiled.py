"""ITML's cyclic Bregman projections (Davis et al. 2007, Algorithm 1), compiled (numba): the loop
of metric-learn 0.7.0's `_BaseITML._fit`, step for step, without the Python interpreter between
the rank-one updates.

metric-learn visits every similar, then every dissimilar pair once per sweep and, for the pair's
difference v, projects the Mahalanobis matrix A onto its constraint with slack (Algorithm 1,
lines 3-9: p = v^T A v; alpha = min(lambda_ij, gamma/(gamma + 1) (1/p - 1/xi_ij)) for a similar
pair, with the signs swapped for a dissimilar one; beta = alpha / (1 - alpha p);
xi_ij = gamma xi_ij / (gamma + alpha xi_ij); lambda_ij -= alpha; A += beta A v v^T A), and
stops when the dual variables change by less than `tol` relative to their norm, or after
`max_iter` sweeps. The interpreter's cost per pair (a few numpy calls on a d x d matrix: about
16 us at d = 30) dominates its run time: 2 000 similar and 2 000 dissimilar pairs (metric-learn's
default on ten classes) over about 900 sweeps took a minute per fit on digits; compiled, one pair
costs about a microsecond (`benchmarks/itml_speed.py`).

The same arithmetic up to rounding: A v is formed once (metric-learn forms v^T A for p and
A v for the update, equal in exact arithmetic since A is symmetric), sums are reassociated
(vectorised), and the update adds u_i (u_j beta) like metric-learn's
`np.outer(Av, Av * beta)`. Divisions follow numpy (1/0 = inf), as metric-learn's float64
scalars do.
"""

from __future__ import annotations

import numba
import numpy as np

#: reassociated (vectorised) sums and fused multiply-adds; NaN and infinity keep their meaning
FAST_MATH = {"reassoc", "contract"}


@numba.njit(cache=True, fastmath=FAST_MATH, error_model="numpy")
def _project(A: np.ndarray, v: np.ndarray, u: np.ndarray, lam: float, bhat: float,
             gamma: float, gamma_proj: float, sign: float):
    """One Bregman projection of A onto the constraint of difference `v` (sign +1: similar pair,
    -1: dissimilar), in place; `u` is a work vector. Returns the new (lambda, xi)."""
    d = A.shape[0]
    wtw = 0.0
    for j in range(d):
        s = 0.0
        for k in range(d):
            s += A[j, k] * v[k]
        u[j] = s
        wtw += s * v[j]
    candidate = gamma_proj * (sign / wtw - sign / bhat)
    alpha = lam if not candidate < lam else candidate  # Python's min(lam, candidate)
    lam -= alpha
    beta = sign * alpha / (1.0 - sign * alpha * wtw)
    bhat = 1.0 / ((1.0 / bhat) + sign * (alpha / gamma))
    for j in range(d):
        scaled = u[j] * beta
        for k in range(d):
            A[j, k] += u[k] * scaled
    return lam, bhat


@numba.njit(cache=True, fastmath=FAST_MATH, error_model="numpy")
def bregman_projections(A: np.ndarray, pos_vv: np.ndarray, neg_vv: np.ndarray, lower: float,
                        upper: float, gamma: float, gamma_proj: float, max_iter: int,
                        tol: float):
    """Sweeps of projections over the similar pairs' differences `pos_vv` (bound `lower`) and
    the dissimilar pairs' `neg_vv` (bound `upper`), updating A (d x d, C order) in place.
    Returns metric-learn's `n_iter_`: the index of the last sweep."""
    num_pos, num_neg = pos_vv.shape[0], neg_vv.shape[0]
    lam = np.zeros(num_pos + num_neg)
    lam_old = np.zeros(num_pos + num_neg)
    pos_bhat = np.full(num_pos, lower)
    neg_bhat = np.full(num_neg, upper)
    u = np.empty(A.shape[0])
    it = 0
    for it in range(max_iter):
        for i in range(num_pos):
            lam[i], pos_bhat[i] = _project(A, pos_vv[i], u, lam[i], pos_bhat[i], gamma,
                                           gamma_proj, 1.0)
        for i in range(num_neg):
            lam[num_pos + i], neg_bhat[i] = _project(A, neg_vv[i], u, lam[num_pos + i],
                                                     neg_bhat[i], gamma, gamma_proj, -1.0)
        normsum = np.sqrt(np.sum(lam * lam)) + np.sqrt(np.sum(lam_old * lam_old))
        if normsum == 0:
            break
        if np.sum(np.abs(lam_old - lam)) / normsum < tol:
            break
        lam_old[:] = lam
    return it


def precompile() -> None:
    """Compile `bregman_projections` for the argument types the ITML wrapper passes and write
    numba's cache (`make install` runs it, so that no job times the compilation)."""
    A = np.eye(2)
    bregman_projections(A, np.ones((1, 2)), np.array([[1.0, -1.0]]), 0.5, 2.0, 1.0, 0.5, 2,
                        1e-3)

"""Compact-support NCA and its background distribution (Oneata 2011, sections 4.5-4.6).

The Gaussian kernel of NCA becomes k(d_ij) = c_d (1 - d_ij^2)^2 for d_ij < 1, else 0 (eq. 4.16);
q_ij, f_CS and the gradient are eq. 4.17-4.20. A range search (scipy's k-d tree on the projected
points) finds the pairs inside the support, so only those are visited. A point with no other
point in its support has q_i = 0/0; as in section 3.3.3 it counts as q_i = 0 and adds no gradient
(`info["isolated"]` counts such points).

With a background (section 4.6) every class is the mixture
p(x_i | c) = beta_c N(A x_i | A mu_c, A Sigma_c A^T) + (1 - beta_c)/N_c sum_{j in c} k(x_i | x_j)
(eq. 4.22), beta_c = 1/(N_c + 1) by default, and p_i = p(c_i | A x_i) with the class prior
p(c) = N_c / N, so that beta = 0 gives back compact-support NCA exactly. The gradient of the
Gaussian term is eq. 4.23. Deviations from the thesis, both needed for the stated model:
c_d = Gamma(d/2 + 3) / (2 pi^(d/2)) normalises the kernel on the unit ball of R^d (the printed
15/16 is the d = 1 value), and Sigma_c gets a ridge of 1e-6 times the mean feature variance so
that A Sigma_c A^T stays invertible for small classes. Class sums are shifted by their largest
log term per point (as eq. 3.20) so that far points do not underflow to 0/0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree
from scipy.special import gammaln

from .nca_objective import (
    accumulate_pairs,
    check_inputs,
    default_chunk,
    project,
    regularise,
    squared_distances,
)

SEARCHES = ("tree", "dense")


def kernel_constant(d: int) -> float:
    """c_d with integral of c_d (1 - ||u||^2)^2 over the unit ball of R^d equal to 1."""
    return float(np.exp(gammaln(d / 2 + 3) - np.log(2.0) - (d / 2) * np.log(np.pi)))


@dataclass(frozen=True)
class Background:
    """Per-class Gaussian background of eq. 4.22 (statistics in the input space)."""

    means: np.ndarray  # C x D
    covs: np.ndarray  # C x D x D
    counts: np.ndarray  # C
    beta: np.ndarray  # C


def background_model(X, y, beta=None, ridge: float = 1e-6) -> Background:
    """Class means and covariances of (X, y) (labels 0..C-1) and the mixing weights beta_c
    (default 1/(N_c + 1), the thesis' choice; or one number for every class)."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    classes = np.arange(int(y.max()) + 1)
    counts = np.bincount(y, minlength=classes.size).astype(float)
    if np.any(counts == 0):
        raise ValueError("background_model needs labels 0..C-1 with every class present")
    means = np.stack([X[y == c].mean(axis=0) for c in classes])
    floor = ridge * max(float(X.var(axis=0).mean()), np.finfo(float).tiny)
    covs = np.stack([np.cov(X[y == c].T, bias=True).reshape(X.shape[1], X.shape[1])
                     + floor * np.eye(X.shape[1]) for c in classes])
    if beta is None:
        b = 1.0 / (counts + 1.0)
    else:
        if not 0.0 <= float(beta) < 1.0:
            raise ValueError(f"beta must be in [0, 1), got {beta}")
        b = np.full(classes.size, float(beta))
    return Background(means, covs, counts, b)


def support_pairs(Zq: np.ndarray, Z: np.ndarray, exclude: np.ndarray | None = None,
                  search: str = "tree", chunk_size: int | None = None):
    """Pairs (q, k, d2) with d2 = ||zq_q - z_k||^2 < 1; `exclude[q]` (an index into Z) is left out.

    'tree' is a range search with scipy's cKDTree (only points inside the support are visited);
    'dense' computes every distance (a reference, and faster for large d).
    """
    if search == "tree":
        found = cKDTree(Zq).sparse_distance_matrix(cKDTree(Z), 1.0, output_type="ndarray")
        q, k, d2 = found["i"].astype(np.intp), found["j"].astype(np.intp), found["v"] ** 2
    elif search == "dense":
        parts = []
        step = chunk_size or default_chunk(Z.shape[0])
        for start in range(0, Zq.shape[0], step):
            D2 = squared_distances(Zq[start:start + step], Z)
            qq, kk = np.nonzero(D2 < 1.0)
            parts.append((qq + start, kk, D2[qq, kk]))
        q, k, d2 = (np.concatenate(p) for p in zip(*parts))
    else:
        raise ValueError(f"search must be one of {SEARCHES}, got {search!r}")
    keep = d2 < 1.0
    if exclude is not None:
        keep &= exclude[q] != k
    return q[keep], k[keep], d2[keep]


def _log_background(A, Zq, bg: Background):
    """log(beta_c N_c N(z | A mu_c, A Sigma_c A^T)) for each query and class, and the per-class
    pieces the gradient needs (A Sigma_c, inverse of A Sigma_c A^T, z - A mu_c)."""
    d = A.shape[0]
    logs = np.empty((Zq.shape[0], bg.means.shape[0]))
    parts = []
    for c in range(bg.means.shape[0]):
        B = A @ bg.covs[c]
        S = B @ A.T
        S_inv = np.linalg.inv(S)
        sign, logdet = np.linalg.slogdet(S)
        if sign <= 0:
            raise np.linalg.LinAlgError("A Sigma_c A^T is not positive definite")
        U = Zq - A @ bg.means[c]
        V = U @ S_inv
        with np.errstate(divide="ignore"):  # beta = 0: log 0 = -inf, no background
            weight = np.log(bg.beta[c] * bg.counts[c])
        logs[:, c] = (weight - 0.5 * np.einsum("ij,ij->i", U, V)
                      - 0.5 * (logdet + d * np.log(2 * np.pi)))
        parts.append((B, S_inv, V))
    return logs, parts


def _class_sums(A, Z, y, Zq, q, k, d2, bg: Background | None, n_classes: int):
    """Shifted class sums s_qc (background + kernel part), the shift's exp(-M_q) and the pieces of
    the background gradient."""
    cd = kernel_constant(A.shape[0])
    beta = np.zeros(n_classes) if bg is None else bg.beta
    kern = cd * (1.0 - d2) ** 2 * (1.0 - beta[y[k]])
    cs = np.bincount(q * n_classes + y[k], kern, minlength=Zq.shape[0] * n_classes)
    cs = cs.reshape(Zq.shape[0], n_classes)
    with np.errstate(divide="ignore"):
        log_cs = np.log(cs)
    if bg is None:
        logs_bg, parts = np.full_like(cs, -np.inf), None
    else:
        logs_bg, parts = _log_background(A, Zq, bg)
    M = np.maximum(log_cs.max(axis=1), logs_bg.max(axis=1))
    M = np.where(np.isfinite(M), M, 0.0)  # isolated points (no background): all sums are 0
    scale = np.exp(-M)
    bg_scaled = np.exp(logs_bg - M[:, None])
    return cs * scale[:, None] + bg_scaled, bg_scaled, scale, parts


def objective(A, X, y, rows=None, reg=0.0, background: Background | None = None,
              search: str = "tree", chunk_size: int | None = None):
    """f_CS = sum_{i in rows} q_i (eq. 4.18; with `background`, p_i of eq. 4.22), its gradient,
    and `info` {'pairs': pairs visited, 'candidates': len(rows) (N - 1), 'isolated': count}.

    Labels must be 0..C-1. `rows` (default all) are distinct indices, each against the whole set.
    """
    A, X, y = check_inputs(A, X, y)
    y = y.astype(np.intp)
    n = X.shape[0]
    n_classes = int(y.max()) + 1 if background is None else background.means.shape[0]
    rows = np.arange(n) if rows is None else np.asarray(rows, dtype=np.intp)
    Z = project(A, X)
    Zr = Z[rows]
    q, k, d2 = support_pairs(Zr, Z, exclude=rows, search=search, chunk_size=chunk_size)
    s, bg_scaled, scale, parts = _class_sums(A, Z, y, Zr, q, k, d2, background, n_classes)
    S = s.sum(axis=1)
    alive = S > 0
    own = y[rows]
    p = np.where(alive, s[np.arange(rows.size), own] / np.where(alive, S, 1.0), 0.0)
    f = float(p.sum())

    inv_S = np.where(alive, 1.0 / np.where(alive, S, 1.0), 0.0)
    beta = np.zeros(n_classes) if background is None else background.beta
    coef = (2.0 * kernel_constant(A.shape[0]) * (1.0 - d2) * (1.0 - beta[y[k]])
            * scale[q] * inv_S[q] * (p[q] - (y[k] == own[q])))
    Y = np.zeros_like(Z)
    accumulate_pairs(Y, Z, rows[q], k, coef)
    grad = 2.0 * (Y.T @ X)
    if background is not None:
        delta = (np.arange(n_classes)[None, :] == own[:, None]).astype(float)
        a_all = (delta - p[:, None]) * bg_scaled * inv_S[:, None]
        Xr = X[rows]
        for c, (B, S_inv, V) in enumerate(parts):
            a = a_all[:, c]
            grad += (-a.sum() * (S_inv @ B) + ((V * a[:, None]).T @ V) @ B
                     - (V * a[:, None]).T @ (Xr - background.means[c]))
    f, grad = regularise(A, f, grad, reg)
    info = {"pairs": int(q.size), "candidates": int(rows.size * (n - 1)),
            "isolated": int(np.sum(~alive))}
    return f, grad, info


def class_scores(A, X, y, Xq, n_classes: int, background: Background | None = None,
                 search: str = "tree") -> np.ndarray:
    """p(c | A x*) under the compact-support model (with its background if given) for each query;
    a row of NaN for a query outside every training point's support and no background."""
    A = np.atleast_2d(np.asarray(A, dtype=float))
    Z, Zq = project(A, np.asarray(X, dtype=float)), project(A, np.asarray(Xq, dtype=float))
    y = np.asarray(y).astype(np.intp)
    q, k, d2 = support_pairs(Zq, Z, search=search)
    s, _, _, _ = _class_sums(A, Z, y, Zq, q, k, d2, background, n_classes)
    S = s.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(S > 0, s / S, np.nan)

"""NCA objective and gradient (Oneata 2011, chapter 3): exact, stable, chunked.

    f, grad = objective(A, X, y)            # f = sum_i p_i (eq. 3.3), to maximise

A is d x D (low rank allowed). p_ij = softmax over j != i of -||A x_i - A x_j||^2 (eq. 3.1),
p_i = sum_{j in c_i} p_ij (eq. 3.2). The gradient is eq. 3.5, A pushed inside the sums:

    grad = 2 sum_i sum_k c_ik (A x_ik) x_ik^T,   c_ik = p_i p_ik - [c_k = c_i] p_ik.

Summing the pair terms before the multiplication by X gives grad = 2 Y^T X, where row k of the
N x d matrix Y collects sum_i c_ik (z_i - z_k) over the pairs (i, k) that contain k (z = A x):
O(N^2 d + N d D) instead of the O(d D N^2) of eq. 3.5 written pair by pair, and never
O(D^2 N^2) (eq. 3.4). Rows i are processed in chunks, so memory is O(chunk x N), not O(N^2).
Each row uses the log-sum-exp shift of eq. 3.20 (L = min_{k != i} d_ik^2), so p_i is never 0/0.

`rows` restricts the outer sum to some points against the whole set (stochastic learning,
eq. 4.1-4.4); `reg` subtracts lambda ||A||_F^2 (eq. 3.22), or sum_r lambda_r ||A_r||^2 when it is
one value per row of A (dimensionality annealing, eq. 3.26).

The compact-support kernel (sections 4.5-4.6) lives in `dmlbench.solvers.nca_compact_support`, the k-d-tree
approximation (section 4.4) in `dmlbench.solvers.nca_kdtree`; both reuse the pair accumulation here.
"""

from __future__ import annotations

import numpy as np

#: entries of the chunk x N working arrays (each ~16 MB in float64)
CHUNK_ENTRIES = 1 << 21


class NonFiniteObjective(ValueError):
    """The objective cannot be evaluated in floating point: the projection A x overflowed."""


def check_inputs(A, X, y) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A (d x D), X (N x D), y (N,) as arrays; `ValueError` naming the problem."""
    A = np.atleast_2d(np.asarray(A, dtype=float))
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if X.ndim != 2 or X.shape[0] < 2:
        raise ValueError(f"X must be N x D with N >= 2, got shape {X.shape}")
    if A.ndim != 2 or A.shape[1] != X.shape[1]:
        raise ValueError(f"A must be d x D with D = {X.shape[1]} (the columns of X), got {A.shape}")
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must have one label per row of X, got shape {y.shape}")
    if not np.all(np.isfinite(A)):
        raise NonFiniteObjective("A contains NaN or infinite values")
    return A, X, y


def project(A: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Z = X A^T; `NonFiniteObjective` when it overflows (an exploding A)."""
    with np.errstate(over="ignore", invalid="ignore"):
        Z = X @ A.T
        ok = np.all(np.isfinite(Z)) and np.all(np.isfinite(np.einsum("ij,ij->i", Z, Z)))
    if not ok:
        raise NonFiniteObjective(
            f"the projection A x overflows (max |A_ij| = {np.abs(A).max():.3g}): A exploded; "
            "lower the learning rate or regularise (reg > 0)")
    return Z


def regularise(A: np.ndarray, f: float, grad: np.ndarray, reg) -> tuple[float, np.ndarray]:
    """g = f - sum_r lambda_r ||A_r||^2 and its gradient (eq. 3.22-3.23, 3.26-3.27)."""
    lam = np.broadcast_to(np.asarray(reg, dtype=float), (A.shape[0],))
    if np.any(lam < 0):
        raise ValueError(f"reg must be >= 0, got {reg}")
    if not np.any(lam):
        return f, grad
    return f - float(lam @ np.einsum("ij,ij->i", A, A)), grad - 2.0 * lam[:, None] * A


def default_chunk(n: int) -> int:
    return max(1, CHUNK_ENTRIES // max(n, 1))


def squared_distances(Zq: np.ndarray, Z: np.ndarray, sq: np.ndarray | None = None) -> np.ndarray:
    """||zq_i - z_k||^2 for all pairs (BLAS form, clipped at 0)."""
    sq = np.einsum("ij,ij->i", Z, Z) if sq is None else sq
    with np.errstate(over="ignore", invalid="ignore"):  # overflow: inf or NaN, caught by callers
        D2 = np.einsum("ij,ij->i", Zq, Zq)[:, None] + sq[None, :]
        D2 -= 2.0 * (Zq @ Z.T)
    np.maximum(D2, 0.0, out=D2)
    return D2


def accumulate_dense(Y: np.ndarray, Z: np.ndarray, rows: np.ndarray, C: np.ndarray) -> None:
    """Y[k] += sum over the pairs (i, k), i in `rows`, of +-c_ik (z_i - z_k) (see module doc).

    C is len(rows) x N (row i of the chunk against every point); rows are distinct.
    """
    Zi = Z[rows]
    r, col = C.sum(axis=1), C.sum(axis=0)
    Y[rows] += r[:, None] * Zi - C @ Z
    Y -= C.T @ Zi
    Y += col[:, None] * Z


def accumulate_pairs(Y: np.ndarray, Z: np.ndarray, i: np.ndarray, k: np.ndarray,
                     c: np.ndarray) -> None:
    """The sparse form of `accumulate_dense`: distinct pairs (i[t], k[t]), coefficients c[t].

    When the distinct i are few (stochastic steps) the pairs are scattered into a dense block
    handled by BLAS; otherwise one bincount per column of Y does it."""
    n = Y.shape[0]
    rows, local = np.unique(i, return_inverse=True)
    if rows.size * n <= CHUNK_ENTRIES:
        C = np.zeros((rows.size, n))
        C[local, k] = c
        accumulate_dense(Y, Z, rows, C)
        return
    diff = c[:, None] * (Z[i] - Z[k])
    for col in range(Y.shape[1]):
        Y[:, col] += np.bincount(i, diff[:, col], minlength=n)
        Y[:, col] -= np.bincount(k, diff[:, col], minlength=n)


def objective(A, X, y, rows=None, reg=0.0, chunk_size: int | None = None):
    """NCA objective f = sum_{i in rows} p_i - reg ||A||^2 and its gradient (d x D).

    See the module docstring for the equations. `rows` (default all) are distinct indices of the
    points whose p_i are summed, each against the whole set; `chunk_size` rows are processed at a
    time (default: about 2M pair entries per chunk).
    """
    A, X, y = check_inputs(A, X, y)
    n = X.shape[0]
    every = rows is None
    rows = np.arange(n) if rows is None else np.asarray(rows, dtype=np.intp)
    Z = project(A, X)
    sq = np.einsum("ij,ij->i", Z, Z)
    _, codes = np.unique(y, return_inverse=True)
    onehot = np.zeros((n, codes.max() + 1))
    onehot[np.arange(n), codes] = 1.0
    Y = np.zeros_like(Z)
    f = 0.0
    step = chunk_size or default_chunk(n)
    for start in range(0, rows.size, step):
        I = rows[start:start + step]
        K = squared_distances(Z[I], Z, sq)
        K[np.arange(I.size), I] = np.inf
        L = K.min(axis=1)
        if not np.all(np.isfinite(L)):
            raise NonFiniteObjective("squared distances overflow: A exploded")
        K -= L[:, None]
        np.exp(-K, out=K)  # exp(-inf) = 0 on the diagonal
        K /= K.sum(axis=1, keepdims=True)  # now p_ik
        p = (K @ onehot)[np.arange(I.size), codes[I]]
        f += float(p.sum())
        K *= p[:, None] - (codes[I][:, None] == codes[None, :])  # now c_ik
        if every and I.size == n:  # one block: Y = diag(r + col) Z - (C + C^T) Z, one product
            K += K.T
            Y += K.sum(axis=1)[:, None] * Z - K @ Z
        else:
            accumulate_dense(Y, Z, I, K)
    grad = 2.0 * (Y.T @ X)
    return regularise(A, f, grad, reg)


def class_scores(Z: np.ndarray, y: np.ndarray, Zq: np.ndarray, n_classes: int,
                 chunk_size: int | None = None) -> np.ndarray:
    """p(c | A x*) of eq. 3.24-3.25 for each query (rows of Zq) and class: the share of the
    query's stochastic-neighbour mass on the training points of class c (log-sum-exp shifted)."""
    out = np.empty((Zq.shape[0], n_classes))
    sq = np.einsum("ij,ij->i", Z, Z)
    onehot = np.zeros((Z.shape[0], n_classes))
    onehot[np.arange(Z.shape[0]), y] = 1.0
    step = chunk_size or default_chunk(Z.shape[0])
    for start in range(0, Zq.shape[0], step):
        D2 = squared_distances(Zq[start:start + step], Z, sq)
        D2 -= D2.min(axis=1, keepdims=True)
        K = np.exp(-D2, out=D2)
        S = K @ onehot
        out[start:start + step] = S / S.sum(axis=1, keepdims=True)
    return out

"""NCA objective and gradient (Oneata 2011, chapter 3): exact, stable, chunked.

    f, grad = objective(A, X, y)            # f = sum_i p_i (eq. 3.3), to maximise

A is d x D (low rank allowed). p_ij = softmax over j != i of -||A x_i - A x_j||^2 (eq. 3.1),
p_i = sum_{j in c_i} p_ij (eq. 3.2). The gradient is eq. 3.5 with A pushed inside the sums,

    grad = 2 sum_i sum_k c_ik (A x_ik) x_ik^T,   c_ik = p_i p_ik - [c_k = c_i] p_ik,

i.e. grad = 2 Y^T X with Y = diag(W 1) Z - W Z, W = C + C^T, Z = X A^T: products of N x N
blocks with [Z | 1], O(N^2 d + N d D), never O(D^2 N^2) (eq. 3.4). How it is computed:

- Points are ordered by class, so a row's same-class terms are one contiguous range.
- One GEMM per block gives c - d_ik^2 (factors [2Z, -1, c - |z|^2] and [Z, |z|^2, 1]); exp is
  taken once per pair, in place, after clamping its argument at EXP_FLOOR.
- Eq. 3.20 shifts each row by L_i = min_k d_ik^2 so that p_i is never 0/0. Here one common
  shift c (placed over the nearest-neighbour distances of a few points) keeps the kernel
  E_ik = exp(c - d_ik^2) symmetric; p_ik does not depend on the shift. A row whose largest term
  then falls outside [exp(LOW), exp(HIGH)] (times N) is recomputed with its own shift L_i.
  Precision: a clamped term is below exp(-300) of its row's largest (exp(-700) with the own
  shift; scikit-learn's softmax keeps terms down to underflow, exp(-745)).
- With every row and room for half the pairs (chunk_size >= (N + STRIP_HEIGHT) / 2; by default
  up to N ~ 2000), only the upper block triangle of E is computed, in strips of STRIP_HEIGHT
  rows; W_ik = E_ik (a_i + a_k) is formed in place and the products use the strips and their
  transposes: half the distances, exponentials and passes, no transposition, memory N^2 / 2.
  Otherwise rows go in blocks (chunk_size rows, default BLOCK_ENTRIES / N): C of the block,
  then C [Z | 1] and C^T [Z_block | 1], memory block x N.

`rows` restricts the outer sum to some points against the whole set (stochastic learning,
eq. 4.1-4.4); `reg` subtracts lambda ||A||_F^2 (eq. 3.22), or sum_r lambda_r ||A_r||^2 when it is
one value per row of A (dimensionality annealing, eq. 3.26). Few rows against many points
(`_rows`) skip the class-sorted layout and the common shift: each row gets its own shift (eq.
3.20), its same-class mask, and W = C + C^T enters Y as C Z (rows) and C^T Z_rows (all points),
so a step costs two N x d x D products (Z = X A^T and Y^T X) and the rows' B x N x d ones.
`value` is f alone (no gradient: the thesis' train score of a fitted A), every row with its own
shift, in blocks of rows.

The compact-support kernel (sections 4.5-4.6) lives in `dmlbench.solvers.nca_compact_support`, the k-d-tree
approximation (section 4.4) in `dmlbench.solvers.nca_kdtree`; both reuse the pair accumulation here.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import blas

#: entries of the chunk x N working arrays (each ~16 MB in float64)
CHUNK_ENTRIES = 1 << 21
#: entries of one block of the row-wise evaluation (4 MB: the passes over it stay in cache)
BLOCK_ENTRIES = 1 << 19
#: rows per strip of the symmetric evaluation
STRIP_HEIGHT = 128


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


#: exp arguments are clamped here: exp(-700) ~ 1e-304 is still a normal number, while arguments
#: below about -708 give subnormal results or 0, which numpy's exp computes 5 to 50 times slower.
EXP_FLOOR = -700.0
#: under the common shift a row is kept when its largest term is above exp(LOW) (so a clamped
#: term is below exp(-300) ~ 1e-130 of it) and its sum below exp(HIGH); other rows get their
#: own shift (eq. 3.20), where a clamped term is below exp(-700) of the row's largest
LOW, HIGH = EXP_FLOOR + 300.0, 700.0
#: points whose nearest-neighbour distances choose the common shift
SHIFT_SAMPLE = 32
#: the smallest normal float: a coefficient below it (a kernel value near exp(EXP_FLOOR) times a
#: small p_i / s_i) is subnormal, and BLAS products with subnormal entries run about 60 times
#: slower; `_rows` sets such coefficients to 0 (each is below 1e-307 of its row's largest term)
TINY = np.finfo(float).tiny


class _Layout:
    """The projected points ordered by class (each class a contiguous range of columns), the
    common shift c and the GEMM factors: left_i . right_k = c - d_ik^2 (one product per block);
    V = [Z | 1] is the right factor of the gradient's products."""

    def __init__(self, Z: np.ndarray, y: np.ndarray):
        _, codes = np.unique(y, return_inverse=True)
        keys = codes.astype(np.int16) if codes.max() < 2**15 else codes
        self.order = np.argsort(keys, kind="stable")  # a radix sort for int16 keys
        self.codes = codes[self.order]
        self.rank = np.empty_like(self.order)
        self.rank[self.order] = np.arange(self.order.size)
        self.bounds = np.searchsorted(self.codes, np.arange(codes.max() + 2))
        n, d = Z.shape
        self.n, self.d = n, d
        self.V = np.empty((n, d + 1))
        self.Z = self.V[:, :d]
        self.Z[...] = Z[self.order]
        self.V[:, d] = 1.0
        sq = np.einsum("ij,ij->i", self.Z, self.Z)
        self.c = self._common_shift(sq)
        self.low = LOW + np.log(n)  # rows with log s_i in [low, HIGH] keep the common shift
        self.left = np.empty((n, d + 2))
        np.multiply(self.Z, 2.0, out=self.left[:, :d])
        self.left[:, d] = -1.0
        np.subtract(self.c, sq, out=self.left[:, d + 1])
        self.right = np.empty((n, d + 2))
        self.right[:, :d] = self.Z
        self.right[:, d] = sq
        self.right[:, d + 1] = 1.0

    def _common_shift(self, sq: np.ndarray) -> float:
        """c such that the largest term of most rows, exp(c - min_k d_ik^2), lies in the window
        [exp(LOW + log N), exp(HIGH - log N)]: the window placed over the most nearest-neighbour
        distances of a few evenly spaced points."""
        S = np.unique(np.linspace(0, self.n - 1, min(self.n, SHIFT_SAMPLE)).astype(np.intp))
        D2 = sq[S, None] + sq[None, :] - 2.0 * (self.Z[S] @ self.Z.T)
        D2[np.arange(S.size), S] = np.inf
        L = np.sort(D2.min(axis=1))
        width = HIGH - LOW - 2.0 * np.log(self.n)
        last = np.searchsorted(L, L + width, side="right") - 1
        j = int(np.argmax(last - np.arange(L.size)))
        return float((L[j] + L[last[j]]) / 2 + (HIGH + LOW) / 2)

    def unsort(self, Y: np.ndarray) -> np.ndarray:
        out = np.empty_like(Y)
        out[self.order] = Y
        return out

    def segments(self, P: np.ndarray, col0: int = 0) -> list[tuple[slice, slice]]:
        """(rows, columns) slices of the same-class part of block P x [col0, n), in the block's
        coordinates, one per class among the sorted positions P."""
        first = np.searchsorted(self.codes[P], np.arange(self.bounds.size)).tolist()
        bounds = self.bounds.tolist()
        return [(slice(first[c], first[c + 1]), slice(max(bounds[c], col0) - col0,
                                                      bounds[c + 1] - col0))
                for c in range(len(bounds) - 1)
                if first[c + 1] > first[c] and bounds[c + 1] > max(bounds[c], col0)]


def _kernel(lay: _Layout, P: np.ndarray, col0: int = 0, own_shift: bool = False,
            out: np.ndarray | None = None) -> np.ndarray:
    """exp(c - d_ik^2) for the rows P (sorted positions) and columns col0..n-1, 0 for k = i;
    with `own_shift` every row gets its own shift L_i = min_k d_ik^2 instead of c (eq. 3.20)."""
    K = np.matmul(lay.left[P], lay.right[col0:].T, out=out)
    self_ = P - col0
    inside = (self_ >= 0) & (self_ < K.shape[1])
    where = (np.flatnonzero(inside), self_[inside])
    if own_shift:
        K[where] = -np.inf
        K -= K.max(axis=1, keepdims=True)
    np.maximum(K, np.full((K.shape[0], 1), EXP_FLOOR), out=K)
    np.exp(K, out=K)  # inf only in rows outside the window, which are recomputed
    K[where] = 0.0
    return K


def _class_sums(lay: _Layout, P: np.ndarray, K: np.ndarray) -> np.ndarray:
    q = np.zeros(P.size)
    for rows, cols in lay.segments(P):
        q[rows] = K[rows, cols] @ np.ones(cols.stop - cols.start)
    return q


def _irregular(lay: _Layout, s: np.ndarray) -> np.ndarray:
    """Rows whose kernel sum under the common shift is outside [exp(low), exp(HIGH)]."""
    with np.errstate(divide="ignore"):
        log_s = np.log(s)
    return ~((log_s >= lay.low) & (log_s <= HIGH))


def _coefficients(lay: _Layout, P: np.ndarray, K: np.ndarray, p: np.ndarray,
                  s: np.ndarray) -> None:
    """K (rows P, all columns, kernel values) <- c_ik = (p_i - [c_k = c_i]) K_ik / s_i in place."""
    a, b = p / s, (p - 1.0) / s
    for rows, cols in lay.segments(P):
        K[rows, :cols.start] *= a[rows, None]
        K[rows, cols] *= b[rows, None]
        K[rows, cols.stop:] *= a[rows, None]


def _exact_rows(lay: _Layout, P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(p_i, c_ik) of the rows P, each row with its own shift (eq. 3.20)."""
    K = _kernel(lay, P, own_shift=True)
    s = K.sum(axis=1)
    p = _class_sums(lay, P, K) / s
    _coefficients(lay, P, K, p, s)
    return p, K


def _by_rows(lay: _Layout, P: np.ndarray, step: int) -> tuple[float, np.ndarray]:
    """f over the rows P and T = (C + C^T) [Z | 1] restricted to them, `step` rows at a time."""
    T = np.zeros_like(lay.V)
    f = 0.0
    ones = np.ones(lay.n)
    buf = np.empty((min(step, P.size), lay.n))
    for start in range(0, P.size, step):
        I = P[start:start + step]
        K = _kernel(lay, I, out=buf[:I.size])
        s = K @ ones
        bad = np.flatnonzero(_irregular(lay, s))
        if bad.size:  # rows far from the common shift: their own shift
            K[bad] = _kernel(lay, I[bad], own_shift=True)
            s[bad] = K[bad] @ ones
        p = _class_sums(lay, I, K) / s
        f += float(p.sum())
        _coefficients(lay, I, K, p, s)
        T[I] += K @ lay.V
        T += K.T @ lay.V[I]
    return f, T


def _symmetric(lay: _Layout, height: int) -> tuple[float, np.ndarray]:
    """f and T = W [Z | 1], W = C + C^T, from the kernel's upper block triangle only.

    With the common shift c the kernel E_ik = exp(c - d_ik^2) is symmetric, so strips of `height`
    rows hold the columns from their first row on (N^2 / 2 entries), and W_ik = E_ik (a_i + a_k)
    with a_i = p_i / s_i ((p_i - 1) / s_i when c_i = c_k): no transposition, half the distances
    and exponentials. Rows outside the window (`_irregular`) are recomputed with their own shift
    and their terms added separately."""
    n = lay.n
    starts = range(0, n, height)
    sizes = [min(height, n - i) * (n - i) for i in starts]
    store = np.empty(sum(sizes))  # one allocation: the allocator keeps it for the next call
    offsets = np.cumsum([0] + sizes).tolist()
    strips = []  # (first row, rows, kernel block, same-class segments)
    for i, offset, size in zip(starts, offsets, sizes):
        P = np.arange(i, min(i + height, n))
        K = _kernel(lay, P, col0=i, out=store[offset:offset + size].reshape(P.size, n - i))
        strips.append((i, P.size, K, lay.segments(P, col0=i)))
    ones = np.ones(n)
    s = np.zeros(n)
    q = np.zeros(n)
    for i, m, K, segments in strips:
        s[i:i + m] += K @ ones[i:]
        s[i + m:] += ones[:m] @ K[:, m:]
        for rows, cols in segments:
            q[i + rows.start:i + rows.stop] += K[rows, cols] @ ones[cols]
            tail = slice(max(cols.start, m), cols.stop)
            if tail.stop > tail.start:
                q[i + tail.start:i + tail.stop] += ones[rows] @ K[rows, tail]
    bad = np.flatnonzero(_irregular(lay, s))
    s[bad], q[bad] = 1.0, 0.0
    p = q / s
    a, b = p / s, (p - 1.0) / s
    a[bad], b[bad] = 0.0, 0.0
    T = np.zeros_like(lay.V)
    weight = np.empty((height, n))
    for i, m, K, segments in strips:
        rows = bad[(bad >= i) & (bad < i + m)]
        if rows.size:  # E_ik of two irregular rows may be inf: their terms come below
            K[np.ix_(rows - i, bad[bad >= i] - i)] = 0.0
        w = weight[:m, :n - i]
        np.copyto(w, a[None, i:])
        w += a[i:i + m, None]
        for r, cols in segments:
            np.add(b[i + r.start:i + r.stop, None], b[None, i + cols.start:i + cols.stop],
                   out=w[r, cols])
        K *= w
        T[i:i + m] += K @ lay.V[i:]
        T[i + m:] += K[:, m:].T @ lay.V[i:i + m]
    f = float(p.sum())
    if bad.size:
        p_bad, C = _exact_rows(lay, bad)
        f += float(p_bad.sum())
        T[bad] += C @ lay.V
        T += C.T @ lay.V[bad]
    return f, T


def _own_shift_kernel(Zi: np.ndarray, I: np.ndarray, Z: np.ndarray, sq: np.ndarray) -> np.ndarray:
    """exp(L_i - d_ik^2) for the rows Zi (points I) against Z, L_i = min_{k != i} d_ik^2 (eq.
    3.20), the exponent clamped at EXP_FLOOR, 0 for k = i."""
    K = squared_distances(Zi, Z, sq)
    self_ = (np.arange(I.size), I)
    K[self_] = np.inf
    np.subtract(K.min(axis=1, keepdims=True), K, out=K)
    np.maximum(K, EXP_FLOOR, out=K)
    np.exp(K, out=K)
    K[self_] = 0.0
    return K


def _rows(Z: np.ndarray, codes: np.ndarray, rows: np.ndarray,
          step: int) -> tuple[float, np.ndarray]:
    """f over the distinct points `rows` against the whole set and Y with grad = 2 Y^T X (module
    docstring), `step` rows at a time: Y = diag(W 1) Z - W Z with W = C + C^T and C nonzero in
    the rows only, i.e. Y = col * Z - C^T Z_rows, plus r * Z_rows - C Z on the rows themselves
    (r, col: the row and column sums of C)."""
    sq = np.einsum("ij,ij->i", Z, Z)
    Y = np.zeros(Z.shape, order="F")  # BLAS accumulates C^T Z_rows into it in place
    col = np.zeros(Z.shape[0])
    f = 0.0
    for start in range(0, rows.size, step):
        I = rows[start:start + step]
        Zi = Z[I]
        K = _own_shift_kernel(Zi, I, Z, sq)
        same = codes[I][:, None] == codes[None, :]
        s = K.sum(axis=1)
        p = np.where(same, K, 0.0).sum(axis=1) / s
        f += float(p.sum())
        K *= np.where(same, ((p - 1.0) / s)[:, None], (p / s)[:, None])  # c_ik
        np.putmask(K, np.abs(K) < TINY, 0.0)  # subnormal c_ik: 60x slower products, no weight
        col += K.sum(axis=0)
        Y[I] += K.sum(axis=1)[:, None] * Zi - K @ Z
        Y = blas.dgemm(-1.0, K.T, np.asfortranarray(Zi), beta=1.0, c=Y, overwrite_c=True)
    Y += col[:, None] * Z
    return f, Y


def value(A, X, y, chunk_size: int | None = None) -> float:
    """f(A) = sum_i p_i (eq. 3.3) alone, every row with its own shift (eq. 3.20), `chunk_size`
    rows at a time (default: about 2M kernel entries): the N^2 d distances and exponentials
    without the gradient's products, for scoring a fitted A on large N."""
    A, X, y = check_inputs(A, X, y)
    Z = project(A, X)
    _, codes = np.unique(y, return_inverse=True)
    sq = np.einsum("ij,ij->i", Z, Z)
    step = chunk_size or default_chunk(X.shape[0])
    f = 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        for start in range(0, X.shape[0], step):
            I = np.arange(start, min(start + step, X.shape[0]))
            K = _own_shift_kernel(Z[I], I, Z, sq)
            same = codes[I][:, None] == codes[None, :]
            f += float((np.where(same, K, 0.0).sum(axis=1) / K.sum(axis=1)).sum())
    if not np.isfinite(f):
        raise NonFiniteObjective("squared distances overflow: A exploded")
    return f


def objective(A, X, y, rows=None, reg=0.0, chunk_size: int | None = None):
    """NCA objective f = sum_{i in rows} p_i - reg ||A||^2 and its gradient (d x D).

    See the module docstring for the equations. `rows` (default all) are distinct indices of the
    points whose p_i are summed, each against the whole set. Memory is at most `chunk_size` x N
    (default: about 2M entries): with all rows and room for half the pairs the upper triangle is
    kept (`_symmetric`); fewer rows than N / 2 go in blocks of `chunk_size` rows (default: 2M
    entries) each with its own shift (`_rows`); otherwise rows go in blocks of `chunk_size`
    (default: 0.5M entries).
    """
    A, X, y = check_inputs(A, X, y)
    n = X.shape[0]
    Z = project(A, X)
    budget = chunk_size or default_chunk(n)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow: caught below
        if rows is not None and 2 * len(rows) < n:  # a stochastic step: few rows against all
            _, codes = np.unique(y, return_inverse=True)
            f, Y = _rows(Z, codes, np.asarray(rows, np.intp), budget)
        else:
            lay = _Layout(Z, y)
            if rows is None and 2 * budget >= n + STRIP_HEIGHT:
                f, T = _symmetric(lay, STRIP_HEIGHT)
            else:
                P = np.sort(lay.rank[np.arange(n) if rows is None else np.asarray(rows, np.intp)])
                f, T = _by_rows(lay, P, chunk_size or max(1, BLOCK_ENTRIES // n))
            Y = lay.unsort(T[:, lay.d:] * lay.Z - T[:, :lay.d])  # Y = diag(W 1) Z - W Z
        grad = 2.0 * (Y.T @ X)
    if not (np.isfinite(f) and np.all(np.isfinite(grad))):
        raise NonFiniteObjective("squared distances overflow: A exploded")
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
        np.subtract(D2.min(axis=1, keepdims=True), D2, out=D2)
        np.maximum(D2, np.full((D2.shape[0], 1), EXP_FLOOR), out=D2)  # fast exp (EXP_FLOOR)
        K = np.exp(D2, out=D2)
        S = K @ onehot
        out[start:start + step] = S / S.sum(axis=1, keepdims=True)
    return out

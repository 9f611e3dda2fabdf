"""The MVCE interior-point method of `dmlbench.solvers.mvce_newton`, compiled (numba), one
problem after another.

The same iteration step for step (uniform start; Mehrotra predictor-corrector on the m x m
system K o K + diag(s / w) + ridge, factorised once per step by Cholesky and solved for
M^{-1}(delta - y 1), M^{-1} 1 and the corrector; one step length, fraction `STEP` of the way to
the boundary; w renormalised; stop at duality gap <= tol), with the kernel K = C A^{-1} C^T from
the Cholesky factor of A = C^T W C + eps I; the weights agree with the batched implementation to
rounding and the step counts are the same. For RMVEM's neighbourhoods (m up to a few hundred)
the batched numpy implementation spends much of its time in per-call overhead (a dozen array
operations or LAPACK calls per step on 10 x 10 to 100 x 100 matrices); compiled loops over one
problem at a time, with every buffer allocated once, avoid it: 2x-4x faster from m = 12 to
m = 108 and 1.1x-1.4x from m = 240 to m = 400 (`benchmarks/mvce_speed.py`, section 3, times
both on the same problems). The Cholesky factorisations, substitutions and products are
written out because LAPACK and BLAS cannot be called per problem from compiled code without
that overhead; the products (`_gram_lower`) and the Cholesky factorisation compute several
results per pass over a row (register blocking), which made a solve 1.1x-1.7x faster than
one dot product at a time (an exploratory measurement, script not kept: at 4ca74b6, random
problems from m = 6, d = 4 to m = 108, d = 36, the same steps).

A problem whose A or Newton matrix is not positive definite in floating point (the batched path
then falls back to LU) is flagged in `status` and left to the batched implementation.

With a support hint (`mvce.newton`), a problem is first solved on the rows the hint marks; the
certificate over all m rows (delta_j <= sum_i w_i delta_i + tol for every row left out, from
the Cholesky factor of A at the solution) decides whether the rows outside the ellipsoid must
be added, and the enlarged problem is solved again from its uniform start. The rows never
added keep weight 0, and the gap over all rows is <= tol as without a hint. Over RMVEM's m
grid the hint (`mvce.nested_support`) takes 1.1x-1.6x less solver time
(`benchmarks/mvce_speed.py`, section 4). Tried and not kept (exploratory measurements on the
leave-one-out neighbourhoods of wdbc, scripts not kept): a warm start from the previous m's
weights, mixed with the uniform ones and centred or dual-feasible, took 8.2-11.1 Newton steps
against 8.4 from the uniform start; an active-set Newton method on the weights, warm-started
from the previous m's solution, took 12-17 steps against the interior point's 6.4-7.8 (on
wine and wdbc); dropping rows whose weight fell below 1e-3 / k from the third step on saved
13 % without a hint and under 3 % with one; BLAS products (numba's np.dot) instead of the
written-out ones: no faster at these sizes.
"""

from __future__ import annotations

import numba
import numpy as np

from .mvce_newton import RIDGE, STEP

#: LLVM may reorder sums (vectorised dot products) and fuse multiply-adds; NaN and infinity
#: keep their IEEE meaning, so the positive-pivot tests below stay exact
FAST_MATH = {"reassoc", "contract"}
#: status of a problem: solved (gap <= tol or max_iter steps), or handed back to the batched path
SOLVED, NOT_POSITIVE_DEFINITE = 0, 1


@numba.njit(cache=True, fastmath=FAST_MATH)
def _dots4(X: np.ndarray, i: int, Y: np.ndarray, j: int, n: int):
    """The dot products of X[i, :n] with Y[j, :n] .. Y[j + 3, :n]: four results per pass over
    X[i], which halves the loads of separate dot products (register blocking)."""
    t0 = t1 = t2 = t3 = 0.0
    for a in range(n):
        x = X[i, a]
        t0 += x * Y[j, a]
        t1 += x * Y[j + 1, a]
        t2 += x * Y[j + 2, a]
        t3 += x * Y[j + 3, a]
    return t0, t1, t2, t3


@numba.njit(cache=True, fastmath=FAST_MATH)
def _gram_lower(X: np.ndarray, out: np.ndarray) -> None:
    """out[i, j] = X[i] . X[j] for j <= i (the lower triangle of X X^T), in blocks of two rows
    by four columns: eight results per pass, six rows loaded (register blocking)."""
    rows, n = X.shape
    for i in range(0, rows - 1, 2):
        j = 0
        while j + 3 <= i:
            a0 = a1 = a2 = a3 = b0 = b1 = b2 = b3 = 0.0
            for a in range(n):
                x, z = X[i, a], X[i + 1, a]
                y0, y1, y2, y3 = X[j, a], X[j + 1, a], X[j + 2, a], X[j + 3, a]
                a0 += x * y0
                a1 += x * y1
                a2 += x * y2
                a3 += x * y3
                b0 += z * y0
                b1 += z * y1
                b2 += z * y2
                b3 += z * y3
            out[i, j], out[i, j + 1], out[i, j + 2], out[i, j + 3] = a0, a1, a2, a3
            out[i + 1, j], out[i + 1, j + 1], out[i + 1, j + 2], out[i + 1, j + 3] = b0, b1, b2, b3
            j += 4
        for j in range(j, i + 2):
            t = u = 0.0
            for a in range(n):
                t += X[i, a] * X[j, a]
                u += X[i + 1, a] * X[j, a]
            if j <= i:
                out[i, j] = t
            out[i + 1, j] = u
    if rows % 2:
        i = rows - 1
        for j in range(i + 1):
            t = 0.0
            for a in range(n):
                t += X[i, a] * X[j, a]
            out[i, j] = t


@numba.njit(cache=True, fastmath=FAST_MATH)
def _cholesky(M: np.ndarray, n: int) -> bool:
    """In place, M[:n, :n] = L L^T: L in the lower triangle (only the lower triangle is read)
    and L^T in the upper one, so that both substitutions run along rows; False when a pivot
    is not positive. Column j's entries below the pivot are computed four rows at a time."""
    for j in range(n):
        pivot = M[j, j]
        for k in range(j):
            pivot -= M[j, k] * M[j, k]
        if not pivot > 0.0:
            return False
        pivot = np.sqrt(pivot)
        M[j, j] = pivot
        i = j + 1
        while i + 3 < n:
            t0, t1, t2, t3 = _dots4(M, j, M, i, j)
            M[i, j] = M[j, i] = (M[i, j] - t0) / pivot
            M[i + 1, j] = M[j, i + 1] = (M[i + 1, j] - t1) / pivot
            M[i + 2, j] = M[j, i + 2] = (M[i + 2, j] - t2) / pivot
            M[i + 3, j] = M[j, i + 3] = (M[i + 3, j] - t3) / pivot
            i += 4
        for i in range(i, n):
            t = M[i, j]
            for k in range(j):
                t -= M[i, k] * M[j, k]
            M[i, j] = M[j, i] = t / pivot
    return True


@numba.njit(cache=True, fastmath=FAST_MATH)
def _cholesky_solve(L: np.ndarray, x: np.ndarray) -> None:
    """x <- (L L^T)^{-1} x in place, with L from `_cholesky` (forward substitution with L,
    back substitution with L^T = its upper triangle, both along rows)."""
    n = x.shape[0]
    for i in range(n):
        t = x[i]
        for k in range(i):
            t -= L[i, k] * x[k]
        x[i] = t / L[i, i]
    for i in range(n - 1, -1, -1):
        t = x[i]
        for k in range(i + 1, n):
            t -= L[i, k] * x[k]
        x[i] = t / L[i, i]


@numba.njit(cache=True, fastmath=FAST_MATH)
def _cholesky_solve2(L: np.ndarray, x: np.ndarray, e: np.ndarray) -> None:
    """`_cholesky_solve` for two right-hand sides at once (each row of L loaded once)."""
    n = x.shape[0]
    for i in range(n):
        t, u = x[i], e[i]
        for k in range(i):
            t -= L[i, k] * x[k]
            u -= L[i, k] * e[k]
        x[i], e[i] = t / L[i, i], u / L[i, i]
    for i in range(n - 1, -1, -1):
        t, u = x[i], e[i]
        for k in range(i + 1, n):
            t -= L[i, k] * x[k]
            u -= L[i, k] * e[k]
        x[i], e[i] = t / L[i, i], u / L[i, i]


@numba.njit(cache=True, fastmath=FAST_MATH)
def _kernel(C, Ct, w, eps, A, U, S, St, K, delta) -> bool:
    """K = C A^{-1} C^T (lower triangle) and delta = diag K for A = C^T diag(w) C + eps I
    (C (m, r) and its transpose Ct; w > 0): A = U U^T + eps I with U = Ct diag(w)^{1/2},
    A = L L^T, S = L^{-1} C^T (r, m), K = S^T S, from the rows of St = S^T."""
    m, r = C.shape
    root = np.sqrt(w)
    for a in range(r):
        for j in range(m):
            U[a, j] = Ct[a, j] * root[j]
    _gram_lower(U, A)
    for a in range(r):
        A[a, a] += eps
    if not _cholesky(A, r):
        return False
    for a in range(r):        # forward substitution, row a of S from rows 0..a-1, 4 at a time
        for j in range(m):
            S[a, j] = Ct[a, j]
        k = 0
        while k + 3 < a:
            l0, l1, l2, l3 = A[a, k], A[a, k + 1], A[a, k + 2], A[a, k + 3]
            for j in range(m):
                S[a, j] -= l0 * S[k, j] + l1 * S[k + 1, j] + l2 * S[k + 2, j] + l3 * S[k + 3, j]
            k += 4
        for k in range(k, a):
            for j in range(m):
                S[a, j] -= A[a, k] * S[k, j]
        for j in range(m):
            S[a, j] /= A[a, a]
    St[:, :] = S.T
    _gram_lower(St, K)
    for i in range(m):
        delta[i] = K[i, i]
    return True


@numba.njit(cache=True, fastmath=FAST_MATH)
def _max_step(x: np.ndarray, dx: np.ndarray) -> float:
    """The largest a <= 1 with x + a dx >= 0."""
    a = 1.0
    for i in range(x.shape[0]):
        if dx[i] < 0.0 and -x[i] / dx[i] < a:
            a = -x[i] / dx[i]
    return a


@numba.njit(cache=True, fastmath=FAST_MATH)
def _interior(w: np.ndarray, s: np.ndarray) -> bool:
    """Whether w and s are strictly positive with finite s / w and a positive w^T s, so that a
    step can divide by them (`mvce_newton.interior`)."""
    for j in range(w.shape[0]):
        if not (w[j] > 0.0 and s[j] > 0.0 and s[j] / w[j] < np.inf):
            return False
    return np.dot(w, s) > 0.0


@numba.njit(cache=True, fastmath=FAST_MATH)
def _solve_subset(C, eps, tol, max_iter, w, s, A, U, S, St, K, M, delta, x, e, dw, ds,
                  target):
    """The interior-point iteration on the k rows of C (k, r), from the uniform start, with
    buffers of size k; returns (Newton steps, True) or (steps, False) when a Cholesky
    factorisation fails. It also stops, short of the gap, where the iterate has left the
    interior in floating point (`_interior`). On return A holds the Cholesky factor of A(w) at
    the final w."""
    m = C.shape[0]
    Ct = C.T.copy()
    steps = 0
    for j in range(m):
        w[j] = 1.0 / m
    if not _kernel(C, Ct, w, eps, A, U, S, St, K, delta):
        return steps, False
    y = delta.max() + 1.0
    for j in range(m):
        s[j] = y - delta[j]
    while delta.max() - np.dot(w, delta) > tol and steps < max_iter:
        if not _interior(w, s):
            break
        steps += 1
        ridge = RIDGE * np.dot(delta, delta) / m           # trace(K o K) / m
        for i in range(m):
            for j in range(i + 1):
                M[i, j] = K[i, j] * K[i, j]
            M[i, i] += s[i] / w[i] + ridge
        if not _cholesky(M, m):
            return steps, False
        mu = np.dot(w, s) / m
        for j in range(m):
            x[j] = delta[j] - y
            e[j] = 1.0
        _cholesky_solve2(M, x, e)                            # e = M^{-1} 1, for both directions
        e_sum = e.sum()
        dy = x.sum() / e_sum                                 # affine scaling (sigma = 0)
        for j in range(m):
            dw[j] = x[j] - dy * e[j]
            ds[j] = -s[j] - s[j] * dw[j] / w[j]
        a_p, a_d = _max_step(w, dw), _max_step(s, ds)
        mu_aff = 0.0
        for j in range(m):
            mu_aff += (w[j] + a_p * dw[j]) * (s[j] + a_d * ds[j])
        centring = (mu_aff / m / mu) ** 3 * mu
        for j in range(m):
            target[j] = centring - dw[j] * ds[j]             # Mehrotra's centring + corrector
            x[j] = delta[j] - y + target[j] / w[j]
        _cholesky_solve(M, x)
        dy = x.sum() / e_sum
        for j in range(m):
            dw[j] = x[j] - dy * e[j]
            ds[j] = (target[j] - w[j] * s[j] - s[j] * dw[j]) / w[j]
        a = STEP * min(_max_step(w, dw), _max_step(s, ds))
        total = 0.0
        for j in range(m):
            w[j] += a * dw[j]
            s[j] += a * ds[j]
            total += w[j]
        for j in range(m):
            w[j] /= total
        y += a * dy
        if not _kernel(C, Ct, w, eps, A, U, S, St, K, delta):
            return steps, False
    return steps, True


@numba.njit(cache=True, fastmath=FAST_MATH)
def _inverse_quad(L, c, v) -> float:
    """c^T A^{-1} c = |L^{-1} c|^2, with A = L L^T (`_cholesky`); v is a buffer of length r."""
    r = c.shape[0]
    total = 0.0
    for a in range(r):
        t = c[a]
        for k in range(a):
            t -= L[a, k] * v[k]
        v[a] = t / L[a, a]
        total += v[a] * v[a]
    return total


@numba.njit(cache=True, fastmath=FAST_MATH)
def interior_point(C: np.ndarray, eps: np.ndarray, tol: float, max_iter: int,
                   support: np.ndarray):
    """Weights (b, m), Newton step counts (b,), status (b,), delta (b, m) and log det A (b,) at
    the weights, for the problems C (b, m, r), each solved alone
    (`dmlbench.solvers.mvce_newton.interior_point`, same steps), first on the rows `support`
    (b, m) marks; the rows outside whose delta certifies a gap above `tol` are then added and
    the enlarged problem is solved again, until none is (the others keep weight 0)."""
    b, m, r = C.shape
    weights, deltas, logdet = np.zeros((b, m)), np.zeros((b, m)), np.zeros(b)
    n_iter = np.zeros(b, np.int64)
    status = np.full(b, SOLVED, np.int64)
    A, Ub, Sb, Stb, Kb, Mb = (np.empty((r, r)), np.empty(r * m), np.empty(r * m),
                              np.empty(m * r), np.empty(m * m), np.empty(m * m))
    delta, w, s = np.empty(m), np.empty(m), np.empty(m)
    x, e, dw, ds, target = np.empty(m), np.empty(m), np.empty(m), np.empty(m), np.empty(m)
    Cs, rows, v = np.empty((m, r)), np.empty(m, np.int64), np.empty(r)
    chosen = np.empty(m, np.bool_)
    for p in range(b):
        chosen[:] = support[p]
        while True:
            k = 0
            for j in range(m):
                if chosen[j]:
                    rows[k] = j
                    Cs[k] = C[p, j]
                    k += 1
            steps, ok = _solve_subset(
                Cs[:k], eps[p], tol, max_iter - n_iter[p], w[:k], s[:k], A,
                Ub[:r * k].reshape(r, k), Sb[:r * k].reshape(r, k), Stb[:k * r].reshape(k, r),
                Kb[:k * k].reshape(k, k), Mb[:k * k].reshape(k, k), delta[:k], x[:k], e[:k],
                dw[:k], ds[:k], target[:k])
            n_iter[p] += steps
            if not ok:
                status[p] = NOT_POSITIVE_DEFINITE
                break
            if k == m or n_iter[p] >= max_iter:
                break
            mean = np.dot(w[:k], delta[:k])
            added = False
            for j in range(m):
                if not chosen[j] and _inverse_quad(A, C[p, j], v) > mean + tol:
                    chosen[j] = added = True
            if not added:
                break
        if status[p] != SOLVED:
            continue
        for t in range(k):
            weights[p, rows[t]], deltas[p, rows[t]] = w[t], delta[t]
        for j in range(m):
            if not chosen[j]:
                deltas[p, j] = _inverse_quad(A, C[p, j], v)
        for a in range(r):
            logdet[p] += 2.0 * np.log(A[a, a])
    return weights, n_iter, status, deltas, logdet


def precompile() -> None:
    """Compile `interior_point` for the argument types `mvce.newton` passes and write numba's
    cache (`make install` runs it, so that no job times the compilation, about 5 s: later
    processes load the cache in about 0.2 s)."""
    interior_point(np.ones((1, 2, 1)), np.ones(1), 1e-9, 1, np.ones((1, 2), dtype=bool))

"""A primal-dual interior-point (Newton) method for the fixed-centre MVCE on its m weights,
batched.

Problem (see `dmlbench.solvers.mvce`), in the span coordinates C (m x r) of the neighbours:

    min_w  -log det A(w),   A(w) = C^T diag(w) C + eps I_r,   1^T w = 1,   w >= 0.

The gradient of log det A is delta_j = c_j^T A^{-1} c_j and its Hessian is -(K o K) with
K = C A^{-1} C^T (o: elementwise product). The KKT system with slacks s = y 1 - delta >= 0
(the dual: every point inside the ellipsoid {z: z^T A^{-1} z <= y}) and w_j s_j = 0 is solved by
Mehrotra's predictor-corrector method (Nocedal & Wright, Numerical Optimization, 2nd ed., Alg.
14.3, applied to this convex program): one m x m system (K o K + diag(s / w), symmetric
positive definite) per step, factorised once (Cholesky) and solved for the predictor and the
corrector, one step length for w, s and y (fraction 0.9999 of the step to the boundary), w
renormalised to the simplex after each step. Iterates stay interior; the stopping
rule is the same duality gap as Titterington's (max_j delta_j - sum_j w_j delta_j, a
certificate), evaluated at every iterate. A step costs O(m r^2 + m^2 r + m^3); each problem of a
batch is computed exactly as if alone (problems that finish leave the batch).

Alternatives: Frank-Wolfe steps with away steps (Wolfe-Atwood / Todd-Yildirim) are not
rank-one updates here (eps I enters every elementary matrix), so each costs O(r^3 + m r^2); they
need tens to hundreds of iterations and are measured slower in `benchmarks/mvce_speed.py`. In
exploratory runs (not kept): a warm start from the solution of a smaller neighbourhood saved
under one step of nine; one solve per step (Mehrotra's centring without the second-order
corrector) needed about three more steps; dropping points the gap certifies to lie inside the
optimal ellipsoid saved at most 10 % and made a problem's result depend on its batch; starting
from 8 Titterington iterations saved about 2 steps but cost more time than they saved. The step
fraction 0.9999 needs 0.7-1.9 steps fewer than 0.99 on the UCI sets' neighbourhoods (at m = 3d
6.1-10.1 instead of 7.2-10.8 on average, to gap 1e-9; `benchmarks/mvce_speed.py`, section 3),
with the same optima.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import lapack

#: step fraction to the boundary, relative ridge on K o K (duplicated neighbours make it singular)
STEP, RIDGE = 0.9999, 1e-12
#: from m = PER_PROBLEM_FROM_M on, each problem's Newton system is solved by its own LAPACK
#: calls (one Cholesky factorisation serves predictor and corrector), and from m r =
#: KERNEL_PER_PROBLEM_FROM_MR on its kernel too; below, numpy's batched LU solvers, whose
#: per-problem overhead is lower (`benchmarks/mvce_speed.py`, section 3, times both paths)
PER_PROBLEM_FROM_M, KERNEL_PER_PROBLEM_FROM_MR = 24, 640


def _kernel_batched(C: np.ndarray, w: np.ndarray, eps: np.ndarray):
    """K = C A^{-1} C^T (b, m, m) and delta = diag K, by one batched LU solve."""
    Ct = np.swapaxes(C, 1, 2)
    A = (Ct * w[:, None, :]) @ C + eps[:, None, None] * np.eye(C.shape[2])
    K = C @ np.linalg.solve(A, Ct)
    return K, np.einsum("bii->bi", K)


def _kernel_per_problem(C: np.ndarray, w: np.ndarray, eps: np.ndarray):
    """The same by a Cholesky factorisation A = L L^T per problem: S = L^{-1} C^T, K = S^T S."""
    Ct = np.swapaxes(C, 1, 2)
    A = (Ct * w[:, None, :]) @ C + eps[:, None, None] * np.eye(C.shape[2])
    K = np.empty((C.shape[0], C.shape[1], C.shape[1]))
    for i in range(C.shape[0]):
        L, info = lapack.dpotrf(A[i], lower=1)
        if info != 0:   # not positive definite in floating point: LU for this one
            K[i] = C[i] @ np.linalg.solve(A[i], Ct[i])
            continue
        S = lapack.dtrtrs(L, Ct[i], lower=1)[0]
        K[i] = S.T @ S
    return K, np.einsum("bii->bi", K)


def interior(w: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Per problem, whether w and s are strictly positive with finite s / w and w^T s > 0. A gap
    `tol` below what rounding lets the certificate reach drives weights, slacks and w^T s
    towards underflow; once one reaches zero (or s / w overflows) a step would divide by it, so
    the problem stops there, with its gap above tol (`converged` False)."""
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        finite = np.isfinite(s / w).all(axis=1)
    return ((w > 0).all(axis=1) & (s > 0).all(axis=1) & finite
            & (np.einsum("bm,bm->b", w, s) > 0))


def _max_step(x: np.ndarray, dx: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(dx < 0, -x / dx, np.inf)
    return np.minimum(1.0, ratio.min(axis=1))


def interior_point(C: np.ndarray, eps: np.ndarray, tol: float,
                   max_iter: int) -> tuple[np.ndarray, np.ndarray]:
    """Weights (b, m) and Newton step counts (b,) for the problems C (b, m, r); problems stop
    independently once their gap is <= tol, after `max_iter` steps, or where the iterate
    leaves the interior in floating point (`interior`)."""
    b, m, r = C.shape
    w_out = np.full((b, m), 1.0 / m)
    n_iter = np.zeros(b, dtype=np.int64)
    active = np.arange(b)
    Ca, ea, w = C, eps, w_out.copy()
    per_problem = m >= PER_PROBLEM_FROM_M
    kernel = _kernel_per_problem if m * r >= KERNEL_PER_PROBLEM_FROM_MR else _kernel_batched
    K, delta = kernel(Ca, w, ea)
    y = delta.max(axis=1) + 1.0
    s = y[:, None] - delta
    for step in range(int(max_iter) + 1):
        done = delta.max(axis=1) - np.einsum("bm,bm->b", w, delta) <= tol
        done |= ~interior(w, s)
        if step == max_iter:
            done[:] = True
        if done.any():
            w_out[active[done]] = w[done]
            keep = ~done
            if not keep.any():
                break
            active, Ca, ea = active[keep], Ca[keep], ea[keep]
            w, s, y, K, delta = w[keep], s[keep], y[keep], K[keep], delta[keep]
        n_iter[active] += 1
        w, s, y = _newton_step(K, delta, w, s, y, per_problem)
        K, delta = kernel(Ca, w, ea)
    return w_out, n_iter


def _factor_solve(M: np.ndarray, R: np.ndarray, per_problem: bool):
    """(M^{-1} R, solve) for the batch of SPD Newton matrices M (b, m, m); solve(R') gives
    M^{-1} R' for later right-hand sides. Per problem: one Cholesky factorisation (LAPACK posv,
    which also solves for R), reused by every later solve; LU where rounding makes M
    indefinite. Batched: numpy's LU solve at each call."""
    if not per_problem:
        def batched(rhs):
            return np.linalg.solve(M, rhs)
        return batched(R), batched
    X, factors = np.empty_like(R), []
    for i in range(M.shape[0]):
        L, X[i], info = lapack.dposv(M[i], R[i], lower=1)
        if info == 0:
            factors.append((L,))
        else:
            lu, piv, X[i], info = lapack.dgesv(M[i], R[i])
            if info != 0:
                raise np.linalg.LinAlgError(
                    f"MVCE Newton system singular for problem {i} of the batch (m = "
                    f"{M.shape[1]}); solve(..., solver='titterington') needs no Newton system")
            factors.append((lu, piv))

    def solve(rhs):
        out = np.empty_like(rhs)
        for i, f in enumerate(factors):
            out[i] = (lapack.dpotrs(f[0], rhs[i], lower=1) if len(f) == 1
                      else lapack.dgetrs(f[0], f[1], rhs[i]))[0]
        return out
    return X, solve


def _newton_step(K, delta, w, s, y, per_problem: bool = False):
    """One predictor-corrector step; returns the new (w, s, y) with w renormalised."""
    b, m = w.shape
    ridge = RIDGE * np.einsum("bm,bm->b", delta, delta) / m        # trace(K o K) / m
    M = K * K
    M.reshape(b, m * m)[:, ::m + 1] += s / w + ridge[:, None]      # + the diagonal
    mu = np.einsum("bm,bm->b", w, s) / m
    base = delta - y[:, None]
    X, solve = _factor_solve(M, np.stack([base, np.ones_like(w)], axis=2), per_problem)
    e = X[..., 1]                                                 # M^{-1} 1, for both directions

    def direction(a):
        dy = a.sum(axis=1) / e.sum(axis=1)
        return a - dy[:, None] * e, dy

    dw, dy = direction(X[..., 0])                                 # affine scaling (sigma = 0)
    ds = -s - s * dw / w
    a_p, a_d = _max_step(w, dw), _max_step(s, ds)
    mu_aff = np.einsum("bm,bm->b", w + a_p[:, None] * dw, s + a_d[:, None] * ds) / m
    target = ((mu_aff / mu) ** 3 * mu)[:, None] - dw * ds         # Mehrotra's centring + corrector
    dw, dy = direction(solve((base + target / w)[:, :, None])[..., 0])
    ds = (target - w * s - s * dw) / w
    a = STEP * np.minimum(_max_step(w, dw), _max_step(s, ds))
    w = w + a[:, None] * dw
    return w / w.sum(axis=1, keepdims=True), s + a[:, None] * ds, y + a * dy

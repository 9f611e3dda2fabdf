"""A primal-dual interior-point (Newton) method for the fixed-centre MVCE on its m weights,
batched.

Problem (see `dmlbench.solvers.mvce`), in the span coordinates C (m x r) of the neighbours:

    min_w  -log det A(w),   A(w) = C^T diag(w) C + eps I_r,   1^T w = 1,   w >= 0.

The gradient of log det A is delta_j = c_j^T A^{-1} c_j and its Hessian is -(K o K) with
K = C A^{-1} C^T (o: elementwise product). The KKT system with slacks s = y 1 - delta >= 0
(the dual: every point inside the ellipsoid {z: z^T A^{-1} z <= y}) and w_j s_j = 0 is solved by
Mehrotra's predictor-corrector method (Nocedal & Wright, Numerical Optimization, 2nd ed., Alg.
14.3, applied to this convex program): one m x m system (K o K + diag(s / w)) per step, solved
twice (predictor, corrector), one step length for w, s and y (fraction 0.99 of the step to the
boundary), w renormalised to the simplex after each step. Iterates stay interior; the stopping
rule is the same duality gap as Titterington's (max_j delta_j - sum_j w_j delta_j, a
certificate), evaluated at every iterate. A step costs O(m r^2 + m^2 r + m^3); each problem of a
batch is computed exactly as if alone (problems that finish leave the batch).

Alternatives: Frank-Wolfe steps with away steps (Wolfe-Atwood / Todd-Yildirim) are not
rank-one updates here (eps I enters every elementary matrix), so each costs O(r^3 + m r^2); they
need tens to hundreds of iterations and are measured slower in `benchmarks/mvce_speed.py`. In
exploratory runs (not kept): a warm start from the solution of a smaller neighbourhood saved
under one step of nine; one solve per step (Mehrotra's centring without the second-order
corrector) needed about three more steps; dropping points the gap certifies to lie inside the
optimal ellipsoid saved at most 10 % and made a problem's result depend on its batch.
"""

from __future__ import annotations

import numpy as np

#: step fraction to the boundary, relative ridge on K o K (duplicated neighbours make it singular)
STEP, RIDGE = 0.99, 1e-12


def _kernel(C: np.ndarray, w: np.ndarray, eps: np.ndarray):
    """K = C A^{-1} C^T (b, m, m) and delta = diag K, by one LU solve per problem."""
    Ct = np.swapaxes(C, 1, 2)
    A = (Ct * w[:, None, :]) @ C + eps[:, None, None] * np.eye(C.shape[2])
    K = C @ np.linalg.solve(A, Ct)
    return K, np.einsum("bii->bi", K)


def _max_step(x: np.ndarray, dx: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(dx < 0, -x / dx, np.inf)
    return np.minimum(1.0, ratio.min(axis=1))


def interior_point(C: np.ndarray, eps: np.ndarray, tol: float,
                   max_iter: int) -> tuple[np.ndarray, np.ndarray]:
    """Weights (b, m) and Newton step counts (b,) for the problems C (b, m, r); problems stop
    independently once their gap is <= tol, or after `max_iter` steps."""
    b, m, _ = C.shape
    w_out = np.full((b, m), 1.0 / m)
    n_iter = np.zeros(b, dtype=np.int64)
    active = np.arange(b)
    Ca, ea, w = C, eps, w_out.copy()
    K, delta = _kernel(Ca, w, ea)
    y = delta.max(axis=1) + 1.0
    s = y[:, None] - delta
    for step in range(int(max_iter) + 1):
        done = delta.max(axis=1) - np.einsum("bm,bm->b", w, delta) <= tol
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
        w, s, y = _newton_step(K, delta, w, s, y)
        K, delta = _kernel(Ca, w, ea)
    return w_out, n_iter


def _newton_step(K, delta, w, s, y):
    """One predictor-corrector step; returns the new (w, s, y) with w renormalised."""
    m = w.shape[1]
    H = K * K
    ridge = RIDGE * np.einsum("bii->b", H) / m
    M = H + (s / w + ridge[:, None])[:, :, None] * np.eye(m)
    mu = np.einsum("bm,bm->b", w, s) / m
    base = delta - y[:, None]
    ones = np.ones_like(w)

    def direction(extra):
        X = np.linalg.solve(M, np.stack([base + extra, ones], axis=2))
        a, e = X[..., 0], X[..., 1]
        dy = a.sum(axis=1) / e.sum(axis=1)
        return a - dy[:, None] * e, dy

    dw, dy = direction(0.0)                                       # affine scaling (sigma = 0)
    ds = -s - s * dw / w
    a_p, a_d = _max_step(w, dw), _max_step(s, ds)
    mu_aff = np.einsum("bm,bm->b", w + a_p[:, None] * dw, s + a_d[:, None] * ds) / m
    target = ((mu_aff / mu) ** 3 * mu)[:, None] - dw * ds         # Mehrotra's centring + corrector
    dw, dy = direction(target / w)
    ds = (target - w * s - s * dw) / w
    a = STEP * np.minimum(_max_step(w, dw), _max_step(s, ds))
    w = w + a[:, None] * dw
    return w / w.sum(axis=1, keepdims=True), s + a[:, None] * ds, y + a * dy

"""A primal-dual interior-point (Newton) method for the fixed-centre MVCE on its m weights,
batched, with safe elimination of points that cannot support the optimum.

Problem (see `dmlbench.solvers.mvce`), in the span coordinates C (m x r) of the neighbours:

    min_w  -log det A(w),   A(w) = C^T diag(w) C + eps I_r,   1^T w = 1,   w >= 0.

The gradient of log det A is delta_j = c_j^T A^{-1} c_j and its Hessian is -(K o K) with
K = C A^{-1} C^T (o: elementwise product). The KKT system with slacks s = y 1 - delta >= 0
(the dual: every point inside the ellipsoid {z: z^T A^{-1} z <= y}) and w_j s_j = 0 is solved by
Mehrotra's predictor-corrector method (Nocedal & Wright, Numerical Optimization, 2nd ed., Alg.
16.4 / 14.3 applied to this convex program): one m x m system (K o K + diag(s / w)) per step,
solved twice (predictor, corrector), one step length for w, s and y (fraction 0.99 of the step to
the boundary). Iterates stay interior; the stopping rule is the same duality gap as
Titterington's (max_j delta_j - sum_j w_j delta_j, a certificate), evaluated at every iterate.

Safe elimination (our derivation, not in the papers): if log det A(w) is within g of the
optimum A*, every eigenvalue x of A*^{-1/2} A A*^{-1/2} satisfies x - 1 - log x <= g, so
x <= x_hi = 1 + g + sqrt(g^2 + 2 g); hence delta*_j <= x_hi delta_j(w) and the optimal
sum_j w*_j delta*_j = r - eps tr A*^{-1} >= r - eps x_hi tr A^{-1}(w). A point with
x_hi delta_j(w) below that bound is strictly inside the optimal ellipsoid and has weight 0 at
every optimum; such points are dropped from the Newton systems once they are a quarter of them
(the costs are O(m^2 r + m^3) per step, so the last steps run on about the support). The final
certificate is evaluated on all m points by the caller.
"""

from __future__ import annotations

import numpy as np

#: step fraction to the boundary, relative ridge on K o K (duplicated neighbours make it singular)
STEP, RIDGE = 0.99, 1e-12
#: drop eliminated points once the largest kept count of the batch falls below this share of m
SHRINK = 0.75


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


def _bound(gap: np.ndarray) -> np.ndarray:
    """x_hi with x - 1 - log x = gap at most (from x - 1 - log x >= t^2 / (2 (1 + t)), x = 1 + t)."""
    return 1.0 + gap + np.sqrt(gap * gap + 2.0 * gap)


def interior_point(C: np.ndarray, eps: np.ndarray, tol: float, max_iter: int,
                   eliminate: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Weights (b, m) and Newton step counts (b,) for the problems C (b, m, r); problems stop
    independently once their gap is <= tol."""
    b, m, r = C.shape
    w_out = np.full((b, m), 1.0 / m)
    n_iter = np.zeros(b, dtype=np.int64)
    active = np.arange(b)
    cols = np.broadcast_to(np.arange(m), (b, m)).copy()         # column of C, -1 for padding
    Ca, ea, w = C, eps, w_out.copy()
    K, delta = _kernel(Ca, w, ea)
    y = delta.max(axis=1) + 1.0
    s = y[:, None] - delta
    for _ in range(int(max_iter) + 1):
        mean = np.einsum("bm,bm->b", w, delta)
        gap = delta.max(axis=1) - mean
        done = gap <= tol
        if done.any() or _ == max_iter:
            finished = done if _ < max_iter else np.ones_like(done)
            _scatter(w_out, active[finished], cols[finished], w[finished])
            keep = ~finished
            if not keep.any():
                break
            active, cols, Ca, ea = active[keep], cols[keep], Ca[keep], ea[keep]
            w, s, y, K, delta = w[keep], s[keep], y[keep], K[keep], delta[keep]
            mean, gap = mean[keep], gap[keep]
        if eliminate:
            x_hi = _bound(gap)                          # eps tr A^{-1} = r - sum_j w_j delta_j
            low = (r - x_hi * (r - mean)) / x_hi
            kept = (x_hi[:, None] * delta >= low[:, None]) & (cols >= 0)
            width = int(kept.sum(axis=1).max())
            if width < SHRINK * Ca.shape[1]:
                Ca, cols, w, s, K, delta = _shrink(kept, width, Ca, cols, w, s, y, K, delta)
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


def _shrink(kept, width, C, cols, w, s, y, K, delta):
    """Keep the `kept` points of every problem in the first `width` columns; pad with zero
    points (delta 0, slack y, weight mu / y: inert) where a problem keeps fewer."""
    order = np.argsort(~kept, axis=1, kind="stable")[:, :width]
    valid = np.take_along_axis(kept, order, axis=1)
    mu = np.einsum("bm,bm->b", w, s) / w.shape[1]
    C = np.take_along_axis(C, order[:, :, None], axis=1) * valid[:, :, None]
    cols = np.where(valid, np.take_along_axis(cols, order, axis=1), -1)
    s = np.where(valid, np.take_along_axis(s, order, axis=1), y[:, None])
    w = np.where(valid, np.take_along_axis(w, order, axis=1), (mu / y)[:, None])
    delta = np.where(valid, np.take_along_axis(delta, order, axis=1), 0.0)
    K = np.take_along_axis(np.take_along_axis(K, order[:, :, None], axis=1), order[:, None, :],
                           axis=2) * (valid[:, :, None] & valid[:, None, :])
    return C, cols, w / w.sum(axis=1, keepdims=True), s, K, delta


def _scatter(out: np.ndarray, rows: np.ndarray, cols: np.ndarray, w: np.ndarray) -> None:
    """out[rows] = the weights w on their columns (padding dropped, eliminated points 0)."""
    full = np.zeros((rows.size, out.shape[1]))
    i, j = np.nonzero(cols >= 0)
    full[i, cols[i, j]] = w[i, j]
    out[rows] = full / full.sum(axis=1, keepdims=True)

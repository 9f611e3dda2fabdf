"""An MVCE reference independent of `dmlbench.solvers.mvce`: CVXPY on the dense d x d problem
(no span reduction) as a start, its support polished by solving the KKT equations with scipy,
and the KKT conditions verified, all with dense linear algebra written here."""

import cvxpy as cp
import numpy as np
from scipy.optimize import root


def dense_matrix(Z, w, eps):
    return Z.T @ (Z * w[:, None]) + eps * np.eye(Z.shape[1])


def dense_deltas(Z, w, eps):
    return np.einsum("md,de,me->m", Z, np.linalg.inv(dense_matrix(Z, w, eps)), Z)


def weights(Z, eps, kkt_tol=1e-9):
    """Optimal weights of max log det(Z^T W Z + eps I) over the simplex, to about 1e-12: the
    support guessed from CVXPY, then the KKT equations (delta_j = mu on the support, weights
    summing to one) solved on it, dropping points whose weight turns negative and adding points
    outside the ellipsoid until the KKT conditions hold."""
    m, d = Z.shape
    current = np.full(m, 1.0 / m)
    w = cp.Variable(m, nonneg=True)
    # posed as P^T A(w) P, P = A(1/m)^{-1/2}: the same maximiser, better conditioned
    lam, U = np.linalg.eigh(dense_matrix(Z, current, eps))
    P = U / np.sqrt(lam)
    A = (Z @ P).T @ cp.diag(w) @ (Z @ P) + eps * P.T @ P
    problem = cp.Problem(cp.Maximize(cp.log_det((A + A.T) / 2)), [cp.sum(w) == 1])
    # a start only (the KKT solve below makes it exact); with m <= d the uniform start is close
    for solver, options in ((("CLARABEL", {}), ("SCS", {"max_iters": 3000})) if m > d else ()):
        try:
            problem.solve(solver=solver, **options)
        except cp.error.SolverError:
            continue
        current = np.maximum(np.asarray(w.value, dtype=float), 0.0)
        current /= current.sum()
        break
    support = current > 1e-5 * current.max()
    for _ in range(2 * m):
        idx = np.flatnonzero(support)

        def kkt(x):
            full = np.zeros(m)
            full[idx] = x[:-1]
            return np.append(dense_deltas(Z, full, eps)[idx] - x[-1], x[:-1].sum() - 1.0)

        start = np.maximum(current[idx], 1e-3 / idx.size)
        start /= start.sum()
        full = np.zeros(m)
        full[idx] = start
        sol = root(kkt, np.append(start, start @ dense_deltas(Z, full, eps)[idx]), method="hybr",
                   tol=1e-13)
        out = np.zeros(m)
        out[idx] = sol.x[:-1]
        if out.min() < 0:
            support[int(np.argmin(out))] = False
            continue
        delta = dense_deltas(Z, out, eps)
        mu = out @ delta
        if delta.max() > mu + kkt_tol:
            support[int(np.argmax(delta))] = True
            current = out
            continue
        assert np.abs(kkt(sol.x)).max() <= 1e-10 * mu, "KKT equations not solved"
        return out
    raise AssertionError("no support satisfies the KKT conditions")


def logdet(Z, w, eps):
    return np.linalg.slogdet(dense_matrix(Z, w, eps))[1]

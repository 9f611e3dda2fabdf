"""Minimum-volume covering ellipsoid (MVCE) with a fixed centre: one entry point `solve` over two
solvers, an interior-point Newton method (`newton`, `dmlbench.solvers.mvce_newton`) and
Titterington's algorithm (`titterington`), both batched and in the span of the points, and a
CVXPY reference.

Problem (Abou-Moustafa 2017, eq. 4 with the centre fixed at the query, Alg. 2): the rows z_j of
Z are the m neighbours minus the centre, and

    max_w  log det A(w),   A(w) = sum_j w_j z_j z_j^T + eps I,   w in the simplex.

delta_j = z_j^T A^{-1} z_j is the gradient; at the optimum delta_j = sum_i w_i delta_i wherever
w_j > 0 and delta_j <= sum_i w_i delta_i elsewhere (KKT). For any w in the simplex,
`gap` = max_j delta_j - sum_j w_j delta_j bounds the log-det shortfall from above (concavity),
so it is a certificate and the stopping rule.

Solvers: Titterington's multiplicative update (Alg. 2) converges linearly and, when m > d (the
m grid of RMVEM, d+1..3d), needs hundreds to thousands of iterations to a gap of 1e-7; the
Newton method needs about 8 steps whatever m and d, so `solve(solver="auto")` uses it when
m > d and Titterington (which certifies the near-uniform optimum in one or two iterations)
when m <= d. `benchmarks/mvce_speed.py` measures both against CVXPY.

Deviations of Titterington's algorithm from Alg. 2 as printed (docs/architecture.md, section 6), both
measured in the tests and the report: (1) the update is w_j <- w_j delta_j / sum_i w_i delta_i, not w_j delta_j / d; with
eps > 0, sum_i w_i delta_i = r - eps tr(A_r^{-1}) < d (r = rank of Z), so the printed update
leaves the simplex and, when m < d, converges to a shrunken ellipsoid (`update="printed"`
keeps it available, stopping on ||w(t) - w(t+1)|| <= tol as the paper does). (2) The stopping
rule is the duality gap, not the step norm.

Everything is computed in the span of the neighbours. With Z^T = Q R (thin QR, Q d x r,
r = min(m, d)) and coordinates C = R^T (m x r), A = Q A_r Q^T + eps (I - Q Q^T) with
A_r = C^T W C + eps I_r, so delta_j = c_j^T A_r^{-1} c_j and an iteration costs O(m r^2 + r^3)
instead of O(d^3); A and A^{-1} are applied without forming d x d matrices (this is the
Woodbury form A^{-1} = (I - U^T (eps I + U U^T)^{-1} U) / eps, U = W^{1/2} Z, written in an
orthonormal basis, which avoids its cancellation for small eps). When m >= d, Q = I and C = Z.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import mvce_newton

UPDATES = ("normalised", "printed")
SOLVERS = ("auto", "newton", "titterington")
#: Titterington iterations `solve(solver="auto")` tries first when m <= d
AUTO_TITTERINGTON = 10
#: `newton` runs the compiled implementation (`mvce_compiled`) up to this m, the batched numpy
#: one above: `benchmarks/mvce_speed.py`, section 3, measures the compiled one 1.3x-1.4x faster
#: at m = 240-320 and 1.1x at m = 400, so larger m, where LAPACK's blocked factorisations
#: gain, keep numpy's
COMPILED_UP_TO_M = 400


@dataclass
class MVCEResult:
    """Solution of one problem (arrays without the batch axis) or of a batch (leading axis b).

    `weights` (b, m), `logdet` (b,) = log det A at `weights`, `gap` (b,) = max_j delta_j -
    sum_j w_j delta_j, `n_iter` (b,), `converged` (b,), `eps` (b,). `coords` (b, m, r) and
    `basis` (b, d, r) or None (identity) hold Z = coords @ basis^T. `solver` names the
    algorithm that produced the weights; `delta` (b, m) holds delta_j at `weights`.
    """

    weights: np.ndarray
    logdet: np.ndarray
    gap: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray
    eps: np.ndarray
    coords: np.ndarray
    basis: np.ndarray | None
    n_features: int
    batched: bool = True
    solver: str = "titterington"
    delta: np.ndarray | None = None

    def _out(self, value):
        return value if self.batched else value[0]

    def _w(self) -> np.ndarray:
        return self.weights if self.batched else self.weights[None]

    def span_matrix(self) -> np.ndarray:
        """A_r = C^T W C + eps I_r (b, r, r): A restricted to the span of the neighbours."""
        return _span_matrix(self.coords, self._w(), _batch(self.eps, self.coords.shape[0]))

    def matrix(self) -> np.ndarray:
        """A as a dense d x d matrix (tests and small d only)."""
        eps = _batch(self.eps, self.coords.shape[0])
        Z = self.neighbours()
        A = np.swapaxes(Z, 1, 2) @ (Z * self._w()[:, :, None])
        return self._out(A + eps[:, None, None] * np.eye(self.n_features))

    def neighbours(self) -> np.ndarray:
        """Z (b, m, d) rebuilt from the span coordinates."""
        C = self.coords
        return C if self.basis is None else C @ np.swapaxes(self.basis, 1, 2)

    def eigh(self) -> tuple[np.ndarray, np.ndarray]:
        """The r leading eigenpairs of A: eigenvalues (b, r), descending, and orthonormal
        eigenvectors (b, d, r). The other d - r eigenvalues all equal eps."""
        lam, U = np.linalg.eigh(self.span_matrix())
        lam, U = lam[:, ::-1], U[:, :, ::-1]
        V = U if self.basis is None else self.basis @ U
        return self._out(lam), self._out(V)

    def quad(self, V: np.ndarray, inverse: bool = False) -> np.ndarray:
        """v^T A v (or v^T A^{-1} v) for each row v of V ((b, n, d), or (n, d) for one problem),
        in O(n d r) without forming A."""
        V = np.asarray(V, dtype=float)
        V = V if self.batched else V[None]
        b = self.coords.shape[0]
        eps = _batch(self.eps, b)[:, None]
        P = V if self.basis is None else V @ self.basis           # (b, n, r)
        if inverse:
            rest = 0.0 if self.basis is None else (
                np.einsum("bnd,bnd->bn", V, V) - np.einsum("bnr,bnr->bn", P, P))
            S, _ = _whiten(self.span_matrix(), np.swapaxes(P, 1, 2))
            out = np.einsum("brn,brn->bn", S, S) + rest / eps
        else:
            CP = self.coords @ np.swapaxes(P, 1, 2)             # (b, m, n)
            out = np.einsum("bm,bmn->bn", self._w(), CP ** 2) + eps * np.einsum("bnd,bnd->bn", V, V)
        return self._out(out)

    def solve(self, V: np.ndarray) -> np.ndarray:
        """A^{-1} v for each row v of V ((b, n, d) or (n, d)), without forming A^{-1}."""
        V = np.asarray(V, dtype=float)
        V = V if self.batched else V[None]
        eps = _batch(self.eps, self.coords.shape[0])[:, None, None]
        Ar = self.span_matrix()
        if self.basis is None:
            out = np.swapaxes(np.linalg.solve(Ar, np.swapaxes(V, 1, 2)), 1, 2)
        else:
            P = V @ self.basis
            inner = np.swapaxes(np.linalg.solve(Ar, np.swapaxes(P, 1, 2)), 1, 2)
            out = inner @ np.swapaxes(self.basis, 1, 2) + (V - P @ np.swapaxes(self.basis, 1, 2)) / eps
        return self._out(out)


def _batch(eps, b: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(eps, dtype=float), (b,))


def _span_matrix(C: np.ndarray, w: np.ndarray, eps: np.ndarray) -> np.ndarray:
    r = C.shape[2]
    return np.swapaxes(C, 1, 2) @ (C * w[:, :, None]) + eps[:, None, None] * np.eye(r)


def _check(Z, eps) -> tuple[np.ndarray, np.ndarray, bool]:
    Z = np.asarray(Z, dtype=float)
    batched = Z.ndim == 3
    if Z.ndim not in (2, 3) or Z.shape[-2] < 1 or Z.shape[-1] < 1:
        raise ValueError(f"Z must have shape (m, d) or (b, m, d) with m, d >= 1, got {Z.shape}")
    if not np.all(np.isfinite(Z)):
        raise ValueError("Z contains NaN or infinite values")
    Z = Z if batched else Z[None]
    eps = np.asarray(eps, dtype=float)
    if eps.ndim > 1 or (eps.ndim == 1 and eps.shape[0] != Z.shape[0]):
        raise ValueError(f"eps must be a number or one per problem ({Z.shape[0]}), got shape "
                         f"{eps.shape}")
    if not np.all(np.isfinite(eps)) or np.any(eps <= 0):
        raise ValueError(f"eps must be > 0 (it keeps A positive definite), got {eps}")
    return Z, np.array(np.broadcast_to(eps, (Z.shape[0],))), batched


def span_coordinates(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """(C, Q) with Z = C Q^T, Q (b, d, r) orthonormal, r = min(m, d); Q is None when m >= d."""
    m, d = Z.shape[1:]
    if m >= d:
        return Z, None
    Q, R = np.linalg.qr(np.swapaxes(Z, 1, 2))
    return np.swapaxes(R, 1, 2), Q


def _whiten(Ar: np.ndarray, P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(L^{-1} P, log det Ar) with Ar = L L^T (Cholesky), batched; |L^{-1} p|^2 = p^T Ar^{-1} p.

    The triangular inverse is formed by batched LAPACK (numpy's batched inverse is much faster
    here than scipy's batched triangular solve, which loops in Python)."""
    L = np.linalg.cholesky(Ar)
    logdet = 2.0 * np.log(np.diagonal(L, axis1=1, axis2=2)).sum(axis=1)
    return np.linalg.inv(L) @ P, logdet


def _deltas(C: np.ndarray, w: np.ndarray, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """delta_j = c_j^T A_r^{-1} c_j (b, m) and log det A_r (b,)."""
    S, logdet = _whiten(_span_matrix(C, w, eps), np.swapaxes(C, 1, 2))
    return np.einsum("brm,brm->bm", S, S), logdet


def _result(C, Q, d, w, eps, n_iter, converged, batched, solver="titterington",
            tol=None, evaluated=None) -> MVCEResult:
    """The result at weights w, with its log det and gap (the certificate) from `evaluated`,
    (delta, log det A_r) at w computed by the solver from its Cholesky factor of A_r, or
    evaluated here; `converged=None` means gap <= tol."""
    delta, logdet_r = _deltas(C, w, eps) if evaluated is None else evaluated
    r = C.shape[2]
    logdet = logdet_r + (d - r) * np.log(eps)
    gap = delta.max(axis=1) - np.einsum("bm,bm->b", w, delta)
    if converged is None:
        converged = gap <= tol
    res = MVCEResult(w, logdet, gap, np.asarray(n_iter), np.asarray(converged), eps, C, Q, d,
                     True, solver, delta)
    return res if batched else _unbatched(res)


def _batched(res: MVCEResult) -> MVCEResult:
    """The result of one problem as a batch of one."""
    res.batched = True
    for name in ("weights", "logdet", "gap", "n_iter", "converged", "eps", "delta"):
        setattr(res, name, np.asarray(getattr(res, name))[None])
    return res


def _unbatched(res: MVCEResult) -> MVCEResult:
    """The result of a batch of one as the result of one problem."""
    res.batched = False
    for name in ("weights", "logdet", "gap", "n_iter", "converged", "eps", "delta"):
        setattr(res, name, getattr(res, name)[0])
    return res


def _check_stopping(tol, max_iter) -> None:
    if not tol > 0:
        raise ValueError(f"tol must be > 0, got {tol}")
    if int(max_iter) < 0:
        raise ValueError(f"max_iter must be >= 0, got {max_iter}")


def titterington(Z, eps=1e-4, tol: float = 1e-7, max_iter: int = 10000,
                 update: str = "normalised") -> MVCEResult:
    """Solve the fixed-centre MVCE problem for Z (m, d) or a batch Z (b, m, d).

    Starts at w = 1/m (the regularised sample covariance, Alg. 2 step 2) and iterates the
    multiplicative update until `gap` <= `tol` (so log det is within `tol` of the optimum) or
    `max_iter`. `eps` is a number or one per problem. `update="printed"` is Alg. 2 step 8 as
    printed (w_j delta_j / d, stopping on ||w(t) - w(t+1)||_2 <= tol), kept to show why it is not
    used: its weights leave the simplex, so its `gap` is no certificate.

    A neighbourhood whose points all equal the centre (Z = 0) has delta = 0: its weights stay
    uniform, A = eps I, gap 0. Zero rows (a neighbour equal to the centre) get weight -> 0.
    Problems of a batch stop independently; only the unfinished ones are iterated.
    """
    if update not in UPDATES:
        raise ValueError(f"update must be one of {UPDATES}, got {update!r}")
    _check_stopping(tol, max_iter)
    Z, eps, batched = _check(Z, eps)
    b, m, d = Z.shape
    C, Q = span_coordinates(Z)
    w = np.full((b, m), 1.0 / m)
    n_iter = np.zeros(b, dtype=np.int64)
    converged = np.zeros(b, dtype=bool)
    active = np.arange(b)
    # the loop works on compact copies of the unfinished problems, rebuilt only when some finish
    Ct, wa = np.swapaxes(C, 1, 2), w.copy()
    Ca, Cta, ridge = C, Ct, eps[:, None, None] * np.eye(C.shape[2])
    for _ in range(int(max_iter)):
        L = np.linalg.cholesky((Cta * wa[:, None, :]) @ Ca + ridge)
        S = np.linalg.inv(L) @ Cta
        delta = np.einsum("brm,brm->bm", S, S)
        mean = np.einsum("bm,bm->b", wa, delta)
        if update == "normalised":
            done = delta.max(axis=1) - mean <= tol
            new = wa * delta / np.where(done, 1.0, mean)[:, None]
        else:
            new = wa * delta / d
            done = np.linalg.norm(new - wa, axis=1) <= tol
        if update == "printed":  # the printed rule stops after taking its last step
            wa = new
            n_iter[active] += 1
        else:
            wa = np.where(done[:, None], wa, new)
            n_iter[active[~done]] += 1
        if done.any():
            w[active] = wa
            converged[active[done]] = True
            keep = ~done
            active, wa = active[keep], wa[keep]
            if active.size == 0:
                break
            Ca, Cta, ridge = Ca[keep], Cta[keep], ridge[keep]
    w[active] = wa
    return _result(C, Q, d, w, eps, n_iter, converged, batched)


def newton(Z, eps=1e-4, tol: float = 1e-7, max_iter: int = 100,
           support: np.ndarray | None = None) -> MVCEResult:
    """Solve the fixed-centre MVCE problem for Z (m, d) or a batch Z (b, m, d) by the
    primal-dual interior-point method of `dmlbench.solvers.mvce_newton` (Newton steps on the m
    weights, Mehrotra predictor-corrector), until `gap` <= `tol` or `max_iter` Newton steps.
    About 5-10 steps to a gap of 1e-9 from the uniform start whatever m and d (superlinear
    convergence; at most 13 on the UCI sets' neighbourhoods), each costing
    O(m r^2 + m^2 r + m^3), r = min(m, d); `n_iter` counts them. Compiled, one problem at a
    time, when m <= `COMPILED_UP_TO_M` (problems it cannot factorise go to the batched path,
    which falls back to LU), batched numpy above.

    `support` (m,) or (b, m) bool, optional: the points expected to carry the optimal weights
    (`nested_support`: those of a smaller nested neighbourhood). The compiled implementation
    then solves each problem on them first, adds the points outside the ellipsoid that the
    certificate needs, and solves again until the gap over all m points is <= tol; the other
    points get weight 0. The compiled implementation never solves on the rows z_j = 0
    (`without_zero_rows`). The numpy implementation solves on all points."""
    _check_stopping(tol, max_iter)
    Z, eps, batched = _check(Z, eps)
    b, m, d = Z.shape
    support = without_zero_rows(Z, _check_support(support, b, m))
    C, Q = span_coordinates(Z)
    if m > COMPILED_UP_TO_M:
        w, n_iter = mvce_newton.interior_point(C, eps, tol, max_iter)
        evaluated = None
    else:
        # imported here: numba adds about 50 MB to a process, which only Newton solves need
        from . import mvce_compiled

        w, n_iter, status, delta, logdet_r = mvce_compiled.interior_point(
            np.ascontiguousarray(C), eps, float(tol), int(max_iter), support)
        rest = np.flatnonzero(status != mvce_compiled.SOLVED)
        if rest.size:
            w[rest], n_iter[rest] = mvce_newton.interior_point(C[rest], eps[rest], tol, max_iter)
            delta[rest], logdet_r[rest] = _deltas(C[rest], w[rest], eps[rest])
        evaluated = delta, logdet_r
    return _result(C, Q, d, w, eps, n_iter, None, batched, "newton", tol, evaluated)


def _check_support(support, b: int, m: int) -> np.ndarray:
    """`support` as a (b, m) bool array (all points when None); ValueError when a problem has
    none marked."""
    if support is None:
        return np.ones((b, m), dtype=bool)
    support = np.asarray(support)
    if support.dtype != bool or support.shape not in ((m,), (b, m)):
        raise ValueError(f"support must be a bool array of shape ({m},) or ({b}, {m}), got "
                         f"{support.dtype} {support.shape}")
    # a writable copy: numba compiles (and caches) read-only arrays as another type
    support = np.array(np.broadcast_to(support, (b, m)), order="C")
    if not support.any(axis=1).all():
        raise ValueError("support marks no point for problem "
                         f"{int(np.flatnonzero(~support.any(axis=1))[0])}: mark at least one "
                         "point per problem, or pass support=None to solve on every point")
    return support


def without_zero_rows(Z: np.ndarray, support: np.ndarray) -> np.ndarray:
    """The hint `support` (b, m) without the rows z_j = 0 (neighbours equal to the centre).
    Their delta_j is 0, below sum_i w_i delta_i > 0, so the optimum gives them weight 0 and the
    certificate never adds them back; solved on, they could make the interior-point iteration
    cycle (keel-wisconsin after min-max scaling: 20 copies of the query and one other point,
    100 steps to a gap of 0.07). A problem whose hinted rows are all zero is hinted its other
    rows; one whose rows are all zero keeps its hint."""
    nonzero = np.any(Z != 0, axis=2)
    hint = support & nonzero
    empty = ~hint.any(axis=1)
    hint[empty] = nonzero[empty]
    empty = ~hint.any(axis=1)
    hint[empty] = support[empty]
    return hint


#: `nested_support` keeps the points whose delta is within this fraction of sum_j w_j delta_j
#: (the support, where delta_j is at its maximum, and the points near the ellipsoid's boundary)
NEAR_BOUNDARY = 0.1


def nested_support(res: MVCEResult, m_next: int) -> np.ndarray:
    """The `support` hint (b, m_next) for the neighbourhoods of size m_next whose first m points
    are those `res` (batched) solved: the points within NEAR_BOUNDARY of its ellipsoid's
    boundary, which hold the support, and the points added (the farthest neighbours)."""
    b, m = res.weights.shape
    hint = np.ones((b, m_next), dtype=bool)
    mean = np.einsum("bm,bm->b", res.weights, res.delta)
    hint[:, :m] = res.delta >= (1.0 - NEAR_BOUNDARY) * mean[:, None]
    return hint


def solve(Z, eps=1e-4, tol: float = 1e-7, max_iter: int | None = None,
          solver: str = "auto", support: np.ndarray | None = None) -> MVCEResult:
    """The fixed-centre MVCE of Z (m, d) or of a batch Z (b, m, d), to duality gap `tol`.

    `solver`: "newton" (interior point, `newton`), "titterington" (Alg. 2 of Abou-Moustafa 2017,
    normalised, `titterington`), or "auto": Newton when m > d, where Titterington's linear
    convergence needs thousands of iterations; when m <= d, where the uniform start is within
    about eps of the optimum, at most `AUTO_TITTERINGTON` Titterington iterations (cheaper than
    one Newton step, and enough unless the neighbours are nearly linearly dependent), then Newton
    for the problems they leave unconverged (measured in `benchmarks/mvce_speed.py`). `max_iter`
    defaults to the chosen solver's own (100 Newton steps, 10000 Titterington iterations). The
    result's `solver` says which ran ("titterington+newton": some problems needed both).
    `support` is the Newton method's hint (`newton`); Titterington's iterations use every point.
    """
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
    if solver == "newton":
        return newton(Z, eps, tol=tol, max_iter=100 if max_iter is None else max_iter,
                      support=support)
    if solver == "titterington":
        return titterington(Z, eps, tol=tol, max_iter=10000 if max_iter is None else max_iter)
    shape = np.shape(Z)
    if len(shape) in (2, 3) and shape[-2] > shape[-1]:
        return newton(Z, eps, tol=tol, max_iter=100 if max_iter is None else max_iter,
                      support=support)
    first = titterington(Z, eps, tol=tol, max_iter=AUTO_TITTERINGTON)
    batched = first.batched
    first = first if batched else _batched(first)
    rest = np.flatnonzero(~first.converged)
    if rest.size == 0:
        return first if batched else _unbatched(first)
    second = newton(first.neighbours()[rest], first.eps[rest], tol=tol,
                    max_iter=100 if max_iter is None else max_iter)
    w, n_iter = first.weights.copy(), first.n_iter.copy()
    w[rest], n_iter[rest] = second.weights, n_iter[rest] + second.n_iter
    return _result(first.coords, first.basis, first.n_features, w, first.eps, n_iter, None,
                   batched, "titterington+newton", tol)


def regularised_covariance(Z, eps=1e-4, certify: bool = True) -> MVCEResult:
    """Uniform weights w = 1/m: A = (1/m) Z^T Z + eps I, the regularised local covariance of
    RMLE (Abou-Moustafa 2017, eq. 6; Alg. 2 at t = 0). `gap` says how far it is from the MVCE;
    `certify=False` leaves `logdet`, `gap` and `delta` NaN, for callers that need only A (it
    saves a Cholesky factorisation and a triangular inverse per problem)."""
    Z, eps, batched = _check(Z, eps)
    b, m, d = Z.shape
    C, Q = span_coordinates(Z)
    skipped = None if certify else (np.full((b, m), np.nan), np.full(b, np.nan))
    return _result(C, Q, d, np.full((b, m), 1.0 / m), eps, np.zeros(b, dtype=np.int64),
                   np.ones(b, dtype=bool), batched, "uniform", evaluated=skipped)


def at_weights(Z, eps, weights, tol: float) -> MVCEResult:
    """The result at `weights` (m,) or (b, m) solved earlier for the same Z and eps (e.g. a
    model selection's solutions, reused): log det and gap evaluated here, `n_iter` 0,
    `converged` gap <= tol, `solver` "given"."""
    Z, eps, batched = _check(Z, eps)
    b, m, d = Z.shape
    w = np.asarray(weights, dtype=float)
    w = w if batched else w[None]
    if w.shape != (b, m):
        expected = (b, m) if batched else (m,)
        raise ValueError(f"weights must have shape {expected} (one per point of Z), got "
                         f"{np.shape(weights)}: pass the weights solved for this Z")
    if not (np.all(np.isfinite(w)) and np.all(w >= 0)):
        raise ValueError("weights must be finite and >= 0 (a solution's weights on the simplex); "
                         "pass the weights solved for this Z")
    C, Q = span_coordinates(Z)
    return _result(C, Q, d, w, eps, np.zeros(b, dtype=np.int64), None, batched, "given", tol)


#: the CVXPY solvers `cvxpy_reference` tries, in order, on each problem
REFERENCE_SOLVERS = ("CLARABEL", "SCS")


def cvxpy_reference(Z, eps=1e-4, solvers=REFERENCE_SOLVERS, **solver_options) -> MVCEResult:
    """The same problem solved by CVXPY (`cp.log_det` of an affine expression in w), one problem
    at a time, reduced to the span of Z (an r x r log-det, r = min(m, d)) so that large d is
    tractable; log det A = log det A_r + (d - r) log eps. `n_iter` is the solver's iteration
    count; `solver` names the CVXPY solvers that produced the weights ("cvxpy:CLARABEL").

    Conditioning: raw features on very different scales give A eigenvalues from eps to 1e4 and
    more, where Clarabel fails or stops far from the optimum (segment, wdbc, ionosphere). A
    common scale s (s Z, s^2 eps) leaves the condition number unchanged, so the problem is posed
    in the congruent form P^T A(w) P with P = A(1/m)^{-1/2} (the uniform weights' matrix, not our
    solution: the reference stays independent), which is affine in w, has the same maximiser and
    log det shifted by log det A(1/m); measured, it solves every such problem with log det
    10-1000 times closer to the optimum. Each problem is tried with the solvers of `solvers` in
    turn (a failure or a non-optimal status moves to the next); `ValueError` if none solves it.
    The solver's weights are evaluated exactly (log det, gap) after removing its round-off
    below zero and renormalising."""
    import cvxpy as cp  # here, not at the top: seconds to import, for the reference only

    Z, eps, batched = _check(Z, eps)
    b, m, d = Z.shape
    C, Q = span_coordinates(Z)
    r = C.shape[2]
    w_out = np.empty((b, m))
    n_iter = np.zeros(b, dtype=np.int64)
    ok = np.zeros(b, dtype=bool)
    used = []
    for i in range(b):
        lam, U = np.linalg.eigh(C[i].T @ C[i] / m + eps[i] * np.eye(r))
        P = U / np.sqrt(lam)
        w = cp.Variable(m, nonneg=True)
        A = (C[i] @ P).T @ cp.diag(w) @ (C[i] @ P) + eps[i] * (P.T @ P)
        problem = cp.Problem(cp.Maximize(cp.log_det((A + A.T) / 2)), [cp.sum(w) == 1])
        errors = []
        for solver in solvers:
            try:
                problem.solve(solver=solver, **solver_options)
            except cp.error.SolverError as exc:
                errors.append(f"{solver}: {exc}")
                continue
            if w.value is not None and problem.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
                break
            errors.append(f"{solver}: status {problem.status}")
        else:
            raise ValueError(f"CVXPY found no solution for problem {i} (m = {m}, d = {d}): "
                             + "; ".join(errors))
        value = np.maximum(np.asarray(w.value, dtype=float), 0.0)
        w_out[i] = value / value.sum()
        n_iter[i] = problem.solver_stats.num_iters or 0
        ok[i] = problem.status == cp.OPTIMAL
        used.append(solver)
    names = "+".join(sorted(set(used), key=used.index))
    return _result(C, Q, d, w_out, eps, n_iter, ok, batched, f"cvxpy:{names}")

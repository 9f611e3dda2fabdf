"""The MVCE solvers (Newton interior point, Titterington, `solve`) against an independent
reference (`mvce_reference`: CVXPY + an exact KKT solve, dense linear algebra) on hard problems
(m > d, where the optimum is not the uniform start) and real neighbourhoods, their certificate
and KKT conditions, the span (Woodbury) applications of A and A^{-1} against dense linear
algebra, and the printed update."""

import mvce_reference as reference
import numba
import numpy as np
import pytest

from dmlbench import data
from dmlbench.measure.neighbours import euclidean_kneighbors
from dmlbench.solvers import mvce, mvce_compiled, mvce_newton


def problem(m, d, seed=0, b=None):
    rng = np.random.default_rng(seed)
    shape = (m, d) if b is None else (b, m, d)
    return rng.normal(size=shape) * rng.uniform(0.5, 2.0, size=d)


def dense_logdet(Z, w, eps):
    A = Z.T @ (Z * w[:, None]) + eps * np.eye(Z.shape[1])
    return np.linalg.slogdet(A)[1]


def real_neighbourhoods(name, m, count=3, seed=0):
    """Z (count, m, d) of an embedded data set (no download): m nearest points minus the query."""
    X = data.build(name).X.astype(float)
    q = np.random.default_rng(seed).choice(len(X), count, replace=False)
    _, ind = euclidean_kneighbors(X[q], X, m + 1)
    return X[ind[:, 1:]] - X[q][:, None, :]


HARD = [(12, 4, 0), (20, 6, 1), (30, 10, 2), (45, 15, 3), (90, 30, 4)]


@pytest.mark.parametrize("solver", ["newton", "titterington", "auto"])
@pytest.mark.parametrize("m, d, seed", HARD)
def test_solvers_reach_the_reference_optimum_when_m_exceeds_d(solver, m, d, seed):
    Z = problem(m, d, seed)
    exact = reference.weights(Z, 1e-4)
    best = reference.logdet(Z, exact, 1e-4)
    ours = mvce.solve(Z, eps=1e-4, tol=1e-9, solver=solver, max_iter=None if solver != "titterington"
                      else 200000)
    assert ours.converged and ours.n_iter > 0 and 0 <= ours.gap <= 1e-9
    assert ours.solver == ("titterington" if solver == "titterington" else "newton")
    # the optimum is not the uniform start here, and the certificate bounds the shortfall
    assert reference.logdet(Z, np.full(m, 1 / m), 1e-4) < best - 1e-3
    assert best - 1e-12 <= ours.logdet + ours.gap and ours.logdet <= best + 1e-12
    assert ours.logdet == pytest.approx(dense_logdet(Z, ours.weights, 1e-4), abs=1e-9)
    assert np.abs(ours.weights - exact).max() < 1e-4


@pytest.mark.parametrize("name, m", [("wine", 8), ("wine", 30), ("ionosphere", 20),
                                     ("ionosphere", 60)])
def test_real_neighbourhoods_against_the_reference(name, m):
    Z = real_neighbourhoods(name, m)
    ours = mvce.solve(Z, eps=1e-4, tol=1e-10)
    assert np.all(ours.converged)
    for i, z in enumerate(Z):
        exact = reference.weights(z, 1e-4)
        best = reference.logdet(z, exact, 1e-4)
        assert abs(ours.logdet[i] - best) <= 1e-9 * max(1.0, abs(best))
        assert np.abs(ours.weights[i] - exact).max() < 1e-5


def test_cvxpy_reference_agrees_with_the_independent_reference():
    for m, d, seed in HARD[:3] + [(6, 15, 5)]:
        Z = problem(m, d, seed)
        ref = mvce.cvxpy_reference(Z, eps=1e-4)
        best = reference.logdet(Z, reference.weights(Z, 1e-4), 1e-4)
        assert ref.converged and abs(ref.logdet - best) <= 1e-7 * max(1.0, abs(best))
        assert ref.logdet == pytest.approx(dense_logdet(Z, ref.weights, 1e-4), abs=1e-8)


@pytest.mark.parametrize("solver", ["newton", "titterington"])
def test_gap_is_a_nonnegative_certificate_and_small_at_convergence(solver):
    Z = problem(15, 5, seed=4)
    best = reference.logdet(Z, reference.weights(Z, 1e-4), 1e-4)
    for tol in (1e-2, 1e-4, 1e-7):
        res = mvce.solve(Z, tol=tol, max_iter=100000, solver=solver)
        assert res.converged and 0 <= res.gap <= tol
        # certificate: the optimum lies within `gap` above the current log det
        assert res.logdet <= best + 1e-12 <= res.logdet + res.gap + 1e-12
    start = mvce.solve(Z, max_iter=0, solver=solver)  # uniform weights: the gap still bounds
    assert not start.converged and start.n_iter == 0
    assert start.logdet <= best <= start.logdet + start.gap


@pytest.mark.parametrize("solver", ["newton", "titterington"])
def test_kkt_conditions_at_the_solution(solver):
    Z = problem(25, 4, seed=5)
    res = mvce.solve(Z, eps=1e-3, tol=1e-10, max_iter=200000, solver=solver)
    A = res.matrix()
    delta = np.einsum("md,de,me->m", Z, np.linalg.inv(A), Z)
    mu = res.weights @ delta
    assert np.all(res.weights >= 0) and res.weights.sum() == pytest.approx(1.0)
    assert np.all(delta <= mu + 1e-9)                          # no point outside
    support = res.weights > 1e-3
    np.testing.assert_allclose(delta[support], mu, atol=1e-6)   # equality on the support
    # sum_j w_j delta_j = d - eps tr(A^{-1})
    assert mu == pytest.approx(4 - 1e-3 * np.trace(np.linalg.inv(A)))


@pytest.mark.parametrize("solver, m", [("titterington", 9), ("newton", 9), ("newton", 3),
                                       ("auto", 3), ("newton", 30)])
def test_batch_equals_one_by_one_with_per_problem_eps(solver, m):
    Z = problem(m, 5, seed=6, b=4)
    eps = np.array([1e-4, 1e-3, 1e-2, 1e-1])
    batch = mvce.solve(Z, eps=eps, tol=1e-8, solver=solver)
    for i in range(4):
        one = mvce.solve(Z[i], eps=eps[i], tol=1e-8, solver=solver)
        np.testing.assert_allclose(batch.weights[i], one.weights, rtol=1e-10, atol=1e-14)
        assert batch.logdet[i] == pytest.approx(one.logdet, rel=1e-12)
        assert batch.n_iter[i] == one.n_iter and batch.gap[i] == pytest.approx(one.gap, abs=1e-14)


def test_auto_falls_back_to_newton_on_dependent_neighbours():
    # m <= d, but the neighbours span only 3 dimensions: the uniform start is far from optimal
    rng = np.random.default_rng(13)
    Z = rng.normal(size=(8, 3)) @ rng.normal(size=(3, 12))
    res = mvce.solve(Z, eps=1e-4, tol=1e-9)
    assert res.solver == "titterington+newton" and res.converged
    assert res.n_iter > mvce.AUTO_TITTERINGTON
    best = reference.logdet(Z, reference.weights(Z, 1e-4), 1e-4)
    assert abs(res.logdet - best) <= 1e-9 * abs(best)


@pytest.mark.parametrize("path", ["compiled", "batched"])
@pytest.mark.parametrize("m, d, seed", HARD)
def test_both_newton_implementations_reach_the_reference_optimum(path, m, d, seed, monkeypatch):
    # `newton` runs the compiled implementation up to m = COMPILED_UP_TO_M, numpy's above
    monkeypatch.setattr(mvce, "COMPILED_UP_TO_M", 10**6 if path == "compiled" else 0)
    Z = problem(m, d, seed, b=3)
    res = mvce.newton(Z, eps=1e-4, tol=1e-9)
    for i in range(3):
        best = reference.logdet(Z[i], reference.weights(Z[i], 1e-4), 1e-4)
        assert res.converged[i] and 0 <= res.gap[i] <= 1e-9
        assert best - 1e-12 <= res.logdet[i] + res.gap[i] and res.logdet[i] <= best + 1e-12


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("path", ["compiled", "batched"])
@pytest.mark.parametrize("name, m", [("iris", 5), ("wine", 14)])
def test_a_gap_beyond_rounding_stops_at_the_optimum_without_dividing_by_zero(path, name, m,
                                                                              monkeypatch):
    # tol = 1e-300 cannot be certified in double precision: on these neighbourhoods (m = d + 1)
    # the iterates drive weights, slacks and w^T s towards underflow, about 1e-4 per step, and
    # both implementations used to divide by the zero they reached (compiled:
    # ZeroDivisionError; numpy: NaN weights). Wherever they stop, the weights are the optimum's.
    monkeypatch.setattr(mvce, "COMPILED_UP_TO_M", 10**6 if path == "compiled" else 0)
    Z = real_neighbourhoods(name, m)
    res = mvce.newton(Z, eps=1e-4, tol=1e-300, max_iter=1000)
    assert np.all(np.isfinite(res.weights)) and np.all(res.weights >= 0)
    np.testing.assert_allclose(res.weights.sum(axis=1), 1.0, rtol=1e-12)
    for i in range(Z.shape[0]):
        best = reference.logdet(Z[i], reference.weights(Z[i], 1e-4), 1e-4)
        assert res.gap[i] <= 1e-9 and abs(res.logdet[i] - best) <= 1e-9 * abs(best)


def test_compiled_newton_hands_back_what_it_cannot_factorise(monkeypatch):
    # A = C^T W C + eps I with four identical rows c = (1, 1), w = 1/4 and eps = 1e-20: every
    # entry of C^T W C is exactly 1, so the second Cholesky pivot is 1 + 1e-20 - 1 = 0 exactly
    # (with or without fused multiply-adds); that problem is flagged, the other solved
    C = np.stack([np.ones((4, 2)), problem(4, 2, seed=3)])
    status = mvce_compiled.interior_point(C, np.array([1e-20, 1e-4]), 1e-9, 100,
                                          np.ones((2, 4), dtype=bool))[2]
    assert list(status) == [mvce_compiled.NOT_POSITIVE_DEFINITE, mvce_compiled.SOLVED]
    # a flagged problem is solved by the batched implementation, the others are kept
    compiled = mvce_compiled.interior_point

    def flag_first(C, eps, tol, max_iter, support):
        w, n_iter, status, delta, logdet = compiled(C, eps, tol, max_iter, support)
        w[0], status[0], delta[0], logdet[0] = 0.0, mvce_compiled.NOT_POSITIVE_DEFINITE, 0.0, 0.0
        return w, n_iter, status, delta, logdet

    Z = problem(20, 6, seed=1, b=2)
    monkeypatch.setattr(mvce_compiled, "interior_point", flag_first)
    mixed = mvce.newton(Z, eps=1e-4, tol=1e-9)
    monkeypatch.setattr(mvce, "COMPILED_UP_TO_M", 0)
    batched = mvce.newton(Z, eps=1e-4, tol=1e-9)
    np.testing.assert_allclose(mixed.weights[0], batched.weights[0], rtol=1e-10, atol=1e-14)
    assert mixed.n_iter[0] == batched.n_iter[0] and mixed.converged.all()
    assert mixed.logdet[0] == pytest.approx(batched.logdet[0], abs=1e-10)
    np.testing.assert_allclose(mixed.weights[1], batched.weights[1], atol=1e-9)


@pytest.mark.parametrize("m, d, seed", HARD)
def test_a_support_hint_missing_support_points_still_reaches_the_optimum(m, d, seed):
    # the hint marks the d + 1 nearest points only; the solver must add the farther support
    # points the certificate finds outside the ellipsoid, and give them their weight
    Z = problem(m, d, seed)
    Z = Z[np.argsort(np.linalg.norm(Z, axis=1))]
    exact = reference.weights(Z, 1e-4)
    best = reference.logdet(Z, exact, 1e-4)
    hint = np.arange(m) <= d
    assert (exact[~hint] > 1e-3).any()
    ours = mvce.newton(Z, eps=1e-4, tol=1e-9, support=hint)
    assert ours.converged and 0 <= ours.gap <= 1e-9
    assert best - 1e-12 <= ours.logdet + ours.gap and ours.logdet <= best + 1e-12
    assert np.abs(ours.weights - exact).max() < 1e-4
    # the certificate's terms, which the solver computes for the rows inside and outside its
    # final problem, against dense linear algebra
    A = Z.T @ (Z * ours.weights[:, None]) + 1e-4 * np.eye(d)
    dense = np.einsum("md,md->m", Z, np.linalg.solve(A, Z.T).T)
    np.testing.assert_allclose(ours.delta, dense, rtol=1e-8)
    assert ours.logdet == pytest.approx(dense_logdet(Z, ours.weights, 1e-4), abs=1e-9)


def test_nested_hints_over_an_m_grid_reach_every_optimum():
    # RMVEM's selection: the solution for m gives the hint for the next m of the grid
    Z = problem(40, 8, seed=5, b=4)
    Z = np.take_along_axis(Z, np.argsort(np.linalg.norm(Z, axis=2), axis=1)[:, :, None], axis=1)
    hint = None
    for m in (9, 16, 24, 40):
        res = mvce.solve(Z[:, :m], eps=1e-4, tol=1e-9, support=hint)
        assert res.solver == "newton" and res.converged.all()
        for i in range(4):
            best = reference.logdet(Z[i, :m], reference.weights(Z[i, :m], 1e-4), 1e-4)
            assert best - 1e-12 <= res.logdet[i] + res.gap[i] and res.logdet[i] <= best + 1e-12
        hint = mvce.nested_support(res, {9: 16, 16: 24, 24: 40, 40: 40}[m])
        assert hint[:, m:].all()


def test_newton_passes_the_argument_types_that_make_install_precompiles(monkeypatch):
    # numba compiles (and caches) one machine-code version per argument type; a read-only or
    # non-contiguous array is another type, which a job would then compile for seconds
    compiled, seen = mvce_compiled.interior_point, []

    def record(*args):
        seen.append(tuple(numba.typeof(a) for a in args))
        return compiled(*args)

    monkeypatch.setattr(mvce_compiled, "interior_point", record)
    mvce_compiled.precompile()
    Z = problem(12, 4, b=3)
    mvce.newton(Z)
    mvce.newton(Z, support=np.broadcast_to(np.ones(12, dtype=bool), (3, 12)))
    hint = mvce.nested_support(mvce.solve(Z[:, :8], tol=1e-9), 12)
    mvce.solve(Z[1:], tol=1e-9, support=hint[1:])
    assert len(seen) == 5 and len(set(seen)) == 1


@pytest.mark.parametrize("support, message", [
    (np.ones(5, dtype=bool), "shape"), (np.ones(6), "bool array"),
    (np.zeros((2, 6), dtype=bool), "no point for problem 0")])
def test_a_malformed_support_hint_is_refused(support, message):
    with pytest.raises(ValueError, match=message):
        mvce.newton(problem(6, 2, b=2), support=support)


def test_newton_systems_fall_back_to_lu_where_cholesky_refuses():
    # [[0, 1], [1, 0]] is symmetric but indefinite: its Cholesky factorisation fails at the
    # first (exactly zero) pivot, so that problem is solved by LU, the other by Cholesky
    M = np.array([[[0.0, 1.0], [1.0, 0.0]], [[4.0, 1.0], [1.0, 3.0]]])
    R = np.array([[[1.0, 2.0], [3.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]]])
    X, solve = mvce_newton._factor_solve(M, R, per_problem=True)
    np.testing.assert_allclose(X, np.linalg.solve(M, R), rtol=1e-14)
    np.testing.assert_allclose(solve(R[:, :, :1]), np.linalg.solve(M, R[:, :, :1]), rtol=1e-14)


def test_an_exactly_singular_newton_system_is_named():
    M = np.array([[[0.0, 0.0], [0.0, 1.0]]])   # zero first pivot for Cholesky and for LU
    with pytest.raises(np.linalg.LinAlgError, match="problem 0 of the batch.*titterington"):
        mvce_newton._factor_solve(M, np.ones((1, 2, 1)), per_problem=True)


def test_printed_update_leaves_the_simplex_and_is_worse_when_m_below_d():
    Z = problem(40, 60, seed=7)
    good = mvce.titterington(Z)
    printed = mvce.titterington(Z, update="printed")
    # sum_j w_j delta_j <= m < d, so each printed step shrinks the weights: sum ends near m/d
    assert printed.weights.sum() < 0.7
    assert printed.logdet < good.logdet - 5.0
    # with m > d and a tiny eps it nearly agrees (sum w delta = d - eps tr A^{-1})
    Z = problem(30, 3, seed=8)
    assert mvce.titterington(Z, eps=1e-8, update="printed", tol=1e-10).logdet == pytest.approx(
        mvce.titterington(Z, eps=1e-8, tol=1e-10).logdet, abs=1e-3)


@pytest.mark.parametrize("m, d", [(5, 12), (12, 5)])
def test_span_applications_equal_dense_linear_algebra(m, d):
    Z = problem(m, d, seed=9)
    res = mvce.titterington(Z, eps=0.05, tol=1e-8)
    A = Z.T @ (Z * res.weights[:, None]) + 0.05 * np.eye(d)
    np.testing.assert_allclose(res.matrix(), A, atol=1e-12)
    V = np.random.default_rng(10).normal(size=(7, d))
    np.testing.assert_allclose(res.quad(V), np.einsum("nd,de,ne->n", V, A, V), rtol=1e-10)
    Ainv = np.linalg.inv(A)
    np.testing.assert_allclose(res.quad(V, inverse=True), np.einsum("nd,de,ne->n", V, Ainv, V),
                               rtol=1e-8)
    np.testing.assert_allclose(res.solve(V), V @ Ainv, rtol=1e-8, atol=1e-10)
    lam, vec = res.eigh()
    ref = np.linalg.eigvalsh(A)[::-1]
    np.testing.assert_allclose(lam, ref[:min(m, d)], rtol=1e-10)
    np.testing.assert_allclose(ref[min(m, d):], 0.05, rtol=1e-8)
    np.testing.assert_allclose(A @ vec, vec * lam, atol=1e-9)
    assert res.logdet == pytest.approx(np.linalg.slogdet(A)[1], abs=1e-9)


def test_regularised_covariance_is_uniform_weights():
    Z = problem(8, 3, seed=11)
    res = mvce.regularised_covariance(Z, eps=1e-2)
    np.testing.assert_allclose(res.matrix(), Z.T @ Z / 8 + 1e-2 * np.eye(3), atol=1e-12)
    assert res.gap >= mvce.titterington(Z, eps=1e-2).gap
    bare = mvce.regularised_covariance(Z, eps=1e-2, certify=False)
    np.testing.assert_allclose(bare.matrix(), Z.T @ Z / 8 + 1e-2 * np.eye(3), atol=1e-12)
    assert np.isnan(bare.gap) and np.isnan(bare.logdet)


@pytest.mark.parametrize("solver, d, m", [("newton", 6, 10), ("titterington", 6, 10),
                                          ("auto", 6, 10), ("newton", 20, 40)])
def test_degenerate_neighbourhoods(solver, d, m):
    # m = 40, d = 20: each problem's kernel and Newton system by its own LAPACK calls
    zero = mvce.solve(np.zeros((5, d)), eps=1e-4, solver=solver)
    assert zero.converged and zero.gap == 0 and zero.logdet == pytest.approx(d * np.log(1e-4))
    np.testing.assert_allclose(zero.weights, 0.2)
    Z = problem(m, d, seed=12)
    Z[2] = 0.0          # a neighbour equal to the centre
    Z[4] = Z[3]         # a duplicated neighbour
    Z[7] = Z[8] = Z[9]  # a triplicate
    res = mvce.solve(Z, tol=1e-9, max_iter=100000, solver=solver)
    assert res.converged and res.weights[2] < 1e-6
    clean = np.delete(Z, [2, 4, 7, 8], axis=0)   # the same ellipsoid without the copies
    best = reference.logdet(clean, reference.weights(clean, 1e-4), 1e-4)
    assert abs(res.logdet - best) <= 1e-8 * abs(best)


@pytest.mark.parametrize("copies", [1, 20, 30])
def test_copies_of_the_centre_beside_one_other_point(copies):
    # keel-wisconsin after min-max scaling: 20 neighbours equal to the query and this other
    # point made the interior-point iteration on all rows cycle (100 steps, gap 0.07; 1 or 30
    # copies did not). The optimum puts all weight on the other point:
    # log det A = log(|z|^2 + eps) + (d - 1) log eps.
    z = np.zeros(9)
    z[6] = -1.0 / 9.0
    Z = np.vstack([np.zeros((copies, 9)), z])
    res = mvce.newton(Z, eps=1e-4, tol=1e-9)
    assert res.converged and res.gap <= 1e-9
    expected = np.log(z @ z + 1e-4) + 8 * np.log(1e-4)
    assert abs(res.logdet - expected) <= 1e-9 * abs(expected)
    np.testing.assert_allclose(res.weights, np.eye(copies + 1)[copies], atol=1e-9)


def test_hints_never_solve_on_the_copies_of_the_centre():
    Z = problem(6, 3, b=3)
    Z[:, :2] = 0.0
    Z[2] = 0.0                               # every row zero: the hint is kept
    support = np.ones((3, 6), dtype=bool)
    support[1, 2:] = False                    # only zero rows hinted: the others instead
    hint = mvce.without_zero_rows(Z, support)
    np.testing.assert_array_equal(hint, [[0, 0, 1, 1, 1, 1], [0, 0, 1, 1, 1, 1], [1] * 6])


@pytest.mark.parametrize("kwargs, message", [
    ({"eps": 0.0}, "eps must be > 0"),
    ({"eps": -1.0}, "eps must be > 0"),
    ({"eps": [1e-4, 1e-4]}, "eps must be a number or one per problem"),
    ({"update": "paper"}, "update must be one of"),
    ({"tol": 0}, "tol must be > 0"),
])
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        mvce.titterington(problem(5, 3), **kwargs)


@pytest.mark.parametrize("kwargs, message", [
    ({"eps": 0.0}, "eps must be > 0"),
    ({"tol": -1.0}, "tol must be > 0"),
    ({"max_iter": -1}, "max_iter must be >= 0"),
    ({"solver": "cvxpy"}, "solver must be one of"),
])
@pytest.mark.parametrize("solver", ["newton", "auto"])
def test_bad_arguments_of_solve_are_named(kwargs, message, solver):
    with pytest.raises(ValueError, match=message):
        mvce.solve(problem(5, 3), **{"solver": solver, **kwargs})


def test_bad_arrays_are_named():
    with pytest.raises(ValueError, match="shape"):
        mvce.titterington(np.ones(4))
    Z = problem(5, 3)
    Z[1, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        mvce.titterington(Z)
    with pytest.raises(ValueError, match="eps must be > 0"):
        mvce.cvxpy_reference(problem(5, 3), eps=0)


def test_at_weights_evaluates_log_det_and_gap_densely():
    """A result rebuilt from given weights (a selection's solutions, reused) has the log det and
    certificate of the dense matrix at those weights, for one problem and for a batch."""
    Z = problem(20, 6, seed=2, b=3)
    w = np.random.default_rng(0).dirichlet(np.ones(20), size=3)
    res = mvce.at_weights(Z, 1e-4, w, tol=1e-7)
    for i in range(3):
        A = Z[i].T @ (Z[i] * w[i][:, None]) + 1e-4 * np.eye(6)
        delta = np.einsum("md,md->m", Z[i], np.linalg.solve(A, Z[i].T).T)
        assert res.logdet[i] == pytest.approx(np.linalg.slogdet(A)[1], abs=1e-9)
        assert res.gap[i] == pytest.approx(delta.max() - w[i] @ delta, rel=1e-8)
    assert res.solver == "given" and not res.converged.any()
    one = mvce.at_weights(Z[0], 1e-4, w[0], tol=1e-7)
    assert one.logdet == pytest.approx(res.logdet[0], abs=1e-12)
    with pytest.raises(ValueError, match=r"weights must have shape \(3, 20\)"):
        mvce.at_weights(Z, 1e-4, w[:, :5], tol=1e-7)
    with pytest.raises(ValueError, match="finite and >= 0"):
        mvce.at_weights(Z, 1e-4, -w, tol=1e-7)


@pytest.mark.parametrize("rows", [1, 2, 3, 4, 5, 6, 7, 9, 12])
@pytest.mark.parametrize("n", [1, 3, 8])
def test_blocked_gram_and_cholesky_equal_numpy(rows, n):
    """The compiled kernel's register-blocked products and factorisation, for row counts that
    fill the 2 x 4 blocks exactly, partly and not at all, against numpy."""
    X = np.random.default_rng([rows, n]).normal(size=(rows, n))
    out = np.zeros((rows, rows))
    mvce_compiled._gram_lower(X, out)
    np.testing.assert_allclose(np.tril(out), np.tril(X @ X.T), rtol=1e-12, atol=1e-12)
    M = X @ X.T + n * np.eye(rows)
    L = M.copy()
    assert mvce_compiled._cholesky(L, rows)
    np.testing.assert_allclose(np.tril(L), np.linalg.cholesky(M), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.triu(L), np.linalg.cholesky(M).T, rtol=1e-10, atol=1e-12)

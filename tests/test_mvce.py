"""Titterington's MVCE against the CVXPY reference, its certificate and KKT conditions, the span
(Woodbury) applications of A and A^{-1} against dense linear algebra, and the printed update."""

import numpy as np
import pytest

from dmlbench.solvers import mvce


def problem(m, d, seed=0, b=None):
    rng = np.random.default_rng(seed)
    shape = (m, d) if b is None else (b, m, d)
    return rng.normal(size=shape) * rng.uniform(0.5, 2.0, size=d)


def dense_logdet(Z, w, eps):
    A = Z.T @ (Z * w[:, None]) + eps * np.eye(Z.shape[1])
    return np.linalg.slogdet(A)[1]


@pytest.mark.parametrize("m, d, seed", [(12, 4, 0), (20, 6, 1), (6, 15, 2), (10, 256, 3)])
def test_titterington_matches_cvxpy_to_1e6_relative_in_logdet(m, d, seed):
    Z = problem(m, d, seed)
    ours = mvce.titterington(Z, eps=1e-4, tol=1e-9, max_iter=50000)
    ref = mvce.cvxpy_reference(Z, eps=1e-4)
    assert ours.converged and ref.converged
    assert abs(ours.logdet - ref.logdet) <= 1e-6 * max(1.0, abs(ref.logdet))
    # both logdets are the dense determinant at the returned weights
    assert ours.logdet == pytest.approx(dense_logdet(Z, ours.weights, 1e-4), abs=1e-8)
    assert ref.logdet == pytest.approx(dense_logdet(Z, ref.weights, 1e-4), abs=1e-8)
    assert np.abs(ours.weights - ref.weights).max() < 1e-3


def test_gap_is_a_nonnegative_certificate_and_small_at_convergence():
    Z = problem(15, 5, seed=4)
    best = mvce.titterington(Z, tol=1e-10, max_iter=100000)
    for tol in (1e-2, 1e-4, 1e-7):
        res = mvce.titterington(Z, tol=tol, max_iter=100000)
        assert res.converged and 0 <= res.gap <= tol
        # certificate: the optimum lies within `gap` above the current log det
        assert res.logdet <= best.logdet + 1e-12 <= res.logdet + res.gap + 1e-12
    start = mvce.titterington(Z, max_iter=0)  # uniform weights, gap still bounds the shortfall
    assert not start.converged and start.n_iter == 0
    assert start.logdet <= best.logdet <= start.logdet + start.gap


def test_kkt_conditions_at_the_solution():
    Z = problem(25, 4, seed=5)
    res = mvce.titterington(Z, eps=1e-3, tol=1e-10, max_iter=200000)
    A = res.matrix()
    delta = np.einsum("md,de,me->m", Z, np.linalg.inv(A), Z)
    mu = res.weights @ delta
    assert np.all(res.weights >= 0) and res.weights.sum() == pytest.approx(1.0)
    assert np.all(delta <= mu + 1e-9)                          # no point outside
    support = res.weights > 1e-3
    np.testing.assert_allclose(delta[support], mu, atol=1e-6)   # equality on the support
    # sum_j w_j delta_j = d - eps tr(A^{-1})
    assert mu == pytest.approx(4 - 1e-3 * np.trace(np.linalg.inv(A)))


def test_batch_equals_one_by_one_with_per_problem_eps():
    Z = problem(9, 5, seed=6, b=4)
    eps = np.array([1e-4, 1e-3, 1e-2, 1e-1])
    batch = mvce.titterington(Z, eps=eps, tol=1e-8)
    for i in range(4):
        one = mvce.titterington(Z[i], eps=eps[i], tol=1e-8)
        np.testing.assert_allclose(batch.weights[i], one.weights, rtol=1e-10, atol=1e-14)
        assert batch.logdet[i] == pytest.approx(one.logdet, rel=1e-12)
        assert batch.n_iter[i] == one.n_iter and batch.gap[i] == pytest.approx(one.gap, abs=1e-14)


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


def test_degenerate_neighbourhoods():
    d = 6
    zero = mvce.titterington(np.zeros((5, d)), eps=1e-4)
    assert zero.converged and zero.gap == 0 and zero.logdet == pytest.approx(d * np.log(1e-4))
    np.testing.assert_allclose(zero.weights, 0.2)
    Z = problem(6, d, seed=12)
    Z[2] = 0.0          # a neighbour equal to the centre
    Z[4] = Z[3]         # a duplicated neighbour
    res = mvce.titterington(Z, tol=1e-9, max_iter=100000)
    ref = mvce.cvxpy_reference(Z)
    assert res.weights[2] < 1e-6
    assert res.logdet == pytest.approx(ref.logdet, rel=1e-6)


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


def test_bad_arrays_are_named():
    with pytest.raises(ValueError, match="shape"):
        mvce.titterington(np.ones(4))
    Z = problem(5, 3)
    Z[1, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        mvce.titterington(Z)
    with pytest.raises(ValueError, match="eps must be > 0"):
        mvce.cvxpy_reference(problem(5, 3), eps=0)

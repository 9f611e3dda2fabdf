"""The NCA numerical cores against independent references: finite differences, scikit-learn's
NCA loss, the definitions written pair by pair, brute-force kernel sums, and limits."""

import numpy as np
import pytest
from scipy.integrate import quad

from dmlbench.solvers import clustering, nca_compact_support, nca_kdtree, nca_objective


def data(n=36, D=4, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    X = rng.normal(size=(n, D)) + 0.8 * y[:, None]
    return X, y


def finite_difference(fun, A, h=1e-6):
    G = np.zeros_like(A)
    for idx in np.ndindex(A.shape):
        E = np.zeros_like(A)
        E[idx] = h
        G[idx] = (fun(A + E) - fun(A - E)) / (2 * h)
    return G


@pytest.mark.parametrize("d, reg, rows", [
    (4, 0.0, None), (2, 0.0, None), (2, 0.3, None), (4, [0.1, 0.0, 0.5, 0.2], None),
    (1, 0.2, [0, 5, 9, 30]),
])
def test_gradient_matches_finite_differences(d, reg, rows):
    X, y = data()
    A = np.random.default_rng(1).normal(size=(d, X.shape[1])) * 0.5
    _, grad = nca_objective.objective(A, X, y, rows=rows, reg=reg)
    fd = finite_difference(lambda B: nca_objective.objective(B, X, y, rows=rows, reg=reg)[0], A)
    np.testing.assert_allclose(grad, fd, atol=1e-6)


def test_objective_is_the_definition_pair_by_pair():
    X, y = data(n=12)
    A = np.random.default_rng(2).normal(size=(2, 4))
    f = 0.0
    for i in range(12):  # eq. 3.1-3.3 literally
        w = np.array([np.exp(-np.sum((A @ (X[i] - X[j])) ** 2)) if j != i else 0.0
                      for j in range(12)])
        f += w[y == y[i]].sum() / w.sum()
    assert nca_objective.objective(A, X, y)[0] == pytest.approx(f, rel=1e-12)


def test_equals_scikit_learn_loss_and_gradient():
    from sklearn.neighbors import NeighborhoodComponentsAnalysis

    X, y = data(n=50, D=5)
    A = np.random.default_rng(3).normal(size=(3, 5))
    sk = NeighborhoodComponentsAnalysis()
    sk.n_iter_, sk.verbose = 1, 0
    # scikit-learn returns sign * sum_i p_i and fits with sign = -1 (it minimises -f)
    loss, grad = sk._loss_grad_lbfgs(A.ravel(), X, y[:, None] == y[None, :], 1.0)
    f, g = nca_objective.objective(A, X, y)
    assert f == pytest.approx(loss, rel=1e-12)
    np.testing.assert_allclose(g, grad.reshape(A.shape), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("chunk", [1, 7, 1000])
def test_chunked_equals_unchunked(chunk):
    X, y = data(n=40)
    A = np.random.default_rng(4).normal(size=(2, 4))
    f, g = nca_objective.objective(A, X, y)
    fc, gc = nca_objective.objective(A, X, y, chunk_size=chunk)
    assert fc == pytest.approx(f, rel=1e-13)
    np.testing.assert_allclose(gc, g, rtol=1e-11, atol=1e-13)


def sklearn_loss_grad(A, X, y):
    from sklearn.neighbors import NeighborhoodComponentsAnalysis

    sk = NeighborhoodComponentsAnalysis()
    sk.n_iter_, sk.verbose = 1, 0
    f, g = sk._loss_grad_lbfgs(A.ravel(), X, y[:, None] == y[None, :], 1.0)
    return f, g.reshape(A.shape)


@pytest.mark.parametrize("chunk", [None, 1000, 100, 37])
def test_equals_scikit_learn_over_many_strips_and_blocks(chunk):
    """400 points in 5 classes of unequal sizes (class ranges cross the 128-row strips of the
    symmetric evaluation and the row blocks), full rank and low rank: scikit-learn's loss and
    gradient to 1e-10."""
    rng = np.random.default_rng(20)
    y = rng.choice(5, size=400, p=[0.4, 0.3, 0.15, 0.1, 0.05])
    X = rng.normal(size=(400, 6)) + 0.7 * y[:, None]
    X -= X.mean(axis=0)
    for A in (rng.normal(size=(6, 6)) / 2, rng.normal(size=(2, 6))):
        f, g = nca_objective.objective(A, X, y, chunk_size=chunk)
        f_sk, g_sk = sklearn_loss_grad(A, X, y)
        assert f == pytest.approx(f_sk, rel=1e-10)
        np.testing.assert_allclose(g, g_sk, rtol=0, atol=1e-10 * np.abs(g_sk).max())


@pytest.mark.parametrize("chunk", [None, 16])
def test_rows_far_from_the_common_shift_get_their_own(monkeypatch, chunk):
    """Nearest-neighbour distances spread over far more than the window of one common shift
    (duplicates at 0, a tight cluster, isolated points thousands away): those rows are
    recomputed with their own shift (eq. 3.20) and the result is still scikit-learn's."""
    rng = np.random.default_rng(21)
    y = np.arange(120) % 3
    X = rng.normal(size=(120, 3)) + y[:, None]
    X[:10] = X[10]                             # duplicates: d^2 = 0
    X[-6:] = rng.normal(size=(6, 3)) * 60.0    # isolated: d^2 in the thousands
    X -= X.mean(axis=0)
    own = []
    real = nca_objective._kernel

    def spy(lay, P, col0=0, own_shift=False, out=None):
        if own_shift:
            own.extend(P)
        return real(lay, P, col0, own_shift, out)

    monkeypatch.setattr(nca_objective, "_kernel", spy)
    A = np.eye(3)
    f, g = nca_objective.objective(A, X, y, chunk_size=chunk)
    f_sk, g_sk = sklearn_loss_grad(A, X, y)
    assert 0 < len(own) < 120
    assert f == pytest.approx(f_sk, rel=1e-10)
    np.testing.assert_allclose(g, g_sk, rtol=0, atol=1e-10 * np.abs(g_sk).max())


def test_rows_restricted_equal_the_pair_sum_at_any_scale():
    """Stochastic steps (`rows`) against the pair-by-pair eq. 3.5 with scikit-learn's softmax,
    from a mild scale to one where most kernel values underflow."""
    from scipy.special import softmax

    X, y = data(n=60)
    X = X - X.mean(axis=0)
    rows = np.array([3, 17, 18, 40, 59])
    for scale in (0.5, 3.0, 10.0):
        A = scale * np.random.default_rng(22).normal(size=(2, 4))
        Z = X @ A.T
        d2 = np.sum((Z[:, None] - Z[None]) ** 2, axis=2) + np.diag(np.full(60, np.inf))
        P = softmax(-d2, axis=1)
        same = y[:, None] == y[None]
        p = (P * same).sum(axis=1)
        C = (p[:, None] - same) * P
        grad = 2 * sum(np.einsum("k,ka,kb->ab", C[i], Z[i] - Z, X[i] - X) for i in rows)
        f, g = nca_objective.objective(A, X, y, rows=rows)
        assert f == pytest.approx(p[rows].sum(), rel=1e-12)
        np.testing.assert_allclose(g, grad, rtol=0, atol=1e-9 * np.abs(grad).max())


@pytest.mark.parametrize("chunk", [None, 1, 2])
def test_rows_in_blocks_equal_the_class_sorted_path(chunk):
    """The stochastic step's own-shift path (`_rows`, fewer rows than N / 2), in one block or
    in blocks of 1 and 2 rows, against the class-sorted layout's row blocks (the path taken for
    N / 2 rows or more) on the same rows."""
    X, y = data(n=80)
    A = np.random.default_rng(3).normal(size=(3, 4))
    rows = np.array([0, 7, 8, 33, 52, 79])
    f, g = nca_objective.objective(A, X, y, rows=rows, chunk_size=chunk)
    lay = nca_objective._Layout(X @ A.T, y)
    f_ref, T = nca_objective._by_rows(lay, np.sort(lay.rank[rows]), 4)
    Y = lay.unsort(T[:, lay.d:] * lay.Z - T[:, :lay.d])
    assert f == pytest.approx(f_ref, rel=1e-13)
    np.testing.assert_allclose(g, 2.0 * Y.T @ X, rtol=0, atol=1e-12 * np.abs(g).max())


@pytest.mark.parametrize("chunk", [None, 7])
def test_value_is_the_objective_without_its_gradient(chunk):
    """`value` (the train score) against scikit-learn's loss and the objective's f, at a mild
    scale and at one where most kernel values underflow."""
    X, y = data(n=50)
    for scale in (0.5, 10.0):
        A = scale * np.random.default_rng(8).normal(size=(2, 4))
        f = nca_objective.value(A, X, y, chunk_size=chunk)
        assert f == pytest.approx(nca_objective.objective(A, X, y)[0], rel=1e-12)
        if scale < 1:
            assert f == pytest.approx(sklearn_loss_grad(A, X, y)[0], rel=1e-10)
    with pytest.raises(nca_objective.NonFiniteObjective, match="A exploded"):
        nca_objective.value(np.full((2, 4), 1e200), X, y)


def test_log_sum_exp_gives_the_hard_nearest_neighbour_limit():
    """At a huge scale exp(-d^2) underflows for every pair; with eq. 3.20 p_i is 1 exactly when
    the nearest neighbour is of the same class (leave-one-out 1-NN)."""
    X, y = data(n=30)
    A = 1e4 * np.random.default_rng(5).normal(size=(2, 4))
    Z = X @ A.T
    D = np.linalg.norm(Z[:, None] - Z[None], axis=2) + np.diag(np.full(30, np.inf))
    loo = np.sum(y[D.argmin(axis=1)] == y)
    f, g = nca_objective.objective(A, X, y)
    assert f == pytest.approx(loo) and np.all(np.isfinite(g))


def test_overflowing_projection_is_a_clear_error():
    X, y = data()
    with pytest.raises(nca_objective.NonFiniteObjective, match="A exploded"):
        nca_objective.objective(np.full((2, 4), 1e200), X, y)
    with pytest.raises(ValueError, match="d x D"):
        nca_objective.objective(np.ones((2, 5)), X, y)


def test_class_scores_are_the_nca_rule():
    X, y = data(n=30)
    Xq = data(n=8, seed=9)[0]
    A = np.random.default_rng(6).normal(size=(2, 4))
    P = nca_objective.class_scores(X @ A.T, y, Xq @ A.T, 3)
    W = np.exp(-np.sum(((Xq @ A.T)[:, None] - (X @ A.T)[None]) ** 2, axis=2))
    ref = np.stack([W[:, y == c].sum(axis=1) for c in range(3)], axis=1)
    np.testing.assert_allclose(P, ref / ref.sum(axis=1, keepdims=True), rtol=1e-10)


# ---- compact support (sections 4.5-4.6) ------------------------------------------------------

def test_compact_support_kernel_constant_normalises_in_d_dimensions():
    from math import gamma, pi

    for d in (1, 2, 3, 5):
        surface = 2 * pi ** (d / 2) / gamma(d / 2)  # of the unit sphere in R^d
        mass = quad(lambda r: (1 - r * r) ** 2 * r ** (d - 1), 0, 1)[0] * surface
        assert nca_compact_support.kernel_constant(d) * mass == pytest.approx(1.0, rel=1e-10)
    assert nca_compact_support.kernel_constant(1) == pytest.approx(15 / 16)  # the thesis' constant


def test_compact_support_objective_is_the_definition():
    X, y = data(n=25)
    A = 0.4 * np.random.default_rng(7).normal(size=(2, 4))
    f, _, info = nca_compact_support.objective(A, X, y)
    Z = X @ A.T
    ref, isolated = 0.0, 0
    for i in range(25):  # eq. 4.16-4.18 literally
        d2 = np.sum((Z - Z[i]) ** 2, axis=1)
        k = np.where((d2 < 1) & (np.arange(25) != i), (1 - d2) ** 2, 0.0)
        if k.sum() == 0:
            isolated += 1
            continue
        ref += k[y == y[i]].sum() / k.sum()
    assert f == pytest.approx(ref, rel=1e-12)
    assert info["isolated"] == isolated
    assert info["pairs"] == int(sum(np.sum((np.sum((Z - Z[i]) ** 2, axis=1) < 1)) - 1
                                    for i in range(25)))


@pytest.mark.parametrize("background, rows", [(False, None), (True, None), (True, [1, 4, 20])])
def test_compact_support_gradient_matches_finite_differences(background, rows):
    X, y = data(n=30)
    A = 0.35 * np.random.default_rng(8).normal(size=(2, 4))
    bg = nca_compact_support.background_model(X, y) if background else None
    f, g, _ = nca_compact_support.objective(A, X, y, rows=rows, background=bg, reg=0.1)
    fd = finite_difference(
        lambda B: nca_compact_support.objective(B, X, y, rows=rows, background=bg, reg=0.1)[0], A)
    np.testing.assert_allclose(g, fd, atol=2e-6)
    fd_dense, g_dense, _ = nca_compact_support.objective(A, X, y, rows=rows, background=bg, reg=0.1,
                                            search="dense")
    assert fd_dense == pytest.approx(f, rel=1e-12)
    np.testing.assert_allclose(g_dense, g, atol=1e-12)


def test_background_with_beta_zero_is_compact_support_and_never_isolates():
    X, y = data(n=30)
    A = 3.0 * np.random.default_rng(9).normal(size=(2, 4))  # most points isolated
    f_cs, _, info = nca_compact_support.objective(A, X, y)
    f_b0, _, _ = nca_compact_support.objective(A, X, y, background=nca_compact_support.background_model(X, y, beta=0.0))
    assert f_b0 == pytest.approx(f_cs, rel=1e-12) and info["isolated"] > 0
    f_bg, _, info_bg = nca_compact_support.objective(A, X, y, background=nca_compact_support.background_model(X, y))
    assert info_bg["isolated"] == 0 and f_bg > f_cs


def test_background_density_is_the_gaussian_mixture():
    X, y = data(n=20)
    A = 0.5 * np.random.default_rng(10).normal(size=(2, 4))
    bg = nca_compact_support.background_model(X, y)
    Xq = data(n=3, seed=11)[0]
    P = nca_compact_support.class_scores(A, X, y, Xq, 3, background=bg)
    from scipy.stats import multivariate_normal
    Z, Zq, cd = X @ A.T, Xq @ A.T, nca_compact_support.kernel_constant(2)
    ref = np.zeros((3, 3))
    for c in range(3):
        gauss = multivariate_normal(A @ bg.means[c], A @ bg.covs[c] @ A.T).pdf(Zq)
        d2 = np.sum((Zq[:, None] - Z[y == c][None]) ** 2, axis=2)
        kern = (cd * np.where(d2 < 1, (1 - d2) ** 2, 0)).sum(axis=1)
        n_c = np.sum(y == c)  # p(x | c) p(c), eq. 4.22 with p(c) = N_c / N
        ref[:, c] = (bg.beta[c] * gauss + (1 - bg.beta[c]) * kern / n_c) * n_c
    np.testing.assert_allclose(P, ref / ref.sum(axis=1, keepdims=True), rtol=1e-9)


# ---- k-d-tree approximate KDE (section 4.4) ---------------------------------------------------

def test_kdtree_structure_follows_algorithm_4_5():
    Z = np.random.default_rng(12).normal(size=(103, 3))
    y = np.repeat([0, 1], [60, 43])
    forest = nca_kdtree.build_forest(Z, y, leaf_size=8)
    assert sorted(forest.index) == list(range(103))
    for n in range(forest.start.size):
        members = forest.index[forest.start[n]:forest.end[n]]
        assert np.all(y[members] == forest.label[n])
        assert np.all(Z[members] >= forest.lo[n] - 1e-12) and np.all(Z[members] <= forest.hi[n] + 1e-12)
        if forest.left[n] < 0:
            assert members.size < 8
        else:
            left = forest.index[forest.start[forest.left[n]]:forest.end[forest.left[n]]]
            right = forest.index[forest.start[forest.right[n]]:forest.end[forest.right[n]]]
            dim = np.argmax(forest.hi[n] - forest.lo[n])  # eq. 4.5, split at the median
            assert Z[left, dim].max() <= Z[right, dim].min()
            assert abs(left.size - right.size) <= 1


@pytest.mark.parametrize("epsilon", [0.0, 1e-6, 1e-2, 0.1, 0.5])
def test_kd_class_sums_are_within_the_stated_bound(epsilon):
    rng = np.random.default_rng(13)
    Z = np.vstack([rng.normal(size=(150, 2)), rng.normal(size=(150, 2)) + 1.5]) * 1.5
    y = np.repeat([0, 1], 150)
    rows = np.arange(0, 300, 5)
    cs, L, _ = nca_kdtree.class_kde(Z, y, rows, epsilon, leaf_size=6)
    D2 = np.sum((Z[rows][:, None] - Z[None]) ** 2, axis=2)
    K = np.exp(L[:, None] - D2)
    K[np.arange(rows.size), rows] = 0.0
    exact = np.stack([K[:, y == c].sum(axis=1) for c in range(2)], axis=1)
    assert np.all(np.abs(cs.sums - exact) <= epsilon * exact + 1e-12 * exact.max())
    if epsilon >= 0.1:
        assert cs.exact_q.size < rows.size * 299  # the approximation skipped points


def test_kd_objective_with_epsilon_zero_is_exact():
    X, y = data(n=60)
    A = np.random.default_rng(14).normal(size=(2, 4))
    rows = np.arange(0, 60, 3)
    f, g = nca_objective.objective(A, X, y, rows=rows)
    fk, gk, info = nca_kdtree.objective(A, X, y, rows=rows, epsilon=0.0, leaf_size=4)
    assert fk == pytest.approx(f, rel=1e-12)
    np.testing.assert_allclose(gk, g, atol=1e-12)


def test_kd_gradient_is_eq_3_14_with_the_approximated_kernel_values():
    """The node-level gradient assembly equals the pair-by-pair sum in which every point of an
    approximated node carries that node's kernel value."""
    X, y = data(n=80, D=3, classes=2)
    A = 1.5 * np.random.default_rng(15).normal(size=(2, 3))
    rows = np.arange(0, 80, 2)
    f, g, info = nca_kdtree.objective(A, X, y, rows=rows, epsilon=0.3, leaf_size=4)
    assert info["nodes"] > 0
    Z = X @ A.T
    cs, _, forest = nca_kdtree.class_kde(Z, y, rows, 0.3, leaf_size=4)
    q = [cs.exact_q]
    j = [forest.index[cs.exact_pos]]
    k = [cs.exact_k]
    for qq, node, kg in zip(cs.approx_q, cs.approx_node, cs.approx_k):
        members = forest.index[forest.start[node]:forest.end[node]]
        q.append(np.full(members.size, qq))
        j.append(members)
        k.append(np.full(members.size, kg))
    q, j, k = map(np.concatenate, (q, j, k))
    S = cs.sums.sum(axis=1)
    p = cs.sums[np.arange(rows.size), y[rows]] / S
    assert f == pytest.approx(p.sum(), rel=1e-12)
    coef = k / S[q] * (p[q] - (y[j] == y[rows][q]))
    grad = 2 * np.einsum("t,ta,tb->ab", coef, Z[rows[q]] - Z[j], X[rows[q]] - X[j])
    np.testing.assert_allclose(g, grad, atol=1e-10)


# ---- mini-batch clusterings (section 4.2) -----------------------------------------------------

def test_farthest_point_clustering_is_gonzalez_algorithm():
    Z = np.random.default_rng(16).normal(size=(200, 2))
    parts = clustering.farthest_point_clustering(Z, 5, np.random.default_rng(0))
    rng = np.random.default_rng(0)
    D = np.linalg.norm(Z[:, None] - Z[None], axis=2)
    centres = [int(rng.integers(200))]
    while len(centres) < 5:  # the point farthest from every centre so far
        centres.append(int(np.argmax(D[:, centres].min(axis=1))))
    owner = np.argmin(D[:, centres], axis=1)
    expected = sorted(tuple(np.flatnonzero(owner == c)) for c in range(5))
    assert sorted(tuple(p) for p in parts) == expected


def test_recursive_projection_clustering_controls_the_sizes():
    Z = np.random.default_rng(17).normal(size=(1000, 3))
    parts = clustering.recursive_projection_clustering(Z, 100, np.random.default_rng(0))
    assert sorted(np.concatenate(parts)) == list(range(1000))
    assert all(50 <= p.size < 100 for p in parts)

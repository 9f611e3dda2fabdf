"""The BoostMDM family (Chang 2012) and MFA against independent references: dense graph
Laplacians, brute-force neighbour sets, Cholesky-whitened eigenproblems, Theorem 3's bound."""

import numpy as np
import pytest
import scipy.linalg

from dmlbench import data
from dmlbench.methods import make
from dmlbench.methods.boost import base_learner
from dmlbench.solvers import margins

BOOSTED = ["boostmdm", "boostmdm_k", "boostmdm_g", "i_mfa", "gi_relief"]


def blobs(seed, n=90, d=6, c=3, sep=0.8, scales=True):
    """Random labelled data: class means at random, features on scales 1e-2 .. 1e2."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % c
    X = rng.normal(size=(n, d)) + sep * rng.normal(size=(c, d))[y]
    return (X * np.logspace(-2, 2, d) if scales else X), y


def wdbc_part(n=160):
    ds = data.build("wdbc")
    keep = np.sort(np.random.default_rng(0).choice(ds.y.size, n, replace=False))
    return ds.X[keep] - ds.X[keep].mean(axis=0), ds.y[keep]


# --- dense references -------------------------------------------------------------------------

def dense_sq(Z):
    return np.sum((Z[:, None, :] - Z[None, :, :]) ** 2, axis=2)


def dense_psi(Z, y, side, k=None, mu=None):
    """N x N set weights psi_ij by brute force: k nearest (1/k each) or Gaussian (softmax)."""
    D = dense_sq(Z)
    same = y[:, None] == y[None, :]
    member = (same & ~np.eye(y.size, dtype=bool)) if side == "hits" else ~same
    psi = np.zeros_like(D)
    for i in range(y.size):
        cols = np.flatnonzero(member[i])
        if k is not None:
            nearest = cols[np.argsort(D[i, cols], kind="stable")[:k]]
            psi[i, nearest] = 1.0 / k
        else:
            logit = -mu * D[i, cols]
            e = np.exp(logit - logit.max())
            psi[i, cols] = e / e.sum()
    return psi


def laplacian_scatter(X, P):
    """X^T (D_A - A) X with A = P + P^T (the paper's R(i, j; ...) symmetrisation)."""
    A = P + P.T
    return X.T @ (np.diag(A.sum(axis=1)) - A) @ X


def table2_mu(Z, q=7):
    D = dense_sq(Z) + np.diag(np.full(Z.shape[0], np.inf))
    return Z.shape[0] / np.sum(np.sort(D, axis=1)[:, q - 1])


def dense_bound(Z, y, k_h=None, k_m=None, mu=None):
    """B(M) (eq. 2 / B_{kh,km} / B_G) from the mapped points Z, by brute force."""
    if mu == "table2":
        mu = table2_mu(Z)
    D = dense_sq(Z)
    f_hit = np.sum(dense_psi(Z, y, "hits", k_h, mu) * D, axis=1)
    f_miss = np.sum(dense_psi(Z, y, "misses", k_m, mu) * D, axis=1)
    return float(np.mean(np.exp(f_hit - f_miss)))


RULES = {  # registered name, its parameters, and the brute-force reference's set definition
    "boostmdm": ({}, dict(k_h=1, k_m=1)),
    "boostmdm_k": ({"k_h": 3, "k_m": 2}, dict(k_h=3, k_m=2)),
    "boostmdm_g": ({}, dict(mu="table2")),
    "boostmdm_g mu=0": ({"mu": 0.0}, dict(mu=0.0)),
}


def _fit(label, X, y, **extra):
    params, _ = RULES[label]
    return make(label.split()[0], {**params, **extra}).fit(X, y)


# --- numerical core -----------------------------------------------------------------------------

@pytest.mark.parametrize("side", ["hits", "misses"])
@pytest.mark.parametrize("kind", ["nearest", "gaussian"])
def test_set_f_values_and_scatter_equal_dense_laplacians(kind, side):
    X, y = blobs(0, n=40, d=5, scales=False)
    Z = X @ np.random.default_rng(1).normal(size=(5, 3))
    w = np.random.default_rng(2).dirichlet(np.ones(y.size))
    rule = margins.SetRule(kind, 3, 2, mu=None)
    hits, misses, mu = rule.sets(Z, y)
    sets = hits if side == "hits" else misses
    k = (3 if side == "hits" else 2) if kind == "nearest" else None
    if kind == "gaussian":
        assert mu == pytest.approx(table2_mu(Z), rel=1e-10)
    psi = dense_psi(Z, y, side, k, mu)
    np.testing.assert_allclose(sets.f(Z), np.sum(psi * dense_sq(Z), axis=1), rtol=1e-9)
    np.testing.assert_allclose(sets.f(X), np.sum(psi * dense_sq(X), axis=1), rtol=1e-9)
    np.testing.assert_allclose(sets.scatter(X, w), laplacian_scatter(X, w[:, None] * psi),
                               rtol=1e-9, atol=1e-10)


def test_generalized_eigenvectors_satisfy_the_constraint_and_maximise_the_trace():
    rng = np.random.default_rng(3)
    m = 7
    S = rng.normal(size=(m, m))
    S = S + S.T
    B = rng.normal(size=(m, 4))
    C = B @ B.T  # singular: the ridge is what makes the pair definite
    lam = 1e-3
    V, vals = margins.generalized_eigenvectors(S, C, lam)
    C_reg = C + lam * np.linalg.svd(C, compute_uv=False)[0] * np.eye(m)
    np.testing.assert_allclose(V.T @ C_reg @ V, np.eye(V.shape[1]), atol=1e-9)  # = I_0 block
    # independent: whiten with the Cholesky factor; the optimum is the sum of positive eigenvalues
    K = np.linalg.cholesky(C_reg)
    Kinv = np.linalg.inv(K)
    ref = np.linalg.eigvalsh(Kinv @ S @ Kinv.T)
    assert V.shape[1] == np.sum(ref > 0)
    np.testing.assert_allclose(np.trace(V.T @ S @ V), ref[ref > 0].sum(), rtol=1e-9)
    np.testing.assert_allclose(vals, np.sort(ref[ref > 0])[::-1], rtol=1e-9)
    for _ in range(20):  # any other feasible L of the same rank does no better
        U = np.linalg.qr(rng.normal(size=(m, V.shape[1])))[0]
        L = Kinv.T @ U
        assert np.trace(L.T @ S @ L) <= np.trace(V.T @ S @ V) + 1e-9


def test_base_learner_solution_satisfies_its_constraint():
    X, y = blobs(4, n=60, d=5)
    w = np.random.default_rng(0).dirichlet(np.ones(y.size))
    lam = 1e-6
    res = base_learner(X, y, w, margins.SetRule("nearest", 3, 3), lam, max_iter=10, tol=1e-3)
    assert res.L.shape[1] > 0
    # the constraint refers to the hit sets of the last E-step, which the result carries
    psi = np.zeros((y.size, y.size))
    np.put_along_axis(psi, res.hits.index, 1.0 / 3, axis=1)
    S_C = laplacian_scatter(X, w[:, None] * psi)
    C_reg = S_C + lam * np.linalg.svd(S_C, compute_uv=False)[0] * np.eye(X.shape[1])
    np.testing.assert_allclose(res.L.T @ C_reg @ res.L, np.eye(res.L.shape[1]), atol=1e-8)


# --- Theorem 3 and the boosting invariants ------------------------------------------------------

@pytest.mark.parametrize("label", list(RULES))
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_bound_never_increases_and_matches_a_brute_force_evaluation(label, seed):
    X, y = blobs(seed)
    est = _fit(label, X, y)
    info = est.fit_info()
    bounds = np.array(info["bound"])
    assert bounds[0] == 1.0 and len(bounds) == info["n_boost_iter"] + 1
    assert np.all(np.diff(bounds) <= 1e-12), bounds
    Z = X @ est.components_.T
    assert bounds[-1] == pytest.approx(dense_bound(Z, y, **RULES[label][1]), rel=1e-8)
    if label != "boostmdm_g":  # Theorem 1 holds for nearest sets and for mu = 0 (section 2.6.2)
        gammas, etas = dense_gammas(X - X.mean(axis=0), y, est, **RULES[label][1])
        np.testing.assert_allclose(info["gamma"], gammas, rtol=1e-8)
        np.testing.assert_allclose(info["alpha"], np.log((1 + gammas) / (1 - gammas)) / (2 * etas),
                                   rtol=1e-8)  # eq. 10
        assert np.all(bounds[1:] <= bounds[:-1] * np.sqrt(1 - gammas ** 2) + 1e-12)
        assert bounds[-1] <= np.prod(np.sqrt(1 - gammas ** 2)) + 1e-12


def dense_gammas(X, y, est, k_h=None, k_m=None, mu=None):
    """gamma_t (eq. 11) and eta_t of every boosting step, by brute force from the fitted bases
    Q_t = B_t B_t^T and alphas: M_{t-1} = sum_{s<t} alpha_s Q_s, margins delta (eq. 4) under
    M_{t-1} (0 for M_0), w' = softmax(delta) (eqs. 5, 12), d_i (eq. 6) under Q_t with the hits of
    M_{t-1} (of Q_1 when t = 1)."""
    gammas, etas = [], []
    G = np.zeros((X.shape[1], 0))
    for alpha, B in zip(est.alphas_, est.bases_):
        Zq, Z = X @ B, X @ G
        D_q = dense_sq(Zq)
        if G.shape[1] == 0:
            delta, hits = np.zeros(y.size), dense_psi(Zq, y, "hits", k_h, mu)
        else:
            D = dense_sq(Z)
            hits = dense_psi(Z, y, "hits", k_h, mu)
            delta = np.sum(hits * D, axis=1) - np.sum(dense_psi(Z, y, "misses", k_m, mu) * D, axis=1)
        w = np.exp(delta - delta.max())
        w /= w.sum()
        d = np.sum(dense_psi(Zq, y, "misses", k_m, mu) * D_q, axis=1) - np.sum(hits * D_q, axis=1)
        etas.append(np.abs(d).max())
        gammas.append(w @ d / etas[-1])
        G = np.hstack([G, np.sqrt(alpha) * B])
    return np.array(gammas), np.array(etas)


def test_several_boosting_iterations_happen_and_keep_the_bound_decreasing():
    X, y = wdbc_part()
    for label in ("boostmdm", "boostmdm_k", "boostmdm_g"):
        est = _fit(label, X, y)
        info = est.fit_info()
        assert info["n_boost_iter"] >= 2, (label, info["stop_reason"])
        if label != "boostmdm_g":
            np.testing.assert_allclose(info["gamma"], dense_gammas(X, y, est, **RULES[label][1])[0],
                                       rtol=1e-7)
        assert np.all(np.diff(info["bound"]) < 0)
        assert info["rank_path"] == sorted(set(info["rank_path"]))


@pytest.mark.parametrize("label", ["boostmdm_k", "boostmdm_g mu=0"])
def test_each_base_metric_lies_in_the_null_space_of_the_previous_metric(label):
    X, y = wdbc_part() if label == "boostmdm_k" else blobs(5, d=8)
    est = _fit(label, X, y)
    assert len(est.bases_) >= 2
    M = np.zeros((X.shape[1],) * 2)
    for t, (alpha, B) in enumerate(zip(est.alphas_, est.bases_)):
        Q = B @ B.T
        if t:
            assert np.linalg.norm(Q @ M) <= 1e-9 * np.linalg.norm(Q) * np.linalg.norm(M)
        assert alpha > 0
        M += alpha * Q
    # M_T = sum alpha_t Q_t is what the reordered components represent, and it is PSD
    np.testing.assert_allclose(est.metric_, M, rtol=1e-9, atol=1e-12 * np.abs(M).max())
    assert np.linalg.eigvalsh(M).min() >= -1e-10 * np.linalg.eigvalsh(M).max()
    assert est.components_.shape[0] == np.linalg.matrix_rank(M)


def test_components_are_ordered_by_discriminatory_potential():
    X, y = blobs(6, d=8)
    est = _fit("boostmdm_k", X, y)
    Z = X @ est.components_.T
    uniform = np.full((y.size, 1), 1.0 / y.size)
    S = (laplacian_scatter(Z, uniform * dense_psi(Z, y, "misses", 2))
         - laplacian_scatter(Z, uniform * dense_psi(Z, y, "hits", 3)))
    potential = np.diag(S)   # eqs. 18-19: diag(L_T^T X (L_A - L_C) X^T L_T)
    assert np.all(np.diff(potential) <= 1e-9 * np.abs(potential).max())
    np.testing.assert_allclose(S - np.diag(potential), 0, atol=1e-9 * np.abs(potential).max())


@pytest.mark.parametrize("name", ["boostmdm_g", "gi_relief"])
def test_gaussian_components_ordered_by_the_nearest_hit_and_miss(name):
    """order="nearest": the potential of eqs. 18-19 on the nearest hit and miss (brute force,
    k = 1 each) under M_T is diagonal and decreasing on the components; M_T is unchanged."""
    X, y = blobs(7, d=8)
    own, est = make(name).fit(X, y), make(name, {"order": "nearest"}).fit(X, y)
    Z = X @ est.components_.T
    uniform = np.full((y.size, 1), 1.0 / y.size)
    S = (laplacian_scatter(Z, uniform * dense_psi(Z, y, "misses", 1))
         - laplacian_scatter(Z, uniform * dense_psi(Z, y, "hits", 1)))
    potential = np.diag(S)
    assert np.all(np.diff(potential) <= 1e-9 * np.abs(potential).max())
    np.testing.assert_allclose(S - np.diag(potential), 0, atol=1e-9 * np.abs(potential).max())
    np.testing.assert_allclose(est.metric_, own.metric_, rtol=1e-9,
                               atol=1e-12 * np.abs(own.metric_).max())


def test_order_must_be_gaussian_or_nearest():
    with pytest.raises(ValueError, match="order"):
        make("boostmdm_g", {"order": "farthest"}).fit(*blobs(1))


def dense_i_mfa(X, y, k_h, k_m, lam, max_iter=10, tol=1e-3):
    """Algorithm 1 at t = 1 with uniform weights, written out with dense N x N matrices."""
    w = np.full(y.size, 1.0 / y.size)
    L, Z = None, X
    for _ in range(max_iter):
        S_A = laplacian_scatter(X, w[:, None] * dense_psi(Z, y, "misses", k_m))
        S_C = laplacian_scatter(X, w[:, None] * dense_psi(Z, y, "hits", k_h))
        sigma1 = np.linalg.svd(S_C, compute_uv=False)[0]
        vals, V = scipy.linalg.eigh(S_A - S_C, S_C + lam * sigma1 * np.eye(X.shape[1]))
        new = V[:, vals > 1e-9 * np.abs(vals).max()]
        old_Q = np.eye(X.shape[1]) if L is None else L @ L.T
        change = np.linalg.norm(new @ new.T - old_Q) / np.linalg.norm(old_Q)
        L, Z = new, X @ new
        if change < tol:
            break
    return L @ L.T


def test_i_mfa_is_one_iteration_of_boostmdm_k_and_matches_a_dense_reference():
    X, y = blobs(7, n=72, d=5)
    imfa = make("i_mfa", {"k_h": 4, "k_m": 3, "lam": 1e-6}).fit(X, y)
    boosted = make("boostmdm_k", {"k_h": 4, "k_m": 3, "lam": 1e-6}).fit(X, y)
    Q_ref = dense_i_mfa(X, y, 4, 3, 1e-6)
    Q = imfa.bases_[0] @ imfa.bases_[0].T
    np.testing.assert_allclose(Q, Q_ref, rtol=1e-7, atol=1e-9 * np.abs(Q_ref).max())
    np.testing.assert_allclose(boosted.bases_[0] @ boosted.bases_[0].T, Q_ref, rtol=1e-7,
                               atol=1e-9 * np.abs(Q_ref).max())
    np.testing.assert_allclose(imfa.metric_, imfa.alphas_[0] * Q_ref, rtol=1e-7,
                               atol=1e-9 * imfa.alphas_[0] * np.abs(Q_ref).max())
    assert imfa.fit_info()["n_boost_iter"] == 1


def test_undersampled_data_are_solved_in_their_span_like_pca_to_n_minus_1():
    from sklearn.decomposition import PCA

    rng = np.random.default_rng(8)
    y = np.arange(24) % 3
    X = rng.normal(size=(24, 60)) + 2 * rng.normal(size=(3, 60))[y]
    est = make("boostmdm_k", {"k_h": 3, "k_m": 3, "lam": 0.01}).fit(X, y)
    assert est.fit_info()["reduced_dim"] == 23 and est.components_.shape[1] == 60
    R = PCA(23, svd_solver="full").fit_transform(X)  # section 3.2 as a separate step
    ref = make("boostmdm_k", {"k_h": 3, "k_m": 3, "lam": 0.01}).fit(R, y)
    np.testing.assert_allclose(dense_sq(est.transform(X)), dense_sq(ref.transform(R)),
                               rtol=1e-6, atol=1e-9 * dense_sq(ref.transform(R)).max())


def mfa_reference(X, y, k1, k2, lam):
    """Yan et al.'s graphs written out densely (a class with fewer than k1 + 1 samples joins
    all its pairs) and the generalised eigenproblem solved by scipy."""
    D = dense_sq(X)
    same = y[:, None] == y[None, :]
    W = np.zeros_like(D)
    Wp = np.zeros_like(D)
    for i in range(y.size):
        hits = np.flatnonzero(same[i] & (np.arange(y.size) != i))
        W[i, hits[np.argsort(D[i, hits])[:k1]]] = 1
    for c in np.unique(y):
        pairs = [(D[i, j], i, j) for i in np.flatnonzero(y == c) for j in np.flatnonzero(y != c)]
        for _, i, j in sorted(pairs)[:k2]:
            Wp[i, j] = 1
    W, Wp = np.maximum(W, W.T), np.maximum(Wp, Wp.T)
    S_w = X.T @ (np.diag(W.sum(1)) - W) @ X
    S_p = X.T @ (np.diag(Wp.sum(1)) - Wp) @ X
    sigma1 = np.linalg.svd(S_w, compute_uv=False)[0]
    vals, V = scipy.linalg.eigh(S_p, S_w + lam * sigma1 * np.eye(X.shape[1]))
    return V[:, ::-1], vals[::-1]


def test_mfa_matches_a_dense_reference():
    X, y = blobs(9, n=45, d=4)
    ref, vals = mfa_reference(X, y, 3, 10, 1e-6)
    est = make("mfa", {"k1": 3, "k2": 10, "lam": 1e-6}).fit(X, y)
    np.testing.assert_allclose(np.abs(est.components_), np.abs(ref.T), rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(est.fit_info()["eigenvalues"], vals, rtol=1e-9)


# --- bad input ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name, params, message", [
    ("i_mfa", {"k_h": 2, "k_m": 6}, "k_m = 6 exceeds the misses available: the largest class "
                                    "leaves 5"),
    ("mfa", {"k1": 2, "k2": 46}, "k2 must be an integer in \\[1, 45\\]"),
    ("boostmdm", {"lam": 0}, "lam must be a number > 0, got 0"),
    ("boostmdm_g", {"lam": -1.0}, "lam must be a number > 0"),
    ("gi_relief", {"lam": 0.0}, "lam must be a number > 0"),
    ("mfa", {"lam": 0}, "lam must be a number > 0"),
    ("boostmdm_g", {"mu": -0.5}, "mu must be a number >= 0 or None"),
    ("boostmdm_g", {"mu_neighbor": 14}, "mu_neighbor = 14 exceeds the n_train - 1 = 13"),
    ("boostmdm", {"max_boost_iter": 0}, "max_boost_iter must be an integer >= 1 or None"),
    ("boostmdm_g", {"set_size": 5}, "set_size = 5 must be at least mu_neighbor = 7"),
    ("gi_relief", {"set_size": 0}, "set_size must be an integer >= 1 or None"),
])
def test_bad_parameters_are_clear_errors(name, params, message):
    y = np.array([0] * 5 + [1] * 9)  # smallest class 5 (4 hits), largest leaves 5 misses
    X = np.random.default_rng(0).normal(size=(14, 3))
    with pytest.raises(ValueError, match=message):
        make(name, params).fit(X, y)


@pytest.mark.parametrize("name", [*BOOSTED, "mfa"])
def test_a_single_class_or_a_singleton_class_is_a_clear_error(name):
    X = np.random.default_rng(0).normal(size=(12, 3))
    with pytest.raises(ValueError, match="class"):
        make(name).fit(X, np.zeros(12, dtype=int))
    with pytest.raises(ValueError, match="every class needs at least 2 samples"):
        make(name).fit(X, np.array([0] * 11 + [1]))


def test_a_class_smaller_than_k_h_plus_one_takes_all_its_hits():
    """Yeast's smallest class has 5 samples (about 4 in a training part) while Table 2 sets
    k_h = 5: such a class uses all its hits, each weighted 1 / (N_c - 1); the other samples keep
    their k_h nearest, weighted 1 / k_h."""
    from dmlbench.solvers.margins import SetRule

    rng = np.random.default_rng(1)
    y = np.array([0] * 3 + [1] * 9)
    Z = rng.normal(size=(12, 2))
    hits, _, _ = SetRule("nearest", 4, 1).sets(Z, y)
    D2 = ((Z[:, None] - Z[None]) ** 2).sum(-1)
    expected = np.empty(12)
    for i in range(12):
        same = np.flatnonzero((y == y[i]) & (np.arange(12) != i))
        nearest = same[np.argsort(D2[i, same], kind="stable")][:4]
        expected[i] = D2[i, nearest].mean()
    np.testing.assert_allclose(hits.f(Z), expected, rtol=1e-12)
    c = rng.dirichlet(np.ones(12))
    S = sum(c[i] * sum(w * np.outer(Z[i] - Z[j], Z[i] - Z[j])
                       for j, w in zip(hits.index[i], hits.weight[i])) for i in range(12))
    np.testing.assert_allclose(hits.scatter(Z, c), S, rtol=1e-12)
    assert make("boostmdm_k", {"k_h": 4, "k_m": 2}).fit(Z, y).components_.shape[1] == 2


def test_mfa_joins_all_pairs_of_a_class_smaller_than_k1_plus_one():
    rng = np.random.default_rng(2)
    y = np.array([0] * 3 + [1] * 12)
    X = rng.normal(size=(15, 3)) + 2 * y[:, None]
    ref, vals = mfa_reference(X, y, 5, 4, 1e-6)   # class 0: all 3 of its pairs
    est = make("mfa", {"k1": 5, "k2": 4, "lam": 1e-6}).fit(X, y)
    np.testing.assert_allclose(np.abs(est.components_), np.abs(ref.T), rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(est.fit_info()["eigenvalues"], vals, rtol=1e-9)


def test_a_first_base_metric_that_does_not_improve_the_bound_is_kept_alone():
    """gamma_1 <= 0 (labels with no margin structure): the boosted fit keeps Q_1 alone, the same
    metric as one boosting iteration (I-MFA), instead of failing; fit_info says so."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 4)), rng.integers(0, 3, 40)
    boosted = make("boostmdm_k", {"k_h": 3, "k_m": 3}).fit(X, y)
    info = boosted.fit_info()
    assert info["first_gamma_nonpositive"] and info["gamma"][0] <= 0
    assert info["n_boost_iter"] == 1
    from dmlbench.solvers.margins import SetRule

    Xc = X - X.mean(axis=0)
    L = base_learner(Xc, y, np.full(40, 1 / 40), SetRule("nearest", 3, 3), 1e-8).L  # Q_1
    ours, ref = dense_sq(boosted.transform(X)), dense_sq(X @ L)
    np.testing.assert_allclose(ours / ours.max(), ref / ref.max(), rtol=1e-9, atol=1e-12)
    assert "first_gamma_nonpositive" not in make("boostmdm_k", {"k_h": 3, "k_m": 3}).fit(
        *blobs(5, n=40, d=4)).fit_info()


def test_a_hit_scatter_at_rounding_level_gives_no_vectors_instead_of_failing():
    """keel-monk-2 (categorical features): after four components the hits sit on their samples
    in the remaining null space, and the block scatter C_t came out as rounding noise with a
    negative eigenvalue (-1e-16) larger than its ridge lam sigma_1 (3e-24): the Cholesky
    factorisation of the right-hand matrix failed."""
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(40, 2))
    w = np.full(40, 1 / 40)
    Q = np.linalg.qr(rng.normal(size=(2, 2)))[0]
    C_noise = Q @ np.diag([-1.1e-16, 2.8e-16]) @ Q.T
    S = -np.diag([0.56, 0.37])
    with pytest.raises(np.linalg.LinAlgError):  # the right-hand matrix as the paper writes it
        scipy.linalg.eigh(S, C_noise + 1e-8 * 2.8e-16 * np.eye(2))
    assert margins.rounding_level(X, w) > 2.8e-16
    V, vals = margins.generalized_eigenvectors(S, C_noise, 1e-8,
                                               zero_below=margins.rounding_level(X, w))
    assert V.shape == (2, 0) and vals.size == 0



# --- the large-data form of BoostMDM-G: truncated Gaussian sets ---------------------------------

@pytest.mark.parametrize("side", ["hits", "misses"])
def test_truncated_gaussian_sets_keeping_every_member_are_the_full_sets(side):
    """`set_size` at least every side's size: the same mu, f values and scatter as the full
    Gaussian sets (the dense softmax weights of section 2.6.2), and a bound of 0."""
    X, y = blobs(0, n=40, d=5, scales=False)
    Z = X @ np.random.default_rng(1).normal(size=(5, 3))
    w = np.random.default_rng(2).dirichlet(np.ones(y.size))
    hits, misses, mu = margins.SetRule("gaussian", size=40).sets(Z, y)
    assert mu == pytest.approx(table2_mu(Z), rel=1e-10)
    sets = hits if side == "hits" else misses
    psi = dense_psi(Z, y, side, None, mu)
    np.testing.assert_allclose(sets.f(X), np.sum(psi * dense_sq(X), axis=1), rtol=1e-9)
    np.testing.assert_allclose(sets.scatter(X, w), laplacian_scatter(X, w[:, None] * psi),
                               rtol=1e-9, atol=1e-10)
    assert sets.dropped == 0.0


@pytest.mark.parametrize("mu", [None, 0.5, 5.0])
@pytest.mark.parametrize("size", [7, 12])
def test_truncated_gaussian_sets_are_within_their_bound_of_the_full_sets(mu, size):
    """Each sample's truncated weights (its `size` nearest hits or misses, by brute force) are
    the full softmax weights renormalised over them, and differ from the full ones by at most
    the reported bound in total variation (the weight share left out)."""
    X, y = blobs(3, n=60, d=4, scales=False)
    hits, misses, mu_used = margins.SetRule("gaussian", mu=mu, size=size).sets(X, y)
    if mu is None:
        assert mu_used == pytest.approx(table2_mu(X), rel=1e-10)
    for side, sets in (("hits", hits), ("misses", misses)):
        full = dense_psi(X, y, side, None, mu_used)
        nearest = dense_psi(X, y, side, size, None) > 0
        truncated = np.zeros_like(full)
        np.put_along_axis(truncated, sets.index, sets.weight, axis=1)
        np.testing.assert_array_equal(truncated > 0, nearest & (full > 0))
        renormalised = np.where(nearest, full, 0.0)
        renormalised /= renormalised.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(truncated, renormalised, rtol=1e-9, atol=1e-15)
        total_variation = 0.5 * np.abs(truncated - full).sum(axis=1)
        assert total_variation.max() <= sets.dropped * (1 + 1e-9)
        assert sets.dropped < 1


@pytest.mark.parametrize("name", ["boostmdm_g", "gi_relief"])
def test_set_size_of_every_member_fits_the_default_metric(name):
    """The method with `set_size` covering all hits and misses learns the default form's metric
    and records the form and a truncation bound of 0; a smaller size records its bound."""
    X, y = blobs(1)
    default = make(name, {}).fit(X, y)
    whole = make(name, {"set_size": y.size}).fit(X, y)
    np.testing.assert_allclose(whole.metric_, default.metric_, rtol=1e-8,
                               atol=1e-10 * np.abs(default.metric_).max())
    assert whole.fit_info()["truncation_bound"] == [0.0] * whole.fit_info()["n_boost_iter"]
    assert whole.fit_info()["scale_form"] == f"set_size={y.size}"
    assert default.fit_info()["scale_form"] == "set_size=None"
    small = make(name, {"set_size": 10}).fit(X, y).fit_info()
    assert all(0 < b < 1 for b in small["truncation_bound"])

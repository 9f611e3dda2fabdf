"""Local GQD metrics (RMVEM, RMLE, MiniVenn) against a direct dense computation per query, their
leave-one-out model selection against brute force, per-k evaluation, and bad input; KLHP against
a per-query least-squares solution."""

import numpy as np
import pytest

import mvce_reference as reference
from dmlbench import data
from dmlbench.measure.evaluation import evaluate
from dmlbench.measure.knn_rule import accuracy_per_k, knn_vote
from dmlbench.methods import local, make
from dmlbench.methods.local import metrics as local_metrics
from dmlbench.methods.local import search as local_search
from dmlbench.methods.klhp import hyperplane_distances


def blobs(n=45, d=3, seed=0, classes=3):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % classes
    X = rng.normal(size=(n, d)) * rng.uniform(0.3, 3.0, size=d) + y[:, None] * 1.5
    return X, y


def dense_metric(A, kind, rho=None, tau=None, rank=None):
    lam, V = np.linalg.eigh(A)
    lam, V = lam[::-1], V[:, ::-1]
    if kind == "literal":
        g = lam.copy()
    elif kind == "inverse":
        g = 1.0 / lam
    else:  # MiniVenn, Abou-Moustafa 2007 Alg. 1
        g = np.where(lam / lam.sum() > tau, rho, 1.0 / lam)
    if rank is not None:
        g[rank:] = 0.0
    return (V * g) @ V.T


def band_of(tol):
    """The tie band of the local metrics for MVCE gap `tol`, from the bound written out."""
    x_hi = 1 + tol + np.sqrt(tol ** 2 + 2 * tol)
    return max(1e-4, x_hi / (1 - np.sqrt(2 * tol)) - 1)


def tie_rule(d2, e2, band, depth):
    """The local metrics' tie rule (docs/papers/abou-moustafa-2017.md), one query, plain Python:
    sort by squared distance (then index); the smallest remaining value v opens a group of every
    value <= v (1 + band); groups in order, inside a group by Euclidean distance then index; each
    reports sqrt(v)."""
    order = sorted(range(len(d2)), key=lambda j: (d2[j], j))
    out, i = [], 0
    while i < len(order):
        v = d2[order[i]]
        group = [j for j in order[i:] if d2[j] <= v * (1 + band)]
        out += [(j, np.sqrt(v)) for j in sorted(group, key=lambda j: (e2[j], j))]
        i += len(group)
    return np.array([dist for _, dist in out[:depth]]), np.array([j for j, _ in out[:depth]])


def dense_search(X, Q, m, eps, kind, depth, weights="mvce", exclude=None, nbr_space=None,
                 tol=1e-9, **opts):
    """Per query: m Euclidean (or given-space) nearest training points, A from the independent
    MVCE reference (or uniform weights), the dense d x d metric, distances to every training
    point, ordered by the tie rule."""
    space_x, space_q = (X, Q) if nbr_space is None else nbr_space
    dists, inds = [], []
    for i, q in enumerate(Q):
        e = np.linalg.norm(space_x - space_q[i], axis=1)
        if exclude is not None:
            e[exclude[i]] = np.inf
        nb = np.lexsort((np.arange(len(X)), e))[:m]
        Z = X[nb] - q
        w = reference.weights(Z, eps) if weights == "mvce" else np.full(m, 1.0 / m)
        M = dense_metric(reference.dense_matrix(Z, w, eps), kind, **opts)
        v = X - q
        d2 = np.maximum(np.einsum("nd,de,ne->n", v, M, v), 0)
        e2 = np.einsum("nd,nd->n", v, v)
        if exclude is not None:
            d2[exclude[i]] = np.inf
        dist, ind = tie_rule(d2, e2, band_of(tol) if weights == "mvce" else 1e-4, depth)
        dists.append(dist)
        inds.append(ind)
    return np.array(dists), np.array(inds)


@pytest.mark.parametrize("name, params, kind, opts", [
    ("rmvem", {"m": 6}, "literal", {}),              # m > d
    ("rmvem", {"m": 6, "form": "inverse"}, "inverse", {}),
    ("rmvem", {"m": 6, "rank": 2}, "literal", {"rank": 2}),
    ("rmle", {"m": 7}, "literal", {}),
    ("minivenn", {"m": 6, "rho": 0.3, "tau": 0.2, "neighbourhood": "euclidean"}, "minivenn",
     {"rho": 0.3, "tau": 0.2}),
])
def test_distances_equal_a_dense_computation_per_query(name, params, kind, opts):
    X, y = blobs(d=3)
    Q = blobs(n=8, d=3, seed=1)[0]
    est = make(name, params).fit(X, y)
    dist, ind = est.kneighbors(Q, 10)
    eps = est.eps
    ref_d, ref_i = dense_search(X, Q, params["m"], eps, kind, 10,
                                weights="uniform" if name == "rmle" else "mvce", **opts)
    np.testing.assert_allclose(dist, ref_d, rtol=1e-7, atol=1e-9)
    np.testing.assert_array_equal(ind, ref_i)


def test_packed_candidates_are_each_rows_true_columns():
    """The exact pass's candidates: per row, the columns marked inside (np.flatnonzero), the
    rest of the row padding marked not valid; rows with one, several and all columns marked."""
    rng = np.random.default_rng(5)
    inside = rng.random((7, 30)) < 0.2
    inside[:, 3] = True
    inside[2] = True
    cand, valid = local_search._packed(inside)
    assert cand.shape == (7, 30) and valid.shape == cand.shape
    for row in range(7):
        assert sorted(cand[row][valid[row]]) == list(np.flatnonzero(inside[row]))


@pytest.mark.parametrize("form", ["literal", "inverse"])
def test_gqd_factor_rebuilds_the_metric_matrix(form):
    """The Cholesky route `search` gets for m >= d: unit columns V and gains g with
    V diag(g) V^T = A or A^{-1} (numpy's dense inverse) on features scaled over two decades."""
    rng = np.random.default_rng(4)
    Z = rng.normal(size=(5, 9, 6)) * np.logspace(-1, 1, 6)  # cond(A) about 1e4
    A = np.swapaxes(Z, 1, 2) @ Z / 9 + 1e-4 * np.eye(6)
    V, g = local.gqd_factor(A, form)
    M = A if form == "literal" else np.linalg.inv(A)
    np.testing.assert_allclose(np.linalg.norm(V, axis=1), 1.0, rtol=1e-12)
    rebuilt = (V * g[:, None, :]) @ np.swapaxes(V, 1, 2)
    scale = np.linalg.norm(M, axis=(1, 2))[:, None, None]
    assert np.all(np.abs(rebuilt - M) <= 1e-9 * scale)  # rounding: about cond(A) 1e-16


@pytest.mark.parametrize("form", ["literal", "inverse"])
def test_m_below_d_span_form_equals_dense(form):
    X, y = blobs(n=40, d=12, seed=2)
    Q = blobs(n=5, d=12, seed=3)[0]
    est = make("rmvem", {"m": 5, "form": form, "eps": 1e-2}).fit(X, y)
    dist, ind = est.kneighbors(Q, 8)
    ref_d, ref_i = dense_search(X, Q, 5, 1e-2, form, 8)
    np.testing.assert_allclose(dist, ref_d, rtol=1e-6)
    np.testing.assert_array_equal(ind, ref_i)


def test_cosine_neighbourhoods_and_train_kneighbors_leave_one_out():
    X, y = blobs(n=30, d=3, seed=4)
    X = X + 5.0  # keep away from the origin
    est = make("minivenn", {"m": 5, "rho": 0.5, "tau": 0.3}).fit(X, y)
    unit = X / np.linalg.norm(X, axis=1, keepdims=True)
    dist, ind = est.train_kneighbors(4)
    ref_d, ref_i = dense_search(X, X, 5, 0.1, "minivenn", 4, exclude=np.arange(30),
                                nbr_space=(unit, unit), rho=0.5, tau=0.3)
    np.testing.assert_allclose(dist, ref_d, rtol=1e-7)
    np.testing.assert_array_equal(ind, ref_i)


@pytest.mark.parametrize("distances", ["gram rows built per chunk", "span form"])
@pytest.mark.parametrize("form", ["literal", "inverse"])
def test_batches_chunks_and_both_distance_forms_give_the_same_lists(monkeypatch, form,
                                                                    distances):
    """The Gram form with the training points' rows kept, against small batches and blocks with
    the rows built a few training points at a time (past `GRAM_BYTES`: large training sets) or
    with the span form."""
    X, y = blobs(n=50, d=4, seed=5)
    Q = blobs(n=12, d=4, seed=6)[0]
    est = make("rmvem", {"m": 7, "form": form}).fit(X, y)
    assert est._train.use_gram(4) and est._train.gram is not None
    whole = est.kneighbors(Q, 6)
    monkeypatch.setattr(local_metrics, "MVCE_BATCH", 1)
    monkeypatch.setattr(local_search, "MAX_BLOCK_BYTES", 1)
    monkeypatch.setattr(local_search, "GRAM_BYTES", 0)  # rows not kept
    monkeypatch.setattr(local_search, "GRAM_CHUNK_BYTES", 3 * 8 * 15)  # 3 training points
    if distances == "span form":
        monkeypatch.setattr(local_search.TrainingPoints, "use_gram", lambda self, r: False)
    est = make("rmvem", {"m": 7, "form": form}).fit(X, y)
    assert est._train.gram is None
    small = est.kneighbors(Q, 6)
    np.testing.assert_allclose(small[0], whole[0], rtol=1e-9)
    np.testing.assert_array_equal(small[1], whole[1])


@pytest.mark.parametrize("name, params", [("rmle", {"m": 6}), ("rmvem", {"m": 6}),
                                          ("rmvem", {"m": 6, "form": "inverse"})])
def test_near_ties_give_the_same_list_alone_in_a_batch_and_in_small_chunks(name, params,
                                                                          monkeypatch):
    """One-decimal data offset by 1000: distances equal in decimal differ by the binary rounding
    of the data only; the order may depend on the query and the training point, never on the
    other queries of its chunk."""
    rng = np.random.default_rng(3)
    X = 1000.0 + np.round(rng.uniform(0, 1, size=(105, 3)), 1)
    Q = 1000.0 + np.round(rng.uniform(0, 1, size=(40, 3)), 1)
    est = make(name, params).fit(X, np.arange(105) % 3)
    whole = est.kneighbors(Q, 12)
    alone = [est.kneighbors(Q[i:i + 1], 12) for i in range(len(Q))]
    np.testing.assert_array_equal(np.concatenate([a[1] for a in alone]), whole[1])
    np.testing.assert_allclose(np.concatenate([a[0] for a in alone]), whole[0], rtol=1e-12)
    monkeypatch.setattr(local_metrics, "MVCE_BATCH", 1)
    monkeypatch.setattr(local_metrics, "MAX_BLOCK_BYTES", 1)
    np.testing.assert_array_equal(est.kneighbors(Q, 12)[1], whole[1])


@pytest.mark.parametrize("distances", ["gram rows kept", "gram rows per chunk", "span form"])
def test_leave_one_out_lists_do_not_depend_on_the_search_blocks(monkeypatch, distances):
    """The training set's lists (each point's own index excluded) searched in blocks of one
    query equal the lists of one block, with the Gram form (its rows kept, or built per chunk
    of training points) and with the span form."""
    if distances != "gram rows kept":
        monkeypatch.setattr(local_search, "GRAM_BYTES", 0)
        monkeypatch.setattr(local_search, "GRAM_CHUNK_BYTES", 7 * 8 * 15)
    if distances == "span form":
        monkeypatch.setattr(local_search.TrainingPoints, "use_gram", lambda self, r: False)
    X, y = blobs(n=60, d=4, seed=7)
    est = make("rmvem", {"m": 7}).fit(X, y)
    assert (est._train.gram is not None) == (distances == "gram rows kept")
    whole = est.train_kneighbors(5)
    monkeypatch.setattr(local_search, "MAX_BLOCK_BYTES", 1)
    blocks = est.train_kneighbors(5)
    np.testing.assert_array_equal(blocks[1], whole[1])
    np.testing.assert_allclose(blocks[0], whole[0], rtol=1e-12)
    assert not np.any(blocks[1] == np.arange(60)[:, None])


def test_leave_one_out_selection_per_k_equals_brute_force():
    X, y = blobs(n=36, d=2, seed=7)
    grid = [3, 5, 8]
    est = make("rmvem", {"m_grid": grid, "k_select": [1, 3]}).fit(X, y)
    errors = np.zeros((len(grid), 2))
    for i, m in enumerate(grid):
        _, ind = dense_search(X, X, m, 1e-4, "literal", 3, exclude=np.arange(36))
        for j, k in enumerate((1, 3)):
            errors[i, j] = np.mean(knn_vote(y[ind[:, :k]], 3) != y)
    np.testing.assert_allclose(est.loo_error_[:, 0, :], errors)
    info = est.fit_info()
    for j, k in enumerate((1, 3)):
        assert info[f"m_k{k}"] == grid[int(np.argmin(errors[:, j]))]
        assert info[f"loo_error_k{k}"] == pytest.approx(errors[:, j].tolist())
    assert info["m_grid"] == [3.0, 5.0, 8.0] and info["mvce_gap_max"] >= 0


def test_train_kneighbors_reuses_the_selection_solutions_and_equals_brute_force(monkeypatch):
    """The leave-one-out search of the training set at the chosen m takes the MVCE weights the
    selection solved for the same neighbourhoods (no solve), and its lists are those of the
    independent reference; with subsampled selection queries it solves them itself."""
    X, y = blobs(n=36, d=2, seed=7)
    subsampled = make("rmvem", {"m_grid": [3, 5, 8], "k_select": [1, 3],
                                "max_selection_queries": 10, "random_state": 0}).fit(X, y)
    est = make("rmvem", {"m_grid": [3, 5, 8], "k_select": [1, 3]}).fit(X, y)
    refs = {}
    for fitted in (subsampled, est):
        m = fitted.selected_[1][0]
        refs[m] = dense_search(X, X, m, 1e-4, "literal", 4, exclude=np.arange(36))
        dist, ind = fitted.train_kneighbors(4)
        np.testing.assert_allclose(dist, refs[m][0], rtol=1e-6)
        np.testing.assert_array_equal(ind, refs[m][1])

    def no_solve(*args, **kwargs):
        raise AssertionError("train_kneighbors solved the selection's problems again")
    monkeypatch.setattr(local_metrics.mvce, "solve", no_solve)
    dist, ind = est.train_kneighbors(4)
    m = est.selected_[1][0]
    np.testing.assert_allclose(dist, refs[m][0], rtol=1e-6)
    np.testing.assert_array_equal(ind, refs[m][1])


def test_evaluate_votes_each_k_on_its_own_list():
    X, y = blobs(n=60, d=3, seed=8)
    Xt, yt = blobs(n=20, d=3, seed=9)
    est = make("rmle", {"m_grid": [4, 9, 14], "k_select": [1, 3]}).fit(X, y)
    metrics = evaluate(est, Xt, y, yt, [1, 3], hubness_k=3, timings={})
    for k in (1, 3):
        fixed = make("rmle", {"m": est.selected_[k][0]}).fit(X, y)
        _, ind = fixed.kneighbors(Xt, k)
        assert metrics[f"accuracy_k{k}"] == accuracy_per_k(ind, y, yt, [k])[k]
    with pytest.raises(ValueError, match="not in k_select"):
        est.kneighbors_per_k(Xt, [5], 5)


def test_default_grid_is_d_plus_1_to_3d_capped_by_n():
    assert local.default_m_grid(4, 100, 12) == [5, 6, 7, 8, 9, 10, 11, 12]
    assert local.default_m_grid(10, 15, 12) == [11, 12, 13, 14]
    grid = local.default_m_grid(33, 400, 12)
    assert grid[0] == 34 and grid[-1] == 99 and len(grid) == 12


def test_query_equal_to_a_training_point_and_identical_neighbours():
    X, y = blobs(n=30, d=3, seed=10)
    X[5:9] = X[4]  # five identical points
    est = make("rmvem", {"m": 4, "form": "inverse"}).fit(X, y)
    dist, ind = est.kneighbors(X[4:5], 6)
    assert set(ind[0, :5]) == {4, 5, 6, 7, 8} and np.all(dist[0, :5] == 0)
    # its neighbourhood is all equal to it: A = eps I, so the metric is Euclidean / sqrt(eps)
    e = np.linalg.norm(X - X[4], axis=1)
    np.testing.assert_allclose(dist[0, 5], np.sort(e)[5] / np.sqrt(est.eps), rtol=1e-8)


def test_relative_eps_makes_the_literal_metric_scale_equivariant():
    X, y = blobs(n=40, d=3, seed=11)
    Q = blobs(n=6, d=3, seed=12)[0]
    a = make("rmvem", {"m": 6, "eps_scale": "relative", "eps": 1e-3}).fit(X, y)
    b = make("rmvem", {"m": 6, "eps_scale": "relative", "eps": 1e-3}).fit(10 * X, y)
    da, ia = a.kneighbors(Q, 5)
    db, ib = b.kneighbors(10 * Q, 5)
    np.testing.assert_array_equal(ia, ib)
    np.testing.assert_allclose(db, 100 * da, rtol=1e-5)


@pytest.mark.parametrize("name, params, message", [
    ("rmvem", {"m": 1}, "m must be an integer >= 2 or None, got 1"),
    ("rmvem", {"m": 30}, "m = 30 must be < n_train = 30"),
    ("rmvem", {"m_grid": [4, 40]}, "m_grid: m = 40"),
    ("rmvem", {"eps": 0.0}, "eps must be a number > 0"),
    ("rmle", {"eps": -1e-4}, "eps must be a number > 0"),
    ("rmvem", {"form": "mahalanobis"}, "form must be one of"),
    ("rmvem", {"rank": 0}, "rank must be"),
    ("rmvem", {"k_select": [30]}, "k_select"),
    ("minivenn", {"tau": 0.0}, "tau must be a number in \\(0, 1\\)"),
    ("minivenn", {"tau_grid": [0.1, 1.5]}, "tau_grid must be a non-empty list"),
    ("minivenn", {"rho": 1.5}, "rho must be a number in \\[0, 1\\]"),
    ("minivenn", {"rho_grid": [-0.1]}, "rho_grid must be a non-empty list"),
    ("rmvem", {"eps_scale": "local"}, "eps_scale"),
    ("rmvem", {"neighbourhood": "cityblock"}, "neighbourhood"),
])
def test_bad_parameters_are_named(name, params, message):
    X, y = blobs(n=30)
    with pytest.raises(ValueError, match=message):
        make(name, params).fit(X, y)


def test_cosine_needs_nonzero_rows():
    X, y = blobs(n=30)
    X[3] = 0.0
    with pytest.raises(ValueError, match="X row 3 is zero"):
        make("minivenn", {"m": 5}).fit(X, y)


# ---- KLHP -------------------------------------------------------------------------------


def brute_hyperplane(x, N, lam_rel):
    mean = N.mean(axis=0)
    V = N - mean
    K = len(N)
    lam = lam_rel * np.trace(V @ V.T) / K
    if lam == 0:
        alpha = np.linalg.lstsq(V.T, x - mean, rcond=None)[0]
    else:
        A = np.vstack([V.T, np.sqrt(lam) * np.eye(K)])
        alpha = np.linalg.lstsq(A, np.concatenate([x - mean, np.zeros(K)]), rcond=None)[0]
    d2 = np.sum((x - mean - V.T @ alpha) ** 2) + lam * np.sum(alpha ** 2)
    return 0.0 if d2 <= 1e-10 * np.sum((x - mean) ** 2) else d2  # on the hyperplane


@pytest.mark.parametrize("lam", [0.0, 0.1, 5.0])
def test_hyperplane_distances_equal_least_squares(lam):
    rng = np.random.default_rng(13)
    for K in (1, 3, 6):
        N = rng.normal(size=(4, K, 5))
        x = rng.normal(size=(4, 5))
        mean = N.mean(axis=1)
        got = hyperplane_distances(x - mean, N - mean[:, None], [lam])[0]
        ref = [brute_hyperplane(x[i], N[i], lam) for i in range(4)]
        np.testing.assert_allclose(got, ref, rtol=1e-8, atol=1e-10)


def test_klhp_predictions_and_leave_one_out_selection_by_brute_force():
    X, y = blobs(n=36, d=3, seed=14)
    Xt = blobs(n=10, d=3, seed=15)[0]
    grid_K, grid_lam = [1, 3, 5], [0.0, 1.0]

    def classify(x, K, lam, skip=None):
        scores = []
        for c in range(3):
            idx = np.flatnonzero((y == c) & (np.arange(36) != skip))
            near = idx[np.lexsort((idx, np.linalg.norm(X[idx] - x, axis=1)))[:K]]
            scores.append(brute_hyperplane(x, X[near], lam))
        return int(np.argmin(scores))

    est = make("klhp", {"K_grid": grid_K, "lam_grid": grid_lam}).fit(X, y)
    loo = np.array([[np.mean([classify(X[i], K, lam, skip=i) != y[i] for i in range(36)])
                     for lam in grid_lam] for K in grid_K])
    np.testing.assert_allclose(est.loo_error_, loo)
    K, lam = est.fit_info()["K"], est.fit_info()["lam"]
    assert (grid_K.index(K), grid_lam.index(lam)) == np.unravel_index(np.argmin(loo), loo.shape)
    expected = [classify(x, K, lam) for x in Xt]
    assert est.predict(Xt, 1).tolist() == expected == est.predict(Xt, 5).tolist()


def test_klhp_bad_input():
    X, y = blobs(n=30)
    y[0] = 7  # a class with one point
    with pytest.raises(ValueError, match="has one training point"):
        make("klhp").fit(X, y)
    X, y = blobs(n=30)
    with pytest.raises(ValueError, match="K = 20 exceeds"):
        make("klhp", {"K": 20}).fit(X, y)
    with pytest.raises(ValueError, match="lam"):
        make("klhp", {"lam_grid": [-1.0]}).fit(X, y)


def wine_split():
    ds = data.build("wine")  # embedded in scikit-learn: no download
    order = np.random.default_rng(0).permutation(len(ds.y))
    train, test = order[:120], order[120:]
    return ds.X[train], ds.y[train], ds.X[test]


def test_inverse_form_neighbour_lists_do_not_depend_on_the_solver_tolerance():
    # issue 13: at the MVCE optimum every support point is at the same A^{-1} distance (KKT), so
    # with m = 8 <= d = 13 the 8 neighbours tie and solver noise used to pick the k nearest
    X, y, Q = wine_split()
    runs = [make("rmvem", {"m": 8, "form": "inverse", **p}).fit(X, y).kneighbors(Q, 5)
            for p in ({"tol": 1e-9}, {"tol": 1e-11}, {"tol": 1e-9, "solver": "titterington"},
                      {"tol": 1e-9, "solver": "newton"})]
    for dist, ind in runs[1:]:
        np.testing.assert_array_equal(ind, runs[0][1])
        np.testing.assert_allclose(dist, runs[0][0], rtol=1e-6)
    # the rule is exercised: the 5 nearest are one tie group (equal reported distances)
    dist = runs[0][0]
    assert np.mean(dist[:, 4] == dist[:, 0]) > 0.5


@pytest.mark.parametrize("form", ["literal", "inverse"])
def test_far_and_badly_scaled_data_give_the_exact_lists(form):
    # the fast distances cancel |y|^2 against |q|^2: offsets and scales must not change a list
    X, y = blobs(n=60, d=5, seed=16)
    Q = blobs(n=10, d=5, seed=17)[0]
    scale = 10.0 ** np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    X, Q = X * scale + 1e4, Q * scale + 1e4
    est = make("rmvem", {"m": 9, "form": form}).fit(X, y)
    dist, ind = est.kneighbors(Q, 6)
    ref_d, ref_i = dense_search(X, Q, 9, 1e-4, form, 6)
    np.testing.assert_array_equal(ind, ref_i)
    np.testing.assert_allclose(dist, ref_d, rtol=1e-6)

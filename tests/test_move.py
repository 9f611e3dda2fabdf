"""Move-labeled and Move-query (Shigeto 2017) against independent references: the vectorised
least-squares problem of eq. 5, the dense normal equations of the corrected eq. 6, brute-force
targets and brute-force neighbour search with the asymmetric dissimilarities of eq. 4 and 10."""

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.neighbors import KNeighborsClassifier

from dmlbench.methods import MoveLabeled, MoveQuery, make
from dmlbench.methods.move import same_class_targets
from dmlbench.methods.selection import cross_validate_knn


def blobs(n=36, d=4, seed=0, classes=3):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % classes
    X = rng.normal(size=(n, d)) + 1.5 * y[:, None] * (np.arange(d) < 2)
    return X, y


def brute_targets(X, y, k):
    """For each point, its k nearest same-class other points (ties by index)."""
    D = np.linalg.norm(X[:, None] - X[None], axis=2)
    out = []
    for i in range(len(X)):
        cand = [j for j in range(len(X)) if j != i and y[j] == y[i]]
        out.append(sorted(cand, key=lambda j: (D[i, j], j))[:k])
    return np.array(out)


@pytest.mark.parametrize("k", [1, 2])
def test_targets_are_the_nearest_same_class_points(k):
    X, y = blobs()
    sources, targets = same_class_targets(X, y, k)
    np.testing.assert_array_equal(sources, np.repeat(np.arange(len(X)), k))
    np.testing.assert_array_equal(targets.reshape(-1, k), brute_targets(X, y, k))


@pytest.mark.parametrize("lam", [0.0, 0.3, 5.0])
@pytest.mark.parametrize("n_targets", [1, 3])
def test_move_labeled_W_solves_eq5(lam, n_targets):
    """W minimises sum ||x_i - W z||^2 + lam ||W||^2: compare with lstsq on vec(W) (eq. 5
    itself) and with the dense normal equations W (X K X^T + lam I) = X J X^T (eq. 6)."""
    X, y = blobs(n=30, d=4)
    n, d = X.shape
    W = MoveLabeled(lam=lam, n_targets=n_targets).fit(X, y).W_
    T = brute_targets(X, y, n_targets)
    # eq. 5 as one least-squares problem in vec(W) (row-major): x_i[a] = sum_b W[a, b] z[b]
    rows = [np.kron(np.eye(d), X[j][None, :]) for i in range(n) for j in T[i]]
    rhs = [X[i] for i in range(n) for _ in T[i]]
    A = np.vstack(rows + [np.sqrt(lam) * np.eye(d * d)])
    b = np.concatenate(rhs + [np.zeros(d * d)])
    W_ls = np.linalg.lstsq(A, b, rcond=None)[0].reshape(d, d)
    np.testing.assert_allclose(W, W_ls, atol=1e-9)
    # the corrected eq. 6 with dense J (J_ij = 1 if x_j in T_i) and K = diag(J^T e)
    J = np.zeros((n, n))
    for i in range(n):
        J[i, T[i]] = 1
    K = np.diag(J.sum(axis=0))
    Xc = X.T  # d x n, columns are objects as in the paper
    W_ne = np.linalg.solve((Xc @ K @ Xc.T + lam * np.eye(d)).T, (Xc @ J @ Xc.T).T).T
    np.testing.assert_allclose(W, W_ne, atol=1e-9)


def test_move_query_W_solves_eq9():
    X, y = blobs(n=30, d=3)
    lam = 0.7
    W = MoveQuery(lam=lam).fit(X, y).W_
    T = brute_targets(X, y, 1)[:, 0]
    # min sum ||W x_i - z_i||^2 + lam ||W||^2  =>  W = Z^T X (X^T X + lam I)^{-1}
    ref = np.linalg.solve(X.T @ X + lam * np.eye(3), X.T @ X[T]).T
    np.testing.assert_allclose(W, ref, atol=1e-10)


@pytest.mark.parametrize("cls", [MoveLabeled, MoveQuery])
@pytest.mark.parametrize("shape", [(40, 6), (14, 30)])
@pytest.mark.parametrize("lam", [0.0, 0.5])
def test_primal_and_dual_forms_agree(cls, shape, lam):
    X, y = blobs(*shape)
    Q = blobs(*shape, seed=3)[0][:9]
    primal = cls(lam=lam, solver="primal").fit(X, y)
    dual = cls(lam=lam, solver="dual").fit(X, y)
    np.testing.assert_allclose(primal.W_, dual.W_, atol=1e-8)
    np.testing.assert_allclose(primal.embedding_, dual.embedding_, atol=1e-8)
    _, ind_p = primal.kneighbors(Q, 5)
    _, ind_d = dual.kneighbors(Q, 5)
    np.testing.assert_array_equal(ind_p, ind_d)
    auto = cls(lam=lam).fit(X, y)
    assert auto.fit_info()["solver"] == ("dual" if shape[1] > shape[0] else "primal")


def test_move_labeled_neighbours_equal_brute_force_on_mapped_labelled_points():
    X, y = blobs(n=45, d=5)
    Q = blobs(n=45, d=5, seed=7)[0]
    est = MoveLabeled(lam=0.2).fit(X, y)
    D = np.linalg.norm(Q[:, None] - (X @ est.W_.T)[None], axis=2)  # ||x - W z||, eq. 4
    dist, ind = est.kneighbors(Q, 6)
    np.testing.assert_array_equal(ind[:, 0], D.argmin(axis=1))
    np.testing.assert_allclose(dist, np.sort(D, axis=1)[:, :6], atol=1e-10)
    pred = y[ind[:, 0]]
    np.testing.assert_array_equal(pred, y[np.argmin(D, axis=1)])


def test_move_query_neighbours_equal_brute_force_on_mapped_queries():
    X, y = blobs(n=45, d=5)
    Q = blobs(n=45, d=5, seed=8)[0]
    est = MoveQuery(lam=0.2).fit(X, y)
    D = np.linalg.norm((Q @ est.W_.T)[:, None] - X[None], axis=2)  # ||W x - z||, eq. 10
    dist, ind = est.kneighbors(Q, 6)
    np.testing.assert_allclose(dist, np.sort(D, axis=1)[:, :6], atol=1e-10)
    np.testing.assert_array_equal(ind[:, 0], D.argmin(axis=1))


def test_train_kneighbors_leave_one_out_with_the_asymmetric_dissimilarity():
    X, y = blobs(n=30, d=4)
    est = MoveLabeled(lam=0.5).fit(X, y)
    D = np.linalg.norm(X[:, None] - (X @ est.W_.T)[None], axis=2)
    np.fill_diagonal(D, np.inf)
    _, ind = est.train_kneighbors(3)
    np.testing.assert_array_equal(ind, np.argsort(D, axis=1, kind="stable")[:, :3])


def test_cross_validation_equals_scikit_learn_for_the_euclidean_metric():
    X, y = blobs(n=60, d=4)
    sel = cross_validate_knn(lambda p: make("euclidean"), X, y, [{}], [1, 3, 5], folds=4,
                             random_state=2)
    splitter = StratifiedKFold(4, shuffle=True, random_state=2)
    for j, k in enumerate([1, 3, 5]):
        ref = cross_val_score(KNeighborsClassifier(k, algorithm="brute"), X, y, cv=splitter)
        assert sel.accuracy[0, j] == pytest.approx(ref.mean(), abs=1e-12)


def test_lambda_and_k_chosen_by_cross_validation_are_recorded():
    X, y = blobs(n=60, d=4)
    grid, ks = [0.01, 1.0, 100.0], [1, 3, 5]
    est = MoveLabeled(lam_grid=grid, k_grid=ks, cv=3, random_state=0).fit(X, y)
    info = est.fit_info()
    assert info["lam"] in grid and info["selected_k"] in ks and est.selected_k_ == info["selected_k"]
    ref = cross_validate_knn(lambda p: MoveLabeled(**p), X, y,
                             [{"lam": v} for v in sorted(grid, reverse=True)], ks, folds=3,
                             random_state=0)
    assert info["lam"] == sorted(grid, reverse=True)[ref.index] and info["selected_k"] == ref.k
    assert info["cv_accuracy"] == pytest.approx(list(ref.accuracy[:, ks.index(ref.k)]))
    np.testing.assert_allclose(est.W_, MoveLabeled(lam=info["lam"]).fit(X, y).W_)


@pytest.mark.parametrize("lam", [0.0, 1.0, 30.0])
def test_ridge_shrinks_the_mapped_labelled_points(lam):
    """Section 4.2: regression shrinks the mapped points relative to the responses; over the
    training pairs, sum ||W z||^2 <= sum ||x_i||^2 (a projection for lam = 0, less for lam > 0)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 20))
    y = np.arange(80) % 2
    est = MoveLabeled(lam=lam).fit(X, y)
    mapped = est.embedding_[est.targets_]
    responses = X[est.sources_]
    assert np.sum(mapped**2) <= np.sum(responses**2) * (1 + 1e-12)
    if lam > 0:
        assert np.sum(mapped**2) < np.sum((X[est.targets_] @ MoveLabeled(lam=0).fit(X, y).W_.T)**2)


@pytest.mark.parametrize("params, message", [
    ({"lam": -1.0}, "lam must be a number >= 0"),
    ({"lam": float("nan")}, "lam must be a number >= 0"),
    ({"lam_grid": [1.0, -0.1]}, "lam_grid must be a non-empty list"),
    ({"lam_grid": []}, "lam_grid must be a non-empty list"),
    ({"k_grid": [1, 3]}, "k_grid needs lam_grid"),
    ({"lam_grid": [1.0], "k_grid": [0]},
     "k_grid must be a non-empty list \\(each item an integer >= 1\\)"),
    ({"solver": "cholesky"}, "solver must be one of"),
    ({"n_targets": 0}, "n_targets must be an integer >= 1"),
    ({"lam_grid": [1.0], "cv": 1}, "cv must be an integer >= 2"),
])
@pytest.mark.parametrize("cls", [MoveLabeled, MoveQuery])
def test_bad_parameters_are_named(cls, params, message):
    X, y = blobs()
    with pytest.raises(ValueError, match=message):
        cls(**params).fit(X, y)


def test_a_class_with_one_training_point_has_no_target():
    X, y = blobs(n=30)
    y = y.copy()
    y[0] = 7
    with pytest.raises(ValueError, match=r"n_targets \+ 1 = 2 training points.*class 7: 1"):
        MoveLabeled().fit(X, y)


def test_n_targets_larger_than_a_class_is_an_error():
    X, y = blobs(n=30)  # 10 points per class
    MoveLabeled(n_targets=9).fit(X, y)
    with pytest.raises(ValueError, match=r"n_targets \+ 1 = 11 training points.*class 0: 10"):
        MoveQuery(n_targets=10).fit(X, y)


def test_cv_folds_larger_than_a_class_is_an_error():
    X, y = blobs(n=12)  # 4 points per class
    with pytest.raises(ValueError, match="cv = 5 folds needs at least 5 training points"):
        MoveLabeled(lam_grid=[1.0]).fit(X, y)

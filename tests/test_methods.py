"""The method contract for every registered method, against brute force in the learned space."""

import ast
import inspect

import numpy as np
import pytest
from sklearn.base import clone

from dmlbench.methods import REGISTRY, make

FAST = {"lmnn": {"max_iter": 10, "min_iter": 2}, "itml": {"max_iter": 20},
        "mmc": {"max_iter": 5, "max_proj": 100}, "dml_eig": {"max_iter": 20},
        "nca": {"max_iter": 10}, "nca_ss": {"max_iter": 10, "n_samples": 40},
        "nca_mb": {"max_iter": 10, "batch_size": 20}, "nca_sl": {"max_iter": 10},
        "nca_sl_kd": {"max_iter": 5}, "nca_cs": {"max_iter": 10},
        "nca_cs_back": {"max_iter": 10},
        "rmvem": {"m_grid": [5, 8]}, "rmle": {"m_grid": [5, 8]},
        "minivenn": {"m_grid": [5, 8], "rho_grid": [0.0, 1.0]},
        "klhp": {"K_grid": [1, 3], "lam_grid": [0.0, 1.0]}}
#: methods that answer neighbour queries (classifiers such as KLHP only `predict`)
SEARCHERS = sorted(n for n, c in REGISTRY.items() if c.kind != "classifier")
CLASSIFIERS = sorted(n for n, c in REGISTRY.items() if c.predicts_only)


def toy(seed=0, n=60, d=4):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], n // 3)
    X = rng.normal(size=(n, d)) + y[:, None] * np.array([2.0] + [0.0] * (d - 1))
    return X, y


def _make(name):
    params = dict(FAST.get(name, {}))
    if "random_state" in REGISTRY[name].parameter_names():
        params["random_state"] = 0
    return make(name, params)


def brute_force(est, Q, X, k, exclude_self=False):
    """The k nearest training points of each query under the fitted metric, written out: global
    ||L q - L x||, Move-labeled ||q - W x||, Move-query ||W q - x|| (Shigeto 2017, eqs. 4, 10),
    local: the dense per-query GQD of `test_local.dense_search` with the chosen m and setting;
    ordered by (distance, index)."""
    if est.kind == "local":
        from test_local import dense_search

        m, c = est.selected_[min(est.selected_)]
        cand = est.candidates_[c]
        if est.registry_name == "minivenn":
            kind, opts = "minivenn", {"rho": cand["rho"], "tau": cand["tau"]}
        else:
            kind, opts = est.form, {"rank": cand["rank"]}
        unit = (lambda A: A / np.linalg.norm(A, axis=1, keepdims=True))
        space = (unit(X), unit(Q)) if est.neighbourhood == "cosine" else None
        return dense_search(X, Q, m, est.eps, kind, k,
                            weights="uniform" if est.weighting == "uniform" else "mvce",
                            exclude=np.arange(len(X)) if exclude_self else None,
                            nbr_space=space, **opts)
    if est.kind == "global":
        Lq, Lx = Q @ est.components_.T, X @ est.components_.T
    elif est.maps_labeled:
        Lq, Lx = Q, X @ est.W_.T
    else:
        Lq, Lx = Q @ est.W_.T, X
    D = np.linalg.norm(Lq[:, None] - Lx[None], axis=2)
    if exclude_self:
        np.fill_diagonal(D, np.inf)
    ind = np.array([np.lexsort((np.arange(len(row)), row))[:k] for row in D])
    return np.take_along_axis(D, ind, axis=1), ind


@pytest.mark.parametrize("name", SEARCHERS)
def test_contract_kneighbors_sorted_and_equal_to_brute_force(name):
    X, y = toy()
    Q = toy(seed=1)[0][:15]
    est = _make(name).fit(X, y)
    dist, ind = est.kneighbors(Q, n_neighbors=7)
    assert dist.shape == ind.shape == (15, 7)
    assert np.all(np.diff(dist, axis=1) >= 0)
    ref_d, ref_i = brute_force(est, Q, X, 7)
    np.testing.assert_array_equal(ind, ref_i)
    np.testing.assert_allclose(dist, ref_d, rtol=1e-7, atol=1e-9)
    if est.kind == "global":
        assert est.components_.shape[1] == X.shape[1]
        np.testing.assert_allclose(est.transform(X), X @ est.components_.T)


@pytest.mark.parametrize("name", SEARCHERS)
def test_train_kneighbors_is_leave_one_out_by_brute_force(name):
    X, y = toy()
    est = _make(name).fit(X, y)
    dist, ind = est.train_kneighbors(3)
    ref_d, ref_i = brute_force(est, X, X, 3, exclude_self=True)
    np.testing.assert_array_equal(ind, ref_i)
    np.testing.assert_allclose(dist, ref_d, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_contract_classifiers_predict_as_a_brute_force_computation(name):
    """KLHP (the only classifier): each class's K nearest training points span a hyperplane; the
    query goes to the class of the nearest (least squares per query, `test_local`)."""
    from test_local import brute_hyperplane

    X, y = toy()
    Q = toy(seed=1)[0][:15]
    est = _make(name).fit(X, 10 + y)
    ref = []
    for q in Q:
        scores = []
        for c in range(3):
            idx = np.flatnonzero(y == c)
            near = idx[np.lexsort((idx, np.linalg.norm(X[idx] - q, axis=1)))[:est.K_]]
            scores.append(brute_hyperplane(q, X[near], est.lam_))
        ref.append(10 + int(np.argmin(scores)))
    assert est.predict(Q, 1).tolist() == ref == est.predict(Q, 5).tolist()


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_sklearn_params_roundtrip(name):
    est = _make(name)
    twin = clone(est)
    assert twin.get_params() == est.get_params()


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_nan_input_is_a_clear_error(name):
    X, y = toy()
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        _make(name).fit(X, y)


@pytest.mark.parametrize("name", sorted(n for n, c in REGISTRY.items()
                                         if getattr(c, "min_classes", 2) >= 2))
def test_a_single_class_is_a_clear_error(name):
    X, _ = toy()
    with pytest.raises(ValueError, match="class"):
        _make(name).fit(X, np.zeros(len(X), dtype=int))


def test_unknown_method_and_parameter_are_named():
    with pytest.raises(KeyError, match="Did you mean lmnn"):
        make("lmn")
    with pytest.raises(ValueError, match="has no parameter\\(s\\) \\['k_neighbours'\\]"):
        make("lmnn", {"k_neighbours": 3})


def test_metric_learn_failures_name_the_method():
    X, y = toy(n=9)
    with pytest.raises(ValueError, match="rca \\(metric-learn\\)"):
        make("rca", {"chunk_size": 2, "n_chunks": 100, "random_state": 0}).fit(X, y)


def test_rca_whole_class_chunklets_whiten_the_within_class_covariance():
    X, y = toy(n=300, d=3)
    est = make("rca").fit(X, y)
    Z = est.transform(X)
    within = sum(np.cov(Z[y == c].T, bias=True) * np.sum(y == c) for c in range(3)) / len(y)
    np.testing.assert_allclose(within, np.eye(3), atol=1e-8)


def test_low_rank_rca_is_the_whitened_leading_generalised_eigenspace():
    from scipy.linalg import eigh

    from dmlbench import data

    ds = data.build("wine")
    X, y = (ds.X - ds.X.mean(axis=0)) / ds.X.std(axis=0), ds.y
    L = make("rca", {"n_components": 2}).fit(X, y).components_
    centred = X - np.stack([X[y == c].mean(axis=0) for c in range(3)])[y]
    S_w, S_t = np.cov(centred.T, bias=True), np.cov(X.T)
    _, V = eigh(S_t, S_w)  # V^T S_w V = I, ascending eigenvalues
    V = V[:, -2:]
    np.testing.assert_allclose(L.T @ L, V @ V.T, atol=1e-8)


def test_lda_and_pca_distances_equal_scikit_learn_transforms():
    from sklearn.decomposition import PCA
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    X, y = toy(n=90, d=5)
    for ours, ref in ((make("pca", {"n_components": 3}), PCA(3, svd_solver="full")),
                      (make("lda"), LinearDiscriminantAnalysis(solver="eigen"))):
        Z = ours.fit(X, y).transform(X)
        R = ref.fit(X, y).transform(X)
        D = np.linalg.norm(Z[:, None] - Z[None], axis=2)
        DR = np.linalg.norm(R[:, None] - R[None], axis=2)
        np.testing.assert_allclose(D, DR, atol=1e-8)


@pytest.mark.parametrize("noise", [0.0, 1e-7])
def test_lda_with_a_singular_within_class_scatter_names_the_remedy(noise):
    """Exactly collinear features, and features collinear up to 1e-7 (scaled smallest eigenvalue
    of S_W about 1e-14: LAPACK's Cholesky succeeds, the directions are round-off): both are
    refused whether or not LAPACK raises on this machine."""
    X, y = toy(n=30, d=4)
    X[:, 3] = X[:, 2] + noise * np.random.default_rng(5).normal(size=30)
    with pytest.raises(ValueError, match="singular.*shrinkage"):
        make("lda").fit(X, y)
    make("lda", {"shrinkage": "auto"}).fit(X, y)
    with pytest.raises(ValueError, match="init 'pca'"):
        make("nca", {"init": "lda", "max_iter": 1}).fit(X, y)


def test_lda_refuses_more_features_than_points_and_accepts_badly_scaled_features():
    X, y = toy(n=12, d=15)  # rank of S_W <= 12 - 3
    with pytest.raises(ValueError, match="rank 9 of 15"):
        make("lda").fit(X, y)
    X, y = toy(n=60, d=4)
    X[:, 3] = X[:, 2] + 1e-3 * np.random.default_rng(5).normal(size=60)  # well-posed, just close
    X[:, 0] *= 1e6
    Z = make("lda").fit(X, y).transform(X)
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    R = LinearDiscriminantAnalysis(solver="svd").fit(X, y).transform(X)
    # the same discriminant space (scikit-learn's SVD solver never forms S_W^{-1}; it centres)
    Z = np.column_stack([Z, np.ones(len(Z))])
    P = Z @ np.linalg.pinv(Z)
    np.testing.assert_allclose(P @ R, R, atol=1e-6 * np.abs(R).max())


def test_lmnn_gives_a_small_class_as_many_target_neighbours_as_it_has_other_points():
    """metric-learn refuses n_neighbors = 3 when a class has 3 training points (lymphography's
    fibrosis class in some folds); the wrapper fits with 2, as metric-learn does when told so."""
    import metric_learn

    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(20, 3)), rng.normal(size=(20, 3)) + 2,
                   rng.normal(size=(3, 3)) - 2])
    y = np.repeat([0, 1, 2], [20, 20, 3])
    params = {"max_iter": 10, "min_iter": 2, "random_state": 0}
    method = make("lmnn", {**params, "n_neighbors": 3}).fit(X, y)
    assert method.fit_info()["target_neighbors"] == 2
    reference = metric_learn.LMNN(n_neighbors=2, **params).fit(X, y)
    np.testing.assert_allclose(method.components_, reference.components_, rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="drop_classes_below"):
        make("lmnn", params).fit(X[:-2], y[:-2])


@pytest.mark.parametrize("params", [
    {"random_state": 0},
    {"random_state": 3, "gamma": 0.5, "tol": 1e-5, "n_constraints": 60, "prior": "covariance"},
    {"random_state": 1, "gamma": 100.0, "max_iter": 7},
])
def test_itml_is_metric_learns_itml(params):
    """The compiled Bregman projections (solvers.itml_compiled) give metric-learn's ITML_Supervised:
    the same constraints, sweeps and stopping point, the metric equal to rounding."""
    import metric_learn

    rng = np.random.default_rng(2)
    X = np.vstack([rng.normal(size=(30, 4)) + shift for shift in (0, 1.5, -1.5)])
    y = np.repeat([0, 1, 2], 30)
    method = make("itml", params).fit(X, y)
    reference = metric_learn.ITML_Supervised(**params).fit(X, y)
    assert method.n_iter_ == reference.n_iter_
    if "max_iter" in params:
        assert method.n_iter_ == params["max_iter"] - 1
    M, M_ref = method.components_.T @ method.components_, reference.get_mahalanobis_matrix()
    np.testing.assert_allclose(M, M_ref, rtol=1e-9, atol=1e-12 * np.abs(M_ref).max())


# ---- numpydoc: every __init__ keyword and fitted attribute documented, defaults as in the code

def numpydoc_entries(doc: str, section: str) -> dict[str, str]:
    """{name: type line} of a numpydoc section of a (cleaned) docstring; empty when absent."""
    lines = inspect.cleandoc(doc).splitlines()
    if section not in lines or lines[lines.index(section) + 1] != "-" * len(section):
        return {}
    out = {}
    for line in lines[lines.index(section) + 2:]:
        if line and not line.startswith(" "):
            if line in ("Parameters", "Attributes", "Returns", "Notes", "References"):
                break
            name, _, kind = line.partition(" : ")
            out[name] = kind
    return out


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_the_docstring_documents_every_parameter_with_its_default(name):
    cls = REGISTRY[name]
    documented = numpydoc_entries(cls.__doc__, "Parameters")
    signature = inspect.signature(cls.__init__)
    in_order = [p for p in signature.parameters if p in cls.parameter_names()]
    assert list(documented) == in_order  # every keyword, in the signature's order
    for parameter, kind in documented.items():
        assert ", default=" in kind, f"{name}.{parameter}: no default in '{kind}'"
        written = ast.literal_eval(kind.rsplit(", default=", 1)[1])
        assert written == signature.parameters[parameter].default, f"{name}.{parameter}"


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_the_docstring_documents_every_fitted_attribute(name):
    cls = REGISTRY[name]
    documented = numpydoc_entries(cls.__doc__, "Attributes")
    est = _make(name).fit(*toy())
    fitted = {key for key in vars(est) if key.endswith("_") and not key.startswith("_")}
    assert fitted <= set(documented), f"{name}: undocumented {sorted(fitted - set(documented))}"
    source = "".join(inspect.getsource(k) for k in cls.__mro__
                     if k.__module__.startswith("dmlbench"))
    for attribute in documented:
        assert attribute.endswith("_")
        assert hasattr(est, attribute) or f"self.{attribute} =" in source, f"{name}.{attribute}"

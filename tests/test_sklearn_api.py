"""dmlbench as a scikit-learn library: every linear metric passes scikit-learn's
`check_estimator` (the checks it cannot pass declared, with the reason, in its
`expected_failed_checks`), and so do the classifiers (KLHP) and the local metrics, which score
as classifiers; every method is importable from the top level (by its class name and by its
registry name upper-cased) without importing the others at `import dmlbench`;
`MetricKNeighborsClassifier` predicts what the benchmark's evaluation scores and what
scikit-learn's k-NN classifier predicts for the Euclidean metric, and finds the neighbours
scikit-learn's `NearestNeighbors` finds; the linear metrics' `get_mahalanobis_matrix` and
`get_metric` are metric-learn's."""

import subprocess
import sys
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from sklearn.model_selection import (GridSearchCV, StratifiedKFold, cross_val_score,
                                     train_test_split)
from sklearn.neighbors import KNeighborsClassifier, NearestNeighbors
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator, check_fit2d_1sample

import dmlbench
from dmlbench import MetricKNeighborsClassifier
from dmlbench.data import registry as data_registry
from dmlbench.measure.evaluation import evaluate
from dmlbench.methods import REGISTRY
from dmlbench.methods.base import Classifier, LinearMetric
from dmlbench.methods.local import LocalMetric

#: parameters that keep each check_estimator run to seconds (iteration caps; the checks are
#: about the API, not the optimum)
FAST = {"lmnn": {"max_iter": 10, "min_iter": 1}, "itml": {"max_iter": 10},
        "mmc": {"max_iter": 5, "max_proj": 200}, "dml_eig": {"max_iter": 20},
        "nca": {"max_iter": 20}, "nca_ss": {"max_iter": 20}, "nca_mb": {"max_iter": 20},
        "nca_sl": {"max_iter": 40}, "nca_sl_kd": {"max_iter": 20}, "nca_cs": {"max_iter": 20},
        "nca_cs_back": {"max_iter": 20}, "boostmdm_k": {"k_h": 1, "k_m": 1},
        "i_mfa": {"k_h": 1, "k_m": 1}}
#: those whose checks take about a second or less on 2 cores: the quick suite runs them
QUICK = {"euclidean", "pca", "lda", "lfda", "rca", "mfa"}
LINEAR = sorted(name for name, cls in REGISTRY.items() if issubclass(cls, LinearMetric))
#: the methods that predict: the classifiers (KLHP) and the local metrics (RMVEM, RMLE, MiniVenn)
PREDICTING = sorted(name for name, cls in REGISTRY.items()
                    if issubclass(cls, (Classifier, LocalMetric)))


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n in QUICK else pytest.mark.slow)
                                  for n in LINEAR])
def test_every_linear_metric_passes_check_estimator(name):
    _passes_check_estimator(REGISTRY[name](**FAST.get(name, {})))


@pytest.mark.parametrize("name", PREDICTING)
def test_the_classifiers_and_local_metrics_pass_check_estimator(name):
    """With their default parameters (KLHP's and the local metrics' own selection included):
    NotFittedError, n_features_in_, sparse input refused with scikit-learn's message, one
    sample, a 1-D query, ... pass; the only declared failure is MiniVenn's cosine neighbourhoods
    on the check's integer data (zero rows)."""
    assert set(PREDICTING) == {"klhp", "rmvem", "rmle", "minivenn"}
    est = REGISTRY[name]()
    assert est.__sklearn_tags__().estimator_type == "classifier"
    _passes_check_estimator(est)


def _passes_check_estimator(est):
    declared = type(est).expected_failed_checks
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(est, expected_failed_checks=declared, on_fail=None,
                                  on_skip=None)
    failed = [(r["check_name"], str(r["exception"])[:200]) for r in results
              if r["status"] == "failed"]
    assert not failed, failed
    # a declared failure is a real one (not a check that passes after all)
    passed = {r["check_name"] for r in results if r["status"] == "passed"}
    assert not passed & set(declared), passed & set(declared)
    assert all(reason.strip() for reason in declared.values())


def test_the_linear_metrics_are_transformers_with_fit_transform():
    X, y = load_iris(return_X_y=True)
    est = REGISTRY["boostmdm_g"]()
    Z = est.fit_transform(X, y)
    assert np.allclose(Z, X @ est.components_.T)
    assert est.__sklearn_tags__().transformer_tags is not None
    with pytest.raises(ValueError, match="requires y to be passed"):
        REGISTRY["lda"]().fit(X, None)


def test_the_classifier_passes_check_estimator():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(MetricKNeighborsClassifier())


@pytest.mark.parametrize("metric", [None, "rmvem", "klhp", "lmnn", "move_labeled"])
def test_the_classifier_refuses_one_sample_as_scikit_learn_asks(metric):
    """Every method needs two training points; the classifier says so in scikit-learn's words
    ("1 sample"), whatever the metric (the methods' own messages name other things)."""
    est = MetricKNeighborsClassifier(None if metric is None else REGISTRY[metric]())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_fit2d_1sample("MetricKNeighborsClassifier", est)


# --- classifiers that score ----------------------------------------------------------------


@pytest.mark.parametrize("name, params", [("klhp", {}), ("rmvem", {"m_grid": [8, 16]}),
                                          ("rmle", {"m_grid": [8, 16]}),
                                          ("minivenn", {"m_grid": [8, 16]})])
def test_cross_val_score_of_a_classifier_method_is_the_benchmarks_accuracy(name, params):
    """`cross_val_score(KLocalHyperplane(), X, y)` runs, and each fold's score is the accuracy
    the benchmark's evaluation records for that fold (k = 1 for a local metric: the smallest of
    its `k_select`, the default of its `predict`)."""
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    folds = StratifiedKFold(3, shuffle=True, random_state=0)
    scores = cross_val_score(REGISTRY[name](**params), X, y, cv=folds)
    for score, (train, test) in zip(scores, folds.split(X, y)):
        est = REGISTRY[name](**params).fit(X[train], y[train])
        expected = evaluate(est, X[test], y[train], y[test], [1], 1, {})["accuracy_k1"]
        assert score == expected
    assert scores.min() > 0.6  # wine has 3 classes of 33-40 %: far above chance


def test_a_local_metric_predicts_with_the_list_chosen_for_each_k():
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y,
                                                        random_state=0)
    est = dmlbench.RMVEM(m_grid=[8, 16, 32]).fit(X_train, y_train)
    metrics = evaluate(est, X_test, y_train, y_test, [1, 3, 5], 5, {})
    for k in (1, 3, 5):
        assert np.mean(est.predict(X_test, k) == y_test) == metrics[f"accuracy_k{k}"]
    with pytest.raises(ValueError, match="not in k_select"):
        est.predict(X_test, 2)


# --- kneighbors of the classifier ------------------------------------------------------------


@pytest.mark.parametrize("n_neighbors", [1, 5])
def test_the_classifiers_kneighbors_are_scikit_learns(n_neighbors):
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)  # continuous features: no distance ties
    X_train, X_test, y_train, _ = train_test_split(X, y, random_state=0)
    ours = MetricKNeighborsClassifier(n_neighbors=3).fit(X_train, y_train)
    theirs = NearestNeighbors(n_neighbors=n_neighbors, algorithm="brute").fit(X_train)
    for query in (X_test, None):  # None: the training points, each without itself
        dist, ind = ours.kneighbors(query, n_neighbors)
        their_dist, their_ind = theirs.kneighbors(query)
        assert np.array_equal(ind, their_ind)
        assert np.allclose(dist, their_dist)
        assert np.array_equal(ours.kneighbors(query, n_neighbors, return_distance=False), ind)
    assert ours.kneighbors(X_test)[1].shape == (len(X_test), 3)  # default: its n_neighbors
    with pytest.raises(ValueError, match=r"n_neighbors must be an integer in \[1, "):
        ours.kneighbors(X_test, 0)
    # a classifier method has no neighbours to give
    assert not hasattr(MetricKNeighborsClassifier(dmlbench.KLHP()), "kneighbors")


# --- metric-learn's names --------------------------------------------------------------------


def test_get_mahalanobis_matrix_and_get_metric_are_metric_learns_on_the_same_fit():
    """LFDA runs metric-learn's own fit: ours and metric-learn's estimator, fitted on the same
    data, give the same M and the same distances."""
    import metric_learn

    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    ours = REGISTRY["lfda"](k=7).fit(X, y)
    theirs = metric_learn.LFDA(k=7).fit(X, y)
    M = ours.get_mahalanobis_matrix()
    assert M.shape == (X.shape[1], X.shape[1])
    assert np.allclose(M, theirs.get_mahalanobis_matrix(), atol=1e-10)
    for u, v in [(X[0], X[1]), (X[5], X[100])]:
        for squared in (False, True):
            assert ours.get_metric()(u, v, squared=squared) == pytest.approx(
                theirs.get_metric()(u, v, squared=squared), rel=1e-9)


@pytest.mark.parametrize("name, params", [("lmnn", {"max_iter": 30, "min_iter": 1}),
                                          ("nca", {"max_iter": 20}), ("rca", {}),
                                          ("euclidean", {}), ("pca", {"n_components": 2})])
def test_get_mahalanobis_matrix_and_get_metric_as_metric_learn_defines_them(name, params):
    """M = L^T L (a copy), and metric(u, v) what metric-learn's `MahalanobisMixin.get_metric`
    computes from the same L (and SciPy's Mahalanobis distance from M)."""
    import metric_learn
    from scipy.spatial.distance import mahalanobis

    X, y = load_iris(return_X_y=True)
    est = REGISTRY[name](**params).fit(X, y)
    reference = metric_learn.NCA()
    reference.components_ = np.array(est.components_)
    M = est.get_mahalanobis_matrix()
    assert np.allclose(M, reference.get_mahalanobis_matrix(), rtol=1e-12, atol=1e-12)
    M[0, 0] += 1.0  # a copy: the fitted metric is unchanged
    assert np.allclose(est.get_mahalanobis_matrix(), reference.get_mahalanobis_matrix())
    metric, theirs = est.get_metric(), reference.get_metric()
    for u, v in [(X[0], X[1]), (X[10], X[140]), (X[3], X[3])]:
        assert metric(u, v) == pytest.approx(theirs(u, v), rel=1e-9, abs=1e-12)
        assert metric(u, v, squared=True) == pytest.approx(theirs(u, v, squared=True),
                                                           rel=1e-9, abs=1e-12)
        assert metric(u, v) == pytest.approx(
            mahalanobis(u, v, reference.get_mahalanobis_matrix()), rel=1e-9, abs=1e-12)
    with pytest.raises(ValueError, match="two 1-D points of 4 features"):
        metric(X[:2], X[2:4])


# --- the top level ---------------------------------------------------------------------------


def test_every_registered_method_is_importable_by_its_class_name_and_alias():
    names = [cls.__name__ for cls in REGISTRY.values()]
    assert len(set(names)) == len(names)
    for name, cls in REGISTRY.items():
        assert getattr(dmlbench, cls.__name__) is cls
        assert getattr(dmlbench, name.upper()) is cls
    from dmlbench import RMVEM, BoostMDMG, MoveLabeled, NCA  # noqa: F401  (the issue's line)
    from dmlbench import KLHP, MOVE_LABELED, KLocalHyperplane  # noqa: F401  (issue 44's)
    assert KLHP is KLocalHyperplane and MOVE_LABELED is MoveLabeled
    assert {"MetricKNeighborsClassifier", "RMVEM", "LMNN", "KLHP"} <= set(dir(dmlbench))


def test_an_unknown_name_lists_the_importable_ones():
    with pytest.raises(AttributeError, match="no attribute 'Klhp'") as err:
        dmlbench.Klhp  # noqa: B018
    message = str(err.value)
    assert "did you mean 'KLHP'" in message
    for cls in REGISTRY.values():
        assert cls.__name__ in message
    assert "KLHP" in message and "MetricKNeighborsClassifier" in message
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        dmlbench.nope  # noqa: B018


def test_import_dmlbench_loads_no_method():
    code = "import sys, dmlbench; print(' '.join(m for m in sys.modules if 'dmlbench' in m))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout.split()
    assert sorted(loaded) == ["dmlbench", "dmlbench._version"]  # the version: a leaf module


# --- MetricKNeighborsClassifier --------------------------------------------------------------


def test_the_issues_grid_search_runs_on_iris():
    X, y = load_iris(return_X_y=True)
    search = GridSearchCV(MetricKNeighborsClassifier(dmlbench.RMVEM()),
                          {"n_neighbors": [1, 3], "metric__m": [10, 20]}, cv=3)
    search.fit(X, y)
    assert set(search.best_params_) == {"n_neighbors", "metric__m"}
    assert search.best_score_ > 0.9


def test_move_labeled_and_rmvem_sit_in_a_pipeline_and_cross_validate():
    X, y = load_wine(return_X_y=True)
    for metric in (dmlbench.MoveLabeled(lam=1.0), dmlbench.RMVEM()):
        scores = cross_val_score(make_pipeline(StandardScaler(),
                                               MetricKNeighborsClassifier(metric, n_neighbors=3)),
                                 X, y, cv=3)
        assert scores.shape == (3,) and scores.min() > 0.8


@pytest.mark.parametrize("loader", [load_wine, load_breast_cancer])
@pytest.mark.parametrize("k", [1, 4, 7])
def test_euclidean_predictions_are_scikit_learns(loader, k):
    X, y = loader(return_X_y=True)
    X = StandardScaler().fit_transform(X)  # continuous features: no distance ties
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    ours = MetricKNeighborsClassifier(n_neighbors=k).fit(X_train, y_train)
    theirs = KNeighborsClassifier(n_neighbors=k, algorithm="brute").fit(X_train, y_train)
    assert np.array_equal(ours.predict(X_test), theirs.predict(X_test))
    assert np.allclose(ours.predict_proba(X_test), theirs.predict_proba(X_test))


def _registered(name):
    from dmlbench.data import cache

    X, y, _ = cache.validate(name, data_registry.get(name).loader())
    return StandardScaler().fit_transform(X), y


CASES = {  # method: (parameters, data sets); balance-scale and monks-1 have many distance ties
    "euclidean": ({}, ["iris", "balance-scale", "monks-1"]),
    "lmnn": ({"max_iter": 30, "min_iter": 1}, ["iris", "wine"]),
    "move_labeled": ({"lam": 1.0}, ["wine", "balance-scale"]),
    "rmvem": ({"m_grid": [8, 16]}, ["iris", "monks-1"]),
    "klhp": ({}, ["wine"]),
}


@pytest.mark.parametrize("method, dataset", [(m, d) for m, (_, ds) in CASES.items() for d in ds])
def test_its_accuracy_is_the_benchmark_evaluations(method, dataset):
    """Same split, same fitted method class: `evaluate` (what every job records) and the
    classifier's `score` agree at every k, so the neighbours and the tie rules are the same."""
    X, y = _registered(dataset)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y,
                                                        random_state=0)
    params = CASES[method][0]
    est = REGISTRY[method](**params).fit(X_train, y_train)
    metrics = evaluate(est, X_test, y_train, y_test, [1, 3, 5], 10, {})
    for k in (1, 3, 5):
        clf = MetricKNeighborsClassifier(REGISTRY[method](**params), n_neighbors=k)
        assert clf.fit(X_train, y_train).score(X_test, y_test) == metrics[f"accuracy_k{k}"]

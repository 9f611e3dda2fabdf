"""dmlbench as a scikit-learn library: every linear metric passes scikit-learn's
`check_estimator` (the checks it cannot pass declared, with the reason, in its
`expected_failed_checks`), every method is importable from the top level without importing the
others at `import dmlbench`, and `MetricKNeighborsClassifier` predicts what the benchmark's
evaluation scores and what scikit-learn's k-NN classifier predicts for the Euclidean metric."""

import subprocess
import sys
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from sklearn.model_selection import GridSearchCV, cross_val_score, train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

import dmlbench
from dmlbench import MetricKNeighborsClassifier
from dmlbench.data import registry as data_registry
from dmlbench.measure.evaluation import evaluate
from dmlbench.methods import REGISTRY
from dmlbench.methods.base import LinearMetric

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


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n in QUICK else pytest.mark.slow)
                                  for n in LINEAR])
def test_every_linear_metric_passes_check_estimator(name):
    est = REGISTRY[name](**FAST.get(name, {}))
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


# --- the top level ---------------------------------------------------------------------------


def test_every_registered_method_is_importable_by_its_class_name():
    names = [cls.__name__ for cls in REGISTRY.values()]
    assert len(set(names)) == len(names)
    for cls in REGISTRY.values():
        assert getattr(dmlbench, cls.__name__) is cls
    from dmlbench import RMVEM, BoostMDMG, MoveLabeled, NCA  # noqa: F401  (the issue's line)
    assert {"MetricKNeighborsClassifier", "RMVEM", "LMNN"} <= set(dir(dmlbench))
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        dmlbench.Nope  # noqa: B018


def test_import_dmlbench_loads_no_method():
    code = "import sys, dmlbench; print(' '.join(m for m in sys.modules if 'dmlbench' in m))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout.split()
    assert loaded == ["dmlbench"]


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

"""The method contract (docs/architecture.md, "The method contract") and the shared bases.

Every method is a scikit-learn style estimator: `fit(X, y)` on the training part, then
`kneighbors(X_query, n_neighbors)` returns (dist, ind), sorted, indices into the training set.
`train_kneighbors(n_neighbors)` gives the leave-one-out neighbours of the training points, which
model selection on training error uses.
"""

from __future__ import annotations

import functools
import inspect

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..measure.neighbours import NON_FINITE_REMEDY, euclidean_kneighbors
from . import parameters


def check_training_data(X, y, min_classes: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Float features and integer-coded labels; `ValueError` naming the data problem."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if X.ndim != 2 or X.shape[0] < 2:
        raise ValueError(f"X must be a 2-D array with at least 2 rows, got shape {X.shape}")
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must have one label per row of X ({X.shape[0]}), got shape {y.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinite values")
    n_classes = np.unique(y).size
    if n_classes < min_classes:
        raise ValueError(f"y has {n_classes} class(es); this method needs at least {min_classes}")
    return X, y


def validated_training_data(est, X, y, min_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) of `fit` validated as scikit-learn's estimators do (`validate_data`: 2-D finite
    floats, at least 2 samples, dense, `n_features_in_` set; y class labels), then the parameters
    and the limits the data set (`check_parameters`, `check_data_limits`). A `fit` that calls it
    sets ``fit.checks_parameters = True`` (`KNeighborsMethod.__init_subclass__`)."""
    X, y = validate_data(est, X, y, dtype=np.float64, ensure_min_samples=2)
    check_classification_targets(y)
    n_classes = np.unique(y).size
    if n_classes < min_classes:
        raise ValueError(f"y has {n_classes} class(es); this method needs at least {min_classes}")
    params = est.get_params(deep=False)
    type(est).check_parameters(params)
    type(est).check_data_limits(params, X.shape[0], X.shape[1], n_classes)
    return X, y


def validated_queries(est, X) -> np.ndarray:
    """Query points of a fitted method as scikit-learn validates them (`NotFittedError` before
    `fit`, the number of features seen by `fit`, finite floats, dense)."""
    check_is_fitted(est, "n_features_in_")
    return validate_data(est, X, reset=False, dtype=np.float64)


def check_query(X, n_features: int) -> np.ndarray:
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] != n_features:
        raise ValueError(f"query X must have shape (n, {n_features}), got {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("query X contains NaN or infinite values")
    return X


class KNeighborsMethod(BaseEstimator):
    """Base of all methods: every hook the evaluation calls is declared here with its default.

    A subclass sets `family`, `papers` (short names of its source papers) and `kind` (recorded
    with its results: 'global' for a linear map, 'asymmetric', 'local' or 'classifier'),
    implements `fit`, and either answers neighbour queries (`kneighbors`, `train_kneighbors`) or,
    as a `Classifier`, only predicts. Behaviour comes from the class (`LinearMetric`,
    `Classifier`) and the hooks it overrides, never from the `kind` string.
    """

    family = "baseline"
    papers: tuple[str, ...] = ()
    kind = "global"
    #: True for a `Classifier`: evaluated through `predict` only (no neighbour lists, no hubness)
    predicts_only = False
    #: False when `fit` learns nothing from the training points: the method's distance is a
    #: fixed function of the two points, and its `search_vectors` of a point are computed from
    #: that point alone, the same bits whatever other points it was fitted on or transforms with
    #: it (e.g. the Euclidean metric). Leave-one-out jobs of such a method then run in one pass
    #: over all points (`dmlbench.run.loo`).
    learns_from_training = True
    #: every `__init__` parameter -> its constraints (`dmlbench.methods.parameters`)
    _parameter_constraints: dict = {}
    #: the checks of scikit-learn's `check_estimator` this method cannot pass, each with the
    #: reason: `check_estimator(est, expected_failed_checks=est.expected_failed_checks)`
    expected_failed_checks: dict[str, str] = {}

    def __init_subclass__(cls, **kwargs):
        """Every `fit` a subclass defines first checks the parameters (`check_parameters`) and
        the limits the training data impose (`check_data_limits`): the declarations are the one
        source of these checks, at config time and at fit (as scikit-learn's `_fit_context`)."""
        super().__init_subclass__(**kwargs)
        fit = cls.__dict__.get("fit")
        if fit is None or getattr(fit, "checks_parameters", False):
            return

        @functools.wraps(fit)
        def checked_fit(self, X, y, *args, **kw):
            params = self.get_params(deep=False)
            type(self).check_parameters(params)
            shape = np.shape(X)
            if len(shape) == 2:
                type(self).check_data_limits(params, shape[0], shape[1], np.unique(y).size)
            return fit(self, X, y, *args, **kw)

        checked_fit.checks_parameters = True
        cls.fit = checked_fit

    @classmethod
    def parameter_names(cls) -> list[str]:
        """The keyword parameters of `__init__` (what a config's `params` may set)."""
        return cls._get_param_names()

    @classmethod
    def with_defaults(cls, params: dict | None = None) -> dict:
        """Every `__init__` parameter: its value in `params`, else its default."""
        signature = inspect.signature(cls.__init__)
        return {name: signature.parameters[name].default for name in cls.parameter_names()} | (
            params or {})

    @classmethod
    def check_parameters(cls, params: dict) -> None:
        """`ParameterError` (a `ValueError` naming the parameter) when `params` (some of the
        `__init__` keywords; the others at their defaults) break a declared constraint. A method
        whose parameters constrain each other extends this (calling it first)."""
        parameters.check(cls._parameter_constraints, cls.with_defaults(params))

    @classmethod
    def check_data_limits(cls, params: dict, n_train: int, d: int, n_classes: int) -> None:
        """`ParameterError` when `params` (all of them) cannot work on `n_train` training points
        with `d` features in `n_classes` classes, e.g. more components than features. At config
        time the numbers are those of the split with the fewest training points (`config.
        training_shape`; upper bounds where the config leaves them open), so a refusal means
        that split would fail. Default: no limits."""

    def kneighbors(self, X, n_neighbors: int, progress: bool = False):
        """(dist, ind) of each query's `n_neighbors` nearest training points, sorted by
        (distance, training index); indices into the training set."""
        raise NotImplementedError(f"{type(self).__name__} answers no neighbour queries")

    def train_kneighbors(self, n_neighbors: int):
        """Leave-one-out neighbours of the training points (each point's own row excluded):
        what model selection on training error and the training-set hubness use."""
        raise NotImplementedError(f"{type(self).__name__} answers no neighbour queries")

    def kneighbors_per_k(self, X, ks, n_neighbors: int, progress: bool = False) -> dict:
        """{k: (dist, ind)}: the neighbour list the k-NN rule with k votes uses. A method whose
        list depends on k (hyper-parameters chosen per k, e.g. RMVEM's neighbourhood size)
        overrides this; by default one list serves every k."""
        lists = self.kneighbors(X, n_neighbors, progress=progress)
        return dict.fromkeys(ks, lists)

    @property
    def selected_k(self) -> int | None:
        """The test-time k the method chose itself with its hyper-parameters (e.g. by
        cross-validation), or None; `k_selection: loo` then uses it."""
        return getattr(self, "selected_k_", None)

    def sweep_embeddings(self, X_test) -> tuple[np.ndarray, np.ndarray] | None:
        """(test, training) points mapped by a linear map whose columns a dimension sweep adds
        one at a time, or None when the method has no such map (`dimension_sweep` skips it)."""
        return None

    def search_vectors(self, X=None) -> tuple[np.ndarray, np.ndarray] | None:
        """(queries, labelled points) as vectors of one space in which the method's distance is
        the Euclidean distance: the rows of X as queries (the training points' own query vectors
        when X is None) and the training points as labelled points; None when there is no such
        space (local metrics). Hubness reductions that need vectors (DisSim, cosine) use it."""
        return None

    def extra_metrics(self, X_test, y_test) -> dict:
        """Numbers of the method's own evaluated on the test part (e.g. the NCA rule's
        accuracy); a list of numbers is a curve. Default: none."""
        return {}

    def check_finite(self) -> None:
        """`ValueError` when the fitted metric (`components_`) or embedding (`embedding_`) holds
        NaN or inf: distances under it are not numbers, so nothing measured with it may become a
        record (the job calls this after `fit`; the neighbour search checks what it is given)."""
        for name in ("components_", "embedding_"):
            value = getattr(self, name, None)
            if value is not None and not np.all(np.isfinite(value)):
                raise ValueError(f"{getattr(self, 'registry_name', type(self).__name__)}: the "
                                 f"fitted {name} contains NaN or infinite values. "
                                 f"{NON_FINITE_REMEDY}")

    def fit_info(self) -> dict:
        """Method-specific facts worth recording: chosen hyper-parameters, iterations, traces.

        Values are JSON-able; in MLflow a number becomes metric `fit.<key>`, a list of numbers the
        metric history `fit.<key>` (one step per entry), anything else the tag `fit.<key>`.
        """
        return {}

    def artifacts(self, X_test, y_test) -> dict[str, np.ndarray]:
        """Arrays worth keeping for the report (the report never refits). The job saves them in
        an .npz next to its record file and MLflow stores it as the split run's artifact
        `arrays.npz` (`dmlbench.report.runs.split_arrays` reads it back). Default: none."""
        return {}


class Classifier(ClassifierMixin, KNeighborsMethod):
    """A classifier that is not a metric over the training points (e.g. KLHP): evaluated on
    accuracy only, through `predict`, with no neighbour lists and so no hubness. As a library
    it is a scikit-learn classifier: `score` is `ClassifierMixin`'s mean accuracy of `predict`
    (`cross_val_score` works), and it passes `check_estimator` (tests/test_sklearn_api.py)."""

    kind = "classifier"
    predicts_only = True

    def predict(self, X, k: int | None = None) -> np.ndarray:
        """Class labels of the queries; `k` is the k-NN rule's k, which a classifier may ignore."""
        raise NotImplementedError


class LinearMetric(TransformerMixin, KNeighborsMethod):
    """A global Mahalanobis metric d(x, y) = ||L x - L y||, L = `components_` (r x D).

    Subclasses implement `_learn_components(X, y)`; search is exact Euclidean search in the
    transformed space. A linear metric is also a scikit-learn transformer: `fit` and `transform`
    validate their input as scikit-learn's own estimators do (`validate_data`: finite numbers, 2-D,
    the number of features seen by `fit`), `fit_transform` is `TransformerMixin`'s, and the tags
    say that `fit` needs y (`sklearn.utils.estimator_checks.check_estimator` passes;
    tests/test_sklearn_api.py).
    """

    kind = "global"
    min_classes = 2

    def fit(self, X, y):
        """Learn L from the training points X (n x D) and their labels y: the input is
        validated first (`validate_data`: an error names the problem), then the parameters
        and the limits the data set (`check_parameters`, `check_data_limits`)."""
        X, y = validated_training_data(self, X, y, self.min_classes)
        self.components_ = np.asarray(self._learn_components(X, y), dtype=float)
        self.embedding_ = self.transform(X)
        return self

    fit.checks_parameters = True  # checked inside, after the input (`__init_subclass__`)

    def _learn_components(self, X, y) -> np.ndarray:
        raise NotImplementedError

    def transform(self, X) -> np.ndarray:
        """The points mapped by L: X L^T (n x r)."""
        check_is_fitted(self, "components_")
        return validate_data(self, X, reset=False, dtype=np.float64) @ self.components_.T

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True  # supervised: fit(X, y) needs the labels
        return tags

    def get_mahalanobis_matrix(self) -> np.ndarray:
        """M = L^T L (D x D), the Mahalanobis matrix of d(x, y)^2 = (x - y)^T M (x - y), as
        metric-learn's `MahalanobisMixin.get_mahalanobis_matrix` (a copy)."""
        check_is_fitted(self, "components_")
        return self.components_.T @ self.components_

    def get_metric(self):
        """The learnt distance as a function of two points, `metric(u, v, squared=False)` =
        ||L u - L v|| (its square with `squared=True`), as metric-learn's
        `MahalanobisMixin.get_metric`: for scikit-learn's `metric=` arguments, SciPy, ..."""
        check_is_fitted(self, "components_")
        components_T = self.components_.T.copy()

        def metric(u, v, squared: bool = False) -> float:
            u, v = (np.asarray(p, dtype=np.float64) for p in (u, v))
            if u.ndim != 1 or u.shape != v.shape or u.shape[0] != components_T.shape[0]:
                raise ValueError(f"metric(u, v) takes two 1-D points of {components_T.shape[0]} "
                                 f"features, got shapes {u.shape} and {v.shape}")
            diff = (u - v) @ components_T
            dist = float(diff @ diff)
            return dist if squared else float(np.sqrt(dist))

        return metric

    def kneighbors(self, X, n_neighbors: int, progress: bool = False):
        return euclidean_kneighbors(self.transform(X), self.embedding_, n_neighbors,
                                    progress=progress)

    def train_kneighbors(self, n_neighbors: int):
        return euclidean_kneighbors(self.embedding_, self.embedding_, n_neighbors,
                                    exclude_self=True)

    def search_vectors(self, X=None) -> tuple[np.ndarray, np.ndarray]:
        return (self.embedding_ if X is None else self.transform(X)), self.embedding_

    def sweep_embeddings(self, X_test) -> tuple[np.ndarray, np.ndarray] | None:
        """The embeddings by `components_`, rows in their order (rank 0: nothing to sweep)."""
        if self.components_.shape[0] == 0:
            return None
        return self.transform(X_test), self.embedding_

    def artifacts(self, X_test, y_test) -> dict[str, np.ndarray]:
        """A two-dimensional metric keeps the test set's embedding (and labels) for scatter plots."""
        if self.components_.shape[0] != 2:
            return {}
        return {"test_embedding": self.transform(X_test), "test_labels": np.asarray(y_test)}

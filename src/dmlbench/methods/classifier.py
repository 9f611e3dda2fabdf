"""Any method as a scikit-learn classifier: `MetricKNeighborsClassifier(metric, n_neighbors)`.

The k-NN rule is the benchmark's own (`measure.knn_rule`): the k nearest training points under
the method's metric, ordered by (distance, training index) (the method's `kneighbors_per_k`:
for a local metric the list chosen for this k), then a majority vote whose ties go to the
smallest class. Its predictions are therefore those the benchmark's evaluation scores
(`measure.evaluation`; tested), and with the Euclidean metric those of scikit-learn's
`KNeighborsClassifier` (brute force). With `GridSearchCV`, `cross_val_score` and `Pipeline`::

    GridSearchCV(MetricKNeighborsClassifier(RMVEM()), {"n_neighbors": [1, 3],
                                                       "metric__eps": [1e-4, 1e-2]})
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..measure.knn_rule import knn_vote
from . import plugins
from .base import KNeighborsMethod
from .euclidean import Euclidean


def as_method(metric) -> KNeighborsMethod:
    """`metric` as a benchmark method: itself when it is one, else a `plugins.adapter` around
    its class with its parameters (e.g. a metric-learn estimator)."""
    if isinstance(metric, KNeighborsMethod):
        return metric
    return plugins.adapter(type(metric))(**metric.get_params(deep=False))


def _has_distances(self) -> bool:
    return not as_method(self.metric if self.metric is not None else Euclidean()).predicts_only


class MetricKNeighborsClassifier(ClassifierMixin, BaseEstimator):
    """The k-nearest-neighbour classifier under a learnt metric.

    Parameters
    ----------
    metric : estimator or None, default=None
        Any method of dmlbench (`from dmlbench import RMVEM`, ...), or any estimator a config
        may name as a plug-in (`dmlbench.methods.plugins`: with `kneighbors`, `transform` or
        `get_mahalanobis_matrix`, e.g. a metric-learn one); None: the Euclidean distance. It is
        cloned and fitted on the training part; its parameters are reachable as
        ``metric__<name>``. A classifier method (KLHP) predicts by its own rule with k =
        `n_neighbors`.
    n_neighbors : int, default=1
        k of the k-NN rule (a local metric must have it in its `k_select`).

    Attributes
    ----------
    metric_ : KNeighborsMethod
        The fitted method.
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted (the vote's ties go to the first).
    n_features_in_ : int
        Features seen by `fit`.
    """

    def __init__(self, metric=None, n_neighbors=1):
        self.metric = metric
        self.n_neighbors = n_neighbors

    def fit(self, X, y):
        """Fit the metric on (X, y) with the labels encoded 0 .. c-1 in sorted order, as the
        benchmark's jobs do."""
        k = self.n_neighbors
        if isinstance(k, bool) or not isinstance(k, Integral) or k < 1:
            raise ValueError(f"n_neighbors must be an integer >= 1, got {k!r}")
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2)  # the methods'
        check_classification_targets(y)
        self.classes_, self._y = np.unique(y, return_inverse=True)
        if self.n_neighbors > X.shape[0]:
            raise ValueError(f"n_neighbors = {self.n_neighbors} exceeds the {X.shape[0]} "
                             "training points")
        metric = self.metric if self.metric is not None else Euclidean()
        self.metric_ = as_method(clone(metric))
        self.metric_.fit(X, self._y)
        return self

    def _neighbours(self, X) -> np.ndarray:
        """Indices of each query's k nearest training points (the list the k-NN rule with this
        k uses: `kneighbors_per_k`)."""
        k = int(self.n_neighbors)
        return self.metric_.kneighbors_per_k(X, [k], k)[k][1][:, :k]

    def _check(self, X) -> np.ndarray:
        check_is_fitted(self)
        return validate_data(self, X, reset=False, dtype=np.float64)

    def predict(self, X) -> np.ndarray:
        """The majority class of each query's k nearest training points; a tie between classes
        goes to the smallest (`measure.knn_rule.knn_vote`)."""
        X = self._check(X)
        if self.metric_.predicts_only:
            return self.classes_[np.asarray(self.metric_.predict(X, int(self.n_neighbors)))]
        return self.classes_[knn_vote(self._y[self._neighbours(X)], self.classes_.size)]

    @available_if(_has_distances)
    def kneighbors(self, X=None, n_neighbors=None, return_distance=True):
        """The `n_neighbors` (default: `n_neighbors` of the classifier) nearest training points
        of each query, as scikit-learn's `KNeighborsMixin.kneighbors`: (dist, ind) sorted by
        (distance, training index), indices into the training set; only ind with
        `return_distance=False`. X None: the training points' own neighbours, each point left
        out of its list (the method's `train_kneighbors`). The list is the one the k-NN rule
        with this classifier's k uses (a local metric's metric chosen for that k)."""
        check_is_fitted(self)
        n_neighbors = self.n_neighbors if n_neighbors is None else n_neighbors
        n_train = self._y.shape[0]
        limit = n_train if X is not None else n_train - 1
        if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, Integral) or not (
                1 <= n_neighbors <= limit):
            raise ValueError(f"n_neighbors must be an integer in [1, {limit}] (the "
                             f"{'other ' * (X is None)}training points), got {n_neighbors!r}")
        if X is None:
            dist, ind = self.metric_.train_kneighbors(int(n_neighbors))
        else:
            k = int(self.n_neighbors)
            dist, ind = self.metric_.kneighbors_per_k(self._check(X), [k], int(n_neighbors))[k]
        return (dist, ind) if return_distance else ind

    @available_if(_has_distances)
    def predict_proba(self, X) -> np.ndarray:
        """The share of each class among the k nearest training points (columns in the order
        of `classes_`); `predict` is its argmax with ties to the first column."""
        X = self._check(X)
        labels = self._y[self._neighbours(X)]
        counts = np.zeros((X.shape[0], self.classes_.size))
        np.add.at(counts, (np.repeat(np.arange(X.shape[0]), labels.shape[1]), labels.ravel()), 1)
        return counts / labels.shape[1]

"""EUC: the Euclidean metric on the (preprocessed) features, the baseline of every paper."""

from __future__ import annotations

import numpy as np

from sklearn.utils.validation import check_is_fitted, validate_data

from .base import LinearMetric
from .registry import register


@register("euclidean")
class Euclidean(LinearMetric):
    """Plain Euclidean distance: `components_` is the identity.

    Attributes
    ----------
    components_ : ndarray of shape (r, D)
        The learnt map L: d(x, y) = ||L x - L y||.
    embedding_ : ndarray of shape (n, r)
        The training points mapped, L x_i (what queries are searched against).
    n_features_in_ : int
        Features D seen by `fit`.
    """

    family = "baseline"
    papers = ("am17", "sh17", "on11", "am07", "ch12")
    min_classes = 1

    def _learn_components(self, X, y):
        return np.eye(X.shape[1])

    def transform(self, X):
        check_is_fitted(self, "components_")
        return validate_data(self, X, reset=False, dtype=np.float64)

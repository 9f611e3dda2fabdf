"""EUC: the Euclidean metric on the (preprocessed) features, the baseline of every paper."""

from __future__ import annotations

import numpy as np

from .base import LinearMetric, check_query
from .registry import register


@register("euclidean")
class Euclidean(LinearMetric):
    """Plain Euclidean distance: `components_` is the identity."""

    family = "baseline"
    papers = ("am17", "sh17", "on11", "am07", "ch12")
    min_classes = 1

    def _learn_components(self, X, y):
        return np.eye(X.shape[1])

    def transform(self, X):
        return check_query(X, self.n_features_in_)

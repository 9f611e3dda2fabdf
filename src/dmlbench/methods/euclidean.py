"""EUC: the Euclidean metric on the (preprocessed) features, the baseline of every paper.

Its map is the identity, which is never built: the search runs on the features themselves
(`embedding_` is the training data, `transform` returns the queries checked), and
`components_`, for whoever reads the metric as a matrix, is a read-only view of 2 d - 1 numbers
(`identity`), not d x d of them (480 MB at DEXTER's 7751 features).
"""

from __future__ import annotations

import numpy as np

from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .base import LinearMetric
from .registry import register


def identity(d: int) -> np.ndarray:
    """The d x d identity as a read-only strided view of 2 d - 1 numbers: row i is
    line[d - 1 - i : 2 d - 1 - i] of a line of zeros with a one in its middle."""
    line = np.zeros(max(1, 2 * d - 1))
    line[d - 1] = 1.0
    return np.lib.stride_tricks.as_strided(line[d - 1:], shape=(d, d),
                                           strides=(-line.itemsize, line.itemsize),
                                           writeable=False)


@register("euclidean")
class Euclidean(LinearMetric):
    """Plain Euclidean distance: the identity map, implicit (module docstring).

    Attributes
    ----------
    components_ : ndarray of shape (D, D)
        The identity, as a read-only strided view of 2 D - 1 numbers (`identity`): no D x D
        matrix is built.
    embedding_ : ndarray of shape (n, D)
        The training points themselves (what queries are searched against).
    n_features_in_ : int
        Features D seen by `fit`.
    """

    family = "baseline"
    papers = ("am17", "sh17", "on11", "am07", "ch12")
    min_classes = 1

    def fit(self, X, y):
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2)
        check_classification_targets(y)
        self.embedding_ = X
        return self

    fit.checks_parameters = True  # no parameters, no data limits: only the input is checked

    @property
    def components_(self) -> np.ndarray:
        return identity(self.n_features_in_)

    def transform(self, X):
        check_is_fitted(self, "embedding_")
        return validate_data(self, X, reset=False, dtype=np.float64)

    def check_finite(self) -> None:
        """Nothing to check: the identity is finite and `embedding_`, the training data, was
        checked by `fit`."""

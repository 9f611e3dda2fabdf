# config/tutorial/plugins/whiten.py
"""Whitening as a dmlbench plug-in: d(x, y) = ||W (x - y)||, the Mahalanobis distance of the
training data's covariance (shrunk towards its average variance)."""
import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data


class Whiten(TransformerMixin, BaseEstimator):
    """W = Sigma^(-1/2) with Sigma = (1 - shrinkage) S + shrinkage (tr S / D) I, S the
    covariance of the training points; the labels are not used.

    Parameters
    ----------
    shrinkage : float in [0, 1], default=0.1
        0 whitens with S itself, 1 gives the Euclidean distance (up to scale).
    """

    def __init__(self, shrinkage=0.1):
        self.shrinkage = shrinkage

    def fit(self, X, y=None):
        X = validate_data(self, X, ensure_min_samples=2)  # a covariance needs two points
        if not 0 <= self.shrinkage <= 1:
            raise ValueError(f"shrinkage must be in [0, 1], got {self.shrinkage}")
        D = X.shape[1]
        S = np.atleast_2d(np.cov(X, rowvar=False))
        sigma = (1 - self.shrinkage) * S + self.shrinkage * np.trace(S) / D * np.eye(D)
        values, vectors = np.linalg.eigh(sigma)
        self.components_ = (vectors / np.sqrt(np.maximum(values, 1e-12))).T  # W, row by row
        return self

    def transform(self, X):
        check_is_fitted(self)
        return validate_data(self, X, reset=False) @ self.components_.T

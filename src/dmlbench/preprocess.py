"""Preprocessing steps, fitted on the training part only and applied to both parts.

Steps, in the config's order (a list; empty means raw features):
- ``center``: subtract the training mean;
- ``zscore``: subtract the training mean, divide by the training standard deviation (a feature
  constant on the training part is only centred, as scikit-learn's StandardScaler does);
- ``{pca: q}``: PCA fitted on the training part; an integer q keeps q components, a float in
  (0, 1) keeps the fewest components explaining that fraction of the variance.
"""

from __future__ import annotations

import numpy as np
from sklearn.decomposition import PCA
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler


def _step(step, position: int):
    if step == "center":
        return "center", StandardScaler(with_std=False)
    if step == "zscore":
        return "zscore", StandardScaler()
    if isinstance(step, dict) and set(step) == {"pca"}:
        q = step["pca"]
        if isinstance(q, bool) or not isinstance(q, (int, float)):
            raise ValueError(f"preprocess[{position}].pca must be a number, got {q!r}")
        if isinstance(q, float) and not 0 < q < 1:
            raise ValueError(f"preprocess[{position}].pca as a fraction must be in (0, 1), got {q}")
        if isinstance(q, int) and q < 1:
            raise ValueError(f"preprocess[{position}].pca must be >= 1 components, got {q}")
        return "pca", PCA(n_components=q, svd_solver="full")
    raise ValueError(
        f"preprocess[{position}] = {step!r} is not a step; use 'center', 'zscore' or {{pca: q}}"
    )


def fit_transform(steps: list, X_train: np.ndarray, X_test: np.ndarray):
    """Fit `steps` on `X_train`; return (X_train', X_test', info) with info on what was kept."""
    if not steps:
        return X_train, X_test, {"d_in": int(X_train.shape[1]), "d_out": int(X_train.shape[1])}
    pipeline = Pipeline([_step(s, i) for i, s in enumerate(steps)])
    for name, est in pipeline.steps:
        if name == "pca" and isinstance(est.n_components, int):
            limit = min(X_train.shape)
            if est.n_components > limit:
                raise ValueError(
                    f"preprocess pca = {est.n_components} components, but the training part has "
                    f"only min(n, d) = {limit}; lower it or use a variance fraction"
                )
    Xtr = pipeline.fit_transform(X_train)
    Xte = pipeline.transform(X_test)
    info = {"d_in": int(X_train.shape[1]), "d_out": int(Xtr.shape[1])}
    if "pca" in pipeline.named_steps:
        pca = pipeline.named_steps["pca"]
        info["pca_explained_variance"] = float(np.sum(pca.explained_variance_ratio_))
    return Xtr, Xte, info

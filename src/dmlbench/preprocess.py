"""Preprocessing steps, fitted on the training part only and applied to both parts.

Steps, in the config's order (a list; empty means raw features):
- ``center``: subtract the training mean;
- ``zscore``: subtract the training mean, divide by the training standard deviation (a feature
  constant on the training part is only centred, as scikit-learn's StandardScaler does);
- ``{pca: q}``: PCA fitted on the training part; an integer q keeps q components, a float in
  (0, 1) keeps the fewest components explaining that fraction of the variance (as scikit-learn's
  PCA chooses them).

Streaming. Every step is affine and is fitted from the training mean and (co)variance of the
representation before it, which follow in closed form from the raw training moments. These are
accumulated over chunks of training rows read straight from the data set (two passes: mean, then
the scatter of centred rows), and the maps are applied chunk by chunk, so memory holds the data
set, the outputs (n x d_out) and, with PCA, the d x d covariance, never a copy of the training
part or an n x d SVD. PCA is the eigendecomposition of that covariance (the right singular vectors
of the centred data); component signs follow scikit-learn's rule (each component's largest
absolute loading is positive). When d exceeds the number of training points a PCA goes through
scikit-learn's SVD of the training part instead (the d x d covariance would outgrow the data).
"""

from __future__ import annotations

import numpy as np

#: size of one chunk of rows read from the data set
CHUNK_BYTES = 32 * 2**20


def _check_step(step, position: int):
    if step in ("center", "zscore"):
        return step, None
    if isinstance(step, dict) and set(step) == {"pca"}:
        q = step["pca"]
        if isinstance(q, bool) or not isinstance(q, (int, float)):
            raise ValueError(f"preprocess[{position}].pca must be a number, got {q!r}")
        if isinstance(q, float) and not 0 < q < 1:
            raise ValueError(f"preprocess[{position}].pca as a fraction must be in (0, 1), got {q}")
        if isinstance(q, int) and q < 1:
            raise ValueError(f"preprocess[{position}].pca must be >= 1 components, got {q}")
        return "pca", q
    raise ValueError(
        f"preprocess[{position}] = {step!r} is not a step; use 'center', 'zscore' or {{pca: q}}"
    )


def _chunks(n: int, d: int):
    step = max(1, CHUNK_BYTES // (8 * max(1, d)))
    for start in range(0, n, step):
        yield slice(start, start + step)


def training_moments(X: np.ndarray, rows: np.ndarray, covariance: bool):
    """Mean and population (1/n) variances of `X[rows]`, plus their covariance matrix if
    `covariance`, accumulated over chunks of rows (two passes: mean, then centred scatter)."""
    n, d = rows.size, X.shape[1]
    total = np.zeros(d)
    for part in _chunks(n, d):
        total += X[rows[part]].sum(axis=0)
    mean = total / n
    scatter = np.zeros((d, d)) if covariance else np.zeros(d)
    for part in _chunks(n, d):
        centred = X[rows[part]] - mean
        scatter += centred.T @ centred if covariance else np.einsum("ij,ij->j", centred, centred)
    if covariance:
        return mean, np.diag(scatter) / n, scatter / n
    return mean, scatter / n, None


def _is_constant(var: np.ndarray, mean: np.ndarray, n: int) -> np.ndarray:
    """Features whose variance is within round-off of 0 (scikit-learn's StandardScaler test)."""
    eps = np.finfo(np.float64).eps
    return var <= n * eps * var + (n * mean * eps) ** 2


def _svd_flip_rows(components: np.ndarray) -> np.ndarray:
    """Signs such that each row's largest absolute entry is positive (scikit-learn's rule)."""
    signs = np.sign(components[np.arange(len(components)), np.abs(components).argmax(axis=1)])
    signs[signs == 0] = 1
    return components * signs[:, None]


def _n_components(q, ratio: np.ndarray, limit: int) -> int:
    if isinstance(q, int):
        if q > limit:
            raise ValueError(
                f"preprocess pca = {q} components, but the training part has only "
                f"min(n, d) = {limit}; lower it or use a variance fraction"
            )
        return q
    return int(np.searchsorted(np.cumsum(ratio), q, side="right") + 1)


def fit(steps: list, X: np.ndarray, rows: np.ndarray) -> tuple[list, dict]:
    """Fit `steps` on the training rows `X[rows]`. Returns the chain of maps (each
    ("scale", s, b): x -> x * s + b, or ("project", M, c): x -> x M + c) and the info."""
    checked = [_check_step(s, i) for i, s in enumerate(steps)]
    n, d = rows.size, X.shape[1]
    mean, var, cov = training_moments(X, rows, covariance=any(k == "pca" for k, _ in checked))
    chain: list = []
    info: dict = {"d_in": int(d)}
    for kind, q in checked:
        if kind in ("center", "zscore"):
            scale = np.ones_like(mean)
            if kind == "zscore":
                scale = np.where(_is_constant(var, mean, n), 1.0, np.sqrt(var))
            chain.append(("scale", 1.0 / scale, -mean / scale))
            var = var / scale**2
            cov = None if cov is None else cov / np.outer(scale, scale)
        else:
            values, vectors = np.linalg.eigh(cov)
            values, vectors = np.clip(values[::-1], 0, None), vectors[:, ::-1]
            ratio = values / values.sum() if values.sum() > 0 else np.zeros_like(values)
            k = _n_components(q, ratio, min(n, mean.size))
            components = _svd_flip_rows(vectors[:, :k].T)
            chain.append(("project", components.T, -mean @ components.T))
            var, cov = values[:k], np.diag(values[:k])
            info["pca_explained_variance"] = float(ratio[:k].sum())
        mean = np.zeros_like(var)
    info["d_out"] = int(mean.size)
    return chain, info


def apply(chain: list, X: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The chain of maps applied to `X[rows]`, over chunks of rows."""
    d_out = X.shape[1]
    for kind, M, _ in chain:
        d_out = M.shape[1] if kind == "project" else d_out
    out = np.empty((rows.size, d_out))
    for part in _chunks(rows.size, X.shape[1]):
        x = X[rows[part]]
        for kind, M, c in chain:
            x = x @ M + c if kind == "project" else x * M + c
        out[part] = x
    return out


def fit_transform_rows(steps: list, X: np.ndarray, train: np.ndarray, test: np.ndarray):
    """Fit `steps` on `X[train]`; return (X[train]', X[test]', info), streaming over rows."""
    if not steps:
        return X[train], X[test], {"d_in": int(X.shape[1]), "d_out": int(X.shape[1])}
    if X.shape[1] > train.size and any(_check_step(s, i)[0] == "pca" for i, s in enumerate(steps)):
        return _fit_transform_sklearn(steps, X[train], X[test])
    chain, info = fit(steps, X, train)
    return apply(chain, X, train), apply(chain, X, test), info


def fit_transform(steps: list, X_train: np.ndarray, X_test: np.ndarray):
    """Fit `steps` on `X_train`; return (X_train', X_test', info) with info on what was kept."""
    if not steps:
        return X_train, X_test, {"d_in": int(X_train.shape[1]), "d_out": int(X_train.shape[1])}
    X = np.concatenate([X_train, X_test])
    train = np.arange(X_train.shape[0])
    return fit_transform_rows(steps, X, train, np.arange(X_train.shape[0], X.shape[0]))


def _fit_transform_sklearn(steps: list, X_train: np.ndarray, X_test: np.ndarray):
    """The in-memory path for d > n (a d x d covariance would exceed the data)."""
    from sklearn.decomposition import PCA
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    pipeline = []
    for i, step in enumerate(steps):
        kind, q = _check_step(step, i)
        if kind == "pca":
            if isinstance(q, int) and q > min(X_train.shape):
                _n_components(q, np.zeros(0), min(X_train.shape))
            pipeline.append(("pca", PCA(n_components=q, svd_solver="full")))
        else:
            pipeline.append((kind, StandardScaler(with_std=kind == "zscore")))
    pipeline = Pipeline(pipeline)
    Xtr = pipeline.fit_transform(X_train)
    Xte = pipeline.transform(X_test)
    info = {"d_in": int(X_train.shape[1]), "d_out": int(Xtr.shape[1])}
    if "pca" in pipeline.named_steps:
        info["pca_explained_variance"] = float(np.sum(pipeline.named_steps["pca"].explained_variance_ratio_))
    return Xtr, Xte, info

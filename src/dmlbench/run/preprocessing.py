"""Preprocessing steps, fitted on the training part only and applied to both parts.

Steps, in the config's order (a list; empty means raw features):
- ``center``: subtract the training mean;
- ``zscore``: subtract the training mean, divide by the training standard deviation (a feature
  constant on the training part is only centred, as scikit-learn's StandardScaler does);
- ``normalize``: scale every row to unit Euclidean length (scikit-learn's `normalize`; a zero row
  stays zero). Fits nothing. On unit rows the Euclidean order is the cosine order and
  ||x - y||^2 = 2 (1 - cos(x, y)): the cosine geometry of document sets;
- ``minmax``: map each feature's training range [min, max] to [0, 1], x -> (x - min) / (max -
  min), as scikit-learn's MinMaxScaler (Suarez et al. 2021 scale every fold so). A feature
  constant on the training part (range below 10 machine epsilons) gets range 1, as in
  scikit-learn: it maps to 0 on the training part and to x - min on the test part. Test values
  are not clipped to [0, 1];
- ``{pca: q}``: PCA fitted on the training part; an integer q keeps q components, a float in
  (0, 1) keeps the fewest components explaining that fraction of the variance, ``all`` keeps
  every component of non-zero variance, min(n_train - 1, d) (Chang 2012's PCA to N - 1);
- ``{image_crop: b}``: drop b pixels on every side of square images (side sqrt(d), row-major);
- ``{gaussian_blur: sigma}``: smooth each square image with a Gaussian kernel of width sigma
  pixels (scipy.ndimage.gaussian_filter, zero outside the image).
  The two image steps are per image and fit nothing.
- a preset name (`PRESETS`): the papers' preprocessing, expanded into the steps above.

Sparse data (document sets) must reach a ``{pca: q}`` (integer q) before any other step but
``normalize`` (which keeps the rows sparse): PCA then runs on the sparse matrix with implicit
centring (ARPACK), so the dense centred matrix is never formed.

Streaming (`fit_transform_rows`, what jobs call). When every step is ``center``, ``zscore``,
``minmax`` (not after a PCA), ``normalize`` or ``{pca: q}`` with a number q, each step but
``normalize`` is affine and is fitted
from the training mean, (co)variance and range of the representation before it, which follow in
closed form from the raw training moments and range (per-feature scalings with positive factors
keep each feature's minimum and maximum points). These are accumulated over chunks of training
rows read straight from the data set (two passes: mean and range, then the scatter of centred
rows), and the maps are applied chunk by chunk, so
memory holds the data set, the outputs (n x d_out) and, with PCA, the d x d covariance, never a
copy of the training part or an n x d SVD. PCA is the eigendecomposition of that covariance;
component signs follow scikit-learn's rule (each component's largest absolute loading is
positive). ``normalize`` is not affine: after it the moments (and range) are accumulated again,
over chunks of training rows passed through the maps so far. Other steps (image steps, ``pca: all``), sparse
data and a PCA with d larger than the number of training points go through the in-memory
scikit-learn pipeline (`fit_transform`).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from scipy.ndimage import gaussian_filter
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.decomposition import PCA
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    MinMaxScaler,
    StandardScaler,
    normalize,
)

#: size of one chunk of rows read from the data set when streaming
CHUNK_BYTES = 32 * 2**20

#: the papers' preprocessing, usable by name in any config's `preprocess` list
PRESETS = {
    # Abou-Moustafa 2017, section 5: crop 28x28 MNIST to 24x24, smooth with sigma 0.75, PCA to
    # 120 fitted on the training set (the one-third training subset is the data set mnist-am17)
    "abou-moustafa-2017-mnist": [{"image_crop": 2}, {"gaussian_blur": 0.75}, {"pca": 120}],
    # Shigeto 2017, section 5: document and image sets reduced to 300 dimensions by PCA, all
    # data centred; UCI sets centred; wine also z-scored
    "shigeto-2017-pca300": [{"pca": 300}, "center"],
    "shigeto-2017": ["center"],
    "shigeto-2017-wine": ["zscore"],
    # Chang 2012, section 3.2: undersampled sets reduced by PCA to N - 1 dimensions (N training
    # samples) without dropping any principal component
    "chang-2012-undersampled": [{"pca": "all"}],
}


def expand(steps: list) -> list:
    """`steps` with every preset name replaced by its steps."""
    out = []
    for step in steps or []:
        out.extend(PRESETS[step] if isinstance(step, str) and step in PRESETS else [step])
    return out


#: the steps that work on each row alone and fit nothing
PER_ROW_STEPS = ("normalize", "image_crop", "gaussian_blur")


def fits_nothing(steps: list) -> bool:
    """True when every step of `steps` (presets expanded; none at all counts) is one of
    `PER_ROW_STEPS`: a point's preprocessed row is then the same, bit for bit, whichever
    training part the steps are "fitted" on and whichever rows are transformed with it. A step
    fitted on the training part (center, zscore, minmax, pca) changes with it."""
    def name(step):
        if isinstance(step, dict) and len(step) == 1:
            return next(iter(step))
        return step if isinstance(step, str) else None
    return all(name(step) in PER_ROW_STEPS for step in expand(steps))


def _square_side(d: int, step: str, position: int) -> int:
    side = math.isqrt(d)
    if side * side != d:
        raise ValueError(f"preprocess[{position}] {step}: needs square images, but d = {d} is "
                         "not a square number")
    return side


class ImageCrop(TransformerMixin, BaseEstimator):
    """Drop `border` pixels on each side of square row-major images."""

    def __init__(self, border: int = 2, position: int = 0):
        self.border = border
        self.position = position

    def fit(self, X, y=None):
        side = _square_side(X.shape[1], "image_crop", self.position)
        if 2 * self.border >= side:
            raise ValueError(f"preprocess[{self.position}] image_crop = {self.border} leaves no "
                             f"pixel of a {side}x{side} image")
        self.side_ = side
        return self

    def transform(self, X):
        b, s = self.border, self.side_
        return np.asarray(X).reshape(-1, s, s)[:, b:s - b, b:s - b].reshape(len(X), -1)


class GaussianBlur(TransformerMixin, BaseEstimator):
    """Smooth square row-major images with an isotropic Gaussian of width `sigma` pixels."""

    def __init__(self, sigma: float = 0.75, position: int = 0):
        self.sigma = sigma
        self.position = position

    def fit(self, X, y=None):
        self.side_ = _square_side(X.shape[1], "gaussian_blur", self.position)
        return self

    def transform(self, X):
        s = self.side_
        images = np.asarray(X, dtype=np.float64).reshape(-1, s, s)
        smooth = gaussian_filter(images, sigma=(0, self.sigma, self.sigma), mode="constant")
        return smooth.reshape(len(X), -1)


class PCAAll(PCA):
    """PCA keeping min(n_train - 1, d) components: every direction of non-zero variance."""

    def fit(self, X, y=None):
        self.n_components = min(X.shape[0] - 1, X.shape[1])
        return super().fit(X, y)

    def fit_transform(self, X, y=None):
        self.n_components = min(X.shape[0] - 1, X.shape[1])
        return super().fit_transform(X, y)


def _pca(q, position: int, sparse: bool):
    if q == "all":
        if sparse:
            raise ValueError(f"preprocess[{position}].pca = all needs dense data; give an "
                             "integer number of components for a sparse data set")
        return PCAAll(svd_solver="full")
    if isinstance(q, bool) or not isinstance(q, (int, float)):
        raise ValueError(f"preprocess[{position}].pca must be a number or 'all', got {q!r}")
    if isinstance(q, float) and not 0 < q < 1:
        raise ValueError(f"preprocess[{position}].pca as a fraction must be in (0, 1), got {q}")
    if isinstance(q, int) and q < 1:
        raise ValueError(f"preprocess[{position}].pca must be >= 1 components, got {q}")
    if sparse:
        if not isinstance(q, int):
            raise ValueError(f"preprocess[{position}].pca on sparse data needs an integer "
                             f"number of components, got {q}")
        return PCA(n_components=q, svd_solver="arpack", random_state=0)
    return PCA(n_components=q, svd_solver="full")


SPARSE_REMEDY = ("start its preprocess with {pca: q} (PCA with implicit centring; `normalize` may "
                 "come first), e.g. the preset shigeto-2017-pca300")


def _step(step, position: int, sparse: bool):
    if sparse and not (step == "normalize" or isinstance(step, dict) and set(step) == {"pca"}):
        raise ValueError(
            f"preprocess[{position}] = {step!r}: the data set is sparse; {SPARSE_REMEDY}")
    if step == "normalize":
        return "normalize", FunctionTransformer(normalize, accept_sparse=True)
    if step == "center":
        return "center", StandardScaler(with_std=False)
    if step == "zscore":
        return "zscore", StandardScaler()
    if step == "minmax":
        return "minmax", MinMaxScaler()
    if isinstance(step, dict) and len(step) == 1:
        (key, value), = step.items()
        if key == "pca":
            return "pca", _pca(value, position, sparse)
        if key == "image_crop":
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"preprocess[{position}].image_crop must be a positive integer "
                                 f"number of pixels, got {value!r}")
            return "image_crop", ImageCrop(value, position)
        if key == "gaussian_blur":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ValueError(f"preprocess[{position}].gaussian_blur must be a positive "
                                 f"width in pixels, got {value!r}")
            return "gaussian_blur", GaussianBlur(float(value), position)
    raise ValueError(
        f"preprocess[{position}] = {step!r} is not a step; use 'center', 'zscore', 'minmax', "
        f"'normalize', {{pca: q}}, "
        f"{{image_crop: b}}, {{gaussian_blur: sigma}} or a preset ({', '.join(PRESETS)})"
    )


def fit_transform(steps: list, X_train, X_test):
    """Fit `steps` on `X_train`; return (X_train', X_test', info) with info on what was kept.

    Presets are expanded first (`info["expanded_steps"]` lists the steps run)."""
    expanded = expand(steps)
    sparse = sp.issparse(X_train)
    if sparse and not any(isinstance(s, dict) and "pca" in s for s in expanded):
        raise ValueError(f"the data set is sparse: {SPARSE_REMEDY}")
    if not expanded:
        return X_train, X_test, {"d_in": int(X_train.shape[1]), "d_out": int(X_train.shape[1])}
    named = []
    for i, step in enumerate(expanded):
        name, est = _step(step, i, sparse and all(s == "normalize" for s in expanded[:i]))
        named.append((f"{name}{i}" if any(n.startswith(name) for n, _ in named) else name, est))
    pipeline = Pipeline(named)
    _check_pca_sizes(pipeline, X_train)
    Xtr = pipeline.fit_transform(X_train)
    Xte = pipeline.transform(X_test)
    info = {"d_in": int(X_train.shape[1]), "d_out": int(Xtr.shape[1])}
    if expanded != list(steps):
        info["expanded_steps"] = expanded
    pcas = [est for _, est in pipeline.steps if isinstance(est, PCA)]
    if pcas:
        info["pca_explained_variance"] = float(np.sum(pcas[-1].explained_variance_ratio_))
    return Xtr, Xte, info


def _check_pca_sizes(pipeline: Pipeline, X_train) -> None:
    """A PCA asking for more components than the data have is an error naming the limit (it is
    checked for the first PCA step, whose input size is known before fitting)."""
    d = X_train.shape[1]
    for _, est in pipeline.steps:
        if isinstance(est, ImageCrop):
            side = _square_side(d, "image_crop", est.position)
            d = (side - 2 * est.border) ** 2
        elif isinstance(est, PCA) and not isinstance(est, PCAAll):
            q = est.n_components
            if isinstance(q, int):
                limit = min(X_train.shape[0], d)
                if est.svd_solver == "arpack":
                    limit -= 1
                if q > limit:
                    raise _too_many_components(q, limit, est.svd_solver == "arpack")
            return
        elif isinstance(est, PCAAll):
            return


def _chunks(n: int, d: int):
    step = max(1, CHUNK_BYTES // (8 * max(1, d)))
    for start in range(0, n, step):
        yield slice(start, start + step)


def training_range(X: np.ndarray, rows: np.ndarray, chain: list = ()) -> tuple[np.ndarray, np.ndarray]:
    """Per-feature minimum and maximum of `X[rows]` (passed through the maps of `chain`), over
    chunks of rows."""
    d = _width(chain, X.shape[1])
    lo, hi = np.full(d, np.inf), np.full(d, -np.inf)
    for part in _chunks(rows.size, X.shape[1]):
        chunk = _map(chain, X[rows[part]])
        lo, hi = np.minimum(lo, chunk.min(axis=0)), np.maximum(hi, chunk.max(axis=0))
    return lo, hi


def training_moments(X: np.ndarray, rows: np.ndarray, covariance: bool, chain: list = ()):
    """Mean and population (1/n) variances of `X[rows]` (passed through the maps of `chain`),
    plus their covariance matrix if `covariance`, accumulated over chunks of rows (two passes:
    mean, then centred scatter)."""
    n, d = rows.size, _width(chain, X.shape[1])
    total = np.zeros(d)
    for part in _chunks(n, X.shape[1]):
        total += _map(chain, X[rows[part]]).sum(axis=0)
    mean = total / n
    scatter = np.zeros((d, d)) if covariance else np.zeros(d)
    for part in _chunks(n, X.shape[1]):
        centred = _map(chain, X[rows[part]]) - mean
        scatter += centred.T @ centred if covariance else np.einsum("ij,ij->j", centred, centred)
    if covariance:
        return mean, np.diag(scatter) / n, scatter / n
    return mean, scatter / n, None


def _minmax_range(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """max - min, with 1 where it is below 10 machine epsilons (scikit-learn's
    `_handle_zeros_in_scale`, which MinMaxScaler applies)."""
    span = hi - lo
    return np.where(span < 10 * np.finfo(np.float64).eps, 1.0, span)


def _is_constant(var: np.ndarray, mean: np.ndarray, n: int) -> np.ndarray:
    """Features whose variance is within round-off of 0 (scikit-learn's StandardScaler test)."""
    eps = np.finfo(np.float64).eps
    return var <= n * eps * var + (n * mean * eps) ** 2


def _svd_flip_rows(components: np.ndarray) -> np.ndarray:
    """Signs such that each row's largest absolute entry is positive (scikit-learn's rule)."""
    signs = np.sign(components[np.arange(len(components)), np.abs(components).argmax(axis=1)])
    signs[signs == 0] = 1
    return components * signs[:, None]


def _too_many_components(q: int, limit: int, arpack: bool) -> ValueError:
    return ValueError(f"preprocess pca = {q} components, but the training part has only "
                      f"{'min(n, d) - 1' if arpack else 'min(n, d)'} = {limit}; lower it or "
                      "use a variance fraction")


def output_dim(steps: list, n_train: int, d: int, sparse: bool = False) -> tuple[int, bool]:
    """(features after `steps`, exact?) for n_train training points of d features, without
    data: exact for every step but ``{pca: fraction}``, which keeps at most min(n_train, d)
    components (how many depends on the data). Raises the errors fitting would raise where
    the sizes decide them: a PCA asking for more components than the training part has, an
    image step on d that is not a square, a crop leaving no pixel, a sparse data set without
    a ``{pca: q}`` before any step but ``normalize``."""
    expanded = expand(steps)
    if sparse and not any(isinstance(s, dict) and "pca" in s for s in expanded):
        raise ValueError(f"the data set is sparse: {SPARSE_REMEDY}")
    exact = True
    for i, step in enumerate(expanded):
        name, est = _step(step, i, sparse and all(s == "normalize" for s in expanded[:i]))
        if isinstance(est, (ImageCrop, GaussianBlur)):  # shapes from the steps themselves
            d = est.fit(np.zeros((1, d))).transform(np.zeros((1, d))).shape[1]
        elif isinstance(est, PCAAll):
            d = min(n_train - 1, d)
        elif isinstance(est, PCA):
            arpack = est.svd_solver == "arpack"
            limit = min(n_train, d) - arpack
            if isinstance(est.n_components, int):
                if est.n_components > limit:
                    raise _too_many_components(est.n_components, limit, arpack)
                d = est.n_components
            else:
                d, exact = limit, False
    return d, exact


def _n_components(q, ratio: np.ndarray, limit: int) -> int:
    if isinstance(q, int):
        if q > limit:
            raise _too_many_components(q, limit, arpack=False)
        return q
    return int(np.searchsorted(np.cumsum(ratio), q, side="right") + 1)


def fit(steps: list, X: np.ndarray, rows: np.ndarray) -> tuple[list, dict]:
    """Fit `steps` on the training rows `X[rows]`. Returns the chain of maps (each
    ("scale", s, b): x -> x * s + b, ("project", M, c): x -> x M + c, or ("normalize", None,
    None): x -> x / |x|) and the info."""
    checked = [_streamable(s) for s in steps]
    n, d = rows.size, X.shape[1]
    mean = var = cov = lo = hi = None
    chain: list = []
    info: dict = {"d_in": int(d)}
    for position, (kind, q) in enumerate(checked):
        if kind == "normalize":
            chain.append(("normalize", None, None))
            mean = None  # the moments and range of unit rows are measured again, not derived
            continue
        if mean is None:
            rest = [k for k, _ in checked[position:]]
            mean, var, cov = training_moments(X, rows, "pca" in rest, chain)
            lo, hi = training_range(X, rows, chain) if "minmax" in rest else (None, None)
        if kind == "minmax":  # x * s + b with s = 1 / range, b = -min * s, as MinMaxScaler
            if lo is None:
                raise ValueError("minmax after a PCA cannot be streamed")  # _streamable's rule
            scale = 1.0 / _minmax_range(lo, hi)
            shift = -lo * scale
            chain.append(("scale", scale, shift))
            mean, var = mean * scale + shift, var * scale**2
            cov = None if cov is None else cov * np.outer(scale, scale)
            lo, hi = lo * scale + shift, hi * scale + shift
            continue
        if kind in ("center", "zscore"):
            scale = np.ones_like(mean)
            if kind == "zscore":
                scale = np.where(_is_constant(var, mean, n), 1.0, np.sqrt(var))
            chain.append(("scale", 1.0 / scale, -mean / scale))
            var = var / scale**2
            cov = None if cov is None else cov / np.outer(scale, scale)
            if lo is not None:
                lo, hi = (lo - mean) / scale, (hi - mean) / scale
        else:
            values, vectors = np.linalg.eigh(cov)
            values, vectors = np.clip(values[::-1], 0, None), vectors[:, ::-1]
            ratio = values / values.sum() if values.sum() > 0 else np.zeros_like(values)
            k = _n_components(q, ratio, min(n, mean.size))
            components = _svd_flip_rows(vectors[:, :k].T)
            chain.append(("project", components.T, -mean @ components.T))
            var, cov = values[:k], np.diag(values[:k])
            info["pca_explained_variance"] = float(ratio[:k].sum())
            lo = hi = None
        mean = np.zeros_like(var)
    info["d_out"] = _width(chain, d)
    return chain, info


def _width(chain: list, d: int) -> int:
    """Number of columns after the maps of `chain` on d columns."""
    for kind, M, _ in chain:
        d = M.shape[1] if kind == "project" else d
    return d


def _map(chain: list, x: np.ndarray) -> np.ndarray:
    for kind, M, c in chain:
        if kind == "normalize":
            x = normalize(x)
        else:
            x = x @ M + c if kind == "project" else x * M + c
    return x


def apply(chain: list, X: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The chain of maps applied to `X[rows]`, over chunks of rows."""
    out = np.empty((rows.size, _width(chain, X.shape[1])))
    for part in _chunks(rows.size, X.shape[1]):
        out[part] = _map(chain, X[rows[part]])
    return out


def _streamable(step):
    """(kind, q) of a step the streamed path fits, or None."""
    if step in ("center", "zscore", "minmax", "normalize"):
        return step, None
    if isinstance(step, dict) and set(step) == {"pca"}:
        q = step["pca"]
        if not isinstance(q, bool) and isinstance(q, (int, float)):
            return "pca", q
    return None


def _minmax_after_pca(kinds: list[str]) -> bool:
    """A PCA's output range is not known from the moments: minmax after it runs in memory."""
    return "pca" in kinds and "minmax" in kinds[kinds.index("pca"):]


def fit_transform_rows(steps: list, X, train: np.ndarray, test: np.ndarray):
    """Fit `steps` on `X[train]`; return (X[train]', X[test]', info), streaming over rows when
    the steps allow it (see the module docstring), else through `fit_transform`."""
    expanded = expand(steps)
    kinds = [_streamable(s) for s in expanded]
    streamable = (expanded and not sp.issparse(X) and all(kinds)
                  and not (any(k == "pca" for k, _ in kinds) and X.shape[1] > train.size)
                  and not _minmax_after_pca([k for k, _ in kinds] if all(kinds) else []))
    if not streamable:
        return fit_transform(steps, X[train], X[test])
    for i, step in enumerate(expanded):
        _step(step, i, sparse=False)  # the same checks and messages as the in-memory path
    chain, info = fit(expanded, X, train)
    if expanded != list(steps):
        info["expanded_steps"] = expanded
    return apply(chain, X, train), apply(chain, X, test), info

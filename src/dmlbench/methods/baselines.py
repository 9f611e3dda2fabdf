"""Baselines from metric-learn 0.7.0 (ITML, RCA, MMC/Xing, LFDA; LMNN re-implemented in
`methods.lmnn`) behind the method contract.

Each wrapper exposes metric-learn's main hyper-parameters under metric-learn's own names and
defaults, so a config reads like metric-learn's documentation. The supervised variants draw their
pairwise constraints or chunklets at random; `random_state` (set per split by the workflow when the
config leaves it out) makes them reproducible.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.decomposition import PCA as SkPCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from scipy.sparse import coo_matrix
from sklearn.metrics import pairwise_distances

from ..measure.neighbours import euclidean_kneighbors
from ..solvers.margins import graph_scatter
from .base import LinearMetric
from .parameters import Array, Boolean, Interval, Options, require
from .registry import register

def _metric_learn():
    """metric-learn, imported when a baseline is fitted: its import takes seconds (the heaviest
    of the dependencies) and no other method needs it, nor does a process that only lists or
    checks the methods (`dmlbench methods`, `dmlbench check-config`, the Snakefile)."""
    import metric_learn

    return metric_learn


#: eigenvalues of a scaled scatter matrix below this fraction of its largest count as 0
SCATTER_RTOL = 1e-10

POSITIVE_INT = Interval(Integral, 1, None)
SEED = [Interval(Integral, 0, None), None]
COMPONENTS = [POSITIVE_INT, None]


def _fit_metric_learn(name: str, learner, X, y, owner=None):
    """Fit a metric-learn learner and return its `components_`; errors name the method. An
    iterative learner's iteration count becomes `owner.n_iter_` (scikit-learn's convention for
    an estimator with `max_iter`), when the learner counts them (metric-learn's diagonal MMC
    does not)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=FutureWarning)
        warnings.simplefilter("ignore", category=DeprecationWarning)
        try:
            learner.fit(X, y)
        except (ValueError, IndexError) as err:
            raise ValueError(f"{name} (metric-learn) could not be fitted: {err}") from err
    if owner is not None and hasattr(learner, "n_iter_"):
        owner.n_iter_ = int(learner.n_iter_)
    # low-rank RCA takes eigenvectors with np.linalg.eig: real in exact arithmetic, complex dtype
    return np.real(learner.components_)


@register("itml")
class ITML(LinearMetric):
    """Information-theoretic metric learning (Davis et al. 2007), `ITML_Supervised`, with its
    loop of Bregman projections (Algorithm 1) compiled: the same constraints, bounds, prior,
    steps and stopping rule as metric-learn 0.7.0, equal to rounding (`_itml_fit`).

    Parameters
    ----------
    gamma : float, default=1.0
        Slack trade-off of the constraints (Davis et al. 2007, eq. 5; larger: constraints
        enforced more loosely).
    max_iter : int, default=1000
        Cap on the Bregman projection sweeps.
    tol : float, default=0.001
        Convergence tolerance on the change of the constraints' slacks.
    n_constraints : int or None, default=None
        Similar and dissimilar pairs drawn from the labels; None: metric-learn's default (20 x
        classes^2).
    prior : str or array of shape (D, D), default='identity'
        The prior metric M_0 the learnt one stays close to in LogDet divergence: 'identity',
        'covariance', 'random' or an array.
    random_state : int or None, default=None
        Seeds the method's random draws (the workflow sets it per split when the config leaves
        it out: seed x 10000 + split).
    bound_pairs : int or None, default=None
        The bounds u, l (5th and 95th percentiles of the distances among the constrained
        points, Davis et al. 2007, sect. 5): None from every pair of them, as metric-learn (u^2
        distances for u points: 3.2 GB for 20 000); an integer M, the large-data form, from M
        pairs drawn uniformly (with `random_state`) from the same u x u entries, so the same
        percentiles up to sampling: by the DKW inequality each sampled percentile lies between
        the exact (p -+ e)-th ones with probability 1 - 2 exp(-2 M e^2).

    Attributes
    ----------
    components_ : ndarray of shape (r, D)
        The learnt map L: d(x, y) = ||L x - L y||.
    embedding_ : ndarray of shape (n, r)
        The training points mapped, L x_i (what queries are searched against).
    n_features_in_ : int
        Features D seen by `fit`.
    n_iter_ : int
        Index of the last sweep over the constraints (metric-learn's `n_iter_`: max_iter - 1
        when the fit stopped at `max_iter`).
    bounds_ : ndarray of shape (2,)
        The bounds (u, l) of the similar and dissimilar pairs' distances used.
    """

    papers = ("sh17",)
    _parameter_constraints = {
        "gamma": [Interval(Real, 0, None, closed="neither")], "max_iter": [POSITIVE_INT],
        "tol": [Interval(Real, 0, None)], "n_constraints": [POSITIVE_INT, None],
        "prior": [Options(("identity", "covariance", "random")), Array()],
        "random_state": SEED, "bound_pairs": [POSITIVE_INT, None],
    }

    def __init__(self, gamma=1.0, max_iter=1000, tol=1e-3, n_constraints=None,
                 prior="identity", random_state=None, bound_pairs=None):
        self.gamma = gamma
        self.max_iter = max_iter
        self.tol = tol
        self.n_constraints = n_constraints
        self.prior = prior
        self.random_state = random_state
        self.bound_pairs = bound_pairs

    def _learn_components(self, X, y):
        params = {k: v for k, v in self.get_params().items() if k != "bound_pairs"}
        learner = _metric_learn().ITML_Supervised(**params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=FutureWarning)
            warnings.simplefilter("ignore", category=DeprecationWarning)
            try:
                components, self.n_iter_, self.bounds_ = _itml_fit(learner, X, y,
                                                                   self.bound_pairs)
            except (ValueError, IndexError) as err:
                raise ValueError(f"itml (metric-learn) could not be fitted: {err}") from err
        return components

    def fit_info(self) -> dict:
        return {"scale_form": f"bound_pairs={self.bound_pairs}",
                "bounds": [float(b) for b in self.bounds_]}


def distance_percentiles(points: np.ndarray, q, pairs: int | None = None,
                         random_state=None) -> np.ndarray:
    """The q-th percentiles of the u x u distances among `points` (rows; the zero diagonal and
    both orders included, as metric-learn's `pairwise_distances` gives them): all of them, or
    estimated from `pairs` entries drawn uniformly with replacement (memory O(pairs), not
    O(u^2))."""
    if pairs is None:
        return np.percentile(pairwise_distances(points), q)
    rng = np.random.default_rng(random_state)
    u = points.shape[0]
    i, j = rng.integers(0, u, size=pairs), rng.integers(0, u, size=pairs)
    distances = np.empty(pairs)
    for start in range(0, pairs, 1 << 16):
        rows = slice(start, start + (1 << 16))
        diff = points[i[rows]] - points[j[rows]]
        distances[rows] = np.sqrt(np.einsum("ij,ij->i", diff, diff))
    return np.percentile(distances, q)


def _itml_fit(learner, X, y, bound_pairs: int | None = None
              ) -> tuple[np.ndarray, int, np.ndarray]:
    """metric-learn 0.7.0's `ITML_Supervised.fit` and `_BaseITML._fit` with their loop of
    Bregman projections compiled (`solvers.itml_compiled`, the same steps; about 50x faster):
    the same constraints (drawn by metric-learn with the learner's `random_state`), bounds (5th
    and 95th percentiles of the distances among the pairs' points; with `bound_pairs`, of that
    many of them drawn, `distance_percentiles`), prior and stopping rule. Returns the
    components, metric-learn's `n_iter_` and the bounds."""
    from metric_learn._util import _initialize_metric_mahalanobis, components_from_metric
    from metric_learn.constraints import Constraints, wrap_pairs

    from ..solvers import itml_compiled  # numba: compiled code, loaded by ITML fits only

    X, y = learner._prepare_inputs(X, y, ensure_min_samples=2)
    n_constraints = learner.n_constraints
    if n_constraints is None:
        n_constraints = 20 * len(np.unique(y)) ** 2
    pos_neg = Constraints(y).positive_negative_pairs(n_constraints,
                                                     random_state=learner.random_state)
    pairs, pair_y = learner._prepare_inputs(*wrap_pairs(X, pos_neg), type_of_inputs="tuples")
    bounds = distance_percentiles(np.unique(np.vstack(pairs), axis=0), (5, 95), bound_pairs,
                                  learner.random_state)
    bounds[bounds == 0] = 1e-9
    A = _initialize_metric_mahalanobis(pairs, learner.prior, learner.random_state,
                                       strict_pd=True, matrix_name="prior")
    A = np.array(A, dtype=float, order="C")
    gamma = learner.gamma
    gamma_proj = 1.0 if gamma is np.inf else gamma / (gamma + 1.0)
    pos, neg = pairs[pair_y == 1], pairs[pair_y == -1]
    n_iter = itml_compiled.bregman_projections(
        A, np.ascontiguousarray(pos[:, 0, :] - pos[:, 1, :], dtype=float),
        np.ascontiguousarray(neg[:, 0, :] - neg[:, 1, :], dtype=float), float(bounds[0]),
        float(bounds[1]), float(gamma), float(gamma_proj), int(learner.max_iter),
        float(learner.tol))
    return components_from_metric(A), int(n_iter), bounds


@register("rca")
class RCA(LinearMetric):
    """Relevant component analysis (Bar-Hillel et al. 2005), metric-learn's `RCA`.

    With `chunk_size=None` (the default) every class is one chunklet, the fully supervised case:
    RCA whitens the pooled within-class covariance (the "RCA" of Oneata 2011, section 3.3).
    With an integer `chunk_size`, `RCA_Supervised` draws `n_chunks` random chunklets of that size
    from the labels, as metric-learn does.

    Parameters
    ----------
    n_components : int or None, default=None
        Rank r of the learnt map L (r x D); None: full rank.
    chunk_size : int or None, default=None
        None: every class is one chunklet (the fully supervised case); an integer: chunklets of
        this size drawn from the labels (`RCA_Supervised`).
    n_chunks : int, default=100
        Chunklets drawn when `chunk_size` is an integer.
    random_state : int or None, default=None
        Seeds the method's random draws (the workflow sets it per split when the config leaves
        it out: seed x 10000 + split).

    Attributes
    ----------
    components_ : ndarray of shape (r, D)
        The learnt map L: d(x, y) = ||L x - L y||.
    embedding_ : ndarray of shape (n, r)
        The training points mapped, L x_i (what queries are searched against).
    n_features_in_ : int
        Features D seen by `fit`.
    """

    papers = ("am17", "on11")
    _parameter_constraints = {
        "n_components": COMPONENTS, "chunk_size": [Interval(Integral, 2, None), None],
        "n_chunks": [POSITIVE_INT], "random_state": SEED,
    }

    def __init__(self, n_components=None, chunk_size=None, n_chunks=100, random_state=None):
        self.n_components = n_components
        self.chunk_size = chunk_size
        self.n_chunks = n_chunks
        self.random_state = random_state

    @classmethod
    def check_data_limits(cls, params, n_train, d, n_classes):
        _limit_components(params, d)

    def _learn_components(self, X, y):
        metric_learn = _metric_learn()
        if self.chunk_size is None:
            # metric-learn inverts the within-class covariance and returns NaN (or, with another
            # rounding, huge numbers) when it is singular: work in the directions the data vary
            # in, and refuse a within-class covariance still singular there
            basis = data_span(X)
            Xs = X if basis is None else X @ basis
            check_within_class_scatter(Xs, y, "rca", "leave classes with a single training "
                                       "point out (`drop_classes_below`)")
            whiten = _fit_metric_learn("rca", metric_learn.RCA(), Xs, y)
            if basis is not None:
                whiten = whiten @ basis.T
            if self.n_components is None or self.n_components >= whiten.shape[0]:
                return whiten
            # metric-learn's low-rank branch mixes complex eigenvectors (NaN on wine, segment);
            # the same metric: whiten, then keep the d leading principal directions (the top
            # generalised eigenvectors of total vs within-class covariance), whitened already
            _check_n_components("rca", self.n_components, whiten.shape[0])
            pca = SkPCA(n_components=self.n_components, svd_solver="full").fit(X @ whiten.T)
            return pca.components_ @ whiten
        learner = metric_learn.RCA_Supervised(
            n_components=self.n_components, n_chunks=self.n_chunks, chunk_size=self.chunk_size,
            random_state=self.random_state)
        return _fit_metric_learn("rca", learner, X, y)


def data_span(X: np.ndarray, rtol: float = SCATTER_RTOL) -> np.ndarray | None:
    """D x r basis of the directions the (centred, unit-variance) training points vary in:
    right singular vectors with squared singular value above `rtol` times the largest, mapped
    back to the original features; None when that is every direction. Exact (or, after the
    data's decimal rounding, nearly exact) linear dependencies between features, as in segment,
    and constant features are left out: they carry no distance, and whitening would blow their
    round-off up."""
    Xc = X - X.mean(axis=0)
    sd = Xc.std(axis=0)
    varying = sd > 0
    _, s, Vt = np.linalg.svd(Xc[:, varying] / sd[varying], full_matrices=False)
    keep = s ** 2 > rtol * s[0] ** 2
    if keep.sum() == X.shape[1]:
        return None
    basis = np.zeros((X.shape[1], int(keep.sum())))
    basis[varying] = Vt[keep].T / sd[varying, None]
    return basis


@register("mmc")
class MMC(LinearMetric):
    """Mahalanobis metric for clustering (Xing et al. 2002; "Xing" in Abou-Moustafa 2017),
    `MMC_Supervised`.

    Parameters
    ----------
    max_iter : int, default=100
        Cap on the outer iterations (gradient ascent with projections, Xing et al. 2002).
    max_proj : int, default=10000
        Cap on the projections onto the constraint sets per iteration.
    tol : float, default=1e-06
        Convergence tolerance on the change of the metric.
    diagonal : bool, default=False
        Learn a diagonal metric only (Xing et al. 2002, sect. 2.1).
    diagonal_c : float, default=1.0
        Weight of the dissimilar-pair term in the diagonal case.
    n_constraints : int or None, default=None
        Similar and dissimilar pairs drawn from the labels; None: metric-learn's default (20 x
        classes^2).
    init : str or array of shape (D, D), default='identity'
        The starting metric: 'identity', 'covariance', 'random' or an array.
    random_state : int or None, default=None
        Seeds the method's random draws (the workflow sets it per split when the config leaves
        it out: seed x 10000 + split).

    Attributes
    ----------
    components_ : ndarray of shape (r, D)
        The learnt map L: d(x, y) = ||L x - L y||.
    embedding_ : ndarray of shape (n, r)
        The training points mapped, L x_i (what queries are searched against).
    n_features_in_ : int
        Features D seen by `fit`.
    n_iter_ : int
        Iterations metric-learn ran.
    """

    papers = ("am17",)
    _parameter_constraints = {
        "max_iter": [POSITIVE_INT], "max_proj": [POSITIVE_INT], "tol": [Interval(Real, 0, None)],
        "diagonal": [Boolean()], "diagonal_c": [Interval(Real, 0, None, closed="neither")],
        "n_constraints": [POSITIVE_INT, None],
        "init": [Options(("identity", "covariance", "random")), Array()], "random_state": SEED,
    }

    def __init__(self, max_iter=100, max_proj=10000, tol=1e-6, diagonal=False, diagonal_c=1.0,
                 n_constraints=None, init="identity", random_state=None):
        self.max_iter = max_iter
        self.max_proj = max_proj
        self.tol = tol
        self.diagonal = diagonal
        self.diagonal_c = diagonal_c
        self.n_constraints = n_constraints
        self.init = init
        self.random_state = random_state

    def _learn_components(self, X, y):
        metric_learn = _metric_learn()
        return _fit_metric_learn("mmc", metric_learn.MMC_Supervised(**self.get_params()), X, y,
                                 owner=self)


@register("lfda")
class LFDA(LinearMetric):
    """Local Fisher discriminant analysis (Sugiyama 2007), metric-learn's `LFDA`; with
    `affinity_neighbors` its large-data form on a sparse nearest-neighbour affinity
    (`local_fisher_scatters`).

    metric-learn builds each class's dense n_c x n_c affinity (16 GB for a class of 45 000
    points). Sugiyama 2007 (sect. 4, on computing LFDA for many samples) makes the affinity
    sparse: A_ij = exp(-||x_i - x_j||^2 / (sigma_i sigma_j)) only where x_j is among the nearest
    same-class points of x_i or x_i among those of x_j, 0 elsewhere; the scatter matrices are
    then sums over those pairs. Note: metric-learn 0.7.0 reads the local scale as
    `np.partition(dist, k, axis=0)[:, k]`, a column of the partitioned matrix instead of each
    point's k-th neighbour distance (the first point of each class gets sigma 0 and no
    affinity); the sparse form uses sigma_i = the distance to x_i's k-th nearest same-class
    point, as the paper defines it.

    Parameters
    ----------
    n_components : int or None, default=None
        Rank r of the learnt map L (r x D); None: full rank.
    k : int or None, default=None
        Nearest neighbour whose distance scales the local affinity (Sugiyama 2007, sect. 3.2);
        None: metric-learn's default, min(7, D - 1).
    embedding_type : {'weighted', 'orthonormalized', 'plain'}, default='weighted'
        Scaling of the eigenvectors (Sugiyama 2007, sect. 3.2).
    affinity_neighbors : int or None, default=None
        None: metric-learn's dense per-class affinity. An integer K: the large-data form, the
        affinity of each point with its K nearest same-class points (symmetrised: either way
        round), local scale from the k-th, found by exact search; O(n K D + n D^2) memory and
        time after the search, no n_c x n_c array.

    Attributes
    ----------
    components_ : ndarray of shape (r, D)
        The learnt map L: d(x, y) = ||L x - L y||.
    embedding_ : ndarray of shape (n, r)
        The training points mapped, L x_i (what queries are searched against).
    n_features_in_ : int
        Features D seen by `fit`.
    """

    papers = ("ch12",)
    _parameter_constraints = {
        "n_components": COMPONENTS, "k": [POSITIVE_INT, None],
        "embedding_type": [Options(("weighted", "orthonormalized", "plain"))],
        "affinity_neighbors": [POSITIVE_INT, None],
    }

    def __init__(self, n_components=None, k=None, embedding_type="weighted",
                 affinity_neighbors=None):
        self.n_components = n_components
        self.k = k
        self.embedding_type = embedding_type
        self.affinity_neighbors = affinity_neighbors

    @classmethod
    def check_data_limits(cls, params, n_train, d, n_classes):
        _limit_components(params, d)

    def _learn_components(self, X, y):
        metric_learn = _metric_learn()
        params = {k: v for k, v in self.get_params().items() if k != "affinity_neighbors"}
        if self.affinity_neighbors is None:
            return _fit_metric_learn("lfda", metric_learn.LFDA(**params), X, y)
        from metric_learn.lfda import _eigh  # metric-learn's eigen step, as its LFDA.fit

        d = X.shape[1]
        k = min(7, d - 1) if self.k is None else min(int(self.k), d - 1)  # metric-learn's k
        S_b, S_w = local_fisher_scatters(X, y, max(k, 1), int(self.affinity_neighbors))
        dim = self.n_components or d
        try:
            with warnings.catch_warnings():  # ARPACK's "k >= N": scipy's eigh then, as meant
                warnings.filterwarnings("ignore", message="k >= N", category=RuntimeWarning)
                vals, vecs = _eigh(S_b, S_w, dim)
        except (ValueError, np.linalg.LinAlgError) as err:
            raise ValueError(f"lfda could not be fitted: {err}") from err
        order = np.argsort(-vals)[:dim]
        vals, vecs = vals[order].real, vecs[:, order]
        if self.embedding_type == "weighted":
            vecs = vecs * np.sqrt(vals)
        elif self.embedding_type == "orthonormalized":
            vecs, _ = np.linalg.qr(vecs)
        return np.real(vecs.T)

    def fit_info(self) -> dict:
        return {"scale_form": f"affinity_neighbors={self.affinity_neighbors}"}


def local_fisher_scatters(X: np.ndarray, y: np.ndarray, k: int, neighbors: int
                          ) -> tuple[np.ndarray, np.ndarray]:
    """(S_b, S_w) of LFDA (Sugiyama 2007, eqs. 12-13) on the sparse local-scaling affinity:
    A_ij = exp(-||x_i - x_j||^2 / (sigma_i sigma_j)) for same-class i, j where one is among the
    other's `neighbors` nearest (sigma_i: the distance from x_i to its k-th nearest same-class
    point; both capped at the class size - 1), 0 otherwise. With W^w = A / n_c and W^b =
    A (1/n - 1/n_c) on same-class pairs, 1/n across classes, S = (1/2) sum_ij W_ij (x_i - x_j)
    (x_i - x_j)^T; the across-class part is the total scatter less the classes' own, so only
    the affinity's pairs are summed: O(n neighbors D + n D^2)."""
    n = y.size
    labels, codes, counts = np.unique(y, return_inverse=True, return_counts=True)
    rows, cols, values, per_point = [], [], [], np.empty(n)
    S_classes = np.zeros((X.shape[1], X.shape[1]))
    for c in range(labels.size):
        own = np.flatnonzero(codes == c)
        centred = X[own] - X[own].mean(axis=0)
        S_classes += own.size * (centred.T @ centred)
        if own.size < 2:
            continue
        depth = min(max(neighbors, k), own.size - 1)
        dist, ind = euclidean_kneighbors(X[own], X[own], depth, exclude_self=True)
        sigma = dist[:, min(k, own.size - 1) - 1]
        keep = min(neighbors, own.size - 1)
        i, j = np.repeat(np.arange(own.size), keep), ind[:, :keep].ravel()
        scale = sigma[i] * sigma[j]
        with np.errstate(divide="ignore", invalid="ignore"):
            a = np.where(scale > 0, np.exp(-dist[:, :keep].ravel() ** 2 / scale), 0.0)
        rows.append(own[i])
        cols.append(own[j])
        values.append(a)
        per_point[own] = counts[c]
    A = coo_matrix((np.concatenate(values), (np.concatenate(rows), np.concatenate(cols))),
                   shape=(n, n)).tocsr()
    A = A.maximum(A.T)  # either way round (the values agree where both are listed)
    A_w = A.multiply(1.0 / per_point[:, None]).tocsr()
    A_b = A.multiply(1.0 / n - 1.0 / per_point[:, None]).tocsr()
    centred = X - X.mean(axis=0)
    S_w = graph_scatter(X, A_w)
    S_b = centred.T @ centred - S_classes / n + graph_scatter(X, A_b)
    return (S_b + S_b.T) / 2, S_w


@register("pca")
class PCA(LinearMetric):
    """Principal component analysis (scikit-learn): the metric of the leading `n_components`
    principal directions (unsupervised; a baseline in Oneata 2011 and Chang 2012).

    Parameters
    ----------
    n_components : int or None, default=None
        Principal directions kept (at most min(n, D)); None: all.

    Attributes
    ----------
    components_ : ndarray of shape (r, D)
        The learnt map L: d(x, y) = ||L x - L y||.
    embedding_ : ndarray of shape (n, r)
        The training points mapped, L x_i (what queries are searched against).
    n_features_in_ : int
        Features D seen by `fit`.
    """

    papers = ("on11", "ch12")
    min_classes = 1
    _parameter_constraints = {"n_components": COMPONENTS}

    def __init__(self, n_components=None):
        self.n_components = n_components

    @classmethod
    def check_data_limits(cls, params, n_train, d, n_classes):
        _limit_components(params, min(n_train, d), "min(n_train, d)")

    def _learn_components(self, X, y):
        return SkPCA(n_components=self.n_components, svd_solver="full").fit(X).components_


@register("lda")
class LDA(LinearMetric):
    """Fisher / linear discriminant analysis (scikit-learn, eigen solver): the metric of the
    leading `n_components` <= c - 1 discriminant directions (Oneata 2011; "FDA" in Chang 2012).

    Parameters
    ----------
    n_components : int or None, default=None
        Discriminant directions kept (at most min(classes - 1, D)); None: all of them.
    shrinkage : 'auto', float or None, default=None
        Shrinkage of the within-class covariance (scikit-learn's; 'auto': Ledoit-Wolf); None:
        none, and a singular within-class scatter is refused naming this remedy.

    Attributes
    ----------
    components_ : ndarray of shape (r, D)
        The learnt map L: d(x, y) = ||L x - L y||.
    embedding_ : ndarray of shape (n, r)
        The training points mapped, L x_i (what queries are searched against).
    n_features_in_ : int
        Features D seen by `fit`.
    """

    papers = ("on11", "ch12")
    _parameter_constraints = {"n_components": COMPONENTS,
                              "shrinkage": [Options(("auto",)), Interval(Real, 0, 1), None]}

    def __init__(self, n_components=None, shrinkage=None):
        self.n_components = n_components
        self.shrinkage = shrinkage

    @classmethod
    def check_data_limits(cls, params, n_train, d, n_classes):
        _limit_components(params, min(n_classes - 1, d), "min(classes - 1, d)")

    def _learn_components(self, X, y):
        limit = min(np.unique(y).size - 1, X.shape[1])
        if self.shrinkage is None:
            check_within_class_scatter(X, y, "lda", "set `shrinkage: auto` (or a number in "
                                       "[0, 1]) for this method")
        r = self.n_components or limit
        return lda_scalings(X, y, self.shrinkage)[:, :r].T


def check_within_class_scatter(X, y, name: str, remedy: str) -> None:
    """`ValueError` naming `remedy` when the within-class scatter S_W is numerically singular.

    S_W = (1/n) sum_i (x_i - mu_{y_i})(x_i - mu_{y_i})^T (scikit-learn's eigen solver, priors
    n_c/n), scaled to unit diagonal so that the units of the features do not matter; its rank
    counts the eigenvalues above `SCATTER_RTOL` times the largest. Full rank is needed by the
    generalised eigenproblem (S_B, S_W); whether LAPACK happens to fail on a rank-deficient S_W
    depends on the machine, so the rank is checked here instead.
    """
    labels, codes = np.unique(y, return_inverse=True)
    means = np.stack([X[codes == c].mean(axis=0) for c in range(labels.size)])
    centred = X - means[codes]
    S = centred.T @ centred / X.shape[0]
    diag = np.diag(S)
    flat = np.flatnonzero(diag <= 0)
    if flat.size:
        raise ValueError(
            f"{name}: the within-class scatter is singular: feature(s) {flat[:5].tolist()} are "
            f"constant within every class; {remedy}, or drop those features")
    scale = 1.0 / np.sqrt(diag)
    eig = np.linalg.eigvalsh(S * scale[:, None] * scale[None, :])
    rank = int(np.count_nonzero(eig > SCATTER_RTOL * eig[-1]))
    if rank < X.shape[1]:
        raise ValueError(
            f"{name}: the within-class scatter is singular (rank {rank} of {X.shape[1]}: "
            f"{X.shape[0]} training points in {labels.size} classes, collinear features or "
            f"more features than points); {remedy}, or reduce the features first (e.g. a PCA "
            "step in `preprocess`)")


def lda_scalings(X, y, shrinkage=None) -> np.ndarray:
    """All D generalised eigenvectors of (S_B, S_W) as columns, by decreasing eigenvalue
    (scikit-learn's eigen solver; the first C - 1 are the discriminant directions)."""
    return LinearDiscriminantAnalysis(solver="eigen", shrinkage=shrinkage).fit(X, y).scalings_


def _check_n_components(name: str, n_components, limit: int) -> None:
    if n_components is not None and not 1 <= n_components <= limit:
        raise ValueError(f"{name}: n_components must be in [1, {limit}] here, got {n_components}")


def _limit_components(params: dict, limit: int, what: str = "d") -> None:
    """n_components (if set) at most `limit` (= `what`, named in the message)."""
    q = params["n_components"]
    require("n_components", q is None or q <= limit,
            f"n_components = {q} exceeds {what} = {limit}")

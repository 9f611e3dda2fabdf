"""Move-labeled and Move-query (Shigeto, Shimbo & Matsumoto 2017): ridge regression between each
training point and its same-class "targets"; only one side of the dissimilarity is transformed.

Targets (section 3): for every training point x_i, its `n_targets` nearest training points of the
same class by Euclidean distance before training (1 in the paper), ties by training index.

Move-labeled (eq. 5, corrected eq. 6 / appendix): W minimises
    sum_i sum_{z in T_i} ||x_i - W z||^2 + lambda ||W||_F^2,
    W = (sum_{(i,j)} x_i x_j^T) (sum_{(i,j)} x_j x_j^T + lambda I)^{-1} = X J X^T (X K X^T + lambda I)^{-1}
and the dissimilarity is ||x - W z|| (eq. 4, 7): only the labelled objects z are mapped.
Move-query (eq. 9, 10) swaps the roles: W minimises sum ||W x_i - z||^2 + lambda ||W||_F^2 and the
dissimilarity is ||W x - z||: only the queries are mapped (shown in section 4.2 to promote hubs).

Both regressions are built from the target list, never from n x n matrices J and K: pairs that
share the same input are summed first (an input used c times gets weight c, the corrected eq. 6's
K), then either the d x d primal system or, when d exceeds the number r of distinct inputs, the
r x r dual system (push-through identity) is solved:
    primal  W = B^T X_u (X_u^T C X_u + lambda I_d)^{-1}           O(m d + r d^2 + d^3)
    dual    W = B^T C^{-1/2} (V V^T + lambda I_r)^{-1} V,  V = C^{1/2} X_u   O(m d + r^2 d + r^3)
with X_u the distinct inputs, C their counts and B the summed responses. In the dual form W is
kept as the product of a d x r and an r x d factor, so mapping n points costs O(n r d); the dense
d x d `W_` is formed only when asked for. lambda = 0 (allowed by eq. 5) gives the minimum-norm
least-squares solution (the lambda -> 0 limit) through a pseudo-inverse.

lambda, and with `k_grid` also the test-time k, are chosen by stratified k-fold cross-validation
of k-NN accuracy on the training part when `lam_grid` is given (section 5.1), see `selection`.
"""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
import scipy.linalg
import scipy.sparse

from ..measure.neighbours import euclidean_kneighbors
from .base import KNeighborsMethod, check_query, check_training_data
from .parameters import Grid, Interval, Options, require
from .registry import register
from .selection import search_parameter

SOLVERS = ("auto", "primal", "dual")


def same_class_targets(X: np.ndarray, y: np.ndarray, n_targets: int) -> tuple[np.ndarray, np.ndarray]:
    """(sources, targets): for every point i, its `n_targets` nearest same-class points (Euclidean,
    ties by index), as two index arrays of length n * n_targets, sources in ascending order.

    A class with fewer than n_targets + 1 training points has no such targets: `ValueError`.
    """
    if int(n_targets) != n_targets or n_targets < 1:
        raise ValueError(f"n_targets must be an integer >= 1, got {n_targets}")
    n_targets = int(n_targets)
    labels, counts = np.unique(y, return_counts=True)
    small = counts < n_targets + 1
    if small.any():
        detail = ", ".join(f"class {c}: {n}" for c, n in zip(labels[small], counts[small]))
        raise ValueError(
            f"every class needs at least n_targets + 1 = {n_targets + 1} training points (the "
            f"targets of a point are other points of its class); too few in {detail}. Lower "
            "n_targets or leave small classes out (config key drop_classes_below)")
    targets = np.empty((X.shape[0], n_targets), dtype=np.int64)
    for label in labels:
        members = np.flatnonzero(y == label)
        _, nearest = euclidean_kneighbors(X[members], X[members], n_targets, exclude_self=True)
        targets[members] = members[nearest]
    sources = np.repeat(np.arange(X.shape[0]), n_targets)
    return sources, targets.ravel()


class RidgeMap:
    """The ridge regression W of responses X[outputs] on inputs X[inputs] over a list of pairs.

    Minimises sum_p ||x_{outputs[p]} - W x_{inputs[p]}||^2 + lam ||W||_F^2 (see module docstring).
    `apply(Z)` returns Z W^T without forming W in the dual form.
    """

    def __init__(self, X: np.ndarray, inputs: np.ndarray, outputs: np.ndarray, lam: float,
                 solver: str = "auto"):
        n, d = X.shape
        distinct, position = np.unique(inputs, return_inverse=True)
        r = distinct.size
        counts = np.bincount(position, minlength=r).astype(float)
        # B[u] = sum of the responses of the pairs whose input is distinct[u] (sparse sum, O(m d))
        pairs = scipy.sparse.csr_matrix((np.ones(inputs.size), (position, outputs)), shape=(r, n))
        B = pairs @ X
        Xu = X[distinct]
        self.solver = ("dual" if d > r else "primal") if solver == "auto" else solver
        self.n_inputs = r
        if self.solver == "primal":
            gram = (Xu * counts[:, None]).T @ Xu
            cross = Xu.T @ B  # = (B^T X_u)^T
            # W^T = (X_u^T C X_u + lam I)^{-1} X_u^T B
            self._Wt = _spd_solve(gram, cross, lam)
            self._factors = None
        else:
            root = np.sqrt(counts)
            V = Xu * root[:, None]
            # W = (B / root)^T (V V^T + lam I)^{-1} V = left @ right
            self._factors = ((B / root[:, None]).T, _spd_solve(V @ V.T, V, lam))
            self._Wt = None

    @property
    def W(self) -> np.ndarray:
        """The d x d matrix W (formed from the dual factors on first use)."""
        if self._Wt is None:
            left, right = self._factors
            self._Wt = (left @ right).T
        return self._Wt.T

    def apply(self, Z: np.ndarray) -> np.ndarray:
        """Z W^T: every row of Z mapped by W."""
        if self._factors is not None:
            left, right = self._factors
            return (Z @ right.T) @ left.T
        return Z @ self._Wt


def _spd_solve(A: np.ndarray, B: np.ndarray, lam: float) -> np.ndarray:
    """(A + lam I)^{-1} B for symmetric PSD A; lam = 0 uses the pseudo-inverse (minimum norm)."""
    if lam > 0:
        return scipy.linalg.solve(A + lam * np.eye(A.shape[0]), B, assume_a="pos")
    return scipy.linalg.pinvh(A) @ B


class _Move(KNeighborsMethod):
    """Shared fitting of Move-labeled / Move-query; subclasses say which side W maps."""

    family = "move"
    papers = ("sh17",)
    kind = "asymmetric"
    maps_labeled = True
    min_classes = 1  # targets are same-class points: one class is enough
    _parameter_constraints = {
        "lam": [Interval(Real, 0, None)], "n_targets": [Interval(Integral, 1, None)],
        "lam_grid": [Grid(Interval(Real, 0, None)), None],
        "k_grid": [Grid(Interval(Integral, 1, None)), None], "cv": [Interval(Integral, 2, None)],
        "solver": [Options(SOLVERS)], "random_state": [Interval(Integral, 0, None), None]}

    def __init__(self, lam=1.0, n_targets=1, lam_grid=None, k_grid=None, cv=5, solver="auto",
                 random_state=None):
        self.lam = lam
        self.n_targets = n_targets
        self.lam_grid = lam_grid
        self.k_grid = k_grid
        self.cv = cv
        self.solver = solver
        self.random_state = random_state

    @classmethod
    def check_parameters(cls, params):
        super().check_parameters(params)
        params = cls.with_defaults(params)
        require("k_grid", params["k_grid"] is None or params["lam_grid"] is not None,
                "k_grid needs lam_grid: k is chosen jointly with lambda by CV")

    @classmethod
    def check_data_limits(cls, params, n_train, d, n_classes):
        n = params["n_targets"]
        require("n_targets", n <= n_train - 1, f"n_targets = {n} same-class targets need more "
                f"than n_train = {n_train} training points")
        if params["lam_grid"] is not None:
            require("cv", params["cv"] <= n_train, f"cv = {params['cv']} folds exceed the "
                    f"n_train = {n_train} training points")

    def fit(self, X, y):
        X, y = check_training_data(X, y, self.min_classes)
        self.n_features_in_ = X.shape[1]
        self.selected_k_ = None
        self.cv_info_ = {}
        lam = float(self.lam)
        if self.lam_grid is not None:
            lam, self.selected_k_, self.cv_info_ = search_parameter(self, "lam", X, y)
        start = time.perf_counter()
        self.lam_ = lam
        self.sources_, self.targets_ = same_class_targets(X, y, self.n_targets)
        inputs, outputs = ((self.targets_, self.sources_) if self.maps_labeled
                           else (self.sources_, self.targets_))
        self.map_ = RidgeMap(X, inputs, outputs, lam, self.solver)
        self.X_ = X
        # the side that W maps is computed once: labelled points (Move-labeled) or nothing
        self.embedding_ = self.map_.apply(X) if self.maps_labeled else X
        self.refit_s_ = time.perf_counter() - start
        return self

    @property
    def W_(self) -> np.ndarray:
        """The fitted d x d matrix W."""
        return self.map_.W

    def _queries(self, X):
        return X if self.maps_labeled else self.map_.apply(X)

    def kneighbors(self, X, n_neighbors: int, progress: bool = False):
        X = check_query(X, self.n_features_in_)
        return euclidean_kneighbors(self._queries(X), self.embedding_, n_neighbors,
                                    progress=progress)

    def train_kneighbors(self, n_neighbors: int):
        """Leave-one-out: each training point as a query against the other labelled points."""
        return euclidean_kneighbors(self._queries(self.X_), self.embedding_, n_neighbors,
                                    exclude_self=True)

    def search_vectors(self, X=None) -> tuple[np.ndarray, np.ndarray]:
        """Queries as the dissimilarity sees them (W x for Move-query) and the labelled points
        (W z for Move-labeled): ||x - W z|| is Euclidean between them."""
        X = self.X_ if X is None else check_query(X, self.n_features_in_)
        return self._queries(X), self.embedding_

    def fit_info(self) -> dict:
        info = {"lam": self.lam_, "n_targets": int(self.n_targets), "solver": self.map_.solver,
                "n_distinct_inputs": int(self.map_.n_inputs), "refit_s": self.refit_s_}
        if self.selected_k_ is not None:
            info["selected_k"] = int(self.selected_k_)
        info.update(self.cv_info_)
        return info


@register("move_labeled")
class MoveLabeled(_Move):
    """Move-labeled (Shigeto 2017, eq. 5-7): f(x, z) = ||x - W z||, W moves each point's
    same-class targets onto it; queries stay where they are. See the module docstring.

    Parameters
    ----------
    lam : float, default=1.0
        Ridge lambda of the regression (Shigeto 2017, eq. 5); 0 gives the minimum-norm
        least-squares map.
    n_targets : int, default=1
        Same-class targets per training point, its nearest by Euclidean distance before training
        (section 3; the paper: 1).
    lam_grid : list of float or None, default=None
        Choose lambda by `cv`-fold cross-validation of k-NN accuracy on the training part
        (section 5.1); None: `lam`.
    k_grid : list of int or None, default=None
        Also choose the test-time k with lambda (needs `lam_grid`); read by `k_selection: loo`.
    cv : int, default=5
        Folds of the cross-validation of `lam_grid`.
    solver : {'auto', 'primal', 'dual'}, default='auto'
        The d x d primal or the r x r dual system (r distinct inputs); 'auto': the smaller.
    random_state : int or None, default=None
        Seeds the cross-validation folds.

    Attributes
    ----------
    lam_ : float
        The lambda used (`lam`, or the one chosen from `lam_grid`).
    selected_k_ : int or None
        The test-time k chosen with `k_grid`, else None.
    cv_info_ : dict
        The cross-validation's grid, accuracies, chosen k and seconds (empty without
        `lam_grid`).
    sources_ : ndarray of int
        Each (point, target) pair's point, sources ascending.
    targets_ : ndarray of int
        ... and its same-class target.
    map_ : RidgeMap
        The fitted regression (primal or dual form).
    W_ : ndarray of shape (D, D)
        W, formed from `map_` on first use (a property).
    X_ : ndarray of shape (n, D)
        The training points.
    embedding_ : ndarray of shape (n, D)
        The labelled points as searched: W z (Move-labeled) or z (Move-query).
    refit_s_ : float
        Seconds of the final fit (after any cross-validation).
    n_features_in_ : int
        Features D seen by `fit`.
    """

    maps_labeled = True


@register("move_query")
class MoveQuery(_Move):
    """Move-query (Shigeto 2017, eq. 9-10): f(x, z) = ||W x - z||, W maps each training point onto
    its targets and is applied to the queries; labelled points stay. The paper's control that
    promotes hubs (section 4.2).

    Parameters
    ----------
    lam : float, default=1.0
        Ridge lambda of the regression (Shigeto 2017, eq. 5); 0 gives the minimum-norm
        least-squares map.
    n_targets : int, default=1
        Same-class targets per training point, its nearest by Euclidean distance before training
        (section 3; the paper: 1).
    lam_grid : list of float or None, default=None
        Choose lambda by `cv`-fold cross-validation of k-NN accuracy on the training part
        (section 5.1); None: `lam`.
    k_grid : list of int or None, default=None
        Also choose the test-time k with lambda (needs `lam_grid`); read by `k_selection: loo`.
    cv : int, default=5
        Folds of the cross-validation of `lam_grid`.
    solver : {'auto', 'primal', 'dual'}, default='auto'
        The d x d primal or the r x r dual system (r distinct inputs); 'auto': the smaller.
    random_state : int or None, default=None
        Seeds the cross-validation folds.

    Attributes
    ----------
    lam_ : float
        The lambda used (`lam`, or the one chosen from `lam_grid`).
    selected_k_ : int or None
        The test-time k chosen with `k_grid`, else None.
    cv_info_ : dict
        The cross-validation's grid, accuracies, chosen k and seconds (empty without
        `lam_grid`).
    sources_ : ndarray of int
        Each (point, target) pair's point, sources ascending.
    targets_ : ndarray of int
        ... and its same-class target.
    map_ : RidgeMap
        The fitted regression (primal or dual form).
    W_ : ndarray of shape (D, D)
        W, formed from `map_` on first use (a property).
    X_ : ndarray of shape (n, D)
        The training points.
    embedding_ : ndarray of shape (n, D)
        The labelled points as searched: W z (Move-labeled) or z (Move-query).
    refit_s_ : float
        Seconds of the final fit (after any cross-validation).
    n_features_in_ : int
        Features D seen by `fit`.
    """

    maps_labeled = False

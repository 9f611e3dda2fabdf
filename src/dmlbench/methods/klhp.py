"""KLHP: the K-local hyperplane distance nearest-neighbour classifier (HKNN, Vincent & Bengio 2002),
the local supervised competitor of Abou-Moustafa 2017 (sect. 5).

For a query x and each class c, the K nearest training points of class c, N_1..N_K, span the
local affine hyperplane {N + V alpha} (N their mean, the rows of V the N_k - N). The class
distance is

    d_c(x)^2 = min_alpha ||x - N - V^T alpha||^2 + lam ||alpha||^2 = |u|^2 - b^T (G + lam I)^+ b,

u = x - N, G = V V^T (K x K), b = V u, computed from the eigenpairs of G (a pseudo-inverse when
lam = 0: the centred rows of V make G singular). x goes to the class with the smallest d_c;
ties go to the smallest class label.

Not a metric over training points, so `kind = 'classifier'`: the evaluation calls
`predict(X, k)`. As in Abou-Moustafa 2017 (sect. 5.1), K is not the k of the k-NN rule but is
chosen on the training error of each split: here the leave-one-out error over `K_grid` x
`lam_grid` (ties to the smaller K, then the earlier lam), so `predict` gives the same labels for
every k. Choice (not in the papers): `lam` is relative, lam_eff = lam * tr(G) / K (the mean
squared length of the hyperplane's spanning vectors), so one grid fits raw features of any scale.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from ..measure.neighbours import MAX_BLOCK_BYTES, euclidean_kneighbors
from .base import Classifier, validated_queries, validated_training_data
from .parameters import Grid, Interval, require
from .registry import register

#: eigenvalues of G below this fraction of the largest are treated as zero when lam = 0
RANK_TOL = 1e-10
#: squared distances below this fraction of |x - mean|^2 are round-off, i.e. 0
ZERO_TOL = 1e-10


def hyperplane_distances(u: np.ndarray, V: np.ndarray, lams) -> np.ndarray:
    """d^2 for queries-minus-means u (q, d), centred neighbours V (q, K, d) and each relative lam:
    array (len(lams), q)."""
    G = V @ np.swapaxes(V, 1, 2)
    sigma, U = np.linalg.eigh(G)
    proj = np.einsum("qkj,qk->qj", U, np.einsum("qkd,qd->qk", V, u)) ** 2
    scale = np.trace(G, axis1=1, axis2=2) / V.shape[1]
    uu = np.einsum("qd,qd->q", u, u)
    out = []
    for lam in lams:
        denom = sigma + lam * scale[:, None]
        keep = denom > RANK_TOL * np.maximum(sigma.max(axis=1, keepdims=True), 1e-300)
        d2 = uu - np.where(keep, proj / np.where(keep, denom, 1.0), 0.0).sum(axis=1)
        # x on the hyperplane (always so when lam = 0 and K - 1 >= d): the difference is
        # round-off; it is set to exactly 0 so that ties between classes are ties
        out.append(np.where(d2 <= ZERO_TOL * uu, 0.0, d2))
    return np.array(out)


@register("klhp")
class KLocalHyperplane(Classifier):
    """K-local hyperplane distance classifier (Vincent & Bengio 2002) with K and lam chosen by
    leave-one-out training error (Abou-Moustafa 2017, sect. 5.1); `K`/`lam` fix them.

    Parameters
    ----------
    K : int or None, default=None
        Nearest points of each class spanning its local hyperplane (Vincent & Bengio 2002);
        None: chosen on the leave-one-out training error over `K_grid` (Abou-Moustafa 2017,
        sect. 5.1).
    K_grid : tuple of int, default=(1, 2, 3, 5, 7, 10, 15, 20)
        Candidates for K (capped at the smallest class - 1).
    lam : float or None, default=None
        Ridge on the hyperplane coordinates, relative (ours): lam x tr(G) / K; None: chosen with
        K over `lam_grid`.
    lam_grid : tuple of float, default=(0.0, 0.01, 0.1, 1.0, 10.0)
        Candidates for lam.

    Attributes
    ----------
    K_ : int
        The K used.
    lam_ : float
        The relative lam used.
    K_grid_ : list of int
        The candidates for K (capped at the smallest class - 1).
    lam_grid_ : list of float
        The candidates for lam.
    loo_error_ : ndarray of shape (len(K_grid_), len(lam_grid_)) or None
        Leave-one-out training error of every (K, lam); None when there was nothing to choose.
    X_ : ndarray of shape (n, D)
        The training points.
    y_ : ndarray of shape (n,)
        Their labels, coded 0 .. classes - 1.
    classes_ : ndarray
        The class labels.
    n_features_in_ : int
        Features D seen by `fit`.
    """

    family = "local"
    papers = ("am17",)
    min_classes = 2
    _parameter_constraints = {"K": [Interval(Integral, 1, None), None],
                              "K_grid": [Grid(Interval(Integral, 1, None))],
                              "lam": [Interval(Real, 0, None), None],
                              "lam_grid": [Grid(Interval(Real, 0, None))]}

    def __init__(self, K=None, K_grid=(1, 2, 3, 5, 7, 10, 15, 20), lam=None,
                 lam_grid=(0.0, 0.01, 0.1, 1.0, 10.0)):
        self.K, self.K_grid, self.lam, self.lam_grid = K, K_grid, lam, lam_grid

    @classmethod
    def check_data_limits(cls, params, n_train, d, n_classes):
        K = params["K"]
        require("K", K is None or K <= n_train - 1, f"K = {K} nearest points of a class need "
                f"more than n_train = {n_train} training points")

    def fit(self, X, y):
        X, y = validated_training_data(self, X, y, self.min_classes)
        self.classes_, self.y_ = np.unique(y, return_inverse=True)
        counts = np.bincount(self.y_)
        if counts.min() < 2:
            raise ValueError(f"class {self.classes_[counts.argmin()]!r} has one training point; "
                             "the leave-one-out selection of K needs at least two per class")
        Ks = [self.K] if self.K is not None else list(self.K_grid)
        lams = [self.lam] if self.lam is not None else list(self.lam_grid)
        cap = int(counts.min()) - 1
        if self.K is not None and self.K > cap:
            raise ValueError(f"K = {self.K} exceeds the {cap} other training points of the "
                             "smallest class")
        self.K_grid_ = sorted({int(k) for k in Ks if k <= cap}) or [cap]
        self.lam_grid_ = [float(v) for v in lams]
        self.X_ = X
        if len(self.K_grid_) * len(self.lam_grid_) == 1:
            self.K_, self.lam_, self.loo_error_ = self.K_grid_[0], self.lam_grid_[0], None
            return self
        dist = self._class_distances(X, max(self.K_grid_), self.K_grid_, self.lam_grid_,
                                     loo=True)  # (K, lam, c, n)
        pred = dist.argmin(axis=2)
        self.loo_error_ = (pred != self.y_[None, None, :]).mean(axis=2)
        i, j = np.unravel_index(int(np.argmin(self.loo_error_)), self.loo_error_.shape)
        self.K_, self.lam_ = self.K_grid_[i], self.lam_grid_[j]
        return self

    fit.checks_parameters = True  # checked inside, after the input (`validated_training_data`)

    def _class_distances(self, Q, depth, Ks, lams, loo=False) -> np.ndarray:
        """Squared hyperplane distances (len(Ks), len(lams), classes, len(Q))."""
        n_classes = self.classes_.size
        out = np.empty((len(Ks), len(lams), n_classes, Q.shape[0]))
        for c in range(n_classes):
            members = np.flatnonzero(self.y_ == c)
            Xc = self.X_[members]
            width = min(depth + (1 if loo else 0), members.size)
            _, ind = euclidean_kneighbors(Q, Xc, width)
            if loo:  # leave each training point out of its own class's neighbours
                ind = _drop_self(ind, members, depth)
            rows = max(1, MAX_BLOCK_BYTES // (8 * depth * Q.shape[1] * 3))
            for start in range(0, Q.shape[0], rows):
                sl = slice(start, start + rows)
                for a, K in enumerate(Ks):
                    N = Xc[ind[sl, :K]]
                    mean = N.mean(axis=1)
                    out[a, :, c, sl] = hyperplane_distances(Q[sl] - mean, N - mean[:, None, :],
                                                            lams)
        return out

    def predict(self, X, k: int | None = None) -> np.ndarray:
        """Class labels; `k` (the k-NN rule's k) is ignored: K was chosen on training error."""
        Q = validated_queries(self, X)
        dist = self._class_distances(Q, self.K_, [self.K_], [self.lam_])[0, 0]
        return self.classes_[dist.argmin(axis=0)]

    def fit_info(self) -> dict:
        info = {"K": self.K_, "lam": self.lam_}
        if self.loo_error_ is not None:
            info.update(K_grid=[float(k) for k in self.K_grid_],
                        lam_grid=[float(v) for v in self.lam_grid_],
                        loo_error=[float(e) for e in self.loo_error_.ravel()])
        return info


def _drop_self(ind: np.ndarray, members: np.ndarray, depth: int) -> np.ndarray:
    """Remove, row by row, the position whose class member is the query itself (training
    point i = row i); rows of other classes keep their first `depth` columns."""
    n = ind.shape[0]
    is_self = members[ind] == np.arange(n)[:, None]
    order = np.argsort(is_self, axis=1, kind="stable")  # self moves to the end
    return np.take_along_axis(ind, order, axis=1)[:, :depth]

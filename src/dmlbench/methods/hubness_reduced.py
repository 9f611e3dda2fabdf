"""A method seen through a hubness reduction of its distances: mutual proximity, local scaling,
NICDM or DisSim local (the mathematics, with their sources, are in
`dmlbench.measure.hubness_reduction`).

A config's method entry with `hubness_reduction` (`workflow/schemas/config.schema.yaml`, where
its defaults are) runs the method wrapped in `HubnessReduced`: the hooks the evaluation calls
for neighbour lists (`kneighbors`, `kneighbors_per_k`, `train_kneighbors`) answer with the
reduced lists, computed from the method's own hooks (its distances to all training points up to
`exact_max` of them, else to each point's `candidates` nearest) and, for DisSim and the cosine
distance, its `search_vectors`. Every other hook is delegated, one by one, to the method.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

from .. import vocabulary as voc
from ..measure.hubness_reduction import (
    DISTANCES,
    KINDS,
    VARIANTS,
    Lists,
    Reducer,
    cosine_kneighbors,
)
from ..measure.contract import check_lists
from ..measure.neighbours import MAX_BLOCK_BYTES
from . import parameters
from .base import KNeighborsMethod
from .parameters import Interval, Options, require

_SHORT = {"mutual_proximity": "MP", "local_scaling": "LS", "nicdm": "NICDM",
          "dissim_local": "DisSim"}


class HubnessReduced(KNeighborsMethod):
    """A method whose neighbour lists are ordered by a hubness-reduced distance.

    Parameters
    ----------
    method : KNeighborsMethod
        The method reduced (not a `Classifier`: it needs distances to the training points).
        `fit` fits it.
    reduction : {'mutual_proximity', 'local_scaling', 'nicdm', 'dissim_local'}
        Mutual proximity (Schnitzer, Flexer, Schedl & Widmer 2012, sect. 3.2), local scaling
        (Zelnik-Manor & Perona 2004, in the form of Schnitzer et al. 2012, sect. 3.1), NICDM
        (Jegou et al. 2007; Schnitzer et al. 2012, sect. 3.1) or DisSim local (Hara et al.
        2016; needs a method with `search_vectors`, e.g. a linear metric). The config's
        `hubness_reduction.kind`.
    variant : {'empiric', 'gaussian'} or None, default=None
        Mutual proximity only (required there, None for the others): counts over the labelled
        points, or independent normal distance distributions.
    k : int or None, default=None
        Neighbour rank of the local scale (sigma, mu or the centroid c_k) of local scaling,
        NICDM and DisSim (required there, None for mutual proximity); at most `candidates` and
        at most the training points - 1.
    candidates : int
        Above `exact_max` training points, each query and training point keeps its
        `candidates` nearest (k' of `dmlbench.measure.hubness_reduction`) instead of all
        pairs; at least 2.
    exact_max : int
        Largest training part reduced exactly, over all pairs; at least 0.
    distance : {'euclidean', 'cosine'}
        The method's own distance, or 1 - cosine similarity of its search vectors (not with
        DisSim, which is defined on squared Euclidean distances).
    max_bytes : int, default=`dmlbench.measure.neighbours.MAX_BLOCK_BYTES`
        Memory of one block of queries; results do not depend on it.

    The config schema holds the defaults of `candidates`, `exact_max`, `distance` and of the
    kind's `variant` or `k`; `from_settings` builds the wrapper from a config entry.

    Attributes
    ----------
    n_labeled_ : int
        Training (labelled) points.
    exact_ : bool
        Whether every pair is used (at most `exact_max` training points, or `candidates`
        covering them all).
    """

    predicts_only = False
    _parameter_constraints = {
        "reduction": [Options(KINDS)], "variant": [Options(VARIANTS), None],
        "k": [Interval(Integral, 1, None), None], "candidates": [Interval(Integral, 2, None)],
        "exact_max": [Interval(Integral, 0, None)], "distance": [Options(DISTANCES)],
        "max_bytes": [Interval(Integral, 1, None)]}

    def __init__(self, method, reduction, variant=None, k=None, *, candidates, exact_max,
                 distance, max_bytes=MAX_BLOCK_BYTES):
        self.method, self.reduction, self.variant, self.k = method, reduction, variant, k
        self.candidates, self.exact_max, self.distance = candidates, exact_max, distance
        self.max_bytes = max_bytes

    # ---- the config's settings ----------------------------------------------------------
    @staticmethod
    def params_of(settings: dict) -> dict:
        """The wrapper's parameters (but `method`) from a config's `hubness_reduction` entry."""
        return {"reduction": settings["kind"], "variant": settings.get("variant"),
                "k": settings.get("k"), "candidates": settings["candidates"],
                "exact_max": settings["exact_max"], "distance": settings["distance"]}

    @classmethod
    def from_settings(cls, method, settings: dict, **kw) -> HubnessReduced:
        """`method` wrapped in the reduction of a config's `hubness_reduction` entry (its
        defaults filled in from the config schema)."""
        return cls(method, **cls.params_of(settings), **kw)

    @classmethod
    def check_settings(cls, method, settings: dict) -> None:
        """A config's `hubness_reduction` entry for `method` (a class or an instance):
        `ParameterError` naming the parameter, `ValueError` when the method cannot be reduced."""
        cls.check_parameters({**cls.params_of(settings), "method": method})

    @classmethod
    def check_parameters(cls, params: dict) -> None:
        """The declared constraints; the variant or k the reduction takes; k among the
        candidates; DisSim on Euclidean distances; and a method that has the distances (and,
        for DisSim and cosine, the vectors) the reduction needs."""
        params = dict(params)
        method = params.pop("method", None)
        parameters.check(cls._parameter_constraints, params)
        reduction, k = params["reduction"], params.get("k")
        if reduction == "mutual_proximity":
            require("k", k is None, f"k: {reduction} has no k (its variant is empiric or "
                    "gaussian)")
            require("variant", params.get("variant") is not None,
                    f"variant: {reduction} needs one (empiric or gaussian)")
        else:
            require("variant", params.get("variant") is None, f"variant: {reduction} has none "
                    "(only mutual_proximity has a variant)")
            require("k", k is not None, f"k: {reduction} needs the neighbour rank k")
            require("k", k <= params["candidates"], f"k = {k} exceeds candidates = "
                    f"{params['candidates']}; the k nearest must be among the candidates")
        require("distance", not (reduction == "dissim_local" and params["distance"] == "cosine"),
                "distance: dissim_local is defined on squared Euclidean distances of vectors; "
                "use distance: euclidean (normalise the rows in `preprocess` for cosine geometry)")
        if method is not None:
            cls._check_method(method, params)

    @classmethod
    def _check_method(cls, method, params: dict) -> None:
        method_cls = method if isinstance(method, type) else type(method)
        name = getattr(method_cls, "registry_name", method_cls.__name__)
        if method_cls.predicts_only:
            raise ValueError(f"method '{name}' is a classifier with no distances to the "
                             "training points: there is nothing to reduce")
        if (_needs_vectors(params["reduction"], params["distance"])
                and method_cls.search_vectors is KNeighborsMethod.search_vectors):
            raise ValueError(f"{_label(params)} needs vectors in which the method's distance is "
                             f"Euclidean, and '{name}' ({method_cls.kind}) has none; use "
                             "mutual_proximity, local_scaling or nicdm with distance: euclidean")

    @classmethod
    def check_data_limits(cls, params: dict, n_train: int, d: int, n_classes: int) -> None:
        """The local scale's k among the n_train - 1 other training points. `params` are the
        wrapper's parameters or a config's settings."""
        k = params.get("k")
        require("k", k is None or k <= n_train - 1, f"k = {k} exceeds the n_train - 1 = "
                f"{n_train - 1} other training points")

    @property
    def label(self) -> str:
        """Short name of the reduction for tables and tags, e.g. 'MP empiric', 'LS k=10 cosine'."""
        return _label(self.get_params(deep=False))

    # ---- fit ----------------------------------------------------------------------------
    def fit(self, X, y, *, spread_train=None):
        """Fit the method. `spread_train` (DisSim only): the training points' `local_spreads`
        (`dmlbench.measure.hubness_reduction`) when the caller has them, as the one-pass
        leave-one-out path (`dmlbench.run.loo`) has for every split; else they are computed from
        the method's vectors at the first query."""
        self.method.fit(X, y)
        self.n_labeled_ = int(np.shape(y)[0])
        self.exact_ = (self.n_labeled_ <= self.exact_max or self.candidates >= self.n_labeled_)
        self._reducer = None
        self._spread_train = spread_train
        return self

    def widths(self, n_labeled: int) -> tuple[int, int]:
        """(per query, per training point): how many of the method's nearest training points
        the reduction uses with `n_labeled` training points: all of them (the others, for a
        training point's leave-one-out list) up to `exact_max`, else `candidates`."""
        if n_labeled <= self.exact_max or self.candidates >= n_labeled:
            return n_labeled, n_labeled - 1
        return min(self.candidates, n_labeled), min(self.candidates, n_labeled - 1)

    def _width(self, loo: bool) -> int:
        return self.widths(self.n_labeled_)[int(loo)]

    def _needs_vectors(self) -> bool:
        return _needs_vectors(self.reduction, self.distance)

    def _vectors(self, X=None):
        vectors = self.method.search_vectors(X)
        if vectors is None:
            raise ValueError(f"hubness_reduction {self.label} needs the method's vectors; "
                             f"{type(self.method).__name__} has none (a local metric)")
        return vectors

    @property
    def reducer(self) -> Reducer:
        """The reduction of the training points (built at the first query: their reduced
        leave-one-out lists need the method's own)."""
        if self._reducer is None:
            width = self._width(loo=True)
            if width < 1:
                raise ValueError("hubness reduction needs at least two training points")
            vectors = self._vectors() if self._needs_vectors() else None
            if self.distance == "cosine":
                dist, ind = cosine_kneighbors(vectors[0], vectors[1], width, exclude_self=True)
            else:
                dist, ind = check_lists(self.method, self.method.train_kneighbors(width),
                                        self.n_labeled_, width, self.n_labeled_,
                                        "train_kneighbors", exclude_self=True)
            train = Lists(dist, ind, np.arange(self.n_labeled_), width == self.n_labeled_ - 1)
            self._reducer = Reducer(self.reduction, train, self.n_labeled_, variant=self.variant,
                                    k=self.k, vectors=vectors, spread_train=self._spread_train,
                                    max_bytes=self.max_bytes)
        return self._reducer

    # ---- the hooks answered with reduced lists ---------------------------------------------
    def kneighbors_per_k(self, X, ks, n_neighbors: int, progress: bool = False) -> dict:
        reducer, width = self.reducer, self._width(loo=False)
        rows = X.shape[0]
        step = max(1, self.max_bytes // (16 * width))
        parts: dict = {}
        for start in range(0, rows, step):
            Xb = X[start:start + step]
            qv = self._vectors(Xb)[0] if self._needs_vectors() else None
            if self.distance == "cosine":
                lists = dict.fromkeys(ks, cosine_kneighbors(qv, reducer.vectors[1], width))
            else:
                lists = self.method.kneighbors_per_k(Xb, ks, width)
            done: dict = {}
            for k, found in lists.items():
                key = id(found)
                if key not in done:  # the method's own lists enter the reduction checked
                    dist, ind = check_lists(self.method, found, Xb.shape[0], width,
                                            self.n_labeled_)
                    own = np.full(ind.shape[0], -1)
                    done[key] = reducer.reduce(Lists(dist, ind, own, width == self.n_labeled_),
                                               n_neighbors, qv)
                parts.setdefault(k, []).append(done[key])
        return {k: (np.concatenate([p[0] for p in v]), np.concatenate([p[1] for p in v]))
                for k, v in parts.items()}

    def kneighbors(self, X, n_neighbors: int, progress: bool = False):
        k = 1
        return self.kneighbors_per_k(X, [k], n_neighbors, progress)[k]

    def train_kneighbors(self, n_neighbors: int):
        """Reduced leave-one-out lists of the training points."""
        reducer = self.reducer
        qv = reducer.vectors[0] if self._needs_vectors() else None
        return reducer.reduce(reducer.train, n_neighbors, qv)

    def sweep_embeddings(self, X_test):
        """None: a dimension sweep is not defined for a reduced metric."""
        return None

    def search_vectors(self, X=None):
        """None: the reduced distance is Euclidean in no vector space."""
        return None

    def fit_info(self) -> dict:
        """The method's, with `reduction_exact`, `reduction_candidates` (candidate mode) and
        `reduction_truncated_share` (the share of cut empiric mutual-proximity pairs)."""
        info = dict(self.method.fit_info())
        info[voc.REDUCTION_EXACT] = int(self.exact_)
        if not self.exact_:
            info[voc.REDUCTION_CANDIDATES] = self.candidates
        if self._reducer is not None:
            info.update(self._reducer.info())
        return info

    # ---- delegated to the method -----------------------------------------------------------
    @property
    def family(self) -> str:
        return self.method.family

    @property
    def kind(self) -> str:
        return self.method.kind

    @property
    def papers(self) -> tuple[str, ...]:
        return self.method.papers

    @property
    def selected_k(self) -> int | None:
        return self.method.selected_k

    def extra_metrics(self, X_test, y_test) -> dict:
        return self.method.extra_metrics(X_test, y_test)

    def check_finite(self) -> None:
        self.method.check_finite()

    def artifacts(self, X_test, y_test) -> dict[str, np.ndarray]:
        return self.method.artifacts(X_test, y_test)


def _needs_vectors(reduction: str, distance: str) -> bool:
    """DisSim and the cosine distance need the method's `search_vectors`."""
    return reduction == "dissim_local" or distance == "cosine"


def _label(params: dict) -> str:
    text = _SHORT[params["reduction"]]
    text += f" {params['variant']}" if params["reduction"] == "mutual_proximity" \
        else f" k={params['k']}"
    return text + (" cosine" if params["distance"] == "cosine" else "")

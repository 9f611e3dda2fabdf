"""The local GQD metrics (RMVEM, RMLE, MiniVenn) as estimators: per query, its m nearest training
points, their MVCE (or uniform) weights, the metric a spectral function of A_q, and the search
under it (`search`); m (and rank, rho, tau) chosen per k on the leave-one-out training error.
The package docstring (`dmlbench.methods.local`) states the equations, the tie rule and every
deviation from the papers.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ...measure.knn_rule import knn_vote
from ...measure.neighbours import MAX_BLOCK_BYTES, euclidean_kneighbors
from ...solvers import mvce
from ..base import KNeighborsMethod, validated_queries, validated_training_data
from ..parameters import Grid, Interval, Options, require
from ..registry import register
from .search import (TIE_RTOL, OwnedMetrics, TrainingPoints, certified_band, search,
                     search_owned)

FORMS = ("literal", "inverse")
EPS_SCALES = ("absolute", "relative")
NEIGHBOURHOODS = ("euclidean", "cosine")
#: whose matrix measures the distance of a query q to a training point y: q's, y's, or the
#: average of both one-sided squared distances
OWNERS = ("query", "training", "symmetric")
#: how the training error that chooses m is counted: leave-one-out, or resubstitution (each
#: training point classified among all of them, itself included)
SELECTIONS = ("loo", "resubstitution")
#: queries whose MVCE problems are solved together in one batch
MVCE_BATCH = 256


def default_m_grid(d: int, n: int, grid_size: int, m_range=(1, 3)) -> list[int]:
    """d+1..3d (Abou-Moustafa 2007; in general floor(lo d) + 1 .. floor(hi d) for `m_range` =
    (lo, hi)), capped at [2, n - 1], at most `grid_size` evenly spaced values."""
    lo, hi = m_range
    low, high = int(np.floor(lo * d)) + 1, min(int(np.floor(hi * d)), n - 1)
    if high < 2:
        raise ValueError(f"no neighbourhood size m in [2, n - 1 = {n - 1}]: too few training points")
    low = min(max(low, 2), high)
    values = np.unique(np.round(np.linspace(low, high, min(grid_size, high - low + 1))))
    return [int(v) for v in values]


class LocalMetric(ClassifierMixin, KNeighborsMethod):
    """Shared machinery of the local GQD metrics; subclasses give the weights (`weighting`), the
    candidate settings besides m (`_candidates`) and the spectral gains (`_gains`).

    As a library a local metric is also a scikit-learn classifier: `predict(X, k)` is the k-NN
    rule of the benchmark (`measure.knn_rule`) on the list chosen for k (default: the smallest
    of `k_select`, the one `kneighbors` answers with), `score` is `ClassifierMixin`'s mean
    accuracy, and it passes `check_estimator` (tests/test_sklearn_api.py).
    """

    kind = "local"
    family = "local"
    papers: tuple[str, ...] = ("am17",)
    min_classes = 2
    weighting = "mvce"  # or "uniform"

    # ---- parameters ---------------------------------------------------------------------
    @classmethod
    def check_parameters(cls, params):
        super().check_parameters(params)
        full = cls.with_defaults(params)
        lo, hi = full["m_range"] if len(full["m_range"]) == 2 else (0, -1)
        require("m_range", len(full["m_range"]) == 2 and lo < hi,
                f"m_range must be two numbers (lo, hi), lo < hi (the m grid is floor(lo d) + "
                f"1 .. floor(hi d)), got {list(full['m_range'])}")
        if full.get("update", "normalised") == "printed":
            require("update", full["solver"] == "titterington",
                    "update='printed' is Titterington's update as printed (Alg. 2 step 8); set "
                    f"solver='titterington' with it, got solver={full['solver']!r}")

    @classmethod
    def check_data_limits(cls, params, n_train, d, n_classes):
        ks = list(params["k_select"])
        require("k_select", max(ks) <= n_train - 1, f"k_select = {ks}: k must be at most "
                f"n_train - 1 = {n_train - 1} (leave-one-out selection)")
        name = "m" if params["m"] is not None else "m_grid"
        for m in [params["m"]] if params["m"] is not None else list(params["m_grid"] or []):
            require(name, m < n_train, f"{'m_grid: ' * (name == 'm_grid')}m = {m} must be < "
                    f"n_train = {n_train} training points (each training point's neighbourhood "
                    "excludes itself)")

    def _set_m_grid(self, n: int, d: int) -> None:
        """`m_grid_`: `m`, else `m_grid`, else the default grid (`dmlbench.methods.local`)."""
        if self.m is not None:
            grid = [self.m]
        elif self.m_grid is not None:
            grid = list(self.m_grid)
        else:
            grid = default_m_grid(d, n, self.grid_size, tuple(self.m_range))
        self.m_grid_ = sorted(int(m) for m in set(grid))

    # ---- fit ----------------------------------------------------------------------------
    def fit(self, X, y):
        X, y = validated_training_data(self, X, y, self.min_classes)
        n, d = X.shape
        self._set_m_grid(n, d)
        self.candidates_ = self._candidates(d)
        self.X_, self.y_ = X, np.unique(y, return_inverse=True)[1]
        self.classes_ = np.unique(y)
        self._train = TrainingPoints(X)
        self._space = self._neighbourhood_space(X, "X")
        self._stats = {"iterations": [], "gap": [], "not_converged": 0, "fallbacks": 0,
                       "solvers": set()}
        self._nbr_train = euclidean_kneighbors(self._space, self._space, max(self.m_grid_),
                                               exclude_self=True)[1]
        self._train_weights = {}
        self._owned = None
        if len(self.m_grid_) == 1 and len(self.candidates_) == 1:
            self.loo_error_ = None
            self.selected_ = {int(k): (self.m_grid_[0], 0) for k in self.k_select}
        else:
            self._select()
        if self.weighting == "mvce":  # scikit-learn's n_iter_ beside a max_iter parameter
            self.n_iter_ = max((int(np.max(i)) for i in self._stats["iterations"] if np.size(i)),
                               default=0)
        return self

    fit.checks_parameters = True  # checked inside, after the input (`validated_training_data`)

    def _neighbourhood_space(self, X: np.ndarray, what: str) -> np.ndarray:
        if self.neighbourhood == "euclidean":
            return X
        norms = np.linalg.norm(X, axis=1)
        if np.any(norms == 0):
            raise ValueError(f"neighbourhood='cosine' needs non-zero rows; {what} row "
                             f"{int(np.flatnonzero(norms == 0)[0])} is zero")
        return X / norms[:, None]

    def _select(self) -> None:
        """Training error of every (m, candidate) for every k of `k_select`: leave-one-out
        (`selection='loo'`: each training point queried against the others, its neighbourhood
        excluding itself) or resubstitution (against all training points, itself included, as
        a test query equal to a training point would be). The MVCE weights of the training
        points' own (leave-one-out) neighbourhoods are kept for the m chosen for some k
        (`_train_weights`): `train_kneighbors`, and the test queries of the owners 'training'
        and 'symmetric', reuse them."""
        n = self.X_.shape[0]
        queries = np.arange(n)
        if self.max_selection_queries is not None and self.max_selection_queries < n:
            rng = np.random.default_rng(self.random_state)
            queries = np.sort(rng.choice(n, self.max_selection_queries, replace=False))
        ks = sorted(int(k) for k in self.k_select)
        n_classes = int(self.y_.max()) + 1
        loo = self.selection == "loo"
        if loo:
            nbr, exclude = self._nbr_train[queries], queries
        else:
            nbr = euclidean_kneighbors(self._space[queries], self._space, max(self.m_grid_))[1]
            exclude = None
        # the weights of the queries' neighbourhoods are those of the training points' own
        # neighbourhoods (`_nbr_train`) when the metric is the training point's, or when every
        # training point is a leave-one-out query
        own_weights = self.owner != "query" or (loo and queries.size == n)
        errors = np.zeros((len(self.m_grid_), len(self.candidates_), len(ks)))
        support, best, best_m = None, np.full(len(ks), np.inf), [None] * len(ks)
        for i, m in enumerate(self.m_grid_):
            next_m = self.m_grid_[i + 1] if i + 1 < len(self.m_grid_) else None
            lists, support, weights = self._search(
                self.X_[queries], nbr, m, list(range(len(self.candidates_))), max(ks),
                exclude=exclude, support=support, next_m=next_m,
                rows=queries if loo else None)
            for c, (_, ind) in enumerate(lists):
                for j, k in enumerate(ks):
                    pred = knn_vote(self.y_[ind[:, :k]], n_classes)
                    errors[i, c, j] = np.mean(pred != self.y_[queries])
            if weights is not None and own_weights:
                better = errors[i].min(axis=0) < best
                best = np.where(better, errors[i].min(axis=0), best)
                best_m = [m if b else old for b, old in zip(better, best_m)]
                self._train_weights[m] = weights
                self._train_weights = {key: w for key, w in self._train_weights.items()
                                       if key in best_m}
        self.loo_error_ = errors
        self.selected_ = {}
        for j, k in enumerate(ks):
            flat = int(np.argmin(errors[:, :, j]))  # first minimum: smaller m, earlier candidate
            i, c = np.unravel_index(flat, errors.shape[:2])
            self.selected_[k] = (self.m_grid_[i], int(c))

    # ---- search -------------------------------------------------------------------------
    def _eps(self, Z: np.ndarray) -> np.ndarray:
        eps = np.full(Z.shape[0], float(self.eps))
        if self.eps_scale == "relative":
            scale = np.einsum("bmd,bmd->b", Z, Z) / (Z.shape[1] * Z.shape[2])
            zero = scale == 0
            self._stats["fallbacks"] += int(zero.sum())
            eps = np.where(zero, eps, eps * scale)
        return eps

    def _solve(self, Z: np.ndarray, eps: np.ndarray, support: np.ndarray | None,
               weights: np.ndarray | None = None) -> tuple[mvce.MVCEResult, np.ndarray]:
        """The metric's matrix for each neighbourhood, and the tie band its accuracy allows
        (`support`: the MVCE solver's hint, `mvce.nested_support`; `weights`: MVCE weights
        solved earlier for these neighbourhoods, used instead of solving)."""
        if self.weighting == "uniform":
            return (mvce.regularised_covariance(Z, eps, certify=False),
                    np.full(Z.shape[0], TIE_RTOL))
        printed = self.update == "printed"
        if weights is not None:
            res = mvce.at_weights(Z, eps, weights, self.tol)
        elif printed:
            res = mvce.titterington(Z, eps, tol=self.tol, update="printed",
                                    max_iter=10000 if self.max_iter is None else self.max_iter)
        else:
            res = mvce.solve(Z, eps, tol=self.tol, max_iter=self.max_iter, solver=self.solver,
                             support=support)
        if weights is None:
            self._stats["iterations"].append(res.n_iter)
            self._stats["gap"].append(res.gap)
            self._stats["not_converged"] += int((~res.converged).sum())
            self._stats["solvers"].add(res.solver + "-printed" * printed)
        if printed:  # weights off the simplex: their gap certifies nothing
            return res, np.full(Z.shape[0], TIE_RTOL)
        return res, certified_band(np.maximum(res.gap, self.tol))

    def _search(self, Q: np.ndarray, nbr: np.ndarray, m: int, cands: list[int], depth: int,
                exclude: np.ndarray | None = None, support: np.ndarray | None = None,
                next_m: int | None = None, weights: np.ndarray | None = None,
                rows: np.ndarray | None = None):
        """For each candidate in `cands`, the `depth` nearest training points of every query of
        Q under the GQD of `owner` (a query's neighbourhood: the first m columns of `nbr`), in
        the order of the tie rule (`search`); `exclude[i]` is a training index left out for
        query i (leave-one-out). `support` is this m's MVCE hint; `weights`, MVCE weights solved
        earlier, replace the solves. Returns (that list, the MVCE hint for the nested
        neighbourhoods of size `next_m` or None, the MVCE weights, None for uniform weights).
        Hint and weights are those of the queries' neighbourhoods (q, m) for owner 'query', of
        every training point's own neighbourhood (n, m) otherwise. `rows`: the training points
        the queries are, when `nbr` holds their own neighbourhoods (`_nbr_train[rows]`; the
        symmetric owner then reuses their metrics)."""
        if self.owner == "query":
            return self._search_query(Q, nbr, m, cands, depth, exclude, support, next_m,
                                      weights)
        owned, hint, solved = self._training_metrics(m, cands, support, next_m, weights)
        out = []
        for c, own in zip(cands, owned):
            query = None
            if self.owner == "symmetric":
                query = ((own.V[rows], own.g[rows], own.g_perp[rows], np.full(len(rows), own.band))
                         if rows is not None else self._query_metrics(Q, nbr, m, c))
            band = np.full(Q.shape[0], TIE_RTOL) if query is None else query[3]
            out.append(search_owned(self._train, Q, own, depth, band, exclude,
                                    None if query is None else query[:3]))
        return out, hint, solved

    def _training_metrics(self, m: int, cands: list[int], support: np.ndarray | None = None,
                          next_m: int | None = None, weights: np.ndarray | None = None):
        """([`OwnedMetrics`] per candidate, the MVCE hint for `next_m`, the MVCE weights (n, m)):
        every training point's own metric from its m nearest other training points, solved (or
        at `weights`, else at the weights the selection kept for this m); the last m's are
        kept for the next call."""
        key = (m, tuple(cands))
        if self._owned is not None and self._owned[0] == key:
            return self._owned[1], None, self._owned[2]
        if weights is None:
            weights = self._train_weights.get(m)
        parts = self._search_query(self.X_, self._nbr_train, m, cands, 0, support=support,
                                   next_m=next_m, weights=weights, metrics_only=True)
        (metrics, band), hint, solved = parts
        owned = [OwnedMetrics(self._train, V, g, g_perp, float(band.max()))
                 for V, g, g_perp in metrics]
        self._owned = (key, owned, solved)
        return owned, hint, solved

    def _query_metrics(self, Q: np.ndarray, nbr: np.ndarray, m: int, c: int):
        """(V, g, g_perp, band) of each query's own metric (candidate c)."""
        (metrics, band), _, _ = self._search_query(Q, nbr, m, [c], 0, metrics_only=True)
        return (*metrics[0], band)

    def _search_query(self, Q, nbr, m, cands, depth, exclude=None, support=None, next_m=None,
                      weights=None, metrics_only=False):
        """`_search` with the query's metric; with `metrics_only`, instead of the lists, the
        queries' metrics ([(V, g, g_perp)] per candidate, over all queries) and tie bands."""
        X, d = self.X_, self.X_.shape[1]
        q = Q.shape[0]
        out = [(np.empty((q, depth)), np.empty((q, depth), dtype=np.int64)) for _ in cands]
        kept, bands = [[] for _ in cands], []
        mvce_weights = self.weighting != "uniform"
        hint = np.empty((q, next_m), dtype=bool) if next_m is not None and mvce_weights else None
        solved = np.empty((q, m)) if mvce_weights else None
        batch = max(1, min(MVCE_BATCH, MAX_BLOCK_BYTES // (8 * m * d)))
        for start in range(0, q, batch):
            sl = slice(start, min(start + batch, q))
            Z = X[nbr[sl, :m]] - Q[sl][:, None, :]
            eps = self._eps(Z)
            res, band = self._solve(Z, eps, None if support is None else support[sl],
                                    None if weights is None else weights[sl])
            if hint is not None:
                hint[sl] = mvce.nested_support(res, next_m)
            if solved is not None:
                solved[sl] = res.weights
            metrics = self._metrics(res, eps, d, [self.candidates_[c] for c in cands])
            for c, (V, g, g_perp) in enumerate(metrics):
                if metrics_only:
                    kept[c].append((V, g, g_perp))
                    continue
                found = search(self._train, Q[sl], V, g, g_perp, depth, band,
                               None if exclude is None else exclude[sl])
                out[c][0][sl], out[c][1][sl] = found
            bands.append(band)
        if metrics_only:
            joined = [tuple(np.concatenate(parts) for parts in zip(*batches)) for batches in kept]
            return (joined, np.concatenate(bands)), hint, solved
        return out, hint, solved

    def _metrics(self, res: mvce.MVCEResult, eps: np.ndarray, d: int, cands: list[dict]):
        """(V, g, g_perp) per candidate: each query's metric in the spectral form `search`
        takes, from the eigenpairs of A and the candidate's gains."""
        lam, V = res.eigh()
        return [(V, *self._gains(lam, eps, d, cand)) for cand in cands]

    def _query_neighbourhoods(self, Q: np.ndarray, m: int) -> np.ndarray:
        space = self._neighbourhood_space(Q, "query X")
        return euclidean_kneighbors(space, self._space, m)[1]

    def _check_depth(self, n_neighbors: int, limit: int) -> None:
        if not 1 <= n_neighbors <= limit:
            raise ValueError(f"n_neighbors must be in [1, {limit}], got {n_neighbors}")

    def kneighbors_per_k(self, X, ks, n_neighbors: int, progress: bool = False):
        """{k: (dist, ind)}: the `n_neighbors` nearest training points of each query under the
        metric chosen for the k-NN rule with this k (one search per distinct choice)."""
        Q = validated_queries(self, X)
        self._check_depth(n_neighbors, self.X_.shape[0])
        missing = sorted(set(int(k) for k in ks) - set(self.selected_))
        if missing:
            raise ValueError(f"k = {missing} not in k_select {list(self.k_select)}: the "
                             "neighbourhood size was chosen for those k only")
        out, done = {}, {}
        for k in ks:
            choice = self.selected_[int(k)]
            if choice not in done:
                m, c = choice
                done[choice] = self._search(Q, self._query_neighbourhoods(Q, m), m, [c],
                                            n_neighbors)[0][0]
            out[k] = done[choice]
        return out

    def kneighbors(self, X, n_neighbors: int, progress: bool = False):
        check_is_fitted(self, "selected_")
        k = min(self.selected_)
        return self.kneighbors_per_k(X, [k], n_neighbors)[k]

    def predict(self, X, k: int | None = None) -> np.ndarray:
        """Class labels by the k-NN rule (majority of the k nearest training points under the
        metric chosen for this k, a tie to the smallest class: `measure.knn_rule`); k must be
        in `k_select` (default: its smallest)."""
        check_is_fitted(self, "selected_")
        k = min(self.selected_) if k is None else int(k)
        ind = self.kneighbors_per_k(X, [k], k)[k][1]
        return self.classes_[knn_vote(self.y_[ind], self.classes_.size)]

    def train_kneighbors(self, n_neighbors: int):
        self._check_depth(n_neighbors, self.X_.shape[0] - 1)
        m, c = self.selected_[min(self.selected_)]
        n = self.X_.shape[0]
        return self._search(self.X_, self._nbr_train, m, [c], n_neighbors, exclude=np.arange(n),
                            weights=self._train_weights.get(m), rows=np.arange(n))[0][0]

    def fit_info(self) -> dict:
        info: dict = {"m_grid": [float(m) for m in self.m_grid_],
                      "scale_form": f"max_selection_queries={self.max_selection_queries}"}
        for k, (m, c) in sorted(self.selected_.items()):
            info[f"m_k{k}"] = m
            for key, value in self.candidates_[c].items():
                if value is not None:
                    info[f"{key}_k{k}"] = value
            if self.loo_error_ is not None:
                j = sorted(self.selected_).index(k)
                info[f"loo_error_k{k}"] = [float(e) for e in self.loo_error_[:, :, j].ravel()]
        if len(self.candidates_) > 1:
            info["candidates"] = self.candidates_
        if self._stats["iterations"]:
            iters = np.concatenate(self._stats["iterations"])
            info.update(mvce_iterations_mean=float(iters.mean()),
                        mvce_iterations_max=int(iters.max()),
                        mvce_gap_max=float(np.concatenate(self._stats["gap"]).max()),
                        mvce_not_converged=int(self._stats["not_converged"]),
                        mvce_solver="+".join(sorted(self._stats["solvers"])))
        if self.eps_scale == "relative":
            info["relative_eps_fallbacks"] = int(self._stats["fallbacks"])
        return info


def gqd_gains(lam: np.ndarray, eps: np.ndarray, d: int, form: str, rank: int | None):
    """Spectral gains (g on the r span directions, g_perp on the complement) of the GQD with
    M = A (literal) or A^{-1} (inverse), optionally truncated to the `rank` leading directions
    (Abou-Moustafa 2017, Alg. 1 step 2; a rank between r and d keeps the r span directions only,
    the complement's eigenvalue eps being degenerate)."""
    r = lam.shape[1]
    g = lam.copy() if form == "literal" else 1.0 / lam
    g_perp = eps.copy() if form == "literal" else 1.0 / eps
    if r == d:
        g_perp = np.zeros_like(eps)
    if rank is not None and rank < d:
        g[:, min(rank, r):] = 0.0
        g_perp = np.zeros_like(eps)
    return g, g_perp


def gqd_factor(A: np.ndarray, form: str) -> tuple[np.ndarray, np.ndarray]:
    """(V, g) with V diag(g) V^T = M for M = A (literal) or A^{-1} (inverse), A (b, d, d)
    positive definite, from the Cholesky factor A = L L^T: F = L or L^{-T}, so M = F F^T, and V
    holds F's columns scaled to unit length, g their squared lengths. The columns are not
    orthogonal, but `search` needs only M = V diag(g) V^T with g_perp = 0 and unit columns (its
    error bounds grow with sum(g) <= r max(g), which they allow), so a full-rank GQD needs no
    eigendecomposition: about a tenth of eigh's flops for d x d."""
    L = np.linalg.cholesky(A)
    F = L if form == "literal" else np.swapaxes(np.linalg.inv(L), 1, 2)
    g = np.einsum("bdr,bdr->br", F, F)
    return F / np.sqrt(g)[:, None, :], g


POSITIVE_INT = Interval(Integral, 1, None)
#: constraints of the parameters every local metric has
LOCAL = {"m": [Interval(Integral, 2, None), None],
         "m_grid": [Grid(Interval(Integral, 2, None)), None], "grid_size": [POSITIVE_INT],
         "k_select": [Grid(POSITIVE_INT)],
         "eps": [Interval(Real, 0, None, closed="neither")], "eps_scale": [Options(EPS_SCALES)],
         "neighbourhood": [Options(NEIGHBOURHOODS)], "owner": [Options(OWNERS)],
         "selection": [Options(SELECTIONS)], "m_range": [Grid(Interval(Real, 0, None))],
         "max_selection_queries": [POSITIVE_INT, None],
         "random_state": [Interval(Integral, 0, None), None]}
#: the MVCE solver (`dmlbench.solvers.mvce.solve`), its stop (duality gap; the step norm for the
#: printed update) and iteration cap, and Titterington's update (normalised, or as printed)
MVCE = {"solver": [Options(mvce.SOLVERS)], "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [POSITIVE_INT, None], "update": [Options(mvce.UPDATES)]}
GQD = {"form": [Options(FORMS)], "rank": [POSITIVE_INT, None],
       "rank_grid": [Grid(POSITIVE_INT, None), None]}


class _GQDMetric(LocalMetric):
    def _candidates(self, d):
        ranks = [self.rank] if self.rank_grid is None else list(self.rank_grid)
        return [{"rank": None if r is None else int(r)} for r in ranks]

    def _gains(self, lam, eps, d, cand):
        return gqd_gains(lam, eps, d, self.form, cand["rank"])

    def _metrics(self, res, eps, d, cands):
        """Full-rank candidates on neighbourhoods spanning R^d (m >= d): M = A or A^{-1}
        factorised (`gqd_factor`) instead of diagonalised; otherwise the eigenpairs."""
        if res.basis is not None or any(c["rank"] is not None and c["rank"] < d for c in cands):
            return super()._metrics(res, eps, d, cands)
        V, g = gqd_factor(res.span_matrix(), self.form)
        return [(V, g, np.zeros_like(eps))] * len(cands)


@register("rmvem")
class RMVEM(_GQDMetric):
    """RMVEM (Abou-Moustafa 2017, Alg. 1 + 2): A_q = the MVCE of the query's m Euclidean nearest
    training points (fixed centre x_q, regulariser eps = 1e-4 as in the paper; `solver` as in
    `dmlbench.solvers.mvce.solve`, Alg. 2 is "titterington", to gap `tol`);
    GQD with A_q (form='literal', as printed; default) or A_q^{-1} (form='inverse'); optional
    rank truncation (`rank`, or `rank_grid` to select it with m). m is chosen per k of `k_select`
    on the leave-one-out training error over `m_grid` (default d+1..3d, see the package notes),
    unless `m` fixes it.

    Parameters
    ----------
    m : int or None, default=None
        Neighbourhood size: the query's m nearest training points (by `neighbourhood`) form its
        ellipsoid; None: chosen per k of `k_select` on the leave-one-out training error over
        `m_grid`.
    m_grid : list of int or None, default=None
        Candidates for m; None: d+1..3d (Abou-Moustafa 2007, sect. 4; `m_range`), capped at
        n - 1 and thinned to `grid_size` evenly spaced values.
    grid_size : int, default=12
        At most this many values in the default m grid (ours: bounds the selection's cost).
    k_select : tuple of int, default=(1, 3, 5)
        The k of the k-NN rule the choice is made for, one choice per k (`kneighbors_per_k`;
        `kneighbors` uses the smallest).
    eps : float, default=0.0001
        Regulariser of A_q = sum_j w_j z_j z_j^T + eps I (Abou-Moustafa 2017: 1e-4); > 0.
    eps_scale : {'absolute', 'relative'}, default='absolute'
        'absolute': eps as given (the papers); 'relative' (ours): eps times the neighbourhood's
        mean eigenvalue sum_j |z_j|^2 / (m d), eps itself where the spread is zero.
    form : {'literal', 'inverse'}, default='literal'
        The GQD's matrix: A_q as printed (Abou-Moustafa 2017, sect. 3) or A_q^{-1} (the
        Mahalanobis reading of A_q as a covariance).
    rank : int or None, default=None
        Keep the `rank` leading eigen-directions of the GQD (Alg. 1 step 2); None: all.
    rank_grid : list of (int or None) or None, default=None
        Candidate ranks chosen with m on the leave-one-out error (None in the list: full rank);
        None: `rank`.
    neighbourhood : {'euclidean', 'cosine'}, default='euclidean'
        How the m nearest training points are found: Euclidean distance, or cosine similarity
        (Abou-Moustafa 2007's MVEM-sim).
    owner : {'query', 'training', 'symmetric'}, default='query'
        Whose matrix measures the distance of a query q to a training point y: q's (Alg. 1 as
        printed), y's (each training point's from its m nearest other training points), or
        'symmetric', the average of the two one-sided squared distances, (q - y)^T ((M_q + M_y)
        / 2) (q - y). With 'training' and 'symmetric' a leave-one-out query of the selection
        meets training points' metrics computed with it among their neighbours.
    selection : {'loo', 'resubstitution'}, default='loo'
        The training error that chooses m: leave-one-out (Abou-Moustafa 2017, sect. 5.2), or
        resubstitution (each training point classified among all of them, itself included).
    m_range : tuple of float, default=(1, 3)
        (lo, hi): the default m grid is floor(lo d) + 1 .. floor(hi d), capped at [2, n - 1]
        (1, 3: d+1..3d, Abou-Moustafa 2007, sect. 4).
    solver : {'auto', 'newton', 'titterington'}, default='auto'
        MVCE solver (`solvers.mvce.solve`): 'titterington' is Abou-Moustafa 2017's Alg. 2
        (normalised update, duality-gap stop), 'newton' the interior-point method, 'auto' Newton
        when m > d.
    tol : float, default=1e-09
        Duality gap at which the MVCE solver stops (a certificate; the paper stops on ||w(t) -
        w(t+1)|| <= 1e-2..1e-4, sect. 5.2); it also sets the tie band.
    max_iter : int or None, default=None
        Iteration cap of the MVCE solver; None: the solver's own.
    update : {'normalised', 'printed'}, default='normalised'
        Titterington's update with solver='titterington': w_j delta_j / sum_i w_i delta_i, to
        the duality gap `tol`; or as printed in Alg. 2 step 8, w_j delta_j / d, stopped when
        ||w(t+1) - w(t)||_2 <= `tol` (the paper's tau, 1e-2..1e-4, sect. 5.2). The printed
        update's weights leave the simplex, so its gap certifies nothing: the tie band is 1e-4.
    max_selection_queries : int or None, default=None
        Use at most this many training points, drawn with `random_state`, as leave-one-out
        queries of the selection; None: all (the papers).
    random_state : int or None, default=None
        Seeds the draw of `max_selection_queries`.

    Attributes
    ----------
    m_grid_ : list of int
        The candidates for m.
    candidates_ : list of dict
        The candidate settings besides m (rank; or rho and tau).
    selected_ : dict
        k -> (m, index into `candidates_`) chosen for the k-NN rule with that k.
    loo_error_ : ndarray of shape (len(m_grid_), len(candidates_), len(k_select)) or None
        Leave-one-out training error of every candidate; None when there was nothing to choose.
    X_ : ndarray of shape (n, D)
        The training points.
    y_ : ndarray of shape (n,)
        Their labels, coded 0 .. classes - 1.
    classes_ : ndarray
        The class labels.
    n_features_in_ : int
        Features D seen by `fit`.
    n_iter_ : int
        The most iterations any MVCE solve of `fit` (the selection) took; 0 when `fit` solved
        none (a single candidate: the queries' ellipsoids are solved when they are queried).
    """

    weighting = "mvce"
    _parameter_constraints = {**LOCAL, **GQD, **MVCE}

    def __init__(self, m=None, m_grid=None, grid_size=12, k_select=(1, 3, 5), eps=1e-4,
                 eps_scale="absolute", form="literal", rank=None, rank_grid=None,
                 neighbourhood="euclidean", owner="query", selection="loo", m_range=(1, 3),
                 solver="auto", tol=1e-9, max_iter=None, update="normalised",
                 max_selection_queries=None, random_state=None):
        self.m, self.m_grid, self.grid_size, self.k_select = m, m_grid, grid_size, k_select
        self.eps, self.eps_scale, self.form, self.rank = eps, eps_scale, form, rank
        self.rank_grid, self.neighbourhood = rank_grid, neighbourhood
        self.owner, self.selection, self.m_range = owner, selection, m_range
        self.solver, self.tol, self.max_iter, self.update = solver, tol, max_iter, update
        self.max_selection_queries, self.random_state = max_selection_queries, random_state


@register("rmle")
class RMLE(_GQDMetric):
    """RMLE (Abou-Moustafa 2017, eq. 6): as RMVEM with uniform weights, A_q = (1/m) sum_j z_j z_j^T
    + eps I, the regularised local covariance about the query (Alg. 2 at t = 0).

    Parameters
    ----------
    m : int or None, default=None
        Neighbourhood size: the query's m nearest training points (by `neighbourhood`) form its
        ellipsoid; None: chosen per k of `k_select` on the leave-one-out training error over
        `m_grid`.
    m_grid : list of int or None, default=None
        Candidates for m; None: d+1..3d (Abou-Moustafa 2007, sect. 4; `m_range`), capped at
        n - 1 and thinned to `grid_size` evenly spaced values.
    grid_size : int, default=12
        At most this many values in the default m grid (ours: bounds the selection's cost).
    k_select : tuple of int, default=(1, 3, 5)
        The k of the k-NN rule the choice is made for, one choice per k (`kneighbors_per_k`;
        `kneighbors` uses the smallest).
    eps : float, default=0.0001
        Regulariser of A_q = sum_j w_j z_j z_j^T + eps I (Abou-Moustafa 2017: 1e-4); > 0.
    eps_scale : {'absolute', 'relative'}, default='absolute'
        'absolute': eps as given (the papers); 'relative' (ours): eps times the neighbourhood's
        mean eigenvalue sum_j |z_j|^2 / (m d), eps itself where the spread is zero.
    form : {'literal', 'inverse'}, default='literal'
        The GQD's matrix: A_q as printed (Abou-Moustafa 2017, sect. 3) or A_q^{-1} (the
        Mahalanobis reading of A_q as a covariance).
    rank : int or None, default=None
        Keep the `rank` leading eigen-directions of the GQD (Alg. 1 step 2); None: all.
    rank_grid : list of (int or None) or None, default=None
        Candidate ranks chosen with m on the leave-one-out error (None in the list: full rank);
        None: `rank`.
    neighbourhood : {'euclidean', 'cosine'}, default='euclidean'
        How the m nearest training points are found: Euclidean distance, or cosine similarity
        (Abou-Moustafa 2007's MVEM-sim).
    owner : {'query', 'training', 'symmetric'}, default='query'
        Whose matrix measures the distance of a query q to a training point y: q's (Alg. 1 as
        printed), y's (each training point's from its m nearest other training points), or
        'symmetric', the average of the two one-sided squared distances, (q - y)^T ((M_q + M_y)
        / 2) (q - y). With 'training' and 'symmetric' a leave-one-out query of the selection
        meets training points' metrics computed with it among their neighbours.
    selection : {'loo', 'resubstitution'}, default='loo'
        The training error that chooses m: leave-one-out (Abou-Moustafa 2017, sect. 5.2), or
        resubstitution (each training point classified among all of them, itself included).
    m_range : tuple of float, default=(1, 3)
        (lo, hi): the default m grid is floor(lo d) + 1 .. floor(hi d), capped at [2, n - 1]
        (1, 3: d+1..3d, Abou-Moustafa 2007, sect. 4).
    max_selection_queries : int or None, default=None
        Use at most this many training points, drawn with `random_state`, as leave-one-out
        queries of the selection; None: all (the papers).
    random_state : int or None, default=None
        Seeds the draw of `max_selection_queries`.

    Attributes
    ----------
    m_grid_ : list of int
        The candidates for m.
    candidates_ : list of dict
        The candidate settings besides m (rank; or rho and tau).
    selected_ : dict
        k -> (m, index into `candidates_`) chosen for the k-NN rule with that k.
    loo_error_ : ndarray of shape (len(m_grid_), len(candidates_), len(k_select)) or None
        Leave-one-out training error of every candidate; None when there was nothing to choose.
    X_ : ndarray of shape (n, D)
        The training points.
    y_ : ndarray of shape (n,)
        Their labels, coded 0 .. classes - 1.
    classes_ : ndarray
        The class labels.
    n_features_in_ : int
        Features D seen by `fit`.
    """

    weighting = "uniform"
    _parameter_constraints = {**LOCAL, **GQD}

    def __init__(self, m=None, m_grid=None, grid_size=12, k_select=(1, 3, 5), eps=1e-4,
                 eps_scale="absolute", form="literal", rank=None, rank_grid=None,
                 neighbourhood="euclidean", owner="query", selection="loo", m_range=(1, 3),
                 max_selection_queries=None, random_state=None):
        self.m, self.m_grid, self.grid_size, self.k_select = m, m_grid, grid_size, k_select
        self.eps, self.eps_scale, self.form, self.rank = eps, eps_scale, form, rank
        self.rank_grid, self.neighbourhood = rank_grid, neighbourhood
        self.owner, self.selection, self.m_range = owner, selection, m_range
        self.max_selection_queries, self.random_state = max_selection_queries, random_state


def minivenn_gains(lam: np.ndarray, eps: np.ndarray, d: int, rho: float, tau: float):
    """Gains of S~^{-1} = V L~ V^T (Abou-Moustafa 2007, Alg. 1 steps 3-5): rho on the leading
    directions whose eigenvalue, normalised by the sum of all d eigenvalues, exceeds tau, 1/lambda
    on the others (the complement's eigenvalue is eps)."""
    r = lam.shape[1]
    total = lam.sum(axis=1) + (d - r) * eps
    g = np.where(lam / total[:, None] > tau, rho, 1.0 / lam)
    g_perp = np.where(eps / total > tau, rho, 1.0 / eps)
    if r == d:
        g_perp = np.zeros_like(eps)
    return g, g_perp


@register("minivenn")
class MiniVenn(LocalMetric):
    """Modified MiniVenn / MVEM (Abou-Moustafa 2007, Alg. 1): neighbourhoods by cosine similarity
    (`neighbourhood='euclidean'` gives MVEM-euc), MVCE about the query with gamma = `eps` (the
    paper used 0 or 0.1; 0 is not allowed here since it leaves A singular when the neighbours do
    not span R^d), eigen-decomposition, metric V L~ V^T. m and rho are selected per k on the
    leave-one-out training error over `m_grid` x `rho_grid` (and `tau_grid` if given; the paper
    fixes tau per data set).

    Parameters
    ----------
    m : int or None, default=None
        Neighbourhood size: the query's m nearest training points (by `neighbourhood`) form its
        ellipsoid; None: chosen per k of `k_select` on the leave-one-out training error over
        `m_grid`.
    m_grid : list of int or None, default=None
        Candidates for m; None: d+1..3d (Abou-Moustafa 2007, sect. 4; `m_range`), capped at
        n - 1 and thinned to `grid_size` evenly spaced values.
    grid_size : int, default=12
        At most this many values in the default m grid (ours: bounds the selection's cost).
    k_select : tuple of int, default=(1, 3, 5)
        The k of the k-NN rule the choice is made for, one choice per k (`kneighbors_per_k`;
        `kneighbors` uses the smallest).
    eps : float, default=0.1
        gamma, the regulariser of A_q (Abou-Moustafa 2007 used 0 or 0.1; > 0 here, since A_q is
        singular when the neighbours do not span R^d).
    eps_scale : {'absolute', 'relative'}, default='absolute'
        'absolute': eps as given (the papers); 'relative' (ours): eps times the neighbourhood's
        mean eigenvalue sum_j |z_j|^2 / (m d), eps itself where the spread is zero.
    rho : float or None, default=None
        Gain of the leading directions in V L~ V^T (Alg. 1 step 5); None: chosen with m over
        `rho_grid`.
    rho_grid : tuple of float, default=(0.0, 0.25, 0.5, 0.75, 1.0)
        Candidates for rho (ours: the paper searches a grid it does not print).
    tau : float, default=0.05
        A direction leads when its eigenvalue over the sum of all d exceeds tau (Alg. 1 step 4;
        ours: the paper fixes tau per data set).
    tau_grid : list of float or None, default=None
        Candidates for tau chosen with m and rho; None: `tau`.
    neighbourhood : {'euclidean', 'cosine'}, default='cosine'
        'cosine': MVEM-sim, neighbourhoods by cosine similarity (the paper's MiniVenn);
        'euclidean': MVEM-euc.
    owner : {'query', 'training', 'symmetric'}, default='query'
        Whose matrix measures the distance of a query q to a training point y: q's (Alg. 1 as
        printed), y's (each training point's from its m nearest other training points), or
        'symmetric', the average of the two one-sided squared distances, (q - y)^T ((M_q + M_y)
        / 2) (q - y). With 'training' and 'symmetric' a leave-one-out query of the selection
        meets training points' metrics computed with it among their neighbours.
    selection : {'loo', 'resubstitution'}, default='loo'
        The training error that chooses m: leave-one-out (Abou-Moustafa 2017, sect. 5.2), or
        resubstitution (each training point classified among all of them, itself included).
    m_range : tuple of float, default=(1, 3)
        (lo, hi): the default m grid is floor(lo d) + 1 .. floor(hi d), capped at [2, n - 1]
        (1, 3: d+1..3d, Abou-Moustafa 2007, sect. 4).
    solver : {'auto', 'newton', 'titterington'}, default='auto'
        MVCE solver (`solvers.mvce.solve`): 'titterington' is Abou-Moustafa 2017's Alg. 2
        (normalised update, duality-gap stop), 'newton' the interior-point method, 'auto' Newton
        when m > d.
    tol : float, default=1e-09
        Duality gap at which the MVCE solver stops (a certificate; the paper stops on ||w(t) -
        w(t+1)|| <= 1e-2..1e-4, sect. 5.2); it also sets the tie band.
    max_iter : int or None, default=None
        Iteration cap of the MVCE solver; None: the solver's own.
    update : {'normalised', 'printed'}, default='normalised'
        Titterington's update with solver='titterington': w_j delta_j / sum_i w_i delta_i, to
        the duality gap `tol`; or as printed in Alg. 2 step 8, w_j delta_j / d, stopped when
        ||w(t+1) - w(t)||_2 <= `tol` (the paper's tau, 1e-2..1e-4, sect. 5.2). The printed
        update's weights leave the simplex, so its gap certifies nothing: the tie band is 1e-4.
    max_selection_queries : int or None, default=None
        Use at most this many training points, drawn with `random_state`, as leave-one-out
        queries of the selection; None: all (the papers).
    random_state : int or None, default=None
        Seeds the draw of `max_selection_queries`.

    Attributes
    ----------
    m_grid_ : list of int
        The candidates for m.
    candidates_ : list of dict
        The candidate settings besides m (rank; or rho and tau).
    selected_ : dict
        k -> (m, index into `candidates_`) chosen for the k-NN rule with that k.
    loo_error_ : ndarray of shape (len(m_grid_), len(candidates_), len(k_select)) or None
        Leave-one-out training error of every candidate; None when there was nothing to choose.
    X_ : ndarray of shape (n, D)
        The training points.
    y_ : ndarray of shape (n,)
        Their labels, coded 0 .. classes - 1.
    classes_ : ndarray
        The class labels.
    n_features_in_ : int
        Features D seen by `fit`.
    n_iter_ : int
        The most iterations any MVCE solve of `fit` (the selection) took; 0 when `fit` solved
        none (a single candidate: the queries' ellipsoids are solved when they are queried).
    """

    papers = ("am07",)
    weighting = "mvce"
    expected_failed_checks = {
        "check_estimators_dtypes": "neighbourhood='cosine' (the paper's MiniVenn) needs rows of "
        "non-zero length, and the check's integer copy of its data has zero rows (refused with "
        "a ValueError naming the row); with neighbourhood='euclidean' the check passes"}
    _parameter_constraints = {
        **LOCAL, **MVCE, "rho": [Interval(Real, 0, 1), None],
        "rho_grid": [Grid(Interval(Real, 0, 1))], "tau": [Interval(Real, 0, 1, closed="neither")],
        "tau_grid": [Grid(Interval(Real, 0, 1, closed="neither")), None]}

    def __init__(self, m=None, m_grid=None, grid_size=12, k_select=(1, 3, 5), eps=0.1,
                 eps_scale="absolute", rho=None, rho_grid=(0.0, 0.25, 0.5, 0.75, 1.0), tau=0.05,
                 tau_grid=None, neighbourhood="cosine", owner="query", selection="loo",
                 m_range=(1, 3), solver="auto", tol=1e-9, max_iter=None, update="normalised",
                 max_selection_queries=None, random_state=None):
        self.m, self.m_grid, self.grid_size, self.k_select = m, m_grid, grid_size, k_select
        self.eps, self.eps_scale, self.rho, self.rho_grid = eps, eps_scale, rho, rho_grid
        self.tau, self.tau_grid, self.neighbourhood = tau, tau_grid, neighbourhood
        self.owner, self.selection, self.m_range = owner, selection, m_range
        self.solver, self.tol, self.max_iter, self.update = solver, tol, max_iter, update
        self.max_selection_queries, self.random_state = max_selection_queries, random_state

    def _grids(self):
        rhos = [self.rho] if self.rho is not None else list(self.rho_grid)
        taus = [self.tau] if self.tau_grid is None else list(self.tau_grid)
        return rhos, taus

    def _candidates(self, d):
        rhos, taus = self._grids()
        return [{"rho": float(r), "tau": float(t)} for t in taus for r in rhos]

    def _gains(self, lam, eps, d, cand):
        return minivenn_gains(lam, eps, d, cand["rho"], cand["tau"])

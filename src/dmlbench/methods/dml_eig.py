"""DML-eig (Ying & Li 2012, "Distance metric learning with eigenvalue optimization", JMLR 13).

Problem (their eq. 2): maximise the smallest dissimilar-pair distance subject to a bound on the
similar-pair distances,
    max_{M >= 0} min_{(i,j) in D} ||x_i - x_j||_M^2   s.t.  sum_{(i,j) in S} ||x_i - x_j||_M^2 <= 1.
With X_S = sum_S (x_i - x_j)(x_i - x_j)^T and M = X_S^{-1/2} S X_S^{-1/2} it becomes (Theorem 1)
    max_{S in P} min_{tau in D} <X_tau, S>,   P = {S >= 0, tr S = 1},
    X_tau = X_S^{-1/2} (x_i - x_j)(x_i - x_j)^T X_S^{-1/2},
i.e. min over the simplex of lambda_max(sum_tau u_tau X_tau), an eigenvalue optimisation. The
smoothed objective (section 3) is
    f_mu(S) = -mu log sum_tau exp(-<X_tau, S> / mu),   grad f_mu(S) = sum_tau u_tau X_tau,
u = softmax(-<X_tau, S> / mu), and Algorithm 1 (Frank-Wolfe over the spectrahedron) iterates
    Z_t = v v^T, v the top eigenvector of grad f_mu(S_t);  S_{t+1} = (1 - a_t) S_t + a_t Z_t.

The gradient is X~^T L X~ with X~ the whitened points and L the Laplacian of the pair weights u
(a sparse n x n matrix with |D| entries), so the |D| x d matrix of pair differences is never
formed.

Solvers (`solver`), both from S_1 = I / d (the centre of P), both stopping on the Frank-Wolfe
gap <grad f_mu(S_t), v v^T - S_t> (an upper bound on max f_mu - f_mu(S_t)) at most
tol * max(|f_mu(S_t)|, mu), or after `max_iter` iterations:
- "frank_wolfe": Algorithm 1 as printed, with an exact line search for a_t on [0, 1] (f_mu on
  the segment is concave, its derivative at 0 is the gap), so f_mu never decreases (the paper
  analyses a fixed schedule). O(|D| + n d^2 + d^3) per iteration (<X_tau, S> updated from the
  projections on v), but on the UCI sets the gap is still 1-40 % of f_mu after 200 iterations
  for mu <= 1e-3 (`benchmarks/dml_eig_speed.py`).
- "lbfgs" (default; a change of algorithm against Algorithm 1, same objective and constraint
  set): S = V V^T / ||V||_F^2 with V a d x d matrix, which covers P exactly, and L-BFGS on V
  (`_factored_lbfgs`). O(|D| d + n d^2 + d^3) per evaluation; on those sets it reaches
  tol = 1e-3 in 2-140 iterations, in 0.01-0.4x the time of 200 Frank-Wolfe iterations.
Every iterate stays in P, so the constraint holds with equality: tr(X_S M) = tr S = 1.

Choices the paper leaves open (the authors' MATLAB code is not available offline), made here:
- Pairs (Shigeto 2017 used "the default setting in the authors' code"): similar pairs S = each
  training point with its `n_similar` nearest same-class points (Euclidean, as LMNN's target
  neighbours; default 3, LMNN's usual k; "all": every same-class pair); dissimilar pairs
  D = every pair of points of different classes (`dissimilar="all"`, |D| ~ n^2 / 2) or each
  point's `dissimilar` nearest points of other classes (an integer; for large n). Pairs are
  unordered and counted once.
- X_S singular (fewer similar pairs than dimensions, or duplicate points): its eigenvalues below
  1e-10 times the largest are raised to that floor before X_S^{-1/2} is formed (recorded as
  `fit.xs_floored`); the constraint then holds for the floored X_S.
- mu is absolute, as in the paper (the <X_tau, S> are of order 1 / |S|); `mu_grid` chooses it by
  cross-validation of k-NN accuracy on the training part, as Shigeto 2017 did.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import Callable

import numpy as np
import scipy.linalg
import scipy.sparse
from scipy.optimize import minimize

from ..measure.neighbours import euclidean_kneighbors
from .base import LinearMetric
from .parameters import Grid, Interval, Options, require
from .registry import register
from .selection import search_parameter

#: eigenvalues of X_S below this fraction of the largest are floored there
XS_FLOOR = 1e-10
SOLVERS = ("lbfgs", "frank_wolfe")


def similar_pairs(X: np.ndarray, y: np.ndarray, n_similar) -> np.ndarray:
    """Unordered pairs (i < j): each point with its `n_similar` nearest same-class points
    (``"all"``: every pair of the same class)."""
    out = []
    for label in np.unique(y):
        members = np.flatnonzero(y == label)
        k = members.size - 1 if n_similar == "all" else min(int(n_similar), members.size - 1)
        if k < 1:
            continue
        _, nearest = euclidean_kneighbors(X[members], X[members], k, exclude_self=True)
        out.append(np.column_stack([np.repeat(members, k), members[nearest].ravel()]))
    if not out:
        raise ValueError("DML-eig needs similar pairs: every class has a single training point")
    return _unique_unordered(np.vstack(out))


def dissimilar_pairs(X: np.ndarray, y: np.ndarray, dissimilar) -> np.ndarray:
    """Unordered pairs (i < j) of different classes: all of them, or each point's `dissimilar`
    nearest points of other classes."""
    if dissimilar == "all":
        i, j = np.triu_indices(y.size, k=1)
        keep = y[i] != y[j]
        return np.column_stack([i[keep], j[keep]])
    out = []
    for label in np.unique(y):
        members, others = np.flatnonzero(y == label), np.flatnonzero(y != label)
        k = min(int(dissimilar), others.size)
        _, nearest = euclidean_kneighbors(X[members], X[others], k)
        out.append(np.column_stack([np.repeat(members, k), others[nearest].ravel()]))
    return _unique_unordered(np.vstack(out))


def _unique_unordered(pairs: np.ndarray) -> np.ndarray:
    return np.unique(np.sort(pairs, axis=1), axis=0)


class PairScatter:
    """sum_p w_p (x_i - x_j)(x_i - x_j)^T = X^T L X for a fixed list of pairs and changing
    weights w, with L the weighted graph Laplacian: O(|pairs| d + n d^2), no pair differences
    formed. The sparsity pattern of the symmetric adjacency is built once."""

    def __init__(self, pairs: np.ndarray, n: int):
        self.pairs, self.n = pairs, n
        self._by_first = np.argsort(pairs[:, 0], kind="stable")
        self._first_starts = np.searchsorted(pairs[self._by_first, 0], np.arange(n + 1))
        rows = np.concatenate([pairs[:, 0], pairs[:, 1]])
        cols = np.concatenate([pairs[:, 1], pairs[:, 0]])
        self._order = np.lexsort((cols, rows))
        self._indices = cols[self._order]
        self._indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))])

    def __call__(self, X: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        w = np.ones(len(self.pairs)) if weights is None else np.asarray(weights, dtype=float)
        both = np.concatenate([w, w])
        adjacency = scipy.sparse.csr_matrix((both[self._order], self._indices, self._indptr),
                                            shape=(self.n, self.n))
        degree = (np.bincount(self.pairs[:, 0], w, minlength=self.n)
                  + np.bincount(self.pairs[:, 1], w, minlength=self.n))
        return X.T @ (degree[:, None] * X) - X.T @ (adjacency @ X)

    def lengths(self, X: np.ndarray, block_entries: int = 1 << 21) -> np.ndarray:
        """||x_i - x_j||^2 of every pair from Gram blocks |x_i|^2 + |x_j|^2 - 2 x_i.x_j (rows of
        X in blocks of at most `block_entries` x n entries), clipped at 0."""
        sq = np.einsum("ij,ij->i", X, X)
        out = np.empty(len(self.pairs))
        step = max(1, block_entries // self.n)
        for r0 in range(0, self.n, step):
            r1 = min(r0 + step, self.n)
            idx = self._by_first[self._first_starts[r0]:self._first_starts[r1]]
            if idx.size:
                i, j = self.pairs[idx, 0], self.pairs[idx, 1]
                gram = X[r0:r1] @ X.T
                out[idx] = sq[i] + sq[j] - 2.0 * gram[i - r0, j]
        return np.maximum(out, 0.0, out=out)


def pair_scatter(X: np.ndarray, pairs: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """sum_p w_p (x_i - x_j)(x_i - x_j)^T (see `PairScatter`)."""
    return PairScatter(pairs, X.shape[0])(X, weights)


def inverse_sqrt(A: np.ndarray) -> tuple[np.ndarray, bool]:
    """A^{-1/2} of a symmetric PSD matrix, eigenvalues floored at XS_FLOOR * the largest; and
    whether any was floored."""
    values, vectors = scipy.linalg.eigh(A)
    floor = XS_FLOOR * max(values[-1], np.finfo(float).tiny)
    floored = bool(values[0] < floor)
    values = np.maximum(values, floor)
    return (vectors / np.sqrt(values)) @ vectors.T, floored


def _scaled_exp(values: np.ndarray, mu: float) -> tuple[float, np.ndarray]:
    """(min(values), exp((min - values) / mu)), with the terms below exp(-700) set to 0: they are
    below 1e-304 of the largest term (which is 1), and computing them (as subnormal numbers)
    costs many times more than the rest."""
    low = float(values.min())
    z = (low - values) / mu
    out = np.zeros_like(z)
    keep = z > -700.0
    out[keep] = np.exp(z[keep])
    return low, out


def smoothed_min(values: np.ndarray, mu: float) -> float:
    """f_mu = -mu log sum exp(-values / mu), the smooth minimum of section 3."""
    low, e = _scaled_exp(values, mu)
    return low - mu * float(np.log(e.sum()))


@dataclass
class Solution:
    """S, f_mu(S_t) for t = 1..T (the start first), the Frank-Wolfe gap at each S_t (an upper
    bound on max f_mu - f_mu(S_t)), seconds since the start at each S_t (on `clock`), and
    whether the gap reached the tolerance."""

    S: np.ndarray
    clock: Callable[[], float] = time.perf_counter
    objective: list = field(default_factory=list)
    gaps: list = field(default_factory=list)
    times: list = field(default_factory=list)
    converged: bool = False

    def __post_init__(self):
        self.start = self.clock()

    def record(self, f: float, gap: float, tol: float, mu: float) -> bool:
        """Append one iterate; True when its gap is within tol * max(|f|, mu)."""
        self.objective.append(float(f))
        self.gaps.append(float(gap))
        self.times.append(self.clock() - self.start)
        self.converged = gap <= tol * max(abs(f), mu)
        return self.converged


def solve_dml_eig(Xw: np.ndarray, dis: np.ndarray, mu: float, max_iter: int, tol: float,
                  solver: str = "lbfgs", clock: Callable[[], float] = time.perf_counter
                  ) -> Solution:
    """Maximise f_mu over P = {S >= 0, tr S = 1} on whitened points `Xw` and dissimilar pairs
    `dis`, from S_1 = I / d, until the Frank-Wolfe gap <grad f_mu(S), v v^T - S> (v the top
    eigenvector of the gradient) is at most tol * max(|f_mu(S)|, mu), or `max_iter` iterations.
    """
    d = Xw.shape[1]
    out = Solution(np.eye(d) / d, clock)  # S_1 = I / d
    if solver == "frank_wolfe":
        return _frank_wolfe(Xw, dis, mu, max_iter, tol, out)
    if solver == "lbfgs":
        return _factored_lbfgs(Xw, dis, mu, max_iter, tol, out)
    raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")


def _top_eigenvector(G: np.ndarray) -> tuple[float, np.ndarray]:
    d = G.shape[0]
    value, v = scipy.linalg.eigh(G, subset_by_index=[d - 1, d - 1])
    return float(value[0]), v[:, 0]


def _frank_wolfe(Xw, dis, mu, max_iter, tol, out: Solution) -> Solution:
    """Algorithm 1 with exact line search (see the module docstring)."""
    n, d = Xw.shape
    scatter = PairScatter(dis, n)
    a = scatter.lengths(Xw) / d  # <X_tau, S_1>
    for it in range(max_iter + 1):
        u = _weights(a, mu)
        _, v = _top_eigenvector(scatter(Xw, u))
        p = Xw @ v
        b = (p[dis[:, 0]] - p[dis[:, 1]]) ** 2  # <X_tau, v v^T>
        if out.record(smoothed_min(a, mu), u @ (b - a), tol, mu) or it == max_iter:
            break
        step = _line_search(a, b, mu)
        a = (1 - step) * a + step * b
        out.S = (1 - step) * out.S + step * np.outer(v, v)
    return out


def _factored_lbfgs(Xw, dis, mu, max_iter, tol, out: Solution) -> Solution:
    """L-BFGS on the factored problem: S = V V^T / ||V||_F^2, V d x d, maps every nonzero V
    into P and onto it, so g(V) = f_mu(S(V)) is maximised without constraints;
    grad_V g = (2 / ||V||_F^2) (G - <G, S> I) V with G = grad f_mu(S). A stationary invertible
    V has G = <G, S> I, i.e. a zero gap; the stop is the same Frank-Wolfe gap as Algorithm 1,
    a certificate, so `converged` is never claimed at a saddle. Cost per evaluation
    O(|D| d + n d^2 + d^3) (Algorithm 1: O(|D| + n d^2 + d^3) per iteration, many more of
    them)."""
    n, d = Xw.shape
    scatter = PairScatter(dis, n)
    last = {}

    def evaluate(v):
        V = v.reshape(d, d)
        norm = float(v @ v)
        a = scatter.lengths(Xw @ V) / norm  # <X_tau, S>
        u = _weights(a, mu)
        G, inner = scatter(Xw, u), float(u @ a)
        last.update(v=v.copy(), f=smoothed_min(a, mu), G=G, inner=inner)
        grad = (2.0 / norm) * (G @ V - inner * V)
        return -last["f"], -grad.ravel()

    def record(v) -> bool:
        if "v" not in last or not np.array_equal(v, last["v"]):
            evaluate(v)
        V = v.reshape(d, d)
        out.S = V @ V.T / float(v @ v)
        gap = _top_eigenvector(last["G"])[0] - last["inner"]
        return out.record(last["f"], gap, tol, mu)

    def callback(intermediate_result):
        if record(intermediate_result.x):
            raise StopIteration

    v0 = (np.eye(d) / np.sqrt(d)).ravel()  # S_1 = I / d
    if not record(v0):
        minimize(evaluate, v0, jac=True, method="L-BFGS-B", callback=callback,
                 options={"maxiter": max_iter, "ftol": 0.0, "gtol": 0.0})
    return out


def _weights(values: np.ndarray, mu: float) -> np.ndarray:
    """u = softmax(-values / mu), the gradient weights of f_mu."""
    _, e = _scaled_exp(values, mu)
    return e / e.sum()


def _line_search(a: np.ndarray, b: np.ndarray, mu: float, iters: int = 50) -> float:
    """argmax over [0, 1] of the concave f_mu((1 - s) a + s b): safeguarded Newton on its
    derivative sum_tau u_tau(s) (b - a)_tau, which decreases in s (the second derivative is
    -Var_u(b - a) / mu)."""
    delta = b - a

    def slope_curvature(s):
        u = _weights(a + s * delta, mu)
        mean = u @ delta
        return mean, -(u @ (delta - mean) ** 2) / mu

    lo, hi = 0.0, 1.0
    if slope_curvature(hi)[0] >= 0:
        return 1.0
    s = 0.5
    for _ in range(iters):
        slope, curvature = slope_curvature(s)
        if slope > 0:
            lo = s
        else:
            hi = s
        step = s - slope / curvature if curvature < 0 else np.nan
        s = step if lo < step < hi else (lo + hi) / 2
        if hi - lo < 1e-12 or abs(slope) <= 1e-13 * np.abs(delta).max():
            break
    return float(s)


@register("dml_eig")
class DMLEig(LinearMetric):
    """DML-eig (Ying & Li 2012) with smoothing parameter `mu`; see the module docstring for the
    formulation, Algorithm 1 and the choices the paper leaves open.

    Parameters
    ----------
    mu : float, default=0.001
        Smoothing of the minimum over dissimilar pairs (Ying & Li 2012, sect. 3: f_mu);
        absolute, as in the paper.
    n_similar : int or 'all', default=3
        Similar pairs: each training point with its n_similar nearest same-class points (ours,
        as LMNN's target neighbours); 'all': every same-class pair.
    dissimilar : int or 'all', default='all'
        Dissimilar pairs: every pair of different classes ('all': about n^2 / 2 pairs, 12 GB
        were not enough at n = 16 000), or each point's nearest points of other classes (an
        integer: the large-data form, n x dissimilar pairs; 20 fits 60 000 x 50 in minutes,
        docs/performance.md).
    solver : {'lbfgs', 'frank_wolfe'}, default='lbfgs'
        'frank_wolfe' is Algorithm 1 with an exact line search; 'lbfgs' (ours) maximises the
        same f_mu over S = V V^T / ||V||_F^2.
    max_iter : int, default=200
        Iteration cap of the solver.
    tol : float, default=0.001
        Stop when the Frank-Wolfe gap is at most tol x max(|f_mu|, mu).
    mu_grid : list of float or None, default=None
        Choose mu by `cv`-fold cross-validation of k-NN accuracy on the training part (as
        Shigeto 2017 did); None: `mu`.
    k_grid : list of int or None, default=None
        Also choose the test-time k with mu (needs `mu_grid`); read by `k_selection: loo`.
    cv : int, default=5
        Folds of the cross-validation of `mu_grid`.
    random_state : int or None, default=None
        Seeds the cross-validation folds.

    Attributes
    ----------
    components_ : ndarray of shape (r, D)
        The learnt map L: d(x, y) = ||L x - L y||.
    embedding_ : ndarray of shape (n, r)
        The training points mapped, L x_i (what queries are searched against).
    n_features_in_ : int
        Features D seen by `fit`.
    mu_ : float
        The mu used (`mu`, or the one chosen from `mu_grid`).
    S_ : ndarray of shape (D, D)
        The solution S in the spectrahedron (Theorem 1).
    metric_ : ndarray of shape (D, D)
        M = X_S^{-1/2} S X_S^{-1/2}.
    scatter_similar_ : ndarray of shape (D, D)
        X_S, the similar pairs' scatter.
    objective_ : list of float
        f_mu after each iteration.
    gaps_ : list of float
        The Frank-Wolfe gap after each iteration.
    n_iter_ : int
        Iterations run (len(objective_) - 1).
    selected_k_ : int or None
        The test-time k chosen with `k_grid`, else None.
    cv_info_ : dict
        The cross-validation's grid, accuracies, chosen k and seconds (empty without `mu_grid`).
    refit_s_ : float
        Seconds of the final fit (after any cross-validation).
    """

    family = "baseline"
    papers = ("sh17",)
    _parameter_constraints = {
        "mu": [Interval(Real, 0, None, closed="neither")],
        "n_similar": [Options(("all",)), Interval(Integral, 1, None)],
        "dissimilar": [Options(("all",)), Interval(Integral, 1, None)],
        "solver": [Options(SOLVERS)],
        "max_iter": [Interval(Integral, 1, None)], "tol": [Interval(Real, 0, None)],
        "mu_grid": [Grid(Interval(Real, 0, None, closed="neither")), None],
        "k_grid": [Grid(Interval(Integral, 1, None)), None], "cv": [Interval(Integral, 2, None)],
        "random_state": [Interval(Integral, 0, None), None]}

    def __init__(self, mu=1e-3, n_similar=3, dissimilar="all", solver="lbfgs", max_iter=200,
                 tol=1e-3, mu_grid=None, k_grid=None, cv=5, random_state=None):
        self.mu = mu
        self.solver = solver
        self.n_similar = n_similar
        self.dissimilar = dissimilar
        self.max_iter = max_iter
        self.tol = tol
        self.mu_grid = mu_grid
        self.k_grid = k_grid
        self.cv = cv
        self.random_state = random_state

    @classmethod
    def check_parameters(cls, params):
        super().check_parameters(params)
        params = cls.with_defaults(params)
        require("k_grid", params["k_grid"] is None or params["mu_grid"] is not None,
                "k_grid needs mu_grid: k is chosen jointly with mu by CV")

    @classmethod
    def check_data_limits(cls, params, n_train, d, n_classes):
        for name in ("n_similar", "dissimilar"):
            n = params[name]
            require(name, n == "all" or n <= n_train - 1, f"{name} = {n} exceeds the "
                    f"n_train - 1 = {n_train - 1} other training points")

    def _learn_components(self, X, y):
        self.selected_k_ = None
        self.cv_info_ = {}
        mu = float(self.mu)
        if self.mu_grid is not None:
            mu, self.selected_k_, self.cv_info_ = search_parameter(self, "mu", X, y,
                                                                   positive=True)
        start = time.perf_counter()
        sim = similar_pairs(X, y, self.n_similar)
        dis = dissimilar_pairs(X, y, self.dissimilar)
        self.scatter_similar_ = pair_scatter(X, sim)
        whiten, floored = inverse_sqrt(self.scatter_similar_)
        sol = solve_dml_eig(X @ whiten, dis, mu, int(self.max_iter), float(self.tol),
                            self.solver)
        S, trace, gaps = sol.S, sol.objective, sol.gaps
        self.mu_, self.S_, self.objective_, self.gaps_ = mu, S, trace, gaps
        self.n_iter_ = len(trace) - 1
        self.metric_ = whiten @ S @ whiten
        self.metric_ = (self.metric_ + self.metric_.T) / 2
        self._summary = {"mu": mu, "solver": self.solver, "n_iter": len(trace) - 1,
                         "converged": sol.converged, "trace_time_s": sol.times,
                         "objective": trace, "final_objective": trace[-1],
                         "fw_gap": gaps[-1], "fw_gap_trace": gaps, "n_similar_pairs": len(sim),
                         "n_dissimilar_pairs": len(dis), "xs_floored": floored}
        values, vectors = scipy.linalg.eigh(S)
        components = (np.sqrt(np.clip(values, 0, None))[:, None] * vectors.T) @ whiten
        self.refit_s_ = time.perf_counter() - start
        return components[::-1]  # largest eigenvalue first

    def fit_info(self) -> dict:
        info = {**self._summary, "refit_s": self.refit_s_,
                "scale_form": f"dissimilar={self.dissimilar}"}
        if self.selected_k_ is not None:
            info["selected_k"] = int(self.selected_k_)
        info.update(self.cv_info_)
        return info

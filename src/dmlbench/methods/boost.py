"""Boosting Mahalanobis metrics (Chang 2012) and marginal Fisher analysis (Yan et al. 2007).

- `base_learner`: Algorithm 1 (BaseLearner). Starting from Q = I it alternates the E-step (hits and
  misses of every sample under the current Q, line 8) and the M-step (Theorem 4: the generalised
  eigenvectors with positive eigenvalue of (X(L_A - L_B)X^T, X L_C X^T + lam sigma_1 I), eqs.
  13-17 with section 3.2's ridge), until the relative change of Q falls below `base_tol`
  (line 15) or `base_max_iter` (Table 2: 10) iterations.
- `boost`: Algorithm 2 (BoostMDM): sample weights w' (eq. 12), gamma_t (eq. 11), alpha_t (eq. 10),
  M_t = M_{t-1} + alpha_t Q_t (eq. 3), each Q_t learned in the null space of M_{t-1} (E_t, N_t,
  X~_t of lines 22-31); stops when Q_t has rank 0, gamma_t <= 0, or M_t has full rank; the last
  step orders the columns of L_T by discriminatory potential (lines 34-35, eqs. 18-19), on the
  method's own hit and miss sets, or (BoostMDM-G and GI-RELIEF with `order="nearest"`) on the
  nearest hit and nearest miss of eq. 2, a reading of eqs. 18-19 beside the Gaussian sets.
- Registered: `boostmdm` (nearest hit and miss, eq. 2), `boostmdm_k` (k_h = k_m = 5, section
  2.6.1), `boostmdm_g` (Gaussian weights, mu from the 7th nearest neighbour, section 2.6.2 and
  Table 2), `i_mfa` and `gi_relief` (one boosting iteration of BoostMDM-K and BoostMDM-G: I-MFA and
  GI-RELIEF as the paper implements them, section 4), and `mfa` (marginal Fisher analysis).

Choices the paper leaves open:
- `lam` (section 3.2's ridge) defaults to 1e-8 (Table 2's value for the face sets; the paper gives
  no value for the low-dimensional sets, where X L_C X^T is usually regular); lam <= 0 is an error.
- `base_tol` (the epsilon of Algorithm 1, not printed) defaults to 1e-3 on ||Q - Q'||_F / ||Q'||_F.
- Table 2's mu = N / sum_i ||x_i - x_{i;7}||^2_M is computed under the metric whose sets it
  weights: Q during the BaseLearner's E-steps, M_t for the bound B_G(M_t).
- gamma_t = 1 (every sample with the same margin) would make alpha_t infinite; it is used as
  1 - 1e-12 and the fit records `gamma_capped`.
- gamma_1 <= 0 (the first base metric does not improve the bound, e.g. on some Yeast splits):
  the fit keeps that first base metric alone, i.e. the I-MFA / GI-RELIEF metric (the paper
  reports every method on every data set); `fit_info()["first_gamma_nonpositive"]` says so. A
  first base metric of rank 0 has no metric to return and raises `ValueError`.
- Undersampled data (N - 1 < n): the training points are first expressed in the basis of their
  centred span (PCA to N - 1 dimensions keeping every component, section 3.2) and the result is
  mapped back (Omega L_T), as the paper does; this also keeps the eigenproblems N x N.
- A hit scatter X L_C X^T at rounding level (`solvers.margins.rounding_level`: hits on top of
  their samples in the directions left, e.g. categorical features) counts as zero, so Algorithm 1
  adds no direction there; its rounding-negative eigenvalues are set to zero before the ridge
  (the paper's C + lam sigma_1 I is then not positive definite in floating point).
- Final ordering: M_T = G G^T with G = [sqrt(alpha_t) E_{t-1} L~_t]; the paper's
  Psi Theta^{1/2} equals G up to an orthogonal factor, so ordering the eigenvectors Phi of
  G^T X(L_A - L_C)X^T G gives the paper's L_T (up to signs) without an n x n eigendecomposition.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
import scipy.sparse

from ..measure.neighbours import euclidean_kneighbors
from ..solvers.margins import (
    SetRule,
    Sets,
    bound,
    generalized_eigenvectors,
    graph_scatter,
    margins,
    rounding_level,
    sample_weights,
    training_span,
)
from .base import LinearMetric
from .parameters import Interval, Options, require
from .registry import register

GAMMA_CAP = 1.0 - 1e-12

POSITIVE_INT = Interval(Integral, 1, None)
#: the constraints every boosted method shares (section 3.2's ridge, Algorithm 1's stop)
BOOSTING = {"lam": [Interval(Real, 0, None, closed="neither")], "base_max_iter": [POSITIVE_INT],
            "base_tol": [Interval(Real, 0, None)], "max_boost_iter": [POSITIVE_INT, None]}
NEAREST = {"k_h": [POSITIVE_INT], "k_m": [POSITIVE_INT]}
GAUSSIAN = {"mu": [Interval(Real, 0, None), None], "mu_neighbor": [POSITIVE_INT],
            "order": [Options(("gaussian", "nearest"))], "set_size": [POSITIVE_INT, None]}


def _limit_neighbours(params: dict, names, n_train: int) -> None:
    """Each of the neighbour counts `names` at most n_train - 1 (the other training points)."""
    for name in names:
        require(name, params[name] <= n_train - 1, f"{name} = {params[name]} exceeds the "
                f"n_train - 1 = {n_train - 1} other training points")


@dataclass
class BaseResult:
    """Output of Algorithm 1: L (m x r, L^T (X L_C X^T + lam sigma_1 I) L = I_r) and the hit and
    miss sets of its last E-step (the problem whose solution L is)."""

    L: np.ndarray
    n_iter: int
    changes: list[float]
    hits: Sets
    misses: Sets
    eigenvalues: np.ndarray


def relative_change(L_old: np.ndarray | None, L_new: np.ndarray) -> float:
    """||Q_new - Q_old||_F / ||Q_old||_F for Q = L L^T (L_old None: Q_old = I), via r x r
    products only: ||A A^T - B B^T||_F^2 = ||A^T A||^2 + ||B^T B||^2 - 2 ||A^T B||^2."""
    new = L_new.T @ L_new
    if L_old is None:
        m = L_new.shape[0]
        diff2 = np.sum(new * new) + m - 2.0 * np.trace(new)
        return math.sqrt(max(diff2, 0.0) / m)
    old = L_old.T @ L_old
    cross = L_old.T @ L_new
    old2 = float(np.sum(old * old))
    diff2 = old2 + np.sum(new * new) - 2.0 * np.sum(cross * cross)
    return math.sqrt(max(diff2, 0.0) / old2) if old2 > 0 else math.inf


def base_learner(X: np.ndarray, y: np.ndarray, w: np.ndarray, rule: SetRule, lam: float,
                 max_iter: int = 10, tol: float = 1e-3, prev_hits: Sets | None = None) -> BaseResult:
    """Algorithm 1 on the samples X (N x m: projections onto the null space of M_{t-1}) with
    sample weights w = w'_{t-1}.

    `prev_hits` are the hits under M_{t-1}, which give B_t (eq. 15) for t > 1; at t = 1 (None)
    B_t = C_t (line 11). A_t (eq. 13) and C_t (eq. 16) come from the misses and hits under the
    current Q, starting from Q = I (line 6).
    """
    S_B = prev_hits.scatter(X, w) if prev_hits is not None else None
    zero_scatter = rounding_level(X, w)
    Z, L = X, None
    changes: list[float] = []
    for it in range(1, max_iter + 1):
        hits, misses, _ = rule.sets(Z, y)
        S_A, S_C = misses.scatter(X, w), hits.scatter(X, w)
        L_new, vals = generalized_eigenvectors(S_A - (S_C if S_B is None else S_B), S_C, lam,
                                               zero_below=zero_scatter)
        changes.append(relative_change(L, L_new))
        L = L_new
        if L.shape[1] == 0 or changes[-1] < tol:
            break
        Z = X @ L
    return BaseResult(L, it, changes, hits, misses, vals)


@dataclass
class BoostResult:
    """Output of Algorithm 2. `components` is L_T^T (r x n), rows ordered by discriminatory
    potential; `bases[t]` is E_{t-1} L~_t (Q_t = B B^T); path lists start at M_0 = 0."""

    components: np.ndarray
    bases: list[np.ndarray]
    alphas: list[float] = field(default_factory=list)
    gammas: list[float] = field(default_factory=list)
    bounds: list[float] = field(default_factory=lambda: [1.0])
    ranks: list[int] = field(default_factory=lambda: [0])
    loo_errors: list[float] = field(default_factory=lambda: [1.0])
    base_iterations: list[int] = field(default_factory=list)
    mus: list[float] = field(default_factory=list)
    potentials: list[float] = field(default_factory=list)
    truncation_bounds: list[float] = field(default_factory=list)
    stop_reason: str = ""
    gamma_capped: bool = False
    first_gamma_nonpositive: bool = False


def boost(X: np.ndarray, y: np.ndarray, rule: SetRule, lam: float, base_max_iter: int = 10,
          base_tol: float = 1e-3, max_boost_iter: int | None = None,
          order_rule: SetRule | None = None) -> BoostResult:
    """Algorithm 2 on centred samples X (N x n, rows). `max_boost_iter` = None runs until one of
    the paper's three termination conditions; 1 gives I-MFA / GI-RELIEF. `order_rule`: the hit
    and miss sets (under M_T) whose scatters order the final components (eqs. 18-19); None:
    `rule`'s."""
    n_samples, n_features = X.shape
    E = None                      # basis of the null space of M_{t-1}; None = identity
    X_null = X                    # X~_{t-1}
    delta = np.zeros(n_samples)   # margins under M_0 = 0
    hits = misses = None          # sets under M_{t-1}
    G = np.zeros((n_features, 0))
    out = BoostResult(components=np.zeros((0, n_features)), bases=[])
    t = 0
    while True:
        if max_boost_iter is not None and t >= max_boost_iter:
            out.stop_reason = f"max_boost_iter = {max_boost_iter} reached"
            break
        t += 1
        w = sample_weights(delta)
        base = base_learner(X_null, y, w, rule, lam, base_max_iter, base_tol, prev_hits=hits)
        rank = base.L.shape[1]
        if rank == 0:
            out.stop_reason = f"rank(Q_{t}) = 0"
            break
        Zq = X_null @ base.L
        hits_q, misses_q, _ = rule.sets(Zq, y)
        d = misses_q.f(Zq) - (hits_q if hits is None else hits).f(Zq)   # eq. 6
        eta = float(np.abs(d).max())
        gamma = float(w @ d) / eta if eta > 0 else 0.0                  # eq. 11
        last = gamma <= 0
        if last:
            out.stop_reason = f"gamma_{t} = {gamma:.3g} <= 0"
            if t > 1:
                break
            # the first base metric alone, as I-MFA / GI-RELIEF define it (one iteration); a
            # single term's weight does not change any distance ranking
            out.first_gamma_nonpositive = True
            alpha = 1.0
        else:
            if gamma >= GAMMA_CAP:
                gamma, out.gamma_capped = GAMMA_CAP, True
            alpha = math.log((1 + gamma) / (1 - gamma)) / (2 * eta)     # eq. 10
        B = base.L if E is None else E @ base.L
        G = np.hstack([G, math.sqrt(alpha) * B])                        # M_t = G G^T, eq. 3
        Z = X @ G
        hits, misses, mu = rule.sets(Z, y)
        delta = margins(hits, misses, Z)                                # eq. 4 under M_t
        if getattr(hits, "dropped", None) is not None:  # truncated Gaussian sets
            out.truncation_bounds.append(max(hits.dropped, misses.dropped))
        out.bases.append(B)
        out.alphas.append(alpha)
        out.gammas.append(gamma)
        out.bounds.append(bound(delta))
        out.ranks.append(G.shape[1])
        out.loo_errors.append(float(np.mean(delta >= 0)))
        out.base_iterations.append(base.n_iter)
        if mu is not None:
            out.mus.append(mu)
        m = X_null.shape[1]
        if last:
            break
        if rank == m:
            out.stop_reason = f"M_{t} has full rank"
            break
        N_t = np.linalg.qr(base.L, mode="complete")[0][:, rank:]       # null(Q~_t), line 22
        E = N_t if E is None else E @ N_t
        X_null = X_null @ N_t
    if G.shape[1] == 0:
        raise ValueError(f"no base metric improves the margin bound ({out.stop_reason}): the "
                         "classes show no usable margin under this set rule")
    uniform = np.full(n_samples, 1.0 / n_samples)
    Z = X @ G
    if order_rule is not None:
        hits, misses, _ = order_rule.sets(Z, y)
    potential = misses.scatter(Z, uniform) - hits.scatter(Z, uniform)  # eqs. 18-19
    vals, Phi = np.linalg.eigh(potential)
    order = np.argsort(-vals, kind="stable")
    out.potentials = vals[order].tolist()
    out.components = (G @ Phi[:, order]).T
    return out


class _Boosting(LinearMetric):
    """BoostMDM and its extensions behind the method contract (`components_` = L_T^T)."""

    family = "boost"
    papers = ("ch12",)

    def _rule(self) -> SetRule:
        raise NotImplementedError

    def _boost_limit(self) -> int | None:
        return self.max_boost_iter

    def _order_rule(self) -> SetRule | None:
        """The sets that order the final components (eqs. 18-19); None: the method's own."""
        return None

    def _learn_components(self, X, y):
        rule = self._rule()
        rule.check(y)
        Xc = X - X.mean(axis=0)
        span = training_span(Xc)
        result = boost(Xc if span is None else Xc @ span, y, rule, float(self.lam),
                       self.base_max_iter, float(self.base_tol), self._boost_limit(),
                       self._order_rule())
        lift = (lambda A: A) if span is None else (lambda A: span @ A)
        self.bases_ = [lift(B) for B in result.bases]
        self.alphas_ = list(result.alphas)
        self.result_ = result
        self.reduced_dim_ = None if span is None else span.shape[1]
        return result.components if span is None else result.components @ span.T

    @property
    def metric_(self) -> np.ndarray:
        """M_T = L_T L_T^T (n x n)."""
        return self.components_.T @ self.components_

    def fit_info(self) -> dict:
        r = self.result_
        info = {
            "n_boost_iter": len(r.alphas),
            "rank": int(self.components_.shape[0]),
            "stop_reason": r.stop_reason,
            "bound": r.bounds,
            "rank_path": r.ranks,
            "loo_error": r.loo_errors,
            "alpha": r.alphas,
            "gamma": r.gammas,
            "theorem3_bound": np.cumprod(np.sqrt(1 - np.square(r.gammas))).tolist(),
            "base_iterations": r.base_iterations,
            "potential": r.potentials,
            "gamma_capped": r.gamma_capped,
        }
        if r.mus:
            info["mu"] = r.mus
        if r.truncation_bounds:
            info["truncation_bound"] = r.truncation_bounds
        if r.first_gamma_nonpositive:  # only then, so other fits keep their records
            info["first_gamma_nonpositive"] = True
        if self.reduced_dim_ is not None:
            info["reduced_dim"] = self.reduced_dim_
        return info


@register("boostmdm")
class BoostMDM(_Boosting):
    """BoostMDM (Chang 2012, Algorithm 2) on the nearest hit and nearest miss (bound eq. 2).

    Parameters
    ----------
    lam : float, default=1e-08
        Ridge of section 3.2: the hit scatter X L_C X^T + lam sigma_1 I in the generalised
        eigenproblem (Table 2: 1e-8); > 0.
    base_max_iter : int, default=10
        Iteration cap of the BaseLearner (Algorithm 1; Table 2: 10).
    base_tol : float, default=0.001
        The BaseLearner stops when ||Q - Q'||_F / ||Q'||_F falls below it (Algorithm 1, line 15;
        not printed, ours).
    max_boost_iter : int or None, default=None
        Cap on the boosting iterations (Algorithm 2); None: until Q_t has rank 0, gamma_t <= 0
        or M_t full rank.

    Attributes
    ----------
    components_ : ndarray of shape (r, D)
        The learnt map L: d(x, y) = ||L x - L y||.
    embedding_ : ndarray of shape (n, r)
        The training points mapped, L x_i (what queries are searched against).
    n_features_in_ : int
        Features D seen by `fit`.
    bases_ : list of ndarray
        The base metrics' maps Q_t (Algorithm 2), in the original features.
    alphas_ : list of float
        Their weights alpha_t (eq. 10).
    result_ : BoostResult
        Everything the boosting recorded (bounds, gammas, ranks, stop reason; `fit_info`).
    reduced_dim_ : int or None
        Dimension of the training span the problem was solved in (undersampled data, sect. 3.2);
        None: all features.
    metric_ : ndarray of shape (D, D)
        M_T = L_T L_T^T (a property).
    """

    expected_failed_checks = {
        "check_fit_idempotent": "the check's labels are random coin flips on noise: no base "
        "metric improves the margin bound, so fit refuses the data with an error naming "
        "that (rank(Q_1) = 0 at the first boosting step)"}

    _parameter_constraints = BOOSTING

    def __init__(self, lam=1e-8, base_max_iter=10, base_tol=1e-3, max_boost_iter=None):
        self.lam = lam
        self.base_max_iter = base_max_iter
        self.base_tol = base_tol
        self.max_boost_iter = max_boost_iter

    def _rule(self):
        return SetRule("nearest", 1, 1)


@register("boostmdm_k")
class BoostMDMK(_Boosting):
    """BoostMDM-K (section 2.6.1): averages over the k_h nearest hits and k_m nearest misses
    (Table 2: 5 and 5).

    Parameters
    ----------
    k_h : int, default=5
        Nearest hits averaged per sample (section 2.6.1; Table 2: 5).
    k_m : int, default=5
        Nearest misses averaged per sample (section 2.6.1; Table 2: 5).
    lam : float, default=1e-08
        Ridge of section 3.2: the hit scatter X L_C X^T + lam sigma_1 I in the generalised
        eigenproblem (Table 2: 1e-8); > 0.
    base_max_iter : int, default=10
        Iteration cap of the BaseLearner (Algorithm 1; Table 2: 10).
    base_tol : float, default=0.001
        The BaseLearner stops when ||Q - Q'||_F / ||Q'||_F falls below it (Algorithm 1, line 15;
        not printed, ours).
    max_boost_iter : int or None, default=None
        Cap on the boosting iterations (Algorithm 2); None: until Q_t has rank 0, gamma_t <= 0
        or M_t full rank.

    Attributes
    ----------
    components_ : ndarray of shape (r, D)
        The learnt map L: d(x, y) = ||L x - L y||.
    embedding_ : ndarray of shape (n, r)
        The training points mapped, L x_i (what queries are searched against).
    n_features_in_ : int
        Features D seen by `fit`.
    bases_ : list of ndarray
        The base metrics' maps Q_t (Algorithm 2), in the original features.
    alphas_ : list of float
        Their weights alpha_t (eq. 10).
    result_ : BoostResult
        Everything the boosting recorded (bounds, gammas, ranks, stop reason; `fit_info`).
    reduced_dim_ : int or None
        Dimension of the training span the problem was solved in (undersampled data, sect. 3.2);
        None: all features.
    metric_ : ndarray of shape (D, D)
        M_T = L_T L_T^T (a property).
    """

    expected_failed_checks = {
        "check_fit_idempotent": "the check's labels are random coin flips on noise: no base "
        "metric improves the margin bound, so fit refuses the data with an error naming "
        "that (rank(Q_1) = 0 at the first boosting step)"}

    _parameter_constraints = {**NEAREST, **BOOSTING}

    def __init__(self, k_h=5, k_m=5, lam=1e-8, base_max_iter=10, base_tol=1e-3,
                 max_boost_iter=None):
        self.k_h = k_h
        self.k_m = k_m
        self.lam = lam
        self.base_max_iter = base_max_iter
        self.base_tol = base_tol
        self.max_boost_iter = max_boost_iter

    @classmethod
    def check_data_limits(cls, params, n_train, d, n_classes):
        _limit_neighbours(params, ("k_h", "k_m"), n_train)

    def _rule(self):
        return SetRule("nearest", self.k_h, self.k_m)


@register("boostmdm_g")
class BoostMDMG(_Boosting):
    """BoostMDM-G (section 2.6.2): Gaussian-weighted averages over all hits and misses;
    mu = None is Table 2's N / sum ||x_i - x_{i;mu_neighbor}||^2 (mu_neighbor = 7).

    Parameters
    ----------
    mu : float or None, default=None
        Width of the Gaussian weights over hits and misses (section 2.6.2); None: Table 2's N /
        sum_i ||x_i - x_{i;mu_neighbor}||^2 under the current metric.
    mu_neighbor : int, default=7
        Neighbour rank of Table 2's mu (7).
    order : {"gaussian", "nearest"}, default="gaussian"
        Hit and miss sets whose scatters order the final components by discriminatory
        potential (eqs. 18-19): the Gaussian-weighted ones the method learns with, or the
        nearest hit and nearest miss of eq. 2 (under M_T). The metric M_T is the same.
    lam : float, default=1e-08
        Ridge of section 3.2: the hit scatter X L_C X^T + lam sigma_1 I in the generalised
        eigenproblem (Table 2: 1e-8); > 0.
    base_max_iter : int, default=10
        Iteration cap of the BaseLearner (Algorithm 1; Table 2: 10).
    base_tol : float, default=0.001
        The BaseLearner stops when ||Q - Q'||_F / ||Q'||_F falls below it (Algorithm 1, line 15;
        not printed, ours).
    max_boost_iter : int or None, default=None
        Cap on the boosting iterations (Algorithm 2); None: until Q_t has rank 0, gamma_t <= 0
        or M_t full rank.
    set_size : int or None, default=None
        None: all hits and misses (section 2.6.2; N^2 distances and weights per pass). An
        integer K: the large-data form, each sample's K nearest hits and K nearest misses under
        the current metric with the same Gaussian weights renormalised over them (O(N K) per
        pass after an exact K-NN search); an approximation, whose largest left-out weight share
        `fit_info()['truncation_bound']` records per boosting iteration. K >= mu_neighbor when
        mu is None.

    Attributes
    ----------
    components_ : ndarray of shape (r, D)
        The learnt map L: d(x, y) = ||L x - L y||.
    embedding_ : ndarray of shape (n, r)
        The training points mapped, L x_i (what queries are searched against).
    n_features_in_ : int
        Features D seen by `fit`.
    bases_ : list of ndarray
        The base metrics' maps Q_t (Algorithm 2), in the original features.
    alphas_ : list of float
        Their weights alpha_t (eq. 10).
    result_ : BoostResult
        Everything the boosting recorded (bounds, gammas, ranks, stop reason; `fit_info`).
    reduced_dim_ : int or None
        Dimension of the training span the problem was solved in (undersampled data, sect. 3.2);
        None: all features.
    metric_ : ndarray of shape (D, D)
        M_T = L_T L_T^T (a property).
    """

    _parameter_constraints = {**GAUSSIAN, **BOOSTING}

    def __init__(self, mu=None, mu_neighbor=7, order="gaussian", lam=1e-8, base_max_iter=10,
                 base_tol=1e-3, max_boost_iter=None, set_size=None):
        self.mu = mu
        self.mu_neighbor = mu_neighbor
        self.order = order
        self.set_size = set_size
        self.lam = lam
        self.base_max_iter = base_max_iter
        self.base_tol = base_tol
        self.max_boost_iter = max_boost_iter

    @classmethod
    def check_parameters(cls, params):
        super().check_parameters(params)
        full = cls.with_defaults(params)
        size = full["set_size"]
        require("set_size", size is None or full["mu"] is not None or size >= full["mu_neighbor"],
                f"set_size = {size} must be at least mu_neighbor = {full['mu_neighbor']} (Table "
                "2's mu is read from the nearest hits and misses kept), or fix mu")

    @classmethod
    def check_data_limits(cls, params, n_train, d, n_classes):
        if params["mu"] is None:
            _limit_neighbours(params, ("mu_neighbor",), n_train)

    def _rule(self):
        return SetRule("gaussian", mu=self.mu, mu_neighbor=self.mu_neighbor, size=self.set_size)

    def fit_info(self) -> dict:
        return {**super().fit_info(), "scale_form": f"set_size={self.set_size}"}

    def _order_rule(self):
        return SetRule("nearest", 1, 1) if self.order == "nearest" else None


@register("i_mfa")
class IMFA(BoostMDMK):
    """I-MFA: BoostMDM-K with one boosting iteration (Chang 2012, sections 3.1 and 4).

    Parameters
    ----------
    k_h : int, default=5
        Nearest hits averaged per sample (section 2.6.1; Table 2: 5).
    k_m : int, default=5
        Nearest misses averaged per sample (section 2.6.1; Table 2: 5).
    lam : float, default=1e-08
        Ridge of section 3.2: the hit scatter X L_C X^T + lam sigma_1 I in the generalised
        eigenproblem (Table 2: 1e-8); > 0.
    base_max_iter : int, default=10
        Iteration cap of the BaseLearner (Algorithm 1; Table 2: 10).
    base_tol : float, default=0.001
        The BaseLearner stops when ||Q - Q'||_F / ||Q'||_F falls below it (Algorithm 1, line 15;
        not printed, ours).

    Attributes
    ----------
    components_ : ndarray of shape (r, D)
        The learnt map L: d(x, y) = ||L x - L y||.
    embedding_ : ndarray of shape (n, r)
        The training points mapped, L x_i (what queries are searched against).
    n_features_in_ : int
        Features D seen by `fit`.
    bases_ : list of ndarray
        The base metrics' maps Q_t (Algorithm 2), in the original features.
    alphas_ : list of float
        Their weights alpha_t (eq. 10).
    result_ : BoostResult
        Everything the boosting recorded (bounds, gammas, ranks, stop reason; `fit_info`).
    reduced_dim_ : int or None
        Dimension of the training span the problem was solved in (undersampled data, sect. 3.2);
        None: all features.
    metric_ : ndarray of shape (D, D)
        M_T = L_T L_T^T (a property).
    """

    _parameter_constraints = {key: value for key, value in BoostMDMK._parameter_constraints.items()
                              if key != "max_boost_iter"}

    def __init__(self, k_h=5, k_m=5, lam=1e-8, base_max_iter=10, base_tol=1e-3):
        self.k_h = k_h
        self.k_m = k_m
        self.lam = lam
        self.base_max_iter = base_max_iter
        self.base_tol = base_tol

    def _boost_limit(self):
        return 1


@register("gi_relief")
class GIRelief(BoostMDMG):
    """GI-RELIEF (Chang 2010) as Chang 2012 implements it: BoostMDM-G with one boosting
    iteration.

    Parameters
    ----------
    mu : float or None, default=None
        Width of the Gaussian weights over hits and misses (section 2.6.2); None: Table 2's N /
        sum_i ||x_i - x_{i;mu_neighbor}||^2 under the current metric.
    mu_neighbor : int, default=7
        Neighbour rank of Table 2's mu (7).
    order : {"gaussian", "nearest"}, default="gaussian"
        Hit and miss sets whose scatters order the final components by discriminatory
        potential (eqs. 18-19): the Gaussian-weighted ones the method learns with, or the
        nearest hit and nearest miss of eq. 2 (under M_T). The metric M_T is the same.
    lam : float, default=1e-08
        Ridge of section 3.2: the hit scatter X L_C X^T + lam sigma_1 I in the generalised
        eigenproblem (Table 2: 1e-8); > 0.
    base_max_iter : int, default=10
        Iteration cap of the BaseLearner (Algorithm 1; Table 2: 10).
    base_tol : float, default=0.001
        The BaseLearner stops when ||Q - Q'||_F / ||Q'||_F falls below it (Algorithm 1, line 15;
        not printed, ours).
    set_size : int or None, default=None
        None: all hits and misses (section 2.6.2; N^2 distances and weights per pass). An
        integer K: the large-data form, each sample's K nearest hits and K nearest misses under
        the current metric with the same Gaussian weights renormalised over them (O(N K) per
        pass after an exact K-NN search); an approximation, whose largest left-out weight share
        `fit_info()['truncation_bound']` records per boosting iteration. K >= mu_neighbor when
        mu is None.

    Attributes
    ----------
    components_ : ndarray of shape (r, D)
        The learnt map L: d(x, y) = ||L x - L y||.
    embedding_ : ndarray of shape (n, r)
        The training points mapped, L x_i (what queries are searched against).
    n_features_in_ : int
        Features D seen by `fit`.
    bases_ : list of ndarray
        The base metrics' maps Q_t (Algorithm 2), in the original features.
    alphas_ : list of float
        Their weights alpha_t (eq. 10).
    result_ : BoostResult
        Everything the boosting recorded (bounds, gammas, ranks, stop reason; `fit_info`).
    reduced_dim_ : int or None
        Dimension of the training span the problem was solved in (undersampled data, sect. 3.2);
        None: all features.
    metric_ : ndarray of shape (D, D)
        M_T = L_T L_T^T (a property).
    """

    _parameter_constraints = {key: value for key, value in BoostMDMG._parameter_constraints.items()
                              if key != "max_boost_iter"}

    def __init__(self, mu=None, mu_neighbor=7, order="gaussian", lam=1e-8, base_max_iter=10,
                 base_tol=1e-3, set_size=None):
        self.mu = mu
        self.mu_neighbor = mu_neighbor
        self.order = order
        self.set_size = set_size
        self.lam = lam
        self.base_max_iter = base_max_iter
        self.base_tol = base_tol

    def _boost_limit(self):
        return 1


@register("mfa")
class MFA(LinearMetric):
    """Marginal Fisher analysis (Yan et al. 2007, "Graph embedding and extensions", section 4.1).

    Intrinsic graph: i and j joined when one is among the other's `k1` nearest same-class
    neighbours; penalty graph: for every class, its `k2` nearest between-class pairs (Euclidean).
    The directions are the generalised eigenvectors of (X L^p X^T, X L X^T + lam sigma_1 I),
    largest ratio first, all of them unless `n_components`. Deviation: Yan et al. first project
    onto the principal components to make X L X^T regular; here the same ridge as the BaseLearner
    regularises it, and undersampled data are expressed in their span as for BoostMDM.

    Parameters
    ----------
    k1 : int, default=5
        Same-class neighbours joined in the intrinsic graph (Yan et al. 2007, sect. 4.1).
    k2 : int, default=20
        Nearest between-class pairs per class in the penalty graph.
    lam : float, default=1e-08
        Ridge of the intrinsic scatter, X L X^T + lam sigma_1 I (as BoostMDM's; ours, see
        above); > 0.
    n_components : int or None, default=None
        Directions kept, largest ratio first (at most min(D, n - 1)); None: all.

    Attributes
    ----------
    components_ : ndarray of shape (r, D)
        The learnt map L: d(x, y) = ||L x - L y||.
    embedding_ : ndarray of shape (n, r)
        The training points mapped, L x_i (what queries are searched against).
    n_features_in_ : int
        Features D seen by `fit`.
    eigenvalues_ : ndarray
        The generalised eigenvalues, largest first.
    """

    family = "boost"
    papers = ("ch12",)
    _parameter_constraints = {"k1": [POSITIVE_INT], "k2": [POSITIVE_INT],
                              "lam": BOOSTING["lam"], "n_components": [POSITIVE_INT, None]}

    def __init__(self, k1=5, k2=20, lam=1e-8, n_components=None):
        self.k1 = k1
        self.k2 = k2
        self.lam = lam
        self.n_components = n_components

    @classmethod
    def check_data_limits(cls, params, n_train, d, n_classes):
        _limit_neighbours(params, ("k1",), n_train)
        q, limit = params["n_components"], min(d, n_train - 1)
        require("n_components", q is None or q <= limit, f"n_components = {q} exceeds "
                f"min(d, n_train - 1) = {limit} (the span of the centred training points)")

    def _learn_components(self, X, y):
        SetRule("nearest", self.k1, 1).check(y, names=("k1", "k2"))
        labels, counts = np.unique(y, return_counts=True)
        pairs = int(np.min(counts * (y.size - counts)))
        if self.k2 > pairs:
            raise ValueError(f"k2 must be an integer in [1, {pairs}] (between-class pairs of the "
                             f"class with fewest), got {self.k2!r}")
        Xc = X - X.mean(axis=0)
        span = training_span(Xc)
        Xr = Xc if span is None else Xc @ span
        limit = Xr.shape[1]
        if self.n_components is not None and not 1 <= self.n_components <= limit:
            raise ValueError(f"mfa: n_components must be in [1, {limit}] here, got "
                             f"{self.n_components}")
        n = y.size
        rows, cols, prow, pcol = [], [], [], []
        for label in labels:
            own, other = np.flatnonzero(y == label), np.flatnonzero(y != label)
            k1 = min(self.k1, own.size - 1)  # a small class: all its same-class pairs
            _, ind = euclidean_kneighbors(Xr[own], Xr[own], k1, exclude_self=True)
            rows.append(np.repeat(own, k1))
            cols.append(own[ind].ravel())
            k = min(self.k2, other.size)
            dist, ind = euclidean_kneighbors(Xr[own], Xr[other], k)
            i, j, d = np.repeat(own, k), other[ind].ravel(), dist.ravel()
            best = np.lexsort((j, i, d))[:self.k2]
            prow.append(i[best])
            pcol.append(j[best])
        intrinsic = _symmetric_graph(np.concatenate(rows), np.concatenate(cols), n)
        penalty = _symmetric_graph(np.concatenate(prow), np.concatenate(pcol), n)
        V, vals = generalized_eigenvectors(graph_scatter(Xr, penalty),
                                           graph_scatter(Xr, intrinsic), float(self.lam),
                                           positive_only=False)
        self.eigenvalues_ = vals
        V = V[:, :self.n_components or limit]
        return (V if span is None else span @ V).T

    def fit_info(self) -> dict:
        return {"eigenvalues": self.eigenvalues_.tolist()}


def _symmetric_graph(rows: np.ndarray, cols: np.ndarray, n: int):
    """Binary symmetric adjacency: W_ij = 1 if (i, j) or (j, i) is listed."""
    W = scipy.sparse.coo_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n)).tocsr()
    W = W + W.T
    W.data[:] = 1.0
    return W

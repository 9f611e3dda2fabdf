"""Neighbourhood component analysis (Goldberger et al. 2004) as in Oneata 2011, chapter 3.

`nca` maximises f(A) = sum_i p_i (eq. 3.3) with conjugate gradients or L-BFGS (scipy) or gradient
ascent with the bold-driver rule (section 3.3.1), from a random, PCA, LDA or RCA start
(section 3.3.2), optionally with Frobenius regularisation (eq. 3.22), early stopping on a
held-out part of the training set (figure 3.2) and dimensionality annealing (Algorithm 3.2).
`NCAFamily` is the shared machinery of NCA and its fast variants (`methods/nca_fast.py`): data
checks, initialisation, the optimisers, the trace logged in `fit_info()`, and the NCA
classification rule (eq. 3.25) reported beside k-NN as `accuracy_nca_rule`.

Choices the thesis leaves open, fixed here:
- The optimisers work on f / N (the expected fraction of correctly classified points, the
  thesis' "train score"), so learning rates and tolerances do not depend on N; `reg` is the
  lambda of eq. 3.22 on f itself. The trace `objective` is f / N after each iteration.
- The scale of the random start is not stated (section 3.3.1 says only "randomly chosen";
  section 3.3.3 quotes van der Maaten's 0.01 randn). `init='random'` is A_0 = G / sqrt(D), G
  standard normal, so that z-scored data project to coordinates of unit scale;
  `init='random_unit'` is A_0 = G (scikit-learn's random start), whose projected coordinates
  have variance about D, so the soft assignments of eq. 3.1 start far sharper. Table 5.2's
  reproduction config runs both. PCA initialisation is whitened (S^(-1/2) restricted to the top d
  directions, eq. 3.15); LDA takes the leading generalised eigenvectors of (S_B, S_W) and, when
  d > C - 1, the remaining ones of the same scikit-learn fit; RCA is the `rca` baseline
  (whole-class chunklets: within-class whitening) with `n_components = d`. Below full rank that
  start is Bar-Hillel et al.'s (2005) RCA after its constrained Fisher discriminant (the d leading
  generalised eigenvectors of total against within-class scatter, whitened), as the RCA code the
  thesis used: past the C - 1 discriminant directions the generalised eigenvalues tie (all equal
  n / (n - 1)), so which further directions it keeps is decided by rounding.
  `init='rca_top'` reads the start from the thesis' own text instead: A = S_W^(-1/2) (eq. 3.17)
  cut to d rows by the rule sect. 3.3.2 gives for PCA, the d eigenvectors of S_W with the
  largest eigenvalues (no total scatter; equal to 'rca' up to a rotation at d = D).
- Early stopping monitors the mean p(c_i | A x_i) of the held-out points against the fitting part
  (the NCA objective on the cross-validation set); the best A is returned.
- A class with a single training sample is an error (its p_i is 0 whatever A is): drop such
  classes with the config's `drop_classes_below`.
- A non-finite objective (A exploded) stops the optimiser: the last finite iterate is kept and
  `fit_info()['stop_reason']` says so. The bold driver treats it as a failed step (halves eta).
"""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
from scipy.optimize import minimize

from ..solvers import nca_objective
from .base import LinearMetric
from .baselines import PCA, RCA, SCATTER_RTOL, check_within_class_scatter, lda_scalings
from .parameters import Array, Boolean, Interval, Options, require
from .registry import register

INITS = ("random", "random_unit", "pca", "lda", "rca", "rca_top", "identity")
OPTIMIZERS = ("cg", "lbfgs", "bold_driver")
ANNEAL_SELECT = ("projected_variance", "data_variance", "row_norm")

POSITIVE_INT = Interval(Integral, 1, None)
POSITIVE = Interval(Real, 0, None, closed="neither")
#: constraints of the parameters the whole family shares
FAMILY = {"n_components": [POSITIVE_INT, None], "init": [Options(INITS), Array()],
          "max_iter": [POSITIVE_INT], "reg": [Interval(Real, 0, None)],
          "validation_fraction": [Interval(Real, 0, 0.5, closed="left")],
          "patience": [POSITIVE_INT], "chunk_size": [POSITIVE_INT, None],
          "random_state": [Interval(Integral, 0, None), None]}
#: the full-batch optimisers' parameters
FULL_BATCH = {"tol": [Interval(Real, 0, None)], "learning_rate": [POSITIVE]}


class _Stop(Exception):
    """Raised inside an optimiser to end it (patience exhausted or non-finite objective)."""


class Monitor:
    """The trace of one fit: objective, validation score, time and visited fraction per logged
    iteration; keeps the A to return (best validation score, else the latest) and snapshots
    (elapsed seconds, A) for time-accuracy curves (`history_`). Patience counts the checks
    without a gain (`patience_unit="checks"`) or the updates since the best check
    (`"updates"`, Oneata 2011 sect. 5.3.2); the two agree when every update is checked."""

    def __init__(self, validation, patience: int, patience_unit: str = "checks"):
        self.validation, self.patience, self.patience_unit = validation, patience, patience_unit
        self.start = time.perf_counter()
        self.objective, self.val, self.elapsed, self.visited = [], [], [], []
        self.history = []
        self.best_A, self.best_score, self.best_time, self.best_iter = None, -np.inf, 0.0, 0
        self.n_iter, self.since_best, self.stop_reason = 0, 0, "max_iter reached"
        self.pairs = self.candidates = 0

    def count(self, pairs: int, candidates: int) -> None:
        self.pairs += pairs
        self.candidates += candidates

    def log(self, A: np.ndarray, f_mean: float, final_phase: bool = True) -> bool:
        """Record iteration `n_iter` (already counted); True when patience is exhausted."""
        now = time.perf_counter() - self.start
        self.objective.append(float(f_mean))
        self.elapsed.append(now)
        self.visited.append(self.pairs / self.candidates if self.candidates else 1.0)
        self.pairs = self.candidates = 0
        self.history.append((now, A.copy()))
        if not final_phase:
            return False
        score = self.validation(A) if self.validation is not None else None
        if score is not None:
            self.val.append(float(score))
        if score is None or score > self.best_score:
            self.best_A, self.best_time, self.best_iter = A.copy(), now, self.n_iter
            if score is not None:
                self.best_score, self.since_best = score, 0
            return False
        self.since_best += 1
        waited = self.n_iter - self.best_iter if self.patience_unit == "updates" else self.since_best
        if waited >= self.patience:
            self.stop_reason = (f"early stopping: no validation gain in {waited} "
                                f"{self.patience_unit} (patience {self.patience})")
            return True
        return False


class NCAFamily(LinearMetric):
    """Shared machinery of the NCA family; subclasses define `__init__` (their parameters),
    `_optimise` and, for other models than NCA's Gaussian kernel, `_batch_objective`,
    `_objective_value` and `_class_scores`."""

    family = "nca"
    papers = ("on11",)
    #: early stopping's held-out score and patience unit; parameters of the stochastic variants
    #: (`nca_fast.STOCHASTIC`), fixed for the others
    validation_score = "mean_p"
    patience_unit = "checks"

    @classmethod
    def check_data_limits(cls, params, n_train, d, n_classes):
        q = params["n_components"]
        require("n_components", q is None or q <= d, f"n_components must be an integer in "
                f"[1, {d}] (the number of features d), got {q}")

    # ---- model hooks (NCA's Gaussian kernel) -------------------------------------------------
    def _batch_objective(self, A, X, y, rows=None, reg=None):
        """(f, grad) on f = sum_{i in rows} p_i - reg ||A||^2 (default `self.reg`); counts the
        visited pairs."""
        reg = self.reg if reg is None else reg
        f, g = nca_objective.objective(A, X, y, rows=rows, reg=reg, chunk_size=self.chunk_size)
        n_rows = X.shape[0] if rows is None else len(rows)
        self._monitor.count(n_rows * (X.shape[0] - 1), n_rows * (X.shape[0] - 1))
        return f, g

    def _class_scores(self, A, X, y, Xq):
        """p(c | A x*) for the queries Xq against the training points (X, y)."""
        return nca_objective.class_scores(X @ A.T, y, Xq @ A.T, self.classes_.size, self.chunk_size)

    def _objective_value(self, A, X, y) -> float:
        """f(A) = sum_i p_i (unregularised) alone, without the gradient's products."""
        return nca_objective.value(A, X, y, self.chunk_size)

    # ---- fit ---------------------------------------------------------------------------------
    def _learn_components(self, X, y):
        self.classes_, y = np.unique(y, return_inverse=True)
        self._check(X, y)
        rng = np.random.default_rng(self.random_state)
        self._train = (X, y)
        X, y = self._fit_subset(X, y, rng)
        X_fit, y_fit, X_val, y_val = self._holdout(X, y, rng)
        self._prepare(X_fit, y_fit)
        validation = None
        if X_val is not None:
            def validation(A):
                return self._validation_score(A, X_fit, y_fit, X_val, y_val)
        self._monitor = Monitor(validation, self.patience, self.patience_unit)
        A0 = self._initial(X_fit, y_fit, rng)
        self.init_components_ = A0
        self._fit_data = (X_fit, y_fit)
        A = self._optimise(A0, X_fit, y_fit, rng)
        mon = self._monitor
        mon.validation = None  # a closure over this fit's data: the fitted method stays picklable
        self.n_iter_ = mon.n_iter
        self.history_ = mon.history
        return mon.best_A if mon.best_A is not None else A

    def _validation_score(self, A, X_fit, y_fit, X_val, y_val) -> float:
        """The held-out score early stopping watches (`validation_score`): the mean p(c_i | A x_i)
        of the held-out points against the fitting part (`mean_p`), the share of them the NCA
        rule (eq. 3.25) labels right (`nca_rule`; a point no class scores counts as wrong), or
        the share their nearest fitting point in the projected space labels right (`1nn`)."""
        if self.validation_score == "1nn":
            return float(np.mean(y_fit[_nearest(X_fit @ A.T, X_val @ A.T)] == y_val))
        scores = self._class_scores(A, X_fit, y_fit, X_val)
        if self.validation_score == "nca_rule":
            scored = ~np.isnan(scores).all(axis=1)
            picked = np.argmax(np.where(np.isnan(scores), -np.inf, scores), axis=1)
            return float(np.mean(scored & (picked == y_val)))
        return float(np.mean(np.nan_to_num(scores[np.arange(y_val.size), y_val])))

    def _fit_subset(self, X, y, rng):
        """The training points the metric is learnt from (all; sub-sampling overrides)."""
        return X, y

    def _prepare(self, X, y) -> None:
        """Model statistics fixed before optimisation (the background distribution)."""

    def _n_components(self, D: int) -> int:
        return int(self.n_components if self.n_components is not None else D)

    def _check(self, X, y) -> None:
        counts = np.bincount(y)
        single = self.classes_[np.flatnonzero(counts < 2)].tolist()
        if single:
            raise ValueError(
                f"class(es) {single} have a single training sample; NCA needs two per class "
                "(p_i of a lone point is 0 for every A). Leave such classes out with "
                "`drop_classes_below: 3` in the config")

    def _holdout(self, X, y, rng):
        """Stratified held-out part for early stopping (each class keeps >= 2 fitting points)."""
        if not self.validation_fraction:
            return X, y, None, None
        val = []
        for c in range(self.classes_.size):
            members = rng.permutation(np.flatnonzero(y == c))
            take = min(int(round(self.validation_fraction * members.size)), members.size - 2)
            val.extend(members[:max(take, 0)])
        val = np.sort(np.asarray(val, dtype=np.intp))
        if val.size == 0:
            return X, y, None, None
        fit = np.setdiff1d(np.arange(y.size), val)
        return X[fit], y[fit], X[val], y[val]

    def _initial(self, X, y, rng, d: int | None = None) -> np.ndarray:
        """A_0 (d x D) by `init` (section 3.3.2)."""
        D = X.shape[1]
        d = d or self._n_components(D)
        init = self.init
        if not isinstance(init, str):
            A0 = np.asarray(init, dtype=float)
            if A0.shape != (d, D):
                raise ValueError(f"init array must have shape ({d}, {D}), got {A0.shape}")
        elif init == "random":
            A0 = rng.standard_normal((d, D)) / np.sqrt(D)
        elif init == "random_unit":
            A0 = rng.standard_normal((d, D))
        elif init == "identity":
            if d != D:
                raise ValueError("init='identity' needs n_components = D")
            A0 = np.eye(D)
        elif init == "pca":
            A0 = _pca_whitened(X, y, d)
        elif init == "lda":
            A0 = _lda_directions(X, y, d)
        elif init == "rca_top":
            A0 = _rca_top_eigenvectors(X, y, d)
        else:
            A0 = RCA(n_components=d).fit(X, y).components_
            if A0.shape[0] < d:
                raise ValueError(f"the RCA start has only {A0.shape[0]} directions (singular "
                                 f"within-class covariance), fewer than n_components = {d}; "
                                 "use init='pca' or fewer components")
        A0 = np.array(A0, dtype=float)
        try:
            nca_objective.project(A0, X)
        except nca_objective.NonFiniteObjective as err:
            raise ValueError(f"the initial A ({init if isinstance(init, str) else 'array'}) "
                             f"gives a non-finite objective: {err}") from None
        return A0

    # ---- optimisers --------------------------------------------------------------------------
    def _mean_objective(self, X, y, reg=None):
        """f / N and its gradient as functions of the flat A (d x D)."""
        n = X.shape[0]

        def fun(A):
            f, g = self._batch_objective(A, X, y, reg=reg)
            return f / n, g / n
        return fun

    def _full_batch(self, A0, X, y, max_iter=None, final_phase=True, reg=None, optimizer=None):
        """Maximise f / N from A0 with `optimizer`; every iteration is logged."""
        fun = self._mean_objective(X, y, reg)
        optimizer = optimizer or self.optimizer
        max_iter = max_iter or self.max_iter
        if optimizer == "bold_driver":
            return self._bold_driver(A0, fun, max_iter, final_phase)
        shape = A0.shape
        mon = self._monitor
        last = {"A": A0}

        def negative(a):
            try:
                f, g = fun(a.reshape(shape))
            except nca_objective.NonFiniteObjective:
                raise _Stop("non-finite objective (A exploded); kept the last finite iterate")
            return -f, -g.ravel()

        def callback(intermediate_result):
            A = intermediate_result.x.reshape(shape)
            last["A"] = A.copy()
            mon.n_iter += 1
            if mon.log(A, -intermediate_result.fun, final_phase):
                raise StopIteration

        method = {"cg": "CG", "lbfgs": "L-BFGS-B"}[optimizer]
        try:
            res = minimize(negative, A0.ravel(), jac=True, method=method, tol=self.tol,
                           callback=callback, options={"maxiter": max_iter})
            if final_phase and mon.stop_reason == "max_iter reached" and res.nit < max_iter:
                mon.stop_reason = f"converged ({res.message})"
        except _Stop as stop:
            mon.stop_reason = str(stop)
        return last["A"]

    def _bold_driver(self, A, fun, max_iter, final_phase):
        """Gradient ascent with the bold-driver rule (Vogl et al. 1988; section 3.3.1): after an
        improving step eta *= 1.1, else the step is undone and eta *= 0.5."""
        mon = self._monitor
        f, g = fun(A)
        eta = self.learning_rate
        for _ in range(max_iter):
            trial = A + eta * g
            try:
                f_new, g_new = fun(trial)
            except nca_objective.NonFiniteObjective:
                f_new = -np.inf
            mon.n_iter += 1
            if f_new > f:
                A, gain, f, g = trial, f_new - f, f_new, g_new
                eta *= 1.1
            else:
                gain = None
                eta *= 0.5
            if mon.log(A, f, final_phase):
                break
            if gain is not None and gain < self.tol:
                if final_phase:
                    mon.stop_reason = f"converged (objective gain {gain:.2g} < tol)"
                break
            if eta < 1e-12:
                if final_phase:
                    mon.stop_reason = "converged (learning rate below 1e-12)"
                break
        return A

    def _optimise(self, A0, X, y, rng):
        return self._full_batch(A0, X, y)

    # ---- results -----------------------------------------------------------------------------
    def fit_info(self) -> dict:
        mon = self._monitor
        info = {
            "n_components": int(self.components_.shape[0]),
            "n_iter": int(mon.n_iter),
            "objective": mon.objective,
            "trace_time_s": mon.elapsed,
            "visited_trace": mon.visited,
            "visited_fraction": float(np.mean(mon.visited)) if mon.visited else 1.0,
            "time_to_convergence_s": float(mon.best_time),
            "best_iteration": int(mon.best_iter),
            "stop_reason": mon.stop_reason,
        }
        if mon.val:
            info["validation_score"] = mon.val
        return info

    def predict_nca_rule(self, X) -> np.ndarray:
        """Labels by the NCA rule (eq. 3.25) against the whole training set; a query with no
        score under the model (compact support, outside every support) gets its 1-NN label."""
        X_train, y_train = self._train
        scores = self._class_scores(self.components_, X_train, y_train,
                                    np.asarray(X, dtype=float))
        pred = np.nanargmax(np.where(np.isnan(scores), -np.inf, scores), axis=1)
        lost = np.isnan(scores).any(axis=1)
        if np.any(lost):
            _, ind = self.kneighbors(np.asarray(X, dtype=float)[lost], 1)
            pred[lost] = y_train[ind[:, 0]]
        self.rule_fallback_share_ = float(lost.mean())
        return self.classes_[pred]

    def model_objective(self, A=None) -> float:
        """f(A) / N of the method's model (unregularised) on the data it is fitted on; default A:
        the fitted one, i.e. the thesis' "train score"."""
        X, y = self._fit_data
        return self._objective_value(self.components_ if A is None else A, X, y) / X.shape[0]

    def extra_metrics(self, X_test, y_test) -> dict:
        acc = float(np.mean(self.predict_nca_rule(X_test) == np.asarray(y_test)))
        visited = self._monitor.visited
        return {"accuracy_nca_rule": acc, "nca_rule_fallback_share": self.rule_fallback_share_,
                "nca_train_score": self.model_objective(),
                "nca_visited_fraction": float(np.mean(visited)) if visited else 1.0}


def _nearest(P: np.ndarray, Q: np.ndarray, block: int = 1024) -> np.ndarray:
    """Index of each row of Q's nearest row of P (squared Euclidean distance; the first on a
    tie), `block` rows of Q at a time."""
    sq = np.einsum("ij,ij->i", P, P)
    out = np.empty(Q.shape[0], dtype=np.intp)
    for start in range(0, Q.shape[0], block):
        q = Q[start:start + block]
        out[start:start + block] = np.argmin(sq[None, :] - 2.0 * q @ P.T, axis=1)
    return out


def _pca_whitened(X, y, d):
    """Eq. 3.15: the top d principal directions scaled by 1/sqrt(eigenvalue) (S^(-1/2))."""
    W = PCA(n_components=d).fit(X, y).components_
    var = (X - X.mean(axis=0)) @ W.T
    scale = np.sqrt(np.maximum(var.var(axis=0), np.finfo(float).eps))
    return W / scale[:, None]


def _rca_top_eigenvectors(X, y, d):
    """Sect. 3.3.2's RCA start A = S_W^(-1/2) (eq. 3.17) cut to d rows by its rule for PCA (eq.
    3.15): the d eigenvectors of S_W with the largest eigenvalues, each scaled by
    1/sqrt(eigenvalue), so that A S_W A^T = I_d. Needs only those d eigenvalues nonzero."""
    labels, codes = np.unique(y, return_inverse=True)
    means = np.stack([X[codes == c].mean(axis=0) for c in range(labels.size)])
    centred = X - means[codes]
    values, vectors = np.linalg.eigh(centred.T @ centred / X.shape[0])
    top = np.argsort(values)[::-1][:d]
    if values[top[-1]] <= SCATTER_RTOL * max(values[top[0]], 0.0):
        rank = int(np.count_nonzero(values > SCATTER_RTOL * values.max()))
        raise ValueError(f"init='rca_top': the within-class scatter has rank {rank}, fewer "
                         f"than n_components = {d} directions to whiten; use fewer components "
                         "or init='pca'")
    return vectors[:, top].T / np.sqrt(values[top])[:, None]


def _lda_directions(X, y, d):
    """Eq. 3.16-3.17: the d leading generalised eigenvectors of (S_B, S_W), as scikit-learn's
    eigen solver orders them (the `lda` baseline's directions, continued past C - 1)."""
    check_within_class_scatter(X, y, "init='lda'", "choose init 'pca' or 'random'")
    return lda_scalings(X, y)[:, :d].T


@register("nca")
class NCA(NCAFamily):
    """Full NCA (Oneata 2011, chapter 3): `optimizer` cg | lbfgs | bold_driver, `init` random |
    random_unit | pca | lda | rca | rca_top | identity (or a d x D array), `reg` (eq. 3.22),
    early stopping on a `validation_fraction` of the training set with `patience`, and
    dimensionality annealing (Algorithm 3.2) with `anneal=True`: from a full-rank start, D - d
    times the row of A with the least projected variance (`anneal_select`) gets `anneal_steps`
    increases of its penalty lambda_r by `anneal_delta` x N, each followed by `anneal_cg_iter`
    conjugate-gradient iterations, and is then removed; `optimizer` then continues from the
    low-rank A (the thesis' suggested follow-up).

    Parameters
    ----------
    n_components : int or None, default=None
        Rows d of A (d x D, Oneata 2011, sect. 3.1); None: D.
    optimizer : {'cg', 'lbfgs', 'bold_driver'}, default='cg'
        Conjugate gradients or L-BFGS (scipy) on f(A) / N, or gradient ascent with the
        bold-driver rule (sect. 3.3.1).
    init : str or array of shape (d, D), default='rca'
        A_0 (sect. 3.3.2): 'random' (G / sqrt(D), G standard normal), 'random_unit' (G), 'pca'
        (whitened, eq. 3.15), 'lda' (eq. 3.16-3.17), 'rca' (the `rca` baseline), 'rca_top'
        (S_W^(-1/2) on the d leading eigenvectors of S_W), 'identity', or an array.
    max_iter : int, default=100
        Iteration cap of the optimiser.
    tol : float, default=1e-05
        Convergence tolerance of the optimiser (scipy's, or the bold driver's least objective
        gain).
    reg : float, default=0.0
        lambda of the Frobenius penalty, f(A) - lambda ||A||_F^2 (eq. 3.22).
    learning_rate : float, default=1.0
        Initial step of the bold driver.
    validation_fraction : float, default=0.0
        Share of the training part held out (stratified) for early stopping (figure 3.2); 0:
        none.
    patience : int, default=25
        Held-out checks without a gain before early stopping; the best A is returned.
    anneal : bool, default=False
        Dimensionality annealing (Algorithm 3.2) from a full-rank start.
    anneal_steps : int, default=5
        Penalty increases per removed row.
    anneal_delta : float, default=0.02
        Penalty increase per step, times N.
    anneal_cg_iter : int, default=3
        Conjugate-gradient iterations after each increase.
    anneal_select : str, default='projected_variance'
        Which row is annealed away next: 'projected_variance' (the least variance of X A^T),
        'data_variance' (the row weighting most the data's least-variance direction) or
        'row_norm' (the shortest).
    chunk_size : int or None, default=None
        Rows of the N x N kernel computed at once (memory O(N x chunk)); None: blocks of about
        half a million entries (`solvers.nca_objective.BLOCK_ENTRIES`).
    random_state : int or None, default=None
        Seeds the random start, the held-out part and the batches.
    max_train_size : int or None, default=20000
        Full NCA is a small-data method: every evaluation visits all N^2 pairs (about 4.3 CPU
        hours at N = 60 000, d = 50, one core; 30 minutes near N = 20 000). A training part
        larger than this is refused before the fit, naming the large-data forms, `nca_sl`
        (stochastic learning) and `nca_ss` (sub-sampling), Oneata 2011, ch. 4; None: no limit.

    Attributes
    ----------
    components_ : ndarray of shape (r, D)
        The learnt map L: d(x, y) = ||L x - L y||.
    embedding_ : ndarray of shape (n, r)
        The training points mapped, L x_i (what queries are searched against).
    n_features_in_ : int
        Features D seen by `fit`.
    classes_ : ndarray
        The class labels.
    init_components_ : ndarray of shape (d, D)
        A_0, the start of the optimisation.
    n_iter_ : int
        Iterations (updates) run.
    history_ : list of (float, ndarray)
        (seconds since the start, A) at each logged iteration, for time-accuracy curves.
    rule_fallback_share_ : float
        Share of the last `predict_nca_rule` queries that no class scored (compact support) and
        got their 1-NN label (set by that call).
    """

    expected_failed_checks = {
        "check_transformer_n_iter": "n_iter_ counts the optimiser's iterations, and on the "
        "check's two well-separated blobs the starting map is already optimal (gradient "
        "below tol): 0 iterations run, which is right"}

    _parameter_constraints = {
        **FAMILY, **FULL_BATCH, "optimizer": [Options(OPTIMIZERS)], "anneal": [Boolean()],
        "anneal_steps": [POSITIVE_INT], "anneal_delta": [POSITIVE],
        "anneal_cg_iter": [POSITIVE_INT], "anneal_select": [Options(ANNEAL_SELECT)],
        "max_train_size": [POSITIVE_INT, None]}

    def __init__(self, n_components=None, optimizer="cg", init="rca", max_iter=100, tol=1e-5,
                 reg=0.0, learning_rate=1.0, validation_fraction=0.0, patience=25,
                 anneal=False, anneal_steps=5, anneal_delta=0.02, anneal_cg_iter=3,
                 anneal_select="projected_variance", chunk_size=None, random_state=None,
                 max_train_size=20000):
        self.n_components = n_components
        self.optimizer = optimizer
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.reg = reg
        self.learning_rate = learning_rate
        self.validation_fraction = validation_fraction
        self.patience = patience
        self.anneal = anneal
        self.anneal_steps = anneal_steps
        self.anneal_delta = anneal_delta
        self.anneal_cg_iter = anneal_cg_iter
        self.anneal_select = anneal_select
        self.chunk_size = chunk_size
        self.random_state = random_state
        self.max_train_size = max_train_size

    @classmethod
    def check_parameters(cls, params):
        super().check_parameters(params)
        params = cls.with_defaults(params)
        require("init", not params["anneal"] or isinstance(params["init"], str),
                "anneal=True starts from a full-rank A: give init by name")

    @classmethod
    def check_data_limits(cls, params, n_train, d, n_classes):
        super().check_data_limits(params, n_train, d, n_classes)
        limit = params["max_train_size"]
        require("max_train_size", limit is None or n_train <= limit,
                f"full NCA is a small-data method (all N^2 pairs at every evaluation: about 4.3 "
                f"CPU hours at N = 60 000, d = 50 on one core); n_train = {n_train} exceeds "
                f"max_train_size = {limit}. Use its large-data forms nca_sl (stochastic "
                f"learning) or nca_ss (sub-sampling), or set max_train_size: null to fit it "
                f"anyway")

    def _initial(self, X, y, rng, d=None):
        if self.anneal:
            return super()._initial(X, y, rng, d=X.shape[1])
        return super()._initial(X, y, rng, d)

    def _optimise(self, A0, X, y, rng):
        A = A0
        if self.anneal:
            A = self._anneal(A0, X, y)
        return self._full_batch(A, X, y)

    def _anneal(self, A, X, y):
        """Algorithm 3.2 (its iterations are logged, outside early stopping)."""
        d, n = self._n_components(X.shape[1]), X.shape[0]
        lam = np.zeros(A.shape[0])
        while A.shape[0] > d:
            if self.anneal_select == "projected_variance":
                r = int(np.argmin((X @ A.T).var(axis=0)))
            elif self.anneal_select == "row_norm":
                r = int(np.argmin(np.linalg.norm(A, axis=1)))
            else:  # the row weighting most the direction of least data variance
                evals, evecs = np.linalg.eigh(np.cov(X.T))
                r = int(np.argmax(np.abs(A @ evecs[:, 0])))
            for _ in range(self.anneal_steps):
                lam[r] += self.anneal_delta * n
                A = self._full_batch(A, X, y, max_iter=self.anneal_cg_iter, final_phase=False,
                                     reg=lam.copy(), optimizer="cg")
            A, lam = np.delete(A, r, axis=0), np.delete(lam, r)
        return A

    def fit_info(self):
        return {**super().fit_info(), "optimizer": self.optimizer,
                "init": self.init if isinstance(self.init, str) else "array"}

"""The fast NCA variants of Oneata 2011, chapter 4, each a method of its own.

    nca_ss       sub-sampling (section 4.1): full NCA on n points, the metric applied to all
    nca_mb       mini-batches (Algorithm 4.1): random, FPC (Alg. 4.2) or RPC (Alg. 4.3) batches
                 formed in the projected space every epoch
    nca_sl       stochastic learning (Algorithm 4.4): n points against the whole set per step
    nca_sl_kd    stochastic learning with the k-d-tree approximate class-conditional KDE
                 (Algorithm 4.6, `dmlbench.solvers.nca_kdtree`)
    nca_cs       compact-support kernel (eq. 4.16-4.20, `dmlbench.solvers.nca_compact_support`), full batch or SL
    nca_cs_back  compact support plus a Gaussian background per class (section 4.6)

The stochastic ones take steps A <- A + eta / (t + t0) * grad, t the number of updates so far
(section 3.3.1) and grad the gradient of the batch's sum of p_i (eq. 4.3; Algorithms 4.1, 4.4),
and stop after `max_iter` updates or by early stopping: every
`eval_every` updates the held-out score is checked, `patience` checks without a gain stop the
fit and the best A is returned (section 5.3.2: 5% held out, patience 25). A reading of section
5.3.2 closer to its words is an option of `nca_mb`, `nca_sl` and `nca_sl_kd`: the held-out
accuracy (`validation_score='nca_rule'` or `'1nn'`) instead of the mean p, and the patience
counted in updates since the best check (`patience_unit='updates'`) instead of in checks.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from ..solvers import clustering, nca_compact_support, nca_kdtree, nca_objective
from .nca import FAMILY, FULL_BATCH, NCA, OPTIMIZERS, POSITIVE, POSITIVE_INT, NCAFamily
from .parameters import Interval, Options, require
from .registry import register

CLUSTERINGS = ("random", "fpc", "rpc")
BATCH = Interval(Integral, 2, None)
#: early stopping's held-out scores and patience units (`NCAFamily._validation_score`, `Monitor`)
VALIDATION_SCORES = ("mean_p", "nca_rule", "1nn")
PATIENCE_UNITS = ("checks", "updates")
#: the stochastic updates' parameters (step eta / (t + t0), held-out check every eval_every)
STOCHASTIC = {"batch_size": [BATCH], "eta": [POSITIVE], "t0": [POSITIVE],
              "eval_every": [POSITIVE_INT]}
#: early stopping's readings (`nca_mb`, `nca_sl`, `nca_sl_kd`)
EARLY_STOPPING = {"validation_score": [Options(VALIDATION_SCORES)],
                  "patience_unit": [Options(PATIENCE_UNITS)]}


@register("nca_ss")
class NCASubsample(NCA):
    """NCA on a random stratified subset of `n_samples` training points (section 4.1); the NCA
    rule and k-NN then use the whole training set. Other parameters as `nca`.

    Parameters
    ----------
    n_samples : int, default=3000
        Training points NCA is learnt from (a stratified random subset, sect. 4.1, two per class
        at least); the k-NN and the NCA rule use all.
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

    #: full NCA's constraints without its size limit: the subset is what keeps it small
    _parameter_constraints = {**{key: value for key, value in NCA._parameter_constraints.items()
                                 if key != "max_train_size"}, "n_samples": [BATCH]}

    def __init__(self, n_samples=3000, n_components=None, optimizer="cg", init="rca",
                 max_iter=100, tol=1e-5, reg=0.0, learning_rate=1.0, validation_fraction=0.0,
                 patience=25, anneal=False, anneal_steps=5, anneal_delta=0.02,
                 anneal_cg_iter=3, anneal_select="projected_variance", chunk_size=None,
                 random_state=None):
        self.n_samples = n_samples
        super().__init__(n_components, optimizer, init, max_iter, tol, reg, learning_rate,
                         validation_fraction, patience, anneal, anneal_steps, anneal_delta,
                         anneal_cg_iter, anneal_select, chunk_size, random_state,
                         max_train_size=None)

    @classmethod
    def check_data_limits(cls, params, n_train, d, n_classes):
        NCAFamily.check_data_limits.__func__(cls, params, n_train, d, n_classes)

    def _fit_subset(self, X, y, rng):
        if self.n_samples >= y.size:
            return X, y
        picked = []
        for c in range(self.classes_.size):  # proportional, but two per class at least
            members = np.flatnonzero(y == c)
            take = max(2, int(round(self.n_samples * members.size / y.size)))
            picked.extend(rng.choice(members, size=min(take, members.size), replace=False))
        picked = np.sort(np.asarray(picked))
        return X[picked], y[picked]

    def fit_info(self):
        return {**super().fit_info(), "n_samples_used": int(self._fit_data[1].size)}


class StochasticNCA(NCAFamily):
    """Stochastic gradient ascent over batches (Algorithms 4.1 and 4.4)."""

    def _batches(self, A, X, y, rng) -> list[np.ndarray]:
        """One epoch: groups of `batch_size` points in random order (Algorithm 4.4, line 2)."""
        order = rng.permutation(y.size)
        return np.array_split(order, max(1, -(-y.size // self.batch_size)))

    def _step(self, A, X, y, batch):
        """(sum of p_i over the batch, gradient): the batch's points against the whole set."""
        return self._batch_objective(A, X, y, rows=batch)

    def _optimise(self, A, X, y, rng):
        return self._sgd(A, X, y, rng)

    def _sgd(self, A, X, y, rng):
        mon = self._monitor
        t, recent, last_finite = 0, [], A
        while True:
            stepped = False
            for batch in self._batches(A, X, y, rng):
                if batch.size < 2:
                    continue
                try:
                    f, g = self._step(A, X, y, batch)
                except nca_objective.NonFiniteObjective:
                    mon.stop_reason = "non-finite objective (A exploded); kept the last finite A"
                    return last_finite
                last_finite = A
                A = A + self.eta / (t + self.t0) * g
                t += 1
                mon.n_iter = t
                stepped = True
                recent.append(f / batch.size)
                if t % self.eval_every == 0 or t >= self.max_iter:
                    if mon.log(A, float(np.mean(recent))):
                        return A
                    recent = []
                if t >= self.max_iter:
                    return A
            if not stepped:
                raise ValueError("every mini-batch has fewer than 2 points: raise batch_size")

    def fit_info(self):
        return {**super().fit_info(), "batch_size": self.batch_size, "eta": self.eta,
                "t0": self.t0}


@register("nca_mb")
class NCAMiniBatch(StochasticNCA):
    """NCA with mini-batches (Algorithm 4.1): each epoch splits the projected training set into
    batches of at most `batch_size` points by `clustering` (random | fpc | rpc) and takes one
    step per batch on the NCA objective within the batch.

    Parameters
    ----------
    n_components : int or None, default=None
        Rows d of A (d x D, Oneata 2011, sect. 3.1); None: D.
    batch_size : int, default=2000
        At most this many points per mini-batch (Algorithm 4.1).
    clustering : {'random', 'fpc', 'rpc'}, default='rpc'
        How each epoch's batches are formed in the projected space: random, farthest-point (Alg.
        4.2) or recursive-projection clustering (Alg. 4.3).
    eta : float, default=1.0
        Step scale: A <- A + eta / (t + t0) grad (sect. 3.3.1).
    t0 : float, default=1.0
        Offset of the step schedule eta / (t + t0).
    max_iter : int, default=500
        Cap on the updates (one per batch).
    eval_every : int, default=1
        Updates between held-out checks (and trace entries).
    init : str or array of shape (d, D), default='rca'
        A_0 (sect. 3.3.2): 'random' (G / sqrt(D), G standard normal), 'random_unit' (G), 'pca'
        (whitened, eq. 3.15), 'lda' (eq. 3.16-3.17), 'rca' (the `rca` baseline), 'rca_top'
        (S_W^(-1/2) on the d leading eigenvectors of S_W), 'identity', or an array.
    reg : float, default=0.0
        lambda of the Frobenius penalty, f(A) - lambda ||A||_F^2 (eq. 3.22).
    validation_fraction : float, default=0.05
        Share of the training part held out (stratified) for early stopping (figure 3.2); 0:
        none.
    patience : int, default=25
        Held-out checks without a gain before early stopping (updates since the best check with
        `patience_unit='updates'`); the best A is returned.
    validation_score : {'mean_p', 'nca_rule', '1nn'}, default='mean_p'
        What early stopping watches on the held-out points against the fitting part: their mean
        p(c_i | A x_i), or their accuracy under the NCA rule (eq. 3.25) or the 1-NN rule.
    patience_unit : {'checks', 'updates'}, default='checks'
        What `patience` counts: held-out checks without a gain, or updates since the best check
        (sect. 5.3.2); the same when `eval_every` is 1.
    chunk_size : int or None, default=None
        Rows of the N x N kernel computed at once (memory O(N x chunk)); None: blocks of about
        half a million entries (`solvers.nca_objective.BLOCK_ENTRIES`).
    random_state : int or None, default=None
        Seeds the random start, the held-out part and the batches.

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

    _parameter_constraints = {**FAMILY, **STOCHASTIC, **EARLY_STOPPING,
                              "clustering": [Options(CLUSTERINGS)]}

    def __init__(self, n_components=None, batch_size=2000, clustering="rpc", eta=1.0, t0=1.0,
                 max_iter=500, eval_every=1, init="rca", reg=0.0, validation_fraction=0.05,
                 patience=25, validation_score="mean_p", patience_unit="checks",
                 chunk_size=None, random_state=None):
        self.n_components = n_components
        self.batch_size = batch_size
        self.clustering = clustering
        self.eta = eta
        self.t0 = t0
        self.max_iter = max_iter
        self.eval_every = eval_every
        self.init = init
        self.reg = reg
        self.validation_fraction = validation_fraction
        self.patience = patience
        self.validation_score = validation_score
        self.patience_unit = patience_unit
        self.chunk_size = chunk_size
        self.random_state = random_state

    def _batches(self, A, X, y, rng):
        n_batches = max(1, -(-y.size // self.batch_size))
        if self.clustering == "random":
            return np.array_split(rng.permutation(y.size), n_batches)
        Z = X @ A.T
        if self.clustering == "fpc":
            return clustering.farthest_point_clustering(Z, n_batches, rng)
        return clustering.recursive_projection_clustering(Z, self.batch_size, rng)

    def _step(self, A, X, y, batch):
        return self._batch_objective(A, X[batch], y[batch])

    def fit_info(self):
        return {**super().fit_info(), "clustering": self.clustering}


@register("nca_sl")
class NCAStochastic(StochasticNCA):
    """Stochastic learning (Algorithm 4.4): each step moves A along the gradient of the p_i of
    `batch_size` random points, each against the whole training set (eq. 4.1-4.4).

    A step costs two N x d x D products (the projection X A^T and the gradient) and the batch's
    B x N x d ones (`solvers.nca_objective`, few rows against all, each row with its own shift of
    eq. 3.20): about 0.04 s at N = 8 000 and D = d = 100 on one core. The early-stopping check
    every `eval_every` steps scores the held-out points against the fitting part, and the train
    score (`nca_train_score`) is f(A) alone, without the gradient. The steps follow eq. 4.4
    exactly, but with eta / (t0 + t) = 0.1 at the start they amplify round-off about tenfold per
    step: any change in the order of the floating-point sums (another BLAS, another blocking)
    gives a different, equally valid trajectory after a few dozen steps.

    Parameters
    ----------
    n_components : int or None, default=None
        Rows d of A (d x D, Oneata 2011, sect. 3.1); None: D.
    batch_size : int, default=50
        Points per stochastic step (Algorithm 4.4), each against the whole training set.
    eta : float, default=1.0
        Step scale: A <- A + eta / (t + t0) grad (sect. 3.3.1).
    t0 : float, default=10.0
        Offset of the step schedule eta / (t + t0).
    max_iter : int, default=2000
        Cap on the stochastic updates.
    eval_every : int, default=20
        Updates between held-out checks (and trace entries).
    init : str or array of shape (d, D), default='rca'
        A_0 (sect. 3.3.2): 'random' (G / sqrt(D), G standard normal), 'random_unit' (G), 'pca'
        (whitened, eq. 3.15), 'lda' (eq. 3.16-3.17), 'rca' (the `rca` baseline), 'rca_top'
        (S_W^(-1/2) on the d leading eigenvectors of S_W), 'identity', or an array.
    reg : float, default=0.0
        lambda of the Frobenius penalty, f(A) - lambda ||A||_F^2 (eq. 3.22).
    validation_fraction : float, default=0.05
        Share of the training part held out (stratified) for early stopping (figure 3.2); 0:
        none.
    patience : int, default=25
        Held-out checks without a gain before early stopping (updates since the best check with
        `patience_unit='updates'`); the best A is returned.
    validation_score : {'mean_p', 'nca_rule', '1nn'}, default='mean_p'
        What early stopping watches on the held-out points against the fitting part: their mean
        p(c_i | A x_i), or their accuracy under the NCA rule (eq. 3.25) or the 1-NN rule.
    patience_unit : {'checks', 'updates'}, default='checks'
        What `patience` counts: held-out checks without a gain, or updates since the best check
        (sect. 5.3.2); the same when `eval_every` is 1.
    chunk_size : int or None, default=None
        Rows of the N x N kernel computed at once (memory O(N x chunk)); None: blocks of about
        half a million entries (`solvers.nca_objective.BLOCK_ENTRIES`).
    random_state : int or None, default=None
        Seeds the random start, the held-out part and the batches.

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

    _parameter_constraints = {**FAMILY, **STOCHASTIC, **EARLY_STOPPING}

    def __init__(self, n_components=None, batch_size=50, eta=1.0, t0=10.0, max_iter=2000,
                 eval_every=20, init="rca", reg=0.0, validation_fraction=0.05, patience=25,
                 validation_score="mean_p", patience_unit="checks", chunk_size=None,
                 random_state=None):
        self.n_components = n_components
        self.batch_size = batch_size
        self.eta = eta
        self.t0 = t0
        self.max_iter = max_iter
        self.eval_every = eval_every
        self.init = init
        self.reg = reg
        self.validation_fraction = validation_fraction
        self.patience = patience
        self.validation_score = validation_score
        self.patience_unit = patience_unit
        self.chunk_size = chunk_size
        self.random_state = random_state


@register("nca_sl_kd")
class NCAStochasticKD(NCAStochastic):
    """Stochastic learning with the k-d-tree approximate class-conditional KDE (Algorithm 4.6):
    the class sums of each step's points are approximated within a relative error
    `epsilon_max` (trees with leaves of fewer than `leaf_size` points, rebuilt every step in the
    projected space). The NCA rule and early stopping use the exact kernel sums.

    Parameters
    ----------
    n_components : int or None, default=None
        Rows d of A (d x D, Oneata 2011, sect. 3.1); None: D.
    batch_size : int, default=50
        Points per stochastic step (Algorithm 4.4), each against the whole training set.
    epsilon_max : float, default=0.1
        Relative error allowed in the k-d-tree approximation of the class sums (Algorithm 4.6).
    leaf_size : int, default=32
        Points per leaf of the k-d trees.
    eta : float, default=1.0
        Step scale: A <- A + eta / (t + t0) grad (sect. 3.3.1).
    t0 : float, default=10.0
        Offset of the step schedule eta / (t + t0).
    max_iter : int, default=2000
        Cap on the stochastic updates.
    eval_every : int, default=20
        Updates between held-out checks (and trace entries).
    init : str or array of shape (d, D), default='rca'
        A_0 (sect. 3.3.2): 'random' (G / sqrt(D), G standard normal), 'random_unit' (G), 'pca'
        (whitened, eq. 3.15), 'lda' (eq. 3.16-3.17), 'rca' (the `rca` baseline), 'rca_top'
        (S_W^(-1/2) on the d leading eigenvectors of S_W), 'identity', or an array.
    reg : float, default=0.0
        lambda of the Frobenius penalty, f(A) - lambda ||A||_F^2 (eq. 3.22).
    validation_fraction : float, default=0.05
        Share of the training part held out (stratified) for early stopping (figure 3.2); 0:
        none.
    patience : int, default=25
        Held-out checks without a gain before early stopping (updates since the best check with
        `patience_unit='updates'`); the best A is returned.
    validation_score : {'mean_p', 'nca_rule', '1nn'}, default='mean_p'
        What early stopping watches on the held-out points against the fitting part: their mean
        p(c_i | A x_i), or their accuracy under the NCA rule (eq. 3.25) or the 1-NN rule.
    patience_unit : {'checks', 'updates'}, default='checks'
        What `patience` counts: held-out checks without a gain, or updates since the best check
        (sect. 5.3.2); the same when `eval_every` is 1.
    chunk_size : int or None, default=None
        Rows of the N x N kernel computed at once (memory O(N x chunk)); None: blocks of about
        half a million entries (`solvers.nca_objective.BLOCK_ENTRIES`).
    random_state : int or None, default=None
        Seeds the random start, the held-out part and the batches.

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

    _parameter_constraints = {**NCAStochastic._parameter_constraints,
                              "epsilon_max": [Interval(Real, 0, None)], "leaf_size": [POSITIVE_INT]}

    def __init__(self, n_components=None, batch_size=50, epsilon_max=0.1, leaf_size=32,
                 eta=1.0, t0=10.0, max_iter=2000, eval_every=20, init="rca", reg=0.0,
                 validation_fraction=0.05, patience=25, validation_score="mean_p",
                 patience_unit="checks", chunk_size=None, random_state=None):
        self.epsilon_max = epsilon_max
        self.leaf_size = leaf_size
        super().__init__(n_components, batch_size, eta, t0, max_iter, eval_every, init, reg,
                         validation_fraction, patience, validation_score, patience_unit,
                         chunk_size, random_state)

    def _batch_objective(self, A, X, y, rows=None, reg=None):
        reg = self.reg if reg is None else reg
        f, g, info = nca_kdtree.objective(A, X, y, rows=rows, epsilon=self.epsilon_max,
                                      leaf_size=self.leaf_size, reg=reg)
        self._monitor.count(info["pairs"], info["candidates"])
        return f, g

    def _objective_value(self, A, X, y):
        """The train score under the same approximation as the steps."""
        return self._batch_objective(A, X, y, reg=0.0)[0]

    def fit_info(self):
        return {**super().fit_info(), "epsilon_max": self.epsilon_max}


@register("nca_cs")
class NCACompactSupport(StochasticNCA):
    """NCA with the compact-support kernel (1 - d^2)^2 (eq. 4.16-4.20): only the pairs inside the
    support, found by a range search (`search='tree'`), are visited. `optimizer` cg | lbfgs |
    bold_driver optimises the full objective; 'sgd' is stochastic learning with `batch_size`
    points per step ("NCA SL CS", Table 5.10).

    Parameters
    ----------
    n_components : int or None, default=None
        Rows d of A (d x D, Oneata 2011, sect. 3.1); None: D.
    optimizer : {'cg', 'lbfgs', 'bold_driver', 'sgd'}, default='lbfgs'
        A full-batch optimiser of the compact-support objective, or 'sgd': stochastic learning
        with `batch_size` points per step ('NCA SL CS', Table 5.10).
    batch_size : int or None, default=50
        Points per step when `optimizer='sgd'`.
    eta : float, default=1.0
        Step scale of 'sgd': A <- A + eta / (t + t0) grad.
    t0 : float, default=100.0
        Offset of the 'sgd' step schedule.
    max_iter : int, default=100
        Iteration cap of the optimiser (updates for 'sgd').
    tol : float, default=1e-05
        Convergence tolerance of the optimiser (scipy's, or the bold driver's least objective
        gain).
    learning_rate : float, default=1.0
        Initial step of the bold driver.
    eval_every : int, default=20
        'sgd' updates between held-out checks.
    init : str or array of shape (d, D), default='rca'
        A_0 (sect. 3.3.2): 'random' (G / sqrt(D), G standard normal), 'random_unit' (G), 'pca'
        (whitened, eq. 3.15), 'lda' (eq. 3.16-3.17), 'rca' (the `rca` baseline), 'rca_top'
        (S_W^(-1/2) on the d leading eigenvectors of S_W), 'identity', or an array.
    init_scale : float, default=1.0
        A_0 times this: the kernel width of eq. 4.15 is absorbed in A.
    reg : float, default=0.0
        lambda of the Frobenius penalty, f(A) - lambda ||A||_F^2 (eq. 3.22).
    validation_fraction : float, default=0.0
        Share of the training part held out (stratified) for early stopping (figure 3.2); 0:
        none.
    patience : int, default=25
        Held-out checks without a gain before early stopping; the best A is returned.
    search : {'tree', 'dense'}, default='tree'
        How the pairs inside the compact support are found: a k-d-tree range search or all
        pairs.
    chunk_size : int or None, default=None
        Rows of the N x N kernel computed at once (memory O(N x chunk)); None: blocks of about
        half a million entries (`solvers.nca_objective.BLOCK_ENTRIES`).
    random_state : int or None, default=None
        Seeds the random start, the held-out part and the batches.

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
        **FAMILY, **FULL_BATCH, **STOCHASTIC, "batch_size": [BATCH, None],
        "optimizer": [Options((*OPTIMIZERS, "sgd"))], "init_scale": [POSITIVE],
        "search": [Options(nca_compact_support.SEARCHES)]}

    def __init__(self, n_components=None, optimizer="lbfgs", batch_size=50, eta=1.0, t0=100.0,
                 max_iter=100, tol=1e-5, learning_rate=1.0, eval_every=20, init="rca",
                 init_scale=1.0, reg=0.0, validation_fraction=0.0, patience=25, search="tree",
                 chunk_size=None, random_state=None):
        self.n_components = n_components
        self.init_scale = init_scale
        self.optimizer = optimizer
        self.batch_size = batch_size
        self.eta = eta
        self.t0 = t0
        self.max_iter = max_iter
        self.tol = tol
        self.learning_rate = learning_rate
        self.eval_every = eval_every
        self.init = init
        self.reg = reg
        self.validation_fraction = validation_fraction
        self.patience = patience
        self.search = search
        self.chunk_size = chunk_size
        self.random_state = random_state

    _background = None

    @classmethod
    def check_parameters(cls, params):
        super().check_parameters(params)
        params = cls.with_defaults(params)
        require("batch_size", params["optimizer"] != "sgd" or params["batch_size"] is not None,
                "optimizer='sgd' needs a batch_size")

    def _initial(self, X, y, rng, d=None):
        """A_0 of `init` times `init_scale`: the kernel width a of eq. 4.15 is absorbed in A, so
        this sets the width relative to the data at the start."""
        return super()._initial(X, y, rng, d) * self.init_scale

    def _optimise(self, A, X, y, rng):
        if self.optimizer == "sgd":
            return self._sgd(A, X, y, rng)
        return self._full_batch(A, X, y)

    def _batch_objective(self, A, X, y, rows=None, reg=None):
        reg = self.reg if reg is None else reg
        f, g, info = nca_compact_support.objective(A, X, y, rows=rows, reg=reg, background=self._background,
                                      search=self.search, chunk_size=self.chunk_size)
        self._monitor.count(info["pairs"], info["candidates"])
        self._isolated = info["isolated"]
        return f, g

    def _objective_value(self, A, X, y):
        """f(A) of the compact-support model (counts the isolated points, `_isolated`)."""
        return self._batch_objective(A, X, y, reg=0.0)[0]

    def _class_scores(self, A, X, y, Xq):
        return nca_compact_support.class_scores(A, X, y, Xq, self.classes_.size, self._background,
                                   self.search)

    def fit_info(self):
        info = {**super().fit_info(), "optimizer": self.optimizer}
        if self.optimizer != "sgd":
            info.pop("batch_size"), info.pop("eta"), info.pop("t0")
        return info

    def extra_metrics(self, X_test, y_test):
        out = super().extra_metrics(X_test, y_test)  # the train score sets _isolated
        out["nca_isolated_share"] = self._isolated / self._fit_data[1].size
        return out


@register("nca_cs_back")
class NCACompactSupportBackground(NCACompactSupport):
    """Compact-support NCA with a Gaussian background per class (section 4.6, eq. 4.22-4.23):
    mixing weight `beta` (default None: 1/(N_c + 1) per class, the thesis' choice; or a number
    for every class). Other parameters as `nca_cs`.

    Parameters
    ----------
    n_components : int or None, default=None
        Rows d of A (d x D, Oneata 2011, sect. 3.1); None: D.
    beta : float or None, default=None
        Mixing weight of the background distribution (eq. 4.22); None: 1 / (N_c + 1) per class
        (the thesis' choice).
    optimizer : {'cg', 'lbfgs', 'bold_driver', 'sgd'}, default='lbfgs'
        A full-batch optimiser of the compact-support objective, or 'sgd': stochastic learning
        with `batch_size` points per step ('NCA SL CS', Table 5.10).
    batch_size : int or None, default=50
        Points per step when `optimizer='sgd'`.
    eta : float, default=1.0
        Step scale of 'sgd': A <- A + eta / (t + t0) grad.
    t0 : float, default=100.0
        Offset of the 'sgd' step schedule.
    max_iter : int, default=100
        Iteration cap of the optimiser (updates for 'sgd').
    tol : float, default=1e-05
        Convergence tolerance of the optimiser (scipy's, or the bold driver's least objective
        gain).
    learning_rate : float, default=1.0
        Initial step of the bold driver.
    eval_every : int, default=20
        'sgd' updates between held-out checks.
    init : str or array of shape (d, D), default='rca'
        A_0 (sect. 3.3.2): 'random' (G / sqrt(D), G standard normal), 'random_unit' (G), 'pca'
        (whitened, eq. 3.15), 'lda' (eq. 3.16-3.17), 'rca' (the `rca` baseline), 'rca_top'
        (S_W^(-1/2) on the d leading eigenvectors of S_W), 'identity', or an array.
    init_scale : float, default=1.0
        A_0 times this: the kernel width of eq. 4.15 is absorbed in A.
    reg : float, default=0.0
        lambda of the Frobenius penalty, f(A) - lambda ||A||_F^2 (eq. 3.22).
    validation_fraction : float, default=0.0
        Share of the training part held out (stratified) for early stopping (figure 3.2); 0:
        none.
    patience : int, default=25
        Held-out checks without a gain before early stopping; the best A is returned.
    search : {'tree', 'dense'}, default='tree'
        How the pairs inside the compact support are found: a k-d-tree range search or all
        pairs.
    chunk_size : int or None, default=None
        Rows of the N x N kernel computed at once (memory O(N x chunk)); None: blocks of about
        half a million entries (`solvers.nca_objective.BLOCK_ENTRIES`).
    random_state : int or None, default=None
        Seeds the random start, the held-out part and the batches.

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

    _parameter_constraints = {**NCACompactSupport._parameter_constraints,
                              "beta": [Interval(Real, 0, 1, closed="left"), None]}

    def __init__(self, n_components=None, beta=None, optimizer="lbfgs", batch_size=50, eta=1.0,
                 t0=100.0, max_iter=100, tol=1e-5, learning_rate=1.0, eval_every=20,
                 init="rca", init_scale=1.0, reg=0.0, validation_fraction=0.0, patience=25,
                 search="tree", chunk_size=None, random_state=None):
        self.beta = beta
        super().__init__(n_components, optimizer, batch_size, eta, t0, max_iter, tol,
                         learning_rate, eval_every, init, init_scale, reg, validation_fraction,
                         patience, search, chunk_size, random_state)

    def _prepare(self, X, y):
        self._background = nca_compact_support.background_model(X, y, self.beta)

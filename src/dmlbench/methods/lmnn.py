"""Large-margin nearest neighbour (Weinberger & Saul 2009): metric-learn 0.7.0's algorithm
re-implemented with dense array operations over row blocks, equal to rounding.

metric-learn's `LMNN.fit` does gradient descent on the map L with an adaptive step; each
evaluation of its objective (`_loss_grad`) rebuilds the impostor list label by label with
scikit-learn's `euclidean_distances`, counts the active (point, target) edges with a Python
`Counter` and sums outer products nine times: about 4 ms per evaluation on wine's 178 points,
most of it bookkeeping. Here one evaluation (`Objective`) is a matrix product per row block of
the n x n squared distances D in L-space, one compiled pass over the block counting the active
triples (`solvers.lmnn_compiled`) and a few d x d products; the fit (`lmnn_fit`) takes
metric-learn's steps (`benchmarks/lmnn_speed.py`: 12x-36x faster whole fits, docs/performance.md).

The objective (Weinberger & Saul 2009, eq. (13), its hinge written as eq. (14)'s slacks), for
mu = `regularization`, target neighbours j ~> i and impostors l (y_l != y_i):

    eps(L) = mu * sum_{i, j~>i} D_ij + (1 - mu) * sum_{i, j~>i, l} [1 + D_ij - D_il]_+ ,

computed as metric-learn computes it: total_active * (1 - mu) + <L, L (mu dfG + (1 - mu) df)>,
where the ordered triple (i, j, l) is active when D_il < 1 + D_ij (metric-learn's `act1` and
`act2` are its two orientations, i of the lower and of the higher label), total_active counts the
active triples, dfG = sum_{i, j~>i} (x_i - x_j)(x_i - x_j)^T and
df = sum_active [(x_i - x_j)(x_i - x_j)^T - (x_i - x_l)(x_i - x_l)^T]. metric-learn first keeps
the pairs within either point's furthest-target margin (`_find_impostors`); every active pair
lies within it, so the pre-selection does not change the set. The gradient is 2 L (mu dfG +
(1 - mu) df); the push sum is X^T (diag(A 1 + A^T 1) - A - A^T) X for the n x n matrix A of
active-triple counts per ordered pair (i, l), the pull sum weights each (i, j~>i) difference by
the number of its active impostors.

Rounding is where the two differ: D_il comes from the Gram formula on centred data (metric-learn
pre-selects with the Gram formula on raw data, then compares differences), sums are associated
otherwise. A comparison that falls within rounding of its margin can go either way, and the
descent's halving test (objective rises or not) can flip where the change is at rounding level;
on the tested sets the learnt maps agree to 1e-7 relative or better and the iterations match.

The large-data form, `impostors='active_set'` (`ActiveSetObjective`), evaluates the same
objective over an active set of candidate impostors that a pass over all pairs recomputes only
when a certificate can no longer show it complete, and takes its targets from the blocked exact
search (`nearest_targets`): no evaluation visits all n^2 pairs, and no class's n_c x n_c
distances are formed (docs/methods.md, "Large data"; `benchmarks/scale.py`).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.metrics import euclidean_distances

from ..measure.neighbours import euclidean_kneighbors
from .base import LinearMetric
from .baselines import COMPONENTS, POSITIVE_INT, SEED, _limit_components
from .parameters import Array, Interval, Options, require
from .registry import register

#: squared-distance entries per row block of D (and of each array of its size): 2^22 floats,
#: 32 MB, so memory grows with the block, not with n^2
BLOCK_ENTRIES = 1 << 22
#: the active set's candidate impostors of i: the points of other labels within this factor of
#: i's largest margin 1 + max_j D_ij at the refresh (Weinberger & Saul's active set, with room
#: for the map to move before the set must be recomputed)
ACTIVE_SET_SLACK = 1.1
#: relative room for the rounding of squared distances in the active set's certificate
CERTIFICATE_RTOL = 1e-8


def nearest_targets(X: np.ndarray, label_inds: np.ndarray, k: int) -> np.ndarray:
    """The k same-class nearest points of each point (Weinberger & Saul 2009, sect. 3.1) by the
    blocked exact search (`measure.neighbours.euclidean_kneighbors`: ties by (distance, index);
    memory one tile, never a class's n_c x n_c distances): the active-set form's targets."""
    targets = np.empty((X.shape[0], k), dtype=int)
    for label in np.unique(label_inds):
        inds, = np.nonzero(label_inds == label)
        targets[inds] = inds[euclidean_kneighbors(X[inds], X[inds], k, exclude_self=True)[1]]
    return targets


def select_targets(X: np.ndarray, label_inds: np.ndarray, k: int) -> np.ndarray:
    """The k same-class nearest points of each point in the input space (Weinberger & Saul 2009,
    sect. 3.1), with metric-learn 0.7.0's computation (`LMNN._select_targets`: squared distances
    by `euclidean_distances`, ties ordered by `np.argsort`), so ties fall alike."""
    targets = np.empty((X.shape[0], k), dtype=int)
    for label in np.unique(label_inds):
        inds, = np.nonzero(label_inds == label)
        dd = euclidean_distances(X[inds], squared=True)
        np.fill_diagonal(dd, np.inf)
        targets[inds] = inds[np.argsort(dd)[..., :k]]
    return targets


class Objective:
    """metric-learn 0.7.0's LMNN objective and gradient (`_loss_grad`) for fixed data, labels,
    target neighbours and `regularization`; `__call__(L)` returns (gradient, objective,
    total_active) like `_loss_grad`."""

    def __init__(self, X: np.ndarray, label_inds: np.ndarray, targets: np.ndarray,
                 regularization: float):
        # distances from the data as given, as metric-learn takes them (exact ties stay ties);
        # the push sum's Laplacian form from centred data (less cancellation; a shift changes
        # no outer product of a difference)
        self.X = X
        self.X_centred = X - X.mean(axis=0)
        self.labels = np.asarray(label_inds)
        self.targets = targets
        self.reg = float(regularization)
        n, k = targets.shape
        # x_j - x_i for every (i, j~>i), row i * k + j, and metric-learn's dfG from them
        self.pull_diff = (X[targets] - X[:, None, :]).reshape(n * k, -1)
        self.dfG = self.pull_diff.T @ self.pull_diff
        self.block = max(1, BLOCK_ENTRIES // n)

    def __call__(self, L: np.ndarray) -> tuple[np.ndarray, float, int]:
        Lx = np.ascontiguousarray(L.dot(self.X.T).T)  # as metric-learn forms it
        # 1 + D_ij for the k targets (each point's margins), differences taken exactly
        to_targets = Lx[self.targets] - Lx[:, None, :]
        margins = 1.0 + np.einsum("ijk,ijk->ij", to_targets, to_targets)
        pull_weight, push_cols, cross = self._active_triples(L, Lx, margins)
        push_rows = pull_weight.sum(axis=1)
        total_active = int(push_rows.sum())
        Xc = self.X_centred
        # only the (i, j) with active impostors and the points in active triples add terms
        pulled = np.flatnonzero(pull_weight.reshape(-1))
        diffs = self.pull_diff[pulled]
        pull = diffs.T @ (diffs * pull_weight.reshape(-1)[pulled, None])
        pushed = np.flatnonzero(push_rows + push_cols)
        push = ((Xc[pushed].T * (push_rows + push_cols)[pushed]) @ Xc[pushed]
                - cross - cross.T)
        G = L @ (self.dfG * self.reg + (pull - push) * (1.0 - self.reg))
        objective = total_active * (1.0 - self.reg) + G.ravel() @ L.ravel()
        return 2.0 * G, float(objective), total_active

    def accepted(self, L: np.ndarray) -> tuple[np.ndarray, float, int] | None:
        """Called by the descent on the map it has just accepted: the evaluation at L when the
        objective has changed there (a capped active set's new sample), else None."""
        return None

    def _active_triples(self, L: np.ndarray, Lx: np.ndarray, margins: np.ndarray):
        """(pull_weight (n, k): active impostors of each (i, j~>i), push_cols (n): active
        triples with l as impostor, cross = Xc^T A Xc for A = (c_il)) over every ordered pair
        (i, l), one row block of D at a time."""
        from ..solvers import lmnn_compiled  # numba: compiled code, loaded by LMNN fits only

        Xc, labels = self.X_centred, self.labels
        n, k = self.targets.shape
        sq = np.einsum("ij,ij->i", Lx, Lx)
        pull_weight = np.zeros((n, k))
        push_cols = np.zeros(n)
        cross = np.zeros((Xc.shape[1], Xc.shape[1]))
        for start in range(0, n, self.block):
            rows = slice(start, min(start + self.block, n))
            push_X = np.zeros((rows.stop - start, Xc.shape[1]))  # rows of A X
            lmnn_compiled.count_active(Lx[rows] @ Lx.T, Lx[rows], Lx, sq[rows], sq, labels[rows],
                                       labels, margins[rows], Xc, push_X, pull_weight[rows],
                                       push_cols)
            cross += Xc[rows].T @ push_X
        return pull_weight, push_cols, cross


class ActiveSetObjective(Objective):
    """The same objective and gradient as `Objective`, with the impostors searched among an
    active set of candidate pairs, as Weinberger & Saul's own solver does (2008, "Fast solvers and
    efficient implementations for distance metric learning", ICML; 2009, JMLR 10): the
    impostors are checked among an active set between its recomputations over all pairs,
    every few iterations.

    A refresh (one pass over all pairs, each unordered pair once) lists as candidates of i the
    points l of other labels with D_il <= s (1 + max_j D_ij), s = `ACTIVE_SET_SLACK`, at the map
    L0 of the refresh. Between refreshes only the candidates are checked, and the set is
    recomputed when it can no longer be certified complete, so every evaluation equals the
    full one up to rounding: for a pair difference d, |(L - L0) d| <= rho |L0 d| + tau with
    rho = ||(L - L0) L0^+||_2 and tau = ||L P||_2 2 max_i |P (x_i - mean)| (P the projector on
    the null space of L0; tau = 0 for a full-rank square L0), so a pair left out, with
    D0_il > s (1 + max_j D0_ij), has sqrt(D_il) >= sqrt(limit_i) (1 - rho) - tau; when that is at
    least the square root of i's largest margin now, 1 + max_j D_ij, no pair left out of i is an
    impostor. Refreshes take place when the map has moved far enough, every few iterations (at
    a fixed period in the published solver, where impostors found at a recomputation join the
    set: here no evaluation misses one). s = 1.1 was measured best on generated data up to
    16 000 points (fewer candidates per evaluation against fewer refreshes). Memory: the
    candidate list (8 bytes a pair; 16 during a refresh, `_sorted_pairs`) and row blocks of D,
    never an n x n array.

    `max_impostors` caps the set, as PyLMNN's `max_impostors` and the LMNN of scikit-learn's
    pull request 8602 (`max_constraints`) do: a refresh that finds more candidates keeps a
    uniform sample of `max_impostors` of them (`UniformSample`, drawn as the pass goes, so a
    refresh holds at most that many), and every evaluation until the next refresh is the
    objective over the impostors among that sample. A sample is then refreshed only at a map the
    descent has accepted, never within a step's halving, so the step test compares values of
    one function, and only once it has been kept for `resample_after` accepted steps and the
    certificate fails there (`accepted`): the fixed gap between recomputations of Weinberger's
    mLMNN solver (its `correction`, 15 by default), because a refresh is a pass over all pairs
    and the certificate of a moving map fails every few steps; a refresh that finds at most
    `max_impostors` keeps them all and the set stays exact, as without a cap. A deviation from Weinberger & Saul's solver, for
    data whose unit margin covers most pairs of different labels (shuttle min-max scaled: about
    3.4e8 candidates, 26 ns each per evaluation): the push term sees a sample of the impostors,
    the pull term all targets. None (the default): no cap, every evaluation exact."""

    def __init__(self, X: np.ndarray, label_inds: np.ndarray, targets: np.ndarray,
                 regularization: float, max_impostors: int | None = None,
                 random_state: int | None = None, resample_after: int = 15):
        super().__init__(X, label_inds, targets, regularization)
        self.pairs: tuple[np.ndarray, np.ndarray] | None = None
        self.max_impostors, self.resample_after = max_impostors, resample_after
        self.kept_for = 0  # accepted steps since the last refresh
        self.rng = np.random.default_rng(random_state)
        self.sampled = False  # the last refresh kept a sample of its candidates
        self.evaluations, self.refreshes, self.largest_set, self.largest_sample = 0, 0, 0, 0

    def _active_triples(self, L, Lx, margins):
        from ..solvers import lmnn_compiled  # numba: compiled code, loaded by LMNN fits only

        self.evaluations += 1
        if self.pairs is None or (not self.sampled and not self._certified(L, margins)):
            self._refresh(L, Lx, margins)
        Xc = self.X_centred
        n, k = self.targets.shape
        push_X = np.zeros_like(Xc)
        pull_weight = np.zeros((n, k))
        push_cols = np.zeros(n)
        lmnn_compiled.count_active_pairs(*self.pairs, Lx, margins, Xc, push_X, pull_weight,
                                         push_cols)
        rows = np.flatnonzero(pull_weight.sum(axis=1))  # the points with an active impostor
        return pull_weight, push_cols, Xc[rows].T @ push_X[rows]

    def accepted(self, L: np.ndarray) -> tuple[np.ndarray, float, int] | None:
        """A set that is a sample draws its next one only at a map the descent has accepted,
        once the certificate fails there (a refresh within a step's halving would make the step
        test compare two functions), once it has been kept for `resample_after` accepted steps
        and the certificate fails there: the evaluation at L after the refresh, else None."""
        self.kept_for += 1
        if not self.sampled or self.kept_for < self.resample_after:
            return None
        Lx = L.dot(self.X.T).T
        to_targets = Lx[self.targets] - Lx[:, None, :]
        if self._certified(L, 1.0 + np.einsum("ijk,ijk->ij", to_targets, to_targets)):
            return None
        self.pairs = None
        return self(L)

    def _refresh(self, L: np.ndarray, Lx: np.ndarray, margins: np.ndarray) -> None:
        """Candidates of every i at the map L, in one pass over the upper triangle of D."""
        from ..solvers import lmnn_compiled  # numba: compiled code, loaded by LMNN fits only

        n = Lx.shape[0]
        sq = np.einsum("ij,ij->i", Lx, Lx)
        self.limit = ACTIVE_SET_SLACK * margins.max(axis=1)
        blocks, sample, found = [], UniformSample(self.max_impostors, self.rng), 0
        start = 0
        while start < n:
            stop = min(n, start + max(1, BLOCK_ENTRIES // (n - start)))
            block = lmnn_compiled.impostor_candidates(Lx[start:stop] @ Lx[start:].T, start, sq,
                                                      self.labels, self.limit)
            found += block.size
            if self.max_impostors is None:
                blocks.append(block)
            else:
                sample.add(block)
            start = stop
        self.sampled = self.max_impostors is not None and found > self.max_impostors
        self.pairs = _sorted_pairs(blocks if self.max_impostors is None else [sample.keys], n)
        self.refreshes += 1
        self.kept_for = 0
        self.largest_set = max(self.largest_set, found)
        self.largest_sample = max(self.largest_sample, self.pairs[0].size)
        self.L0 = L.copy()
        self.L0_pinv = np.linalg.pinv(L)
        null = np.eye(L.shape[1]) - self.L0_pinv @ L
        singular = np.linalg.svd(L, compute_uv=False)
        full_rank = (L.shape[0] >= L.shape[1]
                     and singular[-1] > L.shape[1] * np.finfo(float).eps * singular[0])
        self.null = None if full_rank else null
        if self.null is not None:
            self.null_reach = 2.0 * np.linalg.norm(self.X_centred @ null.T, axis=1).max()

    def _certified(self, L: np.ndarray, margins: np.ndarray) -> bool:
        """Whether no pair left out of the candidates can be an impostor at L (see the class)."""
        rho = np.linalg.norm((L - self.L0) @ self.L0_pinv, 2)
        tau = 0.0 if self.null is None else np.linalg.norm(L @ self.null, 2) * self.null_reach
        reach = np.sqrt(self.limit) * (1.0 - rho) - tau
        return bool(rho < 1.0 and np.all(reach > 0.0)
                    and np.all(reach * reach >= margins.max(axis=1) * (1.0 + CERTIFICATE_RTOL)))


class UniformSample:
    """A uniform sample without replacement of at most `size` keys from the blocks `add`ed
    (`keys`, in no order), held in `size` keys at most: each key draws a uniform priority and
    the `size` smallest priorities stay (a bottom-k sample: every subset of `size` keys equally
    likely, however the keys come in blocks). Once it is full, a key whose priority is not below
    the largest kept one cannot enter and is dropped before the selection, so a block costs its
    draws and the few keys that enter, not a selection over the sample's size."""

    def __init__(self, size: int | None, rng: np.random.Generator):
        self.size, self.rng = size, rng
        self.keys, self.priorities = np.empty(0, dtype=np.int64), np.empty(0)
        self.threshold = np.inf  # the largest kept priority once the sample is full

    def add(self, block: np.ndarray) -> None:
        priorities = self.rng.random(block.size)
        if self.threshold < np.inf:
            entering = priorities < self.threshold
            block, priorities = block[entering], priorities[entering]
        keys = np.concatenate([self.keys, block])
        priorities = np.concatenate([self.priorities, priorities])
        if keys.size > self.size:
            kept = np.argpartition(priorities, self.size - 1)[:self.size]
            keys, priorities = keys[kept], priorities[kept]
            self.threshold = priorities.max()
        self.keys, self.priorities = keys, priorities


def _sorted_pairs(blocks: list[np.ndarray], n: int) -> tuple[np.ndarray, np.ndarray]:
    """The candidate keys i n + l of `blocks` (emptied as they are copied) as (first, second)
    int32 arrays ordered by point, then impostor (the keys sorted in place): at most 16 bytes a
    pair at once, where int64 index arrays ordered by `np.lexsort` took 40 (shuttle whole,
    about 3.4e8 pairs: a 13.9 GB peak)."""
    from ..solvers import lmnn_compiled  # numba: compiled code, loaded by LMNN fits only

    keys = np.empty(sum(block.size for block in blocks), dtype=np.int64)
    at = 0
    while blocks:
        block = blocks.pop(0)
        keys[at:at + block.size] = block
        at += block.size
    keys.sort()
    first = np.empty(keys.size, dtype=np.int32)
    second = np.empty(keys.size, dtype=np.int32)
    lmnn_compiled.split_keys(keys, n, first, second)
    return first, second


def lmnn_fit(objective: Objective, L: np.ndarray, learn_rate: float, max_iter: int,
             min_iter: int, convergence_tol: float) -> tuple[np.ndarray, int]:
    """metric-learn 0.7.0's descent (`LMNN.fit`) from L: evaluate at L (iteration 1); then for
    it = 2, ..., max_iter - 1 try L - learn_rate G, halving learn_rate while the objective
    rises, accept the step and multiply learn_rate by 1.01; stop after iteration it when
    it > min_iter and |change of the objective| < convergence_tol. Returns the final L and
    metric-learn's `n_iter_` (that last it; 1 when max_iter <= 2). An objective that changes at
    an accepted L (`Objective.accepted`: a capped active set's new sample) is evaluated there
    anew before the next step."""
    G, value, _ = objective(L)
    it = 1
    for it in range(2, max_iter):
        while True:
            if np.isnan(value):  # metric-learn asserts it here
                raise ValueError("lmnn: the objective became NaN (the descent diverged); "
                                 "lower learn_rate")
            L_next = L - learn_rate * G
            G_next, value_next, _ = objective(L_next)
            delta = value_next - value
            if delta > 0:
                learn_rate /= 2
            else:
                break
        L, G, value = L_next, G_next, value_next
        changed = objective.accepted(L)
        if changed is not None:
            G, value, _ = changed
        learn_rate *= 1.01
        if it > min_iter and abs(delta) < convergence_tol:
            break
    return L, it


@register("lmnn")
class LMNN(LinearMetric):
    """Large-margin nearest neighbour (Weinberger & Saul 2009): metric-learn 0.7.0's `LMNN`
    algorithm re-implemented (`Objective`, `lmnn_fit`), equal to rounding: its initialisation
    (metric-learn's `_initialize_components`), target neighbours, objective (eq. (13) with the
    hinge of eq. (14)), gradient, step rule and stopping test.

    `impostors='active_set'` is the large-data form (Weinberger & Saul 2008, 2009: an active
    set of impostors, recomputed every few iterations; `ActiveSetObjective`): the same
    objective, gradient and descent, each evaluation over the candidate impostors of the last
    refresh, which a certificate shows to hold every active triple, and the target neighbours
    from the blocked exact search (`nearest_targets`, ties by index) instead of a class's dense
    distance matrix. On the same targets it follows the default form's descent to rounding.

    A class with at most `n_neighbors` training points (metric-learn refuses it) gets as many
    target neighbours as it has other points: the whole fit uses min(n_neighbors, smallest
    class - 1), recorded as `target_neighbors` (a deviation, e.g. lymphography's fibrosis class
    with 3 training points in some folds).

    Parameters
    ----------
    n_neighbors : int, default=3
        Target neighbours per training point (same-class nearest points, Weinberger & Saul 2009,
        sect. 3.1); a class with fewer other points gets them all (`target_neighbors_`).
    learn_rate : float, default=1e-07
        Initial step size of the gradient descent (halved while a step raises the objective,
        then multiplied by 1.01 per iteration).
    regularization : float, default=0.5
        Weight mu in [0, 1] of the push term against the pull term (Weinberger & Saul 2009, eq.
        13; 0.5 gives both the same weight).
    max_iter : int, default=1000
        Iteration cap of the gradient descent.
    min_iter : int, default=50
        Iterations before the convergence test applies.
    convergence_tol : float, default=0.001
        Stop (after `min_iter`) when an iteration changes the objective by less than this
        (absolute change, as metric-learn tests it).
    init : str or array of shape (r, D), default='auto'
        Starting map L: 'auto' (picks by the data's shape), 'pca', 'lda', 'identity', 'random'
        (metric-learn's choices) or an array.
    n_components : int or None, default=None
        Rank r of the learnt map L (r x D); None: full rank.
    random_state : int or None, default=None
        Seeds the method's random draws (the workflow sets it per split when the config leaves
        it out: seed x 10000 + split).
    impostors : {'all', 'active_set'}, default='all'
        'all': every pair checked at every evaluation, targets as metric-learn selects them
        (its dense per-class distances; O(n^2) per evaluation); 'active_set': the large-data
        form (Weinberger & Saul's active set of impostors), see above.
    max_impostors : int or None, default=None
        With `impostors='active_set'` only: at most this many candidate impostor pairs per
        refresh, a uniform sample (drawn with `random_state`) when a refresh finds more
        (`ActiveSetObjective`; PyLMNN's `max_impostors`); None: all of them.
    resample_after : int, default=15
        With `max_impostors`: accepted descent steps a sample is kept before it may be drawn
        anew (when its certificate fails; mLMNN's `correction`, 15). Ignored without a cap.

    Attributes
    ----------
    components_ : ndarray of shape (r, D)
        The learnt map L: d(x, y) = ||L x - L y||.
    embedding_ : ndarray of shape (n, r)
        The training points mapped, L x_i (what queries are searched against).
    n_features_in_ : int
        Features D seen by `fit`.
    target_neighbors_ : int
        Target neighbours used: min(n_neighbors, smallest class - 1).
    n_iter_ : int
        Iterations run, counted as metric-learn counts them (the evaluation at the start is
        iteration 1; max_iter - 1 when the fit stopped at `max_iter`).
    """

    papers = ("am17", "sh17")
    _parameter_constraints = {
        "n_neighbors": [POSITIVE_INT], "learn_rate": [Interval(Real, 0, None, closed="neither")],
        "regularization": [Interval(Real, 0, 1)], "max_iter": [POSITIVE_INT],
        "min_iter": [Interval(Integral, 0, None)],
        "convergence_tol": [Interval(Real, 0, None)],
        "init": [Options(("auto", "pca", "lda", "identity", "random")), Array()],
        "n_components": COMPONENTS, "random_state": SEED,
        "impostors": [Options(("all", "active_set"))],
        "max_impostors": [POSITIVE_INT, None], "resample_after": [POSITIVE_INT],
    }

    def __init__(self, n_neighbors=3, learn_rate=1e-7, regularization=0.5, max_iter=1000,
                 min_iter=50, convergence_tol=1e-3, init="auto", n_components=None,
                 random_state=None, impostors="all", max_impostors=None, resample_after=15):
        self.n_neighbors = n_neighbors
        self.learn_rate = learn_rate
        self.regularization = regularization
        self.max_iter = max_iter
        self.min_iter = min_iter
        self.convergence_tol = convergence_tol
        self.init = init
        self.n_components = n_components
        self.random_state = random_state
        self.impostors = impostors
        self.max_impostors = max_impostors
        self.resample_after = resample_after

    @classmethod
    def check_parameters(cls, params):
        super().check_parameters(params)
        params = cls.with_defaults(params)
        require("max_impostors",
                params["max_impostors"] is None or params["impostors"] == "active_set",
                f"max_impostors = {params['max_impostors']} caps the active set of impostors: "
                f"it needs impostors = 'active_set', not {params['impostors']!r}")

    @classmethod
    def check_data_limits(cls, params, n_train, d, n_classes):
        _limit_components(params, d)
        n = params["n_neighbors"]
        require("n_neighbors", n <= n_train - 1, f"n_neighbors = {n} target neighbours need "
                f"more than n_train = {n_train} training points (at most {n_train - 1})")

    def _learn_components(self, X, y):
        # metric-learn's initialisation, as its `LMNN.fit` calls it (metric-learn is imported
        # by the fits that use it: its import takes seconds)
        from metric_learn._util import _check_n_components, _initialize_components

        labels, label_inds, counts = np.unique(y, return_inverse=True, return_counts=True)
        smallest = int(counts.min())
        if smallest < 2:
            raise ValueError(f"lmnn: class {labels[counts.argmin()]!r} has one training point, so "
                             "it has no target neighbour; drop it (the data set's "
                             "`drop_classes_below`)")
        self.target_neighbors_ = min(int(self.n_neighbors), smallest - 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=FutureWarning)
            warnings.simplefilter("ignore", category=DeprecationWarning)
            try:
                L = _initialize_components(_check_n_components(X.shape[1], self.n_components),
                                           X, y, self.init, False,
                                           random_state=self.random_state)
            except (ValueError, IndexError) as err:
                raise ValueError(f"lmnn: metric-learn's initialisation failed: {err}") from err
        if self.impostors == "active_set":
            objective = ActiveSetObjective(
                X, label_inds, nearest_targets(X, label_inds, self.target_neighbors_),
                self.regularization, self.max_impostors, self.random_state,
                self.resample_after)
        else:
            objective = Objective(X, label_inds,
                                  select_targets(X, label_inds, self.target_neighbors_),
                                  self.regularization)
        L, self.n_iter_ = lmnn_fit(objective, np.asarray(L, dtype=float), self.learn_rate,
                                   self.max_iter, self.min_iter, self.convergence_tol)
        self._objective = objective
        return L

    def fit_info(self) -> dict:
        form = f"impostors={self.impostors}"
        if self.max_impostors is not None:
            form += (f", max_impostors={self.max_impostors}, "
                     f"resample_after={self.resample_after}")
        info = {"target_neighbors": self.target_neighbors_, "scale_form": form}
        if isinstance(self._objective, ActiveSetObjective):
            info.update(evaluations=self._objective.evaluations,
                        impostor_refreshes=self._objective.refreshes,
                        impostor_candidates_max=self._objective.largest_set)
            if self.max_impostors is not None:
                info["impostor_sample_max"] = self._objective.largest_sample
        return info

"""Leave-one-out in one pass: every split of a leave-one-out job answered from one search over
all points, with the records the per-split path writes (apart from timings).

Under leave-one-out over the points S (the data set, less the classes a class filter drops),
split i tests point i on the training part S \\ {i}, in data-set order. The per-split path
(`run.job.run_split`) preprocesses, fits and searches n - 1 points n times: on DEXTER (300 x
7751) with a hubness reduction, n searches of all 299 x 298 pairs. The shortcut applies when
(`applies`):

1. the method learns nothing from its training part (`learns_from_training = False`: the
   Euclidean metric): its search vectors of a point are a fixed function of that point alone,
   computed row by row, so the method fitted once on S gives each point the vector every split's
   fit gives it, and its distance is Euclidean between them (`search_vectors`);
2. every preprocessing step works row by row and fits nothing (`preprocessing.fits_nothing`:
   `normalize`, the image steps, or none). A step fitted on the training part (center, zscore,
   minmax, pca) changes with the held-out point, so those jobs run split by split: fitting it
   once on S would be another protocol (the test point inside the fit), which no config key
   offers;
3. no dimension sweep (it searches each prefix of the coordinates again), and a hubness
   reduction, if any, on the method's own distance (`distance: cosine` searches unit vectors of
   its own);
4. the data are dense (sparse data need a PCA, fitted per split).

Then the distance of two points is the same number in every split (the search sums the squared
differences in coordinate order, `measure.neighbours`), and a split's training indices keep the
data-set order, so (distance, training index) orders as (distance, data-set index). With L(j)
point j's nearest among S \\ {j} from one search (`euclidean_kneighbors(V, V, W,
exclude_self=True)`, W the deepest list any split asks, plus one):

- the held-out point i's nearest training points are the head of L(i);
- training point j's leave-one-out list in split i is L(j) without i;
- so the hubness reductions (`measure.hubness_reduction`), computed from these lists by the
  same code, are those of the per-split definition; DisSim's spread of training point j in
  split i is its spread over S unless i is among j's k nearest, else it is recomputed from
  L(j) without i (`local_spreads` gives each row the same bits whatever rows come with it).

Each split then runs the per-split code (`evaluate`, `records.build`) on `HeldOut`, the split's
view of the method fitted on S, so its record is the per-split path's (the tests compare them,
ties included). Its timings carry its share of the pass (`one_pass_wall_s`, `one_pass_cpu_s`:
the pass over the number of splits, so the job's times still add up), and its peak memory is
the larger of the pass's and its own.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .. import vocabulary as voc
from ..measure.evaluation import PeakMemory, neighbour_depths, stopwatch
from ..measure.hubness_reduction import local_spreads
from ..measure.neighbours import euclidean_kneighbors
from ..methods.base import KNeighborsMethod
from ..methods.hubness_reduced import HubnessReduced
from . import preprocessing, protocols, resources

#: the timing phase of the pass (each split's record carries its share)
PHASE = "one_pass"


def applies(spec: dict, method: KNeighborsMethod) -> bool:
    """Whether the job of `spec`, with its method `method`, may run in one pass (conditions 1-3
    of the module docstring; the data are checked by `prepare`)."""
    cls = type(method)
    reduction = spec["hubness_reduction"]
    return (spec["protocol"]["kind"] == "loo"
            and not cls.learns_from_training and not cls.predicts_only
            and cls.search_vectors is not KNeighborsMethod.search_vectors
            and preprocessing.fits_nothing(spec["preprocess"])
            and not spec["dimension_sweep"]
            and (reduction is None or reduction["distance"] == "euclidean"))


def prepare(spec: dict, dataset, method: KNeighborsMethod, threads: int) -> OnePass | None:
    """The pass of a job (its preprocessing, fit and search over all points, timed), or None
    when the job runs split by split (`applies`, dense data)."""
    if sp.issparse(dataset.X) or not applies(spec, method):
        return None
    try:
        return OnePass(spec, dataset, method, threads)
    except ValueError as err:
        name, label = spec["dataset"]["name"], spec["dataset"]["label"]
        where = label if name == label else f"{label} ({name})"
        raise ValueError(f"method '{spec['method']['label']}' on data set '{where}', "
                         f"leave-one-out pass over all splits: {err}") from err


class OnePass:
    """One search over the points S of a leave-one-out job and what each split needs of it."""

    def __init__(self, spec: dict, dataset, method: KNeighborsMethod, threads: int):
        first, _ = protocols.load_split(spec["split_file"], spec["splits"][0])
        self.points = np.sort(np.concatenate([first.train, first.test]))
        self.n_train = self.points.size - 1
        self.n_splits = len(spec["splits"])
        self.split_file = spec["split_file"]
        reduction = spec["hubness_reduction"]
        self.timings: dict = {}
        with PeakMemory(self.timings), resources.limit_threads(threads), \
                stopwatch(self.timings, PHASE):
            self.features, _, self.pre_info = preprocessing.fit_transform_rows(
                spec["preprocess"], dataset.X, self.points, self.points[:1])
            self.method = method.fit(self.features, dataset.y[self.points])
            method.check_finite()
            self.vectors = method.search_vectors()[1]
            width = min(self.n_train, self.depth(spec, method))
            self.dist, self.ind = euclidean_kneighbors(self.vectors, self.vectors, width,
                                                       exclude_self=True)
            self.spreads = self.near = self._buffer = None
            if reduction is not None and reduction["kind"] == "dissim_local" \
                    and reduction["k"] < width:
                self.spread_k = k = reduction["k"]
                self.spreads = local_spreads(self.vectors, self.vectors, self.ind[:, :k])
                # near[p]: the points with p among their k nearest (their spread changes when
                # p is held out)
                rows = np.repeat(np.arange(self.points.size), k)
                order = np.argsort(self.ind[:, :k].ravel(), kind="stable")
                starts = np.searchsorted(self.ind[:, :k].ravel()[order],
                                         np.arange(self.points.size + 1))
                self.near = (rows[order], starts)

    def depth(self, spec: dict, method: KNeighborsMethod) -> int:
        """One more than the deepest list a split asks of the method: the evaluation's depth,
        the training points' leave-one-out depth, and a reduction's widths (DisSim's k), the
        training points' plus the one the held-out point takes from them."""
        own_k = method.selected_k if spec["k_selection"] == "loo" else None
        depth, loo_depth = neighbour_depths(spec["k"], spec["hubness_k"], spec["k_selection"],
                                            spec["train_hubness"], own_k)
        reduction = spec["hubness_reduction"]
        if reduction is not None:
            wrapper = HubnessReduced.from_settings(method, reduction)
            depth, loo_depth = wrapper.widths(self.n_train)
            loo_depth = max(loo_depth, reduction.get("k") or 0)
        return max(depth, loo_depth + 1)

    # ---- one split ------------------------------------------------------------------------
    def position(self, split) -> int:
        """The held-out point's position in S; `ValueError` if the split is not S with one
        point held out (a split file made for another protocol)."""
        p = int(np.searchsorted(self.points, split.test[0])) if split.test.size == 1 else -1
        if not (0 <= p < self.points.size and self.points[p] == split.test[0]
                and np.array_equal(split.train, np.delete(self.points, p))):
            raise ValueError(f"split {split.index} of {self.split_file} does not hold out one "
                             "point of the others: not a leave-one-out split file")
        return p

    def rows(self, split) -> tuple[np.ndarray, np.ndarray, dict]:
        """(training part, test part, preprocessing info) of a split: the test part is the
        held-out point's preprocessed row; the training part a read-only stand-in of its shape
        (`HeldOut.fit` reads no row: the pass holds them)."""
        p = self.position(split)
        test = self.features[p:p + 1]
        return (np.broadcast_to(test, (self.n_train, test.shape[1])), test,
                dict(self.pre_info))

    def estimator(self, split, reduction: dict | None) -> tuple[KNeighborsMethod, dict]:
        """The split's method (`HeldOut`, wrapped in its hubness reduction if any) and the
        parameters of its `fit` (DisSim's spreads of the training points)."""
        view = HeldOut.of(self, self.position(split))
        if reduction is None:
            return view, {}
        fit_params = {} if self.spreads is None else {
            "spread_train": self.training_spreads(view.position_)}
        return HubnessReduced.from_settings(view, reduction), fit_params

    def account(self, timings: dict) -> None:
        """Add the split's share of the pass to its timings, and the pass's peak memory."""
        for phase in (voc.wall_seconds(PHASE), voc.cpu_seconds(PHASE)):
            timings[phase] = self.timings[phase] / self.n_splits
        for name in (voc.PEAK_RSS_MB, voc.PEAK_RSS_DELTA_MB):
            timings[name] = max(timings[name], self.timings[name])

    # ---- the lists of a split, in its training indices ---------------------------------------
    def test_lists(self, p: int, n_neighbors: int) -> tuple[np.ndarray, np.ndarray]:
        """The held-out point's `n_neighbors` nearest training points."""
        _check_depth(n_neighbors, self.n_train, self.dist.shape[1])
        ind = self.ind[p:p + 1, :n_neighbors]
        return self.dist[p:p + 1, :n_neighbors].copy(), ind - (ind > p)

    def train_lists(self, p: int, n_neighbors: int) -> tuple[np.ndarray, np.ndarray]:
        """Each training point's `n_neighbors` nearest other training points: its list over S
        without the held-out point p."""
        _check_depth(n_neighbors, self.n_train - 1, self.dist.shape[1] - 1)
        rows = np.delete(np.arange(self.points.size), p)
        dist = self.dist[rows, :n_neighbors + 1]
        ind = self.ind[rows, :n_neighbors + 1]
        hit = ind == p
        keep = np.ones(ind.shape, dtype=bool)
        keep[np.arange(rows.size), np.where(hit.any(axis=1), hit.argmax(axis=1),
                                            n_neighbors)] = False
        ind = ind[keep].reshape(rows.size, n_neighbors)
        return dist[keep].reshape(rows.size, n_neighbors), ind - (ind > p)

    def training_vectors(self, p: int) -> np.ndarray:
        """The training points' search vectors (all but the held-out point's), read-only. One
        buffer serves the splits in turn: going from held-out point h to p copies the rows
        between them (one row from a split to the next), not all n - 1; so a split's vectors
        are valid until the next split asks for its own (splits run one after the other)."""
        if self._buffer is None:
            self._buffer, self._held = np.delete(self.vectors, p, axis=0), p
        h, buffer = self._held, self._buffer
        buffer.flags.writeable = True
        if p > h:  # rows h .. p-1 now precede the held-out point
            buffer[h:p] = self.vectors[h:p]
        elif p < h:  # rows p .. h-1 now follow it
            buffer[p:h] = self.vectors[p + 1:h + 1]
        buffer.flags.writeable = False
        self._held = p
        return buffer

    def training_spreads(self, p: int) -> np.ndarray:
        """DisSim's `local_spreads` of the training points with p held out: their spreads over
        S, recomputed for the points with p among their k nearest (from their k nearest without
        p)."""
        k = self.spread_k
        rows, starts = self.near
        changed = rows[starts[p]:starts[p + 1]]
        spreads = self.spreads.copy()
        if changed.size:
            lists = self.ind[changed, :k + 1]
            near = lists[lists != p].reshape(changed.size, k)
            spreads[changed] = local_spreads(self.vectors[changed], self.vectors, near)
        return np.delete(spreads, p)


def _check_depth(n_neighbors: int, limit: int, prepared: int) -> None:
    """The search's own message for a depth beyond the points; an internal error for one beyond
    what the pass prepared."""
    if not 1 <= n_neighbors <= limit:
        raise ValueError(f"n_neighbors must be in [1, {limit}] for {limit + 1} points, got "
                         f"{n_neighbors}")
    if n_neighbors > prepared:
        raise RuntimeError(f"the leave-one-out pass prepared lists of {prepared} neighbours, "
                           f"{n_neighbors} were asked")


class HeldOut(KNeighborsMethod):
    """A split's method in the one pass: the method fitted on all the points S, with one point
    held out. Its neighbour hooks answer from the pass's lists, in the split's training indices;
    every other hook is the fitted method's. Made by `HeldOut.of`."""

    def __init__(self):
        """No parameters: `of` makes the view of a split."""

    @classmethod
    def of(cls, one_pass: OnePass, position: int) -> HeldOut:
        view = cls()
        view.one_pass_, view.position_ = one_pass, position
        view.labelled_ = None
        return view

    def fit(self, X, y):
        """Nothing to learn (the pass fitted the method on S); `X` stands in for the training
        part: its shape is checked, no row is read."""
        if np.shape(X)[0] != self.one_pass_.n_train or np.shape(y)[0] != np.shape(X)[0]:
            raise ValueError(f"the held-out view has {self.one_pass_.n_train} training points, "
                             f"got X {np.shape(X)}, y {np.shape(y)}")
        return self

    def kneighbors(self, X, n_neighbors: int, progress: bool = False):
        if np.shape(X)[0] != 1:
            raise ValueError(f"the held-out view answers its held-out point, got {len(X)} queries")
        return self.one_pass_.test_lists(self.position_, n_neighbors)

    def train_kneighbors(self, n_neighbors: int):
        return self.one_pass_.train_lists(self.position_, n_neighbors)

    def search_vectors(self, X=None):
        if self.labelled_ is None:
            self.labelled_ = self.one_pass_.training_vectors(self.position_)
        if X is None:
            return self.labelled_, self.labelled_
        return self.one_pass_.method.search_vectors(X)[0], self.labelled_

    # ---- the fitted method's --------------------------------------------------------------
    @property
    def family(self) -> str:
        return self.one_pass_.method.family

    @property
    def kind(self) -> str:
        return self.one_pass_.method.kind

    @property
    def papers(self) -> tuple[str, ...]:
        return self.one_pass_.method.papers

    @property
    def selected_k(self) -> int | None:
        return self.one_pass_.method.selected_k

    def extra_metrics(self, X_test, y_test) -> dict:
        return self.one_pass_.method.extra_metrics(X_test, y_test)

    def check_finite(self) -> None:
        self.one_pass_.method.check_finite()

    def fit_info(self) -> dict:
        return self.one_pass_.method.fit_info()

    def artifacts(self, X_test, y_test) -> dict[str, np.ndarray]:
        return self.one_pass_.method.artifacts(X_test, y_test)

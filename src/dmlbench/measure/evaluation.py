"""Evaluation of a fitted method on a test part: k-NN accuracy for several k, hubness, timings.

It calls the method's hooks (the method contract, `dmlbench.methods.base`) and imports no
method; what they return is checked against the contract first (`measure.contract`:
`neighbour_lists`, `predictions`), so a non-finite distance, a repeated or out-of-range index, a
list of the wrong shape or a label the training set does not have fails the job. Voting is
deterministic (`knn_rule`): neighbours come ordered by (distance, training index) and a tie
between classes goes to the smallest class label, as scikit-learn's KNeighborsClassifier does.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager

import numpy as np
import psutil

from .. import vocabulary as voc
from . import contract, hubness
from .knn_rule import accuracy_per_k, knn_vote
from .neighbours import MAX_BLOCK_BYTES, chunk_rows, smallest_k

#: how the test-time k is chosen: not at all (report every k), or on the training part
K_SELECTIONS = ("none", "loo")


@contextmanager
def stopwatch(into: dict, prefix: str):
    """Record wall and CPU seconds of the block as `<prefix>_wall_s` and `<prefix>_cpu_s`."""
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        yield
    finally:
        into[voc.wall_seconds(prefix)] = time.perf_counter() - wall
        into[voc.cpu_seconds(prefix)] = time.process_time() - cpu


def _reset_peak_rss() -> bool:
    """Reset the kernel's peak-RSS mark of this process (Linux >= 4.0); False if impossible."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _kernel_peak_rss() -> int | None:
    """This process's peak resident memory since the last reset (VmHWM), in bytes."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


class PeakMemory:
    """Peak resident memory of this process while the block runs.

    Records `peak_rss_mb` (the largest RSS, MiB) and `peak_rss_delta_mb` (its rise over the
    RSS at the start, i.e. what the block added). On Linux the kernel's own high-water mark
    (VmHWM, reset at the start through /proc/self/clear_refs) makes it exact; elsewhere the RSS
    is sampled every `interval` s, which misses spikes shorter than the interval.
    """

    def __init__(self, into: dict, interval: float = 0.005):
        self.into, self.interval = into, interval
        self._process = psutil.Process()
        self._stop = threading.Event()
        self._thread = None

    def _sample(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self._process.memory_info().rss)
            self._stop.wait(self.interval)

    def __enter__(self):
        self.start = self.peak = self._process.memory_info().rss
        if not (_reset_peak_rss() and _kernel_peak_rss() is not None):
            self._thread = threading.Thread(target=self._sample, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
        else:
            self.peak = max(self.peak, _kernel_peak_rss())
        self.peak = max(self.peak, self._process.memory_info().rss)
        self.into[voc.PEAK_RSS_MB] = self.peak / 2**20
        self.into[voc.PEAK_RSS_DELTA_MB] = (self.peak - self.start) / 2**20


def dimension_sweep(Z_test: np.ndarray, Z_train: np.ndarray, y_train: np.ndarray,
                    y_test: np.ndarray, ks: list[int],
                    max_bytes: int = MAX_BLOCK_BYTES) -> dict[int, list[float]]:
    """k-NN accuracy using only the first r mapped coordinates, for r = 1 .. R (the columns of
    Z): the evaluation of Chang 2012, section 4 ("the dimensionality of the mapped vector was
    augmented from one to the theoretical limit of the method with increments of one").

    Squared distances are accumulated one coordinate at a time, so the whole sweep costs about
    as much as R searches in one dimension; memory is one (chunk x n_train) block. Neighbours are
    ordered by (distance, training index) and votes tie to the smallest label, as in `evaluate`:
    the squares are summed in coordinate order as `neighbours.paired_sq_distances` does, so at
    r = R the lists are those of the full search, and no value depends on the chunk.
    """
    n_train, n_dims = Z_train.shape
    n_classes = int(max(y_train.max(), y_test.max())) + 1
    k_max = max(ks)
    correct = np.zeros((len(ks), n_dims))
    step = chunk_rows(n_train, max_bytes // 4)
    for start in range(0, Z_test.shape[0], step):
        q, truth = Z_test[start:start + step], y_test[start:start + step]
        D = np.zeros((q.shape[0], n_train))
        dist = np.empty_like(D)
        for r in range(n_dims):
            diff = q[:, r, None] - Z_train[None, :, r]
            D += diff * diff
            ind = smallest_k(np.sqrt(D, out=dist), k_max)
            for a, k in enumerate(ks):
                correct[a, r] += np.count_nonzero(knn_vote(y_train[ind[:, :k]], n_classes) == truth)
    return {k: (correct[a] / y_test.size).tolist() for a, k in enumerate(ks)}


def sweep_metrics(embeddings: tuple[np.ndarray, np.ndarray], y_train: np.ndarray,
                  y_test: np.ndarray, ks: list[int]) -> dict:
    """The dimension sweep of a fitted linear metric (its `sweep_embeddings`: columns in the
    order of its components): per k the curve `sweep_accuracy_k<k>` (position r-1 = first r
    components), its best value `sweep_best_accuracy_k<k>` and the smallest dimensionality
    reaching it, `sweep_best_dim_k<k>` (the paper's "most effective dimensionality"), and
    `sweep_dims`."""
    Z_test, Z_train = embeddings
    curves = dimension_sweep(Z_test, Z_train, y_train, y_test, ks)
    out: dict = {voc.SWEEP_DIMS: float(Z_train.shape[1])}
    for k, curve in curves.items():
        out[voc.sweep_accuracy(k)] = curve
        out[voc.sweep_best_accuracy(k)] = float(max(curve))
        out[voc.sweep_best_dim(k)] = float(int(np.argmax(curve)) + 1)
    return out


def neighbour_depths(ks, hubness_k: int, k_selection: str = "none", train_hubness: bool = False,
                     own_k: int | None = None) -> tuple[int, int]:
    """(depth, loo_depth): the neighbours `evaluate` asks of each test query, at most the n_train
    training points, and of each training point among the others (leave-one-out, for
    `k_selection` and `train_hubness`; 0 when neither), at most n_train - 1. `own_k` is the k a
    method chose itself. A method that `predicts_only` is asked for none."""
    depth = max(max(ks), hubness_k, own_k or 0)
    loo_depth = max(max(ks) if k_selection != "none" else 0, hubness_k if train_hubness else 0)
    return depth, loo_depth


def evaluate(est, X_test: np.ndarray, y_train: np.ndarray, y_test: np.ndarray, ks: list[int],
             hubness_k: int, timings: dict, progress: bool = False, k_selection: str = "none",
             train_hubness: bool = False, sweep: bool = False,
             neighbours: dict | None = None) -> dict[str, float]:
    """Metrics of a fitted method `est` on (X_test, y_test); fills `timings` with predict times.

    Metrics: `accuracy_k<k>` and `error_k<k>` for each k, the hubness measures of the training
    (labelled) points in the test queries' `hubness_k`-NN lists and the histogram of their
    N_k (curve `nk_hist_n<k>`: entry m = number of training points with N_k = m). A method may
    add its own numbers through `extra_metrics(X_test, y_test) -> dict` (e.g. the NCA rule's
    accuracy; a list of numbers is a curve, e.g. accuracy per mapped dimension, see
    `records.split_curves`); a method that `predicts_only` (a `Classifier`) is evaluated through
    `predict(X_test, k)` only.

    The hooks used are those of `dmlbench.methods.base.KNeighborsMethod`: the k-NN rule with k
    votes uses list k of `kneighbors_per_k` (a method whose list depends on k, e.g. RMVEM's
    neighbourhood size per k, overrides it), and hubness is measured on the list of the
    smallest k.

    `k_selection="loo"` chooses the test-time k (`select_k`) and adds `selected_k`,
    `accuracy_kcv`, `error_kcv` and the leave-one-out training accuracies `loo_accuracy_k<k>`.
    `train_hubness=True` adds the hubness of the training set itself (`train_<measure>` and the
    curve `train_nk_hist_n<k>`): each training point's leave-one-out `hubness_k` neighbours.
    Both use one leave-one-out search, `est.train_kneighbors` (timed as `train_search`).
    With `sweep` (the config's `dimension_sweep`), a method with `sweep_embeddings` (a linear
    metric with at least one component) also gets the `sweep_metrics` of its components.
    A `neighbours` dict receives the list hubness is measured on (`hubness`: each test query's
    `hubness_k` nearest training points), e.g. to pool leave-one-out splits.
    """

    if k_selection not in K_SELECTIONS:
        raise ValueError(f"k_selection must be one of {K_SELECTIONS}, got {k_selection!r}")
    n_train = y_train.shape[0]
    metrics: dict[str, float] = {}
    if est.predicts_only:
        labels = np.unique(y_train)
        with stopwatch(timings, "predict"):
            for k in ks:
                acc = float(np.mean(predictions(est, X_test, k, labels) == y_test))
                metrics[voc.accuracy(k)], metrics[voc.error(k)] = acc, 1.0 - acc
        return metrics
    own_k = est.selected_k if k_selection == "loo" else None
    depth, loo_depth = neighbour_depths(ks, hubness_k, k_selection, train_hubness, own_k)
    if depth > n_train:
        raise ValueError(
            f"k = {depth} (max of `k` and `hubness_k` in the config) exceeds the {n_train} "
            "training points of this split"
        )
    with stopwatch(timings, "predict"):
        lists = {k: ind for k, (_, ind) in neighbour_lists(
            est, X_test, ks, depth, n_train, progress=progress).items()}
        ind = lists[min(ks)]
    for k in ks:
        acc = accuracy_per_k(lists[k], y_train, y_test, [k])[k]
        metrics[voc.accuracy(k)], metrics[voc.error(k)] = acc, 1.0 - acc
    metrics.update(hubness.summary(ind, n_train, hubness_k))
    if neighbours is not None:
        neighbours["hubness"] = ind[:, :hubness_k]
    metrics[voc.nk_histogram(hubness_k)] = hubness.occurrence_histogram(
        hubness.k_occurrence(ind, n_train, hubness_k)).tolist()
    if loo_depth:
        if loo_depth > n_train - 1:
            raise ValueError(f"leave-one-out search needs k = {loo_depth} < the {n_train} "
                             "training points of this split")
        with stopwatch(timings, "train_search"):
            _, loo = contract.check_lists(est, est.train_kneighbors(loo_depth), n_train,
                                          loo_depth, n_train, "train_kneighbors",
                                          exclude_self=True)
        if k_selection != "none":
            metrics.update(select_k(ind, loo, y_train, y_test, ks, own_k))
        if train_hubness:
            metrics.update({voc.TRAIN_PREFIX + key: value
                            for key, value in hubness.summary(loo, n_train, hubness_k).items()})
            metrics[voc.nk_histogram(hubness_k, train=True)] = hubness.occurrence_histogram(
                hubness.k_occurrence(loo, n_train, hubness_k)).tolist()
    extra_timing: dict = {}
    with stopwatch(extra_timing, "extra_metrics"):
        extra = est.extra_metrics(X_test, y_test)
    if extra:  # only methods with numbers of their own carry the timing
        metrics.update(extra)
        timings.update(extra_timing)
    embeddings = est.sweep_embeddings(X_test) if sweep else None
    if embeddings is not None:
        embeddings = tuple(contract.check_embedding(est, Z, rows, "sweep_embeddings")
                           for Z, rows in zip(embeddings, (y_test.size, n_train)))
        with stopwatch(timings, "sweep"):
            metrics.update(sweep_metrics(embeddings, y_train, y_test, ks))
    return metrics


def test_accuracies(est, X_test: np.ndarray, y_train: np.ndarray, y_test: np.ndarray,
                   ks: list[int], depth: int) -> dict[int, float]:
    """k-NN test accuracy of a fitted method at each k, by the rule `evaluate` uses (the
    method's `kneighbors_per_k` with `depth` neighbours, or `predict` for a method that
    `predicts_only`), without hubness or timings: what `evaluate` gives as `accuracy_k<k>` when
    called with the same `depth` (its `neighbour_depths`)."""
    if est.predicts_only:
        labels = np.unique(y_train)
        return {k: float(np.mean(predictions(est, X_test, k, labels) == y_test)) for k in ks}
    lists = neighbour_lists(est, X_test, ks, depth, y_train.shape[0])
    return {k: accuracy_per_k(lists[k][1], y_train, y_test, [k])[k] for k in ks}


def neighbour_lists(est, X, ks, depth: int, n_train: int, progress: bool = False) -> dict:
    """{k: (dist, ind)}: the fitted method's `kneighbors_per_k` of the queries X, `depth`
    neighbours among its `n_train` training points, each distinct list checked against the
    method contract (`contract.check_lists`)."""
    found = est.kneighbors_per_k(X, ks, depth, progress=progress)
    own = type(est).kneighbors_per_k.__qualname__.split(".")[0] != "KNeighborsMethod"
    hook = "kneighbors_per_k" if own else "kneighbors"
    missing = sorted(set(ks) - set(found)) if isinstance(found, dict) else ks
    if missing:
        raise contract.ContractError(f"{contract.method_name(est)}: kneighbors_per_k returned "
                                     f"no list for k = {missing}")
    checked: dict = {}
    for lists in (found[k] for k in ks):
        if id(lists) not in checked:
            checked[id(lists)] = contract.check_lists(est, lists, X.shape[0], depth, n_train,
                                                      hook)
    return {k: checked[id(found[k])] for k in ks}


def predictions(est, X, k: int, labels: np.ndarray) -> np.ndarray:
    """The fitted classifier's `predict(X, k)`, checked against the method contract: one of
    the training `labels` per query (`contract.check_predictions`)."""
    return contract.check_predictions(est, est.predict(X, k), X.shape[0], labels)


def select_k(ind: np.ndarray, loo: np.ndarray, y_train: np.ndarray, y_test: np.ndarray,
             ks: list[int], own_k: int | None = None) -> dict[str, float]:
    """The test-time k chosen on the training part, and the test accuracy with it.

    The k of `ks` with the best leave-one-out k-NN accuracy of the training points (`loo`: their
    neighbours among the other training points; ties go to the smallest k), unless the method
    chose k itself jointly with its hyper-parameters by cross-validation (`own_k`, the
    estimator's `selected_k_`; `selected_k_by_method` = 1). Shigeto 2017 (section 5.1) tunes
    the test-time k by cross-validation on the training set for every method.
    """
    loo_acc = accuracy_per_k(loo, y_train, y_train, ks)
    out = {voc.loo_accuracy(k): acc for k, acc in loo_acc.items()}
    if own_k is None:
        best = max(loo_acc.values())
        k = min(k for k, acc in loo_acc.items() if acc == best)
    else:
        k = int(own_k)
    acc = accuracy_per_k(ind, y_train, y_test, [k])[k]
    out.update({voc.SELECTED_K: float(k), voc.SELECTED_K_BY_METHOD: float(own_k is not None),
                voc.ACCURACY_KCV: acc, voc.ERROR_KCV: 1.0 - acc})
    return out

"""Evaluation of a fitted method on a test part: k-NN accuracy for several k, hubness, timings.

Voting is deterministic: neighbours come ordered by (distance, training index) and a tie between
classes goes to the smallest class label, as scikit-learn's KNeighborsClassifier does.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager

import numpy as np

from . import hubness


def knn_vote(neighbor_labels: np.ndarray, n_classes: int) -> np.ndarray:
    """Majority class of each row of labels; ties go to the smallest label."""
    counts = np.zeros((neighbor_labels.shape[0], n_classes), dtype=np.int64)
    rows = np.repeat(np.arange(neighbor_labels.shape[0]), neighbor_labels.shape[1])
    np.add.at(counts, (rows, neighbor_labels.ravel()), 1)
    return counts.argmax(axis=1)


def accuracy_per_k(ind: np.ndarray, y_train: np.ndarray, y_test: np.ndarray,
                   ks: list[int]) -> dict[int, float]:
    """k-NN accuracy for every k in `ks` from one sorted neighbour list `ind` (len(y_test) x K)."""
    n_classes = int(max(y_train.max(), y_test.max())) + 1
    out = {}
    for k in ks:
        if k > ind.shape[1]:
            raise ValueError(f"k = {k} needs {k} neighbours, only {ind.shape[1]} computed")
        pred = knn_vote(y_train[ind[:, :k]], n_classes)
        out[k] = float(np.mean(pred == y_test))
    return out


@contextmanager
def stopwatch(into: dict, prefix: str):
    """Record wall and CPU seconds of the block as `<prefix>_wall_s` and `<prefix>_cpu_s`."""
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        yield
    finally:
        into[f"{prefix}_wall_s"] = time.perf_counter() - wall
        into[f"{prefix}_cpu_s"] = time.process_time() - cpu


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
        import psutil

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
        self.into["peak_rss_mb"] = self.peak / 2**20
        self.into["peak_rss_delta_mb"] = (self.peak - self.start) / 2**20


def evaluate(est, X_test: np.ndarray, y_train: np.ndarray, y_test: np.ndarray, ks: list[int],
             hubness_k: int, timings: dict, progress: bool = False) -> dict[str, float]:
    """Metrics of a fitted method `est` on (X_test, y_test); fills `timings` with predict times.

    Metrics: `accuracy_k<k>` and `error_k<k>` for each k, and the hubness measures of the
    training (labelled) points in the test queries' `hubness_k`-NN lists. A method may add its
    own numbers through `extra_metrics(X_test, y_test) -> dict` (e.g. the NCA rule's accuracy;
    a list of numbers is a curve, e.g. accuracy per mapped dimension, see `split_curves`);
    a 'classifier' method is evaluated through `predict(X_test, k)` only.
    """
    n_train = y_train.shape[0]
    metrics: dict[str, float] = {}
    if getattr(est, "kind", "global") == "classifier":
        with stopwatch(timings, "predict"):
            for k in ks:
                acc = float(np.mean(est.predict(X_test, k) == y_test))
                metrics[f"accuracy_k{k}"], metrics[f"error_k{k}"] = acc, 1.0 - acc
        return metrics
    depth = max(max(ks), hubness_k)
    if depth > n_train:
        raise ValueError(
            f"k = {depth} (max of `k` and `hubness_k` in the config) exceeds the {n_train} "
            "training points of this split"
        )
    with stopwatch(timings, "predict"):
        _, ind = est.kneighbors(X_test, depth, progress=progress)
    for k, acc in accuracy_per_k(ind, y_train, y_test, ks).items():
        metrics[f"accuracy_k{k}"], metrics[f"error_k{k}"] = acc, 1.0 - acc
    metrics.update(hubness.summary(ind, n_train, hubness_k))
    if hasattr(est, "extra_metrics"):
        with stopwatch(timings, "extra_metrics"):
            metrics.update(est.extra_metrics(X_test, y_test))
    return metrics


def split_curves(metrics: dict) -> tuple[dict[str, float], dict[str, list[float]]]:
    """Separate scalar metrics from curves (lists of numbers, e.g. accuracy per dimension)."""
    scalars = {k: float(v) for k, v in metrics.items() if not isinstance(v, (list, tuple))}
    curves = {k: [float(x) for x in v] for k, v in metrics.items() if isinstance(v, (list, tuple))}
    return scalars, curves

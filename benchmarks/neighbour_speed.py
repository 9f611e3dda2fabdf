"""Exact k-NN search against scikit-learn's brute force, side by side (issue 29).

    python benchmarks/neighbour_speed.py            # n = 1000 .. 64000, d = 20, 100, 784
    python benchmarks/neighbour_speed.py --quick    # n = 1000, 4000 (a minute)

For each (n, d) of the grid (not n = 64000 with d = 784): n training points, Q = n / 4 queries,
k = 10, one BLAS thread. Each cell is the time of this checkout's search over the time of
scikit-learn's `NearestNeighbors(algorithm="brute")` (fit + kneighbors) on the same arrays, best
of 5 (of 3 where one search takes seconds, of 20 up to n = 4000, where a search takes
milliseconds and one busy moment of a shared machine would decide), the two run alternately so
that both see the same load. Cases:

- gauss: Gaussian data, `neighbours.euclidean_kneighbors(Q, X, k)`;
- binary: 0/1 data (many exact ties), the same;
- train: the training set's leave-one-out lists, `euclidean_kneighbors(X, X, k,
  exclude_self=True)` against scikit-learn's `kneighbors()` without X (which leaves each point
  out);
- linear: a learned linear metric (`pca` to d / 2 components, fitted once outside the timing),
  `est.kneighbors(Q, k)` against scikit-learn on `est.transform(Q)` and `est.embedding_`.

The script counts the lists that differ from scikit-learn's (Gaussian data have no ties, so
none should; 0/1 data are compared by their sorted distances, ties being ordered differently).
Then the peak memory of each search: one fresh process per (case, size, implementation) runs the
search once after a small warm-up, resetting the kernel's peak-resident-memory mark (VmHWM,
through /proc/self/clear_refs) just before it; the figure is the peak minus the memory held
before (so it counts scikit-learn's compiled buffers too, which tracemalloc would not see), the
returned lists included (Q x k distances and indices: 2.4 MiB at n = 16000).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import subprocess
import sys
import time

import numpy as np
from sklearn.neighbors import NearestNeighbors
from threadpoolctl import threadpool_limits

from dmlbench.measure.neighbours import euclidean_kneighbors
from dmlbench.methods import REGISTRY

K = 10
SIZES = [(n, d) for n in (1000, 4000, 16000, 64000) for d in (20, 100, 784)
         if (n, d) != (64000, 784)]
QUICK_SIZES = [(n, d) for n in (1000, 4000) for d in (20, 100, 784)]
CASES = ("gauss", "binary", "train", "linear")
#: sizes whose peak memory is measured (one process per case and implementation)
MEMORY_SIZES = [(16000, 20), (16000, 100), (16000, 784)]
QUICK_MEMORY_SIZES = [(4000, 100)]


def data(case: str, n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """(training points, queries) of a case, generated from a fixed seed."""
    rng = np.random.default_rng(n + d)
    if case == "binary":
        return (rng.integers(0, 2, size=(n, d)).astype(float),
                rng.integers(0, 2, size=(n // 4, d)).astype(float))
    return rng.normal(size=(n, d)), rng.normal(size=(n // 4, d))


def searches(case: str, X: np.ndarray, Q: np.ndarray):
    """(ours, scikit-learn's): functions of no argument returning (dist, ind)."""
    if case == "train":
        return (lambda: euclidean_kneighbors(X, X, K, exclude_self=True),
                lambda: NearestNeighbors(n_neighbors=K, algorithm="brute").fit(X).kneighbors())
    if case == "linear":
        est = REGISTRY["pca"](n_components=max(1, X.shape[1] // 2)).fit(X, np.zeros(len(X)))
        return (lambda: est.kneighbors(Q, K),
                lambda: NearestNeighbors(n_neighbors=K, algorithm="brute").fit(
                    est.embedding_).kneighbors(est.transform(Q)))
    return (lambda: euclidean_kneighbors(Q, X, K),
            lambda: NearestNeighbors(n_neighbors=K, algorithm="brute").fit(X).kneighbors(Q))


def disagreements(case: str, ours, theirs) -> int:
    """Lists that differ: indices for continuous data, sorted distances for 0/1 data."""
    if case == "binary":
        return int(np.sum(~np.all(np.isclose(ours[0], theirs[0], rtol=1e-9, atol=1e-9), axis=1)))
    return int(np.sum(np.any(ours[1] != theirs[1], axis=1)))


def side_by_side(case: str, n: int, d: int, repeats: int) -> tuple[float, float, int]:
    """(our best time, scikit-learn's, lists that differ)."""
    X, Q = data(case, n, d)
    ours, theirs = searches(case, X, Q)
    best = [np.inf, np.inf]
    for _ in range(repeats):
        for slot, search in enumerate((ours, theirs)):
            start = time.perf_counter()
            result = search()
            best[slot] = min(best[slot], time.perf_counter() - start)
            if slot == 0:
                mine = result
    return best[0], best[1], disagreements(case, mine, result)


def resident_kb(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def peak_memory(case: str, n: int, d: int, which: int) -> float:
    """MiB above the memory held before: one search (`which` 0 ours, 1 scikit-learn's), in this
    process (the parent runs it in a fresh one), after a warm-up search of max(200, d) points
    (code loaded) and with the allocator's free pages returned to the kernel (glibc's malloc_trim),
    so that memory the search reuses counts."""
    searches(case, *data(case, max(200, d), d))[which]()
    X, Q = data(case, n, d)
    search = searches(case, X, Q)[which]
    ctypes.CDLL("libc.so.6").malloc_trim(0)  # free pages back to the kernel: reuse is not free
    before = resident_kb("VmRSS")
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")  # reset VmHWM to the current resident size
    search()
    return (resident_kb("VmHWM") - before) / 1024


def measure_memory(case: str, n: int, d: int) -> tuple[float, float]:
    out = []
    for which in (0, 1):
        result = subprocess.run([sys.executable, __file__, "--memory", case, str(n), str(d),
                                 str(which)], capture_output=True, text=True, check=True)
        out.append(json.loads(result.stdout.strip().splitlines()[-1]))
    return out[0], out[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 1000, 4000 only")
    parser.add_argument("--cases", default=",".join(CASES), help=f"some of {', '.join(CASES)}")
    parser.add_argument("--memory", nargs=4, metavar=("CASE", "N", "D", "WHICH"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    with threadpool_limits(limits=1):
        if args.memory:
            case, n, d, which = args.memory
            print(json.dumps(peak_memory(case, int(n), int(d), int(which))))
            return
        cases = args.cases.split(",")
        sizes = QUICK_SIZES if args.quick else SIZES
        print(f"time of this checkout's search / scikit-learn brute (fit + kneighbors), k = {K}, "
              f"Q = n / 4, one BLAS thread; (lists that differ from scikit-learn's)")
        print(f"{'n':>6} {'d':>4} " + " ".join(f"{case:>14}" for case in cases), flush=True)
        for n, d in sizes:
            repeats = 3 if n * d >= 16000 * 784 or n >= 64000 else 5 if n > 4000 else 20
            cells = []
            for case in cases:
                ours, theirs, differ = side_by_side(case, n, d, repeats)
                cells.append(f"{ours / theirs:6.2f}x ({differ:>4})")
            print(f"{n:>6} {d:>4} " + " ".join(f"{cell:>14}" for cell in cells), flush=True)
        print("\npeak memory above the memory held before, MiB (fresh process each, VmHWM): "
              "this checkout / scikit-learn")
        print(f"{'n':>6} {'d':>4} " + " ".join(f"{case:>14}" for case in cases), flush=True)
        for n, d in (QUICK_MEMORY_SIZES if args.quick else MEMORY_SIZES):
            cells = [measure_memory(case, n, d) for case in cases]
            print(f"{n:>6} {d:>4} " + " ".join(f"{a:6.1f} / {b:5.1f}" for a, b in cells),
                  flush=True)


if __name__ == "__main__":
    main()

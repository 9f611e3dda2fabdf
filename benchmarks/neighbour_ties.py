"""Does a k-NN list depend on the chunk size? And what does the tie rule cost?

    python benchmarks/neighbour_ties.py                       # this checkout's search
    python benchmarks/neighbour_ties.py --against OLD.py      # also compare with another version
    git show cf35ec0:src/dmlbench/measure/neighbours.py > /tmp/old_neighbours.py   # e.g.

Iris (raw features), `train_test_split(X, y, test_size=0.3, random_state=s)` for s = 0..9, plain
and stratified, k = 1..10: the test queries' k-NN lists are computed with blocks of 1, 2, ..., 45
queries (45 = all); the script counts the (split, query, k) lists and the k-NN predictions that
are not the same for every block size, and the largest spread of a split's accuracy over block
sizes; with `--against`, also the lists, predictions and accuracies that differ between that
module and this checkout (all queries in one block). Then the time of one search (digits, 1257
training points, 540 queries, k = 10; a random 20000 x 50 set, 2000 queries) for both, one BLAS
thread, best of 5, and their ratio.
"""

from __future__ import annotations

import argparse
import importlib.util
import time

import numpy as np
from sklearn.datasets import load_digits, load_iris
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

from dmlbench.measure import neighbours
from dmlbench.measure.evaluation import knn_vote

KS = range(1, 11)
BLOCK_SIZES = range(1, 46)


def load(path: str):
    spec = importlib.util.spec_from_file_location("other_neighbours", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def iris_lists(module, stratify: bool) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per split: (lists (block sizes, queries, 10), y_train, y_test)."""
    X, y = load_iris(return_X_y=True)
    out = []
    for seed in range(10):
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=seed,
                                              stratify=y if stratify else None)
        lists = np.stack([module.euclidean_kneighbors(Xte, Xtr, max(KS),
                                                      max_bytes=8 * len(Xtr) * size)[1]
                          for size in BLOCK_SIZES])
        out.append((lists, ytr, yte))
    return out


def spread(runs) -> tuple[int, int, float, int]:
    """(lists, predictions not the same for every block size, largest accuracy spread in
    points, lists in total)."""
    lists = preds = total = 0
    worst = 0.0
    for L, ytr, yte in runs:
        for k in KS:
            sub = L[:, :, :k]
            lists += int(np.sum(np.any(sub != sub[0], axis=(0, 2))))
            total += sub.shape[1]
            P = np.stack([knn_vote(ytr[s], 3) for s in sub])
            preds += int(np.sum(np.any(P != P[0], axis=0)))
            acc = np.mean(P == yte, axis=1)
            worst = max(worst, 100 * (acc.max() - acc.min()))
    return lists, preds, worst, total


def versus(a, b) -> tuple[int, int, float]:
    """Lists, predictions and largest accuracy change between two modules (one block each)."""
    lists = preds = 0
    worst = 0.0
    for (La, ytr, yte), (Lb, _, _) in zip(a, b):
        for k in KS:
            ia, ib = La[-1, :, :k], Lb[-1, :, :k]
            lists += int(np.sum(np.any(ia != ib, axis=1)))
            pa, pb = knn_vote(ytr[ia], 3), knn_vote(ytr[ib], 3)
            preds += int(np.sum(pa != pb))
            worst = max(worst, 100 * abs(np.mean(pa == yte) - np.mean(pb == yte)))
    return lists, preds, worst


def best_time(fn, repeats: int = 5) -> float:
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", help="path of another neighbours.py to compare with")
    args = parser.parse_args()
    other = load(args.against) if args.against else None
    for stratify in (False, True):
        kind = "stratified" if stratify else "plain"
        ours = iris_lists(neighbours, stratify)
        modules = [("this checkout", ours)]
        if other is not None:
            modules.append(("--against", iris_lists(other, stratify)))
        for name, runs in modules:
            lists, preds, worst, total = spread(runs)
            print(f"{kind} splits, {name}: over block sizes 1..45, {lists} of {total} lists and "
                  f"{preds} predictions change; a split's accuracy spreads by up to {worst:.1f} "
                  "points")
        if other is not None:
            lists, preds, worst = versus(modules[1][1], ours)
            print(f"{kind} splits, --against vs this checkout (one block): {lists} lists, "
                  f"{preds} predictions differ; accuracy changes by up to {worst:.1f} points")
    X, _ = load_digits(return_X_y=True)
    Xtr, Xte = train_test_split(X, test_size=0.3, random_state=0)
    rng = np.random.default_rng(0)
    big, queries = rng.normal(size=(20000, 50)), rng.normal(size=(2000, 50))
    with threadpool_limits(limits=1):
        for label, (Q, T) in {"digits": (Xte, Xtr), "random 20000 x 50": (queries, big)}.items():
            t_ours = best_time(lambda: neighbours.euclidean_kneighbors(Q, T, 10))
            line = f"time of one search, {label}: this checkout {t_ours * 1e3:.1f} ms"
            if other is not None:
                t_other = best_time(lambda: other.euclidean_kneighbors(Q, T, 10))
                line += f", --against {t_other * 1e3:.1f} ms, ratio {t_ours / t_other:.2f}"
            print(line)


if __name__ == "__main__":
    main()

"""Does a k-NN list depend on the chunk size? And what does the tie rule cost?

    python benchmarks/neighbour_ties.py                       # this checkout's search
    python benchmarks/neighbour_ties.py --against OLD.py      # also compare with another version
    git show cf35ec0:src/dmlbench/measure/neighbours.py > /tmp/old_neighbours.py   # e.g.

Iris (raw features), `train_test_split(X, y, test_size=0.3, random_state=s)` for s = 0..9, plain
and stratified, k = 1..10: the test queries' k-NN lists are computed with blocks of 1, 2, ..., 45
queries (45 = all); the script counts the (split, query, k) lists and the k-NN predictions that
are not the same for every block size, and the largest spread of a split's accuracy over block
sizes; with `--against`, also the lists, predictions and accuracies that differ between that
module and this checkout (all queries in one block), and the same over the default
benchmark's 13 data sets (its preprocessing and stratified 70/30 x 4 splits, seed 0; Euclidean
10-NN lists, k-NN predictions for k = 1, 3, 5, N10 skewness). Then the time of one search
(digits, 1257 training points, 540 queries, k = 10; a random 20000 x 50 set, 2000 queries) for
both, one BLAS thread, best of 5, and their ratio.
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
from dmlbench.measure.knn_rule import knn_vote

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


DEFAULT_SETS = {name: ["zscore"] for name in (
    "iris", "wine", "wdbc", "ionosphere", "pima", "bupa", "housevotes", "balance-scale",
    "monks-1-432", "monks-2-432", "monks-3-432", "segment")}
DEFAULT_SETS["digits"] = ["center", {"pca": 30}]


def default_sets(other) -> None:
    """Euclidean lists, predictions and N10 skewness of `other` against this checkout."""
    from dmlbench import data
    from dmlbench.measure import hubness
    from dmlbench.run import preprocessing, protocols

    for name, steps in DEFAULT_SETS.items():
        ds = data.build(name)
        splits = protocols.make_splits(ds.y, {"kind": "holdout", "repeats": 4,
                                              "train_fraction": 0.7}, 0)
        lists = preds = total = 0
        accuracy = skewness = 0.0
        for split in splits:
            Xtr, Xte, _ = preprocessing.fit_transform(steps, ds.X[split.train], ds.X[split.test])
            ytr, yte = ds.y[split.train], ds.y[split.test]
            a = other.euclidean_kneighbors(Xte, Xtr, 10)[1]
            b = neighbours.euclidean_kneighbors(Xte, Xtr, 10)[1]
            lists += int(np.sum(np.any(a != b, axis=1)))
            total += len(yte)
            for k in (1, 3, 5):
                pa, pb = (knn_vote(ytr[ind[:, :k]], int(ds.y.max()) + 1) for ind in (a, b))
                preds += int(np.sum(pa != pb))
                accuracy = max(accuracy, 100 * abs(np.mean(pa == yte) - np.mean(pb == yte)))
            skew = [hubness.summary(ind, len(ytr), 10)["skewness_n10"] for ind in (a, b)]
            skewness = max(skewness, abs(skew[0] - skew[1]))
        print(f"{name}: {lists} of {total} 10-NN lists, {preds} predictions (k = 1, 3, 5) "
              f"differ; accuracy by up to {accuracy:.1f} points, N10 skewness by up to "
              f"{skewness:.3f}")


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
    if other is not None:
        print("default benchmark's data sets, Euclidean, --against vs this checkout:")
        default_sets(other)
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

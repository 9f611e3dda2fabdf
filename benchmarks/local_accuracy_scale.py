"""Why the local GQD metrics' 1-NN accuracy falls as the training set grows (issue 47): on the
generated data of `benchmarks/scale.py` (mnist_like, minmax, PCA 50, 10 classes, 1000 test
points) the issue measured RMLE 0.72 -> 0.47 -> 0.27 and RMVEM 0.75 -> 0.56 -> 0.33 at
n = 1 000 / 4 000 / 16 000 while Euclidean 1-NN rises. This script separates the candidate
causes (docs/papers/abou-moustafa-2017.md, "At scale"):

1. accuracy per n of RMLE and RMVEM with m fixed (no selection: the selection cannot be the
   cause) in both readings of the GQD, literal M = A_q (as printed, the default) and inverse
   M = A_q^{-1}; the regulariser absolute (1e-4, the paper) and relative, and larger;
2. where the GQD's nearest training point lies: its rank by Euclidean distance, whether it is
   of the query's class, and the share of its displacement y - q in the 10 directions of most
   local spread (largest eigenvalues of A_q), against the Euclidean nearest point's;
3. an independent reimplementation (numpy only, nothing from dmlbench: its own neighbour sort,
   uniform weights or its own MVCE by the normalised multiplicative update to a duality gap of
   1e-8, the dense d x d metric, every training point's distance, the documented tie rule:
   squared distances within 1e-4 of a group's smallest tie and go by Euclidean distance, then
   index) for a few queries, against the method's 5 nearest.

    python benchmarks/local_accuracy_scale.py                 # n = 1000, 4000, 16000
    python benchmarks/local_accuracy_scale.py --sizes 1000,4000 --check 10
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(name, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import prepare  # noqa: E402

from dmlbench.methods import make  # noqa: E402
from dmlbench.measure.neighbours import euclidean_kneighbors  # noqa: E402

M_VALUES = (60, 100, 150)  # in d+1..3d = 51..150, the paper's grid for d = 50


def accuracy(est, Q, y, yq) -> float:
    return float(np.mean(y[est.kneighbors(Q, 1)[1][:, 0]] == yq))


# ---- the independent reimplementation (numpy only) ----------------------------------------------

def own_mvce_weights(Z: np.ndarray, eps: float, gap: float = 1e-8, cap: int = 200000):
    """max_w log det(sum_j w_j z_j z_j^T + eps I) on the simplex by the normalised
    multiplicative update w_j <- w_j delta_j / sum_i w_i delta_i, delta_j = z_j^T A^{-1} z_j,
    until the duality gap max_j delta_j - sum_j w_j delta_j is at most `gap`."""
    m, d = Z.shape
    w = np.full(m, 1.0 / m)
    for _ in range(cap):
        A = Z.T @ (Z * w[:, None]) + eps * np.eye(d)
        delta = np.einsum("md,md->m", Z @ np.linalg.inv(A), Z)
        mean = w @ delta
        if delta.max() - mean <= gap:
            break
        w = w * delta / mean
    return w


def own_gqd_distances(X, q, m, eps, weighting, form):
    """Squared GQD distances from q to every row of X, and the metric M."""
    e2 = np.sum((X - q) ** 2, axis=1)
    near = np.lexsort((np.arange(len(X)), e2))[:m]
    Z = X[near] - q
    w = np.full(m, 1.0 / m) if weighting == "uniform" else own_mvce_weights(Z, eps)
    A = Z.T @ (Z * w[:, None]) + eps * np.eye(X.shape[1])
    M = A if form == "literal" else np.linalg.inv(A)
    V = X - q
    return np.einsum("nd,de,ne->n", V, M, V), A


def own_tie_order(d2, e2, index, band=1e-4):
    """`index` (training indices) ordered by the local metrics' tie rule, in plain Python: the
    smallest remaining squared distance v opens a group of every value <= v (1 + band), groups
    in order, members by Euclidean distance, then training index."""
    order = sorted(range(len(d2)), key=lambda j: (d2[j], index[j]))
    out, i = [], 0
    while i < len(order):
        v = d2[order[i]]
        group = [j for j in order[i:] if d2[j] <= v * (1 + band)]
        out += [index[j] for j in sorted(group, key=lambda j: (e2[j], index[j]))]
        i += len(group)
    return np.array(out)


def part_accuracy(data, sizes) -> None:
    print("1. 1-NN test accuracy, m fixed (no selection), eps 1e-4 absolute unless said")
    print(f"{'method':<34}" + "".join(f"{'n = ' + str(n):>12}" for n in sizes), flush=True)
    rows = [("euclidean", None)]
    for name in ("rmle", "rmvem"):
        for form in ("literal", "inverse"):
            rows += [(f"{name} {form} m={m}", (name, {"m": m, "form": form}))
                     for m in (M_VALUES if name == "rmle" else (100,))]
    rows += [(f"rmle literal m=100 eps {e} relative",
              ("rmle", {"m": 100, "eps": e, "eps_scale": "relative"}))
             for e in (1e-4, 1e-1, 1.0, 10.0)]
    for label, spec in rows:
        cells = []
        for n in sizes:
            d = data[n]
            X, y, Q, yq = d["X_train"], d["y_train"], d["X_test"], d["y_test"]
            if spec is None:
                ind = euclidean_kneighbors(Q, X, 1)[1]
                cells.append(float(np.mean(y[ind[:, 0]] == yq)))
            else:
                name, params = spec
                cells.append(accuracy(make(name, {**params, "k_select": [1]}).fit(X, y),
                                      Q, y, yq))
        print(f"{label:<34}" + "".join(f"{c:>12.3f}" for c in cells), flush=True)



def part_where(data, sizes) -> None:
    print("\n2. where the GQD's nearest training point lies (RMLE, m = 150; 300 test queries: "
          "medians, and the share of its class)")
    print(f"{'n':>6} {'form':<8} {'Euclid. rank':>12} {'same class':>10} "
          f"{'top-10 share':>12} {'(Euclid. 1-NN)':>14}", flush=True)
    for n in sizes:
        d = data[n]
        X, y, Q, yq = d["X_train"], d["y_train"], d["X_test"][:300], d["y_test"][:300]
        nearest = euclidean_kneighbors(Q, X, 1)[1][:, 0]
        for form in ("literal", "inverse"):
            est = make("rmle", {"m": 150, "form": form, "k_select": [1]}).fit(X, y)
            chosen = est.kneighbors(Q, 1)[1][:, 0]
            ranks, share, share_e = [], [], []
            for q, j, e in zip(Q, chosen, nearest):
                e2 = np.sum((X - q) ** 2, axis=1)
                ranks.append(int(np.sum(e2 < e2[j])))
                _, A = own_gqd_distances(X, q, 150, 1e-4, "uniform", form)
                top = np.linalg.eigh(A)[1][:, -10:]
                for target, out in ((j, share), (e, share_e)):
                    v = X[target] - q
                    out.append(float(np.sum((top.T @ v) ** 2) / (v @ v)))
            print(f"{n:>6} {form:<8} {np.median(ranks):>12.0f} "
                  f"{np.mean(y[chosen] == yq):>10.2f} {np.median(share):>12.2f} "
                  f"{np.median(share_e):>14.2f}", flush=True)



def part_independent(data, sizes, check) -> None:
    print(f"\n3. independent reimplementation, {check} queries per n: 1-NN equal, "
          "5 nearest equal, largest relative difference of the 5 distances")
    for n in sizes:
        d = data[n]
        X, y, Q = d["X_train"], d["y_train"], d["X_test"][:check]
        for name, weighting, m in (("rmle", "uniform", 150), ("rmvem", "mvce", 100)):
            for form in ("literal", "inverse"):
                est = make(name, {"m": m, "form": form, "k_select": [1]}).fit(X, y)
                dist, ind = est.kneighbors(Q, 5)
                same1 = same5 = 0
                worst = 0.0
                for i, q in enumerate(Q):
                    d2, _ = own_gqd_distances(X, q, m, 1e-4, weighting, form)
                    near = np.argsort(d2, kind="stable")[:200]  # ties lie among the m neighbours
                    order = own_tie_order(d2[near], np.sum((X[near] - q) ** 2, axis=1),
                                          near)[:5]
                    same1 += int(order[0] == ind[i, 0])
                    same5 += int(np.array_equal(order, ind[i]))
                    worst = max(worst, float(np.max(np.abs(np.sqrt(d2[order]) - dist[i])
                                                    / np.sqrt(d2[order]))))
                print(f"  n = {n:>6} {name:<6} {form:<8} m = {m}: 1-NN {same1}/{len(Q)}, "
                      f"5-NN {same5}/{len(Q)}, distances within {worst:.1e}", flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,4000,16000")
    parser.add_argument("--check", type=int, default=20, help="queries of the independent check")
    parser.add_argument("--parts", default="1,2,3", help="which of the three parts to run")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    parts = {int(p) for p in args.parts.split(",")}
    start = time.process_time()
    with tempfile.TemporaryDirectory(prefix="dmlbench-local-") as tmp:
        data = {n: np.load(prepare(n, Path(tmp))) for n in sizes}
        if 1 in parts:
            part_accuracy(data, sizes)
        if 2 in parts:
            part_where(data, sizes)
        if 3 in parts:
            part_independent(data, sizes, args.check)
    print(f"\n{time.process_time() - start:.0f} CPU s (this process)")


if __name__ == "__main__":
    main()

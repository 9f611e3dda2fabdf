"""Hubness reducers: cost against the plain search, and what the candidate mode changes.

    python benchmarks/hubness_reduction_speed.py            # digits (1258 training points)
    python benchmarks/hubness_reduction_speed.py --quick    # gauss-d100 (700 training points)

On holdout split 0 (70/30, seed 0) of the data set, centred, the Euclidean metric is evaluated
plainly and through each reducer, exactly over all pairs and in the candidate mode (each point's
`--candidates` nearest). Printed per reducer: CPU seconds of the test queries' reduced lists
(the training points' lists included, as a job computes them) and the ratio to the plain
search, the share of test queries whose reduced 5-NN list (order included) is the exact one,
the 5-NN accuracy of both modes and, for empiric mutual proximity, the share of pairs whose
count the candidate mode cut. CPU time of this process, BLAS on one thread.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

from dmlbench import config, data
from dmlbench.measure.knn_rule import accuracy_per_k
from dmlbench.methods import REGISTRY
from dmlbench.methods.hubness_reduced import HubnessReduced
from dmlbench.run import protocols

REDUCERS = [{"kind": "mutual_proximity"}, {"kind": "mutual_proximity", "variant": "gaussian"},
            {"kind": "local_scaling"}, {"kind": "nicdm"}, {"kind": "dissim_local"}]


def settings(value: dict) -> dict:
    """A `hubness_reduction` entry with the config schema's defaults filled in."""
    filled = config.with_defaults({"benchmark": "b", "datasets": {"iris": None},
                                   "methods": {"m": {"hubness_reduction": value}}})
    return filled["methods"]["m"]["hubness_reduction"]


def cpu(fn):
    start = time.process_time()
    out = fn()
    return out, time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--candidates", type=int, default=100)
    args = parser.parse_args()
    name = "gauss-d100" if args.quick else "digits"
    ds = data.build(name)
    split = protocols.make_splits(ds.y, {"kind": "holdout", "repeats": 1, "train_fraction": 0.7},
                                  0)[0]
    mean = ds.X[split.train].mean(axis=0)
    X, Xt = ds.X[split.train] - mean, ds.X[split.test] - mean
    y, yt = ds.y[split.train], ds.y[split.test]
    with threadpool_limits(1):
        est = REGISTRY["euclidean"]().fit(X, y)
        (_, plain), plain_s = cpu(lambda: est.kneighbors(Xt, 5))
        print(f"{name}: {len(y)} training, {len(yt)} test points; plain 5-NN search "
              f"{plain_s:.3f} s, accuracy {100 * accuracy_per_k(plain, y, yt, [5])[5]:.2f} %")
        print(f"{'reducer':22s} {'exact s':>8s} {'x plain':>8s} {'cand. s':>8s} {'x plain':>8s} "
              f"{'same list':>9s} {'acc exact':>9s} {'acc cand.':>9s} {'cut pairs':>9s}")
        for value in REDUCERS:
            exact = HubnessReduced.from_settings(est, settings(value)).fit(X, y)
            approx = HubnessReduced.from_settings(est, settings(
                {**value, "exact_max": 0, "candidates": args.candidates})).fit(X, y)
            (_, ind_e), exact_s = cpu(lambda: exact.kneighbors(Xt, 5))
            (_, ind_c), cand_s = cpu(lambda: approx.kneighbors(Xt, 5))
            same = np.mean(np.all(ind_e == ind_c, axis=1))
            cut = approx.fit_info().get("reduction_truncated_share")
            print(f"{exact.label:22s} {exact_s:8.3f} {exact_s / plain_s:8.0f} {cand_s:8.3f} "
                  f"{cand_s / plain_s:8.0f} {100 * same:8.1f}% "
                  f"{100 * accuracy_per_k(ind_e, y, yt, [5])[5]:8.2f}% "
                  f"{100 * accuracy_per_k(ind_c, y, yt, [5])[5]:8.2f}% "
                  f"{'' if cut is None else f'{100 * cut:.1f}%':>9s}")


if __name__ == "__main__":
    main()

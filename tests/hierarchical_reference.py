"""Regenerate tests/data/hierarchical_reference.json: baycomp's `HierarchicalTest` (its Stan
model, sampled by pystan) on synthetic cases and on per-fold accuracies of the published
records of reports/suarez-2021, the independent reference of `dmlbench.measure.hierarchical`.

baycomp's hierarchical test needs pystan 3, whose httpstan compiles the Stan model with a C++
compiler on first use, so it is no dependency of dmlbench: run this in a virtual environment of
its own, outside the project (it imports numpy, baycomp and stan only, not dmlbench):

    python3.11 -m venv /tmp/baycomp-venv
    /tmp/baycomp-venv/bin/pip install baycomp==1.0.3 pystan==3.10.0
    /tmp/baycomp-venv/bin/python tests/hierarchical_reference.py              # every case
    /tmp/baycomp-venv/bin/python tests/hierarchical_reference.py --missing    # new cases only

baycomp passes no seed to Stan; this script fixes Stan's `random_seed` (wrapping `stan.build`)
so that the file is reproducible, and runs each case in a fresh working directory (baycomp
caches the last posterior in ./last-sample.pickle, keyed by the differences only).
"""

from __future__ import annotations

import argparse
import functools
import gzip
import importlib.metadata
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "hierarchical_reference.json"
RECORDS = ROOT / "reports" / "suarez-2021" / "records" / "runs"
ROPE = 0.01
STAN_SEED = 1
NSAMPLES, CHAINS = 10_000, 4  # baycomp's defaults: 4 chains x 10 000 draws


def synthetic(seed: int, deltas, noise: float, folds: int) -> tuple[list, list]:
    """Scores of A and B on len(deltas) data sets of `folds` folds: B = A + delta_i + noise."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.6, 0.9, (len(deltas), 1)) + rng.normal(0, 0.02, (len(deltas), folds))
    b = a + np.asarray(deltas)[:, None] + rng.normal(0, noise, (len(deltas), folds))
    return np.round(a, 6).tolist(), np.round(b, 6).tolist()


def record_scores(method: str, k: int) -> dict[str, list[float]]:
    """{data set: fold accuracies of k-NN} of one method of the suarez-2021 records."""
    out = {}
    for folder in sorted(RECORDS.iterdir()):
        records = []
        for part in sorted((folder / method).glob("*.json.gz")):
            records += json.loads(gzip.decompress(part.read_bytes()))["records"]
        records.sort(key=lambda r: r["split"]["index"])
        out[folder.name] = [r["metrics"][f"accuracy_k{k}"] for r in records]
    return out


def from_records(a: str, b: str, k: int) -> tuple[list, list]:
    sa, sb = record_scores(a, k), record_scores(b, k)
    return [sa[s] for s in sorted(sa)], [sb[s] for s in sorted(sa)]


def cases() -> dict[str, dict]:
    rng = np.random.default_rng(7)
    out = {
        "synthetic-b-better": dict(zip("ab", synthetic(1, rng.normal(0.03, 0.01, 10), 0.02, 10))),
        "synthetic-equivalent": dict(zip("ab", synthetic(2, rng.normal(0.0, 0.002, 10), 0.01,
                                                         10))),
        "synthetic-a-better": dict(zip("ab", synthetic(3, rng.normal(-0.025, 0.01, 8), 0.02,
                                                       10))),
        "synthetic-mixed": dict(zip("ab", synthetic(4, [0.04, -0.04, 0.03, -0.03, 0.05, -0.05,
                                                        0.0, 0.01], 0.015, 10))),
        "synthetic-three-sets": dict(zip("ab", synthetic(5, [0.02, 0.035, 0.01], 0.02, 10))),
        "synthetic-three-repeats": dict(zip("ab", synthetic(6, rng.normal(0.015, 0.01, 6),
                                                            0.02, 3))),
    }
    a, b = synthetic(8, rng.normal(0.02, 0.01, 6), 0.02, 10)
    b[2] = list(a[2])  # one data set with identical scores: baycomp's zero-variance remedy
    out["synthetic-identical-set"] = {"a": a, "b": b}
    # the records' cases include the sampler's hardest: one data set far out (lfda against
    # klhp: 28 points on movement_libras), heavy tails (mmc, dml_eig against euclidean)
    for name, a, b, k in (("lmnn_k3", "lmnn_k3", "euclidean", 3),
                          ("klhp", "klhp", "euclidean", 3),
                          ("nca", "nca", "euclidean", 5),
                          ("lda", "lda", "euclidean", 3),
                          ("mmc", "mmc", "euclidean", 3),
                          ("dml_eig", "dml_eig", "euclidean", 3)):
        sa, sb = from_records(a, b, k)
        out[f"suarez-2021-{name}-vs-{b}-k{k}"] = {"a": sa, "b": sb}
    sa, sb = from_records("lfda", "klhp", 3)
    out["suarez-2021-lfda-vs-klhp-k3"] = {"a": sa, "b": sb}
    return out


def main() -> None:
    import baycomp
    import stan

    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--missing", action="store_true",
                        help="keep the cases already in the file, run the others")
    args = parser.parse_args()
    stan.build = functools.partial(stan.build, random_seed=STAN_SEED)
    results = json.loads(OUT.read_text())["cases"] if args.missing and OUT.exists() else {}
    for name, case in cases().items():
        if name in results:
            continue
        a, b = np.array(case["a"]), np.array(case["b"])
        folds = a.shape[1]
        with tempfile.TemporaryDirectory() as tmp:
            os.chdir(tmp)
            start = time.perf_counter()
            p = baycomp.HierarchicalTest.probs(a, b, ROPE, runs=1, nsamples=NSAMPLES,
                                               chains=CHAINS, random_state=0)
            seconds = time.perf_counter() - start
            os.chdir(ROOT)
        results[name] = {"a": case["a"], "b": case["b"], "rho": 1 / folds,
                         "p_a": float(p[0]), "p_rope": float(p[1]), "p_b": float(p[2]),
                         "seconds": round(seconds, 1)}
        print(f"{name}: P(A better) {p[0]:.4f}  P(rope) {p[1]:.4f}  P(B better) {p[2]:.4f}  "
              f"({seconds:.1f} s)", flush=True)
        write(results)


def write(results: dict) -> None:
    """The file, with the provenance of its numbers."""
    OUT.write_text(json.dumps({
        "provenance": {
            "what": "baycomp.HierarchicalTest.probs(a, b, rope, runs=1, nsamples, chains, "
                    "random_state=0); p_a = P(left) (A better), p_b = P(right) (B better); rho "
                    "= 1 / folds as baycomp sets it",
            "script": "tests/hierarchical_reference.py",
            "versions": {p: importlib.metadata.version(p)
                         for p in ("baycomp", "pystan", "httpstan", "numpy", "scipy")},
            "rope": ROPE, "nsamples_per_chain": NSAMPLES, "chains": CHAINS,
            "stan_random_seed": STAN_SEED, "baycomp_random_state": 0,
            "records": "reports/suarez-2021/records (accuracy per fold, data sets sorted)",
        },
        "cases": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()

"""The MVCE validation of a data set: real query neighbourhoods solved by Titterington's
algorithm and by the CVXPY reference, compared (log det, weights, gap certificates, time).

For each m of the settings, `queries` points are drawn (seeded) from the data set, preprocessed
as the benchmark configures it (fitted on the whole data set: this checks a solver, it
evaluates no classifier), and each one's m Euclidean nearest other points, minus the query, form
one problem. Titterington solves all of them in one batch and one at a time; CVXPY one at a
time; and Titterington again, one at a time, stopped as soon as its duality gap is as small as
that of CVXPY's solution (the speed ratio at equal certified accuracy). The printed update (Alg. 2
step 8 as printed) is run too, to show its shortfall.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from .. import vocabulary as voc
from ..measure.neighbours import euclidean_kneighbors
from ..solvers import mvce

KIND = voc.RunKind.MVCE_VALIDATION
SCHEMA_VERSION = 1
SCHEMA = Path(__file__).parents[1] / "schemas" / "mvce_validation.schema.json"
#: result fields that change from run to run (left out of the content hash)
VOLATILE = ("titterington_batch_time_s", "titterington_serial_time_s",
            "titterington_equal_gap_time_s", "cvxpy_time_s", "speed_ratio",
            "speed_ratio_batched", "speed_ratio_equal_gap")
DEFAULTS = {"m": [5, 15, 30], "queries": 3, "eps": 1e-4, "tol": 1e-7, "max_iter": 100000,
            "seed": 0}


def settings(config_value: dict | None) -> dict:
    """The validation settings of a config's `mvce_validation` entry, defaults filled in."""
    return {**DEFAULTS, **(config_value or {})}


def neighbourhoods(X: np.ndarray, m: int, queries: int, seed: int) -> np.ndarray:
    """Z (queries, m, d): the m nearest other points of `queries` seeded random points, minus
    the point."""
    n = X.shape[0]
    if not 2 <= m <= n - 1:
        raise ValueError(f"mvce_validation.m = {m} must be in [2, n - 1 = {n - 1}]")
    rng = np.random.default_rng([seed, m])
    q = rng.choice(n, size=min(queries, n), replace=False)
    _, ind = euclidean_kneighbors(X, X, m, exclude_self=True)
    return X[ind[q]] - X[q][:, None, :]


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def compare(Z: np.ndarray, eps: float, tol: float, max_iter: int) -> dict:
    """Agreement and speed of Titterington and CVXPY on the problems Z (b, m, d)."""
    batch, t_batch = _timed(lambda: mvce.titterington(Z, eps, tol=tol, max_iter=max_iter))
    serial, t_serial = _timed(lambda: [mvce.titterington(z, eps, tol=tol, max_iter=max_iter)
                                       for z in Z])
    ref, t_ref = _timed(lambda: mvce.cvxpy_reference(Z, eps))
    # Titterington stopped as soon as its certificate is as good as CVXPY's solution's
    _, t_equal = _timed(lambda: [mvce.titterington(z, eps, tol=max(g, 1e-12), max_iter=max_iter)
                                 for z, g in zip(Z, ref.gap)])
    printed = mvce.titterington(Z, eps, tol=tol, max_iter=max_iter, update="printed")
    rel = np.abs(batch.logdet - ref.logdet) / np.maximum(1.0, np.abs(ref.logdet))
    same = all(np.array_equal(s.weights, batch.weights[i]) for i, s in enumerate(serial))
    b, m, d = Z.shape
    return {
        "m": m, "d": d, "r": min(m, d), "n_problems": b,
        "rel_logdet_diff_max": float(rel.max()),
        "rel_logdet_diff_median": float(np.median(rel)),
        "logdet_diff_max": float(np.abs(batch.logdet - ref.logdet).max()),
        "weight_diff_max": float(np.abs(batch.weights - ref.weights).max()),
        "titterington_gap_max": float(batch.gap.max()),
        "cvxpy_gap_max": float(ref.gap.max()),
        "titterington_iterations_mean": float(batch.n_iter.mean()),
        "titterington_iterations_max": int(batch.n_iter.max()),
        "titterington_converged": int(batch.converged.sum()),
        "cvxpy_iterations_mean": float(ref.n_iter.mean()),
        "cvxpy_optimal": int(ref.converged.sum()),
        "batch_equals_serial": int(same),
        "titterington_batch_time_s": t_batch,
        "titterington_serial_time_s": t_serial,
        "cvxpy_time_s": t_ref,
        "speed_ratio": t_ref / t_serial,
        "speed_ratio_batched": t_ref / t_batch,
        "titterington_equal_gap_time_s": t_equal,
        "speed_ratio_equal_gap": t_ref / t_equal,
        "printed_logdet_shortfall_mean": float(np.mean(batch.logdet - printed.logdet)),
        "printed_weight_sum_mean": float(printed.weights.sum(axis=1).mean()),
    }


def results(X: np.ndarray, config_value: dict | None) -> list[dict]:
    """One comparison per m of the settings that the data set can hold (m <= n - 1)."""
    s = settings(config_value)
    out = []
    for m in s["m"]:
        if m > X.shape[0] - 1:
            continue
        Z = neighbourhoods(X, int(m), int(s["queries"]), int(s["seed"]))
        out.append(compare(Z, float(s["eps"]), float(s["tol"]), int(s["max_iter"])))
    return out


def spec(benchmark: str, dataset: dict, preprocess: list, cache: str, config_value) -> dict:
    """What the check of one data set needs: `dataset` is {label, name}; `config_value` the
    config's `mvce_validation` entry (its `datasets` list is the config's business)."""
    chosen = {k: v for k, v in (config_value or {}).items() if k != "datasets"}
    return {"benchmark": benchmark, "dataset": dataset, "preprocess": preprocess,
            "settings": settings(chosen), "cache": cache}


def run(job: dict) -> dict:
    """The validation document of one data set (`spec`)."""
    from .. import data, records
    from ..run import preprocessing

    ds = data.load(job["dataset"]["name"], job["cache"])
    X, _, _ = preprocessing.fit_transform(job["preprocess"], ds.X, ds.X[:1])
    return {
        "kind": KIND, "schema_version": SCHEMA_VERSION, "benchmark": job["benchmark"],
        "dataset": {**job["dataset"], "n": int(X.shape[0]), "d": int(X.shape[1]),
                    "sha256": ds.meta["sha256"]},
        "preprocess": job["preprocess"], "settings": job["settings"],
        "results": results(X, job["settings"]),
        "environment": {"versions": records.package_versions(), "git_commit": records.git_commit()},
    }


def summary_lines(document: dict) -> list[str]:
    """One line per m for the job's log."""
    return [f"{document['dataset']['label']} m = {row['m']}: rel. log-det diff "
            f"{row['rel_logdet_diff_max']:.1e}, CVXPY / Titterington time "
            f"{row['speed_ratio']:.1f}" for row in document["results"]]


def tracked_runs(document: dict) -> list:
    """One MLflow run per (data set, m), identified by the benchmark, data set, preprocessing,
    settings and m."""
    from ..records.tracking import TrackedRun

    out = []
    for row in document["results"]:
        identity = {"benchmark": document["benchmark"], "dataset": document["dataset"],
                    "preprocess": document["preprocess"], "settings": document["settings"],
                    "m": row["m"]}
        label = document["dataset"]["label"]
        params = {"eps": document["settings"]["eps"], "tol": document["settings"]["tol"],
                  "queries": document["settings"]["queries"],
                  "preprocess": json.dumps(document["preprocess"]),
                  "dataset": document["dataset"]["name"]}
        tags = {voc.Tag.DATASET: label, voc.Tag.BENCHMARK: document["benchmark"],
                voc.Tag.GIT_COMMIT: document["environment"]["git_commit"]}
        out.append(TrackedRun(kind=KIND, benchmark=document["benchmark"], identity=identity,
                              name=f"{label} / MVCE check m={row['m']}", result=row,
                              volatile=VOLATILE, params=params, tags=tags))
    return out

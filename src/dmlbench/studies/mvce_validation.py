"""The MVCE validation of a data set: real query neighbourhoods solved by every MVCE solver
(`dmlbench.solvers.mvce.SOLVERS`: auto, newton, titterington) and by the CVXPY reference,
compared (log det, weights, gap certificates, time).

For each m of the settings, `queries` points are drawn (seeded) from the data set, preprocessed
as the benchmark configures it (fitted on the whole data set: this checks a solver, it
evaluates no classifier), and each one's m Euclidean nearest other points, minus the query, form
one problem. Each solver solves all of them in one batch and one at a time; CVXPY one at a
time; and each solver again, one at a time, stopped as soon as its duality gap is as small as
that of CVXPY's solution (the speed ratio at equal certified accuracy). The printed update
(Alg. 2 step 8 as printed) is run too, to show its shortfall.

A row's check passes when the reference solved every problem and every solver converged with
log det within `CHECK_RTOL` (relative) of it. A reference that fails on a problem (after the
fallback solvers of `mvce.cvxpy_reference`) fails the check: the row records how many and why,
the comparison uses the problems it did solve, and the benchmark goes on.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from .. import data, records
from .. import vocabulary as voc
from ..measure.neighbours import euclidean_kneighbors
from ..records.tracking import TrackedRun
from ..run import preprocessing
from ..solvers import mvce

KIND = voc.RunKind.MVCE_VALIDATION
SCHEMA_VERSION = 2
SCHEMA = Path(__file__).parents[1] / "schemas" / "mvce_validation.schema.json"
#: the solvers checked against CVXPY
SOLVERS = mvce.SOLVERS
#: largest relative log-det difference |L - L_CVXPY| / max(1, |L_CVXPY|) a passed check allows
CHECK_RTOL = 1e-6


def is_volatile(key: str) -> bool:
    """Whether a result field is a timing (excluded from the content hash of its run)."""
    return key.endswith("_time_s") or "speed_ratio" in key


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


def _reference(Z: np.ndarray, eps: float):
    """CVXPY on each problem: (results of the solved ones, their indices, failure messages,
    total time)."""
    solved, index, failures, total = [], [], [], 0.0
    for i, z in enumerate(Z):
        try:
            res, t = _timed(lambda z=z: mvce.cvxpy_reference(z, eps))
        except ValueError as exc:
            failures.append(f"problem {i}: {exc}")
            continue
        solved.append(res)
        index.append(i)
        total += t
    return solved, np.array(index, dtype=int), failures, total


def _solver_fields(name: str, Z: np.ndarray, eps: float, tol: float, max_iter: int, ref,
                   index: np.ndarray, t_ref: float) -> dict:
    cap = max_iter if name == "titterington" else None
    batch, t_batch = _timed(lambda: mvce.solve(Z, eps, tol=tol, max_iter=cap, solver=name))
    serial, t_serial = _timed(lambda: [mvce.solve(z, eps, tol=tol, max_iter=cap, solver=name)
                                       for z in Z])
    out = {
        "gap_max": float(batch.gap.max()),
        "iterations_mean": float(batch.n_iter.mean()),
        "iterations_max": int(batch.n_iter.max()),
        "converged": int(batch.converged.sum()),
        "batch_equals_serial": int(all(np.array_equal(s.weights, batch.weights[i])
                                       for i, s in enumerate(serial))),
        "batch_time_s": t_batch,
        "serial_time_s": t_serial,
    }
    if index.size:
        logdet = np.array([r.logdet for r in ref])
        rel = np.abs(batch.logdet[index] - logdet) / np.maximum(1.0, np.abs(logdet))
        weights = np.array([r.weights for r in ref])
        # the solver stopped as soon as its certificate is as good as CVXPY's solution's
        _, t_equal = _timed(lambda: [mvce.solve(Z[i], eps, tol=max(r.gap, 1e-12), max_iter=cap,
                                                solver=name) for i, r in zip(index, ref)])
        share = index.size / Z.shape[0]
        out.update({
            "rel_logdet_diff_max": float(rel.max()),
            "rel_logdet_diff_median": float(np.median(rel)),
            "logdet_diff_max": float(np.abs(batch.logdet[index] - logdet).max()),
            "weight_diff_max": float(np.abs(batch.weights[index] - weights).max()),
            "equal_gap_time_s": t_equal,
            "speed_ratio": t_ref / (share * t_serial),
            "speed_ratio_batched": t_ref / (share * t_batch),
            "speed_ratio_equal_gap": t_ref / t_equal,
        })
    return {f"{name}_{key}": value for key, value in out.items()}


def compare(Z: np.ndarray, eps: float, tol: float, max_iter: int) -> dict:
    """Agreement and speed of every solver and CVXPY on the problems Z (b, m, d)."""
    b, m, d = Z.shape
    ref, index, failures, t_ref = _reference(Z, eps)
    row = {"m": m, "d": d, "r": min(m, d), "n_problems": b,
           "reference_failures": len(failures), "reference_errors": failures,
           "cvxpy_time_s": t_ref}
    if ref:
        row.update({
            "reference_solver": "+".join(sorted({r.solver for r in ref})),
            "cvxpy_gap_max": float(max(r.gap for r in ref)),
            "cvxpy_iterations_mean": float(np.mean([r.n_iter for r in ref])),
            "cvxpy_optimal": int(sum(bool(r.converged) for r in ref)),
        })
    for name in SOLVERS:
        row.update(_solver_fields(name, Z, eps, tol, max_iter, ref, index, t_ref))
    diffs = [row.get(f"{name}_rel_logdet_diff_max") for name in SOLVERS]
    if ref:
        row["rel_logdet_diff_max"] = max(diffs)
        row["speed_ratio"] = row["auto_speed_ratio"]
    row["check_passed"] = int(not failures and all(x <= CHECK_RTOL for x in diffs)
                              and all(row[f"{name}_converged"] == b for name in SOLVERS))
    printed = mvce.titterington(Z, eps, tol=tol, max_iter=max_iter, update="printed")
    best = mvce.solve(Z, eps, tol=tol)
    row["printed_logdet_shortfall_mean"] = float(np.mean(best.logdet - printed.logdet))
    row["printed_weight_sum_mean"] = float(printed.weights.sum(axis=1).mean())
    return row


def results(X: np.ndarray, s: dict) -> list[dict]:
    """One comparison per m of the settings `s` (m, queries, eps, tol, max_iter, seed) that the
    data set can hold (m <= n - 1)."""
    out = []
    for m in s["m"]:
        if m > X.shape[0] - 1:
            continue
        Z = neighbourhoods(X, int(m), int(s["queries"]), int(s["seed"]))
        out.append(compare(Z, float(s["eps"]), float(s["tol"]), int(s["max_iter"])))
    return out


def spec(benchmark: str, dataset: dict, preprocess: list, cache: str, config_value: dict) -> dict:
    """What the check of one data set needs: `dataset` is {label, name}; `config_value` the
    checked config's `mvce_validation` entry, its defaults filled in from the config schema
    (its `datasets` list is the planner's business)."""
    settings = {k: v for k, v in config_value.items() if k != "datasets"}
    return {"benchmark": benchmark, "dataset": dataset, "preprocess": preprocess,
            "settings": settings, "cache": cache}


def run(job: dict) -> dict:
    """The validation document of one data set (`spec`)."""
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
    lines = []
    for row in document["results"]:
        status = ("passed" if row["check_passed"]
                  else f"FAILED ({row['reference_failures']} reference failures)")
        lines.append(f"{document['dataset']['label']} m = {row['m']}: check {status}, rel. log-det "
                     f"diff {row.get('rel_logdet_diff_max', float('nan')):.1e}, CVXPY / solver "
                     f"(auto) time {row.get('speed_ratio', float('nan')):.1f}")
    return lines


def tracked_runs(document: dict) -> list:
    """One MLflow run per (data set, m), identified by the benchmark, data set, preprocessing,
    settings and m."""
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
                              volatile=tuple(k for k in row if is_volatile(k)), params=params, tags=tags))
    return out

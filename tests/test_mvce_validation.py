"""The MVCE validation study: a well-conditioned CVXPY reference on badly scaled neighbourhoods,
its fallback solver, failed references recorded as failed checks (in the document and the
report) instead of crashing the benchmark, and every solver checked."""

import re

import cvxpy as cp
import numpy as np
import pandas as pd
import pytest

import mvce_reference as reference
from dmlbench import config
from dmlbench.report.base import Context
from dmlbench.report.sections import local_metrics as report_local
from dmlbench.solvers import mvce
from dmlbench.studies import mvce_validation


def settings(**value):
    """A config's `mvce_validation` entry with the schema's defaults filled in."""
    return config.with_defaults({"benchmark": "t", "datasets": {"iris": None}, "methods": {},
                                 "mvce_validation": value})["mvce_validation"]


def badly_scaled(seed, m=15, d=18, k=6):
    """Neighbours near a k-dimensional subspace, features on scales 1e-2 .. 1e2 (like raw
    segment): A's eigenvalues run from eps to about 1e5, where unpreconditioned Clarabel fails."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(m, k)) @ rng.normal(size=(k, d)) + 1e-3 * rng.normal(size=(m, d))
    return Z * 10.0 ** rng.uniform(-2, 2, size=d)


@pytest.mark.parametrize("seed, m", [(0, 15), (1, 30)])
def test_reference_solves_badly_scaled_neighbourhoods(seed, m):
    Z = badly_scaled(seed, m)
    ref = mvce.cvxpy_reference(Z, eps=1e-4)
    assert ref.solver == "cvxpy:CLARABEL" and ref.converged
    exact = reference.weights(Z, 1e-4)
    best = reference.logdet(Z, exact, 1e-4)
    assert abs(ref.logdet - best) <= 1e-7 * abs(best)
    assert ref.logdet == pytest.approx(reference.logdet(Z, ref.weights, 1e-4), abs=1e-8)


def _failing(solvers):
    """Problem.solve raising SolverError for the named CVXPY solvers."""
    original = cp.Problem.solve

    def solve(self, *args, **kwargs):
        if kwargs.get("solver") in solvers:
            raise cp.error.SolverError(f"Solver '{kwargs['solver']}' failed (test)")
        return original(self, *args, **kwargs)
    return solve


def test_reference_falls_back_to_scs(monkeypatch):
    monkeypatch.setattr(cp.Problem, "solve", _failing({"CLARABEL"}))
    Z = badly_scaled(2, 12, 6, 3)
    ref = mvce.cvxpy_reference(Z, eps=1e-4)
    assert ref.solver == "cvxpy:SCS"
    best = reference.logdet(Z, reference.weights(Z, 1e-4), 1e-4)
    assert abs(ref.logdet - best) <= 1e-3 * abs(best)  # SCS is a first-order method


def test_validation_checks_every_solver_on_badly_scaled_data():
    X = np.vstack([badly_scaled(s, 1, 18) for s in range(40)]) + badly_scaled(7, 40, 18, 5)
    rows = mvce_validation.results(X, settings(m=[5, 25], queries=2))
    for row in rows:
        assert row["check_passed"] == 1 and row["reference_failures"] == 0
        for solver in mvce.SOLVERS:
            assert row[f"{solver}_converged"] == 2
            assert row[f"{solver}_rel_logdet_diff_max"] <= mvce_validation.CHECK_RTOL


def test_a_failing_reference_is_a_failed_check_not_a_crash(monkeypatch):
    monkeypatch.setattr(cp.Problem, "solve", _failing(set(mvce.REFERENCE_SOLVERS)))
    X = np.random.default_rng(0).normal(size=(30, 4))
    rows = mvce_validation.results(X, settings(m=[3, 8], queries=2))
    for row in rows:
        assert row["check_passed"] == 0 and row["reference_failures"] == 2
        assert "CLARABEL" in row["reference_errors"][0] and "SCS" in row["reference_errors"][0]
        assert "rel_logdet_diff_max" not in row and row["newton_converged"] == 2


def test_report_names_failed_checks(monkeypatch, tmp_path):
    rows = [{"dataset": "segment", "m": 15.0, "d": 18.0, "r": 15.0, "n_problems": 3.0,
             "reference_failures": 3.0, "check_passed": 0.0, "newton_gap_max": 1e-8,
             "start_time": 1},
            {"dataset": "wine", "m": 5.0, "d": 13.0, "r": 5.0, "n_problems": 3.0,
             "reference_failures": 0.0, "check_passed": 1.0, "newton_gap_max": 1e-8,
             "newton_rel_logdet_diff_max": 1e-12, "rel_logdet_diff_max": 1e-12,
             "newton_speed_ratio": 500.0, "start_time": 2}]
    class Runs:
        def load_kind(self, kind):
            return pd.DataFrame(rows)

    ctx = Context(parents=pd.DataFrame(), splits=pd.DataFrame(), out_dir=tmp_path, hubness_k=10, ks=[1],
                  experiment="x", runs=Runs())
    section = report_local.mvce_check(ctx)
    notes = [b["text"] for b in section.blocks if b["kind"] == "note"]
    agreement, cost = [b for b in section.blocks if b["kind"] == "table"]
    table = agreement["html"]
    assert any(n.startswith("FAILED checks: segment m=15 ") for n in notes)
    assert table.count("FAILED") == 1 and table.count("passed") == 1
    # two narrower tables, every column in one of them, both linking the one exported table
    headers = [re.findall(r"<th>([^<]*)</th>", t["html"].split("</thead>")[0])[1:]
               for t in (agreement, cost)]
    assert headers == [["check", "d", "m", "r", "problems", "CVXPY failed",
                        "rel. Δ log det N", "gap N"], ["CVXPY / N"]]
    assert agreement["files"] == cost["files"] == {"CSV": "tables/mvce_check.csv",
                                                   "LaTeX": "tables/mvce_check.tex"}

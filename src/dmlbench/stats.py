"""Significance tests for comparing classifiers: the z-test for two proportions and the win /
tie / loss counts built on it (Abou-Moustafa 2017, sect. 5.3: "Out of 60 cases, and using a
z-test (for two proportions) with 0.05 significance level, MVEM was significantly better than
EUC ... in 42 ... cases")."""

from __future__ import annotations

import math

import pandas as pd
from scipy.stats import norm


def two_proportion_ztest(errors_a: float, n_a: float, errors_b: float, n_b: float
                         ) -> tuple[float, float]:
    """Pooled two-sided z-test of equal error rates: (z, p-value), z > 0 when a errs more.

    z = (p_a - p_b) / sqrt(p (1 - p) (1/n_a + 1/n_b)), p = (e_a + e_b) / (n_a + n_b): the test
    of statsmodels' `proportions_ztest` with its default pooled variance. When both rates are
    0 or both are 1 the variance is zero and the rates are equal: z = 0, p = 1.
    """
    if n_a <= 0 or n_b <= 0:
        raise ValueError(f"sample sizes must be > 0, got n_a = {n_a}, n_b = {n_b}")
    for name, e, n in (("errors_a", errors_a, n_a), ("errors_b", errors_b, n_b)):
        if not 0 <= e <= n:
            raise ValueError(f"{name} = {e} must be in [0, {n}]")
    p_a, p_b = errors_a / n_a, errors_b / n_b
    pooled = (errors_a + errors_b) / (n_a + n_b)
    var = pooled * (1.0 - pooled) * (1.0 / n_a + 1.0 / n_b)
    if var == 0.0:
        return 0.0, 1.0
    z = (p_a - p_b) / math.sqrt(var)
    return z, float(2.0 * norm.sf(abs(z)))


def outcome(errors_a: float, errors_b: float, n: float, alpha: float = 0.05) -> int:
    """+1 if a makes significantly fewer errors than b on the same n test cases, -1 if
    significantly more, 0 if the difference is not significant at level `alpha`."""
    z, p = two_proportion_ztest(errors_a, n, errors_b, n)
    if p >= alpha:
        return 0
    return 1 if z < 0 else -1


def win_tie_loss(errors: pd.DataFrame, n: pd.Series, reference: str,
                 alpha: float = 0.05) -> pd.DataFrame:
    """Win / tie / loss counts of `reference` against every other column of `errors`.

    `errors`: one row per case (e.g. (data set, k)), one column per method, holding the number
    of misclassified test points; `n`: the number of test points of each case (same index).
    A case missing for either method is not counted. Returns one row per other method with
    columns `better` (reference significantly better), `worse`, `tie`, `cases`.
    """
    if reference not in errors:
        raise ValueError(f"reference method {reference!r} is not a column of the error table")
    rows = {}
    for method in errors.columns:
        if method == reference:
            continue
        pair = errors[[reference, method]].dropna()
        results = [outcome(pair.at[case, reference], pair.at[case, method], n[case], alpha)
                   for case in pair.index]
        rows[method] = {"better": results.count(1), "worse": results.count(-1),
                        "tie": results.count(0), "cases": len(results)}
    return pd.DataFrame.from_dict(rows, orient="index",
                                  columns=["better", "worse", "tie", "cases"])

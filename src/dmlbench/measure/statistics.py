"""Statistical comparison of methods over data sets (Demsar 2006) and of two classifiers on one
test set.

Which test answers which question:
- `friedman`: do the methods differ at all, over the data sets? (ranks per data set; H0: all
  methods perform equally);
- `nemenyi_cd`: which methods differ? two methods whose mean ranks differ by more than the
  critical difference are significantly different (all pairs, alpha over the family);
- `wilcoxon_holm`: is method A better than method B, pair by pair, over the data sets? (signed
  ranks of the per-data-set differences; Holm's step-down correction for the many pairs);
- `ztest_two_proportions`: on one data set, do two classifiers' test accuracies differ? (the test
  of Abou-Moustafa 2017, section 5.3; independent-samples approximation, as the paper uses it).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from scipy import stats as sps


def friedman(scores: pd.DataFrame) -> tuple[float, float]:
    """Friedman chi-square and p-value of a data sets x methods table (higher = better).

    Needs at least 3 methods and 2 complete data sets; rows with a missing value are dropped.
    """
    table = scores.dropna(axis=0, how="any")
    if table.shape[1] < 3 or table.shape[0] < 2:
        raise ValueError(f"Friedman test needs >= 3 methods and >= 2 data sets, got {table.shape[1]} "
                         f"methods on {table.shape[0]} complete data sets")
    if np.all(table.to_numpy() == table.to_numpy()[:, :1]):
        return 0.0, 1.0  # every data set ties every method
    statistic, p = sps.friedmanchisquare(*[table[c].to_numpy() for c in table.columns])
    return float(statistic), float(p)


def mean_ranks(scores: pd.DataFrame) -> pd.Series:
    """Mean rank of each method over the complete data sets (1 = best; ties share ranks)."""
    table = scores.dropna(axis=0, how="any")
    return table.rank(axis=1, ascending=False).mean(axis=0).sort_values()


def nemenyi_cd(n_methods: int, n_datasets: int, alpha: float = 0.05) -> float:
    """Critical difference of mean ranks, q_alpha sqrt(k (k + 1) / (6 N)) (Demsar 2006, sec. 3.2.2),
    q_alpha the studentized range quantile over sqrt(2)."""
    if n_methods < 2 or n_datasets < 1:
        raise ValueError("the critical difference needs >= 2 methods and >= 1 data set")
    q = sps.studentized_range.ppf(1 - alpha, n_methods, np.inf) / np.sqrt(2)
    return float(q * np.sqrt(n_methods * (n_methods + 1) / (6.0 * n_datasets)))


def wilcoxon_holm(scores: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Pairwise Wilcoxon signed-rank tests over data sets with Holm's correction.

    One row per pair: median difference (a - b), raw and Holm-adjusted p-values, and the verdict.
    A pair whose differences are all zero gets p = 1.
    """
    from statsmodels.stats.multitest import multipletests

    table = scores.dropna(axis=0, how="any")
    rows = []
    for a, b in itertools.combinations(table.columns, 2):
        diff = table[a].to_numpy() - table[b].to_numpy()
        if np.all(diff == 0):
            p = 1.0
        else:
            p = float(sps.wilcoxon(table[a], table[b], zero_method="zsplit").pvalue)
        rows.append({"a": a, "b": b, "median_difference": float(np.median(diff)), "p": p})
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    reject, adjusted, _, _ = multipletests(frame["p"], alpha=alpha, method="holm")
    frame["p_holm"] = adjusted
    frame["significant"] = reject
    return frame


def ztest_two_proportions(acc_a: float, acc_b: float, n_a: int, n_b: int | None = None
                          ) -> tuple[float, float]:
    """z statistic and two-sided p-value for two accuracies measured on n_a and n_b test points
    (pooled proportion)."""
    n_b = n_a if n_b is None else n_b
    if n_a < 1 or n_b < 1:
        raise ValueError("the z-test needs at least one test point per classifier")
    pooled = (acc_a * n_a + acc_b * n_b) / (n_a + n_b)
    se = np.sqrt(pooled * (1 - pooled) * (1.0 / n_a + 1.0 / n_b))
    if se == 0:
        return 0.0, 1.0
    z = (acc_a - acc_b) / se
    return float(z), float(2 * sps.norm.sf(abs(z)))


def win_tie_loss(acc: pd.DataFrame, n_test: pd.DataFrame, reference: str,
                 alpha: float = 0.05) -> pd.DataFrame:
    """Win/tie/loss counts of `reference` against every other method over data sets, a win or
    loss being a z-test difference significant at `alpha` (Abou-Moustafa 2017, section 5.3).

    `acc` and `n_test` are data sets x methods tables (accuracy in [0, 1], test-set sizes).
    """
    rows = []
    for other in acc.columns.drop(reference):
        counts = {"win": 0, "tie": 0, "loss": 0}
        for ds in acc.index:
            a, b = acc.at[ds, reference], acc.at[ds, other]
            if pd.isna(a) or pd.isna(b):
                continue
            _, p = ztest_two_proportions(a, b, int(n_test.at[ds, reference]),
                                         int(n_test.at[ds, other]))
            counts["tie" if p >= alpha else ("win" if a > b else "loss")] += 1
        rows.append({"method": other, **counts})
    return pd.DataFrame(rows).set_index("method")

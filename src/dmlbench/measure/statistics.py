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
  of Abou-Moustafa 2017, section 5.3; independent-samples approximation, as the paper uses it);
- `paired_t_test`: the same question from the paired scores of the folds (the t-test over
  the folds of one cross-validation); `outcomes` counts wins, ties and losses from either;
- `bayesian_signed_rank`: over the data sets, how probable is it that A is practically better
  than B, practically equivalent (within a region of practical equivalence), or worse?
  (Benavoli et al. 2017; the comparison Suarez et al. 2021 report).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

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
    table = scores.dropna(axis=0, how="any")
    rows = []
    for a, b in itertools.combinations(table.columns, 2):
        diff = table[a].to_numpy() - table[b].to_numpy()
        p = 1.0 if np.all(diff == 0) else wilcoxon_p(diff)
        rows.append({"a": a, "b": b, "median_difference": float(np.median(diff)), "p": p})
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    reject, adjusted = holm(frame["p"].to_numpy(), alpha)
    frame["p_holm"] = adjusted
    frame["significant"] = reject
    return frame


def wilcoxon_holm_control(scores: pd.DataFrame, control: str,
                          alpha: float = 0.05) -> pd.DataFrame:
    """Wilcoxon signed-rank tests of every method against one `control` over the data sets,
    with Holm's correction over those m = methods - 1 comparisons (Demsar 2006, section 3.2.2;
    Garcia & Herrera 2008: a family of comparisons with a control is smaller than that of all
    pairs, so each test keeps more power).

    One row per other method (in the table's order): median difference (method - control),
    raw and Holm-adjusted p-values, and whether the difference is significant at `alpha`. A
    method whose differences are all zero gets p = 1.
    """
    table = scores.dropna(axis=0, how="any")
    if control not in table.columns:
        raise ValueError(f"the control {control!r} is not a column of the scores "
                         f"({', '.join(map(str, table.columns))})")
    rows = []
    for method in table.columns.drop(control):
        diff = table[method].to_numpy() - table[control].to_numpy()
        p = 1.0 if np.all(diff == 0) else wilcoxon_p(diff)
        rows.append({"method": method, "median_difference": float(np.median(diff)), "p": p})
    frame = pd.DataFrame(rows, columns=["method", "median_difference", "p"])
    if frame.empty:
        return frame
    frame["significant"], frame["p_holm"] = holm(frame["p"].to_numpy(), alpha)
    return frame[["method", "median_difference", "p", "p_holm", "significant"]]


def holm(p: np.ndarray, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Holm's step-down correction of the p-values `p` (Holm 1979): with the p-values sorted,
    p_(1) <= ... <= p_(m), the hypotheses before the first p_(i) > alpha / (m - i + 1) are
    rejected, and the adjusted p-values are max_{j <= i} (m - j + 1) p_(j), at most 1. Returns
    (rejected, adjusted) in the order of `p`: the values of statsmodels' `multipletests(p,
    alpha, "holm")`, which also collects the garbage (0.4 s a call in a report's process)."""
    p = np.asarray(p, dtype=float)
    m = p.size
    order = np.argsort(p)
    ordered = p[order]
    factors = np.arange(m, 0, -1)
    kept = ordered > alpha / factors
    first_kept = int(np.argmax(kept)) if kept.any() else m
    reject, adjusted = np.empty(m, dtype=bool), np.empty(m)
    reject[order] = np.arange(m) < first_kept
    adjusted[order] = np.minimum(np.maximum.accumulate(ordered * factors), 1.0)
    return reject, adjusted


#: up to this many differences with ties or zeros, scipy's `wilcoxon` ("auto") runs an exact
#: permutation test over all 2^n sign flips (2^13 < its 9999 resamples); above, the normal
#: approximation
_PERMUTATION_MAX_N = 13


def wilcoxon_p(diff: np.ndarray) -> float:
    """Two-sided p-value of the Wilcoxon signed-rank test of the paired differences `diff`
    with zeros split ("zsplit"): the value of ``scipy.stats.wilcoxon(diff, zero_method="zsplit")``.

    With ties or zeros and n <= 13, scipy runs an exact permutation test over the 2^n sign
    flips, calling its statistic once per flip (seconds per pair). The same test here: the
    ranks r_i of |d| do not change under a flip, so the statistic R+ of a flip is
    sum_i r_i b_i + (sum of the zeros' ranks) / 2, b_i in {0, 1} whether d_i ends positive,
    every b of the non-zero d_i equally likely (flipping a zero changes nothing); p is twice
    the smaller tail share, at most 1. Other cases go to scipy unchanged."""
    d = np.asarray(diff, dtype=np.float64)
    ranks = sps.rankdata(np.abs(d))
    ties_or_zeros = np.any(d == 0) or len(np.unique(np.abs(d))) < d.size
    if not ties_or_zeros or d.size > _PERMUTATION_MAX_N:
        return float(sps.wilcoxon(d, zero_method="zsplit").pvalue)
    zero_half = ranks[d == 0].sum() / 2
    nonzero = ranks[d != 0]
    observed = nonzero[d[d != 0] > 0].sum() + zero_half
    bits = (np.arange(2 ** nonzero.size)[:, None] >> np.arange(nonzero.size)) & 1
    null = bits @ nonzero + zero_half
    less, greater = np.mean(null <= observed), np.mean(null >= observed)
    return float(min(1.0, 2 * min(less, greater)))


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
    a = acc[reference].to_numpy(dtype=float)
    n_a = n_test[reference].to_numpy(dtype=float)
    rows = []
    for other in acc.columns.drop(reference):
        b = acc[other].to_numpy(dtype=float)
        both = ~(np.isnan(a) | np.isnan(b))
        _, p = _ztest_arrays(a[both], b[both], n_a[both].astype(np.int64),
                             n_test[other].to_numpy(dtype=float)[both].astype(np.int64))
        significant = p < alpha
        rows.append({"method": other, "win": int(np.sum(significant & (a[both] > b[both]))),
                     "tie": int(np.sum(~significant)),
                     "loss": int(np.sum(significant & ~(a[both] > b[both])))})
    return pd.DataFrame(rows).set_index("method")


def _ztest_arrays(acc_a: np.ndarray, acc_b: np.ndarray, n_a: np.ndarray, n_b: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """`ztest_two_proportions` of many pairs at once (the same operations, element by
    element)."""
    if np.any(n_a < 1) or np.any(n_b < 1):
        raise ValueError("the z-test needs at least one test point per classifier")
    pooled = (acc_a * n_a + acc_b * n_b) / (n_a + n_b)
    se = np.sqrt(pooled * (1 - pooled) * (1.0 / n_a + 1.0 / n_b))
    safe = np.where(se == 0, 1.0, se)
    z = np.where(se == 0, 0.0, (acc_a - acc_b) / safe)
    p = np.where(se == 0, 1.0, 2 * sps.norm.sf(np.abs(z)))
    return z, p


def paired_t_test(a, b) -> tuple[np.ndarray, np.ndarray]:
    """t statistic and two-sided p-value of the paired t-test of each row of `a` against the
    same row of `b` (cases x paired scores, e.g. the folds of one cross-validation): with the
    differences d_f = a_f - b_f of n pairs, t = mean(d) / (sd(d) / sqrt(n)), sd with n - 1
    degrees of freedom, p = 2 P(T_{n-1} > |t|) (the value of `scipy.stats.ttest_rel`). A row
    whose differences are all zero gets t = 0, p = 1 (scipy: NaN); one whose differences are
    one non-zero value gets t = +-inf, p = 0."""
    d = np.atleast_2d(np.asarray(a, dtype=float) - np.asarray(b, dtype=float))
    n = d.shape[1]
    if n < 2:
        raise ValueError(f"the paired t-test needs at least 2 pairs per row, got {n}")
    mean = d.mean(axis=1)
    sd = d.std(axis=1, ddof=1)
    constant = sd == 0
    t = mean / np.where(constant, 1.0, sd) * np.sqrt(n)
    t = np.where(constant, np.where(mean == 0, 0.0, np.copysign(np.inf, mean)), t)
    p = np.where(np.isinf(t), 0.0, 2 * sps.t.sf(np.abs(t), n - 1))
    return t, p


def outcomes(difference, significant) -> dict[str, int]:
    """Win / tie / loss counts of a reference against another method over cases: a win where
    the reference's score is higher (`difference` > 0) and the difference `significant`, a loss
    where it is lower and significant, a tie otherwise."""
    difference = np.asarray(difference, dtype=float)
    significant = np.asarray(significant, dtype=bool)
    return {"win": int(np.sum(significant & (difference > 0))),
            "tie": int(np.sum(~significant | (difference == 0))),
            "loss": int(np.sum(significant & (difference < 0)))}


@dataclass
class BayesianComparison:
    """Posterior of the Bayesian signed-rank test of A against B: the probabilities that A is
    practically better, that A and B are practically equivalent (rope), that B is better, and
    the Monte-Carlo samples of (theta_A, theta_rope, theta_B) they come from."""

    p_a: float
    p_rope: float
    p_b: float
    samples: np.ndarray


def bayesian_signed_rank(a, b, rope: float = 0.01, prior: float = 0.5, n_samples: int = 50_000,
                         random_state=0) -> BayesianComparison:
    """Bayesian signed-rank test of paired scores `a`, `b` (one per data set, higher = better).

    Benavoli, Corani, Demsar & Zaffalon, "Time for a change: a tutorial for comparing multiple
    classifiers through Bayesian analysis", JMLR 18 (2017), section 4.2 (from Benavoli et al.,
    ICML 2014): a Dirichlet-process posterior on the distribution of the differences z_i = b_i -
    a_i, with prior strength `prior` (s) on a pseudo-observation z_0 = 0 (the paper's s = 0.5,
    z_0 = 0). A draw w ~ Dirichlet(s, 1, ..., 1) over (z_0, ..., z_n) gives
        theta_A = sum_ij w_i w_j [z_i + z_j < -2 rope],  theta_B = sum_ij w_i w_j [z_i + z_j > 2 rope],
        theta_rope = 1 - theta_A - theta_B
    (pairs over all i, j, the signed-rank statistic's Walsh averages (z_i + z_j) / 2 against the
    rope). The reported probabilities are the shares of the `n_samples` draws in which each of
    the three is the largest. A sum exactly on a boundary counts one half to each side (baycomp's
    Heaviside convention). `random_state` seeds the draws: an int (numpy Generator), or any
    object with a ``dirichlet(alpha, size)`` method (a Generator or a legacy RandomState).
    """
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    if a.size != b.size or a.size == 0:
        raise ValueError(f"bayesian_signed_rank needs paired scores: got {a.size} and {b.size}")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("bayesian_signed_rank: scores must be finite (drop data sets on which "
                         "a method has no result)")
    if not rope >= 0:
        raise ValueError(f"rope must be >= 0 (a half-width on the score's scale), got {rope}")
    if not prior > 0:
        raise ValueError(f"prior (the Dirichlet-process strength s) must be > 0, got {prior}")
    if int(n_samples) != n_samples or n_samples < 1:
        raise ValueError(f"n_samples must be a positive integer, got {n_samples}")
    z = np.concatenate([[0.0], b - a])
    sums = z[:, None] + z[None, :]
    a_wins = _heaviside(-sums, 2 * rope)
    b_wins = _heaviside(sums, 2 * rope)
    rng = (np.random.default_rng(random_state) if random_state is None
           or isinstance(random_state, (int, np.integer)) else random_state)
    weights = rng.dirichlet(np.concatenate([[prior], np.ones(a.size)]), int(n_samples))
    # both quadratic forms w' H w of a draw from one product: (W [A | B]) * [W | W], row sums
    projected = weights @ np.concatenate([a_wins, b_wins], axis=1)
    theta_a = np.einsum("si,si->s", projected[:, :z.size], weights)
    theta_b = np.einsum("si,si->s", projected[:, z.size:], weights)
    samples = np.column_stack([theta_a, 1.0 - theta_a - theta_b, theta_b])
    p_a, p_rope, p_b = np.bincount(np.argmax(samples, axis=1), minlength=3) / len(samples)
    return BayesianComparison(float(p_a), float(p_rope), float(p_b), samples)


def _heaviside(values: np.ndarray, threshold: float) -> np.ndarray:
    """1 above `threshold`, 1/2 on it, 0 below."""
    return (values > threshold) + 0.5 * (values == threshold)

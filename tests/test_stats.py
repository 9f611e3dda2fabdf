"""Statistics over data sets against hand computations, published tables and statsmodels."""

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportions_ztest

from dmlbench.measure import statistics

SCORES = pd.DataFrame({"a": [0.9, 0.8, 0.7, 0.95, 0.85],
                       "b": [0.85, 0.82, 0.6, 0.9, 0.8],
                       "c": [0.7, 0.7, 0.65, 0.8, 0.75]},
                      index=[f"d{i}" for i in range(5)])


def test_friedman_matches_the_rank_formula():
    ranks = SCORES.rank(axis=1, ascending=False)
    n, k = ranks.shape
    R = ranks.mean(axis=0)
    chi2 = 12 * n / (k * (k + 1)) * (np.sum(R**2) - k * (k + 1) ** 2 / 4)
    statistic, p = statistics.friedman(SCORES)
    assert statistic == pytest.approx(chi2)
    assert 0 < p < 0.05


@pytest.mark.parametrize("k, q", [(2, 1.960), (3, 2.343), (4, 2.569), (5, 2.728), (6, 2.850),
                                  (7, 2.949), (8, 3.031), (9, 3.102), (10, 3.164)])
def test_nemenyi_cd_uses_demsar_table(k, q):
    # Demsar (2006), Table 5(a): critical values q_0.05 for the Nemenyi test
    assert statistics.nemenyi_cd(k, 12) == pytest.approx(q * np.sqrt(k * (k + 1) / 72), rel=2e-3)


def test_wilcoxon_holm_adjusts_in_step_down_order():
    frame = statistics.wilcoxon_holm(SCORES)
    assert len(frame) == 3
    order = np.argsort(frame["p"].to_numpy())
    m = len(frame)
    expected = np.maximum.accumulate([min(1, (m - i) * frame["p"].iloc[j])
                                      for i, j in enumerate(order)])
    np.testing.assert_allclose(frame["p_holm"].to_numpy()[order], expected)


def test_ztest_matches_statsmodels():
    z, p = statistics.ztest_two_proportions(0.9, 0.8, 200, 150)
    z_ref, p_ref = proportions_ztest([180, 120], [200, 150])
    assert z == pytest.approx(z_ref) and p == pytest.approx(p_ref)


def test_win_tie_loss_counts_significant_differences_only():
    acc = pd.DataFrame({"ref": [0.95, 0.90, 0.50], "other": [0.70, 0.89, 0.80]},
                       index=["x", "y", "z"])
    n = pd.DataFrame(300, index=acc.index, columns=acc.columns)
    counts = statistics.win_tie_loss(acc, n, "ref")
    assert counts.loc["other"].to_dict() == {"win": 1, "tie": 1, "loss": 1}


def test_friedman_needs_three_methods():
    with pytest.raises(ValueError, match=">= 3 methods"):
        statistics.friedman(SCORES[["a", "b"]])


def test_ztest_by_hand():
    # 90/100 against 80/100 correct: pooled p = 0.85, se = sqrt(0.85 * 0.15 * 2 / 100)
    z, p = statistics.ztest_two_proportions(0.9, 0.8, 100)
    assert z == pytest.approx(0.1 / np.sqrt(0.85 * 0.15 * 0.02))
    assert z == pytest.approx(1.980295, abs=1e-6) and p == pytest.approx(0.047670, abs=1e-6)
    assert statistics.ztest_two_proportions(1.0, 1.0, 40, 60) == (0.0, 1.0)

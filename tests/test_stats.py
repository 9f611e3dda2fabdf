"""The z-test for two proportions against a hand computation and statsmodels; win/tie/loss."""

import math

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportions_ztest

from dmlbench import stats


def test_ztest_by_hand():
    # 10/100 against 20/100: pooled p = 0.15, se = sqrt(0.15 * 0.85 * 2 / 100)
    z, p = stats.two_proportion_ztest(10, 100, 20, 100)
    se = math.sqrt(0.15 * 0.85 * 0.02)
    assert z == pytest.approx(-0.1 / se)
    assert z == pytest.approx(-1.980295, abs=1e-6)
    assert p == pytest.approx(math.erfc(abs(z) / math.sqrt(2)))
    assert p == pytest.approx(0.047670, abs=1e-6)
    assert stats.outcome(10, 20, 100) == 1 and stats.outcome(20, 10, 100) == -1
    assert stats.outcome(10, 20, 100, alpha=0.01) == 0


@pytest.mark.parametrize("e_a, n_a, e_b, n_b", [(3, 150, 9, 150), (45, 345, 38, 345),
                                                (120, 768, 150, 700), (0, 50, 4, 50)])
def test_ztest_equals_statsmodels(e_a, n_a, e_b, n_b):
    z, p = stats.two_proportion_ztest(e_a, n_a, e_b, n_b)
    z_ref, p_ref = proportions_ztest([e_a, e_b], [n_a, n_b])
    assert z == pytest.approx(z_ref, rel=1e-12) and p == pytest.approx(p_ref, rel=1e-10)


def test_equal_degenerate_rates_are_a_tie():
    assert stats.two_proportion_ztest(0, 40, 0, 60) == (0.0, 1.0)
    assert stats.two_proportion_ztest(40, 40, 60, 60) == (0.0, 1.0)


def test_bad_counts_are_named():
    with pytest.raises(ValueError, match="errors_b = 11"):
        stats.two_proportion_ztest(1, 10, 11, 10)
    with pytest.raises(ValueError, match="sample sizes"):
        stats.two_proportion_ztest(0, 0, 0, 10)


def test_win_tie_loss_counts():
    cases = pd.MultiIndex.from_tuples([("a", 1), ("a", 3), ("b", 1), ("b", 3)])
    errors = pd.DataFrame({"rmvem": [10, 10, 30, 5], "euc": [20, 11, 10, np.nan],
                           "lmnn": [30, 30, 30, 30]}, index=cases)
    n = pd.Series(100, index=cases)
    table = stats.win_tie_loss(errors, n, "rmvem")
    assert table.loc["euc"].tolist() == [1, 1, 1, 3]      # better, worse, tie, cases
    assert table.loc["lmnn"].tolist() == [3, 0, 1, 4]
    with pytest.raises(ValueError, match="reference method 'x'"):
        stats.win_tie_loss(errors, n, "x")

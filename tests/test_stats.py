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



def test_wilcoxon_holm_against_the_control_by_hand():
    """Six data sets, the control at 0.5 everywhere. m1 gains 1..6 points (all signs +: exact
    two-sided p = 2 / 2^6 = 0.03125), m2 loses the smallest (R- = 1: p = 2 x 2/64 = 0.0625), m3
    the second smallest (R- = 2: P(R- <= 2) = 3/64, p = 0.09375), m4 equals the control (p = 1).
    Holm over the m = 4 comparisons: sorted p times (m - i + 1) = 0.125, 0.1875, 0.1875, 1,
    running max, capped at 1; rejected at alpha 0.2: p_(i) <= 0.2 / (m - i + 1) for the first
    three (0.05, 0.0667, 0.1), not for p = 1."""
    gains = np.arange(1, 7) / 100
    scores = pd.DataFrame({"euc": 0.5, "m1": 0.5 + gains,
                           "m2": 0.5 + gains * [-1, 1, 1, 1, 1, 1],
                           "m3": 0.5 + gains * [1, -1, 1, 1, 1, 1], "m4": 0.5},
                          index=[f"d{i}" for i in range(6)])
    frame = statistics.wilcoxon_holm_control(scores, "euc").set_index("method")
    assert list(frame.index) == ["m1", "m2", "m3", "m4"]
    np.testing.assert_allclose(frame["p"], [2 / 64, 4 / 64, 6 / 64, 1.0], rtol=1e-12)
    np.testing.assert_allclose(frame["p_holm"], [0.125, 0.1875, 0.1875, 1.0], rtol=1e-12)
    np.testing.assert_allclose(frame["median_difference"], [0.035, 0.035, 0.035, 0.0])
    assert not frame["significant"].any()  # alpha 0.05: 0.03125 > 0.05 / 4
    loose = statistics.wilcoxon_holm_control(scores, "euc", alpha=0.2)
    assert list(loose["significant"]) == [True, True, True, False]
    # the all-pairs family (10 pairs) adjusts the same p-values more
    pairs = statistics.wilcoxon_holm(scores).set_index(["a", "b"])
    assert pairs.loc[("euc", "m1"), "p_holm"] > frame.loc["m1", "p_holm"]


def test_the_control_must_be_a_column():
    with pytest.raises(ValueError, match="control 'x'"):
        statistics.wilcoxon_holm_control(SCORES, "x")


@pytest.mark.parametrize("seed", range(4))
def test_holm_matches_statsmodels(seed):
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(seed)
    p = np.concatenate([rng.uniform(0, 0.05, 6), rng.uniform(0, 1, 20), [0.01, 0.01, 1.0]])
    rng.shuffle(p)
    for alpha in (0.05, 0.2):
        reject, adjusted, _, _ = multipletests(p, alpha=alpha, method="holm")
        ours = statistics.holm(p, alpha)
        np.testing.assert_array_equal(ours[0], reject)
        np.testing.assert_allclose(ours[1], adjusted, rtol=1e-15)

@pytest.mark.parametrize("seed", range(2))
def test_wilcoxon_p_matches_scipy_with_ties_and_zeros(seed):
    """Accuracy differences on a grid of 1/100 have ties and zeros: scipy's exact permutation
    route (n <= 13), its normal approximation (n > 13) and its exact route (no ties)."""
    from scipy import stats as sps

    rng = np.random.default_rng(seed)
    for n in (5, 9, 12, 16):
        d = rng.integers(-4, 5, n) / 100.0
        if np.all(d == 0):
            continue
        assert statistics.wilcoxon_p(d) == pytest.approx(
            sps.wilcoxon(d, zero_method="zsplit").pvalue, rel=1e-12)
    d = rng.normal(size=10)
    assert statistics.wilcoxon_p(d) == pytest.approx(
        sps.wilcoxon(d, zero_method="zsplit").pvalue, rel=1e-12)


def test_wilcoxon_p_by_enumerating_the_sign_flips():
    """d = (0, 1, -1, 2): ranks of |d| 1, 2.5, 2.5, 4, the zero's half rank 0.5 on each side;
    R+ = 0.5 + 2.5 + 4 = 7; over the 16 sign flips, P(R+ >= 7) and P(R+ <= 7), doubled."""
    import itertools

    d = np.array([0.0, 1.0, -1.0, 2.0])
    ranks = np.array([1.0, 2.5, 2.5, 4.0])
    null = [0.5 + sum(r for r, s, x in zip(ranks, signs, d) if s * x > 0)
            for signs in itertools.product((1, -1), repeat=4)]
    observed = 7.0
    expected = min(1.0, 2 * min(np.mean(np.array(null) >= observed),
                                np.mean(np.array(null) <= observed)))
    assert statistics.wilcoxon_p(d) == pytest.approx(expected)


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


# ---- Bayesian signed-rank test (Benavoli et al. 2017)

def test_bayesian_signed_rank_closed_forms_for_one_data_set():
    # n = 1: weights (w0, w1) ~ Dirichlet(s, 1), z0 = 0, z1 = b - a. If z1 > 2 rope, theta_B =
    # 1 - w0^2 and B wins iff w0 < 1/sqrt(2): P = 2^(-s/2). If rope < z1 < 2 rope, only the pair
    # (1, 1) lies beyond the rope: theta_B = w1^2 wins iff w1 > 1/sqrt(2): P = (1 - 2^(-1/2))^s.
    s, n = 0.5, 400_000
    tol = 4 * np.sqrt(0.25 / n)
    far = statistics.bayesian_signed_rank([0.50], [0.60], rope=0.01, prior=s, n_samples=n)
    assert far.p_b == pytest.approx(2 ** (-s / 2), abs=tol)
    assert far.p_a == 0 and far.p_rope == pytest.approx(1 - far.p_b)
    near = statistics.bayesian_signed_rank([0.50], [0.515], rope=0.01, prior=s, n_samples=n,
                                           random_state=1)
    assert near.p_b == pytest.approx((1 - 2 ** -0.5) ** s, abs=tol)
    other_prior = statistics.bayesian_signed_rank([0.6], [0.5], rope=0.01, prior=2.0,
                                                  n_samples=n, random_state=2)
    assert other_prior.p_a == pytest.approx(2 ** -1.0, abs=tol)  # mirrored, s = 2


def test_bayesian_signed_rank_is_seeded_symmetric_and_sums_to_one():
    rng = np.random.default_rng(4)
    a = rng.uniform(0.6, 0.9, 15)
    b = a + rng.normal(0.01, 0.02, 15)
    one = statistics.bayesian_signed_rank(a, b, random_state=7, n_samples=20_000)
    again = statistics.bayesian_signed_rank(a, b, random_state=7, n_samples=20_000)
    swapped = statistics.bayesian_signed_rank(b, a, random_state=7, n_samples=20_000)
    assert (one.p_a, one.p_rope, one.p_b) == (again.p_a, again.p_rope, again.p_b)
    assert swapped.p_a == pytest.approx(one.p_b) and swapped.p_b == pytest.approx(one.p_a)
    assert one.p_a + one.p_rope + one.p_b == pytest.approx(1)
    np.testing.assert_allclose(one.samples.sum(axis=1), 1)
    assert one.samples.shape == (20_000, 3) and one.samples.min() >= -1e-12
    wide = statistics.bayesian_signed_rank(a, b, rope=0.5, n_samples=1000)
    assert wide.p_rope == 1


def test_bayesian_signed_rank_equals_baycomp_on_the_same_draws():
    baycomp = pytest.importorskip("baycomp")
    rng = np.random.default_rng(1)
    a = rng.uniform(0.6, 0.9, 18)
    b = a + rng.normal(0.01, 0.02, 18)
    for rope in (0.01, 0.0):
        ours = statistics.bayesian_signed_rank(a, b, rope=rope, n_samples=20_000,
                                               random_state=np.random.RandomState(0))
        theirs = baycomp.SignedRankTest.probs(a, b, rope=rope, nsamples=20_000, random_state=0)
        if rope == 0:  # baycomp then returns (left, right) only
            theirs = (theirs[0], 0.0, theirs[1])
        np.testing.assert_allclose((ours.p_a, ours.p_rope, ours.p_b), theirs, atol=2e-3)


@pytest.mark.parametrize("kwargs, message", [
    ({"a": [0.5, 0.6], "b": [0.5]}, "paired scores"),
    ({"a": [0.5, np.nan], "b": [0.5, 0.6]}, "must be finite"),
    ({"rope": -0.1}, "rope must be >= 0"),
    ({"prior": 0.0}, "prior .* must be > 0"),
    ({"n_samples": 0}, "n_samples must be a positive integer"),
])
def test_bayesian_signed_rank_bad_input_is_named(kwargs, message):
    args = {"a": [0.5, 0.6], "b": [0.55, 0.6], **kwargs}
    with pytest.raises(ValueError, match=message):
        statistics.bayesian_signed_rank(**args)

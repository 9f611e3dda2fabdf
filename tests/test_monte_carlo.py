"""The Monte-Carlo error of a posterior probability from Markov chains (`measure.monte_carlo`)
against closed forms: a two-state Markov chain (the indicator of an event, autocorrelation
lambda^t with lambda = 1 - a - b), an AR(1) chain (autocorrelation phi^t) and independent
draws; and the rule that settles a verdict at a threshold."""

import numpy as np
import pytest

from dmlbench.measure import monte_carlo as mc


def two_state_chains(p: float, lam: float, chains: int, n: int, rng) -> np.ndarray:
    """chains x n draws of the indicator of a stationary two-state Markov chain with
    P(1) = p and lag-t autocorrelation lam^t: P(0 -> 1) = a, P(1 -> 0) = b, a + b = 1 - lam,
    p = a / (a + b)."""
    a, b = p * (1 - lam), (1 - p) * (1 - lam)
    state = rng.random(chains) < p  # the stationary start
    out = np.empty((chains, n))
    for t in range(n):
        out[:, t] = state
        u = rng.random(chains)
        state = np.where(state, u >= b, u < a)
    return out


def integrated_time(lam: float) -> float:
    """1 + 2 sum_t lam^t = (1 + lam) / (1 - lam): n / ESS of the mean of such a chain."""
    return (1 + lam) / (1 - lam)


@pytest.mark.parametrize("lam", [0.0, 0.5, 0.8])
def test_effective_sample_size_of_a_two_state_chain_is_the_closed_form(lam):
    rng = np.random.default_rng(1)
    draws = two_state_chains(0.95, lam, 4, 50_000, rng)
    expected = draws.size / integrated_time(lam)
    assert mc.effective_sample_size(draws) == pytest.approx(expected, rel=0.1)


def test_effective_sample_size_of_ar1_chains_is_the_closed_form():
    rng = np.random.default_rng(2)
    phi, chains, n = 0.9, 4, 40_000
    x = np.empty((chains, n))
    x[:, 0] = rng.normal(size=chains) / np.sqrt(1 - phi**2)
    noise = rng.normal(size=(chains, n))
    for t in range(1, n):
        x[:, t] = phi * x[:, t - 1] + noise[:, t]
    assert mc.effective_sample_size(x) == pytest.approx(chains * n * (1 - phi) / (1 + phi),
                                                        rel=0.1)


def test_the_standard_error_is_the_spread_of_the_estimate_over_independent_runs():
    """200 runs of 4 chains x 2 000 draws of a two-state chain at p = 0.95, lambda = 0.8: the
    reported standard errors average sqrt(p (1 - p) tau / n) and match the estimate's sd over
    the runs."""
    rng = np.random.default_rng(3)
    p, lam, runs, chains, n = 0.95, 0.8, 200, 4, 2_000
    draws = two_state_chains(p, lam, runs * chains, n, rng).reshape(runs, chains, n)
    estimates, errors = [], []
    for run in draws:
        probs, se = mc.probabilities(run.astype(int), 2)
        estimates.append(probs[1])
        errors.append(se[1])
    analytic = np.sqrt(p * (1 - p) * integrated_time(lam) / (chains * n))
    assert np.mean(errors) == pytest.approx(analytic, rel=0.1)
    assert np.std(estimates, ddof=1) == pytest.approx(analytic, rel=0.2)
    assert np.mean(estimates) == pytest.approx(p, abs=4 * analytic / np.sqrt(runs))


def test_independent_draws_have_the_binomial_standard_error():
    rng = np.random.default_rng(4)
    outcomes = rng.choice(3, size=(4, 5_000), p=[0.7, 0.2, 0.1])
    probs, se = mc.probabilities(outcomes, 3)
    np.testing.assert_allclose(probs.sum(), 1.0)
    np.testing.assert_allclose(se, np.sqrt(probs * (1 - probs) / outcomes.size), rtol=0.1)


def test_an_outcome_that_always_or_never_comes_out_has_no_error():
    outcomes = np.zeros((4, 100), dtype=int)
    probs, se = mc.probabilities(outcomes, 3)
    assert list(probs) == [1.0, 0.0, 0.0] and list(se) == [0.0, 0.0, 0.0]
    assert mc.effective_sample_size(np.ones((2, 10))) == 20.0


def test_chains_that_disagree_lower_the_effective_sample_size():
    """Two chains stuck at different values: the between-chain variance enters var+, so the
    ESS is far below the draws' count (each chain alone has no variance at all)."""
    rng = np.random.default_rng(5)
    draws = np.vstack([rng.normal(0, 0.01, 1000), rng.normal(1, 0.01, 1000)])
    assert mc.effective_sample_size(draws) < 20


def test_clear_of_needs_margin_standard_errors():
    assert mc.clear_of(0.96, 0.003, 0.95)  # 3.3 s.e. above
    assert not mc.clear_of(0.957, 0.003, 0.95)  # 2.3 s.e. above
    assert not mc.clear_of(0.948, 0.001, 0.95)
    assert mc.clear_of(0.5, 0.01, 0.95)
    assert mc.clear_of(1.0, 0.0, 0.95)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="at least 4 draws"):
        mc.effective_sample_size(np.zeros((2, 3)))

"""The Monte-Carlo error of a posterior probability estimated from Markov chains, and the rule
that says whether a verdict at a threshold is settled by the draws or hangs on them.

A posterior probability P(E) is estimated by the share of the draws in which E holds: the mean
of the indicator draws I_t = [E at draw t]. Its Monte-Carlo standard error is
sd(I) / sqrt(ESS), sd(I) = sqrt(p (1 - p)), with ESS the effective sample size of the indicator
draws over all chains: Stan's estimator (Vehtari, Gelman, Simpson, Carpenter & Buerkner 2021,
"Rank-normalization, folding, and localization: an improved R-hat", Bayesian Analysis 16(2),
section 3.2, eqs. 10-11; the Stan reference manual, "Effective sample size"): the
autocorrelations of each chain combined through the multi-chain variance estimate var+ (so that
chains that disagree lower the ESS), summed over Geyer's initial monotone sequence (Geyer 1992).

Why the ESS and not batch means: the ESS adapts to the autocorrelation of each comparison (the
hierarchical sampler's slowest parameter, nu, sets it, and how slowly varies from one pair of
methods to another) without a batch length to choose, it is what R-hat's authors recommend for
the error of a probability (the mean of an indicator, their section 4.3), and with few
batches per chain the batch-means error is itself noisy (a chi-square of few degrees of
freedom). tests/test_monte_carlo.py checks the standard error against the closed form of a
two-state Markov chain (autocorrelation (1 - a - b)^t, so ESS = n (a + b) / (2 - a - b)).

The rule (`clear_of`): a probability p with standard error se is clear of a threshold when
|p - threshold| >= margin * se (margin 3: a probability truly at the threshold is called clear
with chance 0.0027 at one look, under 1.5 % over the five looks of doubling draws from 4 to 64
chains).
"""

from __future__ import annotations

import numpy as np

#: standard errors a probability must lie from the threshold to settle a verdict
MARGIN = 3.0


def effective_sample_size(draws) -> float:
    """Effective sample size of the mean of `draws` (chains x draws per chain, at least 4 draws
    per chain): Stan's multi-chain estimator with Geyer's initial monotone sequence (the
    module's docstring). Draws without variance give chains x draws."""
    draws = np.atleast_2d(np.asarray(draws, dtype=float))
    chains, n = draws.shape
    if n < 4:
        raise ValueError(f"the effective sample size needs at least 4 draws per chain, got {n}")
    centred = draws - draws.mean(axis=1, keepdims=True)
    size = 1 << int(2 * n - 1).bit_length()  # zero padding: no circular wrap-around
    spectrum = np.fft.rfft(centred, size, axis=1)
    acov = np.fft.irfft(spectrum * np.conj(spectrum), size, axis=1)[:, :n] / n  # biased, 1/n
    within = acov[:, 0].mean() * n / (n - 1)  # W: the mean of the chains' variances (ddof 1)
    var_plus = within * (n - 1) / n + (draws.mean(axis=1).var(ddof=1) if chains > 1 else 0.0)
    if var_plus <= 0:
        return float(chains * n)
    rho = 1.0 - (within - acov.mean(axis=0)) / var_plus  # rho[0] = 1
    # Geyer: sums of adjacent pairs Gamma_j = rho[2j] + rho[2j + 1], kept while positive,
    # then made non-increasing
    pairs = rho[: 2 * ((n - 1) // 2)].reshape(-1, 2).sum(axis=1)
    positive = np.flatnonzero(pairs <= 0)
    pairs = pairs[: positive[0]] if positive.size else pairs
    pairs = np.minimum.accumulate(pairs)
    tau = -1.0 + 2.0 * pairs.sum()
    # Stan's floor: tau >= 1 / log10(chains x n), an ESS at most a few times chains x n
    tau = max(tau, 1.0 / np.log10(chains * n))
    return float(chains * n / tau)


def probabilities(outcomes, n_outcomes: int) -> tuple[np.ndarray, np.ndarray]:
    """(p, se) of each outcome 0 .. n_outcomes - 1 from `outcomes` (chains x draws of outcome
    indices): the share of the draws in which it came out, and the Monte-Carlo standard error
    of that share, sqrt(p (1 - p) / ESS) with the ESS of its indicator draws."""
    outcomes = np.atleast_2d(np.asarray(outcomes))
    p, se = np.zeros(n_outcomes), np.zeros(n_outcomes)
    for j in range(n_outcomes):
        indicator = (outcomes == j).astype(float)
        p[j] = indicator.mean()
        if 0.0 < p[j] < 1.0:
            se[j] = np.sqrt(p[j] * (1.0 - p[j]) / effective_sample_size(indicator))
    return p, se


def clear_of(p: float, se: float, threshold: float, margin: float = MARGIN) -> bool:
    """Whether the estimate `p` (standard error `se`) lies at least `margin` standard errors
    from `threshold`: which side of it the true probability is on does not hang on the draws."""
    return abs(p - threshold) >= margin * se

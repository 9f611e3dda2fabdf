"""The Gibbs sampler of `hierarchical` (the Bayesian hierarchical test), compiled (numba): one
chain at a time, a data set at a time, the steps and their order as that module's docstring
gives them. A chain's random numbers come from numba's generator seeded with the chain's seed
(drawn from the caller's numpy Generator), so a run is reproducible.

The data are per test (rows) and data set (columns): the scaled means, sums of squares, fold
counts and the likelihood's constants c = (1 + (n - 1) rho) / n and e = 1 / (1 - rho); the
bounds per test: |delta0| < delta_hi, sigma_i < sigma_hi, std0 < std0_hi. The prior of
u = log(nu - 1) is tabulated on a uniform grid (first point, step, values).
"""

from __future__ import annotations

import math

import numba
import numpy as np

#: slice sampling (Neal 2003): initial width of the bracket and most steps out per side
WIDTH, STEPS = 2.0, 20
#: which log density a slice update samples
STD0_DELTA_OUT, STD0_LAMBDA_OUT, NU = 0, 1, 2


@numba.njit(cache=True)
def sample(mean, ss, n, c, e, delta_hi, sigma_hi, std0_hi, seeds, warmup, keep, grid0,
           grid_step, table, out):
    """Fill `out` (tests x chains x 3 x keep) with the draws of (delta0, std0, nu) of every
    chain (`seeds`: tests x chains), after `warmup` iterations each."""
    tests, q = mean.shape
    chains = seeds.shape[1]
    delta = np.empty(q)
    sigma2 = np.empty(q)
    lam = np.empty(q)
    var = np.empty(q)
    work = np.empty(q)
    for t in range(tests):
        m, s_ss, s_n, s_c, s_e = mean[t], ss[t], n[t], c[t], e[t]
        lo, hi = -delta_hi[t], delta_hi[t]
        sigma_low = 1.0 / sigma_hi[t] ** 2
        log_std0_hi = math.log(std0_hi[t])
        for chain in range(chains):
            np.random.seed(seeds[t, chain])
            # a dispersed start
            spread_data = 0.0
            for i in range(q):
                sigma2[i] = s_ss[i] / max(s_n[i] - 1.0, 1.0) * np.random.uniform(0.5, 2.0) + 1e-12
                delta[i] = m[i] + math.sqrt(s_c[i] * sigma2[i]) * np.random.standard_normal()
                spread_data += s_c[i] * sigma2[i] / q
            spread = max(np.std(m), math.sqrt(spread_data))
            delta0 = min(max(np.mean(m) + spread * np.random.standard_normal(), lo), hi)
            std0 = min(spread * np.random.uniform(0.5, 2.0), std0_hi[t])
            log_nu1 = math.log(np.random.gamma(np.random.uniform(1.0, 2.0), 1.0)
                               / np.random.uniform(0.01, 0.1))
            for it in range(warmup + keep):
                nu = 1.0 + math.exp(log_nu1)
                # lambda | delta: the t prior's mixing weights
                for i in range(q):
                    z = (delta[i] - delta0) / std0
                    lam[i] = np.random.gamma((nu + 1.0) / 2.0, 2.0 / (nu + z * z))
                    var[i] = s_c[i] * sigma2[i]
                # delta integrated out: delta0 given std0 (truncated normal), then log std0
                total = 0.0
                weighted = 0.0
                for i in range(q):
                    w = 1.0 / (var[i] + std0 * std0 / lam[i])
                    total += w
                    weighted += w * m[i]
                while True:  # the centre lies within the bounds: most draws are accepted
                    delta0 = weighted / total + np.random.standard_normal() / math.sqrt(total)
                    if lo < delta0 < hi:
                        break
                for i in range(q):
                    work[i] = m[i] - delta0
                std0 = math.exp(_slice(STD0_DELTA_OUT, math.log(std0), work, var, lam, 0.0,
                                       log_std0_hi, grid0, grid_step, table))
                # delta_i | lambda, sigma, delta0, std0
                for i in range(q):
                    prior_prec = lam[i] / (std0 * std0)
                    prec = prior_prec + 1.0 / var[i]
                    delta[i] = ((prior_prec * delta0 + m[i] / var[i]) / prec
                                + np.random.standard_normal() / math.sqrt(prec))
                # 1/sigma_i^2 | delta_i: Gamma((n - 1)/2, rate Q/2), sigma_i < sigma_hi
                for i in range(q):
                    quad = s_e[i] * s_ss[i] + (m[i] - delta[i]) ** 2 / s_c[i]
                    while True:  # the bound excludes a share of about 1e-6 or less
                        g = np.random.gamma((s_n[i] - 1.0) / 2.0, 2.0 / quad)
                        if g > sigma_low:
                            break
                    sigma2[i] = 1.0 / g
                # lambda integrated out: log std0, then log(nu - 1), given the delta_i
                for i in range(q):
                    work[i] = (delta[i] - delta0) ** 2
                std0 = math.exp(_slice(STD0_LAMBDA_OUT, math.log(std0), work, var, lam, nu,
                                       log_std0_hi, grid0, grid_step, table))
                for i in range(q):
                    work[i] = work[i] / (std0 * std0)
                log_nu1 = _slice(NU, log_nu1, work, var, lam, nu, 0.0, grid0, grid_step,
                                 table)
                if it >= warmup:
                    out[t, chain, 0, it - warmup] = delta0
                    out[t, chain, 1, it - warmup] = std0
                    out[t, chain, 2, it - warmup] = 1.0 + math.exp(log_nu1)


@numba.njit(cache=True)
def _log_density(kind, x, work, var, lam, nu, log_high, grid0, grid_step, table):
    """The log density a slice update samples (up to a constant):
    STD0_DELTA_OUT: s = log std0 given delta0, sigma, lambda (`work`: mean_i - delta0), the
      means N(delta0, var_i + std0^2 / lambda_i), the uniform prior's Jacobian exp(s);
    STD0_LAMBDA_OUT: s = log std0 given the (delta_i - delta0)^2 (`work`) and nu, the
      t_nu(delta0, std0) densities;
    NU: u = log(nu - 1) given the standardised z_i^2 (`work`), the t_nu densities and the
      tabulated prior of u."""
    q = work.shape[0]
    if kind == NU:
        position = (x - grid0) / grid_step
        if position < 0.0 or position > table.shape[0] - 1:
            return -np.inf
        index = min(int(position), table.shape[0] - 2)
        fraction = position - index
        value = (1.0 - fraction) * table[index] + fraction * table[index + 1]
        v = 1.0 + math.exp(x)
        tail = 0.0
        for i in range(q):
            tail += math.log1p(work[i] / v)
        return value + q * (math.lgamma((v + 1.0) / 2.0) - math.lgamma(v / 2.0)
                            - 0.5 * math.log(v)) - (v + 1.0) / 2.0 * tail
    if x >= log_high:
        return -np.inf
    std2 = math.exp(2.0 * x)
    total = 0.0
    if kind == STD0_DELTA_OUT:
        for i in range(q):
            s2 = var[i] + std2 / lam[i]
            total += -0.5 * (math.log(s2) + work[i] ** 2 / s2)
        return x + total
    for i in range(q):
        total += math.log1p(work[i] / (std2 * nu))
    return x * (1.0 - q) - (nu + 1.0) / 2.0 * total


@numba.njit(cache=True)
def _slice(kind, x, work, var, lam, nu, log_high, grid0, grid_step, table):
    """One slice-sampling update of x (stepping out, then shrinkage)."""
    level = (_log_density(kind, x, work, var, lam, nu, log_high, grid0, grid_step, table)
             - np.random.exponential(1.0))
    left = x - WIDTH * np.random.random()
    right = left + WIDTH
    for _ in range(STEPS):
        if _log_density(kind, left, work, var, lam, nu, log_high, grid0, grid_step,
                        table) <= level:
            break
        left -= WIDTH
    for _ in range(STEPS):
        if _log_density(kind, right, work, var, lam, nu, log_high, grid0, grid_step,
                        table) <= level:
            break
        right += WIDTH
    while True:
        proposal = left + (right - left) * np.random.random()
        if _log_density(kind, proposal, work, var, lam, nu, log_high, grid0, grid_step,
                        table) > level:
            return proposal
        if proposal < x:
            left = proposal
        else:
            right = proposal

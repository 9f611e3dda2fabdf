"""The Bayesian hierarchical test: how probable is it that method A is practically better than
method B on a new data set, that the two are practically equivalent, or that B is better, from
their per-fold scores on several data sets?

Corani, Benavoli, Demsar, Mangili & Zaffalon, "Statistical comparison of classifiers through
Bayesian hierarchical modelling", Machine Learning 106 (2017) 1817-1837, section 3; the
tutorial of Benavoli, Corani, Demsar & Zaffalon, "Time for a change", JMLR 18(77) (2017),
section 5. The model is that of baycomp 1.0.3 (`HierarchicalTest`, its Stan file
`hierarchical-t-test.stan`), here sampled by a Gibbs sampler of our own (numba-compiled:
numba's LLVM ships in its wheel) so that a report needs neither Stan nor a C++ compiler. For the
data sets i = 1..q, with x_i = (x_i1, ..., x_in_i) the differences B - A of
the scores on the n_i folds of data set i:

    x_i | delta_i, sigma_i ~ MVN(delta_i 1, sigma_i^2 M_i),  M_i = (1 - rho_i) I + rho_i 1 1'
    delta_i | delta0, std0, nu ~ t_nu(delta0, std0)
    delta0 ~ U(-max |x|, max |x|),   std0 ~ U(0, upper_sigma * s_among),
    sigma_i ~ U(0, upper_sigma * s_within),   nu - 1 ~ Gamma(a, b) (shape a, rate b),
    a ~ U(1, 2),   b ~ U(0.01, 0.1)

rho_i is the correlation of the fold scores of one data set caused by the overlapping training
parts: n_test / (n_train + n_test) (Nadeau & Bengio's heuristic; 1/K for K-fold cross-validation,
baycomp's `rho = 1 / nfolds`); s_within is the mean of the data sets' standard deviations of
the x_ij, s_among the standard deviation of their means. As in baycomp the differences (and the
rope) are first divided by s_within, and a data set whose differences are all equal gets
symmetric noise within the rope (baycomp replaces such a row by +-U(-rope, rope); here the
noise is added to the row's value, so a constant non-zero difference keeps its mean; all-zero
rows, the usual case, are treated exactly as baycomp does).

The posterior predictive of the difference on a new data set is t_nu(delta0, std0); each
posterior draw gives theta_A = P(delta < -rope), theta_B = P(delta > rope) and theta_rope =
1 - theta_A - theta_B, and the reported probabilities are the shares of the draws in which each
is the largest (baycomp's `Posterior.probs`).

Sampler (Gibbs with partially collapsed steps, each exact; compiled with numba in
`hierarchical_compiled`), one iteration of a chain:
- the likelihood of data set i depends on the data through its mean m_i and sum of squares S_i
  only: (x_i - delta 1)' M_i^-1 (x_i - delta 1) = S_i / (1 - rho_i) + (m_i - delta)^2 / c_i,
  c_i = (1 + (n_i - 1) rho_i) / n_i (the Sherman-Morrison inverse of M_i);
- t_nu as a scale mixture: delta_i ~ N(delta0, std0^2 / lambda_i), lambda_i ~ Gamma(nu/2, nu/2);
  lambda_i | rest ~ Gamma((nu + 1)/2, rate (nu + z_i^2)/2), z_i = (delta_i - delta0) / std0;
- delta_i integrated out given lambda: m_i ~ N(delta0, c_i sigma_i^2 + std0^2 / lambda_i), so
  delta0 is a truncated normal and log std0 is slice-sampled (Neal 2003) without the delta_i,
  which then follow, normal given everything (the strong coupling of std0 and the delta_i of
  the centred form is broken); delta0's bounds hold its conditional's centre (a weighted mean of
  the m_i), so it is drawn by rejection;
- 1/sigma_i^2 | delta_i ~ Gamma((n_i - 1)/2, rate Q_i/2) truncated to sigma_i < sigma_hi (the
  uniform prior on a standard deviation s gives 1/s^2 that gamma; by rejection);
- lambda integrated out given the delta_i: log std0, then log(nu - 1), slice-sampled from the
  t_nu(delta0, std0) densities of the delta_i, with a and b integrated out of the prior of nu
  (b in closed form, a by Gauss-Legendre quadrature; tabulated on a grid of log(nu - 1), linear
  interpolation); lambda is drawn again at the next iteration's start.
The posterior of nu mixes slowest (heavy tails against a wide std0, when a data set is an
outlier); the probabilities depend on it through theta only, and `rhat` is that of the theta
draws.

Settings (`CHAINS`, `N_SAMPLES`, `WARMUP`): 4 chains of 5 000 kept draws after 300 warm-up
iterations each, 21 200 iterations per comparison (until 2026-11-28: 20 chains of 2 000 after
300, 46 000 iterations; a comparison now costs 0.46 of that). Their Monte-Carlo standard error,
the sd of the probabilities over 12 seeds on the 14 cases of
tests/data/hierarchical_reference.json: at most 0.006 in 13 cases; 0.014 in the slowest-mixing
one (Suarez 2021's MMC against Euclidean, 18 data sets, an outlier: the effective sample size of
its P(rope) is about a tenth of the draws), 0.008 there at the former settings. Split R-hat at
most 1.010 over those runs (4 chains of 5 000 give a steadier R-hat than 8 of 2 500: at most
1.018). The mean over seeds differs from baycomp's Stan results by up to 0.022 (in that case;
Stan's own Monte-Carlo error included). `tests/test_hierarchical.py` checks the model against
those results with 8 chains of 10 000 (its own error about 0.005 there) to within 0.04.
A data set whose differences are all equal gets baycomp's random jitter, drawn anew for each
chain, so that the probabilities average over it and the Monte-Carlo error covers it (drawn once
per comparison, as before issue 46, one draw of the jitter moved the reality check's LMNN against
Euclidean at k = 5 from P(rope) 0.9493 to 0.9524, five times the chains' own error).

Monte-Carlo error of each result (`HierarchicalComparison.se`): the standard error of each
probability from the effective sample size of its indicator draws over the chains
(`monte_carlo`). With `settle_at` (a verdict's threshold) a pair whose most probable outcome
lies within 3 standard errors of it is given as many chains again, until it is clear or has
`MAX_CHAINS` chains (e.g. the reality check's KLHP against Euclidean at k = 7,
P(better) about 0.948: 0.0017 from 4 chains, 0.0006 from 32).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from scipy import special

from . import hierarchical_compiled as compiled
from . import monte_carlo

#: the priors of baycomp's `HierarchicalTest` (its defaults)
LOWER_ALPHA, UPPER_ALPHA = 1.0, 2.0
LOWER_BETA, UPPER_BETA = 0.01, 0.1
UPPER_SIGMA = 1000.0
#: the sampler's defaults: independent chains, draws in all (split among them), warm-up
#: iterations of each chain (discarded); their Monte-Carlo error: the module's docstring
CHAINS, N_SAMPLES, WARMUP = 4, 20_000, 300
#: the most chains `hierarchical_tests(settle_at=...)` pools for a pair near the threshold
#: (16 times the default draws: about 5 CPU s on 34 data sets)
MAX_CHAINS = 64
#: Gauss-Legendre nodes over a in [LOWER_ALPHA, UPPER_ALPHA] for the prior of nu
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(16)
_ALPHAS = LOWER_ALPHA + (UPPER_ALPHA - LOWER_ALPHA) * (_NODES + 1) / 2
_ALPHA_WEIGHTS = _WEIGHTS * (UPPER_ALPHA - LOWER_ALPHA) / 2
#: the grid of log(nu - 1) on which that prior is tabulated (outside it: zero density; the prior
#: mass outside is below 1e-6, `tests/test_hierarchical.py`)
_LOG_NU1_GRID = np.linspace(-15.0, 15.0, 6001)


@dataclass
class HierarchicalComparison:
    """Posterior of the hierarchical test of A against B: the probabilities that A is
    practically better on a new data set, that the two are practically equivalent (rope), that
    B is better; their Monte-Carlo standard errors `se` (same order; `monte_carlo`: the
    effective sample size of each outcome's indicator draws over the chains); the draws of
    (theta_A, theta_rope, theta_B) they come from (chain after chain, `chains` chains of equal
    length); the draws of the hyper-parameters (delta0, std0 on the scale of the scores; nu);
    and the largest split R-hat of the three theta over the chains (near 1 when the chains
    agree)."""

    p_a: float
    p_rope: float
    p_b: float
    samples: np.ndarray
    delta0: np.ndarray
    std0: np.ndarray
    nu: np.ndarray
    rhat: float
    se: tuple[float, float, float] = (0.0, 0.0, 0.0)
    chains: int = 1

    def largest(self) -> tuple[float, float]:
        """(p, se) of the most probable of the three outcomes: the probability a verdict at a
        threshold above 1/2 turns on."""
        probs = (self.p_a, self.p_rope, self.p_b)
        j = int(np.argmax(probs))
        return probs[j], self.se[j]

    def clear_of(self, threshold: float, margin: float = monte_carlo.MARGIN) -> bool:
        """Whether the verdict at `threshold` (> 1/2) is settled by the draws: the most
        probable outcome's probability lies `margin` standard errors or more from it."""
        return monte_carlo.clear_of(*self.largest(), threshold, margin)


def hierarchical_test(a, b, rope: float = 0.01, *, rho, **options) -> HierarchicalComparison:
    """The Bayesian hierarchical test of the per-fold scores `a` and `b` (higher = better).

    `a`, `b`: one sequence of fold scores per data set (a 2-D array, or a list of 1-D arrays
    whose lengths may differ between data sets), paired fold by fold; at least 2 data sets of at
    least 2 folds each. `rope`: half-width of the region of practical equivalence on the
    scores' scale (0.01 = one accuracy point). `rho`: the correlation of one data set's fold
    scores, a number or one per data set (n_test / (n_train + n_test); 1/K for K-fold
    cross-validation). `options`: those of `hierarchical_tests`. The model and the sampler:
    the module's docstring.
    """
    return hierarchical_tests([(a, b)], rope, rho=rho, **options)[0]


def hierarchical_tests(pairs, rope: float = 0.01, *, rho, n_samples: int = N_SAMPLES,
                       chains: int = CHAINS, warmup: int = WARMUP, random_state=0,
                       upper_sigma: float = UPPER_SIGMA, settle_at: float | None = None,
                       margin: float = monte_carlo.MARGIN,
                       max_chains: int = MAX_CHAINS) -> list[HierarchicalComparison]:
    """`hierarchical_test` of every (a, b) of `pairs`, in one call of the compiled sampler.
    The pairs share their number of data sets (e.g. every method against one reference on the
    same data sets); `rho` is a number, one per data set, or one row per data set for each
    pair. Each pair gets `chains` independent chains, `warmup` iterations discarded and
    ceil(`n_samples` / `chains`) kept. `random_state` (an int or a numpy Generator) seeds the
    batch (a seed per chain, drawn in order): a pair's draws depend on its place in the batch.

    `settle_at` (a verdict's threshold, e.g. 0.95): a pair whose most probable outcome lies
    within `margin` Monte-Carlo standard errors of it gets as many new chains again (of the
    same length), pooled with its others, until it is clear of the threshold or has
    `max_chains` chains (`clear_of` then tells).

    A data set whose differences are all equal gets baycomp's random jitter
    (`_jitter_constant`), drawn anew for every chain: the probabilities are averages over the
    jitter, and their Monte-Carlo error includes its share (through the chains' disagreement).
    """
    pairs = [_differences(a, b) for a, b in pairs]
    if not pairs:
        return []
    q = len(pairs[0])
    if any(len(diffs) != q for diffs in pairs):
        raise ValueError(f"hierarchical_tests samples pairs with the same number of data sets "
                         f"together: got {sorted({len(d) for d in pairs})}")
    rho = np.asarray(rho, dtype=float)
    if rho.ndim > 2 or (rho.ndim >= 1 and rho.shape[-1] != q) or (
            rho.ndim == 2 and rho.shape[0] != len(pairs)):
        raise ValueError(f"rho must be a number, one per data set ({q}) or one row per pair "
                         f"({len(pairs)} x {q}), got shape {rho.shape}")
    rho = np.broadcast_to(rho, (len(pairs), q))
    if not np.all((rho >= 0) & (rho < 1)):
        raise ValueError(f"rho must lie in [0, 1) (n_test / (n_train + n_test)), got {rho}")
    if not rope >= 0:
        raise ValueError(f"rope must be >= 0 (a half-width on the score's scale), got {rope}")
    if int(n_samples) != n_samples or n_samples < chains or chains < 2 or warmup < 1:
        raise ValueError(f"need chains >= 2, warmup >= 1 and n_samples >= chains, got "
                         f"chains={chains}, warmup={warmup}, n_samples={n_samples}")
    if settle_at is not None and not (0.5 < settle_at < 1 and margin > 0
                                      and max_chains >= chains):
        raise ValueError(f"settle_at must lie in (0.5, 1), margin be > 0 and max_chains >= "
                         f"chains, got settle_at={settle_at}, margin={margin}, "
                         f"max_chains={max_chains}")
    rng = (random_state if isinstance(random_state, np.random.Generator)
           else np.random.default_rng(random_state))
    scales, scaled = [], []
    for diffs in pairs:
        scale = np.mean([np.std(d) for d in diffs])
        scale = scale if scale > 0 else 1.0  # every difference constant: nothing to scale by
        scales.append(scale)
        scaled.append([d / scale for d in diffs])
    per_chain = -(-int(n_samples) // chains)

    def sample(rows: list[int], new: int) -> np.ndarray:
        """rows x new chains x 3 x per_chain draws; each chain its own jitter and seed."""
        data = [[_jitter_constant(d, rope / scales[i], rng) for d in scaled[i]]
                for i in rows for _ in range(new)]
        model = _Model(data, np.repeat(rho[rows], new, axis=0), upper_sigma)
        return _sample(model, per_chain, int(warmup), rng).reshape(len(rows), new, 3, per_chain)

    draws = list(sample(list(range(len(pairs))), chains))
    results = [_result(d, rope / scale, scale) for d, scale in zip(draws, scales)]
    while settle_at is not None:
        rows = [i for i, r in enumerate(results)
                if not r.clear_of(settle_at, margin) and r.chains < max_chains]
        if not rows:
            break
        have = results[rows[0]].chains  # the open pairs have all been doubled alike
        for i, more in zip(rows, sample(rows, min(have, max_chains - have))):
            draws[i] = np.concatenate([draws[i], more])
            results[i] = _result(draws[i], rope / scales[i], scales[i])
    return results


def _sample(model: _Model, per_chain: int, warmup: int, rng: np.random.Generator) -> np.ndarray:
    """Draws (rows x 1 x 3 x per_chain) of (delta0, std0, nu): one chain of each row of
    `model`, seeded from `rng`."""
    rows = len(model.mean)
    out = np.empty((rows, 1, 3, per_chain))
    seeds = rng.integers(0, 2**31 - 1, (rows, 1))
    compiled.sample(model.mean, model.ss, model.n, model.c, model.e, model.delta_hi,
                    model.sigma_hi, model.std0_hi, seeds, warmup, per_chain, _LOG_NU1_GRID[0],
                    _LOG_NU1_GRID[1] - _LOG_NU1_GRID[0], _prior_table(), out)
    return out


def _result(draws: np.ndarray, rope: float, scale: float) -> HierarchicalComparison:
    """The probabilities of one pair, and their Monte-Carlo errors, from its chains x 3 x draws
    of the scaled hyper-parameters (delta0, std0, nu)."""
    delta0, std0, nu = draws[:, 0], draws[:, 1], draws[:, 2]
    theta_a = special.stdtr(nu, (-rope - delta0) / std0)  # chains x draws
    theta_b = special.stdtr(nu, (delta0 - rope) / std0)
    theta = np.stack([theta_a, 1.0 - theta_a - theta_b, theta_b], axis=-1)
    rhat = max(_split_rhat(theta[..., j]) for j in range(3))
    (p_a, p_rope, p_b), se = monte_carlo.probabilities(np.argmax(theta, axis=-1), 3)
    return HierarchicalComparison(float(p_a), float(p_rope), float(p_b), theta.reshape(-1, 3),
                                  delta0.ravel() * scale, std0.ravel() * scale, nu.ravel(),
                                  float(rhat), tuple(float(x) for x in se), draws.shape[0])


def _differences(a, b) -> list[np.ndarray]:
    """The per-data-set differences b - a, checked."""
    a_rows, b_rows = list(a), list(b)
    if len(a_rows) != len(b_rows):
        raise ValueError(f"hierarchical_test needs the same data sets for both methods: got "
                         f"{len(a_rows)} and {len(b_rows)}")
    if len(a_rows) < 2:
        raise ValueError(f"hierarchical_test needs at least 2 data sets, got {len(a_rows)}")
    diffs = []
    for i, (x, y) in enumerate(zip(a_rows, b_rows)):
        x, y = np.asarray(x, dtype=float).ravel(), np.asarray(y, dtype=float).ravel()
        if x.size != y.size or x.size < 2:
            raise ValueError(f"data set {i}: needs the same folds for both methods, at least 2 "
                             f"(got {x.size} and {y.size})")
        if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
            raise ValueError(f"data set {i}: scores must be finite")
        diffs.append(y - x)
    return diffs


def _jitter_constant(d: np.ndarray, rope: float, rng: np.random.Generator) -> np.ndarray:
    """A row whose differences are all equal gets symmetric noise within +-rope (baycomp's
    remedy for a zero variance): half the folds +u, the other half -u, u ~ U(-rope, rope)."""
    if np.var(d) > 0:
        return d
    if rope == 0:
        raise ValueError("a data set's differences are all equal and rope = 0: the model "
                         "needs some spread (give a rope > 0)")
    half = d.size // 2
    u = rng.uniform(-rope, rope, half)
    noise = np.zeros(d.size)
    noise[:half], noise[d.size - half:] = u, -u
    return d + noise


class _Model:
    """The data as the sampler needs them, one row per pair: per data set the mean, the sum of
    squares, the number of folds and the likelihood's constants; the bounds of the priors
    (baycomp's `prepare_stan_data`)."""

    def __init__(self, data: list[list[np.ndarray]], rho: np.ndarray, upper_sigma: float):
        self.n = np.array([[d.size for d in diffs] for diffs in data], dtype=float)
        self.mean = np.array([[d.mean() for d in diffs] for diffs in data])
        self.ss = np.array([[np.sum((d - d.mean()) ** 2) for d in diffs] for diffs in data])
        self.c = (1 + (self.n - 1) * rho) / self.n  # Var(mean) / sigma^2
        self.e = 1 / (1 - rho)
        s_within = np.array([np.mean([np.std(d) for d in diffs]) for diffs in data])
        s_among = np.std(self.mean, axis=1)
        s_among = np.where(s_among > 0, s_among, s_within)
        self.delta_hi = np.array([max(np.max(np.abs(d)) for d in diffs) for diffs in data])
        self.sigma_hi = upper_sigma * s_within
        self.std0_hi = upper_sigma * s_among


def log_prior_nu1(v: np.ndarray) -> np.ndarray:
    """log p(nu - 1 = v) up to a constant, a ~ U(1, 2) and b ~ U(0.01, 0.1) integrated out:
    int_b Gamma(v; a, b) db = a v^-2 [P(a + 1, 0.1 v) - P(a + 1, 0.01 v)] (P: the regularised
    lower incomplete gamma), then Gauss-Legendre over a."""
    v = np.asarray(v, dtype=float)[..., None]
    s = _ALPHAS + 1
    lower = special.gammainc(s, UPPER_BETA * v) - special.gammainc(s, LOWER_BETA * v)
    upper = special.gammaincc(s, LOWER_BETA * v) - special.gammaincc(s, UPPER_BETA * v)
    band = np.where(UPPER_BETA * v < s, lower, upper)  # the difference without cancellation
    with np.errstate(divide="ignore"):
        return np.log((_ALPHA_WEIGHTS * _ALPHAS * band).sum(axis=-1)) - 2 * np.log(v[..., 0])


@functools.cache
def _prior_table() -> np.ndarray:
    """The log density of u = log(nu - 1) (`log_prior_nu1` plus the Jacobian u) on the grid."""
    return log_prior_nu1(np.exp(_LOG_NU1_GRID)) + _LOG_NU1_GRID


def _split_rhat(draws: np.ndarray) -> float:
    """Split R-hat (Gelman et al., Bayesian Data Analysis, 3rd ed., eq. 11.4) of chains x draws."""
    half = draws.shape[1] // 2
    parts = np.concatenate([draws[:, :half], draws[:, half:2 * half]])
    n = parts.shape[1]
    within = parts.var(axis=1, ddof=1).mean()
    between = n * parts.mean(axis=1).var(ddof=1)
    if within == 0:
        return 1.0
    return float(np.sqrt(((n - 1) / n * within + between / n) / within))

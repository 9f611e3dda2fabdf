"""The Bayesian hierarchical test (`dmlbench.measure.hierarchical`) against baycomp's Stan model
(tests/data/hierarchical_reference.json, written by tests/hierarchical_reference.py in a
virtual environment of its own: baycomp 1.0.3, pystan 3.10.0), the model's pieces against
direct computations, and the report's use of it."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dmlbench.measure import hierarchical as h

REFERENCE = json.loads((Path(__file__).parent / "data" / "hierarchical_reference.json")
                       .read_text())
#: agreement with baycomp: both are Monte-Carlo estimates (Stan: 40 000 draws). The check runs
#: our sampler with more draws than the report (8 chains x 10 000, `SAMPLER`) so that its own
#: error is small: the slowest-mixing case (suarez-2021 MMC) has a standard deviation of about
#: 0.005 over seeds there and a mean 0.022 from Stan's; over seeds 0-3 its largest difference
#: was 0.027, every other case's 0.017. Another machine's rounding takes the chains elsewhere
#: (another seed, in effect), so the tolerance leaves room for that spread.
TOLERANCE = 0.04
SAMPLER = {"chains": 8, "n_samples": 80_000}


@pytest.fixture(scope="module")
def ours() -> dict:
    """Our test of every reference case, those of one number of data sets in one batch (as
    the report samples them)."""
    cases = REFERENCE["cases"]
    by_size = {}
    for name, case in cases.items():
        by_size.setdefault(len(case["a"]), []).append(name)
    out = {}
    for names in by_size.values():
        rho = [[cases[n]["rho"]] * len(cases[n]["a"]) for n in names]
        results = h.hierarchical_tests([(cases[n]["a"], cases[n]["b"]) for n in names],
                                       REFERENCE["provenance"]["rope"], rho=rho, **SAMPLER)
        out.update(zip(names, results))
    return out


@pytest.mark.parametrize("name", sorted(REFERENCE["cases"]))
def test_probabilities_agree_with_baycomps_stan_model(name, ours):
    case = REFERENCE["cases"][name]
    ours = ours[name]
    theirs = np.array([case["p_a"], case["p_rope"], case["p_b"]])
    np.testing.assert_allclose([ours.p_a, ours.p_rope, ours.p_b], theirs, atol=TOLERANCE,
                               err_msg=name)
    assert ours.rhat < 1.01


def test_the_reference_covers_every_verdict():
    """The cases span a clear win of each side, equivalence and undecided mixtures."""
    verdicts = {h_verdict(c) for c in REFERENCE["cases"].values()}
    assert verdicts >= {"a", "b", "rope", "undecided"}


def h_verdict(case) -> str:
    for key in ("p_a", "p_b", "p_rope"):
        if case[key] >= 0.95:
            return key[2:]
    return "undecided"


def test_the_likelihood_from_means_and_sums_of_squares_is_the_correlated_normal():
    """(x - delta 1)' M^-1 (x - delta 1) = S / (1 - rho) + (mean - delta)^2 / c (the model's
    sufficient statistics), M = (1 - rho) I + rho 1 1': scipy's multivariate normal density."""
    rng = np.random.default_rng(0)
    rows = [rng.normal(0.01, 0.02, n) for n in (10, 3, 7)]
    rho = np.array([0.1, 0.3, 0.2])
    model = h._Model([rows], rho[None, :], 1000.0)
    delta, sigma = np.array([0.004, -0.01, 0.03]), np.array([0.02, 0.05, 0.01])
    for i, x in enumerate(rows):
        n = x.size
        cov = sigma[i] ** 2 * ((1 - rho[i]) * np.eye(n) + rho[i] * np.ones((n, n)))
        expected = stats.multivariate_normal(np.full(n, delta[i]), cov).logpdf(x)
        quad = model.e[0, i] * model.ss[0, i] + (model.mean[0, i] - delta[i]) ** 2 / model.c[0, i]
        det_m = (1 + (n - 1) * rho[i]) * (1 - rho[i]) ** (n - 1)
        log_det = n * np.log(sigma[i] ** 2) + np.log(det_m)
        ours = -0.5 * (n * np.log(2 * np.pi) + log_det + quad / sigma[i] ** 2)
        assert ours == pytest.approx(expected, rel=1e-12)


def test_the_prior_of_nu_is_that_of_the_gamma_hyper_priors():
    """The tabulated prior of log(nu - 1) (b integrated in closed form, a by quadrature) against
    draws of a ~ U(1, 2), b ~ U(0.01, 0.1), nu - 1 ~ Gamma(a, rate b); its mass outside the
    table is negligible."""
    rng = np.random.default_rng(0)
    n = 400_000
    draws = np.log(rng.gamma(rng.uniform(1, 2, n)) / rng.uniform(0.01, 0.1, n))
    grid = h._LOG_NU1_GRID
    density = np.exp(h._prior_table() - h._prior_table().max())
    cdf = np.concatenate([[0], np.cumsum((density[1:] + density[:-1]) / 2 * np.diff(grid))])
    cdf /= cdf[-1]
    quantiles = np.linspace(0.001, 0.999, 99)
    empirical = np.quantile(draws, quantiles)
    assert np.max(np.abs(np.interp(empirical, grid, cdf) - quantiles)) < 0.004
    normalised = density / np.trapezoid(density, grid)
    assert normalised[0] < 1e-6 and normalised[-1] < 1e-6
    assert grid[0] < draws.min() and draws.max() < grid[-1]


def test_seeded_and_symmetric():
    rng = np.random.default_rng(3)
    a = rng.normal(0.8, 0.02, (6, 10))
    b = a + rng.normal(0.012, 0.01, (6, 1)) + rng.normal(0, 0.02, (6, 10))
    options = {"rho": 0.1, "n_samples": 6000, "chains": 10}
    one = h.hierarchical_test(a, b, random_state=5, **options)
    again = h.hierarchical_test(a, b, random_state=5, **options)
    swapped = h.hierarchical_test(b, a, random_state=6, **options)
    assert (one.p_a, one.p_rope, one.p_b) == (again.p_a, again.p_rope, again.p_b)
    np.testing.assert_array_equal(one.samples, again.samples)
    assert one.samples.shape == (6000, 3)
    np.testing.assert_allclose(one.samples.sum(axis=1), 1)
    np.testing.assert_allclose([one.p_a, one.p_rope, one.p_b],
                               [swapped.p_b, swapped.p_rope, swapped.p_a], atol=0.03)
    assert one.delta0.mean() == pytest.approx(-swapped.delta0.mean(), abs=0.002)


def test_a_batch_agrees_with_single_tests_and_allows_ragged_folds():
    rng = np.random.default_rng(4)
    pairs = []
    for shift in (-0.03, 0.0, 0.02):
        a = [rng.normal(0.8, 0.02, n) for n in (10, 10, 3, 5, 10)]
        pairs.append((a, [x + shift + rng.normal(0, 0.015, x.size) for x in a]))
    rho = [0.1, 0.1, 0.3, 0.2, 0.1]
    batch = h.hierarchical_tests(pairs, rho=rho, random_state=1)
    for (a, b), together in zip(pairs, batch):
        alone = h.hierarchical_test(a, b, rho=rho, random_state=2, n_samples=10_000)
        np.testing.assert_allclose([together.p_a, together.p_rope, together.p_b],
                                   [alone.p_a, alone.p_rope, alone.p_b], atol=0.03)
    assert batch[0].p_a > 0.95 and batch[2].p_b > 0.9


def test_identical_scores_everywhere_give_equivalence():
    """Every difference zero (a rotation-invariant method against Euclidean): baycomp divides
    by a zero spread; here the rows get baycomp's symmetric noise within the rope, unscaled."""
    a = np.random.default_rng(0).uniform(0.7, 0.9, (5, 10))
    result = h.hierarchical_test(a, a.copy(), rho=0.1, n_samples=4000, chains=10)
    assert result.p_rope > 0.95


def known_sampler(p_better: dict[float, float]):
    """A stand-in for the compiled sampler (`h._sample`, one chain per row of the model) whose
    posterior is known: a chain of a pair whose first data set's scaled mean difference is m
    makes A better in exactly round(p n) of its n draws, p = p_better[m] (in a shuffled order:
    as good as independent draws), and B better in the rest, so P(A better) = p exactly and
    its standard error is sqrt(p (1 - p) / draws)."""
    def sample(model, per_chain, warmup, rng):
        out = np.empty((len(model.mean), 1, 3, per_chain))
        for row, first in enumerate(model.mean[:, 0]):
            wins = np.arange(per_chain) < round(p_better[round(first, 6)] * per_chain)
            out[row, 0, 0] = np.where(rng.permutation(wins), -10.0, 10.0)  # delta0 of b - a
            out[row, 0, 1:] = [[1.0], [5.0]]  # std0, nu
        return out
    return sample


def test_more_chains_until_the_verdict_is_clear_of_the_threshold(monkeypatch):
    """The MC-error rule with posteriors known exactly: P(better) 0.999 is clear at once (4
    chains); 0.952 is clear once 3 s.e. <= 0.002, s.e. sqrt(0.952 x 0.048 / n) <= 0.00067,
    n >= 102 000 draws: 32 chains of 5 000 (16 give 80 000, s.e. 0.00076); exactly 0.95 never
    is (64 chains, not clear: borderline in the report); 0.5 is clear of 0.95 at once
    (undecided, and settled)."""
    cases = [0.999, 0.952, 0.95, 0.5]
    # the pairs differ in their first data set, whose scaled mean difference tells them apart
    pairs = []
    for i in range(len(cases)):
        a = [[0.5, 0.6, 0.7], [0.5, 0.5, 0.5], [0.6, 0.7, 0.8]]
        b = [[0.5 + 0.01 * (i + 1), 0.62, 0.71], [0.55, 0.56, 0.58], [0.6, 0.72, 0.8]]
        pairs.append((a, b))
    firsts = [round(float(np.mean(np.subtract(b[0], a[0]))
                          / np.mean([np.std(np.subtract(y, x)) for x, y in zip(a, b)])), 6)
              for a, b in pairs]
    assert len(set(firsts)) == len(cases)
    monkeypatch.setattr(h, "_sample", known_sampler(dict(zip(firsts, cases))))
    results = h.hierarchical_tests(pairs, rope=0.01, rho=0.1, random_state=0, settle_at=0.95)
    assert [r.chains for r in results] == [4, 32, h.MAX_CHAINS, 4]
    assert [r.clear_of(0.95) for r in results] == [True, True, False, True]
    for p, result in zip(cases, results):
        assert result.p_a == pytest.approx(p)
        draws = len(result.samples)
        assert draws == result.chains * h.N_SAMPLES // h.CHAINS
        assert result.se[0] == pytest.approx(np.sqrt(p * (1 - p) / draws), rel=0.1)


def test_each_chain_draws_its_own_jitter(monkeypatch):
    """A data set whose differences are all equal gets baycomp's jitter anew for every chain
    (the probabilities average over it; the chains' disagreement carries its share of the
    Monte-Carlo error); the other data sets are the same in every chain."""
    seen = []

    def sample(model, per_chain, warmup, rng):
        seen.append(model.ss.copy())
        out = np.empty((len(model.mean), 1, 3, per_chain))
        out[:, 0, 0], out[:, 0, 1], out[:, 0, 2] = rng.normal(size=(1, per_chain)), 1.0, 5.0
        return out

    monkeypatch.setattr(h, "_sample", sample)
    a = [[0.5, 0.6, 0.7, 0.8], [0.5, 0.5, 0.5, 0.5], [0.6, 0.7, 0.8, 0.9]]
    b = [[0.52, 0.6, 0.73, 0.8], [0.55, 0.55, 0.55, 0.55], [0.6, 0.72, 0.8, 0.95]]
    result = h.hierarchical_test(a, b, rho=0.25, random_state=0, chains=6, n_samples=600)
    (ss,) = seen
    assert ss.shape == (6, 3) and result.chains == 6
    assert len(set(ss[:, 1])) == 6 and np.all(ss[:, 1] > 0)  # the constant row: 6 jitters
    assert np.all(ss[:, 0] == ss[0, 0]) and np.all(ss[:, 2] == ss[0, 2])


def test_a_clear_case_is_decided_by_the_first_draws_with_its_error():
    """The real sampler on a clear win (5 points on 8 data sets): no extra chains, the
    probability far from 0.95 in standard errors."""
    rng = np.random.default_rng(7)
    a = rng.normal(0.8, 0.02, (8, 5))
    result = h.hierarchical_test(a, a + 0.05 + rng.normal(0, 0.01, (8, 5)), rho=0.2,
                                 random_state=0, settle_at=0.95)
    assert result.chains == h.CHAINS and result.p_b > 0.99 and result.clear_of(0.95)


def test_the_reported_error_is_the_spread_over_seeds():
    """An undecided case (P(better) about 0.89): the standard error each run reports is close
    to the standard deviation of its probability over 12 seeds (both about 0.004 at 4 x 2 000
    draws; the sd over 12 runs has a relative error of about 20 %)."""
    rng = np.random.default_rng(8)
    a = rng.normal(0.8, 0.02, (10, 5))
    b = a + rng.normal(0.012, 0.012, (10, 1)) + rng.normal(0, 0.01, (10, 5))
    runs = [h.hierarchical_test(a, b, rho=0.2, random_state=seed, n_samples=8_000)
            for seed in range(12)]
    p = np.array([r.p_b for r in runs])
    reported = np.mean([r.se[2] for r in runs])
    assert 0.2 < p.mean() < 0.95
    assert 0.6 < np.std(p, ddof=1) / reported < 1.6


@pytest.mark.parametrize("kwargs, message", [
    ({"a": [[0.5, 0.6]], "b": [[0.5, 0.7]]}, "at least 2 data sets"),
    ({"a": [[0.5, 0.6], [0.5, 0.6]], "b": [[0.5, 0.7], [0.5]]}, "data set 1"),
    ({"a": [[0.5, 0.6], [0.5, 0.6]], "b": [[0.5, 0.7], [0.5, np.nan]]}, "finite"),
    ({"rho": 1.0}, "rho must lie in"),
    ({"rho": [0.1, 0.1, 0.1]}, "rho must be a number"),
    ({"rope": -0.1}, "rope must be >= 0"),
    ({"chains": 1}, "chains >= 2"),
    ({"a": [[0.5, 0.5], [0.5, 0.6]], "b": [[0.6, 0.6], [0.5, 0.7]], "rope": 0.0}, "all equal"),
])
def test_bad_input_is_named(kwargs, message):
    args = {"a": [[0.5, 0.6], [0.7, 0.6]], "b": [[0.55, 0.6], [0.7, 0.65]], "rho": 0.5, **kwargs}
    with pytest.raises(ValueError, match=message):
        h.hierarchical_test(args.pop("a"), args.pop("b"), **args)


def fold_runs(shifts: dict[str, float], n_sets: int = 6, folds: int = 5):
    """(parents, splits) of a k = 3 benchmark: each method's fold accuracies are Euclidean's
    plus its shift and a little noise."""
    rng = np.random.default_rng(0)
    splits = []
    for d in range(n_sets):
        base = 0.7 + 0.03 * d + rng.normal(0, 0.02, folds)
        for method, shift in shifts.items():
            for i, acc in enumerate(base + shift + (0 if method == "euclidean" else
                                                    rng.normal(0, 0.004, folds))):
                splits.append({"dataset": f"d{d}", "method": method, "split": str(i),
                               "accuracy_k3": acc, "n_train": 80.0, "n_test": 20.0,
                               "start_time": 0, "run_id": f"{d}{method}{i}"})
    splits = pd.DataFrame(splits)
    parents = (splits.groupby(["dataset", "method"], as_index=False)["accuracy_k3"].mean()
               .rename(columns={"accuracy_k3": "accuracy_k3_mean"})
               .assign(run_id=lambda f: f["dataset"] + f["method"], experiment_id="1",
                       family="baseline", k="[3]"))
    return parents, splits


def test_report_section_and_headline(tmp_path):
    from dmlbench.report import hierarchical
    from dmlbench.report.base import Context
    from dmlbench.report.sections import hierarchical as section
    from dmlbench.report.sections import summary

    parents, splits = fold_runs({"euclidean": 0.0, "lda": 0.05, "nca": 0.0005, "rca": -0.04})
    folds = hierarchical.fold_table(splits, 3)
    pair = hierarchical.paired_folds(folds, "lda", "euclidean")
    assert pair["datasets"] == [f"d{d}" for d in range(6)] and pair["rho"] == [0.2] * 6
    ctx = Context(parents, splits, tmp_path, 10, [3], config={"report": {"rope": 0.01}})
    sec = section.section(ctx).resolve()
    table = pd.read_csv(tmp_path / "tables/hierarchical_k3.csv").set_index(["method", "against"])
    assert table.loc[("lda", "euclidean"), "verdict"] == "better"
    assert table.loc[("rca", "euclidean"), "verdict"] == "worse"
    assert table.loc[("nca", "euclidean"), "verdict"] == "equivalent"
    assert table.loc[("euclidean", "lda"), "verdict"] == "worse"  # lda: the best mean rank
    # sampled once, mirrored: the model is symmetric in A and B
    mirror, sampled = table.loc[("euclidean", "lda")], table.loc[("lda", "euclidean")]
    assert (mirror["P(better)"], mirror["P(rope)"], mirror["P(worse)"], mirror["R-hat"]) == (
        sampled["P(worse)"], sampled["P(rope)"], sampled["P(better)"], sampled["R-hat"])
    assert mirror["mean difference (points)"] == pytest.approx(
        -sampled["mean difference (points)"])
    assert ("lda", "lda") not in table.index and len(table) == 6
    assert (tmp_path / "figures" / hierarchical.figure_name(3)).stat().st_size > 0
    assert any(b["kind"] == "pair" for b in sec.blocks)
    text = "".join(summary._headline_lines(ctx, {3: hierarchical.results(ctx, 3)}))
    assert "Practically better than euclidean?" in text
    assert "<b>better</b>: lda; <b>equivalent</b>: nca; <b>worse</b>: rca" in text


def test_no_comparison_without_fold_level_accuracies(tmp_path):
    from dmlbench.report.base import Context
    from dmlbench.report.sections import hierarchical as section

    parents, _ = fold_runs({"euclidean": 0.0, "lda": 0.05})
    assert section.section(Context(parents, pd.DataFrame(), tmp_path, 10, [3])) is None


def test_a_comparison_whose_chains_disagree_is_sampled_again_and_decided_only_by_every_chain(
        monkeypatch):
    """R-hat above RHAT_LIMIT: the pair is sampled again with RESAMPLE; still above it, the
    verdict stands only if every chain alone reaches it (a chain that has not mixed must not
    decide), else "borderline"."""
    from dmlbench.report import hierarchical

    rng = np.random.default_rng(0)
    pairs = {("lda", "euclidean"): {"datasets": ["d0", "d1", "d2"],
                                    "a": [rng.uniform(0.8, 0.9, 5) for _ in range(3)],
                                    "b": [rng.uniform(0.7, 0.8, 5) for _ in range(3)],
                                    "rho": [0.2] * 3}}
    chains, per_chain = hierarchical.RESAMPLE["chains"], 100
    better = np.tile([0.9, 0.05, 0.05], (per_chain, 1))
    rope = np.tile([0.05, 0.9, 0.05], (per_chain, 1))
    calls = []

    def sampler(pairs_, rope_width, *, rho, random_state, chains=4, n_samples=20_000,
                warmup=300, settle_at=None):
        calls.append((chains, n_samples, warmup, settle_at))
        if len(calls) == 1:
            return [h.HierarchicalComparison(0.99, 0.01, 0.0, None, None, None, None, 1.3,
                                             (0.001, 0.001, 0.0), 4)]
        samples = np.concatenate(second)  # chain after chain
        p = np.bincount(np.argmax(samples, axis=1), minlength=3) / len(samples)
        return [h.HierarchicalComparison(*p, samples, None, None, None, second_rhat,
                                         (0.001, 0.001, 0.001), chains)]

    monkeypatch.setattr(hierarchical, "hierarchical_tests", sampler)
    every_chain_better = [better] * chains
    # pooled P(better) (7 x 100 + 70) / 800 = 0.96, but the last chain alone 0.7
    one_chain_in_the_rope = [better] * (chains - 1) + [np.concatenate([better[:70], rope[:30]])]
    for second, second_rhat, expected in ((every_chain_better, 1.001, "better"),
                                          (every_chain_better, 1.05, "better"),
                                          (one_chain_in_the_rope, 1.05, "borderline")):
        calls.clear()
        row = hierarchical.compare(pairs, 0.01, 1).iloc[0]
        assert calls[1] == (chains, hierarchical.RESAMPLE["n_samples"],
                            hierarchical.RESAMPLE["warmup"], 0.95)
        assert (row["R-hat"], row["verdict"]) == (second_rhat, expected)

"""How the report words and prints its verdicts: one reading on every page.

The Bayesian hierarchical test (Corani, Benavoli, Demšar, Mangili & Zaffalon 2017) decides. Its
verdict on a method against another is one of `BETTER`, `EQUIVALENT`, `WORSE` (the posterior
probability of that outcome on a new data set at least `DECISION`), `UNDECIDED` (none of them
reaches it; in sentences `sentence(UNDECIDED)`, "not shown better (undecided)", never "not
better") or `BORDERLINE` (the sampler cannot tell on which side of `DECISION` the probability
lies: within `measure.monte_carlo.MARGIN` Monte-Carlo standard errors of it after the most
draws given, or chains that disagree).

The other tests are supporting evidence, each in its own words so that no word means two
things on a page: the Bayesian signed-rank test `AHEAD`, `WITHIN_ROPE`, `BEHIND`,
`INCONCLUSIVE`; Wilcoxon with Holm's correction "significant" / "not significant"; Friedman and
Nemenyi "the methods differ" and the critical difference of mean ranks. `HOW_TO_READ` says once,
in the summary, how to read them when they disagree.

Probabilities are printed by `probability`: three decimals, never rounded across `DECISION`
(0.9496 prints 0.949, not 0.950).
"""

from __future__ import annotations

import math

from ..measure.monte_carlo import MARGIN

#: the posterior probability a verdict needs (Benavoli et al. 2017's 0.95)
DECISION = 0.95

BETTER, EQUIVALENT, WORSE = "better", "equivalent", "worse"
UNDECIDED, BORDERLINE = "undecided", "borderline"
#: the hierarchical verdicts in the order the page lists them
HIERARCHICAL = (BETTER, EQUIVALENT, WORSE, UNDECIDED, BORDERLINE)

#: the signed-rank test's words (supporting evidence)
AHEAD, WITHIN_ROPE, BEHIND, INCONCLUSIVE = "ahead", "within rope", "behind", "inconclusive"


def hierarchical(p_better: float, p_rope: float, p_worse: float) -> str:
    """The hierarchical verdict of three posterior probabilities (`BORDERLINE` is the caller's:
    it needs the Monte-Carlo error)."""
    if p_better >= DECISION:
        return BETTER
    if p_worse >= DECISION:
        return WORSE
    if p_rope >= DECISION:
        return EQUIVALENT
    return UNDECIDED


def signed_rank(p_ahead: float, p_rope: float, p_behind: float) -> str:
    """The signed-rank test's word for the first method against the second."""
    if p_ahead >= DECISION:
        return AHEAD
    if p_behind >= DECISION:
        return BEHIND
    if p_rope >= DECISION:
        return WITHIN_ROPE
    return INCONCLUSIVE


def sentence(word: str) -> str:
    """A hierarchical verdict as a sentence says it: "not shown better (undecided)" (never "not
    better"), the others as they are."""
    return "not shown better (undecided)" if word == UNDECIDED else word


def probability(p: float) -> str:
    """`p` with three decimals, never rounded across `DECISION`: a probability below it prints
    below it (0.9496 -> 0.949), one at or above it at or above it."""
    if p is None or not math.isfinite(p):
        return "–"
    text = f"{p:.3f}"
    if (float(text) >= DECISION) != (p >= DECISION):
        text = f"{math.floor(p * 1000) / 1000:.3f}" if p < DECISION else f"{DECISION:.3f}"
    return text


def with_error(p: float, se: float) -> str:
    """`probability(p)` with its Monte-Carlo standard error, e.g. '0.948 ± 0.0017'."""
    return f"{probability(p)} ± {se:.2g}" if se > 0 else probability(p)


def rope_text(rope: float) -> str:
    """The rope in accuracy points, the one notation of the page: '±1 accuracy point'."""
    points = 100 * rope
    return f"±{points:g} accuracy point" + ("" if points == 1 else "s")


def how_to_read(rope: float, reference: str) -> str:
    """The page's one paragraph on how to read the verdicts (plain text)."""
    return (
        f"How to read the verdicts: the Bayesian hierarchical test decides. A method is better "
        f"than, equivalent to or worse than {reference} when the posterior probability of that "
        f"outcome on a new data set is at least {DECISION} (rope {rope_text(rope)}); otherwise "
        f"it is not shown better (undecided): the evidence decides neither way. It is "
        f"borderline when the sampler cannot tell on which side of {DECISION} the probability "
        f"lies (within {MARGIN:g} Monte-Carlo standard errors after the most draws). The other "
        "tests are supporting evidence in their own words: the Bayesian signed-rank test "
        f"({AHEAD}, {WITHIN_ROPE}, {BEHIND}, {INCONCLUSIVE}) uses only each data set's mean "
        "accuracy and ignores how much the folds vary, so it is more confident and can call a "
        "method ahead where the hierarchical test leaves it undecided; Wilcoxon with Holm's "
        "correction (significant or not) asks whether there is any difference, however small, "
        "not a practical one; Friedman and the Nemenyi critical difference compare mean ranks. "
        "Where they disagree, the hierarchical verdict is the answer; a supporting test that "
        "goes further shows a consistent direction over these data sets, not a practical gain "
        "on a new one.")

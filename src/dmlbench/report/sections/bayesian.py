"""Report section: Bayesian signed-rank comparisons of pairs of methods over the data sets
(`report.comparisons`), for any benchmark with at least two methods and
`comparisons.MIN_DATASETS` data sets on which both ran: per k the table of every pair and the
triangles of every method against the reference. Supporting evidence, in the test's own words
(`report.verdicts`: ahead, within rope, behind, inconclusive); the hierarchical test decides."""

from __future__ import annotations

from .. import comparisons, settings, verdicts
from ..base import Context, Section, export_table, html_table


def bayesian_section(ctx: Context) -> Section | None:
    if ctx.parents["method"].nunique() < 2:
        return None
    sec = Section("bayesian", "Bayesian comparisons (signed-rank test with a rope)",
                  "The Bayesian signed-rank test (Benavoli, Corani, Demšar & Zaffalon 2017, \"Time "
                  "for a change\", JMLR 18) over the data sets on "
                  "which both methods ran: the posterior probabilities that the first method (A) "
                  f"is better by more than {settings.rope_words(ctx.config)} (the region of "
                  "practical equivalence, rope), that the two are within it, and that B is "
                  f"better. An outcome needs a probability of at least {verdicts.DECISION}, "
                  f"in this test's own words: A {verdicts.AHEAD}, {verdicts.WITHIN_ROPE}, "
                  f"B {verdicts.AHEAD}, else {verdicts.INCONCLUSIVE}. It is supporting "
                  "evidence: it reads only each data set's mean accuracy, not the spread of "
                  "its folds, and is therefore more confident than the hierarchical test, "
                  "whose verdicts the report gives. "
                  "Prior: Dirichlet process of strength 0.5 at a zero difference; "
                  f"{comparisons.N_SAMPLES} Monte-Carlo draws, seeded per pair. The triangles "
                  "show the draws of each method against the reference (corners: left method "
                  "better, right method better, rope at the top; dashed lines bound where each "
                  "is the largest).")
    for k in ctx.ks:
        future = comparisons.results(ctx, k)
        if future is None:
            continue
        sec.later(lambda part, k=k, future=future: _fill(ctx, part, k, future.result()))
    return sec if sec.blocks else None


def _fill(ctx: Context, sec: Section, k: int, pairs) -> None:
    n_sets = comparisons.complete_scores(ctx, k).shape[0]
    sec.note(f"{k}-NN over {n_sets} data sets (every method ran on them), rope "
             f"{settings.rope_words(ctx.config)}.")
    sec.few_datasets(n_sets, "the Bayesian signed-rank test (its posterior leans on the prior)")
    shown = pairs.copy()
    for column in ("P(A better)", "P(rope)", "P(B better)"):
        shown[column] = pairs[column].map(verdicts.probability)
    shown["mean A - B (points)"] = pairs["mean A - B (points)"].map("{:.2f}".format)
    shown.index = [f"{a} vs {b}" for a, b in zip(pairs["A"], pairs["B"])]
    sec.table(html_table(shown.drop(columns=["A", "B"])),
              f"Bayesian signed-rank test, {k}-NN accuracy, rope "
              f"{settings.rope_words(ctx.config)} ({len(pairs)} pairs)",
              export_table(ctx, pairs.set_index(["A", "B"]), f"bayesian_k{k}"), folded=True)
    reference = comparisons.reference_method(list(comparisons.complete_scores(ctx, k).columns))
    sec.figure(comparisons.figure_name(k),
               f"Posterior draws of each method against {reference}, {k}-NN (one triangle "
               "per pair; blue: the left method is the most probable, vermillion: the right "
               "one, grey: the rope).")

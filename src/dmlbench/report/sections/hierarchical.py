"""Report section: the Bayesian hierarchical test (`report.hierarchical`), the test that decides
the report's verdicts, of every method against the reference metric and against the
best-ranked method, at each k, beside the methods' mean ranks (Friedman / Nemenyi), with the
verdicts, their Monte-Carlo errors, the stacked-bar figure and the rope sensitivity."""

from __future__ import annotations

import pandas as pd

from ...measure.hierarchical import CHAINS, MAX_CHAINS, N_SAMPLES
from ...measure.monte_carlo import MARGIN
from .. import hierarchical, ranking, settings, verdicts
from ..base import Context, Section, export_table, html_table


def section(ctx: Context) -> Section | None:
    if ctx.parents["method"].nunique() < 2:
        return None
    rope = settings.rope(ctx.config)
    sec = Section("hierarchical", "Bayesian hierarchical comparisons",
                  "The Bayesian hierarchical test (Corani, Benavoli, Demšar, Mangili & Zaffalon "
                  "2017, \"Statistical comparison of classifiers through Bayesian hierarchical "
                  "modelling\", Machine Learning 106), the test whose verdicts "
                  "the report gives, models the fold-by-fold accuracy differences of two "
                  "methods on every data set (correlated folds, rho = n_test / (n_train + "
                  "n_test)) and, above them, the distribution of the data sets' mean "
                  "differences (a Student t); it gives the posterior probabilities that on a new "
                  f"data set the method is better by more than {verdicts.rope_text(rope)} (the "
                  "rope), equivalent within it, or worse. " + intro_words() + " Each row "
                  "compares the method with the reference and with the method of the best mean "
                  "rank at that k, on the data sets where both have fold-level accuracies; "
                  "the mean rank beside them is the Friedman / Nemenyi one (complete data sets "
                  f"only). Sampled by our Gibbs sampler ({CHAINS} chains, {N_SAMPLES} draws per "
                  "comparison), checked against baycomp's Stan model.")
    for k in ctx.ks:
        future = hierarchical.results(ctx, k)
        if future is None:
            continue
        reference, best = hierarchical.references(ctx, k)
        ropes = hierarchical.rope_results(ctx, k)
        sec.later(lambda part, k=k, future=future, reference=reference, best=best,
                  ropes=ropes: fill(ctx, part, k, future.result(), reference, best, rope,
                                    None if ropes is None else ropes.result()))
    return sec if sec.blocks else None


def intro_words() -> str:
    """What the verdicts say and how their Monte-Carlo error is handled (one sentence each)."""
    return (f"A verdict needs a probability of at least {verdicts.DECISION}: better, "
            "equivalent or worse; otherwise the method is not shown better (undecided). Each "
            "probability comes with its Monte-Carlo standard error (s.e.: from the effective "
            "sample size of its indicator draws over the chains); a comparison whose deciding "
            f"probability lies within {MARGIN:g} s.e. of {verdicts.DECISION} is given more "
            f"chains, up to {MAX_CHAINS}, and stays borderline if it is still that close.")


def fill(ctx: Context, sec: Section, k: int, table: pd.DataFrame, reference: str, best: str,
         rope: float, ropes: pd.DataFrame | None) -> None:
    ranks = ranking.ranks(ctx)[f"k = {k}"]
    order = [m for m in ranking.order(ctx) if m in set(table["method"]) | {reference, best}]
    shown = hierarchical.verdict_table(table, order, ranks, reference, best)
    sec.note(f"{k}-NN, rope {settings.rope_words(ctx.config)}: against {reference}"
             + (f" and against {best}, the best mean rank" if best != reference else
                ", which has the best mean rank") + ". " + hierarchical.sampling_note(table))
    sec.few_datasets(int(table["data sets"].max()), "the hierarchical test (its posterior of "
                     "a new data set leans on the prior)")
    colours = ranking.colours(ctx)
    sec.table_and_figure(
        html_table(shown, swatches=colours),
        f"Hierarchical test, {k}-NN accuracy: P(better / equivalent / worse), verdict at P ≥ "
        f"{verdicts.DECISION} (± its Monte-Carlo standard error)",
        export_table(ctx, table.set_index(["method", "against"]), f"hierarchical_k{k}"),
        hierarchical.figure_name(k),
        f"Posterior probabilities of each method against {reference}"
        + (f" and {best}" if best != reference else "") + f", {k}-NN (blue: better, grey: "
        "equivalent, vermillion: worse; dotted lines at 0.05 and 0.95).")
    hierarchical.rope_sensitivity(ctx, sec, k, table, ropes, reference, rope)

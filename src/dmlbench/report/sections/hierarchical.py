"""Report section: the Bayesian hierarchical test (`report.hierarchical`) of every method against
the reference metric and against the best-ranked method, at each k, beside the methods' mean
ranks (Friedman / Nemenyi), with the verdicts and the stacked-bar figure."""

from __future__ import annotations

import pandas as pd

from ...measure.hierarchical import CHAINS, N_SAMPLES
from .. import comparisons, hierarchical, ranking, settings
from ..base import Context, Section, export_table, html_table


def section(ctx: Context) -> Section | None:
    if ctx.parents["method"].nunique() < 2:
        return None
    sec = Section("hierarchical", "Bayesian hierarchical comparisons",
                  "The Bayesian hierarchical test (Corani, Benavoli, Demšar, Mangili & Zaffalon "
                  "2017, \"Statistical comparison of classifiers through Bayesian hierarchical "
                  "modelling\", Machine Learning 106) models the fold-by-fold "
                  "accuracy differences of two methods on every data set (correlated folds, "
                  "rho = n_test / (n_train + n_test)) and, above them, the distribution of the "
                  "data sets' mean differences (a Student t); it gives the posterior "
                  "probabilities that on a new data set the method is better by more than "
                  f"the rope ({settings.rope_words(ctx.config)}), equivalent within it, or worse. "
                  f"A verdict needs a probability of at least {comparisons.DECISION}. Each row "
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
        sec.later(lambda part, k=k, future=future, reference=reference, best=best:
                  _fill(ctx, part, k, future.result(), reference, best))
    return sec if sec.blocks else None


def _fill(ctx: Context, sec: Section, k: int, table: pd.DataFrame, reference: str,
          best: str) -> None:
    ranks = ranking.ranks(ctx)[f"k = {k}"]
    order = [m for m in ranking.order(ctx) if m in set(table["method"]) | {reference, best}]
    shown = pd.DataFrame(index=pd.Index(order, name="method"))
    shown["mean rank"] = [f"{ranks[m]:.2f}" if pd.notna(ranks.get(m)) else "–" for m in order]
    for against in dict.fromkeys((reference, best)):
        rows = table[table["against"] == against].set_index("method")
        if rows.empty:
            continue
        for column, word in (("P(better)", "better than"), ("P(rope)", "equivalent to"),
                             ("P(worse)", "worse than")):
            shown[f"P({word} {against})"] = [
                f"{rows.at[m, column]:.3f}" if m in rows.index else "–" for m in order]
        shown[f"verdict vs {against}"] = [rows.at[m, "verdict"] if m in rows.index else "–"
                                          for m in order]
        shown[f"data sets vs {against}"] = [str(rows.at[m, "data sets"]) if m in rows.index
                                            else "–" for m in order]
    note = (f"{k}-NN, rope {settings.rope_words(ctx.config)}: against {reference}" +
            (f" and against {best}, the best mean rank" if best != reference else
             f", which has the best mean rank"))
    worst = table["R-hat"].max()
    sec.note(note + f". Largest split R-hat of the posterior draws of the three probabilities "
             f"over the {CHAINS} chains: {worst:.3f}"
             + (" (the chains disagree: more draws needed)." if worst > 1.01 else "."))
    sec.few_datasets(int(table["data sets"].max()), "the hierarchical test (its posterior of "
                     "a new data set leans on the prior)")
    colours = ranking.colours(ctx)
    sec.table_and_figure(
        html_table(shown, swatches=colours),
        f"Hierarchical test, {k}-NN accuracy: P(better / equivalent / worse), verdict at P ≥ "
        f"{comparisons.DECISION}",
        export_table(ctx, table.set_index(["method", "against"]), f"hierarchical_k{k}"),
        hierarchical.figure_name(k),
        f"Posterior probabilities of each method against {reference}"
        + (f" and {best}" if best != reference else "") + f", {k}-NN (blue: better, grey: "
        "equivalent, vermillion: worse; dotted lines at 0.05 and 0.95).")

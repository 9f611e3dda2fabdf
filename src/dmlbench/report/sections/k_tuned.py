"""Report section: the k-tuned view (`report.k_tuned`): each method at the k its inner folds
choose, the chosen ks, and the verdicts on it (the hierarchical test's, with the signed-rank
test and Wilcoxon-Holm against the control as supporting evidence); shown only for tuned runs
that record inner scores."""

from __future__ import annotations

import pandas as pd

from ...measure.statistics import bayesian_signed_rank, wilcoxon_holm_control
from .. import comparisons, hierarchical, k_tuned, ranking, settings, verdicts
from ..base import Context, Section, export_table, html_table


def section(ctx: Context) -> Section | None:
    tuned = k_tuned.view(ctx)
    if tuned is None:
        return None
    rope = settings.rope(ctx.config)
    sec = Section("k-tuned", "k tuned: each method at the k its inner folds choose",
                  "Besides the fixed k of the sections above, each method's k chosen like its "
                  "other hyperparameters: on every split, among the evaluated k "
                  f"({', '.join(map(str, ctx.ks))}), the k whose tuned setting has the best "
                  "mean inner accuracy (the same inner folds of the training part for every "
                  "method; a tie goes to the smaller k), then the test accuracy at that k. "
                  "The verdicts are the hierarchical test's, as above; the signed-rank test "
                  "and Wilcoxon against the control are supporting evidence.")
    if tuned["missing"]:
        sec.note("Not in this view (their records carry no inner scores, so their k cannot "
                 "be chosen): " + ", ".join(tuned["missing"]) + "."
                 + (f" The reference, {tuned['wanted_reference']}, is one of them: no "
                    "verdicts against it in this view." if tuned["reference"] is None else ""))
    export_table(ctx, tuned["choices"].set_index(["dataset", "method", "split"]),
                 "k_tuned_choices")
    future = k_tuned.results(ctx)
    ropes = k_tuned.rope_results(ctx)
    sec.later(lambda part: fill(ctx, part, tuned, rope,
                                None if future is None else future.result(),
                                None if ropes is None else ropes.result()))
    return sec


def overview(ctx: Context, tuned: dict, rope: float, table: pd.DataFrame | None) -> pd.DataFrame:
    """Per method of the view (best mean rank first): the mean k-tuned test accuracy (%) over
    the data sets every method of the view ran on, the mean rank there, the share of splits
    choosing each k (%), and against the reference: the hierarchical verdict (`table`), the
    signed-rank outcome and Wilcoxon's Holm-adjusted p against the control."""
    scores, order, reference = tuned["scores"], tuned["order"], tuned["reference"]
    out = pd.DataFrame(index=pd.Index(order, name="method"))
    out["mean accuracy (%)"] = 100 * scores.mean(axis=0).reindex(order)
    out["mean rank"] = tuned["ranks"].reindex(order)
    shares = k_tuned.chosen_k_shares(tuned["choices"], ctx.ks)
    for k in ctx.ks:
        out[f"k = {k} chosen (%)"] = 100 * shares[k].reindex(order)
    if reference is None or reference not in scores.columns:
        return out
    if table is not None:
        rows = table[table["against"] == reference].set_index("method")
        out[f"verdict vs {reference}"] = [
            "reference" if m == reference else hierarchical.verdict_text(rows.loc[m])
            if m in rows.index else "–" for m in order]
    signed = {}
    for method in scores.columns.drop(reference):
        result = bayesian_signed_rank(scores[reference], scores[method], rope=rope,
                                      n_samples=comparisons.N_SAMPLES,
                                      random_state=comparisons.pair_seed(
                                          k_tuned.LABEL, reference, method))
        probs = (result.p_b, result.p_rope, result.p_a)  # the method first
        signed[method] = f"{verdicts.signed_rank(*probs)} ({verdicts.probability(max(probs))})"
    out[f"signed-rank vs {reference}"] = [signed.get(m, "–") for m in order]
    if scores.shape[0] >= 2:
        holm = wilcoxon_holm_control(scores, reference).set_index("method")
        out[f"Wilcoxon p (Holm) vs {reference}"] = holm["p_holm"].reindex(order)
    return out


def fill(ctx: Context, sec: Section, tuned: dict, rope: float, table: pd.DataFrame | None,
         ropes: pd.DataFrame | None) -> None:
    numbers = overview(ctx, tuned, rope, table)
    shown = numbers.copy()
    for column in shown.columns:
        if column == "mean rank":
            shown[column] = numbers[column].map(lambda v: "–" if pd.isna(v) else f"{v:.2f}")
        elif column.startswith("Wilcoxon"):
            shown[column] = numbers[column].map(lambda v: "–" if pd.isna(v) else f"{v:.3g}")
        elif numbers[column].dtype.kind == "f":
            shown[column] = numbers[column].map(lambda v: "–" if pd.isna(v) else f"{v:.1f}")
    n_sets = tuned["scores"].shape[0]
    sec.table(html_table(shown.fillna("–"), swatches=ranking.colours(ctx)),
              f"k tuned: mean test accuracy and rank over the {n_sets} data sets every method "
              "of the view ran on, the k chosen"
              + (f", and the verdicts against {tuned['reference']}" if tuned["reference"]
                 else ""),
              export_table(ctx, numbers, "k_tuned"))
    if table is None:
        return
    reference, best = tuned["reference"], tuned["best"]
    order = [m for m in tuned["order"] if m in set(table["method"]) | {reference, best}]
    sec.note(f"k tuned, rope {verdicts.rope_text(rope)}: against {reference}"
             + (f" and against {best}, the best mean rank" if best != reference else
                ", which has the best mean rank") + ". " + hierarchical.sampling_note(table))
    sec.table_and_figure(
        html_table(hierarchical.verdict_table(table, order, tuned["ranks"], reference, best),
                   swatches=ranking.colours(ctx)),
        f"Hierarchical test, k tuned: P(better / equivalent / worse), verdict at P ≥ "
        f"{verdicts.DECISION} (± its Monte-Carlo standard error)",
        export_table(ctx, table.set_index(["method", "against"]),
                     f"hierarchical_k{k_tuned.LABEL}"),
        hierarchical.figure_name(k_tuned.LABEL),
        f"Posterior probabilities of each method against {reference}"
        + (f" and {best}" if best != reference else "") + ", k tuned (blue: better, grey: "
        "equivalent, vermillion: worse; dotted lines at 0.05 and 0.95).")
    hierarchical.rope_sensitivity(ctx, sec, k_tuned.LABEL, table, ropes, reference, rope)

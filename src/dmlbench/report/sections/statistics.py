"""Statistics over data sets: Friedman, Nemenyi critical differences, Wilcoxon-Holm (all pairs,
and against the control), z-test win/tie/loss: supporting evidence beside the hierarchical
test's verdicts (`report.verdicts`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ... import vocabulary as voc
from ...measure.statistics import friedman, wilcoxon_holm, wilcoxon_holm_control, win_tie_loss
from .. import comparisons, ranking, tables
from ..base import Context, Section, export_table, html_table


def statistics(ctx: Context) -> Section | None:
    if ctx.parents["method"].nunique() < 2 or ctx.parents["dataset"].nunique() < 2:
        return None
    sec = Section("statistics", "Statistics over data sets",
                  "Which test answers which question: the Friedman test asks whether the methods "
                  "differ at all over the data sets; the Nemenyi critical difference (CD) says "
                  "which mean ranks differ (diagram: methods joined by a bar are not "
                  "significantly different at alpha = 0.05; the first k's is under the "
                  "leaderboard); the Wilcoxon signed-rank test with "
                  "Holm's correction asks, pair by pair, whether one method beats another over the "
                  "data sets (significant or not: any difference, not a practical one), over all "
                  "pairs and over the comparisons with the control (the reference metric), a "
                  "smaller family that keeps more power; the z-test for two proportions "
                  "(Abou-Moustafa 2017, section 5.3) asks, "
                  "on one data set, whether two accuracies differ — its win/tie/loss counts are "
                  "over data sets. These are supporting evidence: the verdicts are the "
                  "hierarchical test's (how to read them: At a glance).")
    for k in ctx.ks:
        scores = tables.complete(tables.values(ctx.parents, voc.mean(voc.accuracy(k))))
        n_methods, n_sets = scores.shape[1], scores.shape[0]
        if n_sets < 2 or n_methods < 2:
            continue
        name, cd, _ = ranking.critical_difference(ctx, k)
        if n_methods >= 3:
            chi2, p = friedman(scores)
            sec.note(f"{k}-NN over {n_sets} data sets: Friedman chi² = {chi2:.2f}, p = {p:.3g}; "
                     f"Nemenyi CD = {cd:.2f} (alpha = 0.05, {n_methods} methods).")
        sec.few_datasets(n_sets, "the Friedman, Nemenyi and Wilcoxon tests")
        if k != ctx.ks[0]:  # the first k's diagram is under the leaderboard
            sec.figure(name, f"Critical-difference diagram, {k}-NN: mean rank over the data "
                       "sets (1 = best); bars join methods whose ranks differ by less than "
                       "the CD.")
        pairs = wilcoxon_holm(scores)
        if not pairs.empty:
            shown = pairs.assign(median_difference=lambda f: (100 * f["median_difference"]).round(2),
                                 p=lambda f: f["p"].map("{:.3g}".format),
                                 p_holm=lambda f: f["p_holm"].map("{:.3g}".format))
            shown = shown.rename(columns={"median_difference": "median a - b (points)",
                                          "p_holm": "p (Holm)"})
            shown.index = [f"{a} vs {b}" for a, b in zip(pairs["a"], pairs["b"])]
            sec.table(html_table(shown.drop(columns=["a", "b"])),
                      f"Pairwise Wilcoxon signed-rank tests, {k}-NN accuracy ({len(shown)} "
                      "pairs)", export_table(ctx, shown, f"wilcoxon_k{k}"), folded=True)
        control = comparisons.reference_method(list(scores.columns))
        against = wilcoxon_holm_control(scores, control)
        if not against.empty:
            shown = pd.DataFrame({
                "median difference (points)": (100 * against["median_difference"]).map(
                    "{:+.2f}".format).to_numpy(),
                "p": against["p"].map("{:.3g}".format).to_numpy(),
                "p (Holm)": against["p_holm"].map("{:.3g}".format).to_numpy(),
                "at alpha = 0.05": np.where(against["significant"], "significant",
                                            "not significant")},
                index=pd.Index(against["method"], name="method"))
            sec.table(html_table(shown, swatches=ranking.colours(ctx)),
                      f"Wilcoxon signed-rank tests against {control} (the control), {k}-NN "
                      f"accuracy, Holm's correction over the {len(shown)} comparisons",
                      export_table(ctx, against.set_index("method"), f"wilcoxon_control_k{k}"))
        sec.table(html_table(_win_tie_loss_matrix(ctx, k)),
                  f"z-test win/tie/loss of the row method against the column method over data "
                  f"sets, {k}-NN (alpha = 0.05)", folded=True)
    return sec


def _test_sizes(ctx: Context) -> pd.DataFrame:
    """Test points per data set and method for the z-test: all points once for k-fold CV
    (n_test summed over the folds of one repeat), the mean test-set size otherwise."""
    frame = ctx.parents.copy()
    per_repeat = frame["n_test_total"] / frame["n_splits"]
    kfold = frame["protocol"].fillna("").str.contains('"kfold"')
    folds = frame["protocol"].fillna("").str.extract(r'"folds": (\d+)')[0].astype(float)
    frame["n_z"] = np.where(kfold, per_repeat * folds, per_repeat)
    given_folds = frame["protocol"].fillna("").str.contains('"given_folds"')  # one k-fold CV
    frame["n_z"] = np.where(given_folds, frame["n_test_total"], frame["n_z"])
    return tables.values(frame, "n_z")


def _win_tie_loss_matrix(ctx: Context, k: int) -> pd.DataFrame:
    acc = tables.values(ctx.parents, voc.mean(voc.accuracy(k)))
    sizes = _test_sizes(ctx)
    methods = list(acc.columns)
    out = pd.DataFrame("", index=methods, columns=methods)
    for ref in methods:
        counts = win_tie_loss(acc, sizes, ref)
        for other, row in counts.iterrows():
            out.at[ref, other] = f"{row['win']}/{row['tie']}/{row['loss']}"
    return out

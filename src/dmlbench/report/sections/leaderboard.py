"""Leaderboard, test accuracy and average error: how the methods rank over the data sets."""

from __future__ import annotations

import pandas as pd

from ... import vocabulary as voc
from .. import figures, hierarchical, palette, ranking, tables
from ..base import Context, Section, export_table, html_table, methods_as_rows


def leaderboard(ctx: Context) -> Section:
    k = ctx.ks[0]
    sec = Section("leaderboard", "Leaderboard",
                  "The methods by the mean rank of their test accuracy over the data sets on "
                  f"which every method ran (1 = best), best at the top (by k = {k}; click a "
                  "column's header to sort by it), with the number of data sets ranked, the "
                  "Friedman test of 'all methods perform equally', the verdict of the "
                  "Bayesian hierarchical test against the reference and, below it, the "
                  f"critical-difference diagram of k = {k} (statistics section below).",
                  unfolded=True)
    ranks = ranking.ranks(ctx)
    files = export_table(ctx, ranks, "mean_rank")
    cd = ranking.critical_difference(ctx, k)
    tests = hierarchical.results(ctx, k)

    def fill(part: Section) -> None:
        order = [m for m in ranking.order(ctx) if m in ranks.index]
        shown = ranks.reindex(order)
        text = tables.fmt(shown, 2)
        text.insert(0, "#", [str(i) for i in range(1, len(order) + 1)])
        best = tables.best_per_row(shown.T, higher_is_better=False).T
        footer = pd.DataFrame({c: "" for c in text.columns}, index=["data sets ranked",
                                                                     "Friedman p"])
        for kk in ctx.ks:
            column = f"k = {kk}"
            footer.at["data sets ranked", column] = str(ranking.scores(ctx, kk).shape[0])
            p = ranking.friedman_p(ctx, kk)
            footer.at["Friedman p", column] = "–" if p is None else f"{p:.3g}"
        if tests is not None:
            reference = hierarchical.references(ctx, k)[0]
            column = f"verdict vs {reference}, k = {k}"
            text[column] = _verdicts(tests.result(), order, reference)
            footer[column] = ""
        text.index.name = "method"
        part.table(html_table(text, best=best, footer=footer, swatches=ranking.colours(ctx)),
                   "Mean rank per k, best first", files)
        part.few_datasets(ranking.scores(ctx, k).shape[0],
                          "the Friedman test, the Nemenyi critical difference"
                          + (" and the hierarchical verdicts" if tests is not None else ""))
        if cd is not None:  # on a row of its own: beside the table its labels would shrink
            part.figure(cd[0], f"Critical-difference diagram, {k}-NN: mean rank (1 = best); "
                               f"methods joined by a bar differ by less than the Nemenyi "
                               f"CD = {cd[1]:.2f} (alpha = 0.05). Names in the colour of their "
                               "family.")

    sec.later(fill)
    return sec


def _verdicts(table: pd.DataFrame, order: list[str], reference: str) -> list[str]:
    """The hierarchical verdict of each method of `order` against the reference, with the
    probability it turns on (`hierarchical.verdict_text`)."""
    rows = table[table["against"] == reference].set_index("method")
    return ["reference" if m == reference else hierarchical.verdict_text(rows.loc[m])
            if m in rows.index else "–" for m in order]


def accuracy(ctx: Context) -> Section:
    links = ctx.run_links()
    n_splits = tables.values(ctx.parents, "n_splits").max(axis=1).astype(int)
    order = ranking.order(ctx)
    swatches = ranking.colours(ctx)
    turned = methods_as_rows(tables.mean_std(ctx.parents, voc.accuracy(ctx.ks[0]), scale=100),
                             swatches)
    sec = Section("accuracy", "Test accuracy",
                  "k-NN test accuracy (%) as mean ± standard deviation over the splits; the best "
                  f"mean per data set in bold. Every cell links to {ctx.links_to}. Methods in "
                  "the leaderboard's order" + (", as rows (side by side they would not fit the "
                                               "page; a table too wide is cut by its data sets, "
                                               "never by its methods)" if turned else "") + ".")
    for k in ctx.ks:
        means = tables.values(ctx.parents, voc.mean(voc.accuracy(k)))
        means = means.loc[:, means.notna().any() | tables.over_budget(ctx.parents).any()]
        text = tables.mean_std(ctx.parents, voc.accuracy(k), scale=100)[means.columns]
        best = tables.best_per_row(means)
        files = export_table(ctx, text.assign(splits=n_splits)[["splits", *text.columns]],
                             voc.accuracy(k))
        columns = [m for m in order if m in text.columns]
        text, best = text[columns], best[columns]
        if turned:
            splits = pd.DataFrame([n_splits.astype(str)], index=["splits"])
            table = html_table(text, best, links, footer=splits, swatches=swatches,
                               transpose=True)
        else:
            table = html_table(text.assign(splits=n_splits)[["splits", *columns]], best, links,
                               swatches=swatches)
        sec.table(table, f"{k}-NN accuracy (%)", files)
    k = ctx.ks[0]
    for i, name in enumerate(accuracy_figures(ctx, k, order)):
        sec.figure(name, f"Test accuracy of {k}-NN per data set: mean ± sd over the splits, "
                         "methods in the leaderboard's order, in their family's colour; dashed: "
                         f"{palette.REFERENCE} (the tables give every k)"
                   + (f" (part {i + 1})" if i else "") + ".")
    return sec


def accuracy_figures(ctx: Context, k: int, order: list[str]) -> list[str]:
    """The per-data-set accuracy figure of k, in parts of at most two screens."""
    column = voc.accuracy(k)
    if column not in ctx.splits:
        return []
    grouped = ctx.splits.groupby(["dataset", "method"])[column]
    stats = pd.DataFrame({"mean": grouped.mean() * 100, "sd": grouped.std(ddof=1) * 100})
    stats = stats.reset_index().dropna(subset=["mean"])
    names = dict(zip(ctx.parents["method"], ctx.parents["method_name"]))
    reference = next((m for m in order if names.get(m) == palette.REFERENCE), None)
    datasets = sorted(stats["dataset"].unique())
    style = palette.styles(ctx.parents)
    families = palette.family_of(ctx.parents)
    parts = figures.pages(datasets, 4.1, figures.panel_height(stats))
    out = []
    for i, part in enumerate(parts):
        name = f"accuracy_per_dataset_k{k}" + (f"_{i + 1}" if len(parts) > 1 else "") + ".png"
        out.append(ctx.figure(name, figures.accuracy_per_dataset,
                              stats[stats["dataset"].isin(part)], order, style, families, k,
                              reference))
    return out


def average_error(ctx: Context) -> Section:
    sec = Section("average-error", "Average error over data sets",
                  "Test error (%) averaged over the data sets on which every method ran, per "
                  "method and k: error, not accuracy, as in Fig. 7 of Abou-Moustafa 2017, "
                  "whose layout this is.")
    avg = tables.average_error(ctx.parents, ctx.ks)
    best = tables.best_per_row(avg.T, higher_is_better=False).T
    files = export_table(ctx, avg, "average_error")
    order = [m for m in ranking.order(ctx) if m in avg.index]
    sec.table_and_figure(
        html_table(tables.fmt(avg, 2).reindex(order), best.reindex(order),
                   swatches=ranking.colours(ctx)), "Average error (%)", files,
        ctx.figure("average_error.png", figures.average_error, avg.dropna(how="all"),
                   palette.styles(ctx.parents)),
        "Average test error per method (sorted by the first k; a marker per k, the first "
        "filled).")
    return sec

"""Leaderboard, test accuracy and average error: how the methods rank over the data sets."""

from __future__ import annotations

import pandas as pd

from ... import vocabulary as voc
from ...measure.statistics import friedman
from .. import figures, tables
from ..base import Context, Section, export_table, html_table


def leaderboard(ctx: Context) -> Section:
    sec = Section("leaderboard", "Leaderboard",
                  "Mean rank of each method's test accuracy over the data sets on which every "
                  "method ran (1 = best), per k, with the number of data sets ranked and the "
                  "Friedman test of 'all methods perform equally' (statistics section below).")
    ranks = tables.mean_rank(ctx.parents, ctx.ks)
    best = tables.best_per_row(ranks.T, higher_is_better=False).T
    text = tables.fmt(ranks, 2)
    complete = {k: tables.complete(tables.values(ctx.parents, voc.mean(voc.accuracy(k)))).shape[0]
                for k in ctx.ks}
    footer = pd.DataFrame({f"k = {k}": [str(complete[k])] for k in ctx.ks},
                          index=["data sets ranked"])
    pvalues = {}
    for k in ctx.ks:
        try:
            scores = tables.complete(tables.values(ctx.parents, voc.mean(voc.accuracy(k))))
            pvalues[f"k = {k}"] = f"{friedman(scores)[1]:.3g}"
        except ValueError:
            pvalues[f"k = {k}"] = "–"
    footer.loc["Friedman p"] = pd.Series(pvalues)
    sec.table(html_table(pd.concat([text, footer]), best=best), "Mean rank per k",
              export_table(ctx, ranks, "mean_rank"))
    return sec


def accuracy(ctx: Context) -> Section:
    sec = Section("accuracy", "Test accuracy",
                  "k-NN test accuracy (%) as mean ± standard deviation over the splits; the best "
                  "mean per data set in bold. Every cell links to its MLflow run.")
    links = ctx.run_links()
    n_splits = tables.values(ctx.parents, "n_splits").max(axis=1).astype(int)
    _, methods = tables.order(ctx.parents)
    for k in ctx.ks:
        means = tables.values(ctx.parents, voc.mean(voc.accuracy(k))).dropna(axis=1, how="all")
        text = tables.mean_std(ctx.parents, voc.accuracy(k), scale=100)[means.columns]
        best = tables.best_per_row(means)
        text.insert(0, "splits", n_splits)
        sec.table(html_table(text, best, links), f"{k}-NN accuracy (%)",
                  export_table(ctx, text, voc.accuracy(k)))
        fig = figures.error_per_dataset(ctx.splits, k, methods, ctx.figure_dir)
        sec.figure(fig, f"Test error of {k}-NN per data set (mean ± sd over splits).")
    return sec


def average_error(ctx: Context) -> Section:
    sec = Section("average-error", "Average error over data sets",
                  "Test error (%) averaged over the data sets on which every method ran, per "
                  "method and k (the layout of Fig. 7 of Abou-Moustafa 2017).")
    avg = tables.average_error(ctx.parents, ctx.ks)
    best = tables.best_per_row(avg.T, higher_is_better=False).T
    sec.table(html_table(tables.fmt(avg, 2), best), "Average error (%)",
              export_table(ctx, avg, "average_error"))
    sec.figure(figures.average_error(avg, ctx.figure_dir), "Average test error per method and k.")
    return sec

"""Hubness of every method: N_k skewness, antihub share, largest N_k."""

from __future__ import annotations

import pandas as pd

from ... import vocabulary as voc
from .. import figures, palette, ranking, tables
from ..base import Context, Section, export_table, html_table, methods_as_rows


def pooled_where_present(parents, k: int):
    """The parents with each hubness measure replaced by its pooled value (`pooled_<measure>`,
    the same on every split: sd 0) where the runs have one (leave-one-out, one k-fold, given folds)."""
    out = parents.copy()
    for measure in voc.HUBNESS_MEASURES:
        pooled = voc.mean(voc.pooled_hubness(measure, k))
        if pooled in out:
            have = out[pooled].notna()
            for stat in (voc.mean, voc.std):
                out.loc[have, stat(voc.hubness(measure, k))] = out.loc[
                    have, stat(voc.pooled_hubness(measure, k))]
    return out


def hubness(ctx: Context) -> Section | None:
    k = ctx.hubness_k
    if voc.mean(voc.skewness(k)) not in ctx.parents:
        return None
    links = ctx.run_links()
    parents = pooled_where_present(ctx.parents, k)
    sec = Section("hubness", f"Hubness (N{k})",
                  f"Skewness of the N{k} distribution of the training points in the test "
                  f"queries' {k}-NN lists, as in Table 2 of Shigeto 2017 (population moments; "
                  "smaller is less hubness), mean ± sd over splits; then the share of antihubs "
                  f"(training points in no list) and the largest N{k}. Where a protocol tests "
                  "every sample once (leave-one-out, one k-fold, given folds) and one job ran all its "
                  "splits, the values are those of the lists pooled over the splits (sd 0).")
    swatches, order = ranking.colours(ctx), ranking.order(ctx)

    def show(text, caption, files, best=None):
        text = text[[m for m in order if m in text.columns]]
        sec.table(html_table(text, best, links, swatches=swatches,
                             transpose=methods_as_rows(text, swatches)), caption, files)

    skew = tables.mean_std(parents, voc.skewness(k))
    best = tables.best_per_row(tables.values(parents, voc.mean(voc.skewness(k))), False)
    show(skew, f"N{k} skewness", export_table(ctx, skew, voc.skewness(k)), best)
    anti = tables.mean_std(parents, voc.hubness("antihub_share", k), scale=100, digits=1)
    show(anti, "Antihub share (%)", export_table(ctx, anti, voc.hubness("antihub_share", k)))
    top = tables.values(parents, voc.mean(voc.hubness("max", k)))
    show(tables.fmt(top, 1), f"Largest N{k} (mean over splits)",
         export_table(ctx, top, f"max_n{k}"))
    acc = ctx.ks[0]
    points = pd.DataFrame({"method": parents["method"],
                           "skewness": parents[voc.mean(voc.skewness(k))],
                           "accuracy": 100 * parents[voc.mean(voc.accuracy(acc))]})
    sec.figure(ctx.figure(f"skewness_vs_accuracy_k{acc}.png", figures.skewness_vs_accuracy,
                          points, palette.styles(parents), k, acc),
               f"{acc}-NN accuracy against N{k} skewness, one point per (data set, method).")
    return sec
